"""Render a :class:`~irscale.study.Study` as a report: one self-contained HTML file, LaTeX
tables, a Markdown report, CSV and JSON files, and its provenance as YAML.

Pure renderers: functions from a study to text (:func:`report_tables`,
:func:`study_markdown`, :func:`to_yaml`, :func:`irscale.report.latex.latex_table`,
:func:`irscale.report.html.html_report`); :mod:`irscale.report.files` writes that text to
files (:func:`~irscale.report.files.write_report`). Nothing here prints or writes.

Every table is a :class:`ReportTable`: a title in words, a caption, the exact values
(``frame``) and its columns (:class:`Column`), each with a header in words and a one-sentence
explanation, shown under the table (Markdown, HTML) or as a note below it (LaTeX). Measures
carry their canonical names (``RBP(p=0.5)``, not the paper's label ``RBP_p05``).

Numbers: exact values in CSV and JSON, each float column ``x`` followed by ``x_display``, the
text the tables show: 4 decimals (three significant digits for a nonzero value that would
read 0.0000: :func:`float_text`), percentages with 2 (as in the paper), p-values below
0.0001 as ``<0.0001``, missing values empty. Booleans read ``yes``/``no`` in the tables
and stay ``True``/``False`` in CSV and JSON.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from irscale._display import float_text
from irscale._version import __version__
from irscale.errors import IrscaleError

if TYPE_CHECKING:
    from irscale.study import Study

# -- the table model -------------------------------------------------------------------------------

__all__ = [
    "best_cells",
    "BOUNDS_EXTRA",
    "canonical_names",
    "cell_parts",
    "cell_text",
    "CHANGES_EXTRA",
    "changes_table",
    "Column",
    "data_frame",
    "default_test",
    "float_text",
    "format_value",
    "group_title",
    "latex_head",
    "LONG_PAIRS",
    "markdown_section",
    "markdown_table",
    "MEAN_TIE_RTOL",
    "MEANINGFUL",
    "MEASURE_FREE_COLUMNS",
    "measure_free_table",
    "MISSING",
    "NUMERIC",
    "PAIR_KEYS",
    "PAIR_MARKS",
    "PAIR_TEST_FIELDS",
    "PAIRS_COLUMNS",
    "pairs_long",
    "pairs_wide",
    "provenance_yaml",
    "rank_by_mean",
    "RB",
    "report_tables",
    "ReportTable",
    "row_dicts",
    "slug_of_test",
    "study_markdown",
    "summary_line",
    "SYMBOLS",
    "table_json",
    "TAU_ORDER",
    "tau_report_tables",
    "TAU_TABLES",
    "tau_tables",
    "TEST_SHORT",
    "theory_lines",
    "to_yaml",
]


NUMERIC = ("int", "float", "pct", "signed_pct", "p", "share", "sci")  # right-aligned kinds
MISSING = "–"  # en dash: a value that is not defined (LaTeX: --)
SYMBOLS = ("†", "‡", "§", "¶", "‖", "*", "**", "††", "‡‡", "§§")  # significance marks, in order


@dataclass(frozen=True)
class Column:
    """One column of a :class:`ReportTable`.

    ``key``: the column of the frame; ``head``: its header in words; ``explain``: one
    sentence saying what it holds; ``kind``: how a value reads (``text``, ``int``,
    ``float`` 4 decimals (:func:`float_text`), ``sci`` two significant digits, ``pct`` and
    ``signed_pct`` 2 decimals and %, ``share`` a fraction shown as a percentage, ``p`` a
    p-value, ``bool`` yes/no, ``assumes`` ordinal/interval);
    ``latex``: its LaTeX header (default: ``head`` escaped); ``best``: ``"max"`` or
    ``"min"`` to set the best value of the column (of each group) in bold; ``ci``: the
    frame's (low, high) columns shown after the value as ``[low, high]``; ``paren``: a
    column shown after the value in parentheses; ``flag``: (a boolean column, a text)
    appended when the column is true; ``hidden``: data only (CSV, JSON), its values shown
    inside another column.
    """

    key: str
    head: str
    explain: str
    kind: str = "float"
    latex: str | None = None
    best: str | None = None
    ci: tuple[str, str] | None = None
    paren: str | None = None
    flag: tuple[str, str] | None = None
    hidden: bool = False

    @property
    def numeric(self) -> bool:
        return self.kind in NUMERIC


@dataclass(frozen=True)
class ReportTable:
    """A table of a report: exact values (``frame``) and how to show them.

    ``key`` names the table (``means``, ``table2``, ...), ``stem`` its files (without the
    ``_N<N>`` tag), ``label`` its LaTeX label (``tab:irscale-...``). ``group``: columns shown
    as group header rows in HTML and LaTeX (ordinary columns in Markdown and CSV).
    ``marks``: superscript symbols of cells, ``{(row position, column key): symbols}``, with
    ``legend`` ``[(symbol, text)]``; ``notes``: sentences shown under the table;
    ``max_rows``: the tables show at most this many rows (the CSV holds all);
    ``shade``: a boolean column whose true rows are shaded (HTML).
    """

    key: str
    stem: str
    title: str
    caption: str
    frame: pd.DataFrame
    columns: tuple[Column, ...]
    label: str
    group: tuple[str, ...] = ()
    marks: dict = field(default_factory=dict)
    legend: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    max_rows: int | None = None
    shade: str | None = None
    files: bool = True  # written as CSV and JSON of its own (False: its rows are in another table's files)
    exts: tuple[str, ...] = ("csv", "json", "tex")  # the files its stem has (for links)
    paper: str | None = None  # the paper's table it is the analogue of ("Table 4")
    csv: str | None = None  # the name of the CSV file holding its rows (report_tables sets it)

    @property
    def heading(self) -> str:
        """The title with the paper's table it corresponds to (HTML and Markdown headings)."""
        return f"{self.paper}: {self.title}" if self.paper else self.title

    def column(self, key: str) -> Column:
        for c in self.columns:
            if c.key == key:
                return c
        raise KeyError(key)

    @property
    def shown(self) -> list[Column]:
        """The columns the tables show, group columns included (renderers with group rows
        leave those out)."""
        return [c for c in self.columns if not c.hidden]

    @property
    def explanations(self) -> dict[str, str]:
        """``{column header: one-sentence explanation}`` of the columns the tables show."""
        return {c.head: c.explain for c in self.shown}

    @property
    def data_explanations(self) -> dict[str, str]:
        """``{frame column: explanation}`` of every column of the CSV and JSON files."""
        return {c.key: c.explain for c in self.columns if c.key in self.frame.columns}

    @property
    def rows(self) -> pd.DataFrame:
        """The rows the tables show (at most ``max_rows``)."""
        return self.frame if self.max_rows is None else self.frame.head(self.max_rows)

    @property
    def truncated(self) -> str | None:
        """A sentence saying how many rows the tables leave out (None if none)."""
        if self.max_rows is None or len(self.frame) <= self.max_rows:
            return None
        return f"The first {self.max_rows:,} of {len(self.frame):,} rows are shown; {self.holds_all}."

    @property
    def holds_all(self) -> str:
        """Where every row is (``csv``: the file's name, written beside the report)."""
        return f"{self.csv} holds them all" if self.csv else "the CSV files hold them all"


# -- cell text -------------------------------------------------------------------------------------


def _missing(v) -> bool:
    if v is None:
        return True
    if type(v) is float:  # the common case, without pandas
        return v != v
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def format_value(v, kind: str) -> str:
    """``v`` as the tables show it (plain text): see :class:`Column` for the kinds."""
    if _missing(v):
        return MISSING
    if kind == "bool":
        return "yes" if bool(v) else "no"
    if kind == "assumes":
        return "ordinal" if bool(v) else "interval"
    if kind == "int":
        return f"{int(v)}" if float(v) == int(v) else f"{float(v):.4f}"
    if kind == "sci":  # widths far below 1e-4: two significant digits
        return f"{float(v):.2g}"
    if kind in ("float", "pct", "signed_pct", "share", "p"):
        x = float(v)
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if kind == "p" and 0 <= x < 0.00005:
            return "<0.0001"
        if kind == "share":
            x, kind = 100 * x, "pct"
        text = (
            f"{x:+.2f}%"
            if kind == "signed_pct"
            else f"{x:.2f}%"
            if kind == "pct"
            else float_text(x)
            if kind == "float"
            else f"{x:.4f}"
        )
        return text[1:] if _negzero(text) else text
    return str(v)


def _tiny(*xs) -> bool:
    """Whether some of ``xs`` is a nonzero value :func:`float_text` shows in significant
    digits (then a value and its interval ends are all shown so, 0 as ``0``)."""
    return any(not _missing(x) and math.isfinite(float(x)) and 0 < abs(float(x)) < 5e-5 for x in xs)


def _sig(x: float) -> str:
    """Three significant digits (``6.45e-98``, ``0``, ``0.0123``), as :func:`float_text`
    shows a tiny value; infinities as the tables show them."""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:.3g}"
    return "0" if text == "-0" else text


def _negzero(text: str) -> bool:
    """A rounded value that reads as a negative zero (-0.0000, -0.00%): drop the sign."""
    return text.startswith("-0.") and bool(re.fullmatch(r"-0\.0+%?", text))


def cell_parts(table: ReportTable, col: Column, row: dict) -> tuple[str, str]:
    """The plain text of column ``col`` in ``row`` (a dict of the frame's values) in two
    parts: the value, and what follows it (its CI, parenthesised companion and flag when the
    column has them, with a leading space; else empty). Renderers set the value in bold
    and put significance marks right after it."""
    text = format_value(row.get(col.key), col.kind)
    rest = ""
    if col.ci and text != MISSING:
        lo, hi = (row.get(k) for k in col.ci)
        if not (_missing(lo) and _missing(hi)):
            kind = table.column(col.ci[0]).kind if _has(table, col.ci[0]) else col.kind
            if col.kind == kind == "float" and _tiny(row.get(col.key), lo, hi):  # one format in the cell
                text, lo_text, hi_text = (
                    MISSING if x is None or _missing(x) else _sig(float(x)) for x in (row.get(col.key), lo, hi)
                )
            else:
                lo_text, hi_text = format_value(lo, kind), format_value(hi, kind)
            rest += f" [{lo_text}, {hi_text}]"
    if col.paren and text != MISSING and not _missing(row.get(col.paren)):
        kind = table.column(col.paren).kind if _has(table, col.paren) else "float"
        rest += f" ({format_value(row.get(col.paren), kind)})"
    if col.flag and not _missing(row.get(col.flag[0])) and bool(row.get(col.flag[0])):
        rest += f" {col.flag[1]}"
    return text, rest


