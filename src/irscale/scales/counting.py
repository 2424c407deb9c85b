"""Counting without enumeration, for additive measures whose value set is known in size.

Binary RBP with rational p = a/b: all 2^N runs have distinct values (if two differed
in ranks with signs e_k in {-1, 0, 1}, the largest such rank l gives, after scaling by
b^(l-1), a sum that is e_l a^(l-1) mod b, never 0 since gcd(a, b) = 1 and b >= 2), so
|M(REL^N)| = 2^N and phi(x) = the number of runs with value <= x. DCG (any log base):
the value depends on the gain totals of the classes of equally weighted ranks only, and
distinct total vectors are taken to have distinct values (checked exhaustively by the
``dcg`` engine wherever it can hold the set, and at every query below for the values
near the query), so |M| is the number of total vectors and phi(x) again a count.

The count is a meet in the middle: the units (ranks or classes) split into two halves,
each half's partial values enumerated and sorted once; for a query x, each prefix value
v contributes the suffix values <= x - v (a binary search). Floating point decides all
pairs except those within a tolerance of x, which are decided exactly (integers for
RBP, 60-digit arithmetic for DCG).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from irscale.errors import IrscaleError
from irscale.scales.spaces import DCGSpace, RBPSpace
from irscale.scales.valuesets import ValueSet, kind


@kind("count")
@dataclass
class Counter(ValueSet):
    """A value set answered by counting (see the module doc): ``size`` values, never
    listed; phi and run counts by :meth:`count_many`."""

    size: int
    P: np.ndarray  # prefix partial values, float64, sorted
    S: np.ndarray  # suffix partial values, float64, sorted
    Pn: np.ndarray  # runs behind each prefix value (for min/max over the multiset)
    Sc: np.ndarray  # cumulative runs behind suffix values (len + 1)
    exact_le: Callable = field(repr=False)  # (i_prefix array, j_suffix array, query) -> bool array
    split_query: Callable = field(repr=False)  # query key -> (float value, query object)
    runs_of: Callable = field(repr=False)  # query key -> runs having exactly its value
    # pairs within tol * max(1, |x|) of the query are decided exactly; float sums of at
    # most N partial values carry errors below N * 2^-52 * |x|, far inside this margin
    tol: float = 0.0

    memo = True

    def phi(self, keys):
        return self.count_many(keys)

    def runs_le(self, keys):
        return np.asarray(self.count_many(keys, weighted=True)).astype(object)

    def runs_at(self, keys):
        return np.array([self.runs_of(k) for k in keys], dtype=object)

    def listed(self, first=None, last=None):
        return None  # the counting engine never lists the values

    @classmethod
    def from_arrays(cls, space, z):
        return space.counter()  # the halves are rebuilt (fast); answers persist beside

    @property
    def Sn(self) -> np.ndarray:
        return np.diff(self.Sc)

    @property
    def Pc(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.Pn)])

    def count_many(self, keys, weighted: bool = False) -> np.ndarray:
        """:meth:`count` of many queries at once: one binary search per prefix value over
        all queries (cheaper than one pass over the prefixes per query when there are
        more than a few hundred queries)."""
        wide = weighted and (self.Pn.dtype == object or self.Sc.dtype == object)
        if len(keys) < 256:
            return np.array([self.count(k, weighted) for k in keys], dtype=object if wide else np.int64)
        split = [self.split_query(k) for k in keys]
        x = np.array([v for v, _ in split])
        order = np.argsort(x)  # sorted needles search faster
        xs = x[order]
        tol = self.tol * np.maximum(1.0, np.abs(xs))
        counts = np.zeros(len(keys), dtype=object if wide else np.int64)  # run counts beyond int64: exact
        undecided = []
        # loop over the smaller half, search the larger one
        loop_p = len(self.P) <= len(self.S)
        outer, inner = (self.P, self.S) if loop_p else (self.S, self.P)
        if weighted:  # runs: pair weight = runs behind the prefix value x runs behind the suffix value
            outer_n, inner_c = (self.Pn, self.Sc) if loop_p else (self.Sn, self.Pc)
        for i, v in enumerate(outer):
            t = xs - v
            lo = np.searchsorted(inner, t - tol, side="left")
            hi = np.searchsorted(inner, t + tol, side="right")
            counts += inner_c[lo] * outer_n[i] if weighted else lo
            for q in np.flatnonzero(hi > lo):
                undecided.append((i, q, lo[q], hi[q]))
        for i, q, lo, hi in undecided:
            js = np.arange(lo, hi)
            ii = np.full(len(js), i)
            pi, sj = (ii, js) if loop_p else (js, ii)
            ok = self.exact_le(pi, sj, split[order[q]][1])
            if weighted:
                counts[q] += int((self.Pn[pi[ok]] * self.Sn[sj[ok]]).sum())
            else:
                counts[q] += int(ok.sum())
        out = np.empty(len(keys), dtype=counts.dtype)
        out[order] = counts
        return out

    def count(self, key, weighted: bool = False) -> int:
        """Distinct values (``weighted=False``; each pair is one value) or runs
        (``weighted=True``) with value <= the query's."""
        x, q = self.split_query(key)
        t = x - self.P
        tol = self.tol * max(1.0, abs(x))
        lo = np.searchsorted(self.S, t - tol, side="left")  # S[:lo] < t - tol: surely <= x
        hi = np.searchsorted(self.S, t + tol, side="right")  # S[hi:] > t + tol: surely > x
        if weighted:
            total = int((self.Sc[lo].astype(object) * self.Pn.astype(object)).sum())
        else:
            total = int(lo.sum())
        undecided = np.flatnonzero(hi > lo)
        for i in undecided:
            js = np.arange(lo[i], hi[i])
            ok = js[self.exact_le(np.full(len(js), i), js, q)]
            if weighted:
                total += int(sum(int(self.Sc[j + 1] - self.Sc[j]) for j in ok) * int(self.Pn[i]))
            else:
                total += len(ok)
        return total


