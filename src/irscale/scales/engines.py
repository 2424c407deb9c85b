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
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from irscale.errors import IrscaleError, MeasureError, count_text
from irscale.kernels import compiled
from irscale.parallel import Progress, parallel_map
from irscale.scales.spaces import INT64_LIMIT, GenericSpace, Space, all_runs
from irscale.scales.valuesets import Table, ValueSet, ValueTable, _first_last, kind
from irscale.scales.wide import KEY, MASK, MAX_BITS, Wide, as_keys, words_of
from irscale.validate import integer

# -- oracle / enumeration ------------------------------------------------------------------------


__all__ = [
    "attach_buckets",
    "Buckets",
    "check_enumerable",
    "check_enumerate",
    "check_split",
    "DCG_BYTES_PER_VALUE",
    "DCG_CHUNK",
    "dcg_engine",
    "dcg_engine_bytes",
    "DCG_FIXED_BYTES",
    "ENUMERATE_CHUNK",
    "enumerate_engine",
    "enumerate_engine_bytes",
    "ENUMERATE_KEPT_BYTES",
    "ENUMERATE_MERGE_BYTES",
    "MAX_ENUMERATE",
    "MAX_PAIRS",
    "oracle",
    "pairs_limit",
    "SPLIT_BUCKET",
    "split_engine",
    "split_engine_bytes",
    "SPLIT_KEPT_BYTES",
    "SPLIT_LISTED",
    "SPLIT_LISTED_BYTES",
    "SPLIT_PAIR_BYTES",
    "SPLIT_SAMPLE_BYTES",
    "SPLIT_SLACK",
    "SPLIT_WIDE_BYTES",
    "WIDTH",
]


@kind("buckets")
@dataclass
class Buckets(ValueSet):
    """The value set as key ranges [bounds[b], bounds[b+1]) with the number of distinct
    keys and of runs before each (a split too large to hold). A bucket's distinct keys
    are regenerated on demand (for phi and listing); run counts need no keys at all:
    ``count_pairs(queries)`` counts the (prefix, suffix) pairs at or below and strictly
    below each query directly from the two halves."""

    h: int  # split rank the buckets were produced with
    bounds: np.ndarray  # B + 1: int64, or Python ints (object) for keys beyond int64
    cum_distinct: np.ndarray  # int64, B + 1
    cum_runs: np.ndarray  # object (Python ints), B + 1
    # a bucket's sorted distinct keys (int64, or irscale.scales.wide.KEY records) and runs per key
    regenerate: Callable[[int, bool], tuple[np.ndarray, np.ndarray | None]] = field(repr=False)
    count_pairs: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] = field(repr=False)
    # [(bucket, keys)] -> per bucket, its distinct keys at or below each key (buckets in parallel)
    rank: Callable[[list], list] = field(repr=False)
    answers: tuple | None = field(repr=False, default=None)  # (keys, phi) computed while building
    memo = True

    @property
    def size(self) -> int:
        return int(self.cum_distinct[-1])

    def phi(self, keys):
        keys = np.asarray(keys)
        bounds = self.bounds.astype(object) if keys.dtype == object else self.bounds
        b = np.clip(np.searchsorted(bounds, keys, side="right") - 1, 0, len(bounds) - 2)
        groups = [(int(bb), keys[b == bb]) for bb in np.unique(b)]
        out = np.empty(len(keys), dtype=np.int64)
        for (bb, _), rank in zip(groups, self.rank(groups)):
            out[b == bb] = self.cum_distinct[bb] + rank
        return out

    def runs_le(self, keys):
        return self.count_pairs(keys)[0]

    def runs_at(self, keys):
        le, lt = self.count_pairs(keys)
        return le - lt

    def runs_le_at(self, keys):
        le, lt = self.count_pairs(keys)  # one pass for both
        return le, le - lt

    def listed(self, first=None, last=None):
        from irscale.scales.wide import KEY, keys_ints

        need = first if first is not None else last
        parts = []
        rng = range(len(self.bounds) - 1) if last is None else range(len(self.bounds) - 2, -1, -1)
        for b in rng:
            parts.append(self.regenerate(b, False)[0])
            if need is not None and sum(map(len, parts)) >= need:
                break
        keys = np.concatenate(parts if last is None else parts[::-1])
        keys = keys[list(_first_last(len(keys), first, last))]
        return keys_ints(keys) if keys.dtype == KEY else keys

    def arrays(self):
        from irscale.scales.cache import ints_out

        return {
            "h": np.array(self.h),
            "bounds": ints_out(self.bounds),
            "cum_distinct": self.cum_distinct,
            "cum_runs": ints_out(self.cum_runs),
        }

    @classmethod
    def from_arrays(cls, space, z):
        from irscale.scales.cache import ints_in

        bounds = ints_in(z["bounds"])
        if getattr(space, "wide_split", False) and not space.int64:  # Python ints, as built
            bounds = np.array([int(x) for x in bounds], dtype=object)
        return attach_buckets(space, int(z["h"]), bounds, z["cum_distinct"], [int(x) for x in z["cum_runs"]])


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
    return Table(keys, runs) if space.ordered_keys else _dcg_table(space, keys, runs, space.key_values(keys))


def oracle(space: Space, limit: int = 2**24) -> Table | ValueTable:
    """Brute force: the keys of all (c+1)^N runs, deduplicated. For tests (small N);
    keys beyond int64 are handled as Python ints (slow but exact)."""
    if space.n_runs > limit:
        raise IrscaleError(
            f"the oracle enumerates all {count_text(space.n_runs, space.c + 1)} runs; allowed up to {limit:,}"
        )
    return _tabulate(space, *_unique_counts(space.keys(all_runs(space.N, space.c))))


MAX_ENUMERATE = 2**34  # runs the enumerate engine visits: about ten minutes on 2 cores
ENUMERATE_CHUNK = 2**20  # runs per task of the enumerate engine
ENUMERATE_KEPT_BYTES = 16  # per distinct key of a chunk, kept (key, runs) until the chunks are merged
ENUMERATE_MERGE_BYTES = 64  # per key kept: the merge (joined, ordered, summed)