def cell_text(table: ReportTable, col: Column, row: dict) -> str:
    """The plain text of column ``col`` in ``row``: :func:`cell_parts` joined."""
    return "".join(cell_parts(table, col, row))


def _has(table: ReportTable, key: str) -> bool:
    return any(c.key == key for c in table.columns)


def best_cells(table: ReportTable) -> set[tuple[int, str]]:
    """``{(row position, column key)}`` of the best values of the columns with ``best``
    (within each group when the table has groups), among the rows shown."""
    rows = table.rows.reset_index(drop=True)
    out = set()
    for col in table.columns:
        if not col.best or col.key not in rows:
            continue
        vals = pd.to_numeric(rows[col.key], errors="coerce")
        groups = rows.groupby(list(table.group), sort=False).indices.values() if table.group else [range(len(rows))]
        for idx in groups:
            v = vals.iloc[list(idx)]
            if v.notna().sum() < 2:  # one value is no "best"
                continue
            target = v.max() if col.best == "max" else v.min()
            # exact, as the rank column: ties for best all bold, and of 1e-43 and 1e-98 (both below
            # any absolute tolerance) only 1e-43
            out |= {(int(i), col.key) for i, x in zip(idx, v) if x == target}
    return out


def row_dicts(table: ReportTable) -> list[dict]:
    """The rows the tables show, as dicts of exact values."""
    return table.rows.to_dict(orient="records")


def group_title(table: ReportTable, row: dict) -> str:
    """The header of a row group: the group columns' values, e.g. ``AP · original ·
    Student's t Test · baseline: bm25``."""
    parts = []
    for k in table.group:
        col = table.column(k)
        val = cell_text(table, col, row)
        parts.append(f"{col.head.lower()}: {val}" if col.key in ("system_1",) else val)
    return " · ".join(parts)


# -- measure names ---------------------------------------------------------------------------------


def canonical_names(study: Study) -> Callable[[str], str]:
    """A function from a measure's name as a study's frames hold it (its label, e.g.
    ``RBP_p05``, or its canonical name) to its canonical name (``RBP(p=0.5)``); a name the
    registry does not know reads as itself."""
    from irscale.measures import parse_measure

    known: dict[str, str] = {}
    for m in study.measures:
        try:
            known[parse_measure(m).label] = m
        except (IrscaleError, ValueError, TypeError):
            pass
        known[m] = m

    def name(x) -> str:
        x = str(x)
        if x not in known:
            try:
                known[x] = str(parse_measure(x))
            except (IrscaleError, ValueError, TypeError):
                known[x] = x
        return known[x]

    return name


def _order(values: Iterable[str], first: Sequence[str]) -> list[str]:
    seen = list(dict.fromkeys(values))
    return [v for v in first if v in seen] + [v for v in seen if v not in first]


def _part(study: Study, name: str) -> pd.DataFrame | None:
    """A study's optional frame (``means``, ``pairs``, ``measure_free``): None when absent,
    None or not a data frame."""
    df = getattr(study, name, None)
    return df if isinstance(df, pd.DataFrame) else None


def _alpha(study: Study) -> float:
    a = study.provenance.get("alpha") if isinstance(study.provenance, dict) else None
    return float(a) if isinstance(a, (int, float)) else 0.05


def _test_name(t) -> str:
    from irscale.stats import ALL_TESTS, test_name

    return test_name(str(t)) if str(t) in ALL_TESTS else str(t)


# -- what the columns mean -------------------------------------------------------------------------

MEANINGFUL = (
    "A statement is meaningful when its truth value does not change under any permissible "
    "transformation of the scale it is made on (Ferrante, Ferro & Fuhr 2021, Section 2.4): on an "
    "interval scale every positive affine map x → a·x + b (a > 0), on an ordinal scale every strictly "
    "increasing map. “Systems i and j differ significantly” is therefore meaningful for a test that "
    "adds or subtracts scores (Wilcoxon signed-rank, Student's t, ANOVA) only on an interval scale; for "
    "a test that uses only the order of the two systems within each topic (sign, Friedman) on any "
    "ordinal scale; for a test that pools scores of all topics (Wilcoxon rank-sum, Kruskal-Wallis) only "
    "when all topics share one ordinal scale, which measures depending on the recall base (AP, R, nDCG) "
    "lack (Section 3.3). The ranked version of a measure (φ, Section 5) is an interval scale; a "
    "meaningful statement can still be false."
)

RB = (
    "yes when the measure depends on the recall base (the number of relevant documents of the topic, "
    "e.g. AP, R, nDCG): its scale changes from topic to topic, so averages over topics mix scales and "
    "the ranked version is only a surrogate interval scale (Section 5.2.2)"
)

CHANGES_EXTRA = {
    "correction": Column(
        "correction",
        "Correction",
        "the multiple-comparison correction applied to this "
        "test's pairwise p-values (for example Holm, Bonferroni or Benjamini-Hochberg).",
        "text",
    ),
    "sig_adjusted": Column(
        "sig_adjusted",
        "Sig (adjusted)",
        "the number of system pairs significantly different with the original measure after that correction.",
        "int",
        latex=r"Sig$_{adj}$",
    ),
    "sig_ranked_adjusted": Column(
        "sig_ranked_adjusted",
        "Sig ranked (adjusted)",
        "the number of system pairs significantly different with the ranked version after that correction.",
        "int",
        latex=r"Sig$_{R,adj}$",
    ),
    "flagged_incomparable": Column(
        "flagged_incomparable",
        "Flagged incomparable",
        "how many of the pairs "
        "significant with the original measure rest mostly (more than half of the summed "
        "absolute per-topic differences) on topics where the two runs are incomparable in "
        "the weak top-heaviness order, which no measure-free argument supports (see the "
        "measure-free comparison).",
        "int",
        latex="Flagged",
    ),
    "flagged_incomparable_ranked": Column(
        "flagged_incomparable_ranked",
        "Flagged incomparable (ranked)",
        "the same for the pairs significant with the ranked version.",
        "int",
        latex=r"Flagged$_R$",
    ),
}


BOUNDS_EXTRA = {  # compare(..., approx=TOL): ranked versions from certified bounds where no exact engine reaches N
    "halfwidth_max": Column(
        "halfwidth_max",
        "Largest half-width",
        "where no exact engine reaches N, the ranked "
        "version is the midpoint of certified bounds on the normalised φ: the largest half-width "
        "of the ranked scores this row rests on (0: exact).",
        "sci",
        latex="max half-width",
    ),
    "could_flip_ranked": Column(
        "could_flip_ranked",
        "Could flip (ranked)",
        "the system pairs whose decision with "
        "the ranked version (uncorrected, as Sig ranked) could differ for some exact φ "
        "within the bounds (exact for the sign test, conservative for the others; a pair "
        "with a topic left out counts); 0 where the ranked scores are exact.",
        "int",
        latex="could flip",
    ),
    "halfwidth": Column(
        "halfwidth",
        "Half-width",
        "the most the difference of means on the ranked version can be "
        "off where it comes from certified bounds (compare's approx), 0 where exact.",
        "sci",
    ),
    "could_flip": Column(
        "could_flip",
        "Could flip",
        "yes when this decision on the ranked version could differ "
        "for some exact φ within the bounds; empty where a correction adjusts the p-values (not "
        "bounded).",
        "bool",
    ),
}


def _generic(key: str, series: pd.Series) -> Column:
    """A column this version of the report does not know: shown as it is, said so."""
    kind = (
        "bool"
        if series.dtype == bool
        else "int"
        if series.dtype.kind in "iu"
        else "float"
        if series.dtype.kind == "f"
        else "text"
    )
    return Column(key, key.replace("_", " "), "a column this version of irscale's report does not describe.", kind)


def _extra(df: pd.DataFrame, known: Iterable[str], described: dict | None = None) -> list[Column]:
    """Columns of ``df`` beyond ``known``: described ones (with the kind their values have
    when those are booleans), else shown as they are (:func:`_generic`)."""
    known = set(known)
    described = described or {}
    out = []
    for k in df.columns:
        if k in known:
            continue
        col = described.get(k) or _generic(k, df[k])
        out.append(dataclasses.replace(col, kind="bool") if df[k].dtype == bool and col.kind != "bool" else col)
    return out


# -- the tables ------------------------------------------------------------------------------------


def report_tables(study: Study, max_rows: int | None = None) -> list[ReportTable]:
    """Every table of ``study`` in report order: the means (when ``study.means`` is
    present), Tables 2/3 (tau between each measure and its ranked version), Table 4 (tau
    between measures), Tables 5 and 6 (significance changes, measures without and with a
    recall base), the comparisons with baselines (``study.pairs``) and the measure-free
    comparison's summary (``study.measure_free``). Every table is whole: ``max_rows``
    (default None: every row) cuts the tables shown, for a preview (the CSV files hold all,
    and a note under the table says how many rows it leaves out)."""
    tables = []
    for build in (_means_table, _table2, _table4, _tables5_6, _power_table, _pairs_table, _measure_free_tables):
        got = build(study, max_rows)
        tables += got if isinstance(got, list) else [got] if got is not None else []
    if isinstance(study.provenance, dict) and study.provenance.get("judged_only"):  # each caption says it (LaTeX too)
        tables = [dataclasses.replace(t, caption=f"{t.caption} {CONDENSED_CAPTION}") for t in tables]
    return [dataclasses.replace(t, csv=f"{t.stem}_N{study.N}.csv") if "csv" in t.exts else t for t in tables]


PROTOCOL = {  # how unjudged documents were treated (the study's provenance: judged_only)
    False: "unjudged documents count as non-relevant",
    True: "condensed runs: unjudged documents removed before the cut at N (judged only, trec_eval -J)",
}


CONDENSED_CAPTION = PROTOCOL[True][0].upper() + PROTOCOL[True][1:] + "."


def _label(study: Study, key: str) -> str:
    return f"tab:irscale-{key}-N{study.N}"


