"""The count engine (scales/counting.py, scales/merge.py): its merge kernels against a
brute force over pairs, graded RBP phi against an independent meet-in-the-middle count
in plain integers (beyond 64 bits too), the numpy and numba kernels and the local and
Dask schedulers giving the same answers, and engines refusing sizes up front."""

from __future__ import annotations

import bisect
import contextlib
import time
from itertools import product

import numpy as np
import pytest
from typer.testing import CliRunner

from irscale import kernels
from irscale.errors import ArgumentError, IrscaleError
from irscale.scales import build, merge
from irscale.scales.rankmap import pick_engine

# -- the merge kernels against pairs counted one by one -----------------------------------------


def _pairs_brute(P, S, Pn, Sn, x, tol):
    """Pairs surely below x - tol, pairs not above x + tol, and exact runs behind the first."""
    lo = hi = 0
    runs = 0
    band = set()
    for i, p in enumerate(P):
        for j, s in enumerate(S):
            t = x - p
            if s < t - tol:
                lo += 1
                runs += int(Pn[i]) * int(Sn[j])
            if s <= t + tol:
                hi += 1
                if not s < t - tol:
                    band.add((i, j))
    return lo, hi, runs, band


@pytest.mark.parametrize("use_numba", [False, True])
@pytest.mark.parametrize("s_range", [4.0, 0.3])
def test_merge_kernels_equal_pairs_counted_one_by_one(use_numba, s_range):
    """S spanning P's range (a query's window is most of P), and S narrow (RBP's ranks of
    small weight: the window is a slice of P, the values below it counted at once)."""
    if use_numba and not merge.have_numba():
        pytest.skip("numba is not installed (pip install numba)")
    with contextlib.nullcontext() if use_numba else kernels.disabled("scales.merge"):
        _check_merge_kernels(s_range)


def _check_merge_kernels(s_range):
    rng = np.random.default_rng(7)
    P = np.sort(np.round(rng.random(120) * 4, 2))  # rounded: many equal and near-equal sums
    S = np.sort(np.round(rng.random(90) * s_range, 2))
    Pn = rng.integers(1, 2**40, len(P)).astype(np.uint64)  # products up to 2^80: sums wrap 2^64
    Sn = rng.integers(1, 2**40, len(S)).astype(np.uint64)
    Sc = np.concatenate([[0], np.cumsum(Sn, dtype=np.uint64)]).astype(np.uint64)
    Pc = np.concatenate([[0], np.cumsum(Pn, dtype=np.uint64)]).astype(np.uint64)
    xs = np.sort(np.concatenate([P[:5] + S[-5:], rng.random(20) * 8, [0.0, -1.0, 9.0]]))
    tol = np.full(len(xs), 1e-9)
    lo, hi, wmod, wflt, bi, bj = merge.scan(P, S, Pn, Pc, Sc, xs, tol)
    for q, x in enumerate(xs):
        blo, bhi, runs, band = _pairs_brute(P, S, Pn, Sn, x, 1e-9)
        assert (lo[q], hi[q]) == (blo, bhi)
        assert merge.exact_sum(wmod[q], wflt[q]) == runs
        i, j = merge.band(P, S, x, 1e-9, int(hi[q] - lo[q]))
        assert set(zip(i.tolist(), j.tolist())) == band
        if bi is not None and len(band) <= merge.BAND:
            assert set(zip(bi[q, : len(band)].tolist(), bj[q, : len(band)].tolist())) == band


