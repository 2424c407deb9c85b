"""Run spaces REL^N and the exact value of a measure on them.

A :class:`Space` knows, for one measure at run length N over grades 0..c, an *exact
key* of every run: an integer whose order and equality are those of the measure's
RB-free core (SPEC section 3), so tie decisions never depend on rounding. Keys are
int64 where every key (and every sum of two partial keys) stays below 2^62; a space
whose keys would not fit says so (``int64 = False``), gives exact Python-int keys
(object arrays) instead, and only the engines that do not need int64 keys (closed
forms, pair counting, the test oracle) serve it; the others refuse with an error.

The families and their keys (g_k is the grade at rank k, r_k = [g_k >= rel]):

* counts (P, R, F, gP, NumRelRet, Success): sum of r_k (or g_k for gP) — closed form;
* RR: N + 1 - (first relevant rank), 0 when none — closed form;
* AP: L * sum over relevant k of hits_k / k with L = lcm(1..N) (RB * AP times L);
* RBP with p = a/b: sum of g_k a^(k-1) b^(N-k) (c * b^(N-1) * RBP / (1 - p));
  with p <= 1/(c+1) (binary: p <= 1/2) the runs are ordered as base-(c+1) numbers —
  closed form; graded with b > c every run has its own value — counted;
* ERR: L * 2^(cN) * ERR, an integer (stopping probabilities are multiples of 2^-c);
* RBTO, SBTO: their own integer values — closed form (they are interval scales);
* DCG, nDCG (any log base): no rational key; see :class:`DCGSpace`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from irscale.errors import MeasureError
from irscale.measures import AP, DCG, ERR, RBP, RBTO, RR, SBTO, F, Measure, NumRelRet, P, R, gP, gR, nDCG, parse_measure
from irscale.scales.wide import MASK, Wide

MAX_N = 10_000  # run lengths served (runs are cut at N: arrays of N grades per run and topic)
INT64_LIMIT = 2**62  # keys (and sums of two keys) stay below 2^63


def _owner(cls: type) -> str:
    """'' for irscale's own classes, else '|module.QualName'."""
    return "" if cls.__module__.startswith("irscale.") else f"|{cls.__module__}.{cls.__qualname__}"