MAX_HALF = 2**24  # partial values held per half (each a float64 plus its exact form)


def _check_half(space, n: int) -> None:
    if n > MAX_HALF:
        raise IrscaleError(f"{space.measure} at N={space.N}: a half of the pair count would hold {n:,} partial "
                           f"values (up to {MAX_HALF:,} are held); use a smaller N")


def _subset_sums(weights: list[int], total: int) -> tuple[np.ndarray, np.ndarray]:
    """Every subset sum of ``weights`` (Python ints) as a fraction of ``total``: float64
    positions sorted ascending, and for each the subset as a bit mask (bit k: weights[k]
    taken), from which the exact sum is recomputed when a pair is too close to call.

    Each weight's fraction is an int / int true division, correctly rounded however
    large the integers; a position sums at most 24 of them (``MAX_HALF``), so it lies
    within 48 * 2^-53 < 6e-15 of the exact fraction, far inside the counter's 1e-12."""
    vals = np.zeros(1)
    for w in weights:
        vals = np.concatenate([vals, vals + w / total])  # masks with bit k get index + 2^k
    masks = np.argsort(vals, kind="stable")
    return vals[masks], masks.astype(np.int64)


def _mask_sum(weights: list[int], mask: int) -> int:
    return sum(w for k, w in enumerate(weights) if mask >> k & 1)


def check_counter(space) -> None:
    """Refuse (IrscaleError) a space the count engine cannot serve, before anything is
    built: graded RBP and DCG, and halves beyond ``MAX_HALF`` partial values. Called
    when the engine is chosen, so a long job fails before it reads or builds anything."""
    space.check_counter()  # the spaces the count engine serves say what it can count