def test_spread_is_a_stable_sort_of_the_shifted_copies():
    """The half builder's k-way merge (numba) gives the arrays a stable sort of
    ``vals[:, None] + shifts`` gives (its numpy path), ties and all, codes and runs."""
    if not merge.have_numba():
        pytest.skip("numba is not installed: both sides would be the numpy sort")
    rng = np.random.default_rng(5)
    vals = np.sort(np.round(rng.random(300) * 3, 1))  # many equal values
    codes = rng.permutation(300).astype(np.int64)
    runs = rng.integers(1, 2**20, 300).astype(np.uint64)
    for shifts, ways in (([0.0, 0.5, 1.0], [1, 2, 1]), ([0.0, 0.1, 0.2, 0.3, 2.5], [1, 4, 6, 4, 1]), ([0.7], [3])):
        got = merge.spread(vals, codes, runs, shifts, len(shifts), ways)
        with kernels.disabled("scales.merge.spread"):
            ref = merge.spread(vals, codes, runs, shifts, len(shifts), ways)
        v = (vals[:, None] + np.array(shifts)[None, :]).reshape(-1)
        assert (np.diff(got[0]) >= 0).all() and sorted(v.tolist()) == got[0].tolist()
        for a, b in zip(got, ref):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        assert merge.spread(vals, codes, None, shifts, len(shifts), None)[2] is None


def test_exact_sum_recovers_integers_beyond_64_bits():
    rng = np.random.default_rng(3)
    for _ in range(200):
        true = int(rng.integers(0, 2**62)) * int(rng.integers(1, 2**20)) + int(rng.integers(0, 2**30))
        approx = float(true) * (1 + float(rng.normal()) * 1e-9)  # a float sum's error, and more
        assert merge.exact_sum(np.uint64(true % 2**64), approx) == true


# -- graded RBP: phi counted against plain integers ------------------------------------------------


def _rbp_keys(N, a, b, c, ranks):
    """Exact keys sum of g_k a^(k-1) b^(N-k) of every grade assignment to ``ranks`` (1-based)."""
    w = [a ** (k - 1) * b ** (N - k) for k in ranks]
    return [sum(g * x for g, x in zip(gs, w)) for gs in product(range(c + 1), repeat=len(ranks))]


@pytest.mark.slow
@pytest.mark.parametrize("p,a,b,N", [("0.8", 4, 5, 22), ("0.95", 19, 20, 22)])
def test_graded_rbp_phi_counts_runs_below_exactly(p, a, b, N):
    """3 levels, b > c: every run has its own value, so phi(run) = runs with key <= its key;
    counted here by a meet in the middle over Python integers (keys reach 2^57 at p = 0.8,
    2^96 at p = 0.95: beyond int64)."""
    c, h = 2, N // 2
    rm = build(f"RBP(p={p})", N, 3, cache=False)
    assert rm.engine == "count" and rm.size == 3**N
    pre = _rbp_keys(N, a, b, c, range(1, h + 1))
    suf = sorted(_rbp_keys(N, a, b, c, range(h + 1, N + 1)))
    rng = np.random.default_rng(int(b))
    runs = rng.integers(0, c + 1, (3, N)).astype(np.int8)
    runs = np.vstack([runs, np.zeros((1, N), np.int8), np.full((1, N), c, np.int8)])
    w = [a ** (k - 1) * b ** (N - k) for k in range(1, N + 1)]
    keys = rm.space.keys(runs)
    for run, key in zip(runs, keys):
        K = sum(int(g) * x for g, x in zip(run, w))
        assert int(key) == K
        expected = sum(bisect.bisect_right(suf, K - v) for v in pre)
        got_unq, got_mid = rm.rank(np.array([key], dtype=keys.dtype), ("unq", "mid")).values()
        assert int(got_unq[0]) == expected
        assert got_mid[0] == expected  # one run per value: mid rank = its rank
    assert int(rm.rank(keys[-2:-1])["unq"][0]) == 1 and int(rm.rank(keys[-1:])["unq"][0]) == 3**N


def test_rbp_at_or_below_one_over_c_plus_one_is_lexicographic():
    """p <= 1/(c+1): runs ordered as base-(c+1) numbers (closed form, no build)."""
    rm = build("RBP(p=0.3)", 12, 3, cache=False)
    assert rm.engine == "closed" and rm.size == 3**12
    runs = np.array(list(product(range(3), repeat=5)), dtype=np.int8)
    runs = np.hstack([runs, np.zeros((len(runs), 7), np.int8)])
    exact = [sum(int(g) * 3**k * 10 ** (11 - k) for k, g in enumerate(r)) for r in runs]  # p = 3/10
    phi = rm.phi_runs(runs)
    assert (np.argsort(exact, kind="stable") == np.argsort(phi, kind="stable")).all()
    assert len(set(phi.tolist())) == len(runs)


