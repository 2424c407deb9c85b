"""Rank maps: the interval-scale transformation phi of a measure at run length N.

``phi(m) = |{x in M(REL^N) : x <= m}|`` (the "unq" strategy of SPEC section 3); the
``min``, ``max`` and ``mid`` strategies rank over the multiset of the (c+1)^N run
values instead (1 + runs below, runs at or below, their mean).

A :class:`RankMap` is a run space (:mod:`irscale.scales.spaces`: the measure's exact
keys) and a value set (:mod:`irscale.scales.valuesets`: what an engine computed); it
asks the value set, remembers expensive answers and keeps them in the disk cache
(:mod:`irscale.scales.cache`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np

from irscale.errors import IrscaleError, MeasureError
from irscale.measures import Measure
from irscale.scales import cache as _cache
from irscale.scales.engines import attach_buckets, dcg_engine, enumerate_engine, oracle, split_engine
from irscale.scales.spaces import Space, space_for
from irscale.scales.valuesets import Buckets, ClosedForm, Table, ValueSet, ValueTable

# the cache's public functions and the names tests and tools reach through this module
from irscale.scales.cache import (_HOST, _is_temp, _read_npz, _warned, _write_npz, cache_clear,  # noqa: F401
                                  cache_dir, cache_info)

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
    def measure(self) -> Measure:
        return self.space.measure

    @property
    def N(self) -> int:
        return self.space.N

    # -- queries on exact keys ------------------------------------------------------------
    def rank(self, keys: np.ndarray, ties: Sequence[Ties] = ("unq",)) -> dict[str, np.ndarray]:
        """phi of exact keys under each tie strategy in ``ties``, computed together: the
        run counts that ``min``, ``max`` and ``mid`` share are asked once. ``unq`` gives
        int64 ranks 1..size; ``min``/``max``/``mid`` ranks among all (c+1)^N runs (float64)."""
        from irscale.errors import check_choice

        ties = (ties,) if isinstance(ties, str) else tuple(ties)
        for t in ties:
            check_choice("ties", t, TIES)
        keys = _as_keys(keys, self.space)
        out = {}
        if "unq" in ties:
            out["unq"] = self._ask("unq", keys)
        if set(ties) - {"unq"}:
            le = self._ask("le", keys)
            at = self._ask("at", keys)
            lo = le - at + 1
            for t in ties:
                if t == "min":
                    out[t] = lo.astype(np.float64)
                elif t == "max":
                    out[t] = le.astype(np.float64)
                elif t == "mid":
                    out[t] = (lo + le).astype(np.float64) / 2
        return out

    def phi_keys(self, keys: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of exact keys (see :mod:`irscale.scales.spaces`) under one tie strategy."""
        from irscale.errors import check_choice

        check_choice("ties", ties, TIES)
        return self.rank(keys, (ties,))[ties]

    def phi_runs(self, g: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of runs given as (n, N) grades in this space (0..c)."""
        from irscale.errors import ArgumentError

        g = np.asarray(g)
        c = 1 if self.space.binary_measure else self.space.c
        if g.ndim != 2 or g.shape[1] != self.N or g.dtype.kind not in "iub":
            raise ArgumentError(f"runs must be an (n, {self.N}) integer array of grades (one row per run of length "
                                f"N={self.N}), not shape {g.shape} of {g.dtype}")
        if g.size and (g.min() < 0 or g.max() > c):
            raise ArgumentError(f"grades must be in 0..{c} on this space, found {int(g.min())}..{int(g.max())}; "
                                "judged runs (sentinels, other grades) go through the space's grade_view first")
        return self.phi_keys(self.space.keys(g), ties)

    def normalized(self, phi: np.ndarray) -> np.ndarray:
        """phi / size, in (0, 1] (still an interval scale)."""
        return np.asarray(phi, dtype=np.float64) / self.size

    def values(self, first: int | None = None, last: int | None = None) -> np.ndarray | None:
        """The distinct values of the measure's core (RB-free), ascending; the first or
        last few only, for large maps. None for the counting engine (it never lists them)."""
        keys = self.summary.listed(first, last)
        return None if keys is None else self.space.key_values(keys)

    # -- answers: asked of the value set, remembered where they are expensive ---------------
    def _ask(self, kind: str, keys: np.ndarray) -> np.ndarray:
        vs = self.summary
        fn = {"unq": vs.phi, "le": vs.runs_le, "at": vs.runs_at}[kind]
        wide = kind != "unq" and self.n_runs >= 2**62  # run counts beyond int64: exact Python ints
        if not vs.memo or wide:
            out = fn(keys)
            return out if kind == "unq" else np.asarray(out, dtype=object)
        out = self._cached_answers(keys, fn, kind)
        return out if kind == "unq" else out.astype(object)

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


def choose_engine(space: Space) -> str:
    """The fastest exact engine for ``space`` (the space declares it:
    :meth:`~irscale.scales.spaces.Space.pick_engine`); raises MeasureError/IrscaleError,
    before anything is built, where none can serve it (see :func:`check_engine`)."""
    name = space.pick_engine()
    check_engine(space, name)
    return name


def check_engine(space: Space, name: str) -> None:
    """Refuse an engine that cannot serve ``space`` (its limits, checked up front)."""
    if name == "count":
        from irscale.scales.counting import check_counter

        check_counter(space)
    elif name in ("split", "enumerate"):
        space.require_int64(name)
    elif name == "closed" and not space.closed:
        raise MeasureError(f"{space.measure} has no closed form")
    elif name == "split" and not space.splittable:
        raise MeasureError(f"{space.measure} does not split into prefix and suffix parts")


def _run_engine(space: Space, name: str, scheduler, progress) -> ValueSet:
    if name == "closed":
        return ClosedForm(space)
    if name == "oracle":
        return oracle(space)
    if name == "enumerate":
        return enumerate_engine(space, scheduler=scheduler, progress=progress)
    if name == "split":
        if not space.splittable:
            raise MeasureError(f"{space.measure} does not split into prefix and suffix parts")
        return split_engine(space, scheduler=scheduler, progress=progress)
    if name == "count":
        return space.counter()
    return dcg_engine(space)  # "dcg"


def build(measure: str | Measure, N: int, levels: int = 2, *, engine: str = "auto", scheduler=None,
          progress=None, cache: bool = True) -> RankMap:
    """Build (or load from the cache) the rank map of ``measure`` at run length ``N``
    with ``levels`` relevance degrees (2: binary). All engines are exact."""
    from irscale.errors import check_choice
    from irscale.validate import integer

    check_choice("engine", engine, ENGINES)
    levels = integer("levels", levels, minimum=2)
    space = space_for(measure, N, levels - 1)
    name = choose_engine(space) if engine == "auto" else engine
    check_engine(space, name)
    if cache and name != "oracle":
        hit = _cache_load(space, name)
        if hit is not None:
            return hit
    t = time.perf_counter()
    summary = _run_engine(space, name, scheduler, progress)
    rm = RankMap(space, name, int(summary.size), space.n_runs, time.perf_counter() - t, summary)
    if cache and name != "oracle":
        rm.cached = _cache_save(rm)
    return rm


def _cache_load(space: Space, engine: str) -> RankMap | None:
    """The cached rank map, or None (absent or damaged: rebuilt)."""
    z = _cache.load_map(space, engine)
    if z is None:
        return None
    try:
        if engine == "closed":
            summary = ClosedForm(space)
        elif engine == "count":  # the halves are rebuilt (fast); answers persist
            summary = space.counter()
        elif "bounds" in z:
            summary = attach_buckets(space, int(z["h"]), z["bounds"], z["cum_distinct"],
                                     [int(x) for x in z["cum_runs"]])
        elif "phi_of_key" in z:
            summary = ValueTable(_cache.ints_in(z["keys"]), _cache.ints_in(z["runs"]), z["phi_of_key"],
                                 z["value_order"])
        else:
            summary = Table(_cache.ints_in(z["keys"]), _cache.ints_in(z["runs"]))
    except (KeyError, ValueError, TypeError) as e:  # checksum fine, content not a rank map
        _cache.damaged(z["_file"], e)
        return None
    return RankMap(space, engine, int(z["size"]), space.n_runs, float(z["seconds"]), summary, cached=True,
                   from_cache=True)


def _cache_save(rm: RankMap) -> bool:
    arrays = {"size": _cache.ints_out(np.array(rm.size, dtype=object)), "seconds": np.array(rm.seconds)}
    arrays.update({k: _cache.ints_out(v) for k, v in rm.summary.arrays().items()})
    return _cache.save_map(rm.space, rm.engine, arrays)


__all__ = ["RankMap", "build", "choose_engine", "check_engine", "cache_dir", "cache_info", "cache_clear",
           "ENGINES", "TIES", "Buckets"]
