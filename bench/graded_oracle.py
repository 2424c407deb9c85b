"""Correctness acceptance of graded rank maps (issue 11): an independent brute-force oracle
against irscale's engines, over every run, and two irscale engines against each other at
larger N.

The oracle (first half of this file) imports nothing of irscale. For every one of the
(c+1)^N runs it takes the measure's exact value, from the measure's definition:

* gP = sum g_k / (c N): integer key sum g_k (value = key / (c N));
* RBP with p = a/b (gain g/c) = (1 - p) sum (g_k / c) p^(k-1): integer key
  sum g_k a^(k-1) b^(N-k) (value = key (b - a) / (c b^N));
* ERR with stop probability R_k = (2^g_k - 1) / 2^c, sum over k of (1/k) R_k
  prod_{j<k} (1 - R_j): integer key L 2^(cN) ERR with L = lcm(1..N), term by term
  (L/k) (2^g_k - 1) prod_{j<k} (2^c - 2^g_j + 1) 2^(c(N-k));
* DCG = sum gain(g_k) w_k, w_k = 1/log2(k+1) (trec_eval) or Jarvelin & Kekalainen's base
  b (w_k = 1 for k <= b, else 1/log_b(k)); nDCG divides DCG by a constant of the topic,
  so it has the same ranks. Values are float64 first; every run within 1e-9 of a sorted
  neighbour is then decided in 60-digit arithmetic: the weights are computed by mpmath
  at mp.dps = 60 and held as integers W_k = nint(w_k 10^60) (error <= 1 unit each), a
  run's 60-digit value is the exact integer sum gain_k W_k, two values are equal when
  they differ by at most 4 c_gain N units (10^-60 each), and a difference between that
  and 10^20 units (1e-40) stops the oracle as undecided (never seen).

Integer keys are held in int64 where they provably fit, else in Python integers; the
keys are checked against the definition computed with Fractions on sampled runs
(:func:`fraction_value`). From the exact values: size = number of distinct values,
phi_unq = 1 + distinct values below, phi_mid = the mid rank among all (c+1)^N runs
(runs below + (runs at the value + 1) / 2, SPEC section 3, the 2021 paper's Table 3).

    python bench/graded_oracle.py            # 3 levels N = 12, 4 levels N = 9, 5 levels N = 8
    python bench/graded_oracle.py --quick    # 3 levels N = 8, 4 levels N = 6, 5 levels N = 5

Exit status 1 when any size or phi differs, when irscale refuses a case of the matrix, or
when two engines disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

# == the oracle: no irscale import above this line ==========================================

INT64_SAFE = 2**62
NEAR = 1e-9  # float neighbours closer than this are decided in 60-digit arithmetic
DIGITS = 60


@dataclass(frozen=True)
class Family:
    """One measure, as the oracle computes it. ``kind``: 'dcg', 'rbp', 'err' or 'gp';
    ``base``: None for trec_eval's log2(k+1), else J&K's log base; ``p``: RBP's
    persistence as an exact Fraction; ``gains``: gain of each grade 0..c for DCG (None:
    the grade itself)."""

    kind: str
    base: int | None = None
    p: Fraction | None = None
    gains: tuple[int, ...] | None = None
    label: str = field(default="", compare=False)


def all_grade_runs(N: int, c: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Runs start..stop-1 of the (c+1)^N runs as (n, N) int8 (run i is i in base c+1,
    first rank most significant)."""
    total = (c + 1) ** N
    stop = total if stop is None else min(stop, total)
    i = np.arange(start, stop, dtype=np.int64)
    out = np.zeros((len(i), N), dtype=np.int8)
    for k in range(N):
        out[:, N - 1 - k] = i % (c + 1)
        i = i // (c + 1)
    return out


def _gain_table(fam: Family, c: int) -> list[int]:
    g = list(range(c + 1)) if fam.gains is None else list(fam.gains)[: c + 1]  # a map given for 5 levels
    if len(g) != c + 1:
        raise ValueError(f"gain map of {fam} has {len(g)} grades, the runs have {c + 1}")
    return g