# -- implementations and schedulers agree ------------------------------------------------------------


def _sample_keys(rm, n, seed=0):
    g = np.random.default_rng(seed).integers(0, rm.space.c + 1, (n, rm.N)).astype(np.int8)
    return rm.space.keys(g)


@pytest.mark.slow
@pytest.mark.parametrize("measure,N,levels", [("DCG", 14, 3), ("RBP(p=0.8)", 14, 3)])
def test_numpy_and_numba_kernels_and_schedulers_agree(measure, N, levels):
    rm = build(measure, N, levels, engine="count", cache=False)
    keys = _sample_keys(rm, 150)
    ref = {k: rm.summary.count_many(keys, weighted=w) for k, w in (("unq", False), ("le", True))}
    vs = rm.summary
    try:
        with kernels.disabled("scales.merge"):  # the numpy merge
            assert (vs.count_many(keys) == ref["unq"]).all()
            assert (vs.count_many(keys, weighted=True) == ref["le"]).all()
        for scheduler in ("threads", "synchronous"):
            vs.scheduler = scheduler
            assert (vs.count_many(keys) == ref["unq"]).all()
    finally:
        vs.scheduler = None
    other = build(measure, N, levels, engine="dcg" if measure == "DCG" else "split", cache=False)
    assert (other.rank(keys)["unq"] == ref["unq"]).all()
    lo_hi = other.rank(keys, ("max",))["max"]
    assert (lo_hi == np.array(ref["le"], dtype=np.float64)).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "measure,N,other",
    [("nDCG", 16, "dcg"), ("DCG(base=10)", 15, "dcg"), ("RBP(p=0.8)", 16, "split"), ("RBP(p=0.95)", 12, "split")],
)
def test_count_engine_equals_the_listing_engines_near_ties(measure, N, other):
    """The count engine's float tolerance (a proven bound, :func:`_tolerance`) decides as
    the engines that list every value do: phi and run counts of 3,000 random runs and of
    runs whose values crowd together (one relevant document at each rank, all-relevant
    prefixes), 3 levels."""
    cnt = build(measure, N, 3, engine="count", cache=False)
    ref = build(measure, N, 3, engine=other, cache=False)
    g = np.random.default_rng(1).integers(0, 3, (3000, N)).astype(np.int8)
    extra = np.zeros((2 * N, N), np.int8)
    for k in range(N):
        extra[k, k] = 1
        extra[N + k, : k + 1] = 2
    keys = cnt.space.keys(np.vstack([g, extra]))
    a, b = cnt.rank(keys, ("unq", "mid")), ref.rank(keys, ("unq", "mid"))
    assert all(np.array_equal(a[t], b[t]) for t in a)


# -- limits: refused before anything is allocated -------------------------------------------------


@pytest.mark.parametrize("engine,words", [("split", "pairs"), ("enumerate", "runs")])
def test_split_and_enumerate_refuse_sizes_up_front(engine, words):
    t = time.perf_counter()
    with pytest.raises(IrscaleError, match=f"would (produce|visit|list) 95,367,431,640,625 .*{words}"):
        build("RBP(p=0.5)", 20, 5, engine=engine, cache=False)  # 5^20 runs; keys fit in int64
    assert time.perf_counter() - t < 5  # was a 43 GiB ArrayMemoryError after minutes


def test_cli_refuses_too_large_split_with_exit_2():
    from irscale.cli import app

    res = CliRunner().invoke(app, ["rankmap", "RBP(p=2/3)", "-N", "20", "--levels", "5", "--no-cache"])
    assert res.exit_code == 2
    assert "split engine would list" in res.output and "Traceback" not in res.output


def test_count_refuses_rbp_with_ties():
    with pytest.raises(IrscaleError, match="b <= c"):  # (RBP(p=0.5) on 3 levels is a closed form now)
        build("RBP(p=2/3)", 12, 4, engine="count", cache=False)


