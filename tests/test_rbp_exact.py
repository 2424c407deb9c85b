"""Binary RBP with p close to 1: phi must be exact at every N an engine accepts.

The reference is an independent meet-in-the-middle count written here from the
definition, in Python integers only (no code shared with irscale.scales): with p = a/b,
RBP = (1 - p) sum_k x_k p^(k-1) orders runs like the integer key
K(x) = sum_k x_k a^(k-1) b^(N-k), and all 2^N keys are distinct, so
phi(x) = |{runs y : K(y) <= K(x)}|. Ranks split into two halves; each half's partial
keys are listed (sorted Python ints) and, for every prefix value v, the suffix values
<= K(x) - v are found by bisection.

Before the fix the count engine built the halves' keys in int64: RBP(p=0.95) was wrong
for every run at N = 29 and 30 (phi = 2^30 = 1,073,741,824 for a run whose phi is
976,409,577) and raised OverflowError at N = 32; RBP(p=0.99) was wrong at N = 19, 20
and raised from N = 21.
"""

from __future__ import annotations

import bisect
import random
from fractions import Fraction

import numpy as np
import pytest

import irscale
from irscale.errors import IrscaleError
from irscale.io import Qrels, Run
from irscale.scales import build


def _weights(p: float, N: int) -> list[int]:
    f = Fraction(str(p))
    a, b = f.numerator, f.denominator
    return [a ** (k - 1) * b ** (N - k) for k in range(1, N + 1)]


def _half_keys(ws: list[int]) -> list[int]:
    keys = [0]
    for w in ws:
        keys = keys + [k + w for k in keys]
    return sorted(keys)


def oracle_phi(p: float, N: int, runs) -> list[int]:
    """Exact phi of binary runs under RBP(p) at length N, in Python integers."""
    w = _weights(p, N)
    h = N // 2
    prefix, suffix = _half_keys(w[:h]), _half_keys(w[h:])
    out = []
    for run in runs:
        K = sum(wk for wk, x in zip(w, run) if x)
        out.append(sum(bisect.bisect_right(suffix, K - v) for v in prefix))
    return out


