"""Render a :class:`~irscale.study.Study` as files: CSV, JSON, LaTeX and a Markdown report.

Pure renderers: functions from a study (or a data frame) to text; :func:`write_study` and
:func:`write_tau_tables` also write that text to files. Nothing here prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from irscale._version import __version__

if TYPE_CHECKING:
    from irscale.study import Study

# file stem of each of a study's tables, and the heading it has in the Markdown report
TABLES = {
    "table2_tau_measure_vs_ranked": ("table2", "Table 2/3: Kendall's tau between each measure and its ranked version"),
    "table4_tau_between_measures": ("table4", "Table 4: tau between measures and between their ranked versions"),
    "tables5_6_significance_changes": ("changes", "Tables 5/6: significance changes (original -> ranked)"),
}

# the column order of the paper's Tables 2 and 3 (one row per run length N)
TAU_ORDER = ("P", "RBP(p=0.5)", "RR", "RBP(p=0.3)", "RBP(p=0.8)", "DCG(base=2)", "DCG(base=10)", "R", "AP",
             "nDCG(base=2)", "nDCG(base=10)")
TAU_TABLES = (("tau_unq", "Table 2 (unq)"), ("tau_mid", "Table 3 (mid)"))


def write_study(study: Study, out: str | Path) -> list[Path]:
    """CSV, JSON and LaTeX files of every table of ``study``, and ``report_N<N>.md``
    linking them, in directory ``out`` (created if missing). Returns the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tag = f"N{study.N}"
    written = []
    for name, (attr, _) in TABLES.items():
        df = getattr(study, attr)
        base = out / f"{name}_{tag}"
        df.to_csv(base.with_suffix(".csv"), index=False)
        base.with_suffix(".json").write_text(json.dumps(
            {"provenance": study.provenance, "rows": df.to_dict(orient="records")}, indent=1, default=_jsonable))
        base.with_suffix(".tex").write_text(latex_table(df, name.replace("_", " ")))
        written += [base.with_suffix(s) for s in (".csv", ".json", ".tex")]
    report = out / f"report_{tag}.md"
    report.write_text(study_markdown(study, links={n: f"{n}_{tag}" for n in TABLES}))
    written.append(report)
    return written


def study_markdown(study: Study, links: dict | None = None) -> str:
    """The study as a Markdown report; ``links`` maps each table's name (a key of
    :data:`TABLES`) to the stem of its files, to link the CSV, JSON and LaTeX versions."""
    p = study.provenance
    lines = [f"# irscale study: original vs interval-scaled measures, N = {study.N}", "",
             f"{len(study.systems)} systems x {len(study.topics)} topics; measures {', '.join(study.measures)}; "
             f"relevance {p.get('relevance', 'graded')}; alpha = {p.get('alpha')}; irscale {__version__}.", ""]
    for key, (attr, title) in TABLES.items():
        lines += [f"## {title}", ""]
        if links:
            stem = links[key]
            lines += [f"Files: [{stem}.csv]({stem}.csv), [{stem}.json]({stem}.json), [{stem}.tex]({stem}.tex)", ""]
        lines += [markdown_table(getattr(study, attr)), ""]
    said = p.get("theory", {})
    if said:
        lines += ["## What the theory says about each original measure", "",
                  "The order under which each original measure is an interval or ordinal scale (or none), from "
                  "the 2019 and 2021 papers; `irscale inspect MEASURE --theory` checks it over every run.", ""]
        lines += [f"* {said[m]['text']}" for m in study.measures if m in said] + [""]
    return "\n".join(lines)


def tau_tables(studies: Sequence[Study]) -> list[tuple[str, str, pd.DataFrame]]:
    """The paper's Tables 2 (``tau_unq``) and 3 (``tau_mid``) over several run lengths:
    ``(title, column, frame)`` with one row per study (``track`` = ``N=<N>``) and one
    column per measure of :data:`TAU_ORDER`, by its label."""
    from irscale.study import label

    tables = []
    for col, title in TAU_TABLES:
        rows = []
        for st in studies:
            tau = dict(zip(st.table2["measure"], st.table2[col]))
            rows.append({"track": f"N={st.N}", **{label(m): tau[label(m)] for m in TAU_ORDER}})
        tables.append((title, col, pd.DataFrame(rows)))
    return tables


def write_tau_tables(studies: Sequence[Study], out: str | Path) -> list[Path]:
    """:func:`tau_tables` as ``table2_tau_unq.csv`` and ``table3_tau_mid.csv`` in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for title, col, df in tau_tables(studies):
        path = out / f"{title.split()[0].lower()}{title.split()[1]}_{col}.csv"
        df.to_csv(path, index=False)
        written.append(path)
    return written


def markdown_table(df: pd.DataFrame) -> str:
    """A Markdown (pipe) table of ``df``'s columns and rows; floats with 4 decimals."""
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep] + rows)


def latex_table(df: pd.DataFrame, caption: str) -> str:
    """A LaTeX ``table`` environment (one ``l`` column per column of ``df``, floats with
    4 decimals, ``_ % &`` escaped) with ``caption``."""
    esc = lambda s: str(s).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")  # noqa: E731
    cols = "l" * len(df.columns)
    body = [" & ".join(esc(_fmt(v)) for v in row) + r" \\" for row in df.itertuples(index=False)]
    return "\n".join([r"\begin{table}", r"\centering", rf"\caption{{{esc(caption)}}}",
                      rf"\begin{{tabular}}{{{cols}}}", r"\hline", " & ".join(esc(c) for c in df.columns) + r" \\",
                      r"\hline", *body, r"\hline", r"\end{tabular}", r"\end{table}", ""])


def _jsonable(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    return str(o)


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{v:.4f}"
    return str(v)