def integer_keys(fam: Family, G: np.ndarray, c: int) -> tuple[np.ndarray, Fraction]:
    """Exact integer keys of runs G (rational measures) and the positive Fraction ``unit``
    with value = key * unit."""
    G = np.asarray(G)
    n, N = G.shape
    if fam.kind == "gp":
        return G.astype(np.int64).sum(axis=1), Fraction(1, c * N)
    if fam.kind == "rbp":
        a, b = fam.p.numerator, fam.p.denominator
        w = [a ** (k - 1) * b ** (N - k) for k in range(1, N + 1)]
        if c * sum(w) < INT64_SAFE:
            return G.astype(np.int64) @ np.array(w, dtype=np.int64), Fraction(b - a, c * b**N)
        return G.astype(object) @ np.array(w, dtype=object), Fraction(b - a, c * b**N)
    if fam.kind == "err":
        L = math.lcm(*range(1, N + 1))
        bound = L * 2 ** (c * N) * (N + 1)  # every partial sum stays below this
        dt = np.int64 if bound < INT64_SAFE else object
        Gi = G.astype(np.int64)
        key = np.zeros(n, dtype=dt)
        reach = np.ones(n, dtype=dt)  # prod_{j<k} (2^c - 2^g_j + 1)
        for k in range(1, N + 1):
            p2 = (np.int64(1) << Gi[:, k - 1]).astype(dt)  # 2^g_k
            key = key + (L // k) * (p2 - 1) * reach * (2 ** (c * (N - k)))
            reach = reach * ((2**c + 1) - p2)
        return key, Fraction(1, L * 2 ** (c * N))
    raise ValueError(f"{fam.kind} has no integer keys")


def fraction_value(fam: Family, g, c: int) -> Fraction:
    """The measure's exact value of one run from its definition, in Fractions (slow: the
    reference the integer keys are checked against)."""
    g = [int(x) for x in g]
    N = len(g)
    if fam.kind == "gp":
        return Fraction(sum(g), c * N)
    if fam.kind == "rbp":
        p = fam.p
        return (1 - p) * sum(Fraction(gk, c) * p ** (k - 1) for k, gk in enumerate(g, start=1))
    if fam.kind == "err":
        total, cont = Fraction(0), Fraction(1)
        for k, gk in enumerate(g, start=1):
            R = Fraction(2**gk - 1, 2**c)
            total += Fraction(1, k) * R * cont
            cont *= 1 - R
        return total
    raise ValueError(f"{fam.kind} has no rational value")


def dcg_weights(N: int, base: int | None) -> np.ndarray:
    """float64 weights 1/discount of ranks 1..N."""
    k = np.arange(1, N + 1, dtype=np.float64)
    if base is None:
        return 1.0 / np.log2(k + 1)
    return np.where(k <= base, 1.0, np.log(base) / np.log(np.maximum(k, 2.0)))


def dcg_weights_60(N: int, base: int | None) -> list[int]:
    """The weights in 60-digit arithmetic (mpmath, mp.dps = 60) as integers nint(w_k 10^60)."""
    import mpmath

    with mpmath.workdps(DIGITS):
        out = []
        for k in range(1, N + 1):
            if base is None:
                w = mpmath.log(2) / mpmath.log(k + 1)
            else:
                w = mpmath.mpf(1) if k <= base else mpmath.log(base) / mpmath.log(k)
            out.append(int(mpmath.nint(w * mpmath.mpf(10) ** DIGITS)))
    return out


def _dcg_tolerance(fam: Family, c: int, N: int) -> int:
    return 4 * max(_gain_table(fam, c)) * N  # units of 10^-60: equal values differ by less


def dcg_values(fam: Family, G: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """float64 DCG of runs G and the gain matrix (int64) they were computed from."""
    gains = np.array(_gain_table(fam, c), dtype=np.int64)[np.asarray(G, dtype=np.int64)]
    return gains @ dcg_weights(G.shape[1], fam.base), gains


def _dcg_classes(fam: Family, G: np.ndarray, c: int) -> np.ndarray:
    """0-based index of each run's distinct value (ascending), DCG."""
    n, N = G.shape
    v, gains = dcg_values(fam, G, c)
    order = np.argsort(v, kind="stable")
    vs = v[order]
    near = np.diff(vs) < NEAR
    member = np.zeros(n, dtype=bool)  # sorted positions in a chain of near neighbours
    member[1:] |= near
    member[:-1] |= near
    cluster = np.cumsum(np.concatenate([[True], ~near]))  # chain id per sorted position
    new = np.ones(n, dtype=bool)
    pos = np.flatnonzero(member)
    if len(pos):
        W = np.array(dcg_weights_60(N, fam.base), dtype=object)
        K = gains[order[pos]].astype(object) @ W  # exact 60-digit values (units 10^-60)
        perm = np.argsort(K, kind="stable")  # chains are > 1e-9 apart: their order is kept
        order[pos] = order[pos][perm]
        K = K[perm]
        cl = cluster[pos]
        if (np.diff(cl) < 0).any():
            raise AssertionError("oracle: 60-digit order crosses a float gap above 1e-9")
        same_chain = cl[1:] == cl[:-1]
        d = np.array([int(x) for x in np.diff(K)], dtype=object)
        tol = _dcg_tolerance(fam, c, N)
        grey = same_chain & np.array([tol < x < 10**20 for x in d], dtype=bool)
        if grey.any():
            i = int(np.flatnonzero(grey)[0])
            raise AssertionError(f"oracle: two DCG values differ by {d[i]}e-60: undecided at {DIGITS} digits")
        tie = same_chain & np.array([x <= tol for x in d], dtype=bool)
        follow = pos[1:][tie]  # sorted positions whose value equals the previous one's
        new[follow] = False
    idx_sorted = np.cumsum(new) - 1
    cls = np.empty(n, dtype=np.int64)
    cls[order] = idx_sorted
    return cls


def value_classes(fam: Family, G: np.ndarray, c: int) -> np.ndarray:
    """0-based index of each run's value among the distinct values of ``G`` (ascending)."""
    if fam.kind == "dcg":
        return _dcg_classes(fam, np.asarray(G), c)
    keys, _ = integer_keys(fam, G, c)
    _, inv = np.unique(keys, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


@dataclass
class OracleResult:
    size: int
    unq: np.ndarray  # int64 phi_unq per run
    mid2: np.ndarray  # int64: twice phi_mid per run (exact)


def oracle(fam: Family, N: int, c: int, G: np.ndarray | None = None) -> OracleResult:
    """size, phi_unq and phi_mid of every run (``G`` all (c+1)^N runs, in any order)."""
    G = all_grade_runs(N, c) if G is None else G
    if len(G) != (c + 1) ** N:
        raise ValueError("the oracle ranks among all (c+1)^N runs")
    cls = value_classes(fam, G, c)
    size = int(cls.max()) + 1
    counts = np.bincount(cls, minlength=size).astype(np.int64)
    below = np.cumsum(counts) - counts  # runs with a smaller value
    return OracleResult(size, cls + 1, 2 * below[cls] + counts[cls] + 1)


def exact_sign(fam: Family, A: np.ndarray, B: np.ndarray, c: int) -> np.ndarray:
    """sign(value(A_i) - value(B_i)) per row, decided exactly (rational measures) or in
    60-digit arithmetic (DCG)."""
    A, B = np.asarray(A), np.asarray(B)
    if fam.kind == "dcg":
        W = np.array(dcg_weights_60(A.shape[1], fam.base), dtype=object)
        gt = np.array(_gain_table(fam, c), dtype=np.int64)
        d = (gt[A.astype(np.int64)] - gt[B.astype(np.int64)]).astype(object) @ W
        tol = _dcg_tolerance(fam, c, A.shape[1])
        out = []
        for x in d:
            if abs(x) <= tol:
                out.append(0)
            elif abs(x) < 10**20:
                raise AssertionError(f"oracle: DCG difference {x}e-60 undecided at {DIGITS} digits")
            else:
                out.append(1 if x > 0 else -1)
        return np.array(out, dtype=np.int64)
    ka, _ = integer_keys(fam, A, c)
    kb, _ = integer_keys(fam, B, c)
    return np.array([(int(x) > int(y)) - (int(x) < int(y)) for x, y in zip(ka, kb)], dtype=np.int64)


# == the acceptance matrix: irscale against the oracle ========================================

# (irscale measure string, oracle family); nDCG ranks like DCG (a topic constant divides it)
P_THIRD = "1/3"  # exact since a7d9c96 (was 0.3333333333333333, the decimal)


def families() -> list[tuple[str, Family]]:
    dcg_t, dcg2 = Family("dcg", label="DCG"), Family("dcg", 2, label="DCG_b2")
    dcg10 = Family("dcg", 10, label="DCG_b10")
    out = [
        ("DCG", dcg_t),
        ("nDCG", dcg_t),
        ("DCG(base=2)", dcg2),
        ("nDCG(base=2)", dcg2),
        ("DCG(base=10)", dcg10),
        ("nDCG(base=10)", dcg10),
    ]
    for p in (P_THIRD, "0.5", "0.8", "0.95"):
        out.append((f"RBP(p={p})", Family("rbp", p=Fraction(p), label=f"RBP_{p}")))
    out += [("ERR", Family("err", label="ERR")), ("gP", Family("gp", label="gP"))]
    # two gain maps (issue 11, item 2): Burges et al.'s 2^g - 1, and grade 1 gaining 0 (others their grade)
    exp_gains, drop_one = (0, 1, 3, 7, 15), (0, 0, 2, 3, 4)
    out += [
        ("nDCG(gains=exp)", Family("dcg", gains=exp_gains, label="nDCG_exp")),
        ("DCG(base=2,gains=1:0)", Family("dcg", 2, gains=drop_one, label="DCG_b2_1to0")),
    ]
    return out


MATRIX = [(3, 12), (4, 9), (5, 8)]
QUICK = [(3, 8), (4, 6), (5, 5)]


@dataclass
class Row:
    measure: str
    levels: int
    N: int
    engine: str = ""
    size_oracle: int = 0
    size_irscale: int | None = None
    unq_bad: int = 0
    mid_bad: int = 0
    runs: int = 0
    seconds: float = 0.0
    refused: str = ""

    @property
    def ok(self) -> bool:
        return not self.refused and self.size_oracle == self.size_irscale and not self.unq_bad and not self.mid_bad


def check_case(
    measure: str,
    fam: Family,
    levels: int,
    N: int,
    engine: str = "auto",
    oracle_cache: dict | None = None,
    G: np.ndarray | None = None,
) -> Row:
    """irscale's size, phi_unq and phi_mid of every run against the oracle's."""
    import time

    from irscale.errors import IrscaleError
    from irscale.scales.rankmap import build

    c = levels - 1
    G = all_grade_runs(N, c) if G is None else G
    t = time.perf_counter()
    key = (fam, N, c)
    if oracle_cache is not None and key in oracle_cache:
        ref = oracle_cache[key]
    else:
        ref = oracle(fam, N, c, G)
        if oracle_cache is not None:
            oracle_cache[key] = ref
    row = Row(measure, levels, N, size_oracle=ref.size, runs=len(G))
    try:
        rm = build(measure, N, levels, engine=engine, cache=False)
    except IrscaleError as e:  # a refusal is a finding, reported with its message
        row.refused = f"{type(e).__name__}: {e}"
        row.seconds = time.perf_counter() - t
        return row
    got = rm.rank(rm.space.keys(G), ("unq", "mid"))
    row.engine, row.size_irscale = rm.engine, int(rm.size)
    row.unq_bad = int((np.asarray(got["unq"], dtype=np.int64) != ref.unq).sum())
    mid2 = np.asarray(got["mid"], dtype=np.float64) * 2  # halves are exact in float64 at these run counts
    row.mid_bad = int((mid2 != ref.mid2.astype(np.float64)).sum())
    row.seconds = time.perf_counter() - t
    return row


def check_keys_against_fractions(fam: Family, N: int, c: int, samples: int = 200, seed: int = 0) -> int:
    """The oracle's integer keys times their unit against :func:`fraction_value` on sampled
    runs; returns how many differ (0 expected)."""
    if fam.kind == "dcg":
        return 0
    G = np.random.default_rng(seed).integers(0, c + 1, (samples, N)).astype(np.int8)
    G[0], G[-1] = 0, c  # the extremes
    keys, unit = integer_keys(fam, G, c)
    return sum(Fraction(int(k)) * unit != fraction_value(fam, g, c) for k, g in zip(keys, G))


# == irscale engines against each other =======================================================

CROSS = [
    ("DCG", 3, 16, "dcg", "count"),
    ("RBP(p=0.8)", 3, 14, "split", "enumerate"),
    ("ERR", 3, 13, "split", "enumerate"),
    ("DCG(base=2)", 4, 12, "dcg", "count"),
    ("RBP(p=0.8)", 3, 16, "split", "count"),
    # keys beyond int64: the split engine at two split ranks (other prefix/suffix halves)
    ("ERR", 3, 19, "split", "split@h=7"),
    ("ERR", 2, 27, "split", "split@h=11"),
]


def cross_engines(measure: str, levels: int, N: int, e1: str, e2: str, queries: int = 10_000, seed: int = 0):
    """(unq mismatches, mid mismatches, sizes, seconds) of two engines over ``queries``
    random runs; raises what a refusing engine raises."""
    import time

    from irscale.scales.rankmap import build

    t = time.perf_counter()
    G = np.random.default_rng(seed).integers(0, levels, (queries, N)).astype(np.int8)
    out = []
    for e in (e1, e2):
        if "@h=" in e:  # the split engine at another split rank
            from irscale.scales.engines import split_engine
            from irscale.scales.rankmap import RankMap
            from irscale.scales.spaces import space_for

            space = space_for(measure, N, levels - 1)
            vs = split_engine(space, h=int(e.split("@h=")[1]))
            rm = RankMap(space, "split", int(vs.size), space.n_runs, 0.0, vs)
        else:
            rm = build(measure, N, levels, engine=e, cache=False)
        r = rm.rank(rm.space.keys(G), ("unq", "mid"))
        out.append((int(rm.size), np.asarray(r["unq"], dtype=np.int64), np.asarray(r["mid"], dtype=np.float64)))
    (s1, u1, m1), (s2, u2, m2) = out
    return int((u1 != u2).sum()), int((m1 != m2).sum()), (s1, s2), time.perf_counter() - t


def main(argv=None) -> int:
    import argparse

    from irscale.errors import IrscaleError

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 levels N = 8, 4 levels N = 6, 5 levels N = 5")
    ap.add_argument("--queries", type=int, default=10_000, help="sampled phi queries per engine pair")
    ap.add_argument("--no-cross", action="store_true", help="skip the engine-against-engine rows")
    args = ap.parse_args(argv)
    failed = []
    print(
        f"{'measure':26s} {'lv':>2s} {'N':>3s} {'engine':>9s} {'size oracle':>11s} {'size irscale':>12s} "
        f"{'unq bad':>8s} {'mid bad':>8s} {'runs':>8s} {'s':>6s}"
    )
    cache: dict = {}
    for levels, N in QUICK if args.quick else MATRIX:
        cache.clear()
        for measure, fam in families():
            bad_keys = check_keys_against_fractions(fam, N, levels - 1)
            row = check_case(measure, fam, levels, N, oracle_cache=cache)
            if row.refused:
                print(
                    f"{measure:26s} {levels:2d} {N:3d} {'refused':>9s} {row.size_oracle:11,d}   {row.refused}",
                    flush=True,
                )
                failed.append(f"{measure} {levels} levels N={N} refused")
                if (levels) ** N <= 2**24:  # what irscale's own brute-force engine says (keys only)
                    row = check_case(measure, fam, levels, N, engine="oracle", oracle_cache=cache)
            if not row.refused:
                print(
                    f"{measure:26s} {levels:2d} {N:3d} {row.engine:>9s} {row.size_oracle:11,d} "
                    f"{row.size_irscale:12,d} {row.unq_bad:8d} {row.mid_bad:8d} {row.runs:8,d} "
                    f"{row.seconds:6.1f}",
                    flush=True,
                )
                if not row.ok:
                    failed.append(f"{measure} {levels} levels N={N} ({row.engine}): mismatch")
            if bad_keys:
                failed.append(f"{measure} {levels} levels N={N}: oracle keys differ from Fractions on {bad_keys} runs")
    if not args.no_cross:
        print(
            f"\n{'measure':14s} {'lv':>2s} {'N':>3s} {'engines':>17s} {'queries':>8s} {'unq bad':>8s} "
            f"{'mid bad':>8s} {'sizes':>24s} {'s':>6s}"
        )
        for measure, levels, N, e1, e2 in CROSS:
            try:
                ub, mb, sizes, sec = cross_engines(measure, levels, N, e1, e2, args.queries)
            except IrscaleError as e:
                print(
                    f"{measure:14s} {levels:2d} {N:3d} {e1 + '/' + e2:>17s}  refused: {type(e).__name__}: {e}",
                    flush=True,
                )
                failed.append(f"{measure} {levels} levels N={N} {e1}/{e2} refused")
                continue
            print(
                f"{measure:14s} {levels:2d} {N:3d} {e1 + '/' + e2:>17s} {args.queries:8,d} {ub:8d} {mb:8d} "
                f"{f'{sizes[0]:,}/{sizes[1]:,}':>24s} {sec:6.1f}",
                flush=True,
            )
            if ub or mb or sizes[0] != sizes[1]:
                failed.append(f"{measure} {levels} levels N={N}: {e1} and {e2} disagree")
    print("\n" + ("all agree" if not failed else "FAILED:\n  " + "\n  ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
