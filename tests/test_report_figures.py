"""The report's figures by default (issue 24, item 1): `compare --out` draws the cheap
figures unless --no-figures, writes each as its own SVG and PDF file beside the report,
lists the files in the HTML and Markdown reports, and draws the two tau heatmaps on one
colour range with a colour bar. Checked on the files a user gets, read back with the
standard library (xml.etree) and pypdf, not with the code that wrote them."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from conftest import TREC8, need
from typer.testing import CliRunner

from irscale.cli import app

pytestmark = pytest.mark.xdist_group("report_figures")

EXPECTED = [
    "figure1_tau_original",
    "figure2_tau_ranked",
    "figure3_significance_changes",
    "figure4_means",
    "figure5_asl_curves",
]
# the means' and ASL curves' panels, each a file of its own for \columnwidth (issue 37, item 3), listed under
# their figure (three measures: the heatmaps fit a column whole)
PARTS = {
    "figure4_means": ["figure4_means_P", "figure4_means_AP", "figure4_means_RBP_p0_8"],
    "figure5_asl_curves": ["figure5_asl_curves_P", "figure5_asl_curves_AP", "figure5_asl_curves_RBP_p0_8"],
}


def _compare(out: Path, *extra: str):
    root = need(TREC8)
    runs = sorted((root / "runs").glob("*.gz"))[:8]
    args = [
        "compare",
        str(root / "qrels.trec8.txt"),
        *map(str, runs),
        "-N",
        "10",
        "-m",
        "P",
        "-m",
        "AP",
        "-m",
        "RBP(p=0.8)",
        "-t",
        "sign",
        "-t",
        "ttest",
        "--out",
        str(out),
        *extra,
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("figs") / "out"
    res = _compare(out)
    return out, res.output


@pytest.mark.slow
def test_figures_are_drawn_by_default_and_written_as_svg_and_pdf(report):
    out, output = report
    for stem in EXPECTED + [p for ps in PARTS.values() for p in ps]:
        svg, pdf = out / f"{stem}_N10.svg", out / f"{stem}_N10.pdf"
        assert svg.is_file() and pdf.is_file(), stem
        root = ET.parse(svg).getroot()  # a well-formed SVG document on its own
        assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
        assert pdf.read_bytes().startswith(b"%PDF-")
        pypdf = pytest.importorskip("pypdf")
        pages = pypdf.PdfReader(pdf).pages
        assert len(pages) == 1
        box = pages[0].mediabox
        assert float(box.width) > 100 and float(box.height) > 100  # a figure, not an empty page
    assert sorted(p.name for p in out.glob("figure*")) == sorted(
        f"{s}_N10.{e}" for s in EXPECTED + [p for ps in PARTS.values() for p in ps] for e in ("svg", "pdf")
    )
    assert "5 figures as SVG and PDF files" in " ".join(output.split())
    tex = (out / "report_N10.tex").read_text()
    assert [f"{s}_N10.pdf" for s in EXPECTED] == re.findall(r"\\includegraphics\[[^]]*\]\{([^}]+)\}", tex)  # no part


@pytest.mark.slow
def test_every_figure_file_is_listed_in_the_html_and_markdown(report):
    out, _ = report
    html = (out / "report_N10.html").read_text()
    md = (out / "report_N10.md").read_text()
    figures = re.findall(r'<figure id="figure-(\d+)">(.*?)</figure>', html, flags=re.DOTALL)
    assert [k for k, _ in figures] == ["1", "2", "3", "4", "5"]
    for (k, body), stem in zip(figures, EXPECTED):
        assert stem.startswith(f"figure{k}_")
        links = re.findall(r'<a href="([^"]+)">', body)
        own = [stem] + PARTS.get(stem, [])  # the figure's files, then its parts'
        assert links == [f"{s}_N10.{e}" for s in own for e in ("svg", "pdf")], links
        assert all((out / link).is_file() for link in links)
        assert body.count("<svg") == 1  # and embedded
        for s in own:
            for ext in ("svg", "pdf"):
                assert f"[{s}_N10.{ext}]({s}_N10.{ext})" in md


def _colour_bar_ticks(svg: Path) -> list[float]:
    """The tick labels of the colour bar: the numbers of the last axes' y ticks (matplotlib
    writes text as <text> elements with svg.fonttype none)."""
    root = ET.parse(svg).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    axes = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if re.fullmatch(r".*axes_\d+", g.get("id", ""))]
    bar = axes[-1]
    ticks = []
    for g in bar.iter("{http://www.w3.org/2000/svg}g"):
        if re.fullmatch(r".*ytick_\d+", g.get("id", "")):
            texts = ["".join(t.itertext()) for t in g.findall(".//s:text", ns)]
            ticks += [float(x.replace("\u2212", "-")) for x in texts if x.strip()]
    return ticks


def test_tau_heatmaps_share_one_colour_range_with_a_colour_bar(report):
    out, _ = report
    t4 = pd.read_csv(out / "table4_tau_between_measures_N10.csv")
    low = min(t4["tau"].min(), t4["tau_ranked"].min())
    expect = math.floor(low * 10) / 10  # the range: the smaller tau of either, down to a tenth, up to 1
    bars = [_colour_bar_ticks(out / f"{s}_N10.svg") for s in EXPECTED[:2]]
    assert bars[0] == bars[1] and len(bars[0]) >= 3, bars  # one scale, the same ticks
    assert bars[0][-1] == 1.0 and bars[0][0] >= expect - 1e-9 and bars[0][0] - expect < 0.2, (bars, expect)
    for s in EXPECTED[:2]:  # the colour bar's label
        assert "Kendall's tau" in [t.strip() for t in ET.parse(out / f"{s}_N10.svg").getroot().itertext()]


def test_the_tau_range_covers_both_matrices():
    """tau_range: the smaller of the two matrices' minima, floored to a tenth."""
    import numpy as np

    from irscale.report.figures import tau_heatmap, tau_range

    a = np.array([[1, 0.83], [0.83, 1]])
    b = np.array([[1, 0.41], [0.41, 1]])
    assert tau_range(a) == 0.8 and tau_range(a, b) == 0.4 and tau_range(np.eye(1)) == 0.0
    pa = tau_heatmap(a, ["x", "y"], vmin=tau_range(a, b))
    pb = tau_heatmap(b, ["x", "y"], vmin=tau_range(a, b))
    assert pa.data["vmin"] == pb.data["vmin"] == 0.4
    assert tau_heatmap(a, ["x", "y"]).data["vmin"] == 0.8  # alone: its own range


def test_no_figures_writes_none(tmp_path):
    out = tmp_path / "plain"
    res = _compare(out, "--no-figures")
    assert not list(out.glob("figure*"))
    html = (out / "report_N10.html").read_text()
    assert "<svg" not in html and "without <code>--no-figures</code> draws" in html  # says how to get them
    assert "figures as SVG" not in res.output
