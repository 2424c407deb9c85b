r"""The report's figures are legible in print (issue 37, item 3): each is drawn exactly as wide
as it is meant to be printed (``Picture.print_width_in``: 3.35 in, a two-column paper's
\columnwidth, or 6.9 in, its \textwidth), and every text, scaled by print width / figure
width, is at least 8 pt. The means figure also comes as one file per measure, each for
\columnwidth. Checked on what a user gets: the SVG text read back with xml.etree and the
PDF (the file LaTeX includes) with pypdf, not with the code that drew them.

The study is made up to the size of a real one (TREC DL 2019 with compare's defaults: 11
measures, 37 systems, 11 tests): its frames are what ``compare`` puts in a Study."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from irscale.experiment import PAPER_MEASURES
from irscale.report import figures as F
from irscale.report.files import _figure_files, _figures, _latex_figures
from irscale.stats import ALL_TESTS
from irscale.stats import test_name as name_of_test
from irscale.study import Study

MEASURES = PAPER_MEASURES  # compare's default measures (the paper's)
TESTS = tuple(name_of_test(t) for t in ALL_TESTS)  # a DL 2019 compare's: the paper's eight and the three randomised
PAIRWISE = ("Sign Test", "Wilcoxon Rank Sum Test", "Wilcoxon Signed Rank Test", "Student's t Test")
SVG = "{http://www.w3.org/2000/svg}"

pytestmark = pytest.mark.xdist_group("figures_print")  # one worker draws the study's figures once


def made_up_study(N: int = 20, measures=MEASURES, tests=TESTS, systems: int = 37, seed: int = 37) -> Study:
    """A study with the frames study_figures draws from, at a real study's size and scales:
    means on [0, 1] (DCG up to 15) against ranked means up to 1e11, some pairs swapped;
    tau between 0.55 and 1; S2NS/NS2S counts up to a few hundred; ASL curves."""
    rng = np.random.default_rng(seed)
    names = [f"{m}@{N}" for m in measures]
    runs = [f"run-{k:02d}-{'x' * (k % 9)}" for k in range(systems)]
    t4 = pd.DataFrame(
        [
            {"measure_1": a, "measure_2": b, "tau": rng.uniform(0.55, 1), "tau_ranked": rng.uniform(0.55, 1)}
            for a, b in combinations(names, 2)
        ]
    )
    changes = pd.DataFrame(
        [
            {
                "measure": m,
                "test": t,
                "sig": 400,
                "s2ns": int(rng.integers(0, 200)),
                "ns2s": int(rng.integers(0, 200)),
                "delta_pct": float(rng.uniform(0, 110)),
            }
            for m in names
            for t in tests
        ]
    )
    means = []
    for k, m in enumerate(names):
        top = 15.0 if m.startswith("DCG") else 1.0
        o = np.sort(rng.uniform(0.05, 0.8, systems)) * top
        r = (o / top + rng.normal(0, 0.02, systems)) * 10.0 ** (k + 1)  # 10 .. 1e11
        for scale, vals in (("original", o), ("ranked", r)):
            means += [{"measure": m, "scale": scale, "system": s, "mean": v} for s, v in zip(runs, vals)]
    percent = np.arange(101)
    asl = pd.concat(
        [
            pd.DataFrame(
                {
                    "measure": m,
                    "test": t,
                    "scale": scale,
                    "percent": percent,
                    "asl": np.sort(rng.uniform(0, 1, len(percent)) ** 3),
                }
            )
            for m in names
            for t in (x for x in tests if x in PAIRWISE + ("Paired Randomisation Test", "Paired Bootstrap Test"))
            for scale in ("original", "ranked")
        ],
        ignore_index=True,
    )
    st = Study(N, tuple(names), tuple(runs), tuple(map(str, range(43))), pd.DataFrame(), t4, changes, {"alpha": 0.05})
    st.means = pd.DataFrame(means)
    st.asl = asl
    return st


@pytest.fixture(autouse=True)
def check_overlaps(monkeypatch):
    """Every figure of these tests is checked for overlapping texts (off in production)."""
    monkeypatch.setattr(F, "CHECK_OVERLAPS", True)


@pytest.fixture(scope="module")
def figures():
    before = F.CHECK_OVERLAPS
    F.CHECK_OVERLAPS = True  # each figure's texts checked for overlaps (the forked workers inherit it)
    try:
        return F.study_figures(made_up_study())
    finally:
        F.CHECK_OVERLAPS = before


def every_picture(figures):
    for f in figures:
        yield f
        yield from f.parts


def svg_font_sizes(svg: str) -> tuple[float, list[tuple[float, str]]]:
    """The SVG's width in pt and (font size in pt, text) of each drawn text (matplotlib writes
    text as <text> with svg.fonttype none, sizes in px = pt of its pt-sized viewBox)."""
    root = ET.fromstring(svg)
    width = float(root.get("width", "").removesuffix("pt"))
    assert root.get("viewBox", "").split()[2] == root.get("width", "").removesuffix("pt")  # 1 user unit = 1 pt
    sizes = []
    for el in root.iter(SVG + "text"):
        text = "".join(el.itertext())
        style = el.get("style", "")
        m = re.search(r"font-size: ([0-9.]+)px", style) or re.search(r"font: ([0-9.]+)px", style)
        assert m, ("a text without its size", text, style)
        sizes.append((float(m.group(1)), text))
    return width, sizes


def pdf_font_sizes(pdf: bytes) -> tuple[float, list[tuple[float, str]]]:
    """The PDF page's width in pt and (font size in pt, text) of each text drawn on it: the
    size set by Tf times the scale of the text and current matrices."""
    import io

    pypdf = pytest.importorskip("pypdf")
    page = pypdf.PdfReader(io.BytesIO(pdf)).pages[0]
    sizes: list[tuple[float, str]] = []

    def visit(text, cm, tm, font, size):
        if text.strip():
            sizes.append((size * math.hypot(tm[0], tm[1]) * math.hypot(cm[0], cm[1]), text))

    page.extract_text(visitor_text=visit)
    return float(page.mediabox.width), sizes


@pytest.mark.slow
def test_every_report_figure_is_legible_at_its_print_width(figures):
    """Every text of every figure and part, in the SVG and in the PDF, is at least 8 pt once
    the figure is printed at its print width."""
    pictures = list(every_picture(figures))
    # the five figures; the parts: 4 + 4 tau blocks, 4 groups of tests, 11 means and 11 ASL panels
    assert len(pictures) == 5 + 8 + 4 + 2 * len(MEASURES)
    for pic in pictures:
        assert pic.print_width_in in (F.COLUMN_WIDTH_IN, F.TEXT_WIDTH_IN), pic.stem
        for width, sizes in (svg_font_sizes(pic.svg), pdf_font_sizes(pic.pdf)):
            assert width == pytest.approx(pic.print_width_in * 72, abs=0.5), pic.stem  # drawn as wide as printed
            assert len(sizes) > 10, pic.stem  # ticks, labels, titles: the texts were found
            scale = pic.print_width_in * 72 / width
            small = [(round(s * scale, 2), t) for s, t in sizes if s * scale < 8 - 1e-9]
            assert not small, (pic.stem, small)
        assert pic.overlaps == (), (pic.stem, pic.overlaps)


@pytest.mark.slow
def test_which_figures_are_for_a_column_and_which_for_the_page(figures):
    r"""Eleven measures and eleven tests do not fit 3.35 in: the heatmaps, the significance
    changes, the means and the ASL curves are for \textwidth; each measure's means panel is
    for \columnwidth, in the measures' order, named by its slug."""
    assert [f.stem for f in figures] == ["tau_original", "tau_ranked", "significance_changes", "means", "asl_curves"]
    assert [f.latex_width for f in figures] == ["\\textwidth"] * 5
    (means,) = [f for f in figures if f.stem == "means"]
    assert [p.stem for p in means.parts] == [
        "means_P",
        "means_R",
        "means_RR",
        "means_AP",
        "means_RBP_p0_3",
        "means_RBP_p0_5",
        "means_RBP_p0_8",
        "means_DCG_base2",
        "means_DCG_base10",
        "means_nDCG_base2",
        "means_nDCG_base10",
    ]
    for p, m in zip(means.parts, MEASURES):
        assert p.latex_width == "\\columnwidth" and p.print_width_in == 3.35
        assert f"{m}@20" in p.title and p.pdf.startswith(b"%PDF-")
        assert np.array_equal(p.data, means.data[f"{m}@20"])  # the same swapped pairs as its panel
        svg = ET.fromstring(p.svg)
        assert svg.tag == SVG + "svg" and "mean, original scale" in [
            "".join(t.itertext()) for t in svg.iter(SVG + "text")
        ]
    by = {f.stem: f for f in figures}
    assert [p.stem for p in by["asl_curves"].parts] == [p.stem.replace("means", "asl_curves") for p in means.parts]


