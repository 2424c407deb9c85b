"""Certified bounds on phi for runs of any length (scales/bounds.py): the bounds contain
the exact normalised phi with zero tolerance, for every run at small N (a brute-force
count in exact fractions that shares no code with the engines) and for random and extreme
runs at N = 20 and 30 (the exact count engine's phi), with the deep ranks cut off (K < N)
as well as without; lo <= hi, both monotone in the run's value, and the width shrinks about
as 1 / resolution."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from irscale.errors import ArgumentError
from irscale.scales import build
from irscale.scales.bounds import RBPGrid, rbp_bounds


def _extremes(N: int) -> np.ndarray:
    """None relevant, all relevant, one relevant at each rank."""
    return np.vstack([np.zeros((1, N), int), np.ones((1, N), int), np.eye(N, dtype=int)])


def _value(run, p: Fraction) -> Fraction:
    return sum((p**k for k, x in enumerate(run) if x), Fraction(0))


@pytest.mark.parametrize("p", ["0.8", "0.9", "0.95", "2/3"])
@pytest.mark.parametrize("N", [1, 2, 5, 11])
def test_bounds_contain_phi_of_every_run_counted_by_brute_force(p, N):
    pf = Fraction(p)
    runs = np.array(list(itertools.product((0, 1), repeat=N)))
    values = [_value(r, pf) for r in runs]
    order = sorted(values)
    assert len(set(order)) == 2**N  # every run its own value
    rank = {v: i + 1 for i, v in enumerate(order)}
    phi = np.array([rank[v] for v in values])  # 1 + runs below
    for resolution in (16, 1000):
        b = rbp_bounds(f"RBP(p={p})", N, runs, resolution=resolution)
        exact = phi / 2**N
        assert (b.lo <= exact).all() and (exact <= b.hi).all(), (resolution, b.lo, exact, b.hi)
        assert b.size == 2**N and b.confidence == 0.0 and b.method == "grid recursion"
        by_value = np.argsort(phi)
        assert (np.diff(b.lo[by_value]) >= 0).all() and (np.diff(b.hi[by_value]) >= 0).all()
        assert b.width <= b.max_width


@pytest.mark.slow
@pytest.mark.parametrize("p", ["0.8", "0.9", "0.95"])
@pytest.mark.parametrize("N,resolution", [(20, 500), (20, 20_000), (30, 40), (30, 5000)])
def test_bounds_contain_the_exact_engines_phi_at_n_20_and_30(p, N, resolution):
    """Random and extreme runs against the count engine's phi; at N = 30 with resolution
    40 (p = 0.8, 0.9) the ranks past K are replaced by their bounds."""
    rng = np.random.default_rng(N * resolution)
    runs = np.vstack([_extremes(N), rng.integers(0, 2, (150, N)), (rng.random((50, N)) < 0.1).astype(int)])
    rm = build(f"RBP(p={p})", N, 2)
    assert rm.size == 2**N
    exact = rm.normalized(rm.phi_runs(runs))
    b = rbp_bounds(f"RBP(p={p})", N, runs, resolution=resolution)
    assert (b.lo <= exact).all() and (exact <= b.hi).all()
    order = np.argsort(exact, kind="stable")
    assert (np.diff(b.lo[order]) >= 0).all() and (np.diff(b.hi[order]) >= 0).all()


def test_deep_ranks_are_cut_and_still_bounded():
    """At N = 30, p = 0.8 and resolution 40, 23 ranks are computed exactly (p^K / (1 - p)
    < 1 / resolution) and the rest bounded; with N levels the width is no larger."""
    g = RBPGrid.build(Fraction(4, 5), 30, 40)
    assert g.K < 30
    full = RBPGrid.build(Fraction(4, 5), 12, 40)
    assert full.K == 12


def test_width_shrinks_about_as_one_over_the_resolution():
    widths = [RBPGrid.build(Fraction(9, 10), 60, M).max_width for M in (1000, 4000, 16000)]
    assert widths[0] > widths[1] > widths[2]
    assert 2.5 < widths[0] / widths[1] < 6 and 2.5 < widths[1] / widths[2] < 6, widths


def test_the_numpy_level_pass_equals_the_compiled_one():
    from irscale.scales import bounds

    if bounds._level_kernel() is None:
        pytest.skip("numba is not installed: only the numpy pass runs")
    rng = np.random.default_rng(1)
    F = np.sort(rng.random(3001))
    for up in (0, 1):
        a, b = np.empty_like(F), np.empty_like(F)
        bounds._level_kernel()(F, a, 9, 10, 1000, up)
        bounds._level_numpy(F, b, 9, 10, 1000, up)
        assert np.array_equal(a, b)


def test_refusals():
    with pytest.raises(ArgumentError, match="closed form"):
        rbp_bounds("RBP(p=0.5)", 10, np.zeros((1, 10), int))
    with pytest.raises(ArgumentError, match="0/1 grades"):
        rbp_bounds("RBP(p=0.8)", 10, np.full((1, 10), 2))
    with pytest.raises(ArgumentError, match=r"\(n, 10\)"):
        rbp_bounds("RBP(p=0.8)", 10, np.zeros((1, 9), int))


# -- DCG / nDCG -------------------------------------------------------------------------------------


def _dcg_phi_brute_force(N: int, base, levels: int):
    """Exact normalised phi of every run of REL^N under DCG, from values in 50-digit
    arithmetic with the plain discount (no weight classes), equal values merged."""
    import mpmath

    with mpmath.workdps(50):

        def w(k):  # rank k = 1..N
            if base is None:
                return 1 / mpmath.log(k + 1, 2)
            return mpmath.mpf(1) if k <= base else 1 / mpmath.log(k, base)

        weights = [w(k) for k in range(1, N + 1)]
        runs = np.array(list(itertools.product(range(levels), repeat=N)))
        values = [mpmath.nstr(mpmath.fsum(g * x for g, x in zip(r, weights)), 40) for r in runs]
        distinct = sorted(set(values), key=mpmath.mpf)
        rank = {v: i + 1 for i, v in enumerate(distinct)}
    return runs, np.array([rank[v] for v in values]) / len(distinct), len(distinct)


@pytest.mark.parametrize("base", [None, 2, 10])
@pytest.mark.parametrize("N,levels", [(1, 2), (4, 2), (10, 2), (5, 3)])
def test_dcg_bounds_contain_phi_of_every_run_counted_by_brute_force(base, N, levels):
    from irscale.scales.bounds import dcg_bounds

    runs, exact, size = _dcg_phi_brute_force(N, base, levels)
    measure = "DCG" if base is None else f"DCG(base={base})"
    for grid in (16, 10_000):
        b = dcg_bounds(measure, N, runs, levels=levels, grid=grid)
        assert b.size == size
        assert (b.lo <= exact).all() and (exact <= b.hi).all(), (grid, np.c_[b.lo, exact, b.hi])
        order = np.argsort(exact, kind="stable")
        assert (np.diff(b.lo[order]) >= 0).all() and (np.diff(b.hi[order]) >= 0).all()
        assert b.width <= b.max_width + 1e-15


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["DCG", "DCG(base=2)", "nDCG(base=10)"])
@pytest.mark.parametrize("N", [20, 30])
def test_dcg_bounds_contain_the_exact_engines_phi(measure, N):
    from irscale.scales.bounds import dcg_bounds

    rng = np.random.default_rng(N)
    runs = np.vstack([_extremes(N), rng.integers(0, 2, (150, N)), (rng.random((50, N)) < 0.1).astype(int)])
    rm = build(measure, N, 2)
    exact = rm.normalized(rm.phi_runs(runs))
    for grid in (1000, 200_000):
        b = dcg_bounds(measure, N, runs, grid=grid)
        assert b.size == rm.size
        assert (b.lo <= exact).all() and (exact <= b.hi).all(), grid
    assert b.max_width < 0.05


def test_dcg_width_shrinks_with_the_grid():
    from irscale.scales.bounds import dcg_bounds

    runs = np.zeros((1, 60), int)
    w = [dcg_bounds("DCG", 60, runs, grid=g).max_width for g in (10_000, 100_000, 1_000_000)]
    assert w[0] > w[1] > w[2], w


@pytest.mark.parametrize("levels", [0, 1, 3, 8])
def test_few_exact_ranks_and_the_rest_bounded_still_contain_phi(levels):
    """Only the first ``levels`` ranks computed, the rest replaced by 0 <= S <=
    (1 - p^(N-K)) / (1 - p): wide, but the exact phi (brute force, N = 12) is inside."""
    pf, N = Fraction(4, 5), 12
    runs = np.array(list(itertools.product((0, 1), repeat=N)))
    values = [_value(r, pf) for r in runs]
    rank = {v: i + 1 for i, v in enumerate(sorted(values))}
    exact = np.array([rank[v] for v in values]) / 2**N
    g = RBPGrid.build(pf, N, 1000, ranks=levels)
    assert g.K == levels
    from irscale.measures import parse_measure
    from irscale.scales.spaces import space_for

    lo, hi = g.query(space_for(parse_measure("RBP(p=0.8)"), N, 1).keys(runs))
    assert (lo <= exact).all() and (exact <= hi).all()
    assert (hi - lo).max() > 0.05  # the cut-off ranks are felt


def test_phi_bounds_is_exact_where_it_can_be_bounded_where_not_and_refuses_ap():
    from irscale.errors import MeasureError
    from irscale.scales.bounds import phi_bounds

    N = 1000
    runs = _extremes(N)[:5]
    for m in ("P", "RR", "RBP(p=0.5)"):  # closed forms at any N
        b = phi_bounds(m, N, runs)
        assert b.exact and (b.lo == b.hi).all() and b.method.startswith("exact"), m
    b = phi_bounds("P", N, runs)
    assert b.size == N + 1 and b.lo.tolist() == [1 / 1001, 1001 / 1001, 2 / 1001, 2 / 1001, 2 / 1001]
    b = phi_bounds("RBP(p=0.8)", 60, _extremes(60), resolution=10_000)
    assert b.method == "grid recursion" and 0 < b.max_width < 1e-2 and (b.lo <= b.hi).all()
    b = phi_bounds("nDCG", 60, _extremes(60), resolution=100_000)
    assert b.method == "lattice convolution" and 0 < b.max_width < 1e-2
    assert b.lo[0] <= 1 / b.size <= b.hi[0]  # none relevant: phi = 1 of |M|
    assert b.lo[1] <= 1.0 <= b.hi[1]  # all relevant: the top value
    with pytest.raises(MeasureError, match="no certified bounds"):
        phi_bounds("AP", 40, np.zeros((1, 40), int))
    b = phi_bounds("RBP(p=0.8)", 12, _extremes(12))  # small: the exact rank map
    assert b.exact and b.size == 2**12


def test_a_long_decimal_p_is_refused_not_overflowed():
    """p = 0.7500000000000001 is 7500000000000001/10^16: the grid's integers would pass
    int64 (they wrapped silently and put 1,022 of 1,024 runs outside their bounds)."""
    with pytest.raises(ArgumentError, match="too large a denominator"):
        rbp_bounds("RBP(p=0.7500000000000001)", 10, np.zeros((1, 10), int))


def test_the_numpy_convolution_equals_the_compiled_one():
    from irscale.scales import bounds

    if bounds._conv_kernel() is None:
        pytest.skip("numba is not installed: only the numpy pass runs")
    rng = np.random.default_rng(2)
    pmf = rng.random(500)
    pmf /= pmf.sum()
    for shifts in (np.array([0, 7]), np.array([0, 3, 3, 40, 41])):
        a, b = np.zeros(600), np.zeros(600)
        assert bounds._conv_kernel()(pmf, 500, shifts, a) == bounds._conv_numpy(pmf, 500, shifts, b)
        assert np.array_equal(a, b)


def test_non_integer_grades_are_refused():
    from irscale.scales.bounds import dcg_bounds

    with pytest.raises(ArgumentError, match="integer array"):
        dcg_bounds("DCG", 3, np.array([[0.7, 0, 1]]))
    with pytest.raises(ArgumentError, match="integer array"):
        rbp_bounds("RBP(p=0.8)", 3, np.array([[0.7, 0, 1]]))


@pytest.mark.slow
@pytest.mark.parametrize("measure,N,levels", [("DCG", 12, 3), ("nDCG(base=2)", 10, 4), ("DCG", 20, 4)])
def test_graded_dcg_bounds_contain_the_exact_engines_phi(measure, N, levels):
    """Graded runs (grades 0..levels-1): random runs, none relevant, all of the top grade and
    the top grade at each rank, against the exact rank map's phi."""
    from irscale.scales.bounds import dcg_bounds

    rng = np.random.default_rng(N)
    top = levels - 1
    runs = np.vstack(
        [np.zeros((1, N), int), np.full((1, N), top), top * np.eye(N, dtype=int), rng.integers(0, levels, (200, N))]
    )
    rm = build(measure, N, levels)
    exact = rm.normalized(rm.phi_runs(runs))
    for grid in (1000, 100_000):
        b = dcg_bounds(measure, N, runs, levels=levels, grid=grid)
        assert b.size == rm.size
        assert (b.lo <= exact).all() and (exact <= b.hi).all(), grid
    assert b.max_width < 1e-3