def _marks_from_pairs(study: Study, name) -> tuple[dict, list[tuple[str, str]]]:
    """Superscripts of the means table: ``{(measure, scale, system): symbols}`` and the legend,
    one symbol per baseline from which a system differs significantly by one test: the
    t-test where the study ran it, else its first test (ranx's Report does the same with
    letters; the comparisons with baselines give every test, and ``irscale table`` any
    one)."""
    pairs = _part(study, "pairs")
    if pairs is None or pairs.empty or "significant" not in pairs:
        return {}, []
    symbols: dict[tuple[str, str], str] = {}
    marks: dict[tuple[str, str, str], str] = {}
    alpha = _alpha(study)
    if "test" in pairs:
        keys = pairs["test"].map(slug_of_test)
        pairs = pairs[keys == default_test(list(dict.fromkeys(keys)))]
    for r in pairs.to_dict(orient="records"):
        key = (str(r.get("system_1")), _test_name(r.get("test")))
        if key not in symbols:
            symbols[key] = SYMBOLS[len(symbols)] if len(symbols) < len(SYMBOLS) else f"({len(symbols) + 1})"
        if not _missing(r.get("significant")) and bool(r["significant"]):
            cell = (name(r.get("measure")), str(r.get("scale")), str(r.get("system_2")))
            if symbols[key] not in marks.get(cell, ""):
                marks[cell] = marks.get(cell, "") + symbols[key]
    adj = "adjusted p-value" if "p_adjusted" in pairs else "p-value"
    used = "".join(marks.values())
    legend = [
        (s, f"significantly different from the baseline {b} by {t} ({adj} below α = {alpha:g}, on the same scale)")
        for (b, t), s in symbols.items()
        if s in used
    ]
    return marks, legend


def _means_table(study: Study, max_rows: int | None) -> ReportTable | None:
    means = _part(study, "means")
    if means is None or means.empty:
        return None
    name = canonical_names(study)
    wide, scales, values = _wide_means(study, means, name)
    cols = _means_columns(study, wide, scales, values)
    marks, legend = _marks_from_pairs(study, name)
    return ReportTable(
        "means",
        "means_original_vs_ranked",
        "Mean scores on the original and the interval (ranked) scale",
        f"The mean over {len(study.topics)} topics of each measure and of its ranked version for each system, "
        f"side by side, at run length N = {study.N}. Means of the original measure are meaningful "
        "comparisons only where the measure is an interval scale; means of the ranked version are.",
        wide,
        tuple(cols),
        _label(study, "means"),
        group=("measure",),
        marks=_mean_marks(wide, scales, marks),
        legend=tuple(legend),
        max_rows=max_rows,
    )


MEAN_TIE_RTOL = 1e-12  # means this close (relative) are the same scores summed in another order


def rank_by_mean(means: pd.Series) -> pd.Series:
    """Each system's rank by mean: 1 = highest, ties share the best position, and means
    equal up to float noise (:data:`MEAN_TIE_RTOL`: equal scores summed in another order
    differ in their last bits) tie. NaN stays NaN.

    >>> rank_by_mean(pd.Series([0.1 + 0.2, 0.3, 0.2])).tolist()
    [1.0, 1.0, 3.0]
    """
    v = means.to_numpy(dtype=np.float64)
    tol = MEAN_TIE_RTOL * np.maximum(np.abs(v)[:, None], np.abs(v)[None, :])
    rank = 1.0 + (v[None, :] > v[:, None] + tol).sum(axis=1)
    return pd.Series(np.where(np.isnan(v), np.nan, rank), index=means.index)


def _wide_means(study: Study, means: pd.DataFrame, name) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The means one row per measure and system, each scale's values (and rank) side by side,
    baselines flagged: (that frame, the scales, the value names)."""
    m = means.copy()
    m["measure"] = m["measure"].map(name)
    m["system"] = m["system"].astype(str)
    values = [c for c in m.columns if c not in ("measure", "scale", "system")]
    scales = _order(m["scale"].astype(str), ("original", "ranked"))
    wide = None
    for sc in scales:
        part = m[m["scale"].astype(str) == sc].set_index(["measure", "system"])[values]
        part = part[~part.index.duplicated()]
        part.columns = [f"{c}_{sc}" for c in values]
        if "mean" in values:
            part[f"rank_{sc}"] = part[f"mean_{sc}"].groupby(level="measure").transform(rank_by_mean)
        wide = part if wide is None else wide.join(part, how="outer")
    assert wide is not None  # means has rows (the caller checks), so one scale at least
    wide = wide.reset_index()
    measures = _order(wide["measure"], list(study.measures))
    systems = _order(wide["system"], [str(s) for s in study.systems])
    wide["_m"] = wide["measure"].map(measures.index)
    wide["_s"] = wide["system"].map(systems.index)
    wide = wide.sort_values(["_m", "_s"]).drop(columns=["_m", "_s"]).reset_index(drop=True)
    pairs = _part(study, "pairs")
    baselines = set(pairs["system_1"].astype(str)) if pairs is not None and "system_1" in pairs else set()
    wide.insert(2, "baseline", wide["system"].isin(baselines))
    return wide, scales, values


_SCALE_WORDS = {  # the means table's words for each scale: (its name, what its values are)
    "original": ("original", "the measure's own values"),
    "ranked": (
        "ranked",
        "its ranked version φ (an interval scale: the rank of the run's score among "
        "all the measure's values on runs of length N, Section 5)",
    ),
}


def _means_columns(study: Study, wide: pd.DataFrame, scales: list[str], values: list[str]) -> list[Column]:
    """The means table's columns: measure, system and baseline, then each scale's values and rank."""
    conf = (
        study.provenance.get("ci_level", study.provenance.get("confidence"))
        if isinstance(study.provenance, dict)
        else None
    )
    ci_words = "confidence interval"
    if isinstance(conf, (int, float)):
        ci_words = f"{100 * float(conf):g}% {ci_words}"
    cols = [
        Column("measure", "Measure", "the measure (canonical name), cut at the run length N.", "text"),
        Column(
            "system",
            "System",
            "the system (run tag); the baselines of the comparisons below are marked (baseline).",
            "text",
            flag=("baseline", "(baseline)"),
        ),
        Column(
            "baseline",
            "Baseline",
            "True when the system is a baseline of the comparisons with baselines.",
            "bool",
            hidden=True,
        ),
    ]
    for sc in scales:
        word, what = _SCALE_WORDS.get(sc, (sc, f"its {sc} version"))
        cols += [_mean_value_column(wide, v, sc, word, what, ci_words) for v in values]
        if f"rank_{sc}" in wide:
            cols.append(
                Column(
                    f"rank_{sc}",
                    f"Rank ({word})",
                    f"the system's position when the systems are "
                    f"ordered by Mean ({word}) (1 = highest; ties share the best position).",
                    "int",
                )
            )
    return cols


def _mean_value_column(wide: pd.DataFrame, v: str, sc: str, word: str, what: str, ci_words: str) -> Column:
    """The means table's column of value ``v`` (mean, halfwidth, ci_low, ci_high or another) on scale ``sc``."""
    key = f"{v}_{sc}"
    if v == "mean":
        return Column(
            key,
            f"Mean ({word})",
            f"the mean over topics of {what}, with its {ci_words} in brackets; the highest of each measure in bold.",
            "float",
            latex=rf"Mean ({word})",
            best="max",
            ci=(f"ci_low_{sc}", f"ci_high_{sc}") if f"ci_low_{sc}" in wide else None,
        )
    if v == "halfwidth":
        return Column(
            key,
            f"Half-width ({word})",
            f"the most the mean of {what} can be off: the mean "
            "of its half-widths where the ranked version comes from certified bounds "
            "(compare's approx), 0 where exact.",
            "sci",
            hidden=sc == "original",
        )
    if v in ("ci_low", "ci_high"):
        return Column(
            key,
            f"{'Lower' if v == 'ci_low' else 'Upper'} CI bound ({word})",
            f"the {'lower' if v == 'ci_low' else 'upper'} bound of the {ci_words} of the mean of {what}.",
            "float",
            hidden=True,
        )
    return _generic(key, wide[key])


def _mean_marks(wide: pd.DataFrame, scales: list[str], marks: dict) -> dict:
    """The significance marks of the means table's cells: ``{(row, mean column): symbols}``."""
    cell_marks = {}
    for i, r in enumerate(wide.to_dict(orient="records")):
        for sc in scales:
            s = marks.get((r["measure"], sc, r["system"]))
            if s and f"mean_{sc}" in wide:
                cell_marks[(i, f"mean_{sc}")] = s
    return cell_marks


def _table2(study: Study, max_rows: int | None) -> ReportTable:
    name = canonical_names(study)
    df = study.table2.copy()
    df["measure"] = df["measure"].map(name)
    mid = "tau_mid" in df and df["tau_mid"].notna().any()
    cols = [
        Column("measure", "Measure", "the measure (canonical name), cut at the run length N.", "text"),
        Column(
            "ranked",
            "Ranked version",
            "the ranked (interval-scaled) column it is compared with: φ of the "
            "measure's value at N, unq ties (normalized, midpoint: φ / the number of distinct values, the "
            "midpoint of certified bounds).",
            "text",
            hidden=True,
        ),
        Column(
            "tau_unq",
            "τ (unq)",
            "Kendall's τ between the systems' ranking by the measure's mean and by its "
            "ranked version's mean, φ from the unq tie strategy (paper Table 2); 1 means the same ranking.",
            latex=r"$\tau$ (unq)",
        ),
        Column(
            "tau_ap_unq",
            "τ_ap (unq)",
            "the AP correlation τ_ap of the same two rankings (Yilmaz et al.), which weighs swaps near the top more.",
            latex=r"$\tau_{ap}$ (unq)",
        ),
        Column(
            "tau_mid",
            "τ (mid)",
            "Kendall's τ as in τ (unq) with φ from the mid-rank tie strategy (paper Table 3).",
            latex=r"$\tau$ (mid)",
            hidden=not mid,
        ),
        Column(
            "topic_tau_min",
            "Topic τ min",
            "the smallest Kendall's τ between measure and ranked version "
            "topic by topic; 1 since φ keeps each topic's order of runs (a sanity check).",
            latex=r"topic $\tau$ min",
        ),
        Column(
            "topic_tau_max",
            "Topic τ max",
            "the largest topic-by-topic Kendall's τ (also 1).",
            latex=r"topic $\tau$ max",
        ),
        Column("rb_dependent", "Recall-base dependent", RB + ".", "bool", latex="RB-dep."),
    ]
    cols += _extra(df, [c.key for c in cols], BOUNDS_EXTRA)
    return ReportTable(
        "table2",
        "table2_tau_measure_vs_ranked",
        "Kendall's τ between each measure and its ranked version",
        f"Overall Kendall's τ between the ranking of the {len(study.systems)} systems by each measure and by its "
        f"ranked (interval-scaled) version at N = {study.N} (the paper's Tables 2 and 3, Section 7.1): the further "
        "below 1, the further the measure is from being an interval scale (and, for measures depending on the "
        "recall base, from being safely averaged across topics).",
        df,
        tuple(cols),
        _label(study, "table2"),
        max_rows=max_rows,
        paper="Tables 2 and 3",
    )