@pytest.mark.slow
def test_every_figure_for_the_page_comes_in_parts_for_a_column(figures):
    r"""What a \textwidth figure shows is also in its parts, each for \columnwidth: the
    tau heatmaps cut into blocks of columns (every row, each tau to two decimals), the
    significance changes into groups of tests (every measure), the means and the ASL
    curves one measure each; together the parts show each column, test or measure once."""
    names = [f"{m}@20" for m in MEASURES]
    for f in figures:
        assert f.latex_width == "\\textwidth" and f.parts, f.stem
        assert all(p.latex_width == "\\columnwidth" and p.pdf.startswith(b"%PDF-") for p in f.parts), f.stem
    by = {f.stem: f for f in figures}
    for stem in ("tau_original", "tau_ranked"):
        whole = by[stem]
        blocks = [p.data["columns"] for p in whole.parts]
        assert [c for b in blocks for c in b] == names and max(map(len, blocks)) - min(map(len, blocks)) <= 1
        for k, p in enumerate(whole.parts, 1):
            assert p.stem == f"{stem}_part{k}" and np.array_equal(p.data["matrix"], whole.data["matrix"])
            _, sizes = svg_font_sizes(p.svg)
            shown = [t for _, t in sizes]
            cols = [names.index(c) for c in p.data["columns"]]
            for a in range(len(names)):  # every tau of the block, to two decimals at least
                for b in cols:
                    v = whole.data["matrix"][a, b]
                    assert f"{v:.2f}" in shown or f"{v:.3f}" in shown, (p.stem, a, b)
    changes = by["significance_changes"]
    tests = [list(p.data["s2ns"].columns) for p in changes.parts]
    assert [t for g in tests for t in g] == list(changes.data["s2ns"].columns) == list(TESTS)
    for p in changes.parts:
        for k in ("s2ns", "ns2s", "delta_pct"):
            assert p.data[k].equals(changes.data[k][list(p.data[k].columns)]), (p.stem, k)
    assert [p.title.rsplit(", ", 1)[1] for p in by["asl_curves"].parts] == names
    assert all(p.data["measure"].eq(m).all() for p, m in zip(by["asl_curves"].parts, names))