def enumerate_engine_bytes(space: Space, chunk: int = ENUMERATE_CHUNK) -> int:
    """The enumerate engine's peak memory on ``space``, estimated before anything is
    allocated: the larger of the workers' chunks at once (per run its digits and its
    number, and what ``space.keys`` allocates: ``key_bytes_per_rank`` per rank) beside
    the keys the chunks keep, and the final merge of those keys. Where every run has its
    own value the estimate is about the peak; where ties merge values (binary AP) it is
    an upper bound, as the distinct keys are known only once listed."""
    runs = int(space.n_runs)
    return max(_enumerate_chunks_bytes(space, chunk) + ENUMERATE_KEPT_BYTES * runs, ENUMERATE_MERGE_BYTES * runs)


def _enumerate_chunks_bytes(space: Space, chunk: int = ENUMERATE_CHUNK) -> int:
    """The enumerate engine's chunks worked on at once (:func:`enumerate_engine_bytes`)."""
    from irscale.parallel import local_workers

    runs = int(space.n_runs)
    rows = min(runs, local_workers(-(-runs // chunk)) * chunk)
    return rows * (space.key_bytes_per_rank * space.N + space.N + 8)


def check_enumerate(space: Space, chunk: int = ENUMERATE_CHUNK) -> None:
    """Refuse (IrscaleError), before anything is built, an enumeration of more than
    ``MAX_ENUMERATE`` runs or of keys beyond int64, and (MemoryBudgetError) one whose
    :func:`enumerate_engine_bytes` exceeds the memory budget; for a user's measure, which
    may have few values, only its chunks are checked here (its kept keys are checked as
    they come, :func:`enumerate_engine`)."""
    from irscale.scales import budget

    check_enumerable(space)
    user = isinstance(space, GenericSpace) or not type(space).__module__.startswith("irscale.")
    budget.check(  # a user's measure may have few values: its kept keys are checked as they come
        _enumerate_chunks_bytes(space, chunk) if user else enumerate_engine_bytes(space, chunk),
        f"{space.measure} at N={space.N} on {space.c + 1} levels: the enumerate engine"
        + ("" if user else " (at most one value per run)"),
        "use a smaller N or fewer relevance levels",
    )


def check_enumerable(space: Space) -> None:
    """:func:`check_enumerate`'s limits without the memory budget: keys beyond int64, or
    more than ``MAX_ENUMERATE`` runs (IrscaleError)."""
    space.require_int64("enumerate")
    if space.n_runs > MAX_ENUMERATE:
        raise IrscaleError(
            f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: the enumerate engine "
            f"would visit {count_text(space.n_runs, space.c + 1)} runs, more than the "
            f"{MAX_ENUMERATE:,} (about ten minutes) "
            "it accepts; use a smaller N or fewer levels (max_grade= / --max-grade, or "
            "relevance='lenient')"
        )


def enumerate_engine(
    space: Space, chunk: int = ENUMERATE_CHUNK, scheduler=None, progress: Progress = None
) -> Table | ValueTable:
    """Every run, in chunks (parallel), deduplicated per chunk then merged."""
    import threading

    from irscale.scales import budget

    check_enumerate(space, chunk)
    total = space.n_runs
    starts = list(range(0, total, chunk))
    limit, kept, lock = budget.budget(), [0], threading.Lock()

    def work(start):
        return _unique_counts(space.keys(all_runs(space.N, space.c, start, start + chunk)))

    def guarded(start):  # the keys kept so far, checked as they come (their number is known only now)
        part = work(start)
        with lock:  # (the up-front estimate's form, with the keys kept so far for the runs)
            kept[0] += len(part[0])
            chunks = _enumerate_chunks_bytes(space, chunk)
            need = max(chunks + ENUMERATE_KEPT_BYTES * kept[0], ENUMERATE_MERGE_BYTES * kept[0])
        if limit is not None and need > limit:
            budget.check(
                need,
                f"{space.measure} at N={space.N}: the enumerate engine, with {kept[0]:,} keys kept so far,",
                "use a smaller N or fewer relevance levels",
                limit,
            )
        return part

    # (on a Dask scheduler the chunks run elsewhere, unguarded: a lock does not travel)
    parts = parallel_map(guarded if scheduler is None else work, starts, scheduler, progress)
    return _tabulate(space, *_merge(parts))


# -- DCG: enumerate class totals ------------------------------------------------------------------


DCG_BYTES_PER_VALUE = 50  # the dcg engine's peak per class-sum vector, int64 runs (tracemalloc: tests/test_budget.py)
DCG_FIXED_BYTES = 4 << 20  # ... and its blocks of DCG_CHUNK vectors
DCG_CHUNK = 1 << 16  # class-sum vectors decoded at a time for their float values (and gaps compared)


def dcg_engine_bytes(space) -> int:
    """The dcg engine's peak memory on ``space``, estimated before anything is allocated:
    :data:`DCG_BYTES_PER_VALUE` per class-sum vector (keys, runs, float values, their order
    and ranks, one at a time where they are temporaries), plus Python integers' 32 bytes
    each where the runs or the keys pass int64."""
    per = DCG_BYTES_PER_VALUE + (0 if space.n_runs < INT64_LIMIT else 32) + (0 if space.int64 else 32)
    return int(space.n_values) * per + DCG_FIXED_BYTES


def dcg_engine(space, limit: int = 80_000_000) -> ValueTable:
    """Every vector of class gain totals of a :class:`~irscale.scales.spaces.dcg.DCGSpace`
    (the run space modulo equal weights), with the number of runs behind it, ordered by
    value with exact near-tie resolution. Keys, runs and values are built class by class
    (an outer sum or product per class), never as a matrix of class sums, so the peak is
    about :data:`DCG_BYTES_PER_VALUE` bytes per vector (:func:`dcg_engine_bytes`)."""
    if not hasattr(space, "attainable"):
        raise MeasureError(f"the dcg engine serves DCG and nDCG, not {space.measure}")
    size = space.n_values
    if size > limit:
        raise IrscaleError(
            f"{space.measure} at N={space.N} has {count_text(size)} class-sum vectors; the dcg engine "
            f"holds up to {limit:,} in memory; engine='count' (CLI --engine count) counts them"
        )
    # sorted: attainable sums ascending per class, mixed radix (space.encode; Python integers beyond int64)
    keys = np.zeros(1, dtype=np.int64 if space.int64 else object)
    for j, att in enumerate(space.attainable):
        keys = (keys[:, None] * space.radix[j] + att[None, :].astype(keys.dtype)).reshape(-1)
    # float values as space.key_values computes them, a block of keys at a time
    vals = np.empty(len(keys), dtype=np.float64)
    for a in range(0, len(keys), DCG_CHUNK):
        vals[a : a + DCG_CHUNK] = space.key_values(keys[a : a + DCG_CHUNK])
    return _dcg_table(space, keys, lambda: _dcg_runs(space), vals)


def _dcg_runs(space) -> np.ndarray:
    """Runs behind each class-sum vector in key order (``space.runs_behind`` of every
    attainable vector, exact), one outer product per class."""
    wide = space.n_runs >= INT64_LIMIT
    runs = np.ones(1, dtype=object if wide else np.int64)
    for j, att in enumerate(space.attainable):
        runs = (runs[:, None] * np.array(space._ways[j], dtype=object if wide else np.int64)[att][None, :]).reshape(-1)
    return runs


def _dcg_table(space, keys: np.ndarray, runs, vals: np.ndarray) -> ValueTable:
    """The value table of keys with float values ``vals`` (sorted in place: the caller's
    array is spent): a new value starts where the gap to the previous one is real,
    decided exactly (60 digits) where it is within 1e-12 of 0. ``runs``: the runs behind
    each key, or a function making them (called last, when the sort's memory is free)."""
    order = np.argsort(vals, kind="stable")
    vals.sort(kind="stable")  # the values in value order (what vals[order] is), without a copy
    new = np.ones(len(vals), dtype=bool)
    near_parts = []
    for a in range(1, len(vals), DCG_CHUNK):  # gaps in blocks: no full-length temporaries
        b = min(a + DCG_CHUNK, len(vals))
        gap = vals[a:b] - vals[a - 1 : b - 1]
        near_parts.append(a - 1 + np.flatnonzero(gap <= 1e-12 * np.maximum(np.abs(vals[a:b]), 1.0)))
    del vals
    near = np.concatenate(near_parts) if near_parts else np.zeros(0, dtype=np.int64)
    if len(near):
        tots = space.decode(keys[order[near]]), space.decode(keys[order[near + 1]])
        for i, (a, b) in enumerate(zip(*tots)):
            da, db = space.exact_value(a), space.exact_value(b)
            if abs(da - db) <= abs(da) * 1e-50:
                new[near[i] + 1] = False
            elif db < da:  # float order wrong: swap the two (never seen in practice)
                order[near[i]], order[near[i] + 1] = order[near[i] + 1], order[near[i]]
    phi = np.empty(len(keys), dtype=np.int64)
    phi[order] = np.cumsum(new)
    del new
    return ValueTable(keys, runs() if callable(runs) else runs, phi, order)


# -- split (meet in the middle) -----------------------------------------------------------------
#
# Keys beyond int64 (ERR: binary N >= 27, 3 levels N >= 19) come from the space as Wide
# arrays (irscale.scales.wide): a float64 approximation picks candidates with a margin far
# beyond its error, and words mod 2^64 decide exactly. A bucket's keys are sorted as int64
# offsets from its lower bound when the bucket is narrower than 2^62 (WIDTH; buckets are
# sized for that), by (high word, low word) otherwise, and handed out as KEY records.

WIDTH = 2**62  # widest bucket whose keys are int64 offsets from its lower bound


@dataclass
class _Half:
    """The halves of a split, per prefix state: sorted distinct prefix values (runs per
    value) and suffix parts (cumulative runs). ``Va``/``Fa`` order them: the values
    themselves (int64), or (``wide``) float64 approximations within ``margin``;
    ``Vw``/``Fw`` are the values mod 2^64 as int64 (the values themselves when narrow), so
    a pair's key is decided exactly by wrapping int64 sums."""

    states: list
    Va: list
    Vw: list
    Vn: list
    Fa: list
    Fw: list
    Fc: list  # cumulative runs (len + 1), int64 (at most the suffix count)
    lo: int = 0  # smallest key (Python int)
    hi: int = 0  # largest key
    wide: bool = False
    margin: float | int = 0  # far above every float error of a sum or difference of approximations
    # (wide); the int 0 for int64 halves, so that subtracting it keeps them int64
    wide_runs: bool = False  # runs per key may pass 2^62: products and sums in Python ints


def _prepare(space: Space, h: int) -> _Half:
    V, state, f = space.split_parts(h)
    wide = isinstance(V, Wide)
    half = _Half(
        [],
        [],
        [],
        [],
        [],
        [],
        [],
        wide=wide,
        wide_runs=space.n_runs >= INT64_LIMIT,
        margin=space.max_key * 2.0**-40 if wide else 0,
    )  # errors stay below 2^-45 of a key
    ends = []
    for s in np.unique(state):
        if wide:
            v, vn = V[state == s].unique_counts()
            fv, fn = f(int(s)).unique_counts()
            va, vw, fa, fw = v.approx, v.words.view(np.int64), fv.approx, fv.words.view(np.int64)
            (v0, v1), (f0, f1) = v[[0, -1]].ints(), fv[[0, -1]].ints()
        else:
            va, vn = _unique_counts(V[state == s])
            fa, fn = _unique_counts(f(int(s)))
            vw, fw = va, fa
            v0, v1, f0, f1 = int(va[0]), int(va[-1]), int(fa[0]), int(fa[-1])
        half.states.append(int(s))
        half.Va.append(va)
        half.Vw.append(vw)
        half.Vn.append(vn)
        half.Fa.append(fa)
        half.Fw.append(fw)
        half.Fc.append(np.concatenate([[0], np.cumsum(fn)]))
        ends.append((int(v0) + int(f0), int(v1) + int(f1)))
    half.lo, half.hi = min(e[0] for e in ends), max(e[1] for e in ends)
    return half


def _bucket_count(half: _Half, target: int) -> tuple[int, int, int]:
    """(pairs of the halves, pairs per bucket aimed at, buckets): wide halves aim at
    buckets about WIDTH / 4 wide on average, so that most sort int64 offsets."""
    total = sum(len(V) * len(F) for V, F in zip(half.Va, half.Fa))
    if half.wide:
        target = max(2**14, min(target, int(total * (WIDTH / 4) / (half.hi + 1 - half.lo))))
    return total, target, max(1, math.ceil(total / target))


def _bucket_bounds(half: _Half, target: int, seed: int = 0) -> np.ndarray:
    """Key ranges holding about ``target`` (prefix, suffix) pairs each, from quantiles of
    a random sample of pairs (deterministic seed: the same buckets on every build); int64,
    or Python ints (object) for wide keys, with buckets narrowed towards WIDTH."""
    lo, hi = half.lo, half.hi + 1
    sizes = np.array([len(V) * len(F) for V, F in zip(half.Va, half.Fa)], dtype=np.int64)
    total, target, B = _bucket_count(half, target)
    inner = []
    if B > 1:
        rng = np.random.default_rng(seed)
        r = rng.integers(0, total, size=_sample_size(total, B))
        cum = np.cumsum(sizes)
        st = np.searchsorted(cum, r, side="right")
        r = r - (cum - sizes)[st]
        sample = np.empty(len(r), dtype=np.float64 if half.wide else np.int64)
        for s in np.unique(st):
            sel = st == s
            nF = len(half.Fa[s])
            sample[sel] = half.Va[s][r[sel] // nF] + half.Fa[s][r[sel] % nF]
        inner = [int(x) for x in np.quantile(sample, np.arange(1, B) / B, method="lower")]
    bounds = sorted({lo, hi, *(x for x in inner if lo < x < hi)})
    if not half.wide:
        return np.array(bounds, dtype=np.int64)
    if B > 1:  # sparse ranges: bounds at every 8th sampled key, at least WIDTH / 4 apart, so
        sample = np.sort(sample)  # that only buckets with few pairs remain wider than WIDTH
        narrow = [bounds[0]]
        for b in bounds[1:]:
            if b - narrow[-1] > WIDTH:
                for x in sample[np.searchsorted(sample, narrow[-1], "right") : np.searchsorted(sample, b) : 8]:
                    if int(x) - narrow[-1] >= WIDTH // 4 and int(x) < b:
                        narrow.append(int(x))
            narrow.append(b)
        bounds = narrow
    return np.array(bounds, dtype=object)


def _sample_size(total: int, buckets: int) -> int:
    """Pairs sampled for the bucket bounds: 256 per bucket, at most 2^24 (about 400 MB
    while they are drawn and evaluated), whatever the pairs."""
    return min(total, 256 * buckets, 2**24) if buckets > 1 else 0


def _spans(half: _Half, lo: int, hi: int):
    """Per state, the suffix index range [a, z) of each prefix value whose pairs have key
    in [lo, hi) (wide halves: candidates within the margin, to be decided by words)."""
    m = half.margin
    la, ha = (float(lo), float(hi)) if half.wide else (lo, hi)
    for s, (Va, Fa) in enumerate(zip(half.Va, half.Fa)):
        yield s, np.searchsorted(Fa, la - Va - m), np.searchsorted(Fa, ha - Va + m)


def _pairs(a: np.ndarray, z: np.ndarray):
    """The (prefix value index, suffix index) pairs of spans [a, z)."""
    n = z - a
    keep = np.flatnonzero(n > 0)
    n = n[keep]
    total = int(n.sum())
    rep = np.repeat(keep, n)
    return rep, a[rep] + (np.arange(total) - np.repeat(np.cumsum(n) - n, n))


def _offsets_kernel():
    """A bucket's key offsets from its lower bound gathered in one compiled pass, without
    numpy's index arrays for every pair (their gathering cost more than the sort), or None
    without numba (numpy serves: :func:`_sorted_offsets`)."""
    return compiled("scales.engines.offsets", _build_offsets_kernel)


def _build_offsets_kernel(numba):
    @numba.njit(nogil=True, cache=True)
    def offsets(a, z, Vw, Fw, lw, width, wide, out, pos):  # pragma: no cover
        for i in range(len(a)):
            base = Vw[i] - lw  # int64 arithmetic wraps, as numpy's: exact mod 2^64
            for j in range(a[i], z[i]):
                off = Fw[j] + base
                if wide and (off < 0 or off >= width):
                    continue  # a candidate outside the bucket
                out[pos] = off
                pos += 1
        return pos

    return offsets


def _pair_runs_kernel():
    """A bucket's key offsets and the runs behind each pair in one compiled pass (int64
    halves), or None without numba (numpy serves: :func:`_bucket`)."""
    return compiled("scales.engines.pair_runs", _build_pair_runs_kernel)


def _build_pair_runs_kernel(numba):
    @numba.njit(nogil=True, cache=True)
    def pair_runs(a, z, Vw, Vn, Fw, Fc, lw, out, runs, pos):  # pragma: no cover
        for i in range(len(a)):
            base = Vw[i] - lw
            for j in range(a[i], z[i]):
                out[pos] = Fw[j] + base
                runs[pos] = Vn[i] * (Fc[j + 1] - Fc[j])
                pos += 1
        return pos

    return pair_runs


def _bucket_listed(half: _Half, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys in [lo, hi) and the runs behind each (int64 halves): the pairs'
    offsets and runs in one compiled pass, ordered by key and summed, about
    :data:`SPLIT_LISTED_BYTES` per pair at the peak; :func:`_bucket` where numba is
    missing or the runs may pass int64."""
    kernel = _pair_runs_kernel()
    if kernel is None or half.wide or half.wide_runs:
        return _bucket(half, lo, hi, True)
    spans = _live_spans(half, lo, hi)
    n = sum(int((z - a).sum()) for _, a, z in spans)
    off, runs = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    pos = 0
    for s, a, z in spans:
        pos = kernel(a, z, half.Vw[s], half.Vn[s], half.Fw[s], half.Fc[s], lo, off, runs, pos)
    order = np.argsort(off)  # equal keys in any order: their runs are summed
    off = off[order]
    runs = runs[order]
    del order
    start = np.flatnonzero(_first_of_each(off))
    if not n:
        return off, runs
    summed = np.add.reduceat(runs, start)
    del runs  # (each pair's runs let go before the keys are gathered: a lower peak)
    keys = off[start]
    keys += lo
    return keys, summed


def _span_runs(half: _Half, spans) -> int:
    """Runs behind the pairs of ``spans`` (exact where the halves are int64, margin 0):
    per prefix value, its runs times the suffix runs of its span."""
    total = 0
    for s, a, z in spans:
        fc, vn = half.Fc[s], half.Vn[s]
        if half.wide_runs:
            fc, vn = fc.astype(object), vn.astype(object)
        total += int(((fc[z] - fc[a]) * vn).sum())
    return total


def _live_spans(half: _Half, lo: int, hi: int) -> list:
    """:func:`_spans` of the states with at least one pair in [lo, hi)."""
    return [(s, a, z) for s, a, z in _spans(half, lo, hi) if (z > a).any()]


def _sorted_offsets(half: _Half, lo: int, hi: int, spans: list | None = None) -> np.ndarray | None:
    """The keys of all pairs in [lo, hi) as int64 offsets from lo, sorted, repeats kept;
    None for a wide bucket wider than WIDTH (:func:`_bucket` serves it). ``spans``: the
    bucket's :func:`_live_spans`, when the caller has them already."""
    if half.wide and hi - lo > WIDTH:
        return None
    lw = words_of([lo])[0]
    spans = _live_spans(half, lo, hi) if spans is None else spans
    kernel = _offsets_kernel()
    if kernel is not None:
        out = np.empty(sum(int((z - a).sum()) for _, a, z in spans), dtype=np.int64)
        pos = 0
        for s, a, z in spans:
            pos = kernel(a, z, half.Vw[s], half.Fw[s], lw, hi - lo, half.wide, out, pos)
        out = out[:pos]
    else:
        parts = []
        for s, a, z in spans:
            rep, idx = _pairs(a, z)
            off = half.Fw[s][idx] + (half.Vw[s][rep] - lw)  # wraps mod 2^64 for wide keys: exact
            parts.append(off[(off >= 0) & (off < hi - lo)] if half.wide else off)  # wide: candidates
        out = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
    out.sort()
    return out


def _first_of_each(sorted_keys: np.ndarray) -> np.ndarray:
    """Where each run of equal keys starts (int64, or KEY records)."""
    keep = np.empty(len(sorted_keys), dtype=bool)
    keep[:1] = True
    if sorted_keys.dtype == KEY:
        keep[1:] = sorted_keys[1:] != sorted_keys[:-1]
    else:
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=keep[1:])
    return keep


def _distinct_kernel():
    """The number of distinct values in each prefix ``x[:cut]`` of a sorted int64 array,
    for sorted ``cuts``, and in all of it, in one compiled pass (no array of the distinct
    values), or None without numba."""
    return compiled("scales.engines.distinct", _build_distinct_kernel)


def _build_distinct_kernel(numba):
    @numba.njit(nogil=True, cache=True)
    def distinct(x, cuts, out):  # pragma: no cover
        n = 1 if len(x) else 0
        start = 1
        for j in range(len(cuts) + 1):
            end = min(cuts[j], len(x)) if j < len(cuts) else len(x)
            for i in range(start, end):
                n += x[i] != x[i - 1]
            start = max(start, end)
            if j < len(cuts):
                out[j] = n if end > 0 else 0
        return n

    return distinct


def _bucket_rank(half: _Half, lo: int, hi: int, queries, runs: bool = False):
    """(distinct keys in [lo, hi), how many of them are at or below each query, the runs
    behind the bucket's keys when ``runs`` else None)."""
    spans = _live_spans(half, lo, hi)
    off = _sorted_offsets(half, lo, hi, spans)
    counted = None
    if runs:  # int64 halves: from the spans (margin 0); wide ones: within the margin, decided by words
        counted = _bucket_runs(half, lo, hi) if half.wide else _span_runs(half, spans)
    if off is None:
        keys, _ = _bucket(half, lo, hi, False)
        return len(keys), np.searchsorted(keys, as_keys(queries), side="right"), counted
    q = np.array([min(max(int(x) - lo, -1), hi - lo) for x in queries], dtype=np.int64)
    kernel = _distinct_kernel()
    if kernel is not None:
        order = np.argsort(q, kind="stable")
        ranks = np.empty(len(q), dtype=np.int64)
        n = kernel(off, np.searchsorted(off, q[order], side="right"), ranks)
        return n, ranks[np.argsort(order, kind="stable")], counted
    distinct = off[_first_of_each(off)]
    return len(distinct), np.searchsorted(distinct, q, side="right"), counted


def _bucket(half: _Half, lo: int, hi: int, with_runs: bool):
    """Sorted distinct keys in [lo, hi) (int64, or KEY records for wide keys) and, when
    ``with_runs``, runs per key."""
    off = None if with_runs else _sorted_offsets(half, lo, hi)
    if off is not None:
        return _keys_from(half, lo, off[_first_of_each(off)]), None
    offset = not half.wide or hi - lo <= WIDTH  # keys as int64 offsets from lo
    lw = words_of([lo])[0]
    offs, wides, wts = [], [], []
    for s, a, z in _spans(half, lo, hi):
        rep, idx = _pairs(a, z)
        if offset:
            off = half.Fw[s][idx] + (half.Vw[s][rep] - lw)  # wraps mod 2^64 for wide keys: exact
            if half.wide:  # candidates within the margin: keep those in [lo, hi)
                inside = (off >= 0) & (off < hi - lo)
                off, rep, idx = off[inside], rep[inside], idx[inside]
            offs.append(off)
        else:  # a bucket wider than 2^62: candidates' exact values, filtered
            x = Wide(half.Va[s][rep] + half.Fa[s][idx], (half.Vw[s][rep] + half.Fw[s][idx]).view(np.uint64))
            hh = x.high()
            inside = ((hh > lo >> 64) | ((hh == lo >> 64) & (x.words >= np.uint64(lo & MASK)))) & (
                (hh < hi >> 64) | ((hh == hi >> 64) & (x.words < np.uint64(hi & MASK)))
            )
            wides.append(x[inside])
            rep, idx = rep[inside], idx[inside]
        if with_runs:
            fc = half.Fc[s]
            fcount, vn = fc[idx + 1] - fc[idx], half.Vn[s][rep]
            if half.wide_runs:
                fcount, vn = fcount.astype(object), vn.astype(object)
            wts.append(fcount * vn)  # runs behind the pair: at most n_runs
    runs = np.concatenate(wts) if wts else np.empty(0, dtype=np.int64)
    if offset:  # (with runs: without, _sorted_offsets served above)
        keys, runs = _sum_by_key(np.concatenate(offs) if offs else np.empty(0, dtype=np.int64), runs)
        return _keys_from(half, lo, keys), runs
    x = (
        Wide(np.concatenate([w.approx for w in wides]), np.concatenate([w.words for w in wides]))
        if wides
        else Wide(np.empty(0), np.empty(0, dtype=np.uint64))
    )
    hh = x.high()
    order = np.lexsort((x.words, hh))
    out = np.empty(len(order), dtype=KEY)
    out["hi"], out["lo"] = hh[order], x.words[order]
    start = np.flatnonzero(_first_of_each(out))
    return out[start], (
        np.add.reduceat(runs[order], start) if with_runs and len(out) else runs[:0] if with_runs else None
    )


def _keys_from(half: _Half, lo: int, offsets: np.ndarray) -> np.ndarray:
    """lo + offsets: int64, or KEY records for wide keys (carrying into the high word)."""
    if not half.wide:
        return offsets + lo
    out = np.empty(len(offsets), dtype=KEY)
    out["lo"] = np.uint64(lo & MASK) + offsets.astype(np.uint64)
    out["hi"] = (lo >> 64) + (out["lo"] < np.uint64(lo & MASK))
    return out


def _count_pairs(half: _Half, queries: np.ndarray, block: int = 2**22) -> tuple[np.ndarray, np.ndarray]:
    """Runs with key <= and < each query, counted from the halves without producing any
    key: sum over states and prefix values v of runs(v) x suffix runs with part <= q - v
    (binary searches per pair of prefix value and query, in blocks of ``block``; wide
    keys: on approximations, then exactly by words within the margin)."""
    if half.wide:
        qa, qw = np.asarray(queries, dtype=object).astype(np.float64), words_of(queries)
    else:
        qa = qw = np.asarray(queries, dtype=np.int64)
    dtype = object if half.wide_runs else np.int64
    le = np.zeros(len(qa), dtype=dtype)
    lt = np.zeros(len(qa), dtype=dtype)
    if not len(qa):
        return le, lt
    m = half.margin
    for Va, Vw, Vn, Fa, Fw, Fc in zip(half.Va, half.Vw, half.Vn, half.Fa, half.Fw, half.Fc):
        Fc = Fc.astype(dtype)
        Vn = Vn.astype(dtype)
        rows = max(1, block // len(qa))
        for a in range(0, len(Va), rows):
            t = qa[None, :] - Va[a : a + rows, None]  # suffix parts allowed behind each prefix value
            below = np.searchsorted(Fa, t - m, side="left")  # certainly < t
            upto = np.searchsorted(Fa, t + m, side="right")  # beyond: certainly > t
            if half.wide:  # between: decide by exact word differences (t - F < 2^63 there)
                tw = qw[None, :] - Vw[a : a + rows, None]
                le_i, lt_i, width = below.copy(), below.copy(), upto - below
                for j in range(int(width.max(initial=0))):
                    act = width > j
                    d = tw[act] - Fw[below[act] + j]
                    le_i[act] += d >= 0
                    lt_i[act] += d > 0
            else:
                le_i, lt_i = upto, below
            w = Vn[a : a + rows, None]
            le += (Fc[le_i] * w).sum(axis=0)
            lt += (Fc[lt_i] * w).sum(axis=0)
    return le, lt


def _bucket_runs(half: _Half, lo: int, hi: int) -> int:
    """Runs with key in [lo, hi), without producing the keys."""
    lt = _count_pairs(half, np.array([lo, hi], dtype=object if half.wide else np.int64))[1]
    return int(lt[1]) - int(lt[0])


MAX_PAIRS = 2**35  # (prefix, suffix) pairs the split engine produces by default: about 10 minutes on 2 cores


def pairs_limit(max_pairs: int | None) -> int:
    """The split engine's limit: ``MAX_PAIRS`` (None), or the caller's opt-in (a positive
    integer; ArgumentError otherwise)."""
    return MAX_PAIRS if max_pairs is None else integer("max_pairs", max_pairs, minimum=1)


def check_split(space: Space, max_pairs: int | None = None) -> None:
    """Refuse (IrscaleError), before anything is built, a split that would produce
    more than ``max_pairs`` pairs (default ``MAX_PAIRS``; its buckets hold them all in
    turn), or keys beyond int64 that its space cannot give as Wide arrays.

    ``max_pairs`` is the opt-in to longer builds: memory does not grow with the pairs
    (buckets of about 2^22 pairs, one per worker at a time, beside the two halves of
    about 2^(N/2) values per state and a bounds sample of at most 2^24 keys), the time
    does (linear in the pairs: binary AP takes about twice as long per rank of N)."""
    limit = pairs_limit(max_pairs)
    if not space.wide_split:
        space.require_int64("split")
    elif space.max_key.bit_length() > MAX_BITS:
        raise IrscaleError(
            f"{space.measure} at N={space.N}: exact keys reach {space.max_key.bit_length()} bits; the "
            f"split engine decides keys up to {MAX_BITS} bits; use a smaller N or fewer levels"
        )
    n = space.n_runs  # at most one (prefix, suffix) pair per run
    if n > limit:
        minutes = 10 * n / MAX_PAIRS  # MAX_PAIRS: about ten minutes on 2 cores
        levels = f" with {space.c + 1} relevance levels" if space.c > 1 else ""
        raise IrscaleError(
            f"{space.measure} at N={space.N}{levels}: the split engine would list "
            f"{count_text(n, space.c + 1)} pairs, more than the {limit:,} "
            + ("(about ten minutes) it accepts by default" if limit == MAX_PAIRS else "allowed")
            + f"; max_pairs={n} (CLI --max-pairs {n}, on rankmap, transform and compare) builds it in "
            f"about {minutes:,.0f} minutes on 2 cores, or use a smaller N"
            + (" or fewer relevance levels" if space.c > 1 else "")
        )


def _split_task(item, half: _Half):
    """One bucket ``(lo, hi, queries, listed)`` of :func:`split_engine`: (keys, runs per
    key) when ``listed``, else (distinct keys, ranks of the queries, runs). A module-level
    function with the halves passed as a shared argument, so that a Dask cluster receives
    them once (not inside every task)."""
    lo, hi, q, listed = item
    if listed:
        return _bucket_listed(half, lo, hi)
    return _bucket_rank(half, lo, hi, q, runs=True)


SPLIT_PAIR_BYTES = 8  # per pair of a bucket while it is counted (its key offsets, sorted in place), per worker
SPLIT_LISTED_BYTES = 33  # per pair of a bucket while its keys and runs are listed (_bucket_listed), per worker
# (32 while its pairs are sorted; 33 where every pair has its own key and the keys are gathered)
SPLIT_KEPT_BYTES = 16  # per listed key (key and runs) kept until the buckets are joined
SPLIT_SAMPLE_BYTES = 24  # per pair sampled for the bucket bounds (positions, states, keys)
SPLIT_WIDE_BYTES = 88  # per candidate pair of a bucket wider than WIDTH (exact records: _bucket), per worker
SPLIT_SLACK = 1.1  # the largest bucket over the mean (bounds from a sample's quantiles)


def _split_layout(
    half: _Half, bounds: np.ndarray, bucket_pairs: int, keep_in_memory: int, limit, workers: int | None = None
) -> tuple[bool, int]:
    """(whether the split lists every key and its runs (a Table), its peak memory): the
    halves, and the larger of the bounds sample and the buckets the workers hold at once
    (keys listed: :data:`SPLIT_LISTED_BYTES` per pair, beside the keys kept; counted
    only: :data:`SPLIT_PAIR_BYTES`). Keys are listed where the pairs are at most
    ``keep_in_memory``, int64, and the listing fits the memory budget ``limit`` (else the
    buckets stream: a :class:`Buckets` summary). ``workers``: how many buckets are worked
    on at once (default: :func:`irscale.parallel.local_workers`). The distinct keys,
    known only once listed, are estimated from a sample of pairs
    (:func:`_distinct_share`)."""
    from irscale.parallel import local_workers
    from irscale.scales import budget

    total, target, B = _bucket_count(half, bucket_pairs)
    arrays = {id(a): a for part in (half.Va, half.Vw, half.Vn, half.Fa, half.Fw, half.Fc) for a in part}
    held = sum(a.nbytes for a in arrays.values())
    largest = min(total, math.ceil(total / B * SPLIT_SLACK))  # pairs of the largest bucket
    sample = _sample_size(total, B) * SPLIT_SAMPLE_BYTES
    workers = local_workers(len(bounds) - 1, workers)
    streamed = workers * largest * SPLIT_PAIR_BYTES
    if half.wide:  # buckets wider than WIDTH decide their candidates as exact records: counted here
        ranges = zip(bounds[:-1].tolist(), bounds[1:].tolist())
        widest = max(
            (sum(int((z - a).sum()) for _, a, z in _live_spans(half, lo, hi)) for lo, hi in ranges if hi - lo > WIDTH),
            default=0,
        )
        streamed = max(streamed, widest * SPLIT_WIDE_BYTES + (workers - 1) * largest * SPLIT_PAIR_BYTES)
    streamed = held + max(sample, streamed)
    if total > keep_in_memory or half.wide:
        return False, streamed
    share = _distinct_share(half, total)
    keys = math.ceil(total * share)  # the distinct keys estimated
    kept = SPLIT_KEPT_BYTES * keys  # the last buckets listed beside the keys of all others, or the join
    last = workers * largest * SPLIT_LISTED_BYTES + SPLIT_KEPT_BYTES * max(0, keys - workers * keys // B)
    listed = held + max(sample, last, kept + kept // 2)
    return (True, listed) if budget.fits(listed, limit) else (False, streamed)


def _distinct_share(half: _Half, total: int, samples: int = 256, seed: int = 1) -> float:
    """The share of distinct keys among the pairs of int64 halves, estimated (seeded, so
    the same on every call) from ``samples`` pairs drawn uniformly: the mean of 1 / (pairs
    with its key) is the share (unbiased), raised by two standard errors (at most 1) so
    that a low draw does not pass a listing that would not fit. Each key's pairs are
    counted exactly, per state by binary searches of the key minus every prefix value
    among the suffix values."""
    sizes = np.array([len(V) * len(F) for V, F in zip(half.Va, half.Fa)], dtype=np.int64)
    r = np.random.default_rng(seed).integers(0, total, size=min(samples, total))
    cum = np.cumsum(sizes)
    st = np.searchsorted(cum, r, side="right")
    r = r - (cum - sizes)[st]
    keys = np.array([half.Va[s][k // len(half.Fa[s])] + half.Fa[s][k % len(half.Fa[s])] for s, k in zip(st, r)])
    sharing = np.zeros(len(keys), dtype=np.int64)
    step = max(1, 2**20 // len(keys))  # prefix values per block: at most 2^20 searches at once
    for V, F in zip(half.Va, half.Fa):
        for a in range(0, len(V), step):
            t = keys[:, None] - V[None, a : a + step]
            sharing += (np.searchsorted(F, t, side="right") - np.searchsorted(F, t, side="left")).sum(axis=1)
    share = 1.0 / sharing  # (at least the drawn pair itself shares its key: no zero)
    return min(1.0, float(share.mean() + 2 * share.std() / np.sqrt(len(share))))  # two standard errors above


SPLIT_BUCKET = 2**22  # (prefix, suffix) pairs a bucket aims at
SPLIT_LISTED = 2**25  # pairs up to which the split engine lists every key (a Table)


def split_engine_bytes(space: Space, h: int | None = None, max_pairs: int | None = None) -> int:
    """The split engine's peak memory on ``space``, estimated before its buckets are
    produced: its halves are prepared (about the square root of the pairs; at most a few
    hundred MB and a second) and its bucket bounds drawn, then :func:`_split_layout`
    sizes the rest. ``max_pairs``: see :func:`check_split`."""
    from irscale.scales import budget

    check_split(space, max_pairs)
    half = _prepare(space, space.N // 2 if h is None else h)
    return _split_layout(half, _bucket_bounds(half, SPLIT_BUCKET), SPLIT_BUCKET, SPLIT_LISTED, budget.budget())[1]


def split_engine(
    space: Space,
    h: int | None = None,
    bucket_pairs: int = SPLIT_BUCKET,
    scheduler=None,
    progress: Progress = None,
    keep_in_memory: int = SPLIT_LISTED,
    queries=None,
    max_pairs: int | None = None,
) -> Table | Buckets:
    """Meet in the middle (see the module doc). Returns the whole table where the pairs
    are at most ``keep_in_memory``, int64, and listing them fits the memory budget
    (:func:`_split_layout`), else the bucket summary, with phi of ``queries`` (exact
    keys) computed in the same pass over the buckets (``Buckets.answers``: a second
    pass would cost as much as the build). ``max_pairs``: see :func:`check_split` (default ``MAX_PAIRS``)."""
    from irscale.scales import budget

    check_split(space, max_pairs)
    h = space.N // 2 if h is None else h
    half = _prepare(space, h)
    bounds = _bucket_bounds(half, bucket_pairs)
    limit = budget.budget()  # read once: the choice and the check see the same budget
    # on a Dask scheduler, as many buckets at once as the machine has CPUs (its threads)
    workers = None if scheduler is None else os.cpu_count() or 1
    small, need = _split_layout(half, bounds, bucket_pairs, keep_in_memory, limit, workers)
    budget.check(
        need,
        f"{space.measure} at N={space.N} on {space.c + 1} levels: the split engine",
        "use a smaller N or fewer relevance levels",
        limit,
    )
    ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    q = np.unique(np.asarray([] if queries is None or small else queries, dtype=bounds.dtype))
    where = np.clip(np.searchsorted(bounds, q, side="right") - 1, 0, len(ranges) - 1)
    items = [(lo, hi, q[where == i], small) for i, (lo, hi) in enumerate(ranges)]
    res = parallel_map(_split_task, items, scheduler, progress, shared={"half": half})
    if small:  # keys joined first, their parts let go, then the runs
        keys = np.concatenate([r[0] for r in res]) if res else np.empty(0, dtype=np.int64)
        runs_parts = [r[1] for r in res]
        del res
        return Table(keys, np.concatenate(runs_parts) if runs_parts else keys.copy())
    cum_d = np.concatenate([[0], np.cumsum([r[0] for r in res])]).astype(np.int64)
    cum_r = np.concatenate([[0], np.cumsum(np.array([r[2] for r in res], dtype=object))])
    out = attach_buckets(space, h, bounds, cum_d, cum_r, half)
    if len(q):
        phi = np.empty(len(q), dtype=np.int64)
        for i, r in enumerate(res):
            phi[where == i] = cum_d[i] + r[1]
        out.answers = (q, phi)
    return out


def attach_buckets(space: Space, h: int, bounds, cum_d, cum_r, half: _Half | None = None) -> Buckets:
    """A bucket summary whose buckets are regenerated from the space (halves prepared
    lazily, so a summary loaded from the cache costs nothing until a bucket is asked)."""
    ranges = list(zip(np.asarray(bounds)[:-1].tolist(), np.asarray(bounds)[1:].tolist()))
    state = {"half": half}

    def ready() -> _Half:
        got = state["half"]
        if got is None:
            got = state["half"] = _prepare(space, h)
        return got

    @functools.lru_cache(maxsize=8)  # the last buckets asked (listing)
    def regenerate(b: int, with_runs: bool):
        return _bucket(ready(), ranges[b][0], ranges[b][1], with_runs)

    def rank(groups: list[tuple[int, np.ndarray]]) -> list[np.ndarray]:
        half = ready()  # buckets in parallel threads (sorting and the offsets kernel release the GIL)

        def one(g: tuple[int, np.ndarray]) -> np.ndarray:
            lo, hi = ranges[g[0]]
            return _bucket_rank(half, lo, hi, g[1])[1]

        return parallel_map(one, groups)

    def count_pairs(queries):
        return _count_pairs(ready(), queries)

    bounds = np.asarray(bounds)
    return Buckets(
        h,
        bounds if bounds.dtype == object else bounds.astype(np.int64),
        np.asarray(cum_d, dtype=np.int64),
        np.asarray(cum_r, dtype=object),
        regenerate,
        count_pairs,
        rank,
    )