def _table4(study: Study, max_rows: int | None) -> ReportTable:
    name = canonical_names(study)
    df = study.table4.copy()
    for k in ("measure_1", "measure_2"):
        df[k] = df[k].map(name)
    cols = [
        Column("measure_1", "Measure 1", "the first measure of the pair.", "text"),
        Column("measure_2", "Measure 2", "the second measure of the pair.", "text"),
        Column(
            "tau",
            "τ (original)",
            "Kendall's τ between the systems' rankings by the two original measures' means (the paper's Msr column).",
            latex=r"$\tau$ (orig.)",
        ),
        Column(
            "tau_ranked",
            "τ (ranked)",
            "Kendall's τ between the rankings by the two ranked versions' means (RnkMsr).",
            latex=r"$\tau$ (ranked)",
        ),
        Column(
            "delta_pct",
            "Δ%",
            "the change from τ (original) to τ (ranked) in percent of τ (original): "
            "positive when the original measures understate how close they are.",
            "signed_pct",
            latex=r"$\Delta\%$",
        ),
        Column(
            "tau_ap",
            "τ_ap (original)",
            "the AP correlation τ_ap between the two original rankings.",
            latex=r"$\tau_{ap}$ (orig.)",
        ),
        Column(
            "tau_ap_ranked",
            "τ_ap (ranked)",
            "the AP correlation τ_ap between the two ranked rankings.",
            latex=r"$\tau_{ap}$ (ranked)",
        ),
    ]
    cols += _extra(df, [c.key for c in cols], BOUNDS_EXTRA)
    return ReportTable(
        "table4",
        "table4_tau_between_measures",
        "Kendall's τ between measures and between their ranked versions",
        f"Kendall's τ between the systems' rankings by each pair of measures and by their ranked versions at "
        f"N = {study.N}, unq ties (the paper's Table 4, Section 7.2). The correlation of two ranked versions is a "
        "meaningful statement on their interval scales.",
        df,
        tuple(cols),
        _label(study, "table4"),
        max_rows=max_rows,
        paper="Table 4",
    )


def _changes_columns(df: pd.DataFrame) -> list[Column]:
    cols = [
        Column("measure", "Measure", "the measure (canonical name); its rows are one significance test each.", "text"),
        Column(
            "test",
            "Test",
            "the significance test, on every pair of systems (ANOVA, Kruskal-Wallis and "
            "Friedman with Tukey's HSD over all pairs).",
            "text",
        ),
        Column(
            "ordinal",
            "Scale assumed",
            "the scale the test assumes: ordinal (sign, rank-sum, Kruskal-Wallis, "
            "Friedman use only the order of scores) or interval "
            "(signed-rank, t, ANOVA add or subtract scores).",
            "assumes",
            latex="Assumes",
        ),
        Column("sig", "Sig", "the number of system pairs significantly different with the original measure.", "int"),
        Column(
            "s2ns",
            "S2NS (%)",
            "pairs significant with the original measure and not with its ranked version "
            "(in parentheses, their share of Sig): a tendency of the original scale to false positives.",
            "int",
            paren="s2ns_pct",
            latex=r"S2NS (\%)",
        ),
        Column("s2ns_pct", "S2NS %", "S2NS in percent of Sig.", "pct", hidden=True),
        Column(
            "ns2s",
            "NS2S (%)",
            "pairs not significant with the original measure and significant with its "
            "ranked version (in parentheses, their share of Sig): a tendency to false negatives.",
            "int",
            paren="ns2s_pct",
            latex=r"NS2S (\%)",
        ),
        Column("ns2s_pct", "NS2S %", "NS2S in percent of Sig.", "pct", hidden=True),
        Column(
            "delta_pct",
            "Δ%",
            "(S2NS + NS2S) / Sig in percent: the share of decisions that change when the "
            "measure is put on an interval scale.",
            "pct",
            latex=r"$\Delta\%$",
        ),
        Column(
            "sig_ranked",
            "Sig (ranked)",
            "the number of pairs significant with the ranked version (Sig − S2NS + NS2S).",
            "int",
            latex=r"Sig$_R$",
        ),
        Column(
            "meaningful",
            "Meaningful (original)",
            "yes when “systems i and j differ significantly” by this "
            "test on the original measure is a meaningful statement: its truth is invariant under the "
            "permissible transformations of the measure's scale (see “What meaningful means”).",
            "bool",
            latex="Mngf.",
        ),
        Column(
            "meaningful_ranked",
            "Meaningful (ranked)",
            "the same for the ranked version, an interval scale: "
            "yes, except on a measure depending on the recall base for every test but sign and Friedman "
            "(its scale differs from topic to topic).",
            "bool",
            latex=r"Mngf.$_R$",
        ),
    ]
    return cols + _extra(df, [c.key for c in cols], {**CHANGES_EXTRA, **BOUNDS_EXTRA})


def _tables5_6(study: Study, max_rows: int | None) -> list[ReportTable]:
    ch = study.changes
    if ch is None or ch.empty:
        return []
    name = canonical_names(study)
    df = ch.copy()
    df["measure"] = df["measure"].map(name)
    rb = (
        {name(m): bool(v) for m, v in zip(study.table2["measure"], study.table2["rb_dependent"])}
        if "rb_dependent" in study.table2
        else {}
    )

    def rb_of(m):
        return rb.get(m, _needs_rb(m))

    cols = _changes_columns(df)
    notes: tuple[str, ...] = ()
    if "correction" in df and df["correction"].nunique(dropna=False) <= 1:  # one correction: said once
        corr = df["correction"].iloc[0]
        cols = [dataclasses.replace(c, hidden=True) if c.key == "correction" else c for c in cols]
        notes = (f"Multiple-comparison correction of the pairwise p-values: {corr}.",)
    columns = tuple(cols)
    out = []
    for dep, key, title, which in (
        (
            False,
            "table5",
            "Significance changes, measures not depending on the recall base",
            "measures not depending on the recall base (exact interval scale, the same on every topic)",
        ),
        (
            True,
            "table6",
            "Significance changes, measures depending on the recall base",
            "measures depending on the recall base (the ranked version is a surrogate interval scale)",
        ),
    ):
        part = df[df["measure"].map(rb_of) == dep].reset_index(drop=True)
        if part.empty:
            continue
        pairs = len(study.systems) * (len(study.systems) - 1) // 2
        out.append(
            ReportTable(
                key,
                "tables5_6_significance_changes",
                title,
                f"Changes in which of the {pairs:,} system pairs are significantly different "
                f"(α = {_alpha(study):g}) when "
                f"each measure is replaced by its ranked version, for {which}, at N = {study.N} (the paper's "
                f"{'Table 6' if dep else 'Table 5'}, Section 7.3).",
                part,
                columns,
                _label(study, key),
                group=("measure",),
                max_rows=max_rows,
                shade="ordinal",
                files=False,
                notes=notes,
                paper="Table 6" if dep else "Table 5",
            )
        )
    return out


def _needs_rb(m: str) -> bool:
    from irscale.measures import parse_measure

    try:
        return bool(parse_measure(m).needs_recall_base)
    except Exception:  # noqa: BLE001
        return False


def _power_table(study: Study, max_rows: int | None) -> ReportTable | None:
    """Discriminative power of each measure and its ranked version, per test with a p-value
    per pair (``study.power``)."""
    power = getattr(study, "power", None)
    if power is None or power.empty:
        return None
    name = canonical_names(study)
    df = power.copy()
    df["measure"] = df["measure"].map(name)
    alpha = _alpha(study)
    cols = (
        Column("measure", "Measure", "the measure (canonical name).", "text"),
        Column("test", "Test", "the significance test.", "text"),
        Column("pairs", "Pairs", "the system pairs with a p-value (a pair with a missing score has none).", "int"),
        Column(
            "significant",
            "Significant (original)",
            f"the pairs the test finds significant at α = {alpha:g} (p < α) on the original measure.",
            "int",
            latex=r"Sig.\ (orig.)",
        ),
        Column(
            "share",
            "Power (original)",
            "discriminative power: the share of the pairs significant on the original measure.",
            "share",
            latex="Power (orig.)",
        ),
        Column(
            "significant_ranked",
            "Significant (ranked)",
            "the pairs significant on the ranked version.",
            "int",
            latex=r"Sig.\ (ranked)",
        ),
        Column(
            "share_ranked",
            "Power (ranked)",
            "discriminative power of the ranked version.",
            "share",
            latex="Power (ranked)",
        ),
        Column(
            "asl_median",
            "Median ASL (original)",
            "the median achieved significance level (p-value) over the pairs, original measure.",
            "p",
            latex="Median ASL (orig.)",
        ),
        Column(
            "asl_median_ranked",
            "Median ASL (ranked)",
            "the median achieved significance level over the pairs, ranked version.",
            "p",
            latex="Median ASL (ranked)",
        ),
    )
    return ReportTable(
        "power",
        "discriminative_power",
        "Discriminative power, original and ranked",
        f"Discriminative power (Sakai, SIGIR 2006) at N = {study.N}: for each measure and test, the share of "
        f"system pairs significant at α = {alpha:g} on the original measure and on its ranked version, and the "
        "median achieved significance level. Tests with a p-value per pair only (the paper's Tukey-type tests "
        "decide by the studentized range). A pair is significant where its p-value is below α, uncorrected (a "
        "--correction does not apply here); the randomised Tukey HSD's p-values hold the family-wise error "
        f"already. The ASL curves, every pair's p-value sorted, are in the figure and, sampled at each percent of "
        f"the pairs, in asl_curves_N{study.N}.csv.",
        df,
        cols,
        _label(study, "power"),
        group=("measure",),
        max_rows=max_rows,
    )


