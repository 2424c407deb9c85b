"""Counting without enumeration, for additive measures whose value set is known in size.

RBP with rational p = a/b and b > c (binary: any p; with a gain map, no two gains
differing by a multiple of b): all (c+1)^N runs have distinct values
(:func:`rbp_runs_distinct`), so ``|M(REL^N)| = (c+1)^N`` and phi(x) = the number of
runs with value <= x. DCG (any log base): the value depends on the sums of the classes
of commensurable weights only, and distinct class-sum vectors are taken to have
distinct values (checked exhaustively by the ``dcg`` engine wherever it can hold the
set, and at every query below for the values near the query), so ``|M|`` is the number of
class-sum vectors and phi(x) again a count.

The count is a meet in the middle: the units (ranks or classes) split into two halves,
each half's partial values enumerated and sorted once; for a query x, each prefix value
v contributes the suffix values <= x - v, found by one merge of the two sorted halves
per query (:mod:`irscale.scales.merge`; queries in parallel). Floating point decides
all pairs except those within a tolerance of x, which are decided exactly (integers
for RBP, 60-digit arithmetic for DCG).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from irscale.errors import IrscaleError
from irscale.scales.spaces.dcg import DCGSpace
from irscale.scales.spaces.rbp import RBPSpace
from irscale.scales.valuesets import ValueSet, kind

__all__ = [
    "check_counter",
    "check_dcg",
    "check_rbp",
    "COUNT_BYTES",
    "count_engine_bytes",
    "Counter",
    "counter_for",
    "dcg_counter",
    "Deferred",
    "MAX_HALF",
    "rbp_counter",
    "rbp_runs_distinct",
    "runs_at_value",
]


@kind("count")
@dataclass
class Counter(ValueSet):
    """A value set answered by counting (see the module doc): ``size`` values, never
    listed; phi and run counts by :meth:`count_many`."""

    size: int
    P: np.ndarray  # prefix partial values, float64, sorted
    S: np.ndarray  # suffix partial values, float64, sorted
    Pn: np.ndarray | None  # runs behind each prefix value, uint64 (None with Sn: one each, as in RBP)
    Sn: np.ndarray | None  # runs behind each suffix value, uint64 (None with Pn)
    exact_le: Callable = field(repr=False)  # (i_prefix array, j_suffix array, query) -> bool array
    split: Callable = field(repr=False)  # query keys -> (float values, query objects for exact_le)
    runs_at_value: Callable = field(repr=False)  # query keys -> runs having exactly each key's value
    # pairs within tol * scale of the query are decided exactly (scale: a bound on the sum
    # of the absolute terms of any run's value; :func:`_tolerance` bounds the float error)
    tol: float = 0.0
    scale: float = 1.0
    scheduler: object = field(default=None, repr=False)  # Dask scheduler for the queries (None: threads)
    progress: Callable | None = field(default=None, repr=False)  # progress(done, total) per block of queries

    memo = True

    def phi(self, keys):
        return self.count_many(keys)

    def runs_le(self, keys):
        return np.asarray(self.count_many(keys, weighted=True)).astype(object)

    def __post_init__(self):
        self._runs_le_of: dict = {}  # runs <= each key, counted in the same pass as its phi
        # one run per pair (RBP, both None): the runs below are the pairs below, no run sums kept
        self._unit = self.Pn is None and self.Sn is None
        if self._unit:
            self.Pn = self.Sn = self.Pc = self.Sc = np.zeros(1, dtype=np.uint64)  # read by no kernel
            self._sums = 0
            return
        Pn, Sn = np.asarray(self.Pn), np.asarray(self.Sn)  # both given (one None alone is not a counter)
        self.Sc = np.concatenate([[0], np.cumsum(Sn, dtype=np.uint64)]).astype(np.uint64)
        self.Pc = np.concatenate([[0], np.cumsum(Pn, dtype=np.uint64)]).astype(np.uint64)
        # each half's runs stay below 2^64 (check_dcg), so the uint64 sums are exact
        total = int(self.Pc[-1]) * int(self.Sc[-1])
        # run sums modulo 2^64 suffice below 2^63 (merge.exact_sum)
        self._sums = 1 if total < 2**63 else 2

    def runs_at(self, keys):
        return np.asarray(self.runs_at_value(keys)).astype(object)

    def listed(self, first=None, last=None):
        return None  # the counting engine never lists the values

    @classmethod
    def from_arrays(cls, space, z):
        return Deferred(space, int(z["size"]))  # answers persist beside; halves rebuilt if a new key comes

    def count_many(self, keys, weighted: bool = False, block: int = 16) -> np.ndarray:
        """Distinct values (``weighted=False``; each pair of partial values is one value)
        or runs (``weighted=True``) with value <= each query's: the merge of
        :mod:`irscale.scales.merge` per query, queries in blocks of ``block`` run in
        parallel (threads, or the Dask ``scheduler``), pairs within the tolerance decided
        exactly. Counts are exact Python ints (object array) when weighted, else int64.
        One pass counts both; the run counts are kept for the keys, so the "mid" ranks
        asked after the "unq" ones cost nothing more."""
        from irscale.parallel import parallel_map
        from irscale.scales import merge

        keys = list(keys)
        if weighted and all(int(k) in self._runs_le_of for k in keys):  # counted with their phi
            return np.array([self._runs_le_of[int(k)] for k in keys], dtype=object)
        x, queries = self.split(keys)
        x = np.asarray(x, dtype=np.float64)
        tol = self.tol * np.maximum(self.scale, np.abs(x))
        by_value = np.argsort(x, kind="stable")  # a block's queries merge through nearby parts of S
        blocks = [by_value[a : a + block] for a in range(0, len(keys), block)]
        P, S = self.P, self.S
        halves = dict(P=P, S=S, Pn=self.Pn, Pc=self.Pc, Sc=self.Sc)  # sent once to each Dask worker
        parts = parallel_map(
            _scan_block,
            [(x[idx], tol[idx], self._sums) for idx in blocks],
            self.scheduler,
            self.progress,
            shared=halves,
        )
        if not parts:
            return np.zeros(0, dtype=object if weighted else np.int64)
        row = np.empty(len(keys), dtype=np.int64)  # query q's row in the results
        row[np.concatenate(blocks)] = np.arange(len(keys))
        lo, hi, wmod, wflt = (np.concatenate([p[k] for p in parts])[row] for k in range(4))
        kept = None if parts[0][4] is None else tuple(np.concatenate([p[k] for p in parts])[row] for k in (4, 5))
        unq, le = [], []
        for q in range(len(keys)):
            n_values = int(lo[q])
            n_runs = n_values if self._unit else merge.exact_sum(wmod[q], wflt[q])
            nb = int(hi[q] - lo[q])
            if nb:  # pairs too close to the query to call in floating point
                if kept is not None and nb <= merge.BAND:
                    i, j = kept[0][q, :nb], kept[1][q, :nb]
                else:
                    i, j = merge.band(P, S, x[q], tol[q], nb)
                ok = self.exact_le(i, j, queries[q])
                n_values += int(ok.sum())
                if self._unit:
                    n_runs += int(ok.sum())
                else:
                    Pn, Sn = np.asarray(self.Pn), np.asarray(self.Sn)
                    n_runs += sum((int(a) * int(b) for a, b in zip(Pn[i[ok]], Sn[j[ok]])), 0)
            unq.append(n_values)
            le.append(n_runs)
            self._runs_le_of[int(keys[q])] = n_runs
        return np.array(le, dtype=object) if weighted else np.array(unq, dtype=np.int64)


def _scan_block(block, P, S, Pn, Pc, Sc):
    """One block of queries (a task; the halves come as shared arguments): merge.scan,
    run sums included (the "mid" ranks ask them next)."""
    x, tol, sums = block
    from irscale.scales import merge

    return merge.scan(P, S, Pn, Pc, Sc, x, tol, sums)


class Deferred(ValueSet):
    """A count-engine value set loaded from the cache: its size is known, and its halves
    (seconds to build at N = 30) are built only when a query is not among the answers
    stored beside it, so a warm transform is a lookup."""

    kind = "count"
    memo = True
    size: int  # (ValueSet's read-only size: an attribute here, set by __init__)
    scheduler: object  # as Counter's: given to the counter when it is built
    progress: Callable | None

    def __init__(self, space, size: int):
        self.space, self.size = space, size
        self.scheduler = self.progress = None
        self._counter: Counter | None = None

    def _built(self) -> Counter:
        if self._counter is None:
            self._counter = counter_for(self.space)
        self._counter.scheduler, self._counter.progress = self.scheduler, self.progress
        return self._counter

    def phi(self, keys):
        return self._built().phi(keys)

    def runs_le(self, keys):
        return self._built().runs_le(keys)

    def runs_at(self, keys):  # from the space alone: no halves needed
        return np.asarray(runs_at_value(self.space, keys)).astype(object)

    def listed(self, first=None, last=None):
        return None  # the counting engine never lists the values


def runs_at_value(space, keys) -> np.ndarray:
    """Runs having exactly each key's value, in a space the count engine serves: DCG's
    runs behind the key's class sums; 1 for RBP (every run its own value)."""
    if isinstance(space, DCGSpace):
        k = np.array([int(x) for x in keys], dtype=np.int64 if space.int64 else object)
        return space.runs_behind(space.decode(k))
    return np.ones(len(keys), dtype=object)