@pytest.mark.slow
def test_the_parts_are_written_after_their_figure_and_left_out_of_the_latex(figures):
    files = _figure_files(figures, "N20")
    names = [[n for n, _ in fs] for fs in files]
    assert names[3][:2] == ["figure4_means_N20.svg", "figure4_means_N20.pdf"]
    assert names[3][2:] == [f"figure4_{p.stem}_N20.{e}" for p in figures[3].parts for e in ("svg", "pdf")]
    assert all(re.fullmatch(r"figure\d+_[A-Za-z0-9_-]+_N20\.(svg|pdf)", n) for fs in names for n in fs)
    assert len({n.lower() for fs in names for n in fs}) == sum(map(len, names))  # distinct, whatever the case
    assert [f for f, *_ in _latex_figures(files, _figures(figures))] == [fs[1] for fs in names]  # each figure's own PDF


@pytest.mark.slow
def test_a_small_study_fits_a_column():
    """Three measures and two tests: the heatmaps and the significance changes fit 3.35 in
    (with every tau to two decimals at least); the means (three panels) and ASL curves are
    laid out for the page; every text still 8 pt."""
    st = made_up_study(10, ("P", "AP", "RBP(p=0.8)"), ("Sign Test", "Student's t Test"), systems=8)
    figs = F.study_figures(st, pdf=False)
    assert {f.stem: f.latex_width for f in figs} == {
        "tau_original": "\\columnwidth",
        "tau_ranked": "\\columnwidth",
        "significance_changes": "\\columnwidth",
        "means": "\\textwidth",
        "asl_curves": "\\textwidth",
    }
    assert len(figs[0].data["labels"]) == 3 and "to 3 decimals" in figs[0].caption
    for pic in every_picture(figs):
        width, sizes = svg_font_sizes(pic.svg)
        assert width == pytest.approx(pic.print_width_in * 72, abs=0.5)
        assert min(s for s, _ in sizes) * pic.print_width_in * 72 / width >= 8, pic.stem
        assert pic.overlaps == (), (pic.stem, pic.overlaps)