def all_runs(N: int, c: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Runs number ``start..stop-1`` of the (c+1)^N runs, as an (n, N) int8 matrix; run
    i is i written in base c+1, most significant digit at rank 1."""
    total = (c + 1) ** N
    stop = total if stop is None else min(stop, total)
    i = np.arange(start, stop, dtype=np.int64)
    digits = np.empty((len(i), N), dtype=np.int8)
    for k in range(N - 1, -1, -1):
        digits[:, k] = i % (c + 1)
        i //= c + 1
    return digits


def cut_and_pad(grades, N: int) -> np.ndarray:
    """Judged grades cut at rank N and padded with non-relevant documents (0) to N."""
    g = np.asarray(grades)[..., :N]
    if g.shape[-1] < N:
        g = np.concatenate([g, np.zeros(g.shape[:-1] + (N - g.shape[-1],), dtype=g.dtype)], axis=-1)
    return g


@dataclass(frozen=True, eq=False)
class Space:
    """The runs of length ``N`` over grades ``0..c`` and one measure's exact keys on them."""

    measure: Measure
    N: int
    c: int
    family: str = "generic"

    # -- what engines ask --------------------------------------------------------------
    closed: bool = False  # size, phi and run counts have closed forms
    splittable: bool = False  # value = V(prefix) + f(state(prefix), suffix)
    ordered_keys: bool = True  # key order is value order (else keys only tie-group runs: DCG)
    cacheable: bool = True  # rank maps may be kept in the disk cache
    wide_split: bool = False  # split_parts gives Wide keys (irscale.scales.wide) where int64 ends

    @property
    def identity(self) -> str:
        """What the disk cache keys the rank map by (a space class outside irscale is
        named in it, so a user's space never meets another one's cached map). The
        measure's cutoff, N itself, is left out: ``irscale rankmap AP -N 36`` and a
        transform's AP@36 share one map."""
        name, cut = str(self.measure), getattr(self.measure, "cutoff", None)
        if cut is not None and name.endswith(f"@{cut}"):  # (gP has no name without a cutoff)
            name = name[: -len(f"@{cut}")]
        return f"{name}|N={self.N}|c={self.c}|{self.family}{_owner(type(self))}"

    @property
    def n_runs(self) -> int:
        return (self.c + 1) ** self.N

    @cached_property
    def max_key(self) -> int:
        """An upper bound of the keys (Python int)."""
        raise NotImplementedError

    @property
    def int64(self) -> bool:
        return self.max_key < INT64_LIMIT

    def require_int64(self, engine: str) -> None:
        """Refuse (MeasureError) an engine that adds int64 keys where they could overflow."""
        if not self.int64:
            raise MeasureError(
                f"{self.measure} at N={self.N}: exact keys reach {self.max_key.bit_length()} bits; "
                f"the {engine} engine adds int64 keys and needs them below 2^62; engine='auto' "
                "(CLI --engine auto) picks one that can serve this space where one exists, or use a "
                "smaller N"
            )

    def keys(self, g: np.ndarray) -> np.ndarray:
        """Exact int64 keys of runs ``g`` ((n, N) grades in 0..c)."""
        raise NotImplementedError

    def key_values(self, keys: np.ndarray) -> np.ndarray:
        """The measure's RB-free core value of keys (float64, for display)."""
        raise NotImplementedError

    def measure_values(self, keys: np.ndarray, topics) -> np.ndarray:
        """The measure's value from exact keys ((S, T): systems x topics, ``topics`` the
        :class:`~irscale.data.TopicStats`). Equal keys give bitwise equal values, so
        ties stay ties in later float statistics (unlike sums taken in different orders)."""
        flat = np.asarray(keys).reshape(-1)
        uniq, inv = np.unique(flat, return_inverse=True)  # one evaluation per key: BLAS may
        core = self.key_values(uniq)[inv.reshape(-1)]  # sum rows in different orders
        return core.reshape(np.shape(keys)) / self.normalizer(topics)[None, :]

    def normalizer(self, topics) -> np.ndarray:
        """Per-topic divisor from the RB-free core to the measure (the measure declares
        it: :meth:`irscale.measures.Measure.normalizer`)."""
        return self.measure.normalizer(topics, self.N, self.c)

    # -- which engine serves the space ------------------------------------------------------
    def pick_engine(self) -> str:
        """The fastest exact engine for this space (MeasureError where none can serve it)."""
        if self.closed:
            return "closed"
        if self.splittable and self.int64 and self.N >= 12:
            return "split"
        if self.int64:
            return "enumerate"
        raise MeasureError(
            f"{self.measure} at N={self.N} with {self.c + 1} relevance levels: exact keys exceed "
            "64 bits and no engine for this case is built yet: use a smaller N, fewer relevance levels "
            "(--max-grade, max_grade= in the API), or binary relevance (--max-grade 1, --relevance "
            "lenient, or rel=1 in the measure)"
        )

    def counter(self):
        """The pair-counting value set (engine ``count``) of spaces that have one."""
        raise MeasureError("the count engine serves RBP (p = a/b with b > c) and DCG/nDCG")

    def check_counter(self) -> None:
        """Refuse (IrscaleError), before anything is built, what the count engine cannot count."""
        from irscale.errors import IrscaleError

        raise IrscaleError(f"{self.measure}: the count engine serves RBP (p = a/b with b > c) and DCG/nDCG")

    def grade_view(self, grades: np.ndarray) -> np.ndarray:
        """Map judged grades (any ints, sentinels included) onto this space: cut at N,
        pad with non-relevant documents, binary measures to 0/1, graded ones to 0..c."""
        g = cut_and_pad(grades, self.N)
        rel = getattr(self.measure, "rel", None)
        if self.binary_measure:
            return (g >= (rel if rel is not None else 1)).astype(np.int8)
        return np.clip(g, 0, self.c).astype(np.int8)

    @property
    def binary_measure(self) -> bool:
        return (not self.measure.graded) or getattr(self.measure, "rel", None) is not None

    # closed forms (when ``closed``): every closed family's key is its rank minus one,
    # 0..max_key, so size and phi follow from the key
    def closed_size(self) -> int:
        return self.max_key + 1

    def closed_phi(self, keys: np.ndarray) -> np.ndarray:
        return _plus_one(keys)

    def closed_runs_le(self, keys: np.ndarray) -> np.ndarray:
        """Number of runs whose value is <= each key (for the min/max/mid strategies)."""
        raise NotImplementedError

    # decomposition (when ``splittable``): see irscale.scales.engines.split_engine
    def split_parts(self, h: int):
        """``(prefix_values, prefix_states, suffix_function)`` for a split after rank h:
        prefix arrays over all (c+1)^h prefixes; ``suffix_function(s)`` gives the suffix
        part of the value of all (c+1)^(N-h) suffixes behind a prefix in state s."""
        raise MeasureError(f"{self.measure} does not split into prefix and suffix parts")


# -- which space serves a measure: declared next to each space -----------------------------

_SERVED: list[tuple[type[Measure], type[Space], Callable[[Measure, int, int], bool] | None]] = []


def serves(*measures: type[Measure], when: Callable[[Measure, int, int], bool] | None = None):
    """Class decorator declaring that a :class:`Space` computes phi for ``measures``
    (classes, not their subclasses: a subclass may compute something else, and is
    enumerated unless it declares a space of its own), or only for those instances where
    ``when(measure, N, c)`` holds. :func:`space_for` takes the first declaration that
    applies, in declaration order.

    >>> space_for("AP", 10).family, space_for("RBP(p=0.5)", 10).family, space_for("RBP(p=0.8)", 10).family
    ('ap', 'positional', 'rbp')
    """

    def deco(space_cls: type[Space]) -> type[Space]:
        for m in measures:
            _SERVED.append((m, space_cls, when))
        return space_cls

    return deco


# -- closed-form families --------------------------------------------------------------


def space_gains(space: Space) -> tuple[list[int], Fraction]:
    """``(G, s)``: the integer gains G[g] = s * gain(g) of grades 0..c that a space's keys
    add (no common factor; binary runs: 0, 1), from the measure's gain map
    (:meth:`irscale.measures.gains._GainMeasure.integer_gains`; the grade by default).
    Rational gains are scaled by the lcm of their denominators, so keys stay exact integers."""
    from irscale.validate import levels

    levels(space.c + 1)
    if space.binary_measure:
        return [0, 1], Fraction(1)
    integer_gains = getattr(space.measure, "integer_gains", None)
    if integer_gains is None:
        return list(range(space.c + 1)), Fraction(1)
    return integer_gains(space.c)


def _gain_sum_counts(N: int, gains: list[int]) -> dict[int, int]:
    """{total: runs}: how many of the (c+1)^N runs have each sum of N gains (sparse)."""
    out = {0: 1}
    for _ in range(N):
        nxt: dict[int, int] = {}
        for t, a in out.items():
            for w in gains:
                nxt[t + w] = nxt.get(t + w, 0) + a
        out = nxt
    return out


def _poly_counts(N: int, per_run_weights: list[int]) -> list[int]:
    """Coefficients of (sum over grades of x^w(grade))^N: how many runs have each total."""
    coeffs = [1]
    for _ in range(N):
        nxt = [0] * (len(coeffs) + max(per_run_weights))
        for i, a in enumerate(coeffs):
            if a:
                for w in per_run_weights:
                    nxt[i + w] += a
        coeffs = nxt
    return coeffs


@serves(P, R, F, NumRelRet, gP, gR)
@dataclass(frozen=True, eq=False)
class CountSpace(Space):
    """Key = number of relevant documents in the top N (binary) or sum of grades (gP, gR:
    gR's RB-free core is gP's, divided by the topic's recall base in gain units). With a
    gain map the sums of integer gains (:func:`space_gains`) do not fill 0..N G(c), so the
    key is the rank (from 0) of the run's gain sum among the attainable ones."""

    family: str = "count"
    closed: bool = True

    @cached_property
    def _gains(self) -> tuple[list[int], Fraction]:
        return space_gains(self)

    @cached_property
    def _plain(self) -> bool:
        """Gains 0..c (or 0, 1): the key is the sum itself."""
        return self._gains[0] == list(range(len(self._gains[0])))

    @cached_property
    def _sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Attainable gain sums (ascending) and the runs having each (exact ints)."""
        counts = _gain_sum_counts(self.N, self._gains[0])
        sums = sorted(counts)
        dtype = np.int64 if sums[-1] < INT64_LIMIT else object
        return np.array(sums, dtype=dtype), np.array([counts[t] for t in sums], dtype=object)

    @cached_property
    def max_key(self):
        if self._plain:
            return self.N * (1 if self.binary_measure else self.c)
        return len(self._sums[0]) - 1

    def keys(self, g):
        if self._plain:
            return g.sum(axis=-1, dtype=np.int64)
        G = self._gains[0]
        table = np.array(G, dtype=np.int64 if self.N * G[-1] < INT64_LIMIT else object)
        tot = table[np.asarray(g, dtype=np.int64)].sum(axis=-1)
        return np.searchsorted(self._sums[0], tot).astype(np.int64)

    def key_values(self, keys):
        if self._plain:
            return np.asarray(keys, dtype=np.float64)
        sums, scale = self._sums[0], self._gains[1]
        return np.array([int(sums[int(k)]) / scale for k in np.asarray(keys).reshape(-1)], dtype=np.float64).reshape(
            np.shape(keys)
        )  # Fraction -> correctly rounded float

    @cached_property
    def _cum(self):
        if self._plain:
            weights = [0, 1] if self.binary_measure else list(range(self.c + 1))
            counts = _poly_counts(self.N, weights)[: self.max_key + 1]
            return np.cumsum(np.array(counts, dtype=object))
        return np.cumsum(self._sums[1])

    def closed_runs_le(self, keys):
        return self._cum[np.asarray(keys, dtype=np.int64)]


@serves(RR)
@dataclass(frozen=True, eq=False)
class RRSpace(Space):
    family: str = "rr"
    closed: bool = True

    @cached_property
    def max_key(self):
        return self.N

    def keys(self, g):
        r = g > 0
        first = np.argmax(r, axis=-1)
        return np.where(r.any(axis=-1), self.N - first, 0).astype(np.int64)

    def key_values(self, keys):
        keys = np.asarray(keys)
        return np.where(keys > 0, 1.0 / np.maximum(self.N + 1 - keys, 1), 0.0)

    def closed_runs_le(self, keys):
        # key 0: the one all-non-relevant run; key N+1-f: 2^(N-f) runs (first relevant at f)
        counts = [1] + [2 ** (self.N - (self.N + 1 - k)) for k in range(1, self.N + 1)]
        return np.cumsum(np.array(counts, dtype=object))[np.asarray(keys, dtype=np.int64)]


@serves(RBTO)
@dataclass(frozen=True, eq=False)
class PositionalSpace(Space):
    """Key = the run read as a base-(c+1) number (RBTO; binary RBP with p <= 1/2, see
    :class:`LexicographicRBPSpace`). Every run has its own value."""

    family: str = "positional"
    closed: bool = True

    @cached_property
    def max_key(self):
        return (self.c + 1) ** self.N - 1

    def keys(self, g):
        from irscale.scales.orders import positional_weights

        w = positional_weights(self.N, self.c)  # int64, or exact Python integers beyond 2^62
        return np.asarray(g).astype(w.dtype) @ w

    def key_values(self, keys):
        return np.array([float(k) for k in keys], dtype=np.float64)

    def closed_runs_le(self, keys):
        return _plus_one(keys)


def _rbp_lexicographic(m, N: int, c: int) -> bool:
    """RBP whose runs are ordered lexicographically, as base-(c+1) numbers: with gains
    G_0 < ... < G_c (the grade by default, 0, 1 for binary runs), smallest step
    d = min(G_(g+1) - G_g) and top gain G_c, when p <= d / (d + G_c) (exactly: p as
    ``m.p_exact``). Then rank k weighs p^(k-1) d >= G_c (p^k + p^(k+1) + ...) >
    G_c (p^k + ... + p^(N-1)) at any finite N, so a step at rank k outweighs every later
    rank. For gains 0..c: p <= 1/(c+1), the 2019 paper's interval case and every smaller
    p; equal gains for two grades (d = 0) never."""
    gains = m.gain_values(1 if (getattr(m, "rel", None) is not None or c == 1) else c)
    step = min(b - a for a, b in zip(gains, gains[1:]))
    if step <= 0:
        return False
    return m.p_exact <= step / (step + gains[-1])


@serves(RBP, when=_rbp_lexicographic)
@dataclass(frozen=True, eq=False)
class LexicographicRBPSpace(PositionalSpace):
    """RBP with p <= d / (d + G_c) (:func:`_rbp_lexicographic`; gains 0..c: p <= 1/(c+1),
    binary: p <= 1/2): the weight of a rank is at least the top gain times the sum of all
    later ones over the smallest gain step, so runs are ordered as base-(c+1) numbers and
    every run has its own value (closed form)."""

    def key_values(self, keys):  # RBP = (1 - p) sum p^(k-1) gain(g_k) / gain(c)
        G, _ = space_gains(self)
        p, c, out = float(self.measure.p), self.c, []
        for key in keys:
            key, digits = int(key), []
            for _ in range(self.N):
                key, g = divmod(key, c + 1)
                digits.append(g)
            out.append((1 - p) * sum(G[g] / G[-1] * p**k for k, g in enumerate(reversed(digits))))
        return np.array(out, dtype=np.float64)


def _rbp_contiguous(m, N: int, c: int) -> bool:
    """Graded RBP with p = 1/b, 2 <= b <= c, gains proportional to the grade: a run's key
    sum g_k b^(N-k) is a base-b number with digits 0..c >= b - 1, so its values are every
    integer from 0 to c (b^N - 1) / (b - 1) (by induction: the digit-d blocks
    [d b^n, d b^n + c (b^n - 1) / (b - 1)] touch because c >= b - 1): closed form.
    RBP(p=0.5) on 3-5 levels, (1/3) on 4-5, (1/4) on 5."""
    if c == 1 or getattr(m, "rel", None) is not None:
        return False
    gains = m.gain_values(c)
    p = m.p_exact
    return (
        gains[1] > 0
        and all(gains[g] == g * gains[1] for g in range(c + 1))
        and p.numerator == 1
        and 2 <= p.denominator <= c
    )


@serves(RBP, when=_rbp_contiguous)
@dataclass(frozen=True, eq=False)
class ContiguousRBPSpace(Space):
    """RBP with p = 1/b, b <= c (:func:`_rbp_contiguous`): key = sum g_k b^(N-k), the
    values are the integers 0..max_key, so phi = key + 1; runs tie (b < c + 1) and the
    runs at or below a key are counted digit by digit (:meth:`closed_runs_le`)."""

    family: str = "rbp-contiguous"
    closed: bool = True

    @cached_property
    def b(self) -> int:
        return self.measure.p_exact.denominator

    @cached_property
    def max_key(self):
        return self.c * (self.b**self.N - 1) // (self.b - 1)

    def keys(self, g):
        w = [self.b ** (self.N - k) for k in range(1, self.N + 1)]
        dtype = np.int64 if self.int64 else object
        return np.asarray(g).astype(dtype) @ np.array(w, dtype=dtype)

    def key_values(self, keys):  # RBP = (1 - p) sum p^(k-1) g_k / c = key (b - 1) / (c b^N)
        den = self.c * self.b**self.N
        return np.array([int(k) * (self.b - 1) / den for k in keys], dtype=np.float64)  # int / int: exact

    def closed_runs_le(self, keys):
        """Runs with key <= each key, digit by digit from the top rank: budgets that every
        completion fits (or none does) are counted at once; the undecided ones at a rank
        are at most c / (b - 1) + 1 (they differ by multiples of that rank's weight and
        lie below the most the later ranks can add)."""
        N, c, b = self.N, self.c, self.b
        top = [c * (b**i - 1) // (b - 1) for i in range(N + 1)]  # most that ranks with weights b^0..b^(i-1) add
        uniq, inv = np.unique(np.asarray(keys).reshape(-1), return_inverse=True)
        out = []
        for k in uniq:
            total, open_ = 0, {int(k): 1}  # undecided budgets over weights b^0..b^(i-1), with multiplicity
            for i in range(N, 0, -1):
                w, nxt = b ** (i - 1), {}
                for r, n in open_.items():
                    for d in range(c + 1):
                        rest = r - d * w
                        if rest < 0:
                            break
                        if rest >= top[i - 1]:
                            total += n * (c + 1) ** (i - 1)
                        else:
                            nxt[rest] = nxt.get(rest, 0) + n
                open_ = nxt
            out.append(total)
        return np.array(out, dtype=object)[inv.reshape(-1)]


def _plus_one(keys):
    keys = np.asarray(keys)
    return keys + 1 if keys.dtype == object else keys.astype(np.int64) + 1


@serves(SBTO)
@dataclass(frozen=True, eq=False)
class SBTOSpace(Space):
    family: str = "sbto"
    closed: bool = True

    @cached_property
    def max_key(self):
        return math.comb(self.N + self.c, self.c) - 1

    def keys(self, g):
        return sbto_rank(g, self.c)

    def key_values(self, keys):
        return np.asarray(keys, dtype=np.float64)

    @cached_property
    def _cum(self):
        # one value per multiset of grades; N! / prod(m_g!) runs each
        out = np.zeros(self.max_key + 1, dtype=object)
        for ms in _compositions(self.N, self.c + 1):
            d = [g for g in range(self.c, -1, -1) for _ in range(ms[g])]
            key = sum(math.comb(d[j - 1] + self.N - j, self.N - j + 1) for j in range(1, self.N + 1))
            out[key] = math.factorial(self.N) // math.prod(math.factorial(m) for m in ms)
        return np.cumsum(out)

    def closed_runs_le(self, keys):
        return self._cum[np.asarray(keys, dtype=np.int64)]


def sbto_rank(runs: np.ndarray, c: int) -> np.ndarray:
    """SBTO (2019 paper, eq. 3): sum over j of C(d_j + N - j, N - j + 1), d the grades
    sorted descending; the rank (from 0) of the run's grade multiset in the set-based order."""
    N = runs.shape[1]
    d = -np.sort(-np.asarray(runs, dtype=np.int64), axis=1)
    # ranks run up to C(N + c, c) - 1: int64 below 2^62, exact Python ints beyond
    dtype = np.int64 if math.comb(N + c, c) < INT64_LIMIT else object
    out = np.zeros(len(d), dtype=dtype)
    for j in range(1, N + 1):
        table = np.array([math.comb(x + N - j, N - j + 1) for x in range(c + 1)], dtype=dtype)
        out = out + table[d[:, j - 1]]
    return out


def _compositions(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, parts - 1):
            yield (first,) + rest


# -- families served by the decomposition / enumeration engines --------------------------


@serves(AP)
@dataclass(frozen=True, eq=False)
class APSpace(Space):
    """Key = lcm(1..N) * RB * AP. Split after rank h: with R1 relevant documents in the
    prefix, key = V(prefix) + R1 * A(suffix) + B(suffix)."""

    family: str = "ap"
    splittable: bool = True

    @cached_property
    def L(self) -> int:
        return math.lcm(*range(1, self.N + 1))

    @cached_property
    def max_key(self):
        return self.L * self.N

    def keys(self, g):
        r = (np.asarray(g) > 0).astype(np.int64)
        hits = np.cumsum(r, axis=-1) * r
        if not self.int64:  # exact Python integers (N >= 41: L * N passes 2^62)
            return hits.astype(object) @ np.array([self.L // k for k in range(1, self.N + 1)], dtype=object)
        w = self.L // np.arange(1, self.N + 1, dtype=np.int64)
        return hits @ w

    def key_values(self, keys):
        if not self.int64:
            return np.array([int(k) / self.L for k in keys], dtype=np.float64)  # int / int: correctly rounded
        return np.asarray(keys, dtype=np.float64) / self.L

    def split_parts(self, h):
        self.require_int64("split")
        L = self.L
        pre = all_runs(h, 1).astype(np.int64)
        hits = np.cumsum(pre, axis=1) * pre
        V = hits @ (L // np.arange(1, h + 1, dtype=np.int64))
        state = pre.sum(axis=1)
        suf = all_runs(self.N - h, 1).astype(np.int64)
        w = L // np.arange(h + 1, self.N + 1, dtype=np.int64)
        A = suf @ w
        B = (np.cumsum(suf, axis=1) * suf) @ w
        return V, state, (lambda s: s * A + B)


@serves(RBP)
@dataclass(frozen=True, eq=False)
class RBPSpace(Space):
    """RBP with p = a/b rational (``measure.p_exact``: a fraction as given, a float as the
    decimal it is written as): key = sum of G(g_k) a^(k-1) b^(N-k), G the integer gains of
    :func:`space_gains` (the grade by default; a gain map scaled to integers).
    State-free split. For binary runs every one of the 2^N runs has its own value (see
    the guide)."""

    family: str = "rbp"
    splittable: bool = True

    @cached_property
    def ab(self) -> tuple[int, int]:
        f = self.measure.p_exact
        return f.numerator, f.denominator

    @cached_property
    def gain_ints(self) -> list[int]:
        """Integer gains of grades 0..c (0, 1 binary)."""
        G = space_gains(self)[0]
        if G[-1] == 0:
            self.measure.top_gain(self.c)  # raises: RBP divides by the top grade's gain
        return G

    @cached_property
    def gain_top(self) -> int:
        return self.gain_ints[-1]

    @cached_property
    def weights(self) -> list[int]:
        a, b = self.ab
        return [a ** (k - 1) * b ** (self.N - k) for k in range(1, self.N + 1)]

    @cached_property
    def gmax(self) -> int:
        return 1 if self.binary_measure else self.c

    @cached_property
    def max_key(self):
        return self.gain_top * sum(self.weights)

    def _gained(self, g, dtype):
        """Runs' grades replaced by their integer gains."""
        return np.array(self.gain_ints, dtype=dtype)[np.asarray(g, dtype=np.int64)]

    def keys(self, g):
        if not self.int64:  # exact Python integers
            return self._gained(g, object) @ np.array(self.weights, dtype=object)
        return self._gained(g, np.int64) @ np.array(self.weights, dtype=np.int64)

    def key_values(self, keys):
        a, b = self.ab
        top = self.gain_top
        if not self.int64:  # RBP = key (1 - p) / (G_c b^(N-1)) = key (b - a) / (G_c b^N): int / int, exact
            den = top * b**self.N
            return np.array([int(k) * (b - a) / den for k in keys], dtype=np.float64)
        return np.asarray(keys, dtype=np.float64) * (1 - a / b) / (top * float(b) ** (self.N - 1))

    def pick_engine(self):
        from irscale.scales.counting import rbp_runs_distinct

        if self.gmax == 1 and not self.int64:
            return "count"  # binary, keys beyond 64 bits: pair counting in exact integers
        if self.gmax > 1 and rbp_runs_distinct(self) and (not self.int64 or self.n_runs > 2**24):
            return "count"  # graded, every run its own value: counting runs beats listing them
        return super().pick_engine()

    def counter(self):
        from irscale.scales.counting import rbp_counter

        return rbp_counter(self)

    def check_counter(self):
        from irscale.scales.counting import check_rbp

        check_rbp(self)

    def split_parts(self, h):
        self.require_int64("split")
        c = self.gmax
        w = np.array(self.weights, dtype=np.int64)
        V = self._gained(all_runs(h, c), np.int64) @ w[:h]
        S = self._gained(all_runs(self.N - h, c), np.int64) @ w[h:]
        return V, np.zeros(len(V), dtype=np.int64), (lambda s: S)


@serves(ERR)
@dataclass(frozen=True, eq=False)
class ERRSpace(Space):
    """Key = lcm(1..N) * 2^(cN) * ERR: with stopping probabilities R = (2^g - 1) / 2^c
    every term is an integer. Split: the prefix's continuation probability is the state
    (binary: 2^-R1). Keys beyond int64 (binary N >= 27, 3 levels N >= 19, 4 levels
    N >= 15, 5 levels N >= 12) are split as :class:`~irscale.scales.wide.Wide` arrays."""

    family: str = "err"
    splittable: bool = True
    wide_split: bool = True

    def pick_engine(self):
        if self.int64:
            return super().pick_engine()
        from irscale.scales.engines import MAX_PAIRS
        from irscale.scales.wide import MAX_BITS

        def fits(n: int) -> bool:  # runs (one pair each) and key width the split engine accepts;
            # grade terms 2^c in int64 (a space with 52 or more levels is int64 only at N = 1)
            return (
                self.cc <= 50
                and (self.cc + 1) ** n <= MAX_PAIRS
                and (math.lcm(*range(1, n + 1)) << (self.cc * n + 1)).bit_length() <= MAX_BITS
            )

        if fits(self.N):
            return "split"
        last = max((n for n in range(1, self.N) if fits(n)), default=0)
        binary = "binary relevance (--max-grade 1 or --relevance lenient: exact up to N=35)"
        fewer = (
            ""
            if self.cc == 1
            else f", or {binary}"
            if self.cc == 2
            else f", fewer levels (--max-grade {self.cc - 1} or less; max_grade= in the API), or {binary}"
        )
        why = (
            f"its exact keys need {self.max_key.bit_length()} bits, beyond the split engine's {MAX_BITS}"
            if self.n_runs <= MAX_PAIRS
            else f"the split engine lists every run, up to {MAX_PAIRS:,}"
        )
        upto = f"up to N={last}" if last else "at no N"
        raise MeasureError(  # ERR's values have no product structure: an exact engine lists them (guide: Long runs)
            f"{self.measure} at N={self.N} with {self.cc + 1} relevance levels: {why}, so ERR is exact {upto} on "
            f"{self.cc + 1} levels; use " + (f"-N {last} or less{fewer}" if last else fewer.lstrip(", "))
        )

    @cached_property
    def L(self) -> int:
        return math.lcm(*range(1, self.N + 1))

    @cached_property
    def cc(self) -> int:
        return 1 if self.binary_measure else self.c

    @cached_property
    def max_key(self):
        return self.L * 2 ** (self.cc * self.N) * 2  # ERR <= sum 1/k ... bounded by 2^(cN) L H_N; safe

    def _terms(self, g, first_rank: int, total: int, dtype=None):
        """Sum over ranks of L/k * (2^g_k - 1) * prod_{j<k} (2^c - 2^g_j + 1) * 2^(c(total-k'))
        for a block of ranks starting at ``first_rank`` (1-based), as if the block were a
        whole run of length ``total`` ranks ending at N; and the block's continuation
        numerator prod (2^c - 2^g_j + 1). ``dtype``: int64 while every key stays below
        2^62 (then so do all partial products, whose factors are >= 1), exact Python
        integers (object) otherwise; uint64 gives the terms mod 2^64 and float64 within
        relative (2 m + 2) 2^-53 of them (m ranks; see irscale.scales.wide)."""
        c = self.cc
        dtype = dtype or (np.int64 if self.int64 else object)
        g = np.asarray(g).astype(np.int64)
        n, m = g.shape
        stop = ((1 << g) - 1).astype(dtype)  # numerator of R over 2^c
        cont = ((1 << c) - (1 << g) + 1).astype(dtype)  # numerator of 1 - R over 2^c
        reach = np.ones(n, dtype=dtype)
        out = np.zeros(n, dtype=dtype)
        for i in range(m):
            f = (self.L // (first_rank + i)) << (c * (total - 1 - i))
            f = np.uint64(f & MASK) if dtype is np.uint64 else float(f) if dtype is np.float64 else f
            out += stop[:, i] * reach * f
            reach = reach * cont[:, i]
        return out, reach

    def keys(self, g):
        return self._terms(g, 1, self.N)[0]

    def key_values(self, keys):
        if not self.int64:
            den = self.L << (self.cc * self.N)
            return np.array([int(k) / den for k in keys], dtype=np.float64)  # int / int: correctly rounded
        return np.asarray(keys, dtype=np.float64) / (self.L * 2.0 ** (self.cc * self.N))

    def split_parts(self, h):
        c = self.cc
        if c > 50:  # grade terms 2^c and continuation products in int64
            raise MeasureError(
                f"{self.measure}: the split engine serves ERR on up to 51 relevance levels, not "
                f"{c + 1}; use fewer levels (max_grade= / --max-grade)"
            )
        pre, suf = all_runs(h, c), all_runs(self.N - h, c)
        # prefix terms as if the run ended at N (they carry 2^(c(N-h)) more than alone); behind
        # a prefix with continuation numerator `reach` (over 2^(ch)) the suffix's terms are
        # E * reach / 2^(ch) * 2^(ch) = E * reach: the 2^(c(N-k)) factor counts the suffix's
        # own ranks and the prefix's 2^(ch) denominators cancel the extra ch bits
        reach = np.prod((1 << c) - (1 << pre.astype(np.int64)) + 1, axis=1)  # <= 2^(ch) < 2^50 (MAX_BITS)
        if self.int64:
            V = self._terms(pre, 1, self.N)[0]
            E = self._terms(suf, h + 1, self.N - h)[0]
            return V, reach, (lambda s: E * s)
        V = Wide(self._terms(pre, 1, self.N, np.float64)[0], self._terms(pre, 1, self.N, np.uint64)[0])
        E = Wide(self._terms(suf, h + 1, self.N - h, np.float64)[0], self._terms(suf, h + 1, self.N - h, np.uint64)[0])
        return V, reach, E.scaled


# -- DCG: logarithmic weights ------------------------------------------------------------


def _primitive_power(n: int) -> tuple[int, int]:
    """``(r, a)`` with n = r^a and r not itself a perfect power (n >= 2)."""
    for a in range(n.bit_length(), 1, -1):
        r = round(n ** (1.0 / a))
        for cand in (r - 1, r, r + 1):
            if cand >= 2 and cand**a == n:
                return _primitive_power(cand)[0], a * _primitive_power(cand)[1]
    return n, 1


def dcg_weight_classes(N: int, base) -> list[tuple[object, list[tuple[int, Fraction]]]]:
    """The ranks 1..N of a DCG discount grouped into classes of commensurable weights:
    ``[(theta, [(rank0, q), ...]), ...]`` with weight(rank) = q * theta, q rational and
    theta the class's common irrational factor (a label: ``("log", r)`` for 1/log2 r,
    ``("jk", r)`` for ln b / ln r, ``1`` for the rational class).

    trec_eval's discount 1/log2(k+1): with k + 1 = r^a (r not a perfect power) the weight
    is (1/a) * 1/log2(r), so ranks 1, 3, 7, 15 (r = 2) weigh 1, 1/2, 1/3, 1/4 and ranks 2,
    8, 26 (r = 3) 1, 1/2, 1/3 times 1/log2(3). Järvelin & Kekäläinen's base b: ranks up to
    b weigh 1; beyond, k = r^a weighs ln b / (a ln r), rational when r is b's own root
    (base 2: ranks 4, 8, 16 weigh 1/2, 1/3, 1/4 and join ranks 1, 2).
    """
    classes: dict = {}
    b_int = int(base) if base is not None and float(base).is_integer() else None
    rb, kb = _primitive_power(b_int) if b_int is not None and b_int >= 2 else (None, None)
    for k in range(1, N + 1):
        if base is None:
            r, a = _primitive_power(k + 1)
            theta, q = ("log", r), Fraction(1, a)
        elif k <= base:
            theta, q = 1, Fraction(1)
        else:
            r, a = _primitive_power(k)
            theta, q = (1, Fraction(kb, a)) if r == rb else (("jk", r), Fraction(1, a))
        classes.setdefault(theta, []).append((k - 1, q))
    return list(classes.items())


@serves(DCG, nDCG)
@dataclass(frozen=True, eq=False)
class DCGSpace(Space):
    """DCG / nDCG (nDCG maps like DCG). Ranks whose discount weights are rational
    multiples of each other form a class (:func:`dcg_weight_classes`); a run's value is
    sum over classes of theta_c * S_c with S_c = sum of q_k * gain_k over the class, a
    rational. Gains are the integers G of :func:`space_gains` (the grade by default; a
    gain map scaled by the lcm of its denominators, the class weights divided by the same
    scale). Keys are the integer class sums L_c * S_c (L_c the lcm of the class's
    denominators) as a mixed-radix integer: equal keys, equal values, and every rational
    tie (a grade-2 document at rank 3 against a grade-1 one at rank 1) is an equal key.
    Distinct keys are assumed to have distinct values (no rational relation among the
    theta_c of different classes at these N); the engines check every pair of values
    closer than a relative 1e-12 in 60-digit arithmetic and stop with an error if two
    different keys ever agree there."""

    family: str = "dcg-q"  # keys are commensurable-class sums (the cache never meets older keys)
    ordered_keys: bool = False

    def pick_engine(self):
        if self.n_values <= 2**20 or (self.gmax > 1 and self.n_values < 80_000_000):
            return "dcg"
        return "count"

    def counter(self):
        from irscale.scales.counting import dcg_counter

        return dcg_counter(self)

    def check_counter(self):
        from irscale.scales.counting import check_dcg

        check_dcg(self)

    @property
    def identity(self) -> str:  # nDCG maps like DCG: one rank map (and cache entry) for both
        gains = getattr(self.measure, "gains", None)
        core = f"DCG(base={self.base}, rel={getattr(self.measure, 'rel', None)}" + (
            f", gains={gains})" if gains is not None else ")"
        )
        return f"{core}|N={self.N}|c={self.c}|{self.family}{_owner(type(self))}"

    @cached_property
    def base(self):
        return self.measure.base

    @cached_property
    def gmax(self) -> int:
        """The top grade (1 for binary runs)."""
        return 1 if self.binary_measure else self.c

    @cached_property
    def _gains(self) -> tuple[list[int], Fraction]:
        return space_gains(self)

    @cached_property
    def gain_ints(self) -> list[int]:
        """Integer gains of grades 0..gmax (the grade by default)."""
        return self._gains[0]

    @cached_property
    def gain_top(self) -> int:
        return self.gain_ints[-1]

    @cached_property
    def _structure(self):
        return dcg_weight_classes(self.N, self.base)

    @cached_property
    def classes(self) -> list[list[int]]:
        """Ranks (0-based) of each class of commensurable weights."""
        return [[k for k, _ in members] for _, members in self._structure]

    @cached_property
    def multipliers(self) -> list[list[int]]:
        """Per class, the integer multiplier L_c * q_k of each rank's gain in the class sum."""
        out = []
        for _, members in self._structure:
            L = math.lcm(*(q.denominator for _, q in members))
            out.append([int(q * L) for _, q in members])
        return out

    @cached_property
    def _lcms(self) -> list[int]:
        return [math.lcm(*(q.denominator for _, q in members)) for _, members in self._structure]

    @cached_property
    def radix(self) -> list[int]:
        return [self.gain_top * sum(m) + 1 for m in self.multipliers]

    @cached_property
    def max_key(self):
        return math.prod(self.radix) - 1

    @cached_property
    def n_values(self) -> int:
        """Attainable class-sum vectors: the size of the value set (under the assumption)."""
        return math.prod(len(a) for a in self.attainable)

    @cached_property
    def class_weights(self) -> np.ndarray:
        """The value of one unit of each integer class sum: theta_c / L_c."""
        from irscale.measures.gains import discounts

        w = discounts(self.N, self.base)
        scale = float(self._gains[1])
        return np.array(
            [
                w[members[0][0]] / float(members[0][1]) / L / scale
                for (_, members), L in zip(self._structure, self._lcms)
            ]
        )

    def class_totals(self, g):
        g = np.array(self.gain_ints, dtype=np.int64)[np.asarray(g, dtype=np.int64)]
        return np.stack(
            [g[:, cl] @ np.array(m, dtype=np.int64) for cl, m in zip(self.classes, self.multipliers)], axis=1
        )

    def encode(self, tot, first: int = 0) -> np.ndarray:
        """Mixed-radix codes of class-sum vectors (classes first.. of ``tot``'s columns)."""
        tot = np.asarray(tot)
        if not self.int64:  # exact Python integers (codes beyond 2^62)
            tot = tot.astype(object)
        key = np.zeros(len(tot), dtype=tot.dtype if tot.dtype == object else np.int64)
        for j in range(tot.shape[1]):
            key = key * self.radix[first + j] + tot[:, j]
        return key

    def keys(self, g):
        return self.encode(self.class_totals(g))

    def decode(self, keys, first: int = 0, stop: int | None = None):
        """Class sums (n, classes) of mixed-radix codes; with ``first``/``stop``, codes
        over the classes first..stop-1 only (a half of the counting engine)."""
        radix = self.radix[first:stop]
        keys = np.asarray(keys)
        keys = keys.astype(object if keys.dtype == object or not self.int64 else np.int64, copy=True)
        tot = np.empty((len(keys), len(radix)), dtype=np.int64)  # sums are small
        for j in range(len(radix) - 1, -1, -1):
            tot[:, j] = keys % radix[j]
            keys //= radix[j]
        return tot

    @cached_property
    def _ways(self) -> list[list[int]]:
        """Per class: how many grade assignments of its ranks reach each integer class sum
        (grade g adds its integer gain G[g] times the rank's multiplier)."""
        if max(self.radix) > 2**22:  # the sums of a class are listed: one entry per integer up to the top
            raise MeasureError(
                f"{self.measure}: its gains scale to integers up to {self.gain_top:,} (exact sums "
                f"of a class reach {max(self.radix) - 1:,}, listed one by one); give gains with "
                "fewer decimal digits or a smaller ratio between them, e.g. gains=0:0,1:1,2:3"
            )
        out = []
        for m in self.multipliers:
            coeffs = [1]
            for mk in m:
                nxt = [0] * (len(coeffs) + mk * self.gain_top)
                for i, a in enumerate(coeffs):
                    if a:
                        for G in self.gain_ints:
                            nxt[i + mk * G] += a
                coeffs = nxt
            out.append(coeffs)
        return out

    @cached_property
    def attainable(self) -> list[np.ndarray]:
        """Per class, the class sums some gain assignment reaches (sorted)."""
        return [np.flatnonzero(np.array(w, dtype=object) > 0).astype(np.int64) for w in self._ways]

    def attainable_totals(self, first: int = 0, stop: int | None = None) -> np.ndarray:
        """Every attainable vector of class sums over classes first..stop-1, (n, classes)."""
        parts = self.attainable[first:stop]
        if not parts:
            return np.zeros((1, 0), dtype=np.int64)
        grids = np.meshgrid(*parts, indexing="ij")
        return np.stack([gr.reshape(-1) for gr in grids], axis=1)

    def runs_behind(self, tot, first: int = 0) -> np.ndarray:
        """Runs having each vector of class sums (classes first.. of ``tot``'s columns),
        exact: int64 below 2^62 runs in all (no product can exceed that), Python ints beyond."""
        tot = np.asarray(tot)
        dtype = np.int64 if self.n_runs < INT64_LIMIT else object
        out = np.ones(len(tot), dtype=dtype)
        for j in range(tot.shape[1]):
            out = out * np.array(self._ways[first + j], dtype=dtype)[tot[:, j]]
        return out

    def key_values(self, keys):
        return self.decode(keys) @ self.class_weights

    @cached_property
    def _exact_class_weights(self) -> list:
        """theta_c / L_c of each class in 60-digit arithmetic (mpmath), computed once."""
        import mpmath

        out = []
        with mpmath.workdps(60):
            b = self.base
            scale = mpmath.mpf(self._gains[1].numerator) / self._gains[1].denominator
            for (_, members), L in zip(self._structure, self._lcms):
                k, q = members[0][0] + 1, members[0][1]
                if b is None:
                    w = 1 / mpmath.log(k + 1, 2)
                else:
                    w = mpmath.mpf(1) if k <= b else 1 / mpmath.log(k, b)
                out.append(w / (mpmath.mpf(q.numerator) / q.denominator) / L / scale)
        return out

    def exact_value(self, totals) -> object:
        """The value of class sums in 60-digit arithmetic (mpmath)."""
        import mpmath

        with mpmath.workdps(60):
            return mpmath.fsum(int(t) * w for t, w in zip(totals, self._exact_class_weights) if t)


# -- any other measure: plain enumeration ----------------------------------------------------


@dataclass(frozen=True, eq=False)
class GenericSpace(Space):
    """A measure irscale knows no structure of (a user-defined one). Its key is the
    measure's own ``exact_key(g, c)`` when it defines one (an int64 per run, ordered
    and tied like the measure), else its float64 value mapped to an order-preserving
    integer: ties are then exactly the runs the measure's own arithmetic scores equal
    (no rounding is added). Measures needing the recall base see RB = N (every grade
    level has N documents in the qrels)."""

    family: str = "generic"
    cacheable: bool = False  # user code may change under the same name: never cached on disk

    @cached_property
    def max_key(self):
        return 2**61  # keys are int64 by construction; no engine adds them

    def keys(self, g):
        hook = getattr(self.measure, "exact_key", None)
        if hook is not None:
            return self._hook_keys(hook(np.asarray(g), self.c))
        from irscale.data import TopicStats

        topics = TopicStats.single([self.N] * (self.c + 1))
        v = np.asarray(self.measure.batch(np.asarray(g, dtype=np.int16)[:, None, :], topics)[:, 0], dtype=np.float64)
        if np.isnan(v).any():
            raise MeasureError(f"{self.measure} gives NaN on some run of length {self.N}")
        return float_keys(v)

    def _hook_keys(self, raw) -> np.ndarray:
        """The hook's keys as int64, refused (never wrapped or truncated) when they are
        not integers or do not fit."""
        k = np.asarray(raw)
        lo, hi = -(2**63), 2**63 - 1
        if k.dtype.kind == "b":
            return k.astype(np.int64)
        if k.dtype.kind in "iu" and (k.size == 0 or (int(k.min()) >= lo and int(k.max()) <= hi)):
            return k.astype(np.int64)
        if k.dtype == object and all(isinstance(x, (int, np.integer)) and lo <= int(x) <= hi for x in k.flat):
            return np.array([int(x) for x in k.flat], dtype=np.int64).reshape(k.shape)
        raise MeasureError(
            f"{self.measure}.exact_key(g, c) must return integers that fit in int64 (got "
            f"{k.dtype}{' values out of range' if k.dtype.kind in 'iuO' else ''}); scale "
            "and round inside exact_key, or drop it to rank the measure's float values"
        )

    def key_values(self, keys):
        keys = np.asarray(keys, dtype=np.int64)
        if getattr(self.measure, "exact_key", None) is not None:
            return keys.astype(np.float64)
        return np.where(keys < 0, keys ^ np.int64(0x7FFFFFFFFFFFFFFF), keys).view(np.float64)


def float_keys(v: np.ndarray) -> np.ndarray:
    """int64 keys ordered and tied exactly like the float64 values ``v`` (equal values,
    -0.0 and 0.0 included, get equal keys): the tie rule of every measure without exact
    keys of its own."""
    bits = (np.asarray(v, dtype=np.float64) + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
    return np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)


# -- which space serves a measure ----------------------------------------------------------


def space_for(measure: str | Measure, N: int, c: int = 1) -> Space:
    """The run space of ``measure`` at run length ``N`` with grades ``0..c``.

    Binary measures (and graded ones given ``rel=``) always live on binary runs (c = 1).
    A measure's own cutoff, if any, must equal N (the ranked measure is defined at N).
    """
    from irscale.validate import integer, levels

    N = integer("run length N", N, minimum=1, maximum=MAX_N)
    c = integer("c (the top grade)", c, minimum=1)
    m = parse_measure(measure, default_cutoff=N)
    cutoff = getattr(m, "cutoff", None)
    if cutoff is not None and cutoff != N:
        raise MeasureError(
            f"{m} has cutoff {cutoff} but the run length is N={N}; "
            f"use {type(m).NAME} without a cutoff, or N={cutoff} (API depth={cutoff}, CLI -N {cutoff})"
        )
    binary = (not m.graded) or getattr(m, "rel", None) is not None
    c = 1 if binary else int(c)
    levels(c + 1)  # a graded space holds grades as 8-bit integers
    for measure_type, space_cls, when in _SERVED:
        if type(m) is measure_type and (when is None or when(m, N, c)):
            return space_cls(m, N, c)
    if m.no_scale:
        raise MeasureError(m.no_scale)
    if type(m).__module__.startswith("irscale.") and not m.user_defined:
        served = ", ".join(dict.fromkeys(t.NAME for t, _, _ in _SERVED if t.__module__.startswith("irscale.")))
        raise MeasureError(f"{m} has no ranked version (they exist for {served} and user-defined measures)")
    return GenericSpace(m, N, c)
