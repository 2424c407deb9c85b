"""Certified bounds on phi (scales/bounds.py) at the longest runs an exact engine serves:
N = 35 and 40, binary runs, against the count engine's exact phi (meet in the middle).

For RBP (p = 0.8, 0.9, 0.95) and DCG / nDCG (the trec_eval discount, and log bases 2 and
10), on the extreme runs (none relevant, all relevant, one relevant at each rank, all but
one relevant at each rank), random dense and sparse runs, and pairs of random runs that
differ at the last rank only (values the smallest weight apart): the bounds contain
the exact normalised phi with zero tolerance, lo <= hi, lo and hi are non-decreasing in
the exact phi, and the bounds' size is the rank map's size. The RBP grid is also taken at
a resolution low enough that the deep ranks are cut off (K < N).

The count engine's phi for RBP at N = 40 is itself checked against a count that shares no
code with the engines: a meet in the middle written here over the exact integer keys
sum_k x_k a^(k-1) b^(N-k) (p = a/b), the two halves of 20 ranks placed by float
searchsorted and every pair within a proven float error of the query decided on Python
integers."""

from fractions import Fraction

import numpy as np
import pytest

from irscale.scales import build
from irscale.scales.bounds import dcg_bounds, rbp_bounds

RBP = ["RBP(p=0.8)", "RBP(p=0.9)", "RBP(p=0.95)"]
DCG = ["DCG", "DCG(base=2)", "DCG(base=10)", "nDCG", "nDCG(base=10)"]


def _runs(N: int) -> np.ndarray:
    """Rows 0 and 1: none and all relevant; 2..N+1: one relevant at each rank; N+2..2N+1:
    all but one at each rank; then random dense and sparse runs, and random runs twinned
    with their last rank flipped (values the smallest weight apart)."""
    rng = np.random.default_rng(N)
    eye = np.eye(N, dtype=int)
    twins = rng.integers(0, 2, (10, N))
    twins[:, -1] = 0
    flipped = twins.copy()
    flipped[:, -1] = 1
    return np.vstack(
        [
            np.zeros((1, N), int),
            np.ones((1, N), int),
            eye,
            1 - eye,
            rng.integers(0, 2, (40, N)),
            (rng.random((20, N)) < 0.1).astype(int),
            twins,
            flipped,
        ]
    )


_EXACT: dict = {}  # (space identity, N) -> (rank map, its normalised phi of _runs(N))


def _exact(measure: str, N: int):
    """The count engine's rank map (built afresh, no cache) and the exact normalised phi of
    _runs(N); measures of one space (DCG and nDCG) share one rank map, as the cache would."""
    from irscale.measures import parse_measure
    from irscale.scales.spaces import space_for

    key = (space_for(parse_measure(measure), N, 1).identity, N)
    if key not in _EXACT:
        rm = build(measure, N, 2, cache=False)
        assert rm.engine == "count", (measure, N, rm.engine)
        _EXACT[key] = rm, rm.normalized(rm.phi_runs(_runs(N)))
    return _EXACT[key]


def _check(b, exact: np.ndarray, size: int, what) -> None:
    """Zero-tolerance containment, lo <= hi, monotone in the exact phi, the right size."""
    assert b.size == size, what
    bad = np.flatnonzero((b.lo > exact) | (exact > b.hi))
    assert not len(bad), [(what, int(i), b.lo[i], exact[i], b.hi[i]) for i in bad[:5]]
    assert (b.lo <= b.hi).all(), what
    order = np.argsort(exact, kind="stable")
    assert (np.diff(b.lo[order]) >= 0).all() and (np.diff(b.hi[order]) >= 0).all(), what
    assert b.confidence == 0.0 and b.width <= b.max_width + 1e-15, what


@pytest.mark.slow
@pytest.mark.parametrize("measure", RBP)
@pytest.mark.parametrize("N", [35, 40])
def test_rbp_bounds_contain_the_count_engines_phi(measure, N):
    runs = _runs(N)
    rm, exact = _exact(measure, N)
    assert rm.size == 2**N
    assert exact[0] == 1 / 2**N and exact[1] == 1.0  # none relevant: the least; all: the greatest
    cut = False
    for resolution in (64, 10_000) + ((100_000,) if N == 40 else ()):
        b = rbp_bounds(measure, N, runs, resolution=resolution)
        _check(b, exact, rm.size, (measure, N, resolution))
        cut |= b.details["levels exact"] < N
    if measure == "RBP(p=0.8)":
        assert cut  # at resolution 64 the ranks past K = 28 are bounded, not computed