def test_lenient_refuses_measures_above_grade_one(tmp_path):
    import irscale
    from irscale.io import Qrels, Run

    q = Qrels.from_records([("1", "a", 2), ("1", "b", 1), ("1", "c", 0)])
    r = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)], name="r")
    t = irscale.evaluate(q, [r], ["AP"])
    with pytest.raises(ArgumentError, match=r"AP\(rel=2\).*relevance='graded'"):
        irscale.transform(t, ["AP(rel=2)"], depth=3, relevance="lenient")
    out = irscale.transform(t, ["AP(rel=1)"], depth=3, relevance="lenient")
    assert out.values.shape[0] == 2


def test_count_engine_reports_progress_per_block_of_queries():
    seen = []
    rm = build("DCG", 12, 3, engine="count", cache=False, progress=lambda d, t: seen.append((d, t)))
    seen.clear()  # the build itself has no steps; the queries do
    keys = _sample_keys(rm, 40)
    rm.rank(keys)
    n_blocks = -(-len(np.unique(keys)) // 16)
    assert seen and seen[-1] == (n_blocks, n_blocks) and [d for d, _ in seen] == list(range(1, n_blocks + 1))


def test_transform_reports_steps_within_rank_maps():
    import irscale
    from irscale.io import Qrels, Run

    q = Qrels.from_records([("1", d, g) for d, g in zip("abcdef", [2, 1, 0, 2, 1, 0])])
    r = Run.from_records([("1", d, float(10 - i)) for i, d in enumerate("fedcba")], name="r")
    steps = []
    irscale.transform(
        irscale.evaluate(q, [r], ["AP"]),
        ["RBP(p=0.8)"],
        depth=14,
        relevance="graded",
        cache=False,
        steps=lambda m, d, t: steps.append((m, d, t)),
    )
    assert steps and all(m == "RBP(p=0.8)@14" for m, _, _ in steps) and steps[-1][1] == steps[-1][2]


def test_warm_count_map_answers_from_the_cache_without_building(monkeypatch, tmp_path):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    cold = build("RBP(p=0.8)", 16, 3)
    keys = _sample_keys(cold, 50)
    first = cold.rank(keys, ("unq", "mid"))
    warm = build("RBP(p=0.8)", 16, 3)
    again = warm.rank(keys, ("unq", "mid"))
    assert warm.from_cache and warm.summary._counter is None  # answered from the stored answers
    assert all((first[t] == again[t]).all() for t in first)
    new = _sample_keys(cold, 5, seed=9)
    assert (warm.rank(new, ("unq", "mid"))["mid"] == cold.rank(new, ("unq", "mid"))["mid"]).all()
    assert warm.summary._counter is not None  # a new key builds the halves


def test_dcg_count_with_a_wide_gain_map_equals_the_listing():
    """Half codes are indices in the half (they wrapped in int64 when a gain map scaled the
    class sums' radix past 2^63: 183 of 400 phi off by one)."""
    m = "nDCG(gains=0:0,1:1,2:100000)@10"
    counted, listed = build(m, 10, 3, engine="count", cache=False), build(m, 10, 3, engine="dcg", cache=False)
    g = np.random.default_rng(0).integers(0, 3, (400, 10)).astype(np.int8)
    keys = counted.space.keys(g)
    a, b = counted.rank(keys, ("unq", "mid")), listed.rank(keys, ("unq", "mid"))
    assert all(np.array_equal(a[t], b[t]) for t in a)


def test_gain_maps_too_fine_to_list_and_err_on_many_levels_are_refused_clearly():
    from irscale.errors import MeasureError
    from irscale.scales import space_for

    with pytest.raises(MeasureError, match="fewer decimal digits"):  # was a bare MemoryError
        pick_engine(space_for("nDCG(gains=0:0,1:0.1,2:0.123456789)@10", 10, 2))
    with pytest.raises(MeasureError, match="exact at no N on 64 levels; use fewer levels"):  # was ValueError
        pick_engine(space_for("ERR@3", 3, 63))
