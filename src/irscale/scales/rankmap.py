"""Rank maps: the interval-scale transformation phi of a measure at run length N.

``phi(m) = |{x in M(REL^N) : x <= m}|`` (the "unq" strategy: phi counts the distinct values at or below m); the
``min``, ``max`` and ``mid`` strategies rank over the multiset of the (c+1)^N run
values instead (1 + runs below, runs at or below, their mean).

A :class:`RankMap` is a run space (:mod:`irscale.scales.spaces`: the measure's exact
keys) and a value set (:mod:`irscale.scales.valuesets`: what an engine computed); it
asks the value set, remembers expensive answers and keeps them in the disk cache
(:mod:`irscale.scales.cache`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from irscale.errors import ArgumentError, IrscaleError, MeasureError, check_choice
from irscale.measures import Measure
from irscale.scales import (
    budget,
    counting,  # also registers the "count" value-set kind that cached maps may hold
)
from irscale.scales import cache as _cache
from irscale.scales.cache import cache_clear, cache_dir, cache_info
from irscale.scales.engines import (
    MAX_PAIRS,
    dcg_engine,
    dcg_engine_bytes,
    enumerate_engine,
    enumerate_engine_bytes,
    oracle,
    split_engine,
    split_engine_bytes,
)
from irscale.scales.spaces import Space, space_for
from irscale.scales.spaces.dcg import DCGSpace
from irscale.scales.spaces.err import ERRSpace
from irscale.scales.spaces.rbp import RBPSpace
from irscale.scales.valuesets import ClosedForm, ValueSet, from_arrays
from irscale.scales.wide import MAX_BITS
from irscale.validate import integer

Ties = Literal["unq", "min", "max", "mid"]
TIES = ("unq", "min", "max", "mid")
ENGINES = ("auto", "closed", "split", "count", "enumerate", "dcg", "oracle")


@dataclass(eq=False)
class RankMap:
    """phi for one (measure, N, levels): ``size`` distinct values, built by ``engine``;
    ``summary`` is the value set the engine computed."""

    space: Space
    engine: str
    size: int
    n_runs: int
    seconds: float
    summary: ValueSet | None = field(default=None, repr=False)
    _known: dict = field(default_factory=dict, repr=False)  # kind -> (sorted keys, answers)
    cached: bool = False  # persisted in the cache (then answers are persisted too)
    from_cache: bool = False  # loaded from the cache rather than built

    def __post_init__(self):
        if self.summary is None:
            self.summary = ClosedForm(self.space)

    @property
    def _summary(self) -> ValueSet:
        """``summary``, never None after ``__post_init__`` (the closed form where none was given)."""
        assert self.summary is not None, "RankMap.summary is set in __post_init__"
        return self.summary

    @property
    def measure(self) -> Measure:
        return self.space.measure

    def _repr_html_(self) -> str:
        """A compact display for notebooks: the measure, N, the relevance levels, the
        engine, the number of distinct values (size) and of runs, the build time and
        whether the map came from the cache."""
        from irscale._display import card, names

        levels = 2 if self.space.binary_measure else self.space.c + 1
        facts = [
            ("measure", names([self.measure])),
            ("run length N", f"{self.N:,}"),
            ("relevance levels", f"{levels:,}"),
            ("engine", names([self.engine])),
            ("distinct values (size)", f"{self.size:,}"),
            ("runs", f"{self.n_runs:,}"),
            ("seconds", f"{self.seconds:.3g}"),
            ("from cache", "yes" if self.from_cache else "no (built)" + (", stored" if self.cached else "")),
        ]
        note = "phi(m): the number of distinct values at or below m (1..size); .phi_runs(grades), .values()"
        return card(f"RankMap: {self.measure} at N = {self.N:,}", facts, notes=[note])

    @property
    def N(self) -> int:
        return self.space.N

    # -- queries on exact keys ------------------------------------------------------------
    def rank(self, keys: np.ndarray, ties: Sequence[Ties] = ("unq",)) -> dict[str, np.ndarray]:
        """phi of exact keys under each tie strategy in ``ties``, computed together: the
        run counts that ``min``, ``max`` and ``mid`` share are asked once. ``unq`` gives
        int64 ranks 1..size; ``min``/``max``/``mid`` ranks among all (c+1)^N runs (float64)."""
        asked: tuple[str, ...] = (ties,) if isinstance(ties, str) else tuple(ties)  # one name, or several
        for t in asked:
            check_choice("ties", t, TIES)
        keys = _as_keys(keys, self.space)
        out = {}
        if "unq" in asked:
            out["unq"] = self._ask("unq", keys)
        if set(asked) - {"unq"}:
            le, at = self._le_at(keys)
            lo = le - at + 1
            for t in asked:
                if t == "min":
                    out[t] = lo.astype(np.float64)
                elif t == "max":
                    out[t] = le.astype(np.float64)
                elif t == "mid":
                    out[t] = (lo + le).astype(np.float64) / 2
        return out

    def phi_keys(self, keys: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of exact keys (see :mod:`irscale.scales.spaces`) under one tie strategy."""
        check_choice("ties", ties, TIES)
        return self.rank(keys, (ties,))[ties]

    def phi_runs(self, g: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of runs given as (n, N) grades in this space (0..c)."""
        g = np.asarray(g)
        c = 1 if self.space.binary_measure else self.space.c
        if g.ndim != 2 or g.shape[1] != self.N or g.dtype.kind not in "iub":
            raise ArgumentError(
                f"runs must be an (n, {self.N}) integer array of grades (one row per run of length "
                f"N={self.N}), not shape {g.shape} of {g.dtype}"
            )
        if g.size and (g.min() < 0 or g.max() > c):
            raise ArgumentError(
                f"grades must be in 0..{c} on this space, found {int(g.min())}..{int(g.max())}; "
                "judged runs (sentinels, other grades) go through the space's grade_view first"
            )
        return self.phi_keys(self.space.keys(g), ties)

    def normalized(self, phi: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi in (0, 1] (still an interval scale): "unq" ranks divided by the number of
        distinct values, "min"/"max"/"mid" ranks (over all runs) by the number of runs."""
        return np.asarray(phi, dtype=np.float64) / (self.size if ties == "unq" else float(self.n_runs))

    def values(self, first: int | None = None, last: int | None = None) -> np.ndarray | None:
        """The distinct values of the measure's core (RB-free), ascending; the first or
        last few only, for large maps. None for the counting engine (it never lists them)."""
        keys = self._summary.listed(first, last)
        return None if keys is None else self.space.key_values(keys)

    # -- answers: asked of the value set, remembered where they are expensive ---------------
    def _ask(self, kind: str, keys: np.ndarray) -> np.ndarray:
        """phi ("unq") of keys, remembered where the value set says it is expensive."""
        vs = self._summary
        return self._cached_answers(keys, vs.phi, kind) if vs.memo else vs.phi(keys)

    def _le_at(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Runs at or below and at each key's value (exact: object arrays), asked of the
        value set in one pass and remembered where expensive."""
        vs = self._summary
        if not vs.memo or self.n_runs >= 2**62:  # run counts beyond int64 are not stored
            le, at = vs.runs_le_at(keys)
            return np.asarray(le, dtype=object), np.asarray(at, dtype=object)
        both = {}

        def le_and_at(new):
            le, at = vs.runs_le_at(new)
            both["at"] = (_lookup_form(new), np.asarray(at).astype(np.int64))
            return le

        def at_only(new):
            if "at" in both:  # computed beside "le" for (usually) the same new keys
                k, a = both["at"]
                pos = np.minimum(np.searchsorted(k, _lookup_form(new)), len(k) - 1)
                if len(k) and (k[pos] == _lookup_form(new)).all():
                    return a[pos]
            return vs.runs_at(new)

        le = self._cached_answers(keys, le_and_at, "le")
        at = self._cached_answers(keys, at_only, "at")
        return le.astype(object), at.astype(object)

    def _cached_answers(self, keys, compute, kind: str = "unq"):
        """Answers for keys through the answers given before (persisted beside the value
        set, so they cost nothing); only new keys are computed."""
        out = np.empty(len(keys), dtype=np.int64)
        lookup = _lookup_form(keys)
        known_k, known_v = self._answers(kind)
        if len(known_k):
            pos = np.minimum(np.searchsorted(known_k, lookup), len(known_k) - 1)
            hit = known_k[pos] == lookup
            out[hit] = known_v[pos[hit]]
        else:
            hit = np.zeros(len(keys), dtype=bool)
        if (~hit).any():
            new_l, first, inv = np.unique(lookup[~hit], return_index=True, return_inverse=True)
            new_v = np.asarray(compute(keys[~hit][first])).astype(np.int64)
            out[~hit] = new_v[inv]
            self._remember(new_l, new_v, kind)
        return out

    def _answers(self, kind: str = "unq"):
        if kind not in self._known:
            got = None
            if self.cached:
                got = _cache.load_answers(self.space, self.engine, kind, np.dtype(_lookup_dtype(self.space)).kind)
            self._known[kind] = got or (np.empty(0, dtype=_lookup_dtype(self.space)), np.empty(0, dtype=np.int64))
        return self._known[kind]

    def _remember(self, keys, vals, kind: str = "unq"):
        k0, v0 = self._answers(kind)
        k = np.concatenate([k0, keys]) if len(k0) else keys
        v = np.concatenate([v0, vals]) if len(k0) else vals
        k, first = np.unique(k, return_index=True)
        self._known[kind] = (k, v[first])
        if self.cached:
            _cache.save_answers(self.space, self.engine, kind, *self._known[kind])


# -- building --------------------------------------------------------------------------------


def _as_keys(keys, space: Space) -> np.ndarray:
    """Query keys in the space's one form: int64, or (keys beyond int64) Python ints in an
    object array, whatever the values of this particular query, so answers given and
    persisted for one query are found again for the next."""
    keys = np.asarray(keys)
    if not space.int64:
        return np.array([int(k) for k in keys.flat], dtype=object).reshape(keys.shape)
    if keys.dtype == object:
        try:
            return keys.astype(np.int64)
        except OverflowError:
            raise IrscaleError("a key outside the run space was asked for (not a run of length N)") from None
    return keys.astype(np.int64)


def _lookup_dtype(space: Space):
    return np.int64 if space.int64 else np.str_


def _lookup_form(keys: np.ndarray) -> np.ndarray:
    """Keys in a sortable, storable form: int64, or decimal strings for wider keys."""
    return np.array([str(int(k)) for k in keys], dtype=np.str_) if keys.dtype == object else keys


def choose_engine(space: Space, *, max_pairs: int | None = None) -> str:
    """The fastest exact engine for ``space`` (:func:`pick_engine`); raises
    MeasureError/IrscaleError, before anything is built, where none can serve it (see
    :func:`check_engine`)."""
    name = pick_engine(space)
    check_engine(space, name, max_pairs=max_pairs)
    return name


def pick_engine(space: Space) -> str:
    """The fastest exact engine for ``space``, from what the space declares (its
    ``engine_rule`` (:data:`ENGINE_RULES`), then ``closed``, ``splittable``,
    ``int64``) and, for DCG, the memory budget
    (:mod:`irscale.scales.budget`: the dcg engine lists every value where its estimate
    fits, else the count engine answers): the one place engines are chosen. MeasureError
    where none can serve it.

    >>> from irscale.scales import space_for
    >>> [pick_engine(space_for(m, 30)) for m in ("P", "AP", "RBP(p=0.8)", "nDCG")]
    ['closed', 'split', 'count', 'count']
    >>> pick_engine(space_for("nDCG", 10))
    'dcg'
    """
    if space.engine_rule is not None:  # what the space's structure calls for (RBP, DCG, ERR beyond 64 bits)
        rule = ENGINE_RULES.get(space.engine_rule)
        if rule is None:
            raise MeasureError(
                f"{type(space).__name__} declares engine_rule={space.engine_rule!r}; the rules are "
                f"{', '.join(map(repr, ENGINE_RULES))}, or None for the generic ones"
            )
        own = rule(space)
        if own is not None:
            return own
    if space.closed:
        return "closed"
    if space.splittable and space.int64 and (space.N >= 12 or not budget.fits(enumerate_engine_bytes(space))):
        return "split"  # (below N = 12 where listing every run would not fit the budget)
    if space.int64:
        return "enumerate"
    raise MeasureError(
        f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: exact keys exceed "
        "64 bits and no engine for this case is built yet: use a smaller N, fewer relevance levels "
        "(--max-grade, max_grade= in the API), or binary relevance (--max-grade 1, --relevance "
        "lenient, or rel=1 in the measure)"
    )


# the engine rules a space may declare (Space.engine_rule), by name: each gives the engine its
# structure calls for, or None for the generic rules of pick_engine
ENGINE_RULES = {
    "rbp-count": lambda space: "count" if counts_rbp(space) else None,
    "dcg-budget": lambda space: dcg_engine_choice(space),
    "err-wide": lambda space: None if space.int64 else err_engine(space),
}


def counts_rbp(space: RBPSpace) -> bool:
    """RBP by pair counting: binary with keys beyond 64 bits (exact integers), or graded
    where every run has its own value and listing them would cost more than counting."""
    if space.gmax == 1:
        return not space.int64
    return counting.rbp_runs_distinct(space) and (not space.int64 or space.n_runs > 2**24)


def dcg_engine_choice(space: DCGSpace) -> str:
    """DCG: the dcg engine lists every value (and checks ties exhaustively) where it has
    few enough and they fit the memory budget, else the count engine answers (if it cannot
    serve either, the dcg engine's refusal names the budget)."""
    listed = space.n_values <= 2**20 or (space.gmax > 1 and space.n_values < 80_000_000)
    if listed and not budget.fits(dcg_engine_bytes(space)):
        try:
            counting.check_counter(space)
        except IrscaleError:
            return "dcg"
        return "count"
    return "dcg" if listed else "count"


def err_engine(space: ERRSpace) -> str:
    """ERR beyond int64 keys: the split engine on wide keys where it fits, else a refusal
    that says up to which N it is exact (ERR's values have no product structure: an exact
    engine lists them; guide: Long runs)."""
    cc = space.cc

    def fits(n: int) -> bool:  # runs (one pair each) and key width the split engine accepts;
        # grade terms 2^c in int64 (a space with 52 or more levels is int64 only at N = 1)
        return (
            cc <= 50
            and (cc + 1) ** n <= MAX_PAIRS
            and (math.lcm(*range(1, n + 1)) << (cc * n + 1)).bit_length() <= MAX_BITS
        )

    if fits(space.N):
        return "split"
    last = max((n for n in range(1, space.N) if fits(n)), default=0)
    binary = "binary relevance (--max-grade 1 or --relevance lenient: exact up to N=35)"
    fewer = (
        ""
        if cc == 1
        else f", or {binary}"
        if cc == 2
        else f", fewer levels (--max-grade {cc - 1} or less; max_grade= in the API), or {binary}"
    )
    why = (
        f"its exact keys need {space.max_key.bit_length()} bits, beyond the split engine's {MAX_BITS}"
        if space.n_runs <= MAX_PAIRS
        else f"the split engine lists every run, up to {MAX_PAIRS:,}"
    )
    upto = f"up to N={last}" if last else "at no N"
    raise MeasureError(
        f"{space.measure} at N={space.N} with {cc + 1} relevance levels: {why}, so ERR is exact {upto} on "
        f"{cc + 1} levels; use " + (f"-N {last} or less{fewer}" if last else fewer.lstrip(", "))
    )


def exact_reach(measure: Measure, c: int, below: int, *, max_pairs: int | None = None) -> int:
    """The largest N < ``below`` (0 if none) at which an exact engine accepts ``measure``
    on c + 1 levels (a cutoff it was named with is moved to each N), checked up front:
    nothing is built. ``max_pairs``: the split engine's opt-in."""
    import dataclasses

    moved = getattr(measure, "cutoff", None) is not None
    last = 0
    for n in range(1, min(below, 200)):
        try:
            choose_engine(
                space_for(dataclasses.replace(measure, **{"cutoff": n}) if moved else measure, n, c),
                max_pairs=max_pairs,
            )
        except IrscaleError:
            break
        last = n
    return last


def memory_estimate(space: Space, name: str, *, max_pairs: int | None = None) -> int | None:
    """The bytes the engine ``name`` is estimated to take on ``space`` before it builds
    (:mod:`irscale.scales.budget`); None for closed forms, which hold nothing. The
    enumerate engine's estimate counts one key per run (an upper bound where runs share
    values); the split engine estimates its distinct keys from a sample of pairs.
    IrscaleError where the engine refuses ``space`` (``max_pairs``: the split engine's
    limit, see :func:`build`)."""
    if name == "dcg":
        return dcg_engine_bytes(space)
    if name == "count" and isinstance(space, (RBPSpace, DCGSpace)):
        return counting.count_engine_bytes(space)
    if name == "split":
        return split_engine_bytes(space, max_pairs=max_pairs)
    if name == "enumerate":
        from irscale.scales.engines import check_enumerable

        check_enumerable(space)
        return enumerate_engine_bytes(space)
    return None


def check_engine(space: Space, name: str, *, max_pairs: int | None = None) -> None:
    """Refuse an engine that cannot serve ``space`` (its limits, checked up front;
    ``max_pairs``: the split engine's, see :func:`~irscale.scales.engines.check_split`)."""
    if name == "dcg":
        budget.check(
            dcg_engine_bytes(space),
            f"{space.measure} at N={space.N} on {space.c + 1} levels: the dcg engine",
            "engine='count' (CLI --engine count) counts its values in little memory",
        )
    if name == "count":
        counting.check_counter(space)
    elif name == "split":
        from irscale.scales.engines import check_split

        check_split(space, max_pairs)
    elif name == "enumerate":
        from irscale.scales.engines import check_enumerate

        check_enumerate(space)
    if name == "closed" and not space.closed:
        raise MeasureError(f"{space.measure} has no closed form")
    if name == "split" and not space.splittable:
        raise MeasureError(f"{space.measure} does not split into prefix and suffix parts")


def _run_engine(space: Space, name: str, scheduler, progress, queries=None, max_pairs=None) -> ValueSet:
    if name == "closed":
        return ClosedForm(space)
    if name == "oracle":
        return oracle(space)
    if name == "enumerate":
        return enumerate_engine(space, scheduler=scheduler, progress=progress)
    if name == "split":
        return split_engine(space, scheduler=scheduler, progress=progress, queries=queries, max_pairs=max_pairs)
    if name == "count":
        return counting.counter_for(space)
    return dcg_engine(space)  # "dcg"


def build(
    measure: str | Measure,
    N: int,
    levels: int = 2,
    *,
    engine: str = "auto",
    scheduler=None,
    progress=None,
    cache: bool = True,
    queries=None,
    max_pairs: int | None = None,
    planned: tuple[Space, str] | None = None,
) -> RankMap:
    """Build (or load from the cache) the rank map of ``measure`` at run length ``N``
    with ``levels`` relevance degrees (2: binary). All engines are exact. ``progress(done,
    total)`` follows the build's buckets or chunks, and for the count engine (which works
    per query) the blocks of phi queries; ``scheduler`` (Dask) runs either. ``queries``:
    exact keys whose phi will be asked next (a transform's runs); an engine that passes
    over all values anyway (``split``) answers them on the way.

    ``max_pairs``: the opt-in to split builds beyond ``engines.MAX_PAIRS`` (2^35
    (prefix, suffix) pairs, about ten minutes on 2 cores), e.g. ``max_pairs=2**36`` for
    binary AP at N = 36: memory stays bounded (the pairs are produced bucket by bucket),
    the time grows with the pairs. Other engines ignore it (they have their own limits).
    ``planned``: ``(space, engine)`` as a plan chose them (:class:`irscale.plan.MeasurePlan`:
    the space of ``measure`` at N on ``levels``, the engine :func:`pick_engine` picked), so
    neither is derived again; the cache is searched as with ``engine="auto"``."""
    from irscale.scales.engines import pairs_limit

    check_choice("engine", engine, ENGINES)
    levels = integer("levels", levels, minimum=2)
    pairs_limit(max_pairs)  # a bad value is refused whichever engine serves
    space, name = planned if planned is not None else (space_for(measure, N, levels - 1), None)
    name = name or (pick_engine(space) if engine == "auto" else engine)
    cache = cache and space.cacheable and name != "oracle"
    if cache:  # a map in the cache is served even past the limits that guard a build (max_pairs, memory)
        for cached in _cached_engines(space, name) if engine == "auto" else [name]:
            hit = _cache_load(space, cached)
            if hit is not None:
                return _answering(hit, scheduler, progress)
    check_engine(space, name, max_pairs=max_pairs)
    t = time.perf_counter()
    summary = _run_engine(
        space, name, scheduler, progress, None if queries is None else _as_keys(queries, space), max_pairs
    )
    rm = RankMap(space, name, int(summary.size), space.n_runs, time.perf_counter() - t, summary)
    if cache:
        rm.cached = _cache_save(rm)
    if summary.answers is not None:
        keys, phi = summary.answers
        summary.answers = None
        rm._remember(_lookup_form(keys), phi)
    return _answering(rm, scheduler, progress)


def in_cache(space: Space) -> bool:
    """Whether the cache holds ``space``'s rank map (built by an engine :func:`build`
    would serve it from), so that :func:`build` serves it whatever the limits of a new
    build."""
    try:
        name = pick_engine(space)
    except IrscaleError:
        return False
    return space.cacheable and any(_cache.load_map(space, n) is not None for n in _cached_engines(space, name))


def on_disk(space: Space, picked: str) -> bool:
    """Whether the cache holds a file of ``space``'s rank map that :func:`build` would
    serve when ``picked`` is the engine picked (a probe, nothing read: for the plan)."""
    return space.cacheable and any(_cache.has_map(space, e) for e in _cached_engines(space, picked))


def _cached_engines(space: Space, picked: str) -> list[str]:
    """The engines whose cached map serves ``space`` when the engine is left to irscale:
    the one :func:`pick_engine` picks, and for DCG the other of "dcg" and "count", below
    N = 12 the other of "split" and "enumerate" (which one is picked depends on the
    memory budget; both answer the same phi)."""
    if isinstance(space, DCGSpace):
        return [picked] + [e for e in ("dcg", "count") if e != picked]
    if picked in ("split", "enumerate") and space.splittable and space.int64 and space.N < 12:  # (the budget picks)
        return [picked] + [e for e in ("split", "enumerate") if e != picked]
    return [picked]


def _answering(rm: RankMap, scheduler, progress) -> RankMap:
    """Value sets that work per query (the count engine) answer on ``scheduler``, and
    report ``progress(done, total)`` per block of queries."""
    vs = rm._summary
    if isinstance(vs, (counting.Counter, counting.Deferred)):  # the value sets with scheduler and progress
        vs.scheduler, vs.progress = scheduler, progress
    return rm


def _cache_load(space: Space, engine: str) -> RankMap | None:
    """The cached rank map, or None (absent or damaged: rebuilt)."""
    z = _cache.load_map(space, engine)
    if z is None:
        return None
    try:
        summary = from_arrays(space, engine, z)
    except (KeyError, ValueError, TypeError) as e:  # checksum fine, content not a rank map
        _cache.damaged(z["_file"], e)
        return None
    return RankMap(
        space, engine, int(z["size"]), space.n_runs, float(z["seconds"]), summary, cached=True, from_cache=True
    )


def _cache_save(rm: RankMap) -> bool:
    arrays = {
        "size": _cache.ints_out(np.array(rm.size, dtype=object)),
        "seconds": np.array(rm.seconds),
        "kind": np.array(rm._summary.kind),
    }
    arrays.update({k: _cache.ints_out(v) for k, v in rm._summary.arrays().items()})
    return _cache.save_map(rm.space, rm.engine, arrays)


__all__ = [
    "build",
    "cache_clear",
    "cache_dir",
    "cache_info",
    "check_engine",
    "choose_engine",
    "counts_rbp",
    "dcg_engine_choice",
    "ENGINE_RULES",
    "ENGINES",
    "err_engine",
    "RankMap",
    "TIES",
]
