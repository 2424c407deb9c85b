"""Rank maps: the interval-scale transformation phi of a measure at run length N.

``phi(m) = |{x in M(REL^N) : x <= m}|`` (the "unq" strategy of SPEC section 3); the
``min``, ``max`` and ``mid`` strategies rank over the multiset of the (c+1)^N run
values instead (1 + runs below, runs at or below, their mean).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np

from irscale import __version__
from irscale.errors import IrscaleError, MeasureError
from irscale.measures import Measure
from irscale.scales.engines import (Buckets, Table, attach_buckets, dcg_engine, enumerate_engine,
                                    oracle, split_engine)
from irscale.scales.counting import Counter, dcg_counter, rbp_counter
from irscale.scales.spaces import DCGSpace, RBPSpace, Space, space_for

Ties = Literal["unq", "min", "max", "mid"]
TIES = ("unq", "min", "max", "mid")
ENGINES = ("auto", "closed", "split", "count", "enumerate", "dcg", "oracle")


@dataclass(eq=False)
class RankMap:
    """phi for one (measure, N, levels): ``size`` distinct values, built by ``engine``."""

    space: Space
    engine: str
    size: int
    n_runs: int
    seconds: float
    summary: Table | Buckets | Counter | None = field(default=None, repr=False)
    _bucket_cache: OrderedDict = field(default_factory=OrderedDict, repr=False)
    _known: dict = field(default_factory=dict, repr=False)  # kind -> (sorted keys, answers)
    cached: bool = False  # persisted in the cache (then answers are persisted too)
    from_cache: bool = False  # loaded from the cache rather than built

    @property
    def measure(self) -> Measure:
        return self.space.measure

    @property
    def N(self) -> int:
        return self.space.N

    # -- queries on exact keys ------------------------------------------------------------
    def phi_keys(self, keys: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of exact keys (see :mod:`irscale.scales.spaces`). ``unq`` gives int64
        ranks 1..size; ``min``/``max``/``mid`` ranks among all (c+1)^N runs (float64)."""
        if ties not in TIES:
            raise ValueError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
        keys = _as_keys(keys, self.space)
        if ties == "unq":
            return self._phi_unq(keys)
        le = self._runs_le(keys)
        at = self._runs_at(keys)
        lo = le - at + 1
        if ties == "min":
            return lo.astype(np.float64)
        if ties == "max":
            return le.astype(np.float64)
        return (lo + le).astype(np.float64) / 2

    def phi_runs(self, g: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of runs given as (n, N) grades in this space (0..c)."""
        return self.phi_keys(self.space.keys(np.asarray(g)), ties)

    def phi_grades(self, grades: np.ndarray, ties: Ties = "unq") -> np.ndarray:
        """phi of judged runs (any shape (..., D) of judged grades, sentinels included):
        each ranking is cut at N and padded with non-relevant documents."""
        grades = np.asarray(grades)
        g = self.space.grade_view(grades).reshape(-1, self.N)
        return self.phi_keys(self.space.keys(g), ties).reshape(grades.shape[:-1])

    def normalized(self, phi: np.ndarray) -> np.ndarray:
        """phi / size, in (0, 1] (still an interval scale)."""
        return np.asarray(phi, dtype=np.float64) / self.size

    def values(self, first: int | None = None, last: int | None = None) -> np.ndarray:
        """The distinct values of the measure's core (RB-free), ascending; the first or
        last few only, for large maps. None for the counting engine (it never lists them)."""
        s = self.summary
        if isinstance(s, Counter):
            return None  # the counting engine never lists the values
        if s is None:  # closed forms: keys are 0..size-1 in value order
            n = first if first is not None else last if last is not None else self.size
            n = min(n, self.size)
            sel = range(n) if first is not None or last is None else range(self.size - n, self.size)
            return self.space.key_values(np.array(list(sel), dtype=object))
        if isinstance(s, Table):
            order = s.value_order if s.value_order is not None else np.arange(len(s.keys))
            if s.phi_of_key is not None:  # one key per distinct value
                _, firsts = np.unique(s.phi_of_key[order], return_index=True)
                order = order[firsts]
            keys = s.keys[order]
        else:
            parts, need = [], first if first is not None else last
            rng = range(len(s.bounds) - 1) if first is not None else range(len(s.bounds) - 2, -1, -1)
            for b in rng:
                parts.append(self._bucket(b)[0])
                if need is not None and sum(map(len, parts)) >= need:
                    break
            keys = np.concatenate(parts if first is not None else parts[::-1])
        if first is not None:
            keys = keys[:first]
        elif last is not None:
            keys = keys[-last:]
        return self.space.key_values(keys)

    # -- internals -------------------------------------------------------------------------
    def _phi_unq(self, keys):
        s = self.summary
        if s is None:
            return self.space.closed_phi(keys)
        if isinstance(s, Counter):
            return self._cached_answers(keys, s.count_many)
        if isinstance(s, Table):
            if s.phi_of_key is None:
                return np.searchsorted(s.keys, keys, side="right").astype(np.int64)
            pos = np.searchsorted(s.keys, keys)
            pos = np.minimum(pos, len(s.keys) - 1)
            if not (s.keys[pos] == keys).all():
                raise IrscaleError("a key outside the run space was asked for (not a run of length N)")
            return s.phi_of_key[pos]
        def compute(new):
            b = np.clip(np.searchsorted(s.bounds, new, side="right") - 1, 0, len(s.bounds) - 2)
            phi_new = np.empty(len(new), dtype=np.int64)
            for bb in np.unique(b):
                sel = b == bb
                ks, _ = self._bucket(int(bb))
                phi_new[sel] = s.cum_distinct[bb] + np.searchsorted(ks, new[sel], side="right")
            return phi_new

        return self._cached_answers(keys, compute)

    def _cached_answers(self, keys, compute, kind: str = "unq"):
        """Answers for keys (phi for ``kind="unq"``, runs at or below for ``"le"``) through
        the answers given before (persisted beside the summary, so they cost nothing);
        only new keys are computed (the buckets they fall in)."""
        out = np.empty(len(keys), dtype=np.int64)
        lookup = _lookup_form(keys)
        known_k, known_phi = self._answers(kind)
        if len(known_k):
            pos = np.minimum(np.searchsorted(known_k, lookup), len(known_k) - 1)
            hit = known_k[pos] == lookup
            out[hit] = known_phi[pos[hit]]
        else:
            hit = np.zeros(len(keys), dtype=bool)
        if (~hit).any():
            new_l, first, inv = np.unique(lookup[~hit], return_index=True, return_inverse=True)
            phi_new = compute(keys[~hit][first])
            out[~hit] = phi_new[inv]
            self._remember(new_l, phi_new, kind)
        return out

    def _answers(self, kind: str = "unq"):
        if kind not in self._known:
            self._known[kind] = _answers_load(self, kind)
        return self._known[kind]

    def _remember(self, keys, phi, kind: str = "unq"):
        k0, p0 = self._answers(kind)
        k = np.concatenate([k0, keys]) if len(k0) else keys
        p = np.concatenate([p0, phi]) if len(k0) else phi
        k, first = np.unique(k, return_index=True)
        self._known[kind] = (k, p[first])
        if self.cached:
            _answers_save(self, kind)

    def _runs_le(self, keys):
        s = self.summary
        if isinstance(s, Counter):
            if self.n_runs >= 2**62:  # run counts beyond int64: exact Python ints, not cached
                return np.array([s.count(k, weighted=True) for k in keys], dtype=object)
            return self._cached_answers(keys, lambda new: s.count_many(new, weighted=True), "le").astype(object)
        if s is None:
            return np.asarray(self.space.closed_runs_le(keys), dtype=object)
        if isinstance(s, Table):
            if s.phi_of_key is None:
                cum = np.cumsum(s.runs.astype(object))
                pos = np.searchsorted(s.keys, keys, side="right")
                return np.array([cum[p - 1] if p else 0 for p in pos], dtype=object)
            # DCG: runs at or below a value = cumulative over value order up to its last tie
            return np.cumsum(self._runs_per_phi)[self._phi_unq(keys)]
        wide = self.n_runs >= 2**62  # run counts beyond int64: exact Python ints, not cached

        def compute(new):
            b = np.clip(np.searchsorted(s.bounds, new, side="right") - 1, 0, len(s.bounds) - 2)
            out = np.empty(len(new), dtype=object if wide else np.int64)
            for bb in np.unique(b):
                sel = np.flatnonzero(b == bb)
                ks, runs = self._bucket(int(bb), True)
                cum = np.concatenate([[0], np.cumsum(runs.astype(object) if wide else runs)])
                out[sel] = int(s.cum_runs[bb]) + cum[np.searchsorted(ks, new[sel], side="right")]
            return out

        if wide:
            return compute(keys)
        return self._cached_answers(keys, compute, "le").astype(object)

    def _runs_at(self, keys):
        """Runs sharing each key's value."""
        s = self.summary
        if isinstance(s, Counter):
            return np.array([s.runs_of(k) for k in keys], dtype=object)
        if s is None:
            prev = self.space.closed_runs_le(np.maximum(keys - 1, 0))
            le = self.space.closed_runs_le(keys)
            return np.where(keys > 0, le - prev, le).astype(object)
        if isinstance(s, Table) and s.phi_of_key is not None:
            return self._runs_per_phi[self._phi_unq(keys)]
        le = self._runs_le(keys)
        below = self._runs_le(keys - 1)
        return le - below

    @cached_property
    def _runs_per_phi(self) -> np.ndarray:
        """Runs having each value, indexed by phi (tables whose keys are not in value
        order, DCG): several keys can share one value."""
        s = self.summary
        out = np.zeros(self.size + 1, dtype=object)
        np.add.at(out, s.phi_of_key, s.runs.astype(object))
        return out

    def _bucket(self, b: int, with_runs: bool = False):
        key = (b, with_runs)
        if key in self._bucket_cache:
            self._bucket_cache.move_to_end(key)
            return self._bucket_cache[key]
        out = self.summary.regenerate(b, with_runs)
        self._bucket_cache[key] = out
        while len(self._bucket_cache) > 8:
            self._bucket_cache.popitem(last=False)
        return out


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
    if space.closed:
        return "closed"
    if isinstance(space, DCGSpace):
        if space.max_key < 2**20 or (space.gmax > 1 and space.max_key < 80_000_000):
            return "dcg"
        if space.gmax == 1:
            return "count"
        raise MeasureError(f"graded {space.measure} at N={space.N}: {space.max_key + 1:,} candidate values; "
                           "rational weights tie there (2 x 1/2 = 1), so pair counting does not apply, and "
                           "the dcg engine holds up to 80,000,000")
    if space.splittable and space.int64 and space.N >= 12:
        return "split"
    if space.int64:
        return "enumerate"
    if isinstance(space, RBPSpace) and space.c == 1:
        return "count"
    raise MeasureError(f"{space.measure} at N={space.N}: exact keys exceed 64 bits and no engine "
                       "for this case is built yet")


def build(measure: str | Measure, N: int, levels: int = 2, *, engine: str = "auto", scheduler=None,
          progress=None, cache: bool = True) -> RankMap:
    """Build (or load from the cache) the rank map of ``measure`` at run length ``N``
    with ``levels`` relevance degrees (2: binary). All engines are exact."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    space = space_for(measure, N, levels - 1)
    name = choose_engine(space) if engine == "auto" else engine
    if cache and name != "oracle":
        hit = _cache_load(space, name)
        if hit is not None:
            return hit
    t = time.perf_counter()
    if name == "closed":
        if not space.closed:
            raise MeasureError(f"{space.measure} has no closed form")
        summary, size = None, space.closed_size()
    else:
        if name == "oracle":
            summary = oracle(space)
        elif name == "enumerate":
            summary = enumerate_engine(space, scheduler=scheduler, progress=progress)
        elif name == "split":
            if not space.splittable:
                raise MeasureError(f"{space.measure} does not split into prefix and suffix parts")
            summary = split_engine(space, scheduler=scheduler, progress=progress)
        elif name == "count":
            if isinstance(space, DCGSpace):
                summary = dcg_counter(space)
            elif isinstance(space, RBPSpace):
                summary = rbp_counter(space)
            else:
                raise MeasureError("the count engine serves RBP and DCG/nDCG")
        elif name == "dcg":
            if not isinstance(space, DCGSpace):
                raise MeasureError("the dcg engine serves DCG and nDCG only")
            summary = dcg_engine(space)
        size = summary.size
    rm = RankMap(space, name, int(size), space.n_runs, time.perf_counter() - t, summary)
    if cache and name != "oracle":
        rm.cached = _cache_save(rm)
    return rm


# -- cache -------------------------------------------------------------------------------------

def cache_dir() -> Path:
    """``$IRSCALE_CACHE_DIR``, else the platform's user cache directory."""
    env = os.environ.get("IRSCALE_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("irscale"))


def _cache_file(space: Space, engine: str) -> Path:
    ident = f"{space.identity}|{engine}|irscale {__version__}"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:20]
    return cache_dir() / "rankmaps" / f"{digest}.npz"


def _cache_load(space: Space, engine: str) -> RankMap | None:
    f = _cache_file(space, engine)
    if not f.exists():
        return None
    try:
        with np.load(f, allow_pickle=False) as z:
            if str(z["identity"]) != space.identity:
                return None
            size, seconds = int(z["size"]), float(z["seconds"])
            if engine == "closed":
                summary = None
            elif engine == "count":  # the halves are rebuilt (fast); answers persist
                summary = dcg_counter(space) if isinstance(space, DCGSpace) else rbp_counter(space)
            elif "bounds" in z:
                summary = attach_buckets(space, int(z["h"]), z["bounds"], z["cum_distinct"],
                                         [int(x) for x in z["cum_runs"]])
            else:
                phi = z["phi_of_key"] if "phi_of_key" in z else None
                order = z["value_order"] if "value_order" in z else None
                summary = Table(z["keys"], z["runs"], phi, order)
    except (OSError, ValueError, KeyError):
        return None  # a damaged cache entry is rebuilt
    return RankMap(space, engine, size, space.n_runs, seconds, summary, cached=True, from_cache=True)


def _answers_file(rm: RankMap, kind: str = "unq") -> Path:
    return _cache_file(rm.space, rm.engine).with_suffix(f".answers-{kind}.npz")


def _answers_load(rm: RankMap, kind: str = "unq"):
    empty = (np.empty(0, dtype=_lookup_dtype(rm.space)), np.empty(0, dtype=np.int64))
    if not rm.cached:
        return empty
    try:
        with np.load(_answers_file(rm, kind), allow_pickle=False) as z:
            return z["keys"], z["phi"]
    except (OSError, ValueError, KeyError):
        return empty


def _answers_save(rm: RankMap, kind: str = "unq") -> None:
    f = _answers_file(rm, kind)
    try:
        tmp = f.with_suffix(".tmp.npz")
        np.savez(tmp, keys=rm._known[kind][0], phi=rm._known[kind][1])
        os.replace(tmp, f)
    except OSError:
        pass


def _cache_save(rm: RankMap) -> bool:
    f = _cache_file(rm.space, rm.engine)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"identity": np.array(rm.space.identity), "size": np.array(rm.size),
                  "seconds": np.array(rm.seconds)}
        if isinstance(rm.summary, Table):
            arrays["keys"] = rm.summary.keys
            arrays["runs"] = np.asarray(rm.summary.runs, dtype=np.float64 if rm.summary.runs.dtype == object
                                        else rm.summary.runs.dtype)
            if rm.summary.phi_of_key is not None:
                arrays["phi_of_key"] = rm.summary.phi_of_key
                arrays["value_order"] = rm.summary.value_order
        elif isinstance(rm.summary, Buckets):
            arrays.update(h=np.array(rm.summary.h), bounds=rm.summary.bounds,
                          cum_distinct=rm.summary.cum_distinct,
                          cum_runs=rm.summary.cum_runs.astype(np.int64))  # <= 2^N runs
        tmp = f.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, f)
        return True
    except OSError:
        return False  # a read-only cache only costs a rebuild


def cache_info() -> dict:
    d = cache_dir() / "rankmaps"
    files = sorted(f for f in d.glob("*.npz") if ".answers" not in f.name) if d.exists() else []
    entries = []
    for f in files:
        try:
            with np.load(f, allow_pickle=False) as z:
                entries.append({"file": f.name, "identity": str(z["identity"]), "size": int(z["size"]),
                                "bytes": f.stat().st_size})
        except (OSError, ValueError, KeyError):
            entries.append({"file": f.name, "identity": "(unreadable)", "size": 0, "bytes": f.stat().st_size})
    return {"dir": str(cache_dir()), "entries": entries, "bytes": sum(e["bytes"] for e in entries)}


def cache_clear() -> int:
    d = cache_dir() / "rankmaps"
    n = 0
    if d.exists():
        for f in d.glob("*.npz"):
            n += ".answers" not in f.name
            f.unlink()
    return n