def check_rbp(space) -> None:
    """The count engine's limits for RBP (:meth:`RBPSpace.check_counter`)."""
    if not space.binary_measure and space.c > 1:
        raise IrscaleError(f"{space.measure}: counting serves binary RBP; graded RBP at N={space.N} "
                           "has keys beyond 64 bits and no engine yet; use a smaller N")
    _check_half(space, 2 ** (space.N - space.N // 2))


def check_dcg(space) -> None:
    """The count engine's limits for DCG / nDCG (:meth:`DCGSpace.check_counter`): each
    half of the classes holds at most ``MAX_HALF`` class-sum vectors. Rational ties
    (2 x 1/2 = 1 in graded DCG) are inside one class's sum, so distinct vectors are
    distinct values for graded runs too."""
    cut = _dcg_cut(space)
    sizes = [len(a) for a in space.attainable]
    _check_half(space, max(math.prod(sizes[:cut]), math.prod(sizes[cut:])))


def _dcg_cut(space) -> int:
    """Split the classes so that both halves have about sqrt(size) class-sum vectors."""
    radix = [len(a) for a in space.attainable]
    logs = np.log(radix)
    cut = int(np.searchsorted(np.cumsum(logs), logs.sum() / 2)) + 1
    return min(max(cut, 1), len(radix) - 1) if len(radix) > 1 else len(radix)


def rbp_counter(space: RBPSpace) -> Counter:
    """Binary RBP, p = a/b: a run's exact key is sum of x_k a^(k-1) b^(N-k), a Python int
    of about N log2(b) bits (beyond 64 bits from N = 14 at p = 0.95). The halves hold
    float positions (key / total key) with their subset masks; pairs the floats cannot
    decide are decided on exact Python-int keys, so phi is exact at every N accepted."""
    check_counter(space)
    N = space.N
    h = N // 2
    w = space.weights  # Python ints
    total = sum(w)
    wp, ws = w[:h], w[h:]
    P, Pm = _subset_sums(wp, total)
    S, Sm = _subset_sums(ws, total)

    def split_query(key):
        X = int(key)
        return X / total, X  # int / int: correctly rounded

    def exact_le(i, j, X):
        return np.array([_mask_sum(wp, int(Pm[ii])) + _mask_sum(ws, int(Sm[jj])) <= X for ii, jj in zip(i, j)],
                        dtype=bool)

    return Counter(2 ** N, P, S, np.ones(len(P), dtype=np.int64),
                   np.arange(len(S) + 1, dtype=np.int64), exact_le, split_query, lambda key: 1, tol=1e-12)


def dcg_counter(space: DCGSpace) -> Counter:
    check_counter(space)
    classes = space.classes
    cut = _dcg_cut(space)
    w = space.class_weights

    def half(lo, hi):
        tot = space.attainable_totals(lo, hi)
        ways = space.runs_behind(tot, lo)
        vals = tot @ w[lo:hi]
        order = np.argsort(vals, kind="stable")
        return vals[order], tot[order], ways[order]

    P, Ptot, Pn = half(0, cut)
    S, Stot, Sn = half(cut, len(classes))
    Sc = np.concatenate([[0], np.cumsum(Sn)])

    def split_query(key):
        tot = space.decode(np.array([key]))[0]
        return float(tot @ w), tot

    def exact_le(i, j, tot):
        xq = None
        out = []
        for ii, jj in zip(i, j):
            both = np.concatenate([Ptot[ii], Stot[jj]])
            if np.array_equal(both, tot):  # the query's own value
                out.append(True)
                continue
            xq = space.exact_value(tot) if xq is None else xq
            v = space.exact_value(both)
            if abs(v - xq) <= abs(xq) * 1e-50:
                raise IrscaleError(f"{space.measure} at N={space.N}: two different class totals have equal "
                                   "values; the counting engine assumes none (report this)")
            out.append(v <= xq)
        return np.array(out, dtype=bool)

    def runs_of(key):
        return space.runs_of(space.decode(np.array([key]))[0])

    size = space.n_values
    # run counts: int64 below 2^62 runs, exact Python ints (object arrays) beyond
    return Counter(size, P, S, Pn, Sc, exact_le, split_query, runs_of, tol=1e-12)
