r"""The report's LaTeX fits the page (issue 24, item 2): every table of real studies, and of
fabricated ones at their extremes, compiled with pdflatex on the page it was fitted to, the
text of the standard ``article`` class (345pt) and a column of ``article``'s two-column
layout (229.5pt). The log has no Overfull \hbox over 1pt, no "Float too large" and no
"Missing character", and each compile prints the width it was set on, so the narrow width
is the one checked. What goes in together varies: measures with long names (nDCG(base=10),
RBP(p=0.8)), one or two baselines, a correction (with Tables 5/6's correction and
measure-free columns) or none, N = 10 and 20, a means table of 220 rows, long system names.
Skipped, with the reason, where pdflatex is not installed."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import TREC8, need
from test_report import fake_study

import irscale
from irscale.report import files as rf
from irscale.report import study as rs
from irscale.report.latex import WIDTHS, latex_escape, latex_report, latex_table, tex_width
from irscale.study import compare

PDFLATEX = shutil.which("pdflatex")
needs_tex = pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex is not installed (texlive-latex-base and "
    "texlive-latex-recommended give it, booktabs and graphicx)",
)
OVERFULL = re.compile(r"Overfull \\hbox \(([\d.]+)pt too wide\)")


def compile_tex(path: Path) -> str:
    """Compile ``path`` (a whole document) with pdflatex, having it print the width its
    tables are set in; the log, after checking what every compile must satisfy."""
    text = path.read_text(encoding="utf-8")
    assert text.count(r"\begin{document}") == 1
    path.write_text(
        text.replace(r"\begin{document}", r"\begin{document}\typeout{IRSCALE-WIDTH=\the\linewidth}"), encoding="utf-8"
    )
    res = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = path.with_suffix(".log").read_text(errors="replace")
    assert res.returncode == 0, log[-3000:]
    over = [float(x) for x in OVERFULL.findall(log)]
    assert max(over, default=0.0) <= 1.0, (path.name, over)
    assert "Float too large" not in log and "Missing character" not in log, path.name
    assert "Too many unprocessed floats" not in log
    return log


def set_width(log: str) -> float:
    return float(re.search(r"IRSCALE-WIDTH=([\d.]+)pt", log).group(1))


def headers_shown(table, tex: str) -> None:
    """Every column the table shows has its header in the LaTeX (on one line or several)."""
    flat = re.sub(r"\\begin\{tabular\}\[[tb]\]\{@\{\}[lrc]@\{\}\}|\\end\{tabular\}", "", tex).replace(r"\\{}", " ")
    for c in table.shown:
        if c.key in table.group:
            continue
        head = c.latex if c.latex else latex_escape(c.head)
        assert head in flat, (table.key, head)


# -- real studies: TREC-8 -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def studies():
    """Two studies of the first six TREC-8 runs: (a) N = 10, five measures with long names, all
    eight tests, two baselines, Holm, measure-free on (Tables 5/6 with the correction and flag
    columns, 16 significance marks); (b) N = 20, four other measures, two tests, one baseline,
    no correction, measure-free off."""
    runs = sorted((need(TREC8) / "runs").glob("*.gz"))[:6]
    tags = [r.name[len("input.") : -len(".gz")] for r in runs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TREC8 / "qrels.trec8.txt", runs, ["P"], depth=30)
        a = compare(
            table,
            ["P", "AP", "RBP(p=0.8)", "nDCG(base=10)", "DCG(base=2)"],
            depth=10,
            correction="holm",
            baselines=tags[:2],
            n_resamples=200,
        )
        b = compare(
            table,
            ["RR", "RBP(p=0.5)", "nDCG(base=2)", "R"],
            depth=20,
            tests=["sign", "ttest"],
            baselines=tags[3:4],
            n_resamples=200,
            measure_free=False,
        )
    return {"a": a, "b": b}


@pytest.mark.slow
@needs_tex
@pytest.mark.parametrize("which", ["a", "b"])
def test_real_reports_fit_one_column(tmp_path, studies, which):
    """write_report's report_N<N>.tex (the default width) compiles on article's page, every
    table and its every column in it."""
    st = studies[which]
    rf.write_report(st, tmp_path)
    tex = tmp_path / f"report_N{st.N}.tex"
    body = tex.read_text(encoding="utf-8")
    tables = rs.report_tables(st)
    for t in tables:
        assert rf"\label{{{t.label}}}" in body
        headers_shown(t, body)
    if which == "a":  # Tables 5/6 carry the correction's and the measure-free flags' columns
        assert "Sig$_{R,adj}$" in body and "Flagged$_R$" in body
    log = compile_tex(tex)
    assert set_width(log) == WIDTHS["onecolumn"] == 345.0


@pytest.mark.slow
@needs_tex
@pytest.mark.parametrize("which", ["a", "b"])
def test_real_reports_fit_two_columns(tmp_path, studies, which):
    """The same tables fitted to a column of article's two-column layout, compiled there; the
    widest (Tables 5/6, the comparisons) are set in column parts that repeat the key column."""
    st = studies[which]
    tables = rs.report_tables(st)
    tex = tmp_path / "report_two.tex"
    tex.write_text(latex_report(tables, width="twocolumn"), encoding="utf-8")
    body = tex.read_text(encoding="utf-8")
    assert body.startswith(r"\documentclass[twocolumn]{article}")
    for t in tables:
        headers_shown(t, latex_table(t, width="twocolumn"))
    log = compile_tex(tex)
    assert set_width(log) == WIDTHS["twocolumn"] == 229.5
    if which == "a":
        t5 = latex_table([t for t in tables if t.key == "table5"][0], width="twocolumn")
        assert "% irscale column part 2 of" in t5 and t5.count(r"\label{") == 1


# -- fabricated studies at the extremes -----------------------------------------------------------------


def big_means(rows: int = 220) -> rs.ReportTable:
    """The fake study's means table grown to ``rows`` rows: 4 measures x 55 systems with long
    names, every system marked against the baseline."""
    st = fake_study(changes_extra=True)
    means = [t for t in rs.report_tables(st) if t.key == "means"][0]
    per = rows // 4
    frame = pd.concat(
        [means.frame[means.frame.measure == m].iloc[[i % 4 for i in range(per)]] for m in means.frame.measure.unique()],
        ignore_index=True,
    )
    frame["system"] = [f"a_rather_long_run_name_{i % per:03d}" for i in range(len(frame))]
    marks = {(i, "mean_original"): "†‡" for i in range(0, len(frame), 3)}
    return dataclasses.replace(means, frame=frame, marks=marks, max_rows=None)


@needs_tex
@pytest.mark.parametrize("width", ["onecolumn", "twocolumn", 300.0])
def test_fabricated_extremes_fit(tmp_path, width):
    """A means table of 220 rows (all shown, and as the report shows it), many comparisons with
    the baseline, 28 systems' measure-free pairs, two corrections (a Correction column), LaTeX's
    special characters in names; one column of ``width`` pt too."""
    st = fake_study(changes_extra=True, n_free=28)
    st.changes.loc[st.changes.test == "Sign Test", "correction"] = "bonferroni"
    st.pairs = pd.concat([st.pairs] * 5, ignore_index=True)
    tables = rs.report_tables(st) + rs.tau_report_tables([st])
    big = big_means()
    tex = latex_report([big] + tables, title="Fabricated: 100% of the _edge_ cases", width=width)
    every = latex_table(big, max_rows=300, width=width)  # all 220 rows, in floats that fit a page
    assert every.count(r"\begin{table}") > 3 and every.count(r"\label{") == 1
    assert "a\\_rather\\_long\\_run\\_name\\_054" in every
    tex = tex.replace(r"\end{document}", every + r"\end{document}")
    path = tmp_path / "doc.tex"
    path.write_text(tex, encoding="utf-8")
    log = compile_tex(path)
    assert set_width(log) == pytest.approx(WIDTHS.get(width, width), abs=0.01)


@needs_tex
def test_report_with_figures(tmp_path):
    """latex_report includes each figure's PDF beside the .tex (graphicx), its caption escaped."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [0, 1])
    fig.savefig(tmp_path / "figure1_means_N10.pdf")
    plt.close(fig)
    tables = rs.report_tables(fake_study())
    for width in ("onecolumn", "twocolumn"):
        tex = latex_report(
            tables,
            [("figure1_means_N10.pdf", "Means & 95% intervals, τ_ap of run_1")],
            title="Report & N = 10",
            width=width,
        )
        assert r"\usepackage{graphicx}" in tex and r"\includegraphics" in tex and r"95\% intervals" in tex
        path = tmp_path / f"doc_{width}.tex"
        path.write_text(tex, encoding="utf-8")
        compile_tex(path)
    assert r"\usepackage{graphicx}" not in latex_report(tables)
    with pytest.raises(ValueError, match="file name"):
        latex_report(tables, [("a figure.pdf", "x")])
    with pytest.raises(ValueError, match="width"):
        latex_report(tables, width="threecolumn")


def test_width_estimates_follow_the_font_metrics():
    """tex_width against widths pdfTeX measured (T1 Computer Modern, 10pt): never 1% under,
    at most 3% over (a subscript takes away a letter's italic correction, not counted)."""
    measured = {
        "DCG(base=2)@10": 79.96658,
        "nDCG(base=10)@10": 90.51956,
        "0.6183": 27.771,
        r"$\tau_{ap}$ (unq)": 40.82481,
        r"$-$0.5540 [$-$0.6307, $-$0.4753]": 121.64273,
        "Measure": 36.46332,
        "RB-dep.": 36.1023,
    }
    for src, pt in measured.items():
        assert 0.99 * pt <= tex_width(src) <= 1.03 * pt, src
    assert tex_width(r"\textbf{0.6183}") > tex_width("0.6183")
    assert tex_width("0.6183", 8) < tex_width("0.6183", 9) < tex_width("0.6183")