def _runs(N: int, seed: int, n_random: int = 4) -> np.ndarray:
    rng = random.Random(seed)
    runs = [[rng.randint(0, 1) for _ in range(N)] for _ in range(n_random)]
    runs += [[0] * N, [1] * N]
    for k in (0, N // 2, N - 1):  # one relevant document: first rank, first suffix rank, last rank
        runs.append([int(i == k) for i in range(N)])
    return np.array(runs, dtype=np.int8)


def test_oracle_against_brute_force():
    """The oracle itself, on every run at N = 10 (sorting all 2^10 exact RBP values)."""
    N, p = 10, 0.95
    runs = [[(i >> (N - 1 - k)) & 1 for k in range(N)] for i in range(2**N)]
    vals = [sum(Fraction(str(p)) ** k for k, x in enumerate(r) if x) for r in runs]
    order = sorted(vals)
    assert len(set(vals)) == 2**N
    assert oracle_phi(p, N, runs) == [bisect.bisect_right(order, v) for v in vals]


CASES = [(p, N) for p in (0.8, 0.9, 0.95, 0.99) for N in (16, 17, 19, 20, 21, 24, 29, 30, 31, 32)]


@pytest.mark.parametrize(
    "p,N", [pytest.param(p, N, marks=pytest.mark.slow) if (p, N) == (0.8, 24) else (p, N) for p, N in CASES]
)
@pytest.mark.slow
def test_rbp_phi_is_exact(p, N):
    runs = _runs(N, seed=1000 * N + int(p * 100))
    rm = build(f"RBP(p={p})", N, cache=False)
    assert rm.size == 2**N
    expected = oracle_phi(p, N, runs.tolist())
    assert rm.phi_runs(runs).tolist() == expected
    assert expected[4] == 1 and expected[5] == 2**N  # all-zero, all-one
    # every run has its own value: min = max = mid = phi (runs at or below = phi)
    for ties in ("min", "max", "mid"):
        assert rm.phi_runs(runs, ties=ties).tolist() == [float(e) for e in expected]


def test_many_queries_at_once_are_exact():
    """Past 256 queries the counter searches all of them per prefix value (count_many)."""
    N, p = 20, 0.99
    rng = np.random.default_rng(7)
    runs = rng.integers(0, 2, size=(300, N)).astype(np.int8)
    rm = build(f"RBP(p={p})", N, cache=False)
    assert rm.engine == "count"
    expected = oracle_phi(p, N, runs.tolist())
    assert rm.phi_runs(runs).tolist() == expected
    assert rm.phi_runs(runs, ties="mid").tolist() == [float(e) for e in expected]
    # a query whose keys all fit in int64 after queries that did not: one key form, same answers
    assert rm.phi_runs(np.zeros((1, N), dtype=np.int8)).tolist() == [1]


def test_count_engine_equals_the_oracle_on_every_run_beyond_int64():
    """RBP(p=0.99) at N = 12: keys reach 100^11 (beyond int64), so the count engine
    serves it; the brute-force oracle works on the same Python-int keys."""
    from irscale.scales import all_runs

    g = all_runs(12, 1)
    rm = build("RBP(p=0.99)", 12, cache=False)
    assert rm.engine == "count" and not rm.space.int64
    truth = build("RBP(p=0.99)", 12, engine="oracle", cache=False)
    assert truth.size == 2**12
    assert np.array_equal(rm.phi_runs(g), truth.phi_runs(g))
    assert rm.phi_runs(g).tolist() == oracle_phi(0.99, 12, g.tolist())


def test_transform_at_30_matches_the_oracle():
    """A toy ScoreTable: transform's ranked RBP(p=0.95) at N = 30 equals the oracle's phi
    of each (system, topic) relevance vector, padded to 30."""
    rng = random.Random(3)
    docs = [f"d{i}" for i in range(40)]
    qrels, runs, vectors = [], [], {}
    for t in ("1", "2"):
        rel = set(rng.sample(docs, 18))
        qrels += [(t, d, int(d in rel)) for d in docs]
    for s in range(3):
        recs = []
        for t in ("1", "2"):
            ranking = rng.sample(docs, 25 + 2 * s)  # shorter than 30: padded with non-relevant
            recs += [(t, d, float(100 - i)) for i, d in enumerate(ranking)]
            rel = {d for (tt, d, g) in qrels if tt == t and g}
            vectors[(f"s{s}", t)] = [int(d in rel) for d in ranking] + [0] * (30 - len(ranking))
        runs.append(Run.from_records(recs, name=f"s{s}"))
    table = irscale.evaluate(Qrels.from_records(qrels), runs, ["RBP(p=0.95)"])
    out = irscale.transform(table, ["RBP(p=0.95)"], depth=30, cache=False)
    col = [str(m) for m in out.measures].index("ranked(RBP(p=0.95)@30)")
    keys = sorted(vectors)
    expected = oracle_phi(0.95, 30, [vectors[k] for k in keys])
    got = [out.values[col, out.systems.index(s), out.topics.index(t)] for s, t in keys]
    assert got == [float(e) for e in expected]


def test_positional_rbp_beyond_int64():
    """RBP(p=0.5) is closed form (runs ordered as binary numbers); at N = 63 the last
    run's phi is 2^63, which int64 wrapped to -2^63 before the fix."""
    rm = build("RBP(p=0.5)", 63, cache=False)
    g = np.array([[1] * 63, [0] * 63, [0] * 62 + [1]], dtype=np.int8)
    assert rm.phi_runs(g).tolist() == [2**63, 1, 2]
    assert rm.phi_runs(g, ties="max").tolist() == [float(2**63), 1.0, 2.0]


@pytest.mark.slow
def test_err_beyond_int64_is_exact():
    """ERR on 32 levels at N = 3: keys reach 6 * 2^93 (int64 wrapped them before); the
    oracle works on Python ints, checked against exact fractions."""
    c, N = 31, 3
    R = [Fraction(2**g - 1, 2**c) for g in range(c + 1)]

    def err(run):
        v, reach = Fraction(0), Fraction(1)
        for k, g in enumerate(run, 1):
            v += reach * R[g] / k
            reach *= 1 - R[g]
        return v

    from irscale.scales import all_runs

    g = all_runs(N, c)
    vals = [err(r) for r in g.tolist()]
    order = sorted(set(vals))
    rm = build("ERR", N, levels=c + 1, engine="oracle", cache=False)
    assert not rm.space.int64 and rm.size == len(order)
    sel = list(range(0, len(g), 41))
    assert rm.phi_runs(g[sel]).tolist() == [bisect.bisect_right(order, vals[i]) for i in sel]


@pytest.mark.parametrize(
    "measure,N,levels,engine",
    [
        ("RBP(p=0.95)", 20, 2, "split"),
        ("RBP(p=0.95)", 20, 2, "enumerate"),
        ("RBP(p=0.99)", 12, 2, "split"),
        ("AP", 41, 2, "split"),
        ("AP", 41, 2, "enumerate"),
        ("ERR", 3, 21, "enumerate"),
    ],
)
def test_engines_adding_int64_keys_refuse_wider_keys(measure, N, levels, engine):
    with pytest.raises(IrscaleError, match="below 2\\^62"):
        build(measure, N, levels, engine=engine, cache=False)


def test_graded_dcg_count_engine_counts_commensurable_classes():
    """Counting takes distinct class sums to be distinct values. With classes of equal
    weights graded DCG broke that (at N = 8 on 3 levels counting returned 3,645 values where
    there are 2,673, and was refused); with classes of commensurable weights (ranks 1, 2, 4,
    8 of base 2 weigh 1, 1, 1/2, 1/3) the rational ties are inside one class sum, and the
    count engine agrees with the dcg engine and the brute-force oracle."""
    from irscale.scales.spaces import all_runs

    count = build("DCG(base=2)", 8, levels=3, engine="count", cache=False)
    table = build("DCG(base=2)", 8, levels=3, engine="dcg", cache=False)
    oracle = build("DCG(base=2)", 8, levels=3, engine="oracle", cache=False)
    assert count.size == table.size == oracle.size == 2_673
    g = all_runs(8, 2)[::17]
    for t in ("unq", "mid"):
        assert np.array_equal(count.phi_runs(g, t), oracle.phi_runs(g, t))
        assert np.array_equal(table.phi_runs(g, t), oracle.phi_runs(g, t))


def test_user_exact_key_is_never_wrapped():
    """A user measure's exact_key must give integers that fit: floats or out-of-range
    integers are refused, not truncated or wrapped."""
    from irscale.measures import parse_measure
    from irscale.scales.spaces import GenericSpace

    sp = GenericSpace(parse_measure("AP"), 4, 1)
    assert sp._hook_keys(np.array([1, 2], dtype=np.uint8)).dtype == np.int64
    for bad in (np.array([0.5, 1.5]), np.array([2**63], dtype=np.uint64), np.array([2**70], dtype=object)):
        with pytest.raises(IrscaleError, match="exact_key"):
            sp._hook_keys(bad)


@pytest.mark.parametrize(
    "measure,N,levels",
    [
        ("RBP(p=0.5)", 9, 3),
        ("RBP(p=0.5)", 7, 5),
        ("RBP(p=1/3)", 8, 4),
        ("RBP(p=0.25)", 7, 5),
        ("RBP(p=0.5,gains=0:0,1:2,2:4)", 9, 3),
    ],
)
def test_graded_rbp_with_p_one_over_b_is_closed_and_equals_the_oracle(measure, N, levels):
    """p = 1/b with b <= c: the values are every integer 0..c (b^N - 1) / (b - 1); phi is
    the key + 1 and runs at or below are counted digit by digit, as the oracle lists them."""
    rm = build(measure, N, levels, cache=False)
    oracle = build(measure, N, levels, engine="oracle", cache=False)
    assert rm.engine == "closed" and rm.space.family == "rbp-contiguous" and rm.size == oracle.size
    g = np.random.default_rng(N).integers(0, levels, (3000, N))
    g[0], g[1] = 0, levels - 1
    keys = rm.space.keys(g)
    a, b = rm.rank(keys, ("unq", "min", "max", "mid")), oracle.rank(keys, ("unq", "min", "max", "mid"))
    assert all(np.array_equal(a[t], b[t]) for t in a)
    assert np.allclose(rm.values(), oracle.values(), rtol=1e-15, atol=0)


def test_graded_rbp_half_at_N30_counts_runs_like_a_meet_in_the_middle():
    """Far beyond any oracle (3 levels, N = 22: 3^22 runs), runs at or below random keys
    equal a count over the two halves' sorted sums in plain int64; at N = 30 on 5 levels
    the map has 4 (2^30 - 1) + 1 values (was: split engine, refused beyond N = 22)."""
    N = 22
    rm = build("RBP(p=0.5)", N, 3, cache=False)
    w = np.array([2 ** (N - k) for k in range(1, N + 1)], dtype=np.int64)
    half = np.stack(np.meshgrid(*[np.arange(3)] * 11, indexing="ij"), -1).reshape(-1, 11)
    pre, suf = np.sort(half @ w[:11]), np.sort(half @ w[11:])
    keys = rm.space.keys(np.random.default_rng(5).integers(0, 3, (300, N)))
    expect = [int(np.searchsorted(suf, int(k) - pre, side="right").sum()) for k in keys]
    assert [int(x) for x in rm.summary.runs_le(keys)] == expect
    assert build("RBP(p=0.5)", 30, 5, cache=False).size == 4 * (2**30 - 1) + 1
