r"""The table that goes into the paper: :func:`paper_table` chooses it from a written study
(measures, systems, scale, one test and correction, a baseline or none) and
:class:`PaperTable` renders it as LaTeX (booktabs only, fitted to ``\columnwidth`` or
``\textwidth``), Markdown, HTML (and itself in a notebook) or CSV.

Nothing is recomputed but the one test the researcher names: the means are the study's
(``means_original_vs_ranked``), and the marks come from that test run again on the study's
own per-topic scores (``scores_N<N>.csv``, the matrices the study tested, in its system and
topic order, with its seed), corrected over the study's family: every system against the
baseline, or every pair of the study's systems, whatever rows the table shows. So a mark
is the study's decision (the comparisons with baselines, Tables 5/6's adjusted counts).
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from irscale._version import __version__
from irscale.errors import ArgumentError, IrscaleError, check_choice
from irscale.validate import integer

if TYPE_CHECKING:
    from irscale.study import Study

__all__ = ["COLUMN_WIDTH", "FORMATS", "paper_table", "PaperTable", "SCALES", "TEXT_WIDTH"]


SCALES = ("original", "ranked")
COLUMN_WIDTH = 229.5  # pt: \columnwidth of a two-column article (ACM's and IEEE's are wider)
TEXT_WIDTH = 469.0  # pt: \textwidth of a two-column article (table*)
_SETTINGS = ((9, "small"), (8, "footnotesize"), (7, "scriptsize"))
_SEPS = (5.0, 4.0, 3.0, 2.0, 1.5)
_SLACK = 0.95  # the width estimates are within a few percent: keep that much room


@dataclass(frozen=True)
class PaperTable:
    """A compact table of means: one row per system, one column per (measure, scale).

    ``frame``: tidy, one row per (system, measure, scale): ``mean`` (exact: the study's
    mean; on the ranked scale divided by the number of the measure's values, ``size``),
    ``shown`` (the text a cell shows), ``best`` (the highest of its column among the
    rows), ``marks`` (letters of the rows it is significantly better than, or ``+``/``-``
    for significantly better/worse than the baseline), ``meaningful`` (whether the test's
    conclusion is meaningful on that scale). ``caption`` says what the table holds."""

    frame: pd.DataFrame
    systems: tuple[str, ...]
    measures: tuple[str, ...]
    scales: tuple[str, ...]
    letters: dict = field(default_factory=dict)  # system -> letter (no baseline)
    baseline: str | None = None
    caption: str = ""
    label: str = "tab:irscale-paper"
    decimals: int = 3

    # -- cells ------------------------------------------------------------------------------------
    def _cells(self) -> dict[tuple[str, str, str], dict]:
        return {(r["system"], r["measure"], r["scale"]): r for r in self.frame.to_dict(orient="records")}

    def _columns(self) -> list[tuple[str, str]]:
        return [(m, sc) for m in self.measures for sc in self.scales]

    def _not_meaningful(self) -> set[tuple[str, str]]:
        f = self.frame
        return {(m, sc) for m, sc, ok in zip(f["measure"], f["scale"], f["meaningful"]) if not ok}

    def _row_name(self, s: str) -> str:
        if self.baseline is not None:
            return f"{s} (baseline)" if s == self.baseline else s
        return f"({self.letters[s]}) {s}" if s in self.letters else s

    # -- renderers --------------------------------------------------------------------------------
    def to_latex(self) -> str:
        r"""A ``table`` float (``table*`` where ``\columnwidth`` is too narrow), booktabs
        only: the first setting that fits of ``\small``, ``\footnotesize``, ``\scriptsize``
        and column separations 5 to 2 pt, at ``\columnwidth`` (229.5 pt, a two-column
        article's) and else at ``\textwidth`` (469 pt); wider still, the measures split into
        several tabulars one under the other."""
        from irscale.report.latex import latex_escape, tex_width

        cells = self._cells()
        cols = self._columns()
        bad = self._not_meaningful()

        def cell(s, m, sc) -> str:
            r = cells[(s, m, sc)]
            text = r["shown"]
            text = rf"\textbf{{{text}}}" if r["best"] else text
            marks = _latex_marks(r["marks"], self.baseline is not None)
            return text + marks

        names = [latex_escape(self._row_name(s)) for s in self.systems]
        body = {c: [cell(s, *c) for s in self.systems] for c in cols}
        # (the width estimate knows no arrows: an x as wide)
        sized = {c: [x.replace(r"\uparrow", "x").replace(r"\downarrow", "x") for x in v] for c, v in body.items()}
        heads = {c: _latex_scale_head(c[1], c in bad) for c in cols}
        mheads = {m: _stacked(latex_escape(_short(m))) for m in self.measures}

        contents: dict[int, tuple[float, dict, dict]] = {}  # size: (names, columns, measure heads), widths once

        def width(group: Sequence[str], size: int, sep: float) -> float:
            if size not in contents:
                contents[size] = (
                    max(tex_width(n, size) for n in names + ["System"]),
                    {c: max(tex_width(x, size) for x in sized[c] + [heads[c]]) for c in cols},
                    {m: _head_width(mheads[m], size) for m in self.measures},
                )
            first, col_w, head_w = contents[size]
            w = first + 2 * sep
            for m in group:
                inner = sum(col_w[c] + 2 * sep for c in cols if c[0] == m)
                w += max(inner, head_w[m] + 2 * sep)
            return w

        choice = None
        narrow = len(self.measures) * len(self.scales) <= 8
        for target, star in ((COLUMN_WIDTH, False), (TEXT_WIDTH, True)) if narrow else ((TEXT_WIDTH, True),):
            for (size, name), sep in ((s, p) for s in _SETTINGS for p in _SEPS):
                if width(self.measures, size, sep) <= _SLACK * target:
                    choice = ([list(self.measures)], size, name, sep, star)
                    break
            if choice:
                break
        if choice is None:  # split the measures into parts that fit \textwidth at \scriptsize, 2 pt
            parts: list[list[str]] = [[]]
            for m in self.measures:
                if parts[-1] and width(parts[-1] + [m], 7, 2.0) > _SLACK * TEXT_WIDTH:
                    parts.append([])
                parts[-1].append(m)
            choice = (parts, 7, "scriptsize", 2.0, True)
        parts, _, size_name, sep, star = choice
        env = "table*" if star else "table"
        out = [
            f"% irscale {__version__}: a paper table (irscale table); needs \\usepackage{{booktabs}} only",
            f"\\begin{{{env}}}[tbp]",
            r"\centering",
            f"\\caption{{{latex_escape(self.caption)}}}",
            f"\\label{{{self.label}}}",
            f"\\{size_name}",
            f"\\setlength{{\\tabcolsep}}{{{sep:g}pt}}",
        ]
        for k, group in enumerate(parts):
            sub = [c for c in cols if c[0] in group]
            if k:
                out.append(r"\par\medskip")
            out.append(r"\begin{tabular}{l" + "r" * len(sub) + "}")
            out.append(r"\toprule")
            if len(self.scales) > 1:
                top, rules, pos = ["System"], [], 2
                for m in group:
                    n = len([c for c in sub if c[0] == m])
                    top.append(f"\\multicolumn{{{n}}}{{c}}{{{mheads[m]}}}")
                    rules.append(f"\\cmidrule(lr){{{pos}-{pos + n - 1}}}")
                    pos += n
                out.append(" & ".join(top) + r" \\")
                out.append(" ".join(rules))
                out.append(" & ".join([""] + [heads[c] for c in sub]) + r" \\")
            else:
                out.append(
                    " & ".join(["System"] + [_latex_single_head(mheads[c[0]], c[1], c in bad) for c in sub]) + r" \\"
                )
            out.append(r"\midrule")
            for i, row_name in enumerate(names):
                out.append(" & ".join([row_name] + [body[c][i] for c in sub]) + r" \\")
            out.append(r"\bottomrule")
            out.append(r"\end{tabular}")
        out.append(f"\\end{{{env}}}")
        return "\n".join(out) + "\n"

    def to_markdown(self) -> str:
        """A Markdown table (``<sup>`` marks) with the caption under it."""
        cells = self._cells()
        cols = self._columns()
        bad = self._not_meaningful()
        head = ["System"] + [_plain_head(c[0], c[1], c in bad, len(self.scales)) for c in cols]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join([":---"] + ["---:"] * len(cols)) + "|"]
        for s in self.systems:
            row = [self._row_name(s).replace("|", "\\|")]
            for c in cols:
                r = cells[(s, *c)]
                text = f"**{r['shown']}**" if r["best"] else r["shown"]
                row.append(
                    text + (f"<sup>{_plain_marks(r['marks'], self.baseline is not None)}</sup>" if r["marks"] else "")
                )
            lines.append("| " + " | ".join(row) + " |")
        return "\n".join(lines) + "\n\n" + self.caption + "\n"

    def to_html(self) -> str:
        """An HTML ``<table>`` with its caption (what a notebook shows)."""
        cells = self._cells()
        cols = self._columns()
        bad = self._not_meaningful()
        e = _html.escape
        out = ['<table class="irscale-paper">', f"<caption>{e(self.caption)}</caption>", "<thead>"]
        if len(self.scales) > 1:
            out.append(
                '<tr><th rowspan="2">System</th>'
                + "".join(f'<th colspan="{len(self.scales)}">{e(m)}</th>' for m in self.measures)
                + "</tr>"
            )
            out.append(
                "<tr>" + "".join(f"<th>{e(_scale_word(c[1]))}{'†' if c in bad else ''}</th>" for c in cols) + "</tr>"
            )
        else:
            out.append(
                "<tr><th>System</th>"
                + "".join(f"<th>{e(_plain_head(c[0], c[1], c in bad, 1))}</th>" for c in cols)
                + "</tr>"
            )
        out.append("</thead><tbody>")
        for s in self.systems:
            tds = [f"<td>{e(self._row_name(s))}</td>"]
            for c in cols:
                r = cells[(s, *c)]
                text = e(r["shown"])
                text = f"<b>{text}</b>" if r["best"] else text
                if r["marks"]:
                    text += f"<sup>{e(_plain_marks(r['marks'], self.baseline is not None))}</sup>"
                tds.append(f'<td style="text-align:right">{text}</td>')
            out.append("<tr>" + "".join(tds) + "</tr>")
        out.append("</tbody></table>")
        return "\n".join(out) + "\n"

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_csv(self) -> str:
        """The tidy frame as CSV: system, measure, scale, mean (exact), shown, best, marks,
        meaningful."""
        return self.frame.to_csv(index=False)

    def render(self, fmt: str) -> str:
        """The table as ``latex``, ``markdown``, ``html`` or ``csv``."""
        fmt = check_choice("format", fmt, FORMATS)
        return {"latex": self.to_latex, "markdown": self.to_markdown, "html": self.to_html, "csv": self.to_csv}[fmt]()


FORMATS = ("latex", "markdown", "html", "csv")


def _scale_word(sc: str) -> str:
    return "raw" if sc == "original" else "φ"


def _stacked(head: str) -> str:
    r"""A measure's LaTeX header, its parameters on a second line where it has some
    (``\shortstack{nDCG\(base=10)}``): a narrower column."""
    k = head.find("(")
    return rf"\shortstack{{{head[:k]}\\{head[k:]}}}" if k > 0 else head


def _head_width(head: str, size: int) -> float:
    from irscale.report.latex import tex_width

    got = re.fullmatch(r"\\shortstack\{(.*)\\\\(.*)\}", head)
    return max(tex_width(x, size) for x in got.groups()) if got else tex_width(head, size)


def _short(m: str) -> str:
    """A measure's header: its name without the cutoff (the caption gives N)."""
    return re.sub(r"@\d+$", "", m)


def _plain_head(m: str, sc: str, bad: bool, n_scales: int) -> str:
    """A column's header in one line: ``AP orig.`` and ``AP φ`` (both scales), ``φ AP``."""
    m = _short(m)
    word = (m if sc == "original" else f"φ {m}") if n_scales == 1 else f"{m} {_scale_word(sc)}"
    return word + ("†" if bad else "")


def _latex_scale_head(sc: str, bad: bool) -> str:
    return ("raw" if sc == "original" else r"$\phi$") + (r"$^\dagger$" if bad else "")


def _latex_single_head(m: str, sc: str, bad: bool) -> str:
    return (m if sc == "original" else rf"$\phi$ {m}") + (r"$^\dagger$" if bad else "")


def _plain_marks(marks: str, baseline: bool) -> str:
    if baseline:
        return {"+": "↑", "-": "↓"}.get(marks, marks)
    return marks


def _latex_marks(marks: str, baseline: bool) -> str:
    if not marks:
        return ""
    if baseline:
        return r"$^{\uparrow}$" if marks == "+" else r"$^{\downarrow}$"
    return f"$^{{\\mathrm{{{marks.replace('–', '{-}')}}}}}$"


def _letter(k: int) -> str:
    """The k-th system's letter: a..z, then A..Z, then aa, ab, ..."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return alphabet[k] if k < len(alphabet) else alphabet[k // len(alphabet) - 1] + alphabet[k % len(alphabet)]


def _letter_runs(positions: list[int]) -> str:
    """The letters of sorted positions, runs of three or more as ranges: ``a–d,f``."""
    out, k = [], 0
    while k < len(positions):
        j = k
        while j + 1 < len(positions) and positions[j + 1] == positions[j] + 1:
            j += 1
        if j - k >= 2:
            out.append(f"{_letter(positions[k])}–{_letter(positions[j])}")
        else:
            out += [_letter(p) for p in positions[k : j + 1]]
        k = j + 1
    return ",".join(out)


# -- choosing the table ---------------------------------------------------------------------------


def paper_table(
    study: Study,
    measures: Sequence[str] | None = None,
    systems: Sequence[str] | None = None,
    top: int | None = None,
    by: str | None = None,
    scale: str = "both",
    test: str | None = None,
    correction: str | None = None,
    baseline: str | None = None,
    decimals: int = 3,
) -> PaperTable:
    """The compact paper table of a study (see the module): ``measures`` as the study names
    them, the cutoff N may be left out (default: all); ``systems`` (default: all, in the
    study's order) or ``top`` K by the mean of ``by`` (default: the first measure) on the
    first scale shown; ``scale`` ``original``, ``ranked`` or ``both``; ``test`` (default:
    the t-test where the study ran it, else its first) and ``correction`` (default: the
    study's; Tukey-type tests take none) decide the marks: against ``baseline`` (``↑``/``↓``,
    significantly better/worse), or without one ranx-style letters naming the rows a
    system is significantly better than. ``decimals``: of the means shown (a leading zero
    is dropped where every mean is below 1)."""
    from irscale.effects import CORRECTIONS
    from irscale.report.study import default_test
    from irscale.stats import ALL_TESTS, FAMILYWISE, test_name

    prov = study.provenance if isinstance(study.provenance, dict) else {}
    scale = check_choice("scale", scale, ("original", "ranked", "both"))
    scales = SCALES if scale == "both" else (scale,)
    chosen = _measures(study, measures)
    rows = _systems(study, systems)
    study_tests = [str(t) for t in prov.get("tests", [])]
    if test is None:
        test = default_test(study_tests)
    test = check_choice("test", test, ALL_TESTS)
    corr = check_choice(
        "correction", correction if correction is not None else prov.get("correction", "none"), CORRECTIONS
    )
    if test in FAMILYWISE:
        corr = "none"  # adjusted over all pairs already
    decimals = integer("decimals", decimals, minimum=0)
    if baseline is not None and str(baseline) not in study.systems:
        raise ArgumentError(f"unknown baseline {baseline!r}: the study's systems are {_listing(study.systems)}")
    alpha = float(prov.get("alpha", 0.05))
    seed = int(prov.get("seed", (prov.get("bootstrap") or {}).get("seed", 0)))  # the study's (its draws')
    means = _means(study, chosen)
    if top is not None:
        top = integer("top", top, minimum=1)
        key = _measures(study, [by])[0] if by is not None else chosen[0]
        order = means[(key, scales[0])].loc[list(rows)].sort_values(ascending=False, kind="stable")
        rows = tuple(order.index[:top])
    elif by is not None:
        raise ArgumentError("--by names the measure --top ranks by: give --top K too")
    names = list(study.systems)
    recs = []
    theory = prov.get("theory") or {}
    rb = _recall_base(study)
    from irscale.scales.permissible import meaningful_test

    decided = {}
    for m in chosen:
        for sc in scales:
            decided[m, sc] = _decisions(study, m, sc, test, corr, alpha, seed, names, baseline)
    letters = {} if baseline is not None else {s: _letter(k) for k, s in enumerate(rows)}
    all_means = pd.concat([means[c] for c in means]) if means else pd.Series(dtype=float)
    lead = bool(len(all_means)) and bool((all_means.abs() < 1).all())
    for m in chosen:
        for sc in scales:
            col = means[(m, sc)]
            shown_vals = col.loc[list(rows)]
            best = shown_vals.max()
            interval = True if sc == "ranked" else str((theory.get(m) or {}).get("original_scale")) == "interval"
            ok = meaningful_test(test, interval, rb.get(m, False))
            sig, better = decided[m, sc]
            for s in rows:
                i = names.index(s)
                if baseline is not None:
                    marks = "" if s == baseline or not sig[i] else ("+" if better[i] else "-")
                else:
                    pos = sorted(
                        rows.index(o) for o in rows if o != s and sig[i, names.index(o)] and better[i, names.index(o)]
                    )
                    marks = _letter_runs(pos)
                v = float(col.loc[s])
                recs.append(
                    {
                        "system": s,
                        "measure": m,
                        "scale": sc,
                        "mean": v,
                        "shown": _fmt(v, decimals, lead),
                        "best": bool(v == best),
                        "marks": marks,
                        "meaningful": ok,
                    }
                )
    frame = pd.DataFrame(recs, columns=["system", "measure", "scale", "mean", "shown", "best", "marks", "meaningful"])
    caption = _caption(study, chosen, scales, rows, test_name(test), corr, alpha, baseline, frame, decimals)
    return PaperTable(
        frame, tuple(rows), tuple(chosen), scales, letters, baseline, caption, f"tab:irscale-paper-N{study.N}", decimals
    )


def _fmt(v: float, decimals: int, drop_zero: bool) -> str:
    if v != v:
        return "–"
    text = f"{v:.{decimals}f}"
    if drop_zero and text.startswith(("0.", "-0.")):
        text = text.replace("0.", ".", 1)
    return text


def _listing(names) -> str:
    names = list(names)
    return ", ".join(names[:20]) + (f", ... ({len(names)} in all)" if len(names) > 20 else "")


def _measures(study: Study, wanted) -> list[str]:
    """The study's names of ``wanted`` (as the study names them, the cutoff N optional)."""
    from irscale.measures import parse_measure

    if not wanted:
        return list(study.measures)
    out = []
    for w in wanted:
        w = str(w)
        hit = [m for m in study.measures if m in (w, f"{w}@{study.N}")]
        if not hit:
            try:
                parsed = parse_measure(w)
                hit = [m for m in study.measures if m in (str(parsed), f"{parsed}@{study.N}")]
            except (IrscaleError, ValueError, TypeError):
                hit = []
        if not hit:  # a family name alone (nDCG): the study's one measure of that family
            family = [m for m in study.measures if re.split(r"[(@]", m)[0] == w]
            if len(family) > 1:
                raise ArgumentError(
                    f"the study has several {w}: {', '.join(family)}; say which with -m, e.g. -m {family[0]!r}"
                )
            hit = family
        if not hit:
            import difflib

            close = difflib.get_close_matches(w, list(study.measures), n=1, cutoff=0.5)
            raise ArgumentError(
                f"the study has no measure {w!r}"
                + (f" (did you mean {close[0]!r}?)" if close else "")
                + f": it has {', '.join(study.measures)}; -m takes these names, the cutoff @{study.N} may be left out"
            )
        if hit[0] not in out:
            out.append(hit[0])
    return out


def _systems(study: Study, wanted) -> tuple[str, ...]:

    if wanted is None:
        return tuple(study.systems)
    out = []
    for s in wanted:
        s = str(s).strip()
        if s not in study.systems:
            import difflib

            close = difflib.get_close_matches(s, list(study.systems), n=1, cutoff=0.5)
            raise ArgumentError(
                f"the study has no system {s!r}"
                + (f" (did you mean {close[0]!r}?)" if close else "")
                + f": its systems are {_listing(study.systems)}"
            )
        if s not in out:
            out.append(s)
    if not out:
        raise ArgumentError("--systems names no system: give a comma-separated list, e.g. --systems a,b,c")
    return tuple(out)


def _recall_base(study: Study) -> dict[str, bool]:
    t2 = study.table2
    if isinstance(t2, pd.DataFrame) and "rb_dependent" in t2:
        return {str(m): bool(v) for m, v in zip(t2["measure"], t2["rb_dependent"])}
    from irscale.measures import parse_measure

    return {m: parse_measure(m).needs_recall_base for m in study.measures}


def _sizes(study: Study) -> dict[str, float]:
    """The number of values of each measure's rank map (the ranked scale's divisor), where
    the ranked scores are phi itself (not under approx, where they are normalised already)."""
    prov = study.provenance if isinstance(study.provenance, dict) else {}
    if prov.get("approx") is not None:
        return {}
    maps = prov.get("rank_maps") or {}
    return {m: float(v["size"]) for m, v in maps.items() if isinstance(v, dict) and "size" in v}


def _means(study: Study, chosen: list[str]) -> dict[tuple[str, str], pd.Series]:
    """Each (measure, scale)'s means by system: the study's (``study.means``), else the
    per-topic scores' means; the ranked scale divided by the measure's number of values."""
    sizes = _sizes(study)
    out = {}
    means = study.means if isinstance(study.means, pd.DataFrame) else None
    for m in chosen:
        for sc in SCALES:
            if means is not None:
                part = means[(means["measure"].astype(str) == m) & (means["scale"].astype(str) == sc)]
                col = pd.Series(part["mean"].to_numpy(dtype=float), index=part["system"].astype(str))
            else:
                X = _matrix(study, m, sc, scaled=False)
                col = pd.Series(np.nanmean(X, axis=0), index=list(study.systems))
            if sc == "ranked" and m in sizes:
                col = col / sizes[m]
            out[m, sc] = col
    return out


def _matrix(study: Study, m: str, sc: str, scaled: bool = True) -> np.ndarray:
    """The topics x systems matrix the study tested for (measure, scale), in its system and
    topic order (under approx the ranked column scaled by a power of two, as the study's
    statistics see it)."""
    from irscale.effects import units

    scores = study.scores
    if not isinstance(scores, pd.DataFrame):
        raise ArgumentError("the study has no per-topic scores (scores_N<N>.csv): the marks need them")
    part = scores[scores["measure"].astype(str) == m]
    col = "value" if sc == "original" else "ranked"
    X = (
        part.pivot(index="topic", columns="system", values=col)
        .reindex(index=[str(t) for t in study.topics], columns=[str(s) for s in study.systems])
        .to_numpy(dtype=np.float64)
    )
    prov = study.provenance if isinstance(study.provenance, dict) else {}
    if scaled and sc == "ranked" and prov.get("approx") is not None and X.size:
        X = X / float(units(np.nanmax(X))[0])
    return X


def _decisions(study: Study, m, sc, test, corr, alpha, seed, names, baseline):
    """(significant, better) per system against ``baseline`` (vectors) or per pair of
    systems (matrices), by ``test`` with ``corr`` over the study's family."""
    from irscale import stats as st
    from irscale.effects import correct

    X = _matrix(study, m, sc)
    S = X.shape[1]
    res = st.run_test(test, X, alpha, seed=seed)
    i, j = st.pair_index(S)
    if test in st.FAMILYWISE:
        sig_pairs = np.asarray(res.significant, dtype=bool)
    else:
        p = np.asarray(res.pvalue, dtype=np.float64)
        if baseline is not None:
            b = names.index(baseline)
            fam = (i == b) | (j == b)  # the baseline's comparisons with every other system
            sig_pairs = np.zeros(len(p), dtype=bool)
            sig_pairs[fam] = correct(p[fam], corr, alpha)[1]
        else:
            sig_pairs = correct(p, corr, alpha)[1]
    mean = np.nanmean(X, axis=0)
    if baseline is not None:
        b = names.index(baseline)
        sig = np.zeros(S, dtype=bool)
        for k in np.flatnonzero((i == b) | (j == b)):
            other = j[k] if i[k] == b else i[k]
            sig[other] = sig_pairs[k]
        return sig, mean > mean[b]
    M = np.zeros((S, S), dtype=bool)
    M[i, j] = sig_pairs
    M[j, i] = sig_pairs
    return M, mean[:, None] > mean[None, :]


def _caption(study, chosen, scales, rows, test, corr, alpha, baseline, frame, decimals) -> str:
    prov = study.provenance if isinstance(study.provenance, dict) else {}
    T = len(study.topics)
    what = (
        "on the original scale and on the ranked (interval) scale"
        if len(scales) > 1
        else "on the ranked (interval) scale"
        if scales == ("ranked",)
        else "on the original scale"
    )
    parts = [f"Mean {', '.join(chosen)} of {len(rows)} systems over {T} topics at run length N = {study.N}, {what}."]
    if prov.get("judged_only"):
        parts.append(
            "Condensed runs: each run's unjudged documents were removed before it was cut at N (judged only, "
            "trec_eval -J), and φ is taken on the condensed runs."
        )
    if "ranked" in scales:
        if prov.get("approx") is not None:
            parts.append(
                "raw: the measure's own values; φ: its ranked version, the midpoint of certified bounds on "
                "the position of the run's score among the |V| values the measure takes on runs of length N, "
                "divided by |V|."
            )
        else:
            parts.append(
                "raw: the measure's own values; φ: its ranked version, the position of the run's score among "
                "the |V| values the measure takes on runs of length N, divided by |V| (an interval scale: equal "
                "steps between consecutive values)."
            )
    parts.append("The best of each column in bold.")
    corr_words = "no correction" if corr == "none" else f"{corr} correction"
    if baseline is not None:
        parts.append(
            f"Up (down) arrows: significantly better (worse) than the baseline {baseline} by the {test} "
            f"({corr_words} over the baseline's comparisons with the study's {len(study.systems) - 1} other systems, "
            f"alpha = {alpha:g})."
        )
    else:
        S = len(study.systems)
        parts.append(
            f"Superscript letters name the systems (letters before the names) a row is significantly better than "
            f"by the {test} ({corr_words} over all {S * (S - 1) // 2:,} pairs of the study's {S} systems, "
            f"alpha = {alpha:g}); a-d is a to d."
        )
    bad = [(m, sc) for m in chosen for sc in scales if ((m, sc) in set(zip(frame["measure"], frame["scale"])))]
    bad = [c for c in bad if not frame[(frame["measure"] == c[0]) & (frame["scale"] == c[1])]["meaningful"].all()]
    if bad:
        rb = _recall_base(study)
        scale_bad = [_short(m) for m, sc in bad if sc == "original" and not rb.get(m, False)]
        rb_bad = sorted({_short(m) for m, _ in bad if rb.get(m, False)})
        why = []
        if scale_bad:
            why.append(f"{', '.join(scale_bad)} on the original scale, which is not an interval scale")
        if rb_bad:
            why.append(
                f"{', '.join(rb_bad)}, which depend on each topic's recall base, so that neither scale is one "
                "scale across topics"
            )
        parts.append(
            f"Dagger: the {test}'s conclusions in that column are not meaningful (a permissible change of scale can "
            f"reverse them): the test needs an interval scale across topics, and it gets {'; and '.join(why)}."
        )
    parts.append(f"Means to {decimals} decimals.")
    return " ".join(parts)
