"""Engines that compute a measure's value set M(REL^N): all exact, chosen by
:func:`irscale.scales.rankmap.build`.

* ``closed``: closed forms (P, R, F, gP, RR, RBTO, SBTO, binary RBP with p <= 1/2);
* ``split``: meet in the middle: a run's key is V(prefix) + f(state, suffix); both
  halves are enumerated (2^(N/2) each), suffix parts sorted per state, and the run
  keys produced bucket by bucket over key ranges (each prefix contributes a contiguous
  slice of each sorted suffix array) and deduplicated exactly per bucket;
* ``enumerate``: every run, chunk by chunk (any measure with exact keys);
* ``dcg``: every vector of class gain totals (DCG's only source of ties);
* ``oracle``: the naive brute force over all (c+1)^N runs, for tests.

Buckets and chunks are independent tasks, run by :func:`irscale.parallel.parallel_map` (threads, or
Dask when a scheduler is given).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from irscale.errors import IrscaleError, MeasureError
from irscale.parallel import Progress, parallel_map
from irscale.scales.spaces import INT64_LIMIT, Space, all_runs
from irscale.scales.valuesets import Buckets, Table, ValueTable

# -- oracle / enumeration ------------------------------------------------------------------------

def _unique_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k, c = np.unique(keys, return_counts=True)
    return k, c.astype(np.int64)


def _sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and the exact sum of ``counts`` per key (integer sums, in
    the counts' own dtype: no float weights, which round above 2^53)."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    if not len(k):
        return k, counts[:0]
    start = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    return k[start], np.add.reduceat(counts[order], start)


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    return _sum_by_key(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def _tabulate(space: Space, keys: np.ndarray, runs: np.ndarray) -> Table | ValueTable:
    """The value set of distinct keys and their run counts: a Table where key order is
    value order, else (DCG) a ValueTable ordered by value with exact tie decisions."""
    return Table(keys, runs) if space.ordered_keys else _dcg_table(space, keys, runs)


def oracle(space: Space, limit: int = 2**24) -> Table | ValueTable:
    """Brute force: the keys of all (c+1)^N runs, deduplicated. For tests (small N);
    keys beyond int64 are handled as Python ints (slow but exact)."""
    if space.n_runs > limit:
        raise IrscaleError(f"the oracle enumerates all {space.n_runs:,} runs; allowed up to {limit:,}")
    return _tabulate(space, *_unique_counts(space.keys(all_runs(space.N, space.c))))


MAX_ENUMERATE = 2**34  # runs the enumerate engine visits: about ten minutes on 2 cores


def check_enumerate(space: Space) -> None:
    """Refuse (IrscaleError), before anything is built, an enumeration of more than
    ``MAX_ENUMERATE`` runs or of keys beyond int64."""
    space.require_int64("enumerate")
    if space.n_runs > MAX_ENUMERATE:
        raise IrscaleError(f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: the enumerate engine "
                           f"would visit {space.n_runs:,} runs, more than the {MAX_ENUMERATE:,} (about ten minutes) "
                           "it accepts; use a smaller N or fewer levels (max_grade= / --max-grade, or "
                           "relevance='lenient')")


def enumerate_engine(space: Space, chunk: int = 2**20, scheduler=None,
                     progress: Progress = None) -> Table | ValueTable:
    """Every run, in chunks (parallel), deduplicated per chunk then merged."""
    check_enumerate(space)
    total = space.n_runs
    starts = list(range(0, total, chunk))

    def work(start):
        return _unique_counts(space.keys(all_runs(space.N, space.c, start, start + chunk)))

    parts = parallel_map(work, starts, scheduler, progress)
    return _tabulate(space, *_merge(parts))


# -- DCG: enumerate class totals ------------------------------------------------------------------

def dcg_engine(space, limit: int = 80_000_000) -> ValueTable:
    """Every vector of class gain totals of a :class:`~irscale.scales.spaces.DCGSpace`
    (the run space modulo equal weights), with the number of runs behind it, ordered by
    value with exact near-tie resolution."""
    if not hasattr(space, "attainable"):
        raise MeasureError(f"the dcg engine serves DCG and nDCG, not {space.measure}")
    size = space.n_values
    if size > limit:
        raise IrscaleError(f"{space.measure} at N={space.N} has {size:,} class-sum vectors; the dcg engine "
                           f"holds up to {limit:,} in memory; engine='count' (CLI --engine count) counts them")
    tot = space.attainable_totals()
    keys = space.encode(tot)  # sorted: attainable sums ascending per class, mixed radix
    runs = space.runs_behind(tot)  # runs behind each class-sum vector (exact integers)
    return _dcg_table(space, keys, runs)


def _dcg_table(space, keys: np.ndarray, runs: np.ndarray) -> ValueTable:
    vals = space.key_values(keys)
    order = np.argsort(vals, kind="stable")
    v = vals[order]
    # a new value starts where the gap to the previous one is real
    new = np.ones(len(v), dtype=bool)
    if len(v) > 1:
        gap = np.diff(v)
        scale = np.maximum(np.abs(v[1:]), 1.0)
        near = np.flatnonzero(gap <= 1e-12 * scale)
        new[1:] = True
        if len(near):
            tots = space.decode(keys[order[near]]), space.decode(keys[order[near + 1]])
            for i, (a, b) in enumerate(zip(*tots)):
                da, db = space.exact_value(a), space.exact_value(b)
                if abs(da - db) <= abs(da) * 1e-50:
                    new[near[i] + 1] = False
                elif db < da:  # float order wrong: swap the two (never seen in practice)
                    order[near[i]], order[near[i] + 1] = order[near[i] + 1], order[near[i]]
    phi_sorted = np.cumsum(new)
    phi = np.empty(len(keys), dtype=np.int64)
    phi[order] = phi_sorted
    return ValueTable(keys, runs, phi, order)


# -- split (meet in the middle) -----------------------------------------------------------------

@dataclass
class _Half:
    states: list  # state values
    V: list  # per state: sorted distinct prefix values (int64)
    Vn: list  # per state: runs per prefix value
    F: list  # per state: sorted distinct suffix parts
    Fc: list  # per state: cumulative runs (len + 1), int64 (at most the suffix count)
    wide_runs: bool = False  # runs per key may pass 2^62: products and sums in Python ints


def _prepare(space: Space, h: int) -> _Half:
    V, state, f = space.split_parts(h)
    states, Vs, Vn, Fs, Fc = [], [], [], [], []
    for s in np.unique(state):
        v, vn = _unique_counts(V[state == s])
        fv, fn = _unique_counts(f(int(s)))
        states.append(int(s))
        Vs.append(v)
        Vn.append(vn)
        Fs.append(fv)
        Fc.append(np.concatenate([[0], np.cumsum(fn)]))
    return _Half(states, Vs, Vn, Fs, Fc, space.n_runs >= INT64_LIMIT)


def _bucket_bounds(half: _Half, target: int, seed: int = 0) -> np.ndarray:
    """Key ranges holding about ``target`` (prefix, suffix) pairs each, from quantiles of
    a random sample of pairs (deterministic seed: the same buckets on every build)."""
    lo = min(int(V[0] + F[0]) for V, F in zip(half.V, half.F))
    hi = max(int(V[-1] + F[-1]) for V, F in zip(half.V, half.F)) + 1
    sizes = np.array([len(V) * len(F) for V, F in zip(half.V, half.F)], dtype=np.int64)
    total = int(sizes.sum())
    B = max(1, math.ceil(total / target))
    if B == 1:
        return np.array([lo, hi], dtype=np.int64)
    rng = np.random.default_rng(seed)
    r = rng.integers(0, total, size=min(total, 256 * B))
    cum = np.cumsum(sizes)
    st = np.searchsorted(cum, r, side="right")
    r = r - (cum - sizes)[st]
    sample = np.empty(len(r), dtype=np.int64)
    for s in np.unique(st):
        sel = st == s
        nF = len(half.F[s])
        sample[sel] = half.V[s][r[sel] // nF] + half.F[s][r[sel] % nF]
    inner = np.quantile(sample, np.arange(1, B) / B, method="lower").astype(np.int64)
    return np.unique(np.concatenate([[lo], inner, [hi]]))


def _bucket(half: _Half, lo: int, hi: int, with_runs: bool):
    """Sorted distinct keys in [lo, hi) (and runs per key when ``with_runs``)."""
    vals, wts = [], []
    for V, Vn, F, Fc in zip(half.V, half.Vn, half.F, half.Fc):
        a = np.searchsorted(F, lo - V)
        z = np.searchsorted(F, hi - V)
        n = z - a
        keep = n > 0
        if not keep.any():
            continue
        a, n, Vk = a[keep], n[keep], V[keep]
        total = int(n.sum())
        rep = np.repeat(np.arange(len(n)), n)
        offs = np.arange(total) - np.repeat(np.cumsum(n) - n, n)
        idx = a[rep] + offs
        vals.append(F[idx] + Vk[rep])
        if with_runs:
            fcount = Fc[idx + 1] - Fc[idx]
            vn = Vn[keep][rep]
            if half.wide_runs:
                fcount, vn = fcount.astype(object), vn.astype(object)
            wts.append(fcount * vn)  # runs behind the pair: at most n_runs
    if not vals:
        return np.empty(0, dtype=np.int64), (np.empty(0, dtype=np.int64) if with_runs else None)
    allv = np.concatenate(vals)
    if not with_runs:
        allv.sort()
        keep = np.empty(len(allv), dtype=bool)
        keep[0] = True
        np.not_equal(allv[1:], allv[:-1], out=keep[1:])
        return allv[keep], None
    return _sum_by_key(allv, np.concatenate(wts))


def _count_pairs(half: _Half, queries: np.ndarray, block: int = 2**22) -> tuple[np.ndarray, np.ndarray]:
    """Runs with key <= and < each query, counted from the halves without producing any
    key: sum over states and prefix values v of runs(v) x suffix runs with part <= q - v
    (one binary search per pair of prefix value and query, in blocks of ``block``)."""
    q = np.asarray(queries, dtype=np.int64)
    dtype = object if half.wide_runs else np.int64
    le = np.zeros(len(q), dtype=dtype)
    lt = np.zeros(len(q), dtype=dtype)
    if not len(q):
        return le, lt
    for V, Vn, F, Fc in zip(half.V, half.Vn, half.F, half.Fc):
        Fc = Fc.astype(dtype)
        Vn = Vn.astype(dtype)
        rows = max(1, block // len(q))
        for a in range(0, len(V), rows):
            t = q[None, :] - V[a:a + rows, None]  # suffix parts allowed behind each prefix value
            w = Vn[a:a + rows, None]
            le += (Fc[np.searchsorted(F, t, side="right")] * w).sum(axis=0)
            lt += (Fc[np.searchsorted(F, t, side="left")] * w).sum(axis=0)
    return le, lt


def _bucket_runs(half: _Half, lo: int, hi: int) -> int:
    """Runs with key in [lo, hi), without producing the keys."""
    total = 0
    for V, Vn, F, Fc in zip(half.V, half.Vn, half.F, half.Fc):
        a = np.searchsorted(F, lo - V)
        z = np.searchsorted(F, hi - V)
        total += int(((Fc[z] - Fc[a]).astype(object) * Vn.astype(object)).sum())
    return total


MAX_PAIRS = 2**35  # (prefix, suffix) pairs the split engine produces: about 10 minutes on 2 cores


def check_split(space: Space) -> None:
    """Refuse (IrscaleError), before anything is built, a split that would produce
    more than ``MAX_PAIRS`` pairs (its buckets hold them all in turn, its bucket
    bounds sample them)."""
    space.require_int64("split")
    n = space.n_runs  # at most one (prefix, suffix) pair per run
    if n > MAX_PAIRS:
        raise IrscaleError(f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: the split engine "
                           f"would produce {n:,} (prefix, suffix) pairs, more than the {MAX_PAIRS:,} (about ten "
                           "minutes) it accepts; use a smaller N, fewer levels (max_grade= / --max-grade, or "
                           "relevance='lenient'), or engine='count' (CLI --engine count) where it serves the measure")


def split_engine(space: Space, h: int | None = None, bucket_pairs: int = 2**22, scheduler=None,
                 progress: Progress = None, keep_in_memory: int = 2**25) -> Table | Buckets:
    """Meet in the middle (see the module doc). Returns the whole table when it holds at
    most ``keep_in_memory`` distinct keys, else the bucket summary."""
    check_split(space)
    h = space.N // 2 if h is None else h
    half = _prepare(space, h)
    bounds = _bucket_bounds(half, bucket_pairs)
    ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))

    def work(r):
        keys, _ = _bucket(half, r[0], r[1], False)
        return len(keys), _bucket_runs(half, r[0], r[1]), (keys if small else None)

    total_pairs = sum(len(V) * len(F) for V, F in zip(half.V, half.F))
    small = total_pairs <= keep_in_memory
    res = parallel_map(work, ranges, scheduler, progress)
    if small:
        keys = np.concatenate([r[2] for r in res]) if res else np.empty(0, dtype=np.int64)
        runs = np.concatenate([_bucket(half, a, z, True)[1] for a, z in ranges]) if ranges else keys
        return Table(keys, runs)
    cum_d = np.concatenate([[0], np.cumsum([r[0] for r in res])]).astype(np.int64)
    cum_r = np.concatenate([[0], np.cumsum(np.array([r[1] for r in res], dtype=object))])
    return attach_buckets(space, h, bounds, cum_d, cum_r, half)


def attach_buckets(space: Space, h: int, bounds, cum_d, cum_r, half: _Half | None = None) -> Buckets:
    """A bucket summary whose buckets are regenerated from the space (halves prepared
    lazily, so a summary loaded from the cache costs nothing until a bucket is asked)."""
    ranges = list(zip(np.asarray(bounds)[:-1].tolist(), np.asarray(bounds)[1:].tolist()))
    state = {"half": half}

    @functools.lru_cache(maxsize=8)  # the last buckets asked (listing, nearby queries)
    def regenerate(b: int, with_runs: bool):
        if state["half"] is None:
            state["half"] = _prepare(space, h)
        return _bucket(state["half"], ranges[b][0], ranges[b][1], with_runs)

    def count_pairs(queries):
        if state["half"] is None:
            state["half"] = _prepare(space, h)
        return _count_pairs(state["half"], queries)

    return Buckets(h, np.asarray(bounds, dtype=np.int64), np.asarray(cum_d, dtype=np.int64),
                   np.asarray(cum_r, dtype=object), regenerate, count_pairs)