@pytest.mark.slow
@pytest.mark.parametrize("measure", DCG)
@pytest.mark.parametrize("N", [35, 40])
def test_dcg_bounds_contain_the_count_engines_phi(measure, N):
    runs = _runs(N)
    rm, exact = _exact(measure, N)
    assert exact[0] == 1 / rm.size and exact[1] == 1.0
    for grid in (1000, 100_000) + ((1_000_000,) if (N, measure) == (40, "DCG") else ()):
        b = dcg_bounds(measure, N, runs, grid=grid)
        _check(b, exact, rm.size, (measure, N, grid))
    assert b.max_width < 1e-3


def test_dcg_bounds_resolve_the_far_tail_relatively():
    """Runs with a few relevant documents at the bottom ranks have phi / |M| of 1e-12 to
    1e-6 at N = 40: the table's float error is bounded relative to each probability, so
    their bounds stay a few percent wide instead of an absolute margin (about 1e-9 at grid
    10^6) swallowing them."""
    N = 40
    runs = np.zeros((8, N), int)
    for k in range(1, 8):
        runs[k, -k:] = 1
    rm = build("DCG", N, 2)
    exact = rm.normalized(rm.phi_runs(runs))
    b = dcg_bounds("DCG", N, runs, grid=1_000_000)
    assert ((b.lo <= exact) & (exact <= b.hi)).all()
    assert exact[2] < 1e-10 and (b.lo[2:] > 0).all()
    assert ((b.hi[3:] - b.lo[3:]) / exact[3:] < 0.05).all(), (b.lo, exact, b.hi)


# -- an independent count of RBP's phi at N = 40 -----------------------------------------------------


def _half(weights: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Float sums of every subset of ``weights`` (index bit k: weight k taken), sorted, and
    the permutation that sorted them (the subsets' codes)."""
    vals = np.zeros(1)
    for w in weights:
        vals = np.concatenate([vals, vals + float(w)])
    codes = np.argsort(vals, kind="stable")
    return vals[codes], codes


def _exact_sum(weights: list[int], code: int) -> int:
    return sum(w for k, w in enumerate(weights) if code >> k & 1)


def _phi_meet_in_the_middle(p: Fraction, N: int, runs: np.ndarray) -> list[int]:
    """phi of each run: the number of the 2^N runs whose key sum_k y_k a^(k-1) b^(N-k) is
    at most the run's (every run has its own value for rational p, so runs counted are
    values counted).

    Floats: each half's sums add at most 20 correctly rounded terms, so they lie within
    ~21 u T of the exact sum (u = 2^-53, T the sum of all weights; the terms are
    nonnegative); the query's t = float(X) - s within ~23 u T more. Pairs whose float
    position is more than delta = 2^-40 T (far above 100 u T) from the query's are decided
    by the floats; the pairs within delta, by Python integers."""
    a, b = p.numerator, p.denominator
    w = [a ** (k - 1) * b ** (N - k) for k in range(1, N + 1)]
    T = sum(w)
    h = N // 2
    wp, ws = w[:h], w[h:]
    P, Pcode = _half(wp)
    S, Scode = _half(ws)
    delta = T * 2.0**-40
    out = []
    for run in runs:
        X = sum(wk for wk, x in zip(w, run) if x)
        t = float(X) - S
        below = np.searchsorted(P, t - delta, side="right")  # P <= t - delta: surely <= X - s
        near = np.searchsorted(P, t + delta, side="right")  # beyond: surely > X - s
        count = int(below.sum(dtype=np.int64))
        for j in np.flatnonzero(near > below):
            s = _exact_sum(ws, int(Scode[j]))
            count += sum(_exact_sum(wp, int(Pcode[i])) + s <= X for i in range(below[j], near[j]))
        out.append(count)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("p", ["0.8", "0.95"])
def test_the_count_engines_rbp_phi_at_n_40_equals_an_independent_count(p):
    """None and all relevant, one relevant at ranks 1, 20, 21 and 40, all but ranks 1 and 40,
    two random dense runs, a sparse one and a pair of twins."""
    N = 40
    rows = [0, 1, 2, 21, 22, 41, 42, 81, 82, 83, 122, 142, 152]
    runs = _runs(N)[rows]
    mine = _phi_meet_in_the_middle(Fraction(p), N, runs)
    assert mine[0] == 1 and mine[1] == 2**N and mine[-1] > mine[-2]  # the twin with rank 40 relevant
    rm, exact = _exact(f"RBP(p={p})", N)
    assert rm.size == 2**N
    assert [int(x) for x in rm.phi_runs(runs)] == mine
    assert np.array_equal(exact[rows], np.array(mine) / 2**N)
