"""Rank maps: every engine against an independent brute-force oracle, the reference facts
of SPEC section 3, exactness, properties, the cache and Dask.

The oracle here shares no code with irscale.scales: it computes each run's value from
the measure's definition in exact rational arithmetic (fractions.Fraction; DCG in
60-digit mpmath) over all (c+1)^N runs, and ranks the distinct values.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale.scales import all_runs, build, space_for
from irscale.scales.engines import Buckets, Table, enumerate_engine, split_engine

# -- the independent oracle --------------------------------------------------------------------


def exact_value(name: str, run: tuple, c: int, N: int):
    """The RB-free core of the measure on one run, exactly."""
    rel = [g > 0 for g in run]
    if name in ("P", "R", "F"):
        return Fraction(sum(rel))
    if name == "RR":
        return next((Fraction(1, k + 1) for k, r in enumerate(rel) if r), Fraction(0))
    if name == "AP":
        total, hits = Fraction(0), 0
        for k, r in enumerate(rel):
            if r:
                hits += 1
                total += Fraction(hits, k + 1)
        return total
    if name.startswith("RBP"):
        p = Fraction(name[6:-1])
        gains = [Fraction(min(g, c), c) for g in run] if c > 1 else [Fraction(int(r)) for r in rel]
        return (1 - p) * sum(g * p**k for k, g in enumerate(gains))
    if name == "ERR":
        total, reach = Fraction(0), Fraction(1)
        for k, g in enumerate(run):
            R = Fraction(2**g - 1, 2**c)
            total += reach * R / (k + 1)
            reach *= 1 - R
        return total
    if name.startswith(("DCG", "nDCG")):
        import mpmath

        w = _dcg_weights(name, N)
        with mpmath.workdps(60):
            total = mpmath.mpf(0)
            for k, g in enumerate(run):
                if g > 0:
                    total += (g if c > 1 else 1) * w[k]
            return total
    raise KeyError(name)


_WEIGHTS = {}


def _dcg_weights(name, N):
    """60-digit discount weights 1/log_b(k) (1 up to rank b; trec_eval's 1/log2(k+1)
    without a base)."""
    import mpmath

    if (name, N) not in _WEIGHTS:
        base = None if "(" not in name else int(name.split("=")[1][:-1])
        with mpmath.workdps(60):
            _WEIGHTS[name, N] = [
                1 / mpmath.log(k + 1, 2) if base is None else (mpmath.mpf(1) if k <= base else 1 / mpmath.log(k, base))
                for k in range(1, N + 1)
            ]
    return _WEIGHTS[name, N]


def all_values(name: str, N: int, c: int) -> list:
    """exact_value of every run of itertools.product(range(c + 1), repeat=N), in that
    order, computed prefix by prefix: each run extends a prefix's partial sums with the
    same operations, in the same order, as exact_value (so the same exact values, and the
    same 60-digit DCG sums), without recomputing the prefix for each of its extensions."""
    rel = [g > 0 for g in range(c + 1)]
    if name in ("P", "R", "F"):
        step, start, end = (lambda s, k, g: s + rel[g]), 0, Fraction
    elif name == "RR":
        step = lambda s, k, g: s if s is not None or not rel[g] else Fraction(1, k + 1)  # noqa: E731
        start, end = None, (lambda s: Fraction(0) if s is None else s)
    elif name == "AP":

        def step(s, k, g):
            total, hits = s
            return (total + Fraction(hits + 1, k + 1), hits + 1) if rel[g] else s

        start, end = (Fraction(0), 0), (lambda s: s[0])
    elif name.startswith("RBP"):
        p = Fraction(name[6:-1])
        gains = [Fraction(min(g, c), c) for g in range(c + 1)] if c > 1 else [Fraction(int(r)) for r in rel]
        step, start, end = (lambda s, k, g: s + gains[g] * p**k), 0, (lambda s: (1 - p) * s)
    elif name == "ERR":
        Rg = [Fraction(2**g - 1, 2**c) for g in range(c + 1)]

        def step(s, k, g):
            total, reach = s
            return total + reach * Rg[g] / (k + 1), reach * (1 - Rg[g])

        start, end = (Fraction(0), Fraction(1)), (lambda s: s[0])
    elif name.startswith(("DCG", "nDCG")):
        import mpmath

        w = _dcg_weights(name, N)
        with mpmath.workdps(60):
            vals = [mpmath.mpf(0)]
            for k in range(N):
                vals = [t + (g if c > 1 else 1) * w[k] if g > 0 else t for t in vals for g in range(c + 1)]
        return vals
    else:
        raise KeyError(name)
    states = [start]
    for k in range(N):
        states = [step(s, k, g) for s in states for g in range(c + 1)]
    return [end(s) for s in states]


def brute_force(name, N, c):
    """(runs as tuples, phi unq, min, max) by sorting exact values."""
    runs = list(itertools.product(range(c + 1), repeat=N))
    vals = all_values(name, N, c)
    if not isinstance(vals[0], Fraction):  # 60-digit reals: equal iff equal to 50 digits
        import mpmath

        vals = [mpmath.mpf(mpmath.nstr(v, 50)) for v in vals]
    distinct = sorted(set(vals))
    phi = {v: i + 1 for i, v in enumerate(distinct)}
    count = {}
    for v in vals:
        count[v] = count.get(v, 0) + 1
    le, acc = {}, 0
    for v in distinct:
        acc += count[v]
        le[v] = acc
    return (
        runs,
        np.array([phi[v] for v in vals]),
        np.array([le[v] - count[v] + 1 for v in vals]),
        np.array([le[v] for v in vals]),
        len(distinct),
    )


BINARY = [
    "P",
    "R",
    "RR",
    "AP",
    "RBP(p=0.3)",
    "RBP(p=0.5)",
    "RBP(p=0.8)",
    "ERR",
    "DCG(base=2)",
    "DCG(base=10)",
    "nDCG(base=2)",
    "nDCG(base=10)",
    "DCG",
]


def _check_against(rm, name, N, c):
    runs, phi, lo, hi, size = brute_force(name, N, c)
    g = np.array(runs, dtype=np.int8)
    assert rm.size == size
    assert np.array_equal(rm.phi_runs(g), phi), f"{name} N={N}: phi differs from the oracle"
    assert np.array_equal(rm.phi_runs(g, "min"), lo)
    assert np.array_equal(rm.phi_runs(g, "max"), hi)
    assert np.array_equal(rm.phi_runs(g, "mid"), (lo + hi) / 2)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("N", [1, 2, 3, 6, 10])
def test_auto_engine_equals_oracle_binary(name, N):
    _check_against(build(name, N, cache=False), name, N, 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", BINARY + ["F"])
def test_every_engine_equals_oracle_at_N16(name):
    N = 16
    runs, phi, lo, hi, size = brute_force(name, N, 1)
    g = np.array(runs, dtype=np.int8)
    engines = ["auto", "oracle"]
    sp = space_for(name, N)
    if sp.int64 and not sp.closed:
        engines.append("enumerate")
    if sp.splittable:
        engines.append("split")
    if name.startswith(("RBP(p=0.8)", "DCG", "nDCG")):
        engines.append("count")
    if name.startswith(("DCG", "nDCG")):
        engines.append("dcg")
    for e in engines:
        rm = build(name, N, engine=e, cache=False)
        assert rm.size == size, e
        assert np.array_equal(rm.phi_runs(g), phi), e
        assert np.array_equal(rm.phi_runs(g, "mid"), (lo + hi) / 2), e


@pytest.mark.parametrize(
    "name,N",
    [
        ("DCG(base=2)", 6),
        ("nDCG(base=2)", 5),
        ("DCG", 5),
        ("RBP(p=0.8)", 6),
        ("RBP(p=0.5)", 5),
        ("ERR", 6),
        ("DCG(base=10)", 5),
    ],
)
def test_graded_three_levels_equal_oracle(name, N):
    _check_against(build(name, N, levels=3, cache=False), name, N, 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["DCG(base=2)", "RBP(p=0.8)", "ERR"])
def test_graded_three_levels_N9(name):
    N = 9
    _check_against(build(name, N, levels=3, cache=False), name, N, 2)


def test_split_buckets_equal_oracle():
    """Many tiny buckets (summary mode, keys regenerated on demand) give the same phi."""
    sp = space_for("AP", 12)
    runs, phi, lo, hi, size = brute_force("AP", 12, 1)
    summary = split_engine(sp, h=5, bucket_pairs=64, keep_in_memory=0)
    assert isinstance(summary, Buckets) and len(summary.bounds) > 20
    from irscale.scales.rankmap import RankMap

    rm = RankMap(sp, "split", summary.size, sp.n_runs, 0.0, summary)
    g = np.array(runs, dtype=np.int8)
    assert rm.size == size
    assert np.array_equal(rm.phi_runs(g), phi)
    assert np.array_equal(rm.phi_runs(g, "min"), lo)


# -- reference facts (SPEC section 3, the 2021 paper) --------------------------------------------


@pytest.mark.parametrize("N,size", [(5, 24), (10, 768), (15, 24576)])
def test_dcg_base2_sizes(N, size):
    assert build("DCG(base=2)", N, cache=False).size == size == 3 * 2 ** (N - 2)
    assert build("nDCG(base=2)", N, cache=False).size == size  # nDCG maps like DCG


@pytest.mark.parametrize("N", [1, 5, 30, 1000])
def test_rr_has_n_plus_1_values(N):
    rm = build("RR", N, cache=False)
    assert rm.size == N + 1 and rm.engine == "closed"


@pytest.mark.parametrize("p", ["0.3", "0.5", "0.8", "0.9", "0.25"])
def test_rational_rbp_has_2_to_the_n_values(p):
    assert build(f"RBP(p={p})", 14, cache=False).size == 2**14
    assert build(f"RBP(p={p})", 20, cache=False).size == 2**20


def test_ap_sizes_at_10_and_20():
    assert build("AP", 10, cache=False).size == 810
    assert build("AP", 20, cache=False).size == 644_203


def test_example_12_dcg_log2_N4():
    rm = build("DCG(base=2)", 4, cache=False)
    assert rm.size == 12
    phi = rm.phi_runs(
        np.array([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    )
    assert phi.tolist() == [12, 11, 10, 9, 9, 2, 1]
    assert rm.values(last=1)[0] == pytest.approx(3.131, abs=5e-4)


def test_closed_forms_are_instant_at_n_1000():
    import time

    for name in ["P", "R", "F", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "SBTO@1000", "gP@1000"]:
        t = time.perf_counter()
        rm = build(name, 1000, cache=False)  # RBP with p <= 1/2: 2^1000 values, Python-int keys
        g = np.zeros((3, rm.N), dtype=np.int8)
        g[1, -1] = 1  # one relevant document, at the last rank
        g[2, :] = 1
        phi = rm.phi_runs(g)
        assert phi[0] == 1 and phi[2] == rm.size and phi[0] < phi[1] < phi[2]
        assert time.perf_counter() - t < 1.0, name


# -- properties ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 1), min_size=14, max_size=14), min_size=2, max_size=30),
    st.sampled_from(["AP", "RBP(p=0.8)", "ERR", "DCG(base=2)", "RR", "P"]),
)
def test_phi_strictly_increasing_in_the_value(runs, name):
    rm = build(name, 14, cache=True)
    g = np.array(runs, dtype=np.int8)
    vals = [exact_value(name, tuple(r), 1, 14) for r in runs]
    if not isinstance(vals[0], Fraction):
        import mpmath

        vals = [mpmath.mpf(mpmath.nstr(v, 50)) for v in vals]
    phi = rm.phi_runs(g)
    for i in range(len(runs)):
        for j in range(len(runs)):
            assert (vals[i] < vals[j]) == (phi[i] < phi[j])
            assert (vals[i] == vals[j]) == (phi[i] == phi[j])


@pytest.mark.parametrize("name", ["P", "RBP(p=0.5)"])
def test_phi_is_affine_in_p_and_rbp_half(name):
    N = 12
    rm = build(name, N, cache=False)
    g = all_runs(N, 1)
    phi = rm.phi_runs(g).astype(float)
    m = build(name, N, cache=False).space
    from irscale.data import TopicStats
    from irscale.measures import parse_measure

    measure = parse_measure(f"{name}@{N}")
    vals = measure.batch(g[None].astype(np.int16), TopicStats.single([N, N]))[0]
    a, b = np.polyfit(vals, phi, 1)
    assert np.allclose(a * vals + b, phi, atol=1e-6)
    assert m.N == N


# -- exactness ------------------------------------------------------------------------------------


def test_rounding_to_8_decimals_would_merge_values_at_18():
    """SPEC section 3: at N = 18 rounding AP (with RB = N, the paper's run space) or
    RBP(0.8) to 8 decimals merges distinct values; irscale's exact keys do not."""
    rm = build("AP", 18, cache=False)
    keys = rm.summary.keys
    assert isinstance(rm.summary, Table) and len(keys) == rm.size == len(np.unique(keys))
    ap = rm.space.key_values(keys) / 18  # AP with RB = N
    assert len(np.unique(np.round(ap, 8))) < rm.size
    # the size agrees with an exact count over all 2^18 runs (integer numerators over lcm(1..18))
    L = math.lcm(*range(1, 19))
    g = all_runs(18, 1).astype(np.int64)
    numerators = (np.cumsum(g, axis=1) * g * (L // np.arange(1, 19))).sum(axis=1)
    assert len(np.unique(numerators)) == rm.size

    rbp = build("RBP(p=0.8)", 18, cache=False)
    vals = rbp.space.key_values(rbp.summary.keys)
    assert rbp.size == 2**18 == len(np.unique(rbp.summary.keys))
    assert len(np.unique(np.round(vals, 8))) < rbp.size


# -- cache ------------------------------------------------------------------------------------------


def test_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    from irscale.scales import cache_clear, cache_info

    first = build("AP", 16)
    assert cache_info()["entries"] and first.cached is not False
    second = build("AP", 16)
    assert second.size == first.size and isinstance(second.summary, Table)
    g = all_runs(16, 1)[::97]
    assert np.array_equal(first.phi_runs(g), second.phi_runs(g))
    assert cache_clear() == 1
    assert cache_info()["entries"] == []


def test_bucket_summary_and_answers_persist(tmp_path, monkeypatch):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    from irscale.scales import rankmap as R

    sp = space_for("AP", 14)
    summary = split_engine(sp, h=7, bucket_pairs=256, keep_in_memory=0)
    rm = R.RankMap(sp, "split", summary.size, sp.n_runs, 0.0, summary)
    assert R._cache_save(rm)
    rm.cached = True
    g = all_runs(14, 1)
    phi = rm.phi_runs(g[::7])
    loaded = R._cache_load(sp, "split")
    assert isinstance(loaded.summary, Buckets)
    known, _ = loaded._answers()
    assert len(known) == len(np.unique(sp.keys(g[::7])))  # answers came back from disk
    assert np.array_equal(loaded.phi_runs(g[::7]), phi)
    assert np.array_equal(loaded.phi_runs(g), build("AP", 14, engine="oracle", cache=False).phi_runs(g))


# -- Dask ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_enumeration_on_a_local_dask_cluster_equals_single_process():
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the test extra")
    sp = space_for("ERR", 14)
    single = enumerate_engine(sp, chunk=2**11)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        many = enumerate_engine(sp, chunk=2**11, scheduler=client)
        split = split_engine(space_for("AP", 14), bucket_pairs=512, scheduler=client)
        # the count engine's queries, its halves scattered once to the workers
        counted = build("DCG", 16, 3, engine="count", cache=False, scheduler=client)
        g = np.random.default_rng(5).integers(0, 3, (100, 16)).astype(np.int8)
        on_cluster = counted.rank(counted.space.keys(g), ("unq", "mid"))
    local = build("DCG", 16, 3, engine="count", cache=False).rank(counted.space.keys(g), ("unq", "mid"))
    assert all(np.array_equal(on_cluster[t], local[t]) for t in local)
    assert np.array_equal(single.keys, many.keys) and np.array_equal(single.runs, many.runs)
    ref = split_engine(space_for("AP", 14), bucket_pairs=512)
    assert np.array_equal(ref.keys, split.keys)


# -- user-defined measures: the plain enumeration engine ---------------------------------------------


def test_user_defined_measures_enumerate_exactly():
    from dataclasses import dataclass

    from irscale.measures import Measure
    from irscale.measures.base import REGISTRY, register

    @register("MyRR")
    @dataclass(frozen=True)
    class MyRR(Measure):  # reciprocal rank, written by a user
        cutoff: int | None = None

        def batch(self, grades, topics):
            r = grades[..., : self.cutoff] > 0
            return np.where(r.any(-1), 1.0 / (np.argmax(r, -1) + 1.0), 0.0)

    @register("MyAP")
    @dataclass(frozen=True)
    class MyAP(Measure):  # an exact key supplied by the user: L * RB * AP
        cutoff: int | None = None

        def batch(self, grades, topics):
            raise AssertionError("not used: exact_key is preferred")

        def exact_key(self, g, c):
            L = math.lcm(*range(1, g.shape[1] + 1))
            r = (g > 0).astype(np.int64)
            return (np.cumsum(r, 1) * r * (L // np.arange(1, g.shape[1] + 1))).sum(1)

    try:
        for N in (6, 13):
            g = all_runs(N, 1)
            mine = build("MyRR", N, cache=False)
            assert mine.engine == "enumerate"
            assert mine.size == N + 1
            assert np.array_equal(mine.phi_runs(g), build("RR", N, cache=False).phi_runs(g))
            ap = build("MyAP", N, cache=False)
            assert np.array_equal(ap.phi_runs(g), build("AP", N, engine="oracle", cache=False).phi_runs(g))
    finally:
        REGISTRY.pop("MyRR")
        REGISTRY.pop("MyAP")


def test_measures_without_a_ranked_version_say_so():
    from irscale.errors import MeasureError

    for name in ("bpref", "Rprec", "Success"):
        with pytest.raises(MeasureError):
            build(name, 10, cache=False)
