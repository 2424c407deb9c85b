"""Rank maps: the interval-scale transformation phi of a measure at run length N.

``phi(m) = |{x in M(REL^N) : x <= m}|`` (the "unq" strategy of SPEC section 3); the
``min``, ``max`` and ``mid`` strategies rank over the multiset of the (c+1)^N run
values instead (1 + runs below, runs at or below, their mean).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import lzma
import os
import secrets
import socket
import struct
import time
import warnings
import zipfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np

from irscale._version import __version__
from irscale.errors import IrscaleError, IrscaleWarning, MeasureError
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
        from irscale.errors import check_choice

        check_choice("ties", ties, TIES)
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
        from irscale.errors import ArgumentError

        g = np.asarray(g)
        c = 1 if self.space.binary_measure else self.space.c
        if g.ndim != 2 or g.shape[1] != self.N or g.dtype.kind not in "iub":
            raise ArgumentError(f"runs must be an (n, {self.N}) integer array of grades (one row per run of length "
                                f"N={self.N}), not shape {g.shape} of {g.dtype}")
        if g.size and (g.min() < 0 or g.max() > c):
            raise ArgumentError(f"grades must be in 0..{c} on this space, found {int(g.min())}..{int(g.max())}; "
                                "judged runs with sentinels or other grades go through phi_grades")
        return self.phi_keys(self.space.keys(g), ties)

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
    """The fastest exact engine for ``space``; raises MeasureError/IrscaleError, before
    anything is built, where none can serve it (see :func:`check_engine`)."""
    name = _pick_engine(space)
    check_engine(space, name)
    return name


def check_engine(space: Space, name: str) -> None:
    """Refuse an engine that cannot serve ``space`` (its limits, checked up front)."""
    if name == "count":
        from irscale.scales.counting import check_counter

        check_counter(space)
    elif name in ("split", "enumerate"):
        space.require_int64(name)


def _pick_engine(space: Space) -> str:
    if space.closed:
        return "closed"
    if isinstance(space, DCGSpace):
        if space.max_key < 2**20 or (space.gmax > 1 and space.max_key < 80_000_000):
            return "dcg"
        if space.gmax == 1:
            return "count"
        raise MeasureError(f"graded {space.measure} at N={space.N} with {space.c + 1} relevance levels: "
                           f"{space.max_key + 1:,} candidate values; rational weights tie there (2 x 1/2 = 1), so "
                           "pair counting does not apply, and the dcg engine holds up to 80,000,000: use a smaller "
                           "N, or binary relevance (rel=1 in the measure, or max_grade=1 / --max-grade 1)")
    if space.splittable and space.int64 and space.N >= 12:
        return "split"
    if space.int64:
        return "enumerate"
    if isinstance(space, RBPSpace) and space.c == 1:
        return "count"
    raise MeasureError(f"{space.measure} at N={space.N} with {space.c + 1} relevance levels: exact keys exceed "
                       "64 bits and no engine for this case is built yet: use a smaller N, or binary relevance "
                       "(rel=1 in the measure, or max_grade=1 / --max-grade 1)")


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
#
# One .npz per rank map (and one per kind of persisted answers) under cache_dir()/rankmaps.
# Every file carries a sha256 of its arrays (name, dtype, shape and bytes, names sorted);
# a file that cannot be read or whose checksum fails is treated as absent: rebuilt, with
# one IrscaleWarning per file. Files are written atomically (a uniquely named temp file
# beside the target, flushed and fsynced, then renamed over it), so readers see the old
# file or the new one, never a half-written one; temp files left by killed writers are
# removed once their writer is gone (or after an hour).

_STALE_SECONDS = 3600
_HOST = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in socket.gethostname()) or "host"
_warned: set = set()  # files reported damaged, directories reported unwritable (once per process)
_swept: set = set()  # directories swept of stale temp files by loads in this process

# every way numpy's loader fails on a damaged .npz: zip structure and CRCs (BadZipFile),
# truncation (EOFError), headers and pickle refusal (ValueError), missing members
# (KeyError), unsupported or encrypted-looking members after a bit flip, absurd shapes
_LOAD_ERRORS = (OSError, EOFError, ValueError, KeyError, IndexError, TypeError, OverflowError, MemoryError,
                RuntimeError, NotImplementedError, SyntaxError, zipfile.BadZipFile, zipfile.LargeZipFile,
                zlib.error, lzma.LZMAError, struct.error)


class _Damaged(Exception):
    """A cache file that cannot be trusted; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


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


