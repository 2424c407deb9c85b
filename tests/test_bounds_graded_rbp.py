"""Certified bounds on phi for graded RBP (scales/bounds.py, rbp_bounds with levels > 2):
the bounds contain the exact normalised phi with zero tolerance, for every run at small N
(a brute-force count in exact fractions that shares no code with the engines) and for
random and extreme runs at N = 10-16 (the exact count engine's phi, and once the
enumeration engine's), with the deep ranks cut off (K < N) as well as without; lo and hi
are monotone in the run's value; the numpy level pass equals the compiled one; and RBP
whose runs tie (p = 2/3 on 4 levels) is refused with what to do instead."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from irscale.errors import ArgumentError, MeasureError
from irscale.measures import parse_measure
from irscale.scales import build
from irscale.scales.bounds import RBPGrid, phi_bounds, rbp_bounds
from irscale.scales.spaces import space_for


def _brute_force(N: int, levels: int, p: Fraction):
    """Every run of grades 0..levels-1 (gain = grade) and its exact phi / |M|: 1 + the
    number of distinct values below its value, over the number of distinct values."""
    runs = np.array(list(itertools.product(range(levels), repeat=N)))
    values = [sum((g * p**k for k, g in enumerate(r) if g), Fraction(0)) for r in runs]
    distinct = sorted(set(values))
    rank = {v: i + 1 for i, v in enumerate(distinct)}
    return runs, values, np.array([rank[v] for v in values]) / len(distinct), len(distinct)


def _extremes(N: int, levels: int) -> np.ndarray:
    """None relevant, all of the top grade, each grade alone at each rank."""
    top = levels - 1
    rows = [np.zeros((1, N), int), np.full((1, N), top)]
    rows += [g * np.eye(N, dtype=int) for g in range(1, levels)]
    return np.vstack(rows)


def _monotone(b, exact):
    order = np.argsort(exact, kind="stable")
    return (np.diff(b.lo[order]) >= 0).all() and (np.diff(b.hi[order]) >= 0).all()


@pytest.mark.parametrize("p", ["0.8", "0.9", "0.95"])
@pytest.mark.parametrize("levels", [3, 4])
def test_bounds_contain_phi_of_every_run_counted_by_brute_force(p, levels):
    pf = Fraction(p)
    for N in range(1, 7):
        runs, _, exact, size = _brute_force(N, levels, pf)
        assert size == levels**N  # every run its own value (b = 5, 10, 20 > levels - 1)
        for resolution in (16, 1000):
            b = rbp_bounds(f"RBP(p={p})", N, runs, resolution=resolution, levels=levels)
            assert (b.lo <= exact).all() and (exact <= b.hi).all(), (N, resolution)
            assert b.size == size and b.confidence == 0.0 and b.method == "grid recursion"
            assert _monotone(b, exact)
            assert b.width <= b.max_width


@pytest.mark.parametrize("ranks", [0, 1, 3])
def test_few_exact_ranks_and_the_rest_bounded_still_contain_phi(ranks):
    """Only the first ``ranks`` ranks computed, the rest replaced by 0 <= S <=
    t (1 - p^(N-K)) / (1 - p), t = 3: wide, but the brute-force phi is inside."""
    pf, N, levels = Fraction(4, 5), 6, 4
    runs, _, exact, _ = _brute_force(N, levels, pf)
    g = RBPGrid.build(pf, N, 1000, ranks=ranks, gains=(0, 1, 2, 3))
    assert g.K == ranks
    lo, hi = g.query(space_for(parse_measure("RBP(p=0.8)"), N, levels - 1).keys(runs))
    assert (lo <= exact).all() and (exact <= hi).all()
    assert (hi - lo).max() > 0.05  # the cut-off ranks are felt


@pytest.mark.slow
@pytest.mark.parametrize("p", ["0.8", "0.9", "0.95"])
@pytest.mark.parametrize(
    "N,levels,resolution", [(10, 4, 300), (12, 3, 20_000), (14, 4, 2000), (16, 3, 40), (16, 4, 50_000)]
)
def test_bounds_contain_the_exact_engines_phi(p, N, levels, resolution):
    """Random and extreme runs against the count engine's phi; at resolution 40 the ranks
    past K are replaced by their bounds (p = 0.8, 0.9)."""
    rng = np.random.default_rng(N * resolution)
    runs = np.vstack(
        [
            _extremes(N, levels),
            rng.integers(0, levels, (150, N)),
            (rng.random((50, N)) < 0.1) * rng.integers(1, levels, (50, N)),
        ]
    )
    rm = build(f"RBP(p={p})", N, levels, engine="count", cache=False)
    assert rm.size == levels**N
    exact = rm.normalized(rm.phi_runs(runs))
    b = rbp_bounds(f"RBP(p={p})", N, runs, resolution=resolution, levels=levels)
    assert b.size == rm.size
    assert (b.lo <= exact).all() and (exact <= b.hi).all()
    assert _monotone(b, exact)


def test_bounds_contain_the_enumeration_engines_phi():
    """An engine that lists every run's value (no counting argument) at N = 10, 4 levels."""
    N, levels = 10, 4
    rng = np.random.default_rng(3)
    runs = np.vstack([_extremes(N, levels), rng.integers(0, levels, (200, N))])
    rm = build("RBP(p=0.9)", N, levels, engine="enumerate", cache=False)
    exact = rm.normalized(rm.phi_runs(runs))
    b = rbp_bounds("RBP(p=0.9)", N, runs, resolution=5000, levels=levels)
    assert b.size == rm.size and (b.lo <= exact).all() and (exact <= b.hi).all()
    assert b.max_width < 1e-2