def changes_table(study: Study) -> ReportTable | None:
    """Tables 5 and 6 together (every row of ``study.changes``), for the CSV and JSON files."""
    if study.changes is None or study.changes.empty:
        return None
    name = canonical_names(study)
    df = study.changes.copy()
    df["measure"] = df["measure"].map(name)
    return ReportTable(
        "changes",
        "tables5_6_significance_changes",
        "Significance changes (original → ranked)",
        "Changes in which system pairs are significantly different when each measure is replaced "
        "by its ranked version (the paper's Tables 5 and 6).",
        df,
        tuple(_changes_columns(df)),
        _label(study, "changes"),
        group=("measure",),
        paper="Tables 5 and 6",
    )


PAIRS_COLUMNS = (
    Column("measure", "Measure", "the measure (canonical name).", "text"),
    Column(
        "scale", "Scale", "original: the measure's own values; ranked: its ranked version φ, an interval scale.", "text"
    ),
    Column("test", "Test", "the paired significance test of the comparison.", "text"),
    Column("system_1", "Baseline", "the baseline system the other system is compared with.", "text"),
    Column("system_2", "System", "the system compared with the baseline.", "text"),
    Column("mean_1", "Baseline mean", "the baseline's mean over topics.", hidden=True),
    Column("mean_2", "System mean", "the system's mean over topics.", hidden=True),
    Column(
        "diff",
        "Difference [CI]",
        "the mean over topics of the system's score minus the baseline's, with its confidence interval in brackets.",
        latex=r"Diff.\ [CI]",
        ci=("ci_low", "ci_high"),
    ),
    Column("ci_low", "CI low", "the lower bound of the difference's confidence interval.", hidden=True),
    Column("ci_high", "CI high", "the upper bound of the difference's confidence interval.", hidden=True),
    Column(
        "d_z",
        "d_z",
        "Cohen's d_z: the mean per-topic difference over the standard deviation of the per-topic "
        "differences (effect size of paired data).",
        latex=r"$d_z$",
    ),
    Column(
        "rank_biserial",
        "r_rb",
        "the matched-pairs rank-biserial correlation (−1 to 1): the rank-weighted share "
        "of topics favouring the system minus that favouring the baseline.",
        latex=r"$r_{rb}$",
    ),
    Column(
        "p_value",
        "p",
        "the test's p-value for this pair, before any multiple-comparison correction.",
        "p",
        latex=r"$p$",
    ),
    Column(
        "p_adjusted",
        "p (adjusted)",
        "the p-value after the multiple-comparison correction recorded in the provenance.",
        "p",
        latex=r"$p_{adj}$",
    ),
    Column("significant", "Significant", "yes when the adjusted p-value is below α.", "bool", latex="Sig."),
    Column(
        "meaningful",
        "Meaningful",
        "yes when “the system differs significantly from the baseline” by this test "
        "on this scale is meaningful: its truth is invariant under the scale's permissible transformations "
        "(see “What meaningful means”).",
        "bool",
        latex="Mngf.",
    ),
    Column(
        "incomparable_share",
        "Incomparable topics",
        "the share of topics on which the two runs are "
        "incomparable in the weak top-heaviness order, where measures may rank them either way.",
        "share",
        latex=r"Incomp.\ \%",
    ),
    Column(
        "incomparable_mass",
        "Difference from incomparable topics",
        "the share of the summed absolute per-topic "
        "differences that comes from topics where the two runs are incomparable.",
        "share",
        hidden=True,
    ),
    Column(
        "rests_on_incomparable",
        "Rests on incomparable",
        "yes when the difference is significant and more than "
        "half of it (of the summed absolute per-topic differences) comes from topics where the two runs are "
        "incomparable, so measures that agree with the weak order could reverse it.",
        "bool",
        latex="On incomp.",
    ),
    Column(
        "correction",
        "Correction",
        "the multiple-comparison correction of the p-values (none for the Tukey-type "
        "tests, whose p-values are adjusted over all pairs already).",
        "text",
        hidden=True,
    ),
)


# the columns of the comparisons with baselines that depend on the test: one per test in the
# report's table and files (``<field>_<test>``, e.g. ``p_adjusted_ttest``)
PAIR_TEST_FIELDS = ("p_value", "p_adjusted", "significant", "meaningful", "rests_on_incomparable", "could_flip")
PAIR_KEYS = ("measure", "scale", "system_1", "system_2")
TEST_SHORT = {  # a test's column header in the comparisons with baselines and the paper table
    "sign": "Sign",
    "ranksum": "Rank sum",
    "signrank": "Signed rank",
    "ttest": "t",
    "anova1": "ANOVA 1",
    "kruskal": "Kruskal-W.",
    "anova2": "ANOVA 2",
    "friedman": "Friedman",
    "permutation": "Perm.",
    "rtukey": "Rand. Tukey",
    "bootstrap": "Bootstrap",
}
PAIR_MARKS = (  # (symbol, the wide column it marks the p cell by, the value that marks it, legend)
    ("*", "significant", True, "significant: the p-value (adjusted where a correction applies) is below α"),
    (
        "†",
        "meaningful",
        False,
        "not meaningful on this scale: the test needs an interval scale (or one across topics) "
        "that the measure's original values are not, so its conclusion may change under a permissible "
        "transformation (the ranked scale's is meaningful)",
    ),
    (
        "‡",
        "rests_on_incomparable",
        True,
        "significant, and more than half of the difference comes from topics where the two runs "
        "are incomparable in the weak top-heaviness order (measures may order them either way)",
    ),
    ("§", "could_flip", True, "the decision could differ for exact ranked scores within the certified bounds"),
)


@functools.cache
def slug_of_test(name) -> str:
    """A test's key (``ttest``) from its key or its name in words (``Student's t Test``)."""
    from irscale.stats import ALL_TESTS, test_name

    words = {test_name(t): t for t in ALL_TESTS}
    name = str(name)
    return name if name in ALL_TESTS else words.get(name, re.sub(r"\W+", "_", name).strip("_").lower())


def default_test(tests: Sequence[str]) -> str:
    """The one test a table marks by when the reader names none: the t-test where the study
    ran it, else its first test (the means table and ``irscale table`` alike)."""
    keys = [slug_of_test(t) for t in tests]
    return "ttest" if "ttest" in keys or not keys else keys[0]


