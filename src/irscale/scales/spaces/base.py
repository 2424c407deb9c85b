"""The run space REL^N of a measure: the base class :class:`Space`, the declaration
``@serves``, :func:`space_for`, and :class:`GenericSpace` for measures without a space
of their own.

Run spaces REL^N and the exact value of a measure on them.

A :class:`Space` knows, for one measure at run length N over grades 0..c, an *exact
key* of every run: an integer whose order and equality are those of the measure's
RB-free core, so tie decisions never depend on rounding. Keys are
int64 where every key (and every sum of two partial keys) stays below 2^62; a space
whose keys would not fit says so (``int64 = False``), gives exact Python-int keys
(object arrays) instead, and only the engines that do not need int64 keys (closed
forms, pair counting, the test oracle) serve it; the others refuse with an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.data import PAD
from irscale.errors import MeasureError
from irscale.measures import Measure, parse_measure
from irscale.measures.registry import ENTRIES, add_space, spaces_of
from irscale.validate import integer, levels

__all__ = [
    "all_runs",
    "cut_and_pad",
    "float_keys",
    "GenericSpace",
    "INT64_LIMIT",
    "MAX_N",
    "serves",
    "Space",
    "space_for",
    "space_gains",
]


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


def cut_and_pad(grades, N: int, fill: int = 0) -> np.ndarray:
    """Judged grades cut at rank N and padded to N with ``fill``: grade 0 by default, or
    ``PAD`` (irscale.data: no document) where a grade 0 could count as relevant (rel=0)."""
    g = np.asarray(grades)[..., :N]
    if g.shape[-1] < N:
        pad = np.full(g.shape[:-1] + (N - g.shape[-1],), fill, dtype=np.int16 if fill < -128 else g.dtype)
        g = np.concatenate([g, pad], axis=-1)
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
    # -- what the space can do, declared: the planner, the CLI and ``irscale measures`` read these
    # (no code outside irscale.scales asks which class a space is)
    description: ClassVar[str] = "exact"  # how phi is found, in words (``irscale measures``)
    certified_bounds: ClassVar[bool] = False  # bounds on the normalised phi beyond the exact engines (approx)
    values_are_keys: ClassVar[bool] = False  # key_values gives the measure's own values (no normaliser)
    # the engine rule the space's structure calls for before the generic ones (closed form, split,
    # enumerate), by name (irscale.scales.rankmap.ENGINE_RULES: "rbp-count", "dcg-budget",
    # "err-wide"); None: the generic rules decide
    engine_rule: ClassVar[str | None] = None
    # bytes per run and rank that ``keys`` allocates at its peak, for the enumerate engine's
    # memory estimate (tests/test_budget.py measures each built-in family's); spaces that do
    # not say (a user's measure, whose batch irscale cannot see) are taken at 32
    key_bytes_per_rank: ClassVar[int] = 32

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
    def equispaced(self) -> bool:
        """The measure's value is an affine function of the key and the runs' keys fill an
        integer range: its values are equi-spaced, an interval scale (on its own order) at any N
        (:func:`irscale.scales.permissible.scale_of` asks this first where the papers say
        nothing; :func:`irscale.testing.check_space` holds a space to it)."""
        return False

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

    def grade_view(self, grades: np.ndarray) -> np.ndarray:
        """Map judged grades (any ints, sentinels included) onto this space: cut at N,
        pad with non-relevant documents, binary measures to 0/1, graded ones to 0..c."""
        g = cut_and_pad(grades, self.N, fill=int(PAD))  # a missing rank is never relevant, even at rel=0
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


# -- which space serves a measure: declared next to each space, kept in the registry ----------


def serves(*measures: type[Measure], when: Callable[[Measure, int, int], bool] | None = None):
    """Class decorator declaring that a :class:`Space` computes phi for ``measures``
    (registered classes, not their subclasses: a subclass may compute something else,
    and is enumerated unless it declares a space of its own), or only for those instances
    where ``when(measure, N, c)`` holds. The declaration is kept in the measure's entry of
    :mod:`irscale.measures.registry`; :func:`space_for` tries the spaces with a ``when``
    first, in declaration order, then the one without (a class has at most one).

    >>> space_for("AP", 10).family, space_for("RBP(p=0.5)", 10).family, space_for("RBP(p=0.8)", 10).family
    ('ap', 'positional', 'rbp')
    """

    def deco(space_cls: type[Space]) -> type[Space]:
        for m in measures:
            add_space(m, space_cls, when)
        return space_cls

    return deco


def space_gains(space: Space) -> tuple[list[int], Fraction]:
    """``(G, s)``: the integer gains G[g] = s * gain(g) of grades 0..c that a space's keys
    add (no common factor; binary runs: 0, 1), from the measure's gain map
    (:meth:`irscale.measures.gains._GainMeasure.integer_gains`; the grade by default).
    Rational gains are scaled by the lcm of their denominators, so keys stay exact integers."""
    levels(space.c + 1)
    if space.binary_measure:
        return [0, 1], Fraction(1)
    integer_gains = getattr(space.measure, "integer_gains", None)
    if integer_gains is None:
        return list(range(space.c + 1)), Fraction(1)
    return integer_gains(space.c)


def _plus_one(keys):
    keys = np.asarray(keys)
    return keys + 1 if keys.dtype == object else keys.astype(np.int64) + 1


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
    description: ClassVar[str] = "exact, by listing every run (a user measure)"
    values_are_keys: ClassVar[bool] = True

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
    for space_cls, when in spaces_of(type(m)):
        if when is None or when(m, N, c):
            return space_cls(m, N, c)
    if m.no_scale:
        raise MeasureError(m.no_scale)
    if type(m).__module__.startswith("irscale.") and not m.user_defined:
        served = ", ".join(e.name for e in ENTRIES.values() if e.spaces and e.cls.__module__.startswith("irscale."))
        raise MeasureError(f"{m} has no ranked version (they exist for {served} and user-defined measures)")
    return GenericSpace(m, N, c)
