"""Figures (irscale.report.figures): valid self-contained SVG with titles, PNG files where
asked, spacing points equal to exact quantiles computed here independently, seeded
samples, swapped pairs, heatmaps, Hasse diagrams and their limits, no overlapping text.

Rank maps go to the session's private cache (tests/conftest.py)."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from irscale.errors import ArgumentError, IrscaleError
from irscale.report import figures as F


@pytest.fixture(autouse=True)
def check_overlaps(monkeypatch):
    """Every figure of these tests is checked for overlapping texts (off in production)."""
    monkeypatch.setattr(F, "CHECK_OVERLAPS", True)


SVG_NS = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    assert root.tag == SVG_NS + "svg"
    return ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]


def check_picture(pic: F.Picture, *title_words: str):
    """Parses, is self-contained, has its title as text, and no text overlaps."""
    assert pic.svg.startswith("<svg") and "<!DOCTYPE" not in pic.svg and "<?xml" not in pic.svg
    words = " ".join(texts(pic.svg))
    for w in title_words:
        assert w in words, (w, words[:300])
    for ref in re.findall(r'href="([^"]*)"', pic.svg) + re.findall(r"url\(([^)]*)\)", pic.svg):
        assert ref.startswith(("#irs", "data:")), ref
    fonts = set(re.findall(r"font-family: ([^;\"]+)", pic.svg))
    assert all(f.rstrip().endswith(("sans-serif", "monospace", "serif")) for f in fonts), fonts
    assert pic.overlaps == (), pic.overlaps


def binom_cdf(k: int, n: int) -> float:
    return sum(math.comb(n, j) for j in range(k + 1)) / 2**n


# -- svg helper ---------------------------------------------------------------------------------


def test_svg_helper_is_self_contained_and_deterministic():
    plt = F._plt()
    outs = []
    for _ in range(2):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1], "o-")
        ax.set_title("a title & <markup>")
        outs.append(F.svg(fig))
        plt.close(fig)
    assert outs[0] == outs[1]
    assert "a title &amp; &lt;markup&gt;" in outs[0]
    assert "a title & <markup>" in texts(outs[0])
    ids = re.findall(r'\bid="([^"]+)"', outs[0])
    assert ids and all(i.startswith("irs") for i in ids)
    assert "<metadata>" not in outs[0] and "dc:date" not in outs[0]


# -- spacing from rank maps ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def p20(tmp_path_factory):
    out = tmp_path_factory.mktemp("spacing")
    return F.rank_spacing_plot("P", 20, out=out), out


def test_spacing_p20_exact_is_the_binomial_cdf(p20):
    pic, _ = p20
    check_picture(pic, "Values of P", "N = 20: 21 values", "fraction of runs at or below")
    d = pic.data[("P", 20)]
    assert d.exact and d.size == 21 and d.n_runs == 2**20 and d.engine == "closed"
    k = np.arange(21)
    assert np.allclose(d.value, k / 20)
    assert np.array_equal(d.phi, k + 1)
    assert np.allclose(d.frac, [binom_cdf(int(j), 20) for j in k], rtol=0, atol=1e-15)
    assert np.allclose(d.below, [binom_cdf(int(j) - 1, 20) if j else 0.0 for j in k], rtol=0, atol=1e-15)
    png, vec = pic.files
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert vec.read_text(encoding="utf-8") == pic.svg


def test_spacing_p20_sampled_points_are_exact_quantiles():
    d = F.spacing_data("P", 20, exact=False, samples=600, seed=3)
    assert not d.exact and d.sampled == len(d.runs) and d.seed == 3
    k = np.rint(d.value * 20).astype(int)
    assert set(k) == set(range(21))  # the strata reach both tails
    assert np.allclose(d.frac, [binom_cdf(int(j), 20) for j in k], rtol=0, atol=1e-15)


def test_spacing_rbp05_n20_sampled_is_equispaced():
    """RBP with p = 1/2 at N = 20: the run read as a binary fraction; every run has its
    own value, phi = 1 + that number, and value against phi is a straight line."""
    d = F.spacing_data("RBP(p=0.5)", 20, samples=800, seed=1)
    assert not d.exact and d.size == 2**20
    idx = np.sort(d.runs.astype(np.int64) @ (1 << np.arange(19, -1, -1)))
    assert np.array_equal(d.phi, idx + 1)
    assert np.allclose(d.value, idx / 2**20, rtol=0, atol=1e-12)
    assert np.allclose(d.frac, (idx + 1) / 2**20) and np.allclose(d.below, idx / 2**20)
    pic = F.rank_spacing_plot(["RBP(p=0.5)"], [20], view="equispaced", samples=800, seed=1)
    check_picture(pic, "RBP(p=0.5)", f"{d.sampled:,} of 2²⁰ runs sampled", "phi / number of values")
    assert np.array_equal(pic.data[("RBP(p=0.5)", 20)].value, d.value)  # the same seed, the same runs
    _, svg, caption = pic.figure()
    assert svg == pic.svg and "RBP(p=0.5) at N = 20" in caption and "seed 1" in caption


def test_spacing_ap12_exact_matches_enumeration():
    """AP with RB = N over all 4,096 runs of length 12, computed here in plain numpy."""
    N = 12
    runs = F.all_runs(N, 1).astype(np.float64)
    hits = np.cumsum(runs, axis=1)
    ap = np.round((runs * hits / np.arange(1, N + 1)).sum(axis=1) / N, 12)
    vals, counts = np.unique(ap, return_counts=True)
    d = F.spacing_data("AP", N)
    assert d.exact and d.size == len(vals)
    assert np.allclose(d.value, vals, atol=1e-12)
    assert np.allclose(d.frac, np.cumsum(counts) / 2**N, rtol=0, atol=1e-15)
    assert np.array_equal(d.phi, np.arange(1, len(vals) + 1))


def test_spacing_sampled_agrees_with_the_exact_listing():
    exact = F.spacing_data("AP", 16, exact=True)
    s = F.spacing_data("AP", 16, samples=500, seed=7)
    assert exact.exact and not s.exact and exact.size == s.size == 44633
    pos = np.searchsorted(exact.phi, s.phi)
    assert np.array_equal(exact.phi[pos], s.phi)
    assert np.allclose(exact.value[pos], s.value) and np.allclose(exact.frac[pos], s.frac)
    assert (np.diff(s.value) > 0).all() and (np.diff(s.frac) > 0).all() and (s.below < s.frac).all()
    q = F.spacing_data("AP", 16, samples=500, seed=7, phi=False)  # run counts only (the quantile view)
    assert q.phi is None and np.array_equal(q.frac, s.frac)


@pytest.mark.slow
def test_spacing_ndcg20_binary_sampled():
    pic = F.rank_spacing_plot("nDCG", 20, samples=400, seed=0)
    check_picture(pic, "nDCG", "N = 20", "runs sampled")
    d = pic.data[("nDCG", 20)]
    assert not d.exact and d.value[0] == 0.0 and d.value[-1] == pytest.approx(1.0)
    assert d.frac[-1] == 1.0 and d.phi[-1] == d.size and d.phi[0] == 1


def test_sample_runs_reproducible():
    a = F.sample_runs(30, 1, 1000, seed=5)
    b = F.sample_runs(30, 1, 1000, seed=5)
    c = F.sample_runs(30, 1, 1000, seed=6)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.dtype == np.int8 and a.shape[1] == 30 and 950 <= len(a) <= 1000 + 62
    assert len(np.unique(a, axis=0)) == len(a)
    rows = {tuple(r) for r in a}
    assert (0,) * 30 in rows and (1,) * 30 in rows
    g = F.sample_runs(10, 3, 300, seed=0)
    assert g.min() == 0 and g.max() == 3 and (3,) * 10 in {tuple(r) for r in g}
    assert len(F.sample_runs(4, 1, 100)) == 16  # every run when there are fewer
    d1 = F.spacing_data("RR", 20, exact=False, samples=300, seed=2)
    d2 = F.spacing_data("RR", 20, exact=False, samples=300, seed=2)
    assert np.array_equal(d1.runs, d2.runs) and np.array_equal(d1.value, d2.value)


def test_spacing_tiny_names_runs_and_enumerates_measures_without_space(tmp_path):
    d = F.spacing_data("AP", 4)
    assert d.run_names is not None and len(d.run_names) == 16
    assert d.run_names[0] == "0000" and d.run_names[-1] == "1111"
    r = F.spacing_data("Rprec", 6)  # no rank map: every run enumerated
    assert r.engine == "enumerate" and r.exact and r.frac[-1] == 1.0
    files = F.spacing_plot(["AP"], [4], tmp_path)  # the old file-writing signature
    assert [f.suffix for f in files] == [".png", ".svg"] and all(f.exists() for f in files)
    assert "0110" in texts(files[1].read_text(encoding="utf-8"))


# -- means: original against ranked -----------------------------------------------------------------


def test_means_scatter_marks_exactly_the_swapped_pairs(tmp_path):
    o = [0.10, 0.20, 0.30, 0.40, 0.50, 0.50]
    r = [0.10, 0.35, 0.30, 0.45, 0.60, 0.55]  # B and C swap; E/F tie originally: no swap
    pic = F.means_scatter(o, r, list("ABCDEF"), measure="AP", out=tmp_path)
    check_picture(pic, "System means of AP", "1 of 15 pairs swap order", "mean AP (original scale)")
    assert pic.data["swapped"] == [("B", "C")]
    assert pic.data["pairs"].tolist() == [[1, 2]] and pic.data["lines"].tolist() == [[1, 2]]
    group = re.search(r'<g id="irs[0-9a-f]+-swapped-pairs">(.*?)</g>', pic.svg, flags=re.DOTALL)
    assert group is not None and group.group(1).count("<path") == 1
    assert {"B", "C"} <= set(pic.data["labelled"])
    assert [f.name for f in pic.files] == ["means_AP.png", "means_AP.svg"]
    assert F.swapped_pairs([1, 2, 3], [3, 2, 1]).tolist() == [[0, 1], [0, 2], [1, 2]]
    with pytest.raises(ArgumentError, match="equal length"):
        F.swapped_pairs([1, 2], [1, 2, 3])


def test_means_scatter_130_systems_stays_legible():
    rng = np.random.default_rng(0)
    o = rng.random(130)
    r = o + rng.normal(0, 0.05, 130)
    pic = F.means_scatter(o, r, [f"run{i:03d}" for i in range(130)], max_lines=50)
    check_picture(pic, "pairs swap order")
    assert len(pic.data["lines"]) == 50 < len(pic.data["pairs"])
    assert 1 <= len(pic.data["labelled"]) <= 5


# -- heatmaps -------------------------------------------------------------------------------------------


def test_tau_heatmap_square_and_long():
    names = ["P", "AP", "nDCG", "RR"]
    M = np.array([[1, 0.81, 0.7654, 0.6], [0.81, 1, 0.9, 0.55], [0.7654, 0.9, 1, 0.5], [0.6, 0.55, 0.5, 1]])
    pic = F.tau_heatmap(pd.DataFrame(M, index=names, columns=names))
    check_picture(pic, "Kendall's tau between measures", "nDCG")
    t = texts(pic.svg)
    assert "0.765" in t and "0.550" in t and "Kendall's tau" in t
    long = pd.DataFrame(
        {
            "measure_1": ["P", "P", "AP"],
            "measure_2": ["AP", "RR", "RR"],
            "tau": [0.8, 0.6, 0.7],
            "tau_ranked": [0.9, 0.5, 0.4],
        }
    )
    lp = F.tau_heatmap(long, value="tau_ranked")
    assert lp.data["labels"] == ["P", "AP", "RR"]
    assert lp.data["matrix"][0, 2] == lp.data["matrix"][2, 0] == 0.5 and lp.data["matrix"][1, 1] == 1.0
    big = F.tau_heatmap(np.eye(20), [f"m{i}" for i in range(20)])  # too small cells: no numbers
    assert "1.00" not in texts(big.svg) and big.overlaps == ()
    with pytest.raises(ArgumentError, match="square"):
        F.tau_heatmap(np.zeros((2, 3)))


def test_significance_changes_plot():
    tests = ["Sign Test", "Wilcoxon Signed Rank Test", "Student's t Test"]
    rows = [
        {"measure": m, "test": t, "sig": 100, "s2ns": 10 * i + j, "ns2s": 100 + 10 * i + j, "delta_pct": float(i + j)}
        for i, m in enumerate(["AP", "nDCG"])
        for j, t in enumerate(tests)
    ]
    pic = F.significance_changes_plot(pd.DataFrame(rows))
    check_picture(pic, "Significance decisions changed", "S2NS", "NS2S", "Wilcoxon Signed Rank Test")
    assert pic.data["s2ns"].loc["nDCG", "Student's t Test"] == 12
    assert pic.data["ns2s"].loc["AP", "Sign Test"] == 100
    assert list(pic.data["s2ns"].index) == ["AP", "nDCG"] and list(pic.data["s2ns"].columns) == tests
    assert {"112", "12", "3%"} <= set(texts(pic.svg))
    with pytest.raises(ArgumentError, match="s2ns"):
        F.significance_changes_plot(pd.DataFrame({"measure": ["AP"], "test": ["t"]}))


# -- Hasse diagrams -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_hasse_every_run_legible(tmp_path):
    pic = F.hasse_figure(4, 2, "AP", out=tmp_path)
    check_picture(pic, "Weak top-heaviness order", "16 runs, 20 covers", "relevant documents")
    assert "the run and its AP" in pic.caption
    t = texts(pic.svg)
    assert "1110 0.75" in t and "0000 0" in t
    sizes = [float(s) for s in re.findall(r"font-size: ([0-9.]+)px", pic.svg)]
    assert min(sizes) >= 8  # points at the saved size (matplotlib's SVG unit)
    assert pic.data["fontsize"] >= 8
    assert min(F.contrast(i, f) for i, f in zip(pic.data["ink"], pic.data["fill"])) >= 4.5
    assert len(pic.files) == 2 and pic.files[0].stat().st_size > 0
    files = F.hasse_diagram(3, tmp_path, levels=3)  # the old signature; graded, 27 runs
    assert [f.name for f in files] == ["hasse_N3.png", "hasse_N3.svg"]


def test_hasse_refuses_too_many_runs_and_counts_levels():
    with pytest.raises(IrscaleError, match=r"up to 64 runs and 120 covers.*128 runs.*view='levels'"):
        F.hasse_figure(7, view="runs")
    with pytest.raises(IrscaleError, match="81 runs"):
        F.hasse_figure(4, 3, view="runs")
    covers = len(F.weak_covers(3, 3)[0])
    assert covers > F.HASSE_MAX_COVERS
    with pytest.raises(IrscaleError, match=f"{covers} covers"):
        F.hasse_figure(3, 4, view="runs")  # 64 runs, but graded covers skip levels
    pic = F.hasse_figure(30)  # auto: runs per level
    check_picture(pic, "number of runs at each of its 466 levels", "too many to draw each run")
    assert pic.data["counts"].sum() == 2**30 and len(pic.data["counts"]) == 466
    runs = F.all_runs(6, 2)
    assert np.array_equal(F.weak_level_counts(6, 2), np.bincount(F.weak_level(runs)))
    with pytest.raises(ArgumentError, match="levels"):
        F.hasse_figure(4, view="levels", measure="AP")


def test_balancing_plot_writes_files(tmp_path):
    files = F.balancing_plot(["AP", "P"], [2, 5, 10], tmp_path)
    assert [f.suffix for f in files] == [".png", ".svg"]
    assert "balancing index B(n)" in texts(files[1].read_text(encoding="utf-8"))