def pairs_wide(pairs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The comparisons with baselines one row per (measure, scale, baseline, system): what
    does not depend on the test (means, difference, interval, effect sizes, incomparable
    topics) once, then each test's p-value, adjusted p-value, decision and flags as
    ``<field>_<test>`` columns (:data:`PAIR_TEST_FIELDS`), tests in the study's order.
    Returns the frame and the tests' keys. :func:`pairs_long` is its inverse."""
    df = pairs.copy()
    if "test" not in df:
        return df, []
    df["test"] = df["test"].map(slug_of_test)
    tests = list(dict.fromkeys(df["test"]))
    per = [c for c in PAIR_TEST_FIELDS if c in df]
    keys = [k for k in PAIR_KEYS if k in df]
    common = [c for c in df.columns if c not in per and c not in ("test", "correction")]
    wide = df[df["test"] == tests[0]][common].reset_index(drop=True)
    for t in tests:
        part = df[df["test"] == t][keys + per].reset_index(drop=True)
        if len(part) == len(wide) and part[keys].equals(wide[keys]):  # each test's rows in one order (compare's)
            for c in per:
                wide[f"{c}_{t}"] = part[c].to_numpy()
        else:
            part = part.rename(columns={c: f"{c}_{t}" for c in per})
            wide = wide.merge(part.drop_duplicates(keys), on=keys, how="left")
    return wide, tests


def pairs_long(wide: pd.DataFrame, corrections: dict[str, str] | None = None) -> pd.DataFrame:
    """:func:`pairs_wide`'s frame back in ``Study.pairs``' form: one row per (measure,
    scale, test, baseline, system), the test in words (``corrections``: each test's
    correction, for the ``correction`` column)."""
    from irscale.stats import ALL_TESTS, test_name

    tests = [t for t in ALL_TESTS if f"p_value_{t}" in wide]
    per = {t: [c for c in wide.columns if any(c == f"{f}_{t}" for f in PAIR_TEST_FIELDS)] for t in tests}
    tested = {c for cols in per.values() for c in cols}
    common = [c for c in wide.columns if c not in tested]
    frames = []
    for t in tests:
        part = wide[common].copy()
        part.insert(2, "test", test_name(t))
        for c in per[t]:
            part[c[: -len(t) - 1]] = wide[c].to_numpy()
        if corrections is not None:
            part["correction"] = corrections.get(t, "none")
        frames.append(part)
    if not frames:
        return wide.copy()
    out = pd.concat(frames, ignore_index=True)
    order = {m: k for k, m in enumerate(dict.fromkeys(out["measure"]))}
    out = out.sort_values(
        ["measure", "scale", "test"],
        key=lambda c: c.map(order) if c.name == "measure" else c.map(_long_order(c)),
        kind="stable",
    )
    first = [c for c in LONG_PAIRS if c in out]
    return out[first + [c for c in out.columns if c not in first]].reset_index(drop=True)


LONG_PAIRS = (  # Study.pairs' leading columns, in compare's order
    "measure",
    "scale",
    "test",
    "system_1",
    "system_2",
    "mean_1",
    "mean_2",
    "diff",
    "ci_low",
    "ci_high",
    "d_z",
    "rank_biserial",
    "p_value",
    "p_adjusted",
    "significant",
    "correction",
    "meaningful",
)


def _long_order(col: pd.Series) -> dict:
    """The order of ``Study.pairs``' scale and test columns (as compare writes them)."""
    from irscale.stats import ALL_TESTS, test_name

    if col.name == "scale":
        return {"original": 0, "ranked": 1}
    return {test_name(t): k for k, t in enumerate(ALL_TESTS)}


def _pairs_table(study: Study, max_rows: int | None) -> ReportTable | None:
    pairs = _part(study, "pairs")
    if pairs is None or pairs.empty:
        return None
    name = canonical_names(study)
    long = pairs.copy()
    if "measure" in long:
        long["measure"] = long["measure"].map(name)
    for k in ("system_1", "system_2"):
        if k in long:
            long[k] = long[k].astype(str)
    corr = _pairs_corrections(study, long)
    df, tests = pairs_wide(long)
    known = [c for c in PAIRS_COLUMNS if c.key in df]
    if not any(c.key == "ci_low" for c in known):
        known = [
            dataclasses.replace(c, head=c.head.replace(" [CI]", ""), ci=None) if c.key == "diff" else c for c in known
        ]
    cols = known + _extra(
        df, [c.key for c in PAIRS_COLUMNS] + [f"{f}_{t}" for t in tests for f in PAIR_TEST_FIELDS], BOUNDS_EXTRA
    )
    corrected = any(v != "none" for v in corr.values())
    alpha = _alpha(study)
    for t in tests:
        cols += _pair_test_columns(t, corr.get(t, "none"), corrected, alpha, df)
    marks, legend = _pair_marks(df, tests, corrected)
    said = ", ".join(f"{v}" for v in dict.fromkeys(corr.values()) if v != "none")
    said = f" ({said} correction over the baseline comparisons; Tukey-type tests are adjusted already)" if said else ""
    return ReportTable(
        "pairs",
        "comparisons_with_baselines",
        "Comparisons with the baselines",
        f"Each system against each baseline, on the original and the ranked scale: the difference of means with its "
        f"confidence interval and effect sizes, computed once, then each test's "
        f"{'adjusted ' if corrected else ''}p-value in a column of its own"
        f"{said}, "
        f"α = {alpha:g}, marked where significant and where the conclusion is not meaningful on that scale.",
        df,
        tuple(cols),
        _label(study, "pairs"),
        group=tuple(k for k in ("measure", "scale", "system_1") if k in df),
        marks=marks,
        legend=tuple(legend),
        max_rows=max_rows,
    )


def _pairs_corrections(study: Study, long: pd.DataFrame) -> dict[str, str]:
    """Each test's correction of the comparisons with baselines (``none`` for Tukey-type)."""
    if "correction" in long and "test" in long:
        return {slug_of_test(t): str(c) for t, c in zip(long["test"], long["correction"])}
    corr = study.provenance.get("correction", "none") if isinstance(study.provenance, dict) else "none"
    from irscale.stats import FAMILYWISE

    return {
        slug_of_test(t): "none" if slug_of_test(t) in FAMILYWISE else str(corr)
        for t in dict.fromkeys(long.get("test", []))
    }


def _pair_test_columns(t: str, corr: str, corrected: bool, alpha: float, df: pd.DataFrame) -> list[Column]:
    """One test's columns of the comparisons with baselines: the p-value shown (adjusted
    where the study corrects), the rest in the files only."""
    from irscale.stats import test_name

    words = test_name(t)
    head = TEST_SHORT.get(t, words)
    adj = (
        f"after the {corr} correction over the baseline comparisons of this measure and scale"
        if corr != "none"
        else "the test's own family-wise p-value over all system pairs (Tukey-type: no further correction)"
        if corrected
        else "no correction"
    )
    cols = [
        Column(
            f"p_value_{t}",
            f"p ({head})",
            f"{words}: the p-value of the pair before any multiple-comparison correction.",
            "p",
            hidden=corrected,
        ),
        Column(
            f"p_adjusted_{t}",
            f"{head}" if corrected else f"p adj. ({head})",
            f"{words}: the p-value of the pair, {adj}; marks after it as the legend says.",
            "p",
            latex=latex_head(head),
            hidden=not corrected,
        ),
        Column(
            f"significant_{t}",
            f"Significant ({head})",
            f"{words}: yes when the adjusted p-value is below α = {alpha:g}.",
            "bool",
            hidden=True,
        ),
        Column(
            f"meaningful_{t}",
            f"Meaningful ({head})",
            f"{words}: yes when “the system differs significantly from the baseline” by this test on this scale is "
            "meaningful (its truth is invariant under the scale's permissible transformations).",
            "bool",
            hidden=True,
        ),
        Column(
            f"rests_on_incomparable_{t}",
            f"Rests on incomparable ({head})",
            f"{words}: yes when the difference is significant and more than half of it (of the summed absolute "
            "per-topic differences) comes from topics where the two runs are incomparable.",
            "bool",
            hidden=True,
        ),
        Column(
            f"could_flip_{t}",
            f"Could flip ({head})",
            f"{words}: yes when the decision on the ranked scale could differ for exact scores within the certified "
            "bounds (empty: not bounded under a correction).",
            "bool",
            hidden=True,
        ),
    ]
    if not corrected:  # the raw p-value is the one shown
        explain = f"{words}: the p-value of the pair (no correction); marks after it as the legend says."
        cols[0] = dataclasses.replace(cols[0], head=head, latex=latex_head(head), hidden=False, explain=explain)
    return [c for c in cols if c.key in df]


def latex_head(text: str) -> str:
    """A column header in LaTeX: ``t`` in math italics, other words as text."""
    return "$t$" if text == "t" else text.replace("&", r"\&")


def _pair_marks(df: pd.DataFrame, tests: list[str], corrected: bool) -> tuple[dict, list[tuple[str, str]]]:
    """The marks of the p-value cells (:data:`PAIR_MARKS`) and the legend of those used."""
    marks: dict[tuple[int, str], str] = {}
    used: set[str] = set()
    records = df.to_dict(orient="records")
    for t in tests:
        shown = f"p_adjusted_{t}" if corrected else f"p_value_{t}"
        for sym, what, when, _ in PAIR_MARKS:
            key = f"{what}_{t}"
            if key not in df:
                continue
            for i, r in enumerate(records):
                v = r.get(key)
                if not _missing(v) and bool(v) == when:
                    marks[(i, shown)] = marks.get((i, shown), "") + sym
                    used.add(sym)
    legend = [(sym, text) for sym, _, _, text in PAIR_MARKS if sym in used]
    return marks, legend


MEASURE_FREE_COLUMNS = (
    Column("system_1", "System 1", "the first system of the pair.", "text"),
    Column("system_2", "System 2", "the second system of the pair.", "text"),
    Column(
        "better",
        "Better",
        "topics on which system 1's run is above system 2's in the weak top-heaviness order "
        "(the order every measure agrees with).",
        "int",
    ),
    Column("worse", "Worse", "topics on which system 1's run is below system 2's in that order.", "int"),
    Column("equal", "Equal", "topics on which the two runs are equal in that order.", "int"),
    Column(
        "incomparable",
        "Incomparable",
        "topics on which neither run is above the other: measures may order them either way.",
        "int",
    ),
    Column("incomparable_share", "Incomparable share", "incomparable topics in percent of all topics.", "share"),
    Column(
        "sign_p",
        "Sign test p",
        "the p-value of a sign test on the better and worse topics (equal and incomparable ones left out).",
        "p",
        latex=r"sign $p$",
    ),
    Column("topics", "Topics", "the topics compared.", "int"),
    Column("comparable", "Comparable", "topics on which the runs are comparable (better, worse or equal).", "int"),
    Column("sign_n", "Sign test n", "the topics the sign test counts (better plus worse).", "int"),
    Column(
        "sign_significant",
        "Sign test significant",
        "yes when the sign test p-value is below the significance "
        "level: one system is above the other on significantly more topics, whatever the measure.",
        "bool",
    ),
    Column(
        "direction", "Direction", "1 when system 1 is above on more topics, -1 when system 2 is, 0 when neither.", "int"
    ),
)


def measure_free_table(study: Study) -> ReportTable | None:
    """Every pair of systems of ``study.measure_free`` (for the CSV and JSON files)."""
    mf = _part(study, "measure_free")
    if mf is None:
        return None
    cols = [c for c in MEASURE_FREE_COLUMNS if c.key in mf] + _extra(mf, [c.key for c in MEASURE_FREE_COLUMNS])
    return ReportTable(
        "measure_free",
        "measure_free_pairs",
        "Measure-free comparison of every pair of systems",
        "For each pair of systems, the topics on which one run is better, worse, equal or incomparable "
        "in the weak top-heaviness order.",
        mf.reset_index(drop=True),
        tuple(cols),
        _label(study, "measure-free"),
    )


def _measure_free_tables(study: Study, max_rows: int | None) -> list[ReportTable]:
    full = measure_free_table(study)
    if full is None or full.frame.empty or "incomparable_share" not in full.frame:
        return []
    share = pd.to_numeric(full.frame["incomparable_share"], errors="coerce")
    return [
        _measure_free_summary(study, full.frame, share),
        _measure_free_histogram(study, share),
        _measure_free_top(study, full, share),
    ]


def _incomparable_statistics(mf: pd.DataFrame, share: pd.Series, alpha: float) -> list[tuple]:
    """The measure-free summary's rows: (statistic, value, kind, meaning) of the pairs' incomparable shares."""
    n = len(mf)
    topics = (
        mf[[c for c in ("better", "worse", "equal", "incomparable") if c in mf]].sum(axis=1)
        if "better" in mf
        else pd.Series(dtype=float)
    )
    q = share.quantile([0, 0.25, 0.5, 0.75, 1.0]) if share.notna().any() else pd.Series([np.nan] * 5)
    stats = [
        ("system pairs", n, "int", "every pair of systems compared"),
        ("topics per pair", topics.max() if len(topics) else np.nan, "int", "topics judged for both runs"),
        ("mean incomparable share", share.mean(), "share", "the mean share of incomparable topics over the pairs"),
        ("minimum", q.iloc[0], "share", "the smallest share"),
        ("lower quartile", q.iloc[1], "share", "a quarter of the pairs have at most this share"),
        ("median", q.iloc[2], "share", "half of the pairs have at most this share"),
        ("upper quartile", q.iloc[3], "share", "three quarters of the pairs have at most this share"),
        ("maximum", q.iloc[4], "share", "the largest share"),
        (
            "pairs with at least half of the topics incomparable",
            int((share >= 0.5).sum()),
            "int",
            "pairs on which no measure-free verdict covers most topics",
        ),
    ]
    if "sign_p" in mf:
        sig = int((pd.to_numeric(mf["sign_p"], errors="coerce") < alpha).sum())
        stats.append(
            (
                f"pairs with sign test p < {alpha:g}",
                sig,
                "int",
                "pairs whose better and worse topics differ significantly, whatever the measure",
            )
        )
    return stats


def _measure_free_summary(study: Study, mf: pd.DataFrame, share: pd.Series) -> ReportTable:
    """The table of statistics of the pairs' shares of incomparable topics."""
    stats = _incomparable_statistics(mf, share, _alpha(study))
    summary = pd.DataFrame(
        {
            "statistic": [s[0] for s in stats],
            "value": [format_value(s[1], s[2]) for s in stats],
            "exact": [float(s[1]) if not _missing(s[1]) else np.nan for s in stats],
            "meaning": [s[3] for s in stats],
        }
    )
    return ReportTable(
        "measure_free_summary",
        "measure_free_summary",
        "Measure-free comparison: how often runs are incomparable",
        "The weak top-heaviness order is the only order on runs every measure agrees with; where two runs are "
        "incomparable in it, measures may rank them either way. The distribution over all pairs of systems of the "
        "share of topics on which their runs are incomparable (every pair is in the measure_free_pairs CSV file).",
        summary,
        (
            Column("statistic", "Statistic", "what is counted or summarised.", "text"),
            Column("value", "Value", "its value (shares in percent of the topics).", "text"),
            Column("exact", "Exact", "the value as a number (shares as fractions).", hidden=True),
            Column("meaning", "Meaning", "what the statistic says.", "text"),
        ),
        _label(study, "measure-free-summary"),
        files=False,
        exts=("tex",),
    )


def _measure_free_histogram(study: Study, share: pd.Series) -> ReportTable:
    """The table of how many pairs have each share of incomparable topics (bins of 10 points)."""
    n = len(share)
    edges = np.linspace(0, 1, 11)
    counts = np.histogram(share.dropna().clip(0, 1), bins=edges)[0]
    hist = pd.DataFrame({"from": edges[:-1], "to": edges[1:], "pairs": counts, "share_of_pairs": counts / max(n, 1)})
    return ReportTable(
        "measure_free_histogram",
        "measure_free_summary",
        "Measure-free comparison: distribution of incomparable shares",
        "How many pairs of systems have each share of incomparable topics, in bins of 10 percentage points (the last "
        "bin includes 100%).",
        hist,
        (
            Column("from", "From", "the bin's lower bound (included), a share of the topics.", "share"),
            Column("to", "To", "the bin's upper bound (excluded, except for the last bin).", "share"),
            Column("pairs", "Pairs", "the number of system pairs in the bin.", "int"),
            Column("share_of_pairs", "Share of pairs", "the bin's pairs in percent of all pairs.", "share"),
        ),
        _label(study, "measure-free-histogram"),
        files=False,
        exts=("tex",),
    )


def _measure_free_top(study: Study, full: ReportTable, share: pd.Series) -> ReportTable:
    """The table of the (at most 10) pairs with the largest shares of incomparable topics."""
    mf = full.frame
    k = min(10, len(mf))
    top = (
        mf.assign(_s=share)
        .sort_values(["_s"] + (["incomparable"] if "incomparable" in mf else []), ascending=False, kind="stable")
        .drop(columns="_s")
        .head(k)
    )
    return ReportTable(
        "measure_free_top",
        "measure_free_summary",
        f"Measure-free comparison: the {k} pairs with the most incomparable topics",
        "The pairs of systems whose runs are most often incomparable: conclusions about them "
        "depend most on the measure chosen.",
        top.reset_index(drop=True),
        full.columns,
        _label(study, "measure-free-top"),
        files=False,
        exts=("tex",),
    )


# -- CSV and JSON ----------------------------------------------------------------------------------


def data_frame(table: ReportTable) -> pd.DataFrame:
    """The table's exact values with, after each float column ``x``, ``x_display``: the
    text the tables show (:func:`format_value`: 4 decimals or :func:`float_text`'s significant
    digits, percentages 2, missing values empty). A value and its interval ends read in one
    format: where one of them is a tiny nonzero value, all three in significant digits
    (:func:`cell_parts`)."""
    df = table.frame.reset_index(drop=True)
    out = {}
    kinds = {c.key: c.kind for c in table.columns}
    for k in df.columns:
        out[k] = df[k]
        kind = kinds.get(k, "float")
        if df[k].dtype.kind == "f" and kind != "int":
            out[f"{k}_display"] = _display(df[k].to_numpy(dtype=np.float64), kind)
    for c in table.columns:
        keys = (c.key, *(c.ci or ()))
        if not c.ci or not all(f"{k}_display" in out and kinds.get(k, "float") == "float" for k in keys):
            continue
        vals = [df[k].to_numpy(dtype=np.float64) for k in keys]
        tiny = np.zeros(len(df), dtype=bool)
        for v in vals:
            tiny |= np.isfinite(v) & (v != 0) & (np.abs(np.where(np.isfinite(v), v, 1.0)) < 5e-5)
        for k, v in zip(keys, vals):
            shown = list(out[f"{k}_display"])
            for r in np.flatnonzero(tiny & ~np.isnan(v)):
                shown[r] = _sig(float(v[r]))
            out[f"{k}_display"] = shown
    return pd.DataFrame(out)


def _display(vals: np.ndarray, kind: str) -> list[str]:
    """:func:`format_value` of a float column, vectorised for the numeric kinds (the
    8,256 pairs of a TREC-8 study); missing values as empty strings."""
    if kind not in ("float", "pct", "signed_pct", "share", "p"):
        return [("" if v != v else format_value(v, kind)) for v in vals.tolist()]
    x = vals * 100 if kind == "share" else vals
    fmt = {"float": "%.4f", "p": "%.4f", "pct": "%.2f%%", "share": "%.2f%%", "signed_pct": "%+.2f%%"}[kind]
    finite = np.isfinite(x)
    text = np.char.mod(fmt, np.where(finite, x, 0.0)).astype(object)
    neg0 = np.char.startswith(text.astype(str), "-0.") & finite  # -0.0000 reads as 0.0000
    if neg0.any():
        text[neg0] = [t[1:] if _negzero(t) else t for t in text[neg0]]
    if kind == "p":
        text[finite & (x >= 0) & (x < 0.00005)] = "<0.0001"
    if kind == "float":  # tiny nonzero values: float_text's significant digits
        tiny = np.flatnonzero(finite & (x != 0) & (np.abs(np.where(finite, x, 0.0)) < 5e-5))
        text[tiny] = [float_text(v) for v in x[tiny].tolist()]
    text[np.isposinf(x)] = "∞"
    text[np.isneginf(x)] = "−∞"
    text[np.isnan(x)] = ""
    return text.tolist()


def _plain(v):
    """A JSON-ready value: numpy scalars as Python ones, NaN and infinities as None."""
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, np.ndarray)):
        return [_plain(x) for x in v]
    if isinstance(v, (str, int, type(None))):
        return v
    return str(v)