def test_equal_gains_count_the_distinct_ones():
    """gains=1:0 gives grades 0-3 the gains 0, 0, 2, 3: grades 0 and 1 tie, and the distinct
    values are the 3^N vectors over the gains 0, 2, 3 (b = 5 divides none of their
    differences). The bounds take X_k uniform over those three; the enumeration engine,
    which merges equal values, is the truth."""
    N, m = 9, "RBP(p=0.8, gains=1:0)"
    rng = np.random.default_rng(4)
    runs = np.vstack([_extremes(N, 4), rng.integers(0, 4, (200, N))])
    rm = build(m, N, 4, engine="enumerate", cache=False)
    assert rm.size == 3**N
    exact = rm.normalized(rm.phi_runs(runs))
    b = rbp_bounds(m, N, runs, resolution=2000, levels=4)
    assert b.size == 3**N and b.details["gains"] == "0,2,3"
    assert (b.lo <= exact).all() and (exact <= b.hi).all()


def test_scaled_gains_give_the_same_tables():
    """The grid is y = i t / M: gains (0, 2) (t = 2) index the same points as (0, 1), so the
    tables are equal to the bit; (0, 1, 2, 3) and (0, 2, 4, 6) likewise."""
    p = Fraction(9, 10)
    for g, g2 in (((0, 1), (0, 2)), ((0, 1, 2, 3), (0, 2, 4, 6))):
        a, b = RBPGrid.build(p, 40, 500, gains=g), RBPGrid.build(p, 40, 500, gains=g2)
        assert np.array_equal(a.lo, b.lo) and np.array_equal(a.hi, b.hi) and a.slack == b.slack


def test_binary_is_the_two_gain_case():
    a = RBPGrid.build(Fraction(4, 5), 50, 2000)
    b = RBPGrid.build(Fraction(4, 5), 50, 2000, gains=(0, 1))
    assert np.array_equal(a.lo, b.lo) and np.array_equal(a.hi, b.hi) and a.slack == b.slack


def test_the_numpy_level_pass_equals_the_compiled_one():
    from irscale.scales import bounds

    if bounds._level_kernel() is None:
        pytest.skip("numba is not installed: only the numpy pass runs")
    rng = np.random.default_rng(1)
    F = np.sort(rng.random(3001))
    for gains in ((0, 1), (0, 1, 2), (0, 1, 2, 3), (0, 1, 3, 7), (0, 2, 5), (1, 3)):
        for a_, b_, M in ((9, 10, 1000), (19, 20, 700), (2, 5, 300)):  # p = 2/5: the index moves 2.5 a step
            for up in (0, 1):
                x, y = np.empty_like(F), np.empty_like(F)
                bounds._level_kernel()(F, x, a_, b_, M, up, np.array(gains, dtype=np.int64))
                bounds._level_numpy(F, y, a_, b_, M, up, gains)
                assert np.array_equal(x, y), (gains, a_, b_, up)


def test_phi_bounds_at_n_100_on_four_levels():
    runs = _extremes(100, 4)[:4]
    b = phi_bounds("RBP(p=0.8)", 100, runs, levels=4, resolution=2000)
    assert b.method == "grid recursion" and b.size == 4**100 and 0 < b.max_width < 1e-2
    assert b.lo[0] <= 1 / b.size <= b.hi[0] and b.lo[1] <= 1.0 <= b.hi[1]
    assert (b.lo <= b.hi).all()


def test_runs_that_tie_are_refused_with_what_to_do():
    """p = 2/3 on 4 levels: b = 3 divides the gain difference 3 - 0, so runs tie (3, 0, ...
    and 1, 3, ...: 3 = 1 + 3 p); the grid recursion would count runs, not values."""
    with pytest.raises(MeasureError, match=r"can tie.*build\('RBP\(p=2/3\)', 17, 4\).*rel=1.*b > 3"):
        phi_bounds("RBP(p=2/3)", 100, np.zeros((1, 100), int), levels=4)
    with pytest.raises(MeasureError, match="can tie"):
        rbp_bounds("RBP(p=2/3)", 40, np.zeros((1, 40), int), levels=4)
    # p = 1/2 on 4 levels ties too, but its values are every integer: a closed form, exact
    b = phi_bounds("RBP(p=0.5)", 100, np.zeros((1, 100), int), levels=4)
    assert b.exact and b.method.startswith("exact")
    with pytest.raises(ArgumentError, match="closed form"):
        rbp_bounds("RBP(p=0.2)", 100, np.zeros((1, 100), int), levels=4)
    with pytest.raises(ArgumentError, match=r"grades 0\.\.3"):
        rbp_bounds("RBP(p=0.8)", 10, np.full((1, 10), 4), levels=4)
    with pytest.raises(ArgumentError, match="distinct non-negative integers"):
        RBPGrid.build(Fraction(4, 5), 10, 100, gains=(0, 2, 1))


def test_rel_binarises_graded_runs():
    """RBP(p=0.8, rel=2) on 4 levels is binary RBP of the runs binarised at grade 2."""
    rng = np.random.default_rng(5)
    runs = rng.integers(0, 4, (30, 60))
    a = phi_bounds("RBP(p=0.8, rel=2)", 60, runs, levels=4, resolution=1000)
    b = phi_bounds("RBP(p=0.8)", 60, (runs >= 2).astype(int), resolution=1000)
    assert a.size == 2**60 and np.array_equal(a.lo, b.lo) and np.array_equal(a.hi, b.hi)