@pytest.mark.slow
def test_one_or_two_means_panels_fit_a_column():
    st = made_up_study(10, ("P", "AP"), ("Sign Test",), systems=6)
    pic = F.means_panels(st.means, parts=True)
    assert pic.latex_width == "\\columnwidth" and [p.stem for p in pic.parts] == ["means_P", "means_AP"]
    assert F.means_panels(st.means).parts == ()  # parts only when asked


@pytest.mark.slow
def test_a_heatmap_of_eleven_measures_is_legible_on_the_page():
    """The fast lane's check of the rule: Kendall's tau between compare's eleven measures
    does not fit 3.35 in, so it is laid out 6.9 in wide, every text 8 pt, tau to 3 decimals."""
    t4 = made_up_study().table4
    pic = F.tau_heatmap(t4)
    assert pic.print_width_in == F.TEXT_WIDTH_IN and pic.latex_width == "\\textwidth"
    width, sizes = svg_font_sizes(pic.svg)
    assert width == pytest.approx(F.TEXT_WIDTH_IN * 72, abs=0.5) and min(s for s, _ in sizes) >= 8
    assert f"{t4['tau'].iloc[0]:.3f}" in [t for _, t in sizes] and pic.overlaps == ()
    names = [t for _, t in sizes]
    assert all(f"{m}@20" in names for m in MEASURES)


def test_measure_slugs_are_file_names_distinct_per_measure():
    assert F.measure_slugs(["P@20", "RBP(p=0.8)@20", "nDCG(base=10)@20"]) == {
        "P@20": "P",
        "RBP(p=0.8)@20": "RBP_p0_8",
        "nDCG(base=10)@20": "nDCG_base10",
    }
    assert F.measure_slugs(["P@10", "P@20"]) == {"P@10": "P_10", "P@20": "P_20"}  # the run length tells them apart
    odd = ["RBP(p=0.8)", "RBP(p=08)", "rbp(p=0.8)", "x y", "x/y", "***"]
    slugs = F.measure_slugs(odd)
    assert list(slugs) == odd and all(re.fullmatch(r"[A-Za-z0-9_-]+", s) for s in slugs.values())
    assert len({s.lower() for s in slugs.values()}) == len(odd), slugs  # distinct, also on a case-insensitive disk
    assert slugs["***"] == "measure"


@pytest.mark.slow
def test_the_spacing_figure_of_a_study_is_legible_in_print():
    r"""The study's spacing figure (one run length, every measure, the quantile view): rows of
    four panels for \textwidth; one measure alone is for \columnwidth."""
    pic = F.rank_spacing_plot(list(MEASURES), [5], view="quantile", names=[f"{m}@5" for m in MEASURES])
    one = F.rank_spacing_plot("AP", 5, view="quantile")
    assert (pic.latex_width, one.latex_width) == ("\\textwidth", "\\columnwidth")
    for p in (pic, one):
        width, sizes = svg_font_sizes(p.svg)
        assert width == pytest.approx(p.print_width_in * 72, abs=0.5)
        assert min(s for s, _ in sizes) * p.print_width_in * 72 / width >= 8
        assert p.overlaps == (), p.overlaps
    assert "RBP(p=0.8)@5" in "".join(ET.fromstring(pic.svg).itertext())


@pytest.mark.slow
def test_a_study_s_spacing_figure_comes_in_parts_for_a_column():
    r"""--spacing on three measures: the figure is for \textwidth, and each measure's panel
    alone comes with it for \columnwidth, from the same spacing data (computed once)."""
    st = made_up_study(5, ("P", "AP", "RBP(p=0.8)"), ("Sign Test",), systems=6)
    (spacing,) = [f for f in F.study_figures(st, spacing=True, pdf=False, samples=200) if f.stem == "spacing"]
    assert spacing.latex_width == "\\textwidth"
    assert [p.stem for p in spacing.parts] == ["spacing_P", "spacing_AP", "spacing_RBP_p0_8"]
    for p, m in zip(spacing.parts, ("P", "AP", "RBP(p=0.8)")):  # (named as the study writes them at N)
        assert p.latex_width == "\\columnwidth" and list(p.data) == [(m, 5)]
        assert p.data[(m, 5)] is spacing.data[(m, 5)]  # not computed again
        width, sizes = svg_font_sizes(p.svg)
        assert min(s for s, _ in sizes) * p.print_width_in * 72 / width >= 8