def table_json(table: ReportTable, provenance: dict, frame: pd.DataFrame | None = None) -> str:
    """The table as JSON: title, caption, LaTeX label, ``columns`` (each column's
    explanation), ``provenance`` and ``rows`` (exact values and ``*_display`` texts; NaN as
    null). ``frame``: :func:`data_frame` of the table, if already made."""
    frame = data_frame(table) if frame is None else frame
    cols = dict(table.data_explanations)
    cols.update(
        {
            f"{k}_display": f"{k} as the tables show it."
            for k in frame.columns
            if not k.endswith("_display") and f"{k}_display" in frame.columns
        }
    )
    head = json.dumps(
        {
            "table": table.key,
            "title": table.heading,
            "caption": table.caption,
            "label": table.label,
            "columns": cols,
            "provenance": _plain(provenance),
            "rows": [],
        },
        indent=1,
        ensure_ascii=False,
        allow_nan=False,
    )
    # the rows one per line, each by json's C encoder (indent would take the slow Python
    # one: seconds for the 8,256 pairs of a TREC-8 study); values made JSON-ready column by
    # column: numpy scalars as Python ones, NaN and infinities as null
    plain = {}
    for k in frame.columns:
        col = frame[k]
        if col.dtype.kind == "f":
            vals = col.to_numpy(dtype=np.float64)
            plain[k] = [float(v) if f else None for v, f in zip(vals.tolist(), np.isfinite(vals).tolist())]
        elif col.dtype.kind in "biu":
            plain[k] = col.to_numpy().tolist()
        else:
            vals = col.tolist()
            plain[k] = vals if all(type(v) is str for v in vals) else [_plain(v) for v in vals]
    keys = list(plain)
    rows = ",\n  ".join(
        json.dumps(dict(zip(keys, r)), ensure_ascii=False, allow_nan=False) for r in zip(*plain.values())
    )
    assert head.endswith('"rows": []\n}')
    return head[: -len("[]\n}")] + ("[\n  " + rows + "\n ]\n}" if rows else "[]\n}")


# -- YAML ------------------------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_.()/@+=-]*( [A-Za-z0-9_.()/@+=-]+)*")
# characters a YAML double-quoted scalar must escape beyond JSON's: C1 controls and DEL, the
# line breaks NEL, LS and PS (YAML would fold them), the BOM, non-characters and lone surrogates
_YAML_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_RESERVED = {"y", "n", "yes", "no", "true", "false", "on", "off", "null", "none", "nan", "inf"}


def _yaml_str(s: str) -> str:
    if _PLAIN.fullmatch(s) and s.lower() not in _RESERVED and not s.startswith("-"):
        return s
    quoted = json.dumps(s, ensure_ascii=False)  # a YAML double-quoted scalar, readable non-ASCII
    return _YAML_ESCAPE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", quoted)