MAX_HALF = 2**25  # partial values held per half (a float64, its exact form and its runs: 24 bytes each)


COUNT_BYTES = {"rbp": 20, "dcg": 38}  # the count engine's peak per partial value of both halves (tracemalloc)


def count_engine_bytes(space) -> int:
    """The count engine's peak memory on ``space``, from the sizes of its two halves before
    anything is built: :data:`COUNT_BYTES` per partial value (RBP: a float position and
    the grades, 16 bytes, and the last merge's input; DCG: a float value, a code, the runs
    behind it and their running sum, 32 bytes, and the last merge's input)."""
    if isinstance(space, DCGSpace):
        cut, sizes = _dcg_cut(space), [len(a) for a in space.attainable]
        return COUNT_BYTES["dcg"] * (math.prod(sizes[:cut]) + math.prod(sizes[cut:]))
    g = len(space.gain_ints)
    return COUNT_BYTES["rbp"] * (g ** (space.N - space.N // 2) + g ** (space.N // 2))


def _check_budget(space) -> None:
    """Refuse the count engine on ``space`` where its halves exceed the memory budget."""
    from irscale.scales import budget

    budget.check(
        count_engine_bytes(space),
        f"{space.measure} at N={space.N} on {space.c + 1} levels: the count engine",
        "use a smaller N or fewer relevance levels",
    )


def _check_half(space, n: int) -> None:
    """Refuse halves of ``n`` partial values (the larger half) beyond :data:`MAX_HALF`."""
    if n > MAX_HALF:
        raise IrscaleError(
            f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: a half of the pair "
            f"count would hold {n:,} partial values (about {n * 48 / 2**30:.0f} GiB while it is "
            f"built); up to {MAX_HALF:,} are held: use a smaller N or fewer levels "
            "(max_grade= / --max-grade, or relevance='lenient')"
        )


def _digit_sums(weights: list[int], total: int, gains: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Every sum of G[g_k] * weights[k] with grades g_k in 0..c (``gains`` = G, the
    integer gains of grades 0..c: 0..c by default), as a fraction of ``total``: float64
    positions sorted ascending, and for each the grades as a number in base c + 1 (the
    first weight's grade its most significant digit), from which the exact sum is
    recomputed when a pair is too close to call; built weight by weight, each step a
    merge of sorted arrays (:func:`irscale.scales.merge.spread`).

    Each weight's fraction is an int / int true division, correctly rounded however
    large the integers, times a gain (one more rounding); a position sums at most N of
    them, one rounding each: within the counter's tolerance (:func:`_tolerance`)."""
    from irscale.scales import merge

    vals, codes = np.zeros(1), np.zeros(1, dtype=np.int64)
    for w in weights:
        f = w / total
        vals, codes, _ = merge.spread(vals, codes, None, [G * f for G in gains], len(gains), None)
    return vals, codes


def _digit_sum(weights: list[int], code: int, gains: list[int]) -> int:
    total, base = 0, len(gains)
    for w in reversed(weights):  # the last weight's grade is the least significant digit
        code, g = divmod(code, base)
        total += gains[g] * w
    return total


def _tolerance(n: int, weight_error: float = 32) -> float:
    """The count engine's tolerance for values of ``n`` units (ranks or classes), as a
    multiple of the counter's ``scale``: a bound on the sum of the absolute terms of any
    value (RBP: the largest absolute gain, its weights summing to 1; DCG: the sum over
    the classes of the largest absolute class sum times the class weight).

    With u = 2^-53 and a first-order analysis (terms in u^2 dropped, far inside the
    factor 2 below): a weight is within ``weight_error`` u of its exact value (RBP's, a
    fraction of two integers, is correctly rounded: u; DCG's, logarithms and divisions,
    are measured against 60-digit values when the counter is built, :func:`dcg_counter`,
    and 32u is assumed unless they are further off), a term one rounding more, and a
    partial value one rounding per unit, each within u * scale. So a pair of partial
    values (n units in all) lies within (n + W + 1) u * scale of its exact value (W the
    weight error), the query as well (a dot product of n terms; RBP's, one division,
    within u * scale), and the kernel's two subtractions (``x - P[i]``, then the
    tolerance) add 4u * scale: a pair the floats put below or above the query by more
    than (2n + 2W + 6) u * scale is so exactly. The tolerance is twice that, per query
    ``tol * max(scale, |x|)`` (|x| is at most the scale, up to rounding)."""
    return 2 * (2 * n + 2 * weight_error + 6) * 2.0**-53


def _weight_error(space: DCGSpace) -> float:
    """How far (in units of 2^-53, relative) the DCG class weights the counter sums are
    from their 60-digit values: measured, so that the tolerance holds whatever the
    platform's logarithm (at least the 32 :func:`_tolerance` assumes)."""
    import mpmath

    worst = 0.0
    with mpmath.workdps(60):
        for w, exact in zip(space.class_weights, space._exact_class_weights):
            if exact:
                worst = max(worst, float(abs((mpmath.mpf(float(w)) - exact) / exact)) / 2.0**-53)
    return max(32.0, 2 * worst)


def check_counter(space) -> None:
    """Refuse (IrscaleError) a space the count engine cannot serve, before anything is
    built: spaces other than RBP's and DCG's, graded RBP with ties (p = a/b, b <= c), and
    halves beyond ``MAX_HALF`` partial values or the memory budget
    (:func:`count_engine_bytes`). Called when the engine is chosen, so a long job fails
    before it reads or builds anything."""
    if isinstance(space, RBPSpace):
        check_rbp(space)
    elif isinstance(space, DCGSpace):
        check_dcg(space)
    else:
        raise IrscaleError(f"{space.measure}: the count engine serves RBP (p = a/b with b > c) and DCG/nDCG")
    _check_budget(space)


def counter_for(space) -> Counter:
    """The count engine's value set of an RBP or DCG space (each checks its limits first)."""
    if not isinstance(space, (RBPSpace, DCGSpace)):
        check_counter(space)  # refuses
    return rbp_counter(space) if isinstance(space, RBPSpace) else dcg_counter(space)


def check_rbp(space) -> None:
    """The count engine's limits for RBP (:func:`check_counter`): every run
    must have its own value (:func:`rbp_runs_distinct`)."""
    if not rbp_runs_distinct(space):
        a, b = space.ab
        G = space.gain_ints
        why = (
            f"p = {a}/{b} has b <= c = {space.c}"
            if G == list(range(len(G)))
            else f"with p = {a}/{b} and integer gains {', '.join(map(str, G))} two grades gain alike or differ by a "
            f"multiple of b = {b}"
        )
        raise IrscaleError(
            f"{space.measure} with {space.c + 1} relevance levels: {why}, so different runs can tie "
            "and counting runs does not count values; engine='split' or 'enumerate' (CLI --engine "
            "split) serve it while its keys fit in 64 bits and its runs in their limits"
        )
    _check_half(space, len(space.gain_ints) ** (space.N - space.N // 2))


def rbp_runs_distinct(space) -> bool:
    """Whether all (c+1)^N runs are proven to have distinct RBP values, for p = a/b in
    lowest terms and the space's integer gains G_0 <= ... <= G_c (:func:`space_gains`:
    0..c by default, 0, 1 binary; a gain map scaled to integers with no common factor):
    true when for every two grades i != j, G_i - G_j is nonzero and not divisible by b.

    Proof. Two different runs g, g' tie iff sum_k d_k a^(k-1) b^(N-k) = 0 with
    d_k = G(g_k) - G(g'_k). The runs differ somewhere, and there d_k != 0 (distinct
    grades gain differently); let l be the last such rank. Ranks after l add 0; divide
    the rest by b^(N-l): sum_(k<=l) d_k a^(k-1) b^(l-k) = 0. Modulo b every term with
    k < l vanishes, so b divides d_l a^(l-1), hence d_l (gcd(a, b) = 1): excluded.

    For gains 0..c the differences are -c..c, so the condition reads b > c, and it is
    also necessary there (N >= 2): when b <= c, d = (a, -b, 0, ..., 0) (a < b <= c) is a
    difference of two runs and a b^(N-1) - b a b^(N-2) = 0. For other gain maps a
    failed condition proves nothing either way: the count engine refuses (phi would count
    runs, not values) and split or enumerate, which tie runs by their exact keys, serve
    the space."""
    b = space.ab[1]
    G = space.gain_ints
    return all(gi != gj and (gi - gj) % b != 0 for i, gi in enumerate(G) for gj in G[:i])


def check_dcg(space) -> None:
    """The count engine's limits for DCG / nDCG (:func:`check_counter`): each
    half of the classes holds at most ``MAX_HALF`` class-sum vectors. Rational ties
    (2 x 1/2 = 1 in graded DCG) are inside one class's sum, so distinct vectors are
    distinct values for graded runs too."""
    cut = _dcg_cut(space)
    sizes = [len(a) for a in space.attainable]
    _check_half(space, max(math.prod(sizes[:cut]), math.prod(sizes[cut:])))
    ranks = max(sum(map(len, space.classes[:cut])), sum(map(len, space.classes[cut:])))
    if (space.c + 1) ** ranks >= 2**64:  # runs behind one vector of a half are held in uint64
        raise IrscaleError(
            f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: the runs behind a "
            f"half of the classes reach {space.c + 1}^{ranks}, beyond the 2^64 the count engine "
            "holds; use a smaller N or fewer levels (--max-grade, max_grade= in the API)"
        )


def _dcg_cut(space) -> int:
    """Split the classes so that both halves have about sqrt(size) class-sum vectors."""
    radix = [len(a) for a in space.attainable]
    logs = np.log(radix)
    cut = int(np.searchsorted(np.cumsum(logs), logs.sum() / 2)) + 1
    return min(max(cut, 1), len(radix) - 1) if len(radix) > 1 else len(radix)


def rbp_counter(space: RBPSpace) -> Counter:
    """RBP, p = a/b with b > c (gain maps: :func:`rbp_runs_distinct`): a run's exact key
    is sum of G(g_k) a^(k-1) b^(N-k), a
    Python int of about N log2(b) bits (beyond 64 bits from N = 14 at p = 0.95), and
    every run has its own value (:func:`rbp_runs_distinct`), so phi counts runs. The
    halves hold float positions (key / total key) with their grades; pairs the floats
    cannot decide are decided on exact Python-int keys, so phi is exact at every N
    accepted."""
    check_counter(space)
    N, G = space.N, space.gain_ints
    h = N // 2
    w = space.weights  # Python ints
    total = sum(w)
    wp, ws = w[:h], w[h:]
    P, Pm = _digit_sums(wp, total, G)
    S, Sm = _digit_sums(ws, total, G)

    def split(keys):
        X = [int(k) for k in keys]
        return [k / total for k in X], X  # int / int: correctly rounded

    def exact_le(i, j, X):
        return np.array(
            [_digit_sum(wp, int(Pm[ii]), G) + _digit_sum(ws, int(Sm[jj]), G) <= X for ii, jj in zip(i, j)], dtype=bool
        )

    return Counter(
        len(G) ** N,
        P,
        S,
        None,
        None,
        exact_le,
        split,
        functools.partial(runs_at_value, space),
        tol=_tolerance(N),
        scale=float(max(abs(g) for g in G)),
    )


def _class_half(space: DCGSpace, lo: int, hi: int):
    """Every class-sum vector of classes lo..hi-1 as (float value, code, runs behind it),
    sorted by value; built class by class, each step a merge of sorted arrays
    (:func:`irscale.scales.merge.spread`; no matrix of vectors is held). The code is the
    vector's index in the half: mixed radix over the number of attainable sums of each
    class, so it stays below the half's size (int64 whatever the gains' scale)."""
    from irscale.scales import merge

    w = space.class_weights
    vals = np.zeros(1)
    codes = np.zeros(1, dtype=np.int64)
    runs = np.ones(1, dtype=np.uint64)  # below 2^64: check_dcg bounds the runs behind a half
    for cl in range(lo, hi):
        att = space.attainable[cl]
        ways = np.array([space._ways[cl][t] for t in att], dtype=np.uint64)
        vals, codes, runs = merge.spread(vals, codes, runs, att * w[cl], len(att), ways)
    return vals, codes, runs


def _half_sums(space: DCGSpace, codes: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The class sums (n, hi - lo) of half codes (:func:`_class_half`)."""
    codes = np.array(codes, dtype=np.int64)
    out = np.empty((len(codes), hi - lo), dtype=np.int64)
    for cl in range(hi - 1, lo - 1, -1):
        att = space.attainable[cl]
        out[:, cl - lo] = att[codes % len(att)]
        codes //= len(att)
    return out


def _half_code(space: DCGSpace, sums, lo: int) -> int:
    """The half code of one vector of class sums (classes lo.. of ``sums``)."""
    code = 0
    for k, t in enumerate(sums):
        att = space.attainable[lo + k]
        code = code * len(att) + int(np.searchsorted(att, t))
    return code


def dcg_counter(space: DCGSpace) -> Counter:
    """DCG / nDCG: phi counts class-sum vectors (one value each, under the assumption
    stated in :class:`~irscale.scales.spaces.dcg.DCGSpace`), pairs of halves of the
    classes; pairs within the tolerance are decided in 60-digit arithmetic, and a pair
    equal there to the query but not the query's own vector stops with an error."""
    check_counter(space)
    n_cls = len(space.classes)
    cut = _dcg_cut(space)
    halves = [_class_half(space, 0, cut), _class_half(space, cut, n_cls)]
    first_outer = len(halves[0][0]) <= len(halves[1][0])  # the merge steps over the counter's P fully
    (P, Pcode, Pn), (S, Scode, Sn) = halves if first_outer else halves[::-1]

    def split(keys):
        k = np.array([int(x) for x in keys], dtype=object if not space.int64 else np.int64)
        tot = space.decode(k)
        return tot @ space.class_weights, [
            (_half_code(space, t[:cut], 0), _half_code(space, t[cut:], cut), t) for t in tot
        ]

    def exact_le(i, j, query):
        qa, qb, tot = query
        a, b = (Pcode[i], Scode[j]) if first_outer else (Scode[j], Pcode[i])  # classes 0..cut-1, then the rest
        out = (a == qa) & (b == qb)  # the query's own vector: its own value
        other = np.flatnonzero(~out)
        if not len(other):
            return out
        both = np.concatenate([_half_sums(space, a[other], 0, cut), _half_sums(space, b[other], cut, n_cls)], axis=1)
        xq = space.exact_value(tot)
        for k, vec in zip(other, both):
            v = space.exact_value(vec)
            if abs(v - xq) <= abs(xq) * 1e-50:
                raise IrscaleError(
                    f"{space.measure} at N={space.N}: two different class totals have equal "
                    "values; the counting engine assumes none (report this)"
                )
            out[k] = v <= xq
        return out

    scale = float(sum(np.abs(att).max() * w for att, w in zip(space.attainable, space.class_weights)))
    return Counter(
        space.n_values,
        P,
        S,
        Pn,
        Sn,
        exact_le,
        split,
        functools.partial(runs_at_value, space),
        tol=_tolerance(n_cls, _weight_error(space)),
        scale=scale,
    )