def _why(e: BaseException) -> str:
    """An OSError's reason in lower case ("permission denied"), else the exception's text."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror[:1].lower() + e.strerror[1:]
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _checksum(arrays: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == "checksum":
            continue
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _read_npz(f: Path) -> dict:
    """Every array of a cache file, checksum verified. Raises FileNotFoundError when the
    file is absent and :class:`_Damaged` when it cannot be trusted."""
    try:
        size = f.stat().st_size
    except OSError as e:  # no such file, or its directory cannot be reached: absent
        raise FileNotFoundError(errno.ENOENT, _why(e), str(f)) from e
    try:
        if size == 0:
            raise _Damaged("empty file")
        with np.load(f, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except _LOAD_ERRORS as e:
        raise _Damaged(_why(e)) from e
    if "checksum" not in arrays:
        raise _Damaged("no checksum (written by an older irscale, or not by irscale)")
    if str(arrays["checksum"]) != _checksum(arrays):
        raise _Damaged("checksum mismatch: the stored arrays were altered")
    return arrays


def _write_npz(f: Path, arrays: dict) -> None:
    """Write ``arrays`` and their checksum to ``f`` atomically (OSError when it cannot)."""
    arrays = dict(arrays)
    arrays["checksum"] = np.array(_checksum(arrays))
    tmp = f.with_name(f"{f.name}.{_HOST}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, f)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _warn_damaged(f: Path, reason: str, what: str = "rank-map") -> None:
    if ("damaged", str(f)) in _warned:
        return
    _warned.add(("damaged", str(f)))
    done = "rebuilt" if what == "rank-map" else "recomputed"
    if reason.startswith("no checksum"):  # a file of an older irscale: not damage, just old
        warnings.warn(f"the {what} cache file {f} has no checksum (written by an older irscale); it is {done} "
                      "once", IrscaleWarning, stacklevel=3)
        return
    warnings.warn(f"the {what} cache file {f} was damaged ({reason}); it was ignored and is {done}",
                  IrscaleWarning, stacklevel=3)


def _warn_unwritable(e: OSError, consequence: str) -> None:
    d = cache_dir()
    if ("unwritable", str(d)) in _warned:
        return
    _warned.add(("unwritable", str(d)))
    warnings.warn(f"cannot write the rank-map cache at {d} ({_why(e)}); {consequence}: set IRSCALE_CACHE_DIR "
                  "to a writable directory", IrscaleWarning, stacklevel=3)


def _is_temp(name: str) -> bool:
    return name.endswith(".tmp") or name.endswith(".tmp.npz")  # .tmp.npz: older irscale's temp files


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but not ours (PermissionError), or cannot tell
        return True
    return True


def _stale(p: Path, now: float) -> bool:
    """A temp file no live writer will rename: its writer (on this host) is gone, or it
    is older than an hour (writers on other hosts, and older irscale's unnamed temps)."""
    parts = p.name[: -len(".tmp")].rsplit(".", 3) if p.name.endswith(".tmp") else []
    if len(parts) == 4 and parts[1] == _HOST and parts[2].isdigit() and not _pid_alive(int(parts[2])):
        return True
    try:
        return now - p.stat().st_mtime > _STALE_SECONDS
    except OSError:
        return False


def _sweep(d: Path) -> None:
    """Remove stale temp files (best effort: a read-only cache keeps them, ignored)."""
    try:
        temps = [p for p in d.iterdir() if _is_temp(p.name)]
    except OSError:
        return
    now = time.time()
    for p in temps:
        if _stale(p, now):
            with contextlib.suppress(OSError):
                p.unlink()


def _map_files(d: Path) -> list[Path]:
    """The rank-map files (not answers, not temp files) in ``d``; IrscaleError if unreadable."""
    try:
        return sorted(p for p in d.iterdir() if p.name.endswith(".npz") and not _is_temp(p.name))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise IrscaleError(f"cannot read the rank-map cache at {d} ({_why(e)}); fix its permissions or set "
                           "IRSCALE_CACHE_DIR to another directory") from e


def _ints_out(a: np.ndarray) -> np.ndarray:
    """Integers for storage without pickles: int64 where they fit, decimal strings beyond."""
    a = np.asarray(a)
    if a.dtype != object:
        return a
    if all(-(2**63) <= int(x) < 2**63 for x in a.flat):
        return a.astype(np.int64)
    return np.array([str(int(x)) for x in a.flat]).reshape(a.shape)


def _ints_in(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind == "U":
        return np.array([int(x) for x in a.flat], dtype=object).reshape(a.shape)
    return a


def _cache_load(space: Space, engine: str) -> RankMap | None:
    f = _cache_file(space, engine)
    if str(f.parent) not in _swept:
        _swept.add(str(f.parent))
        _sweep(f.parent)
    try:
        z = _read_npz(f)
    except FileNotFoundError:
        return None
    except _Damaged as e:
        _warn_damaged(f, e.reason)
        return None
    try:
        if str(z["identity"]) != space.identity:
            return None  # another map behind the same digest: rebuilt (and replaced)
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
            summary = Table(_ints_in(z["keys"]), _ints_in(z["runs"]), phi, order)
    except (KeyError, ValueError, TypeError) as e:  # checksum fine, content not a rank map
        _warn_damaged(f, _why(e))
        return None
    return RankMap(space, engine, size, space.n_runs, seconds, summary, cached=True, from_cache=True)


def _answers_file(rm: RankMap, kind: str = "unq") -> Path:
    return _cache_file(rm.space, rm.engine).with_suffix(f".answers-{kind}.npz")


def _answers_load(rm: RankMap, kind: str = "unq"):
    empty = (np.empty(0, dtype=_lookup_dtype(rm.space)), np.empty(0, dtype=np.int64))
    if not rm.cached:
        return empty
    f = _answers_file(rm, kind)
    try:
        z = _read_npz(f)
        keys, phi = z["keys"], z["phi"]
        if (str(z["identity"]) != rm.space.identity or keys.ndim != 1 or keys.shape != phi.shape
                or keys.dtype.kind != np.dtype(_lookup_dtype(rm.space)).kind or phi.dtype.kind != "i"):
            raise _Damaged("not the answers of this rank map")
    except FileNotFoundError:
        return empty
    except _Damaged as e:
        _warn_damaged(f, e.reason, "answers")
        return empty
    except KeyError as e:
        _warn_damaged(f, _why(e), "answers")
        return empty
    return keys, phi


def _answers_save(rm: RankMap, kind: str = "unq") -> None:
    keys, phi = rm._known[kind]
    try:
        _write_npz(_answers_file(rm, kind), {"identity": np.array(rm.space.identity), "keys": keys, "phi": phi})
    except OSError as e:
        _warn_unwritable(e, "phi answers are recomputed every time")


def _cache_save(rm: RankMap) -> bool:
    f = _cache_file(rm.space, rm.engine)
    arrays = {"identity": np.array(rm.space.identity), "size": _ints_out(np.array(rm.size, dtype=object)),
              "seconds": np.array(rm.seconds)}
    if isinstance(rm.summary, Table):
        arrays["keys"] = _ints_out(rm.summary.keys)
        arrays["runs"] = _ints_out(rm.summary.runs)
        if rm.summary.phi_of_key is not None:
            arrays["phi_of_key"] = rm.summary.phi_of_key
            arrays["value_order"] = rm.summary.value_order
    elif isinstance(rm.summary, Buckets):
        arrays.update(h=np.array(rm.summary.h), bounds=rm.summary.bounds, cum_distinct=rm.summary.cum_distinct,
                      cum_runs=_ints_out(rm.summary.cum_runs))
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        _write_npz(f, arrays)
    except OSError as e:
        _warn_unwritable(e, "rank maps are rebuilt every time")
        return False
    return True


def cache_info() -> dict:
    """The cache directory and its rank maps: one entry per file with ``file``,
    ``identity``, ``size``, ``bytes`` and ``damaged`` (None, or why the file cannot be
    used: it will be rebuilt when next needed)."""
    root = cache_dir()
    d = root / "rankmaps"
    if d.is_dir():
        _sweep(d)
    entries = []
    for f in _map_files(d) if d.is_dir() else []:
        if ".answers" in f.name:
            continue
        try:
            nbytes = f.stat().st_size
            z = _read_npz(f)
            entry = {"identity": str(z["identity"]), "size": int(z["size"]), "damaged": None}
        except FileNotFoundError:
            continue  # removed meanwhile
        except _Damaged as e:
            entry = {"identity": f"(damaged: {e.reason})", "size": 0, "damaged": e.reason}
        except (KeyError, ValueError, TypeError) as e:
            entry = {"identity": f"(damaged: {_why(e)})", "size": 0, "damaged": _why(e)}
        except OSError as e:
            raise IrscaleError(f"cannot read {f} ({_why(e)}); fix its permissions or remove it") from e
        entries.append({"file": f.name, "bytes": nbytes, **entry})
    return {"dir": str(root), "entries": entries, "bytes": sum(e["bytes"] for e in entries)}


def cache_clear() -> int:
    """Remove every cached rank map (and its answers, and stale temp files); returns the
    number of rank maps removed. IrscaleError when a file cannot be removed."""
    d = cache_dir() / "rankmaps"
    if not d.is_dir():
        return 0
    _sweep(d)
    n = 0
    for f in _map_files(d):
        try:
            f.unlink()
        except FileNotFoundError:
            continue
        except OSError as e:
            raise IrscaleError(f"cannot remove {f} ({_why(e)}); remove it by hand or fix the permissions") from e
        n += ".answers" not in f.name
    return n