def _yaml_scalar(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return ".nan"
        if math.isinf(x):
            return ".inf" if x > 0 else "-.inf"
        text = repr(x)
        if "e" in text and "." not in text.split("e")[0]:  # YAML 1.1 reads 1e-05 as a string
            text = text.replace("e", ".0e", 1)
        return text
    return _yaml_str(str(v))


def _scalar_like(v) -> bool:
    return not isinstance(v, (dict, list, tuple, set, np.ndarray))


def to_yaml(obj, indent: int = 0) -> str:
    """``obj`` (dicts, lists, strings, numbers, booleans, None; anything else as its
    ``str``) as block-style YAML that PyYAML's ``safe_load`` reads back to the same values
    (tuples as lists, NaN as .nan). Short lists of scalars are written inline."""
    return "\n".join(_yaml_lines(obj, indent)) + "\n"


def _yaml_lines(obj, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return [pad + "{}"]
        lines = []
        for k, v in obj.items():
            key = _yaml_str(str(k))
            if _scalar_like(v):
                lines.append(f"{pad}{key}: {_yaml_scalar(v)}")
            elif (isinstance(v, dict) and not v) or (not isinstance(v, dict) and len(v) == 0):
                lines.append(f"{pad}{key}: {'{}' if isinstance(v, dict) else '[]'}")
            elif (
                not isinstance(v, dict)
                and all(_scalar_like(x) for x in v)
                and len(flow := "[" + ", ".join(_yaml_scalar(x) for x in v) + "]") <= 100 - indent - len(key)
            ):
                lines.append(f"{pad}{key}: {flow}")
            else:
                lines.append(f"{pad}{key}:")
                lines += _yaml_lines(v, indent + 2)
        return lines
    if isinstance(obj, (list, tuple, set, np.ndarray)):
        if len(obj) == 0:
            return [pad + "[]"]
        lines = []
        for v in obj:
            if _scalar_like(v):
                lines.append(f"{pad}- {_yaml_scalar(v)}")
            else:
                sub = _yaml_lines(v, indent + 2)
                lines.append(f"{pad}- {sub[0].lstrip()}")
                lines += sub[1:]
        return lines
    return [pad + _yaml_scalar(obj)]


def provenance_yaml(study: Study, command: str | None = None) -> str:
    """The study's provenance as YAML in the style of ir_metadata (Breuer et al., SIGIR 2022):
    whatever the provenance holds, with ``command`` first when given and not recorded."""
    prov = dict(study.provenance) if isinstance(study.provenance, dict) else {"provenance": study.provenance}
    if command and "command" not in prov:
        prov = {"command": command, **prov}
    head = f"# provenance of an irscale study (ir_metadata style), N = {study.N}, rendered by irscale {__version__}\n"
    return head + to_yaml(prov)


# -- Markdown --------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("|", r"\|").replace("\n", " ")


def markdown_table(table: ReportTable | pd.DataFrame) -> str:
    """A Markdown (pipe) table: the table's columns in words (group columns included),
    numbers right-aligned, best values bold, significance marks as superscript symbols.
    A plain data frame is shown as it is, floats with 4 decimals."""
    if isinstance(table, pd.DataFrame):
        table = _frame_table(table, "")
    cols = table.shown
    best = best_cells(table)
    head = "| " + " | ".join(_md_cell(c.head) for c in cols) + " |"
    sep = (
        "|"
        + "|".join("---:" if c.numeric else ":---:" if c.kind in ("bool", "assumes") else ":---" for c in cols)
        + "|"
    )
    body = []
    for i, r in enumerate(row_dicts(table)):
        cells = []
        for c in cols:
            value, rest = cell_parts(table, c, r)
            value = f"**{_md_cell(value)}**" if (i, c.key) in best else _md_cell(value)
            cells.append(value + table.marks.get((i, c.key), "") + _md_cell(rest))
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, sep] + body)


def _frame_table(df: pd.DataFrame, caption: str) -> ReportTable:
    cols = tuple(_generic(str(k), df[k]) for k in df.columns)
    return ReportTable("frame", "frame", caption, caption, df, cols, "tab:irscale-frame")


def markdown_section(table: ReportTable, stem: str | None = None, level: int = 2) -> str:
    """A table's section of the Markdown report: heading, caption, links to its files
    (``stem``: their stem), the table, its column explanations, legend and notes."""
    lines = [f"{'#' * level} {table.heading}", "", table.caption, ""]
    if stem:
        lines += ["Files: " + ", ".join(f"[{stem}.{e}]({stem}.{e})" for e in table.exts), ""]
    lines += [markdown_table(table), ""]
    lines += ["Columns:", ""] + [f"- **{_md_cell(h)}**: {e}" for h, e in table.explanations.items()] + [""]
    extra = [f"{s} {t}" for s, t in table.legend] + list(table.notes)
    if table.truncated:
        extra.append(table.truncated)
    if extra:
        lines += [f"{x}  " for x in extra] + [""]
    return "\n".join(lines)


def summary_line(study: Study) -> str:
    """One sentence on what the study covers."""
    p = study.provenance if isinstance(study.provenance, dict) else {}
    name = canonical_names(study)
    return (
        f"{len(study.systems)} systems × {len(study.topics)} topics at run length N = {study.N}; measures "
        f"{', '.join(name(m) for m in study.measures)}; relevance {p.get('relevance') or 'graded'}; "
        f"{PROTOCOL[bool(p.get('judged_only'))]}; α = {_alpha(study):g}; "
        f"irscale {p.get('irscale_version', __version__)}."
    )


def theory_lines(study: Study) -> list[str]:
    """What the theory says about each original measure (from the provenance)."""
    prov = study.provenance if isinstance(study.provenance, dict) else {}
    said = prov.get("theory", {})
    out = [said[m]["text"] for m in study.measures if isinstance(said.get(m), dict) and "text" in said[m]]
    if out and prov.get("judged_only"):
        from irscale.report.tables import CONDENSED_SCALE

        out.append(CONDENSED_SCALE)
    return out


def study_markdown(
    study: Study,
    links: dict | None = None,
    figures: Sequence | None = None,
    command: str | None = None,
    tables: list | None = None,
) -> str:
    """The study as a Markdown report: what it covers, what “meaningful” means, every table
    with its column explanations, the theory's statements, the figures' titles and the
    provenance as YAML. ``links`` maps a table's key (:attr:`ReportTable.key`) to the stem
    of its files, to link them."""
    lines = [f"# irscale study: original vs interval-scaled measures, N = {study.N}", "", summary_line(study), ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += ["## What “meaningful” means", "", MEANINGFUL, ""]
    for t in report_tables(study) if tables is None else tables:  # tables: report_tables(study), if made
        lines += [markdown_section(t, (links or {}).get(t.key)), ""]
    said = theory_lines(study)
    if said:
        lines += [
            "## What the theory says about each original measure",
            "",
            "The order under which each original measure is an interval or ordinal scale (or none): the "
            "2019 and 2021 papers' statement where they make one (`irscale inspect MEASURE --theory` checks it "
            "over every run), else irscale's exhaustive check of the measure's own values.",
            "",
        ]
        lines += [f"* {s}" for s in said] + [""]
    if figures:
        files = (links or {}).get("figures") or [[] for _ in figures]
        lines += [
            "## Figures",
            "",
            "The figures are embedded in the HTML report"
            + (" and written beside it (SVG and PDF):" if any(files) else "."),
            "",
        ]
        lines += [
            f"* **{title}**: {caption}"
            + ("" if not names else " Files: " + ", ".join(f"[{n}]({n})" for n in names) + ".")
            for (title, _svg, caption), names in zip(figures, files)
        ] + [""]
    lines += ["## Provenance", ""]
    if links and "provenance" in links:
        lines += [f"File: [{links['provenance']}.yaml]({links['provenance']}.yaml)", ""]
    lines += ["```yaml", provenance_yaml(study, command).rstrip(), "```", ""]
    return "\n".join(lines)


# -- Tables 2 and 3 over several run lengths --------------------------------------------------------

# the column order of the paper's Tables 2 and 3 (one row per run length N)
TAU_ORDER = (
    "P",
    "RBP(p=0.5)",
    "RR",
    "RBP(p=0.3)",
    "RBP(p=0.8)",
    "DCG(base=2)",
    "DCG(base=10)",
    "R",
    "AP",
    "nDCG(base=2)",
    "nDCG(base=10)",
)
TAU_TABLES = (("tau_unq", "Table 2 (unq)"), ("tau_mid", "Table 3 (mid)"))


def tau_tables(studies: Sequence[Study]) -> list[tuple[str, str, pd.DataFrame]]:
    """The paper's Tables 2 (``tau_unq``) and 3 (``tau_mid``) over several run lengths:
    ``(title, column, frame)`` with one row per study (column ``N``, the run length) and one
    column per measure by its canonical name, the paper's measures first in the paper's
    order (:data:`TAU_ORDER`), then any others."""
    tables = []
    for col, title in TAU_TABLES:
        rows, names = [], []
        for st in studies:
            name = canonical_names(st)
            # one column per measure across run lengths: its name without the cutoff N of the row
            tau = (
                {_without_cutoff(name(m), st.N): v for m, v in zip(st.table2["measure"], st.table2[col])}
                if col in st.table2
                else {}
            )
            names += list(tau)
            rows.append({"N": st.N, **tau})
        order = _order(names, TAU_ORDER)
        tables.append((title, col, pd.DataFrame(rows, columns=["N"] + order)))
    return tables


def _without_cutoff(name: str, N: int) -> str:
    """``RBP(p=0.8)@30`` at N = 30 -> ``RBP(p=0.8)`` (a study's measures are named at N)."""
    return name[: -len(f"@{N}")] if name.endswith(f"@{N}") else name


def tau_report_tables(studies: Sequence[Study]) -> list[ReportTable]:
    """:func:`tau_tables` as :class:`ReportTable` (title, caption, explained columns)."""
    out = []
    for title, col, df in tau_tables(studies):
        ties = "unq" if col == "tau_unq" else "mid-rank"
        cols = [Column("N", "N", "the run length N: runs are cut at their first N documents.", "int")]
        cols += [
            Column(m, m, f"Kendall's τ between the systems' rankings by {m} and by its ranked version ({ties} ties).")
            for m in df.columns
            if m != "N"
        ]
        num = title.split()[1]
        out.append(
            ReportTable(
                f"table{num}",
                f"table{num}_{col}",
                "Kendall's τ between each measure and its ranked version, by run length",
                f"Overall Kendall's τ between each measure and its ranked version, φ from the {ties} tie strategy, one "
                f"row per run length N (the paper's Table {num}).",
                df,
                tuple(cols),
                f"tab:irscale-table{num}-{col}",
                paper=f"Table {num}",
                exts=("csv", "tex"),
            )
        )
    return out
