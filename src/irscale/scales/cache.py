"""The on-disk rank-map cache: one checksummed ``.npz`` per rank map (and per kind of
remembered answers) and per bounds table, written atomically, damaged files ignored and
rebuilt.

The rank map decides what to store (its value set's ``arrays()``), and so does the bounds
module (its tables, :mod:`irscale.scales.bounds`); this module only knows files: where
they live, how they are named, read, verified, written and removed.
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
import zipfile
import zlib
from pathlib import Path

import numpy as np

from irscale._version import __version__
from irscale.errors import IrscaleError, warn

# One .npz per rank map (and one per kind of persisted answers) under cache_dir()/rankmaps,
# and one per bounds table (scales/bounds.py: the grid recursion's lo/hi tables, the lattice
# convolution's cdf) under cache_dir()/bounds, named by a digest of the table's identity.
# Every file carries a sha256 of its arrays (name, dtype, shape and bytes, names sorted);
# a file that cannot be read or whose checksum fails is treated as absent: rebuilt, with
# one IrscaleWarning per file. Files are written atomically (a uniquely named temp file
# beside the target, flushed and fsynced, then renamed over it), so readers see the old
# file or the new one, never a half-written one; temp files left by killed writers are
# removed once their writer is gone (or after an hour).

__all__ = [
    "cache_clear",
    "cache_dir",
    "cache_info",
    "damaged",
    "has_map",
    "ints_in",
    "ints_out",
    "load_answers",
    "load_map",
    "load_table",
    "save_answers",
    "save_map",
    "save_table",
]


_STALE_SECONDS = 3600
_HOST = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in socket.gethostname()) or "host"
_warned: set = set()  # files reported damaged, directories reported unwritable (once per process)
_swept: set = set()  # directories swept of stale temp files by loads in this process

# every way numpy's loader fails on a damaged .npz: zip structure and CRCs (BadZipFile),
# truncation (EOFError), headers and pickle refusal (ValueError), missing members
# (KeyError), unsupported or encrypted-looking members after a bit flip, absurd shapes
_LOAD_ERRORS = (
    OSError,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    OverflowError,
    MemoryError,
    RuntimeError,
    NotImplementedError,
    SyntaxError,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    lzma.LZMAError,
    struct.error,
)


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


def _cache_file(space, engine: str) -> Path:
    ident = f"{space.identity}|{engine}|irscale {__version__}"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:20]
    return cache_dir() / "rankmaps" / f"{digest}.npz"


def _table_file(identity: str) -> Path:
    ident = f"{identity}|irscale {__version__}"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:20]
    return cache_dir() / "bounds" / f"{digest}.npz"


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
    done = "recomputed" if what == "answers" else "rebuilt"
    if reason.startswith("no checksum"):  # a file of an older irscale: not damage, just old
        warn(f"the {what} cache file {f} has no checksum (an older irscale wrote it); it is {done} once", stacklevel=3)
        return
    warn(f"the {what} cache file {f} was damaged ({reason}); it was ignored and is {done}", stacklevel=3)


def _warn_unwritable(e: OSError, consequence: str) -> None:
    d = cache_dir()
    if ("unwritable", str(d)) in _warned:
        return
    _warned.add(("unwritable", str(d)))
    warn(
        f"cannot write the rank-map cache at {d} ({_why(e)}); {consequence}: set IRSCALE_CACHE_DIR to a "
        "writable directory",
        stacklevel=3,
    )


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
        raise IrscaleError(
            f"cannot read the rank-map cache at {d} ({_why(e)}); fix its permissions or set "
            "IRSCALE_CACHE_DIR to another directory"
        ) from e


def ints_out(a: np.ndarray) -> np.ndarray:
    """Integers for storage without pickles: int64 where they fit, decimal strings beyond."""
    a = np.asarray(a)
    if a.dtype != object:
        return a
    if all(-(2**63) <= int(x) < 2**63 for x in a.flat):
        return a.astype(np.int64)
    return np.array([str(int(x)) for x in a.flat]).reshape(a.shape)


def ints_in(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind == "U":
        return np.array([int(x) for x in a.flat], dtype=object).reshape(a.shape)
    return a


def has_map(space, engine: str) -> bool:
    """Whether a rank-map file of ``space`` built by ``engine`` is in the cache (a probe:
    nothing is read; :func:`load_map` still checks it)."""
    try:
        return _cache_file(space, engine).is_file()
    except OSError:
        return False


def load_map(space, engine: str) -> dict | None:
    """The stored arrays of ``space``'s rank map built by ``engine``, or None (absent,
    damaged: warned once, or another map behind the same digest)."""
    return _load(_cache_file(space, engine), space.identity, {"size": int, "seconds": float}, "rank-map")


def _load(f: Path, identity: str, scalars: dict, what: str) -> dict | None:
    """The arrays of cache file ``f`` (its ``_file`` added) if it holds ``identity`` with
    ``scalars`` readable ({name: int or float}); None where absent, damaged (warned once) or another entry behind
    the same digest. Stale temp files of its folder are swept once per process."""
    if str(f.parent) not in _swept:
        _swept.add(str(f.parent))
        _sweep(f.parent)
    try:
        z = _read_npz(f)
    except FileNotFoundError:
        return None
    except _Damaged as e:
        _warn_damaged(f, e.reason, what)
        return None
    try:
        if str(z["identity"]) != identity:
            return None  # another entry behind the same digest: rebuilt (and replaced)
        for k, read in scalars.items():
            read(z[k])
    except (KeyError, ValueError, TypeError) as e:
        _warn_damaged(f, _why(e), what)
        return None
    z["_file"] = f
    return z


def damaged(f: Path, e: BaseException, what: str = "rank-map") -> None:
    """Report a file whose checksum was fine but whose content is not a rank map (or,
    ``what="bounds-table"``, not the bounds table its name says)."""
    _warn_damaged(f, _why(e), what)


def save_map(space, engine: str, arrays: dict) -> bool:
    """Store a rank map's arrays (identity added); False, with one warning, when the
    cache cannot be written."""
    return _save(
        _cache_file(space, engine), {"identity": np.array(space.identity), **arrays}, "rank maps are rebuilt every time"
    )


def _save(f: Path, arrays: dict, consequence: str) -> bool:
    """Write cache file ``f`` atomically; False, with one warning saying ``consequence``,
    when the cache cannot be written."""
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        _write_npz(f, arrays)
    except OSError as e:
        _warn_unwritable(e, consequence)
        return False
    return True


def _answers_file(space, engine: str, kind: str) -> Path:
    return _cache_file(space, engine).with_suffix(f".answers-{kind}.npz")


def load_answers(space, engine: str, kind: str, key_kind: str):
    """Remembered answers ``(sorted keys, int64 answers)`` of one kind, or None."""
    f = _answers_file(space, engine, kind)
    try:
        z = _read_npz(f)
        keys, vals = z["keys"], z["phi"]
        if (
            str(z["identity"]) != space.identity
            or keys.ndim != 1
            or keys.shape != vals.shape
            or keys.dtype.kind != key_kind
            or vals.dtype.kind != "i"
        ):
            raise _Damaged("not the answers of this rank map")
    except FileNotFoundError:
        return None
    except _Damaged as e:
        _warn_damaged(f, e.reason, "answers")
        return None
    except KeyError as e:
        _warn_damaged(f, _why(e), "answers")
        return None
    return keys, vals


def save_answers(space, engine: str, kind: str, keys: np.ndarray, vals: np.ndarray) -> None:
    try:
        _write_npz(
            _answers_file(space, engine, kind), {"identity": np.array(space.identity), "keys": keys, "phi": vals}
        )
    except OSError as e:
        _warn_unwritable(e, "phi answers are recomputed every time")


def load_table(identity: str) -> dict | None:
    """The stored arrays of the bounds table ``identity`` (its ``_file`` added), or None
    (absent; damaged: warned once; or another table behind the same digest)."""
    return _load(_table_file(identity), identity, {"size": int}, "bounds-table")


def save_table(identity: str, size: int, arrays: dict) -> Path | None:
    """Store a bounds table's arrays (identity and ``size``, the number of distinct values
    as a decimal string, added); the file, or None, with one warning, when the cache
    cannot be written."""
    f = _table_file(identity)
    arrays = {"identity": np.array(identity), "size": np.array(str(int(size))), **arrays}
    return f if _save(f, arrays, "bounds tables are rebuilt every time") else None


def cache_info() -> dict:
    """The cache directory and its rank maps and bounds tables: one entry per file with
    ``file`` (bounds tables: ``bounds/NAME``), ``kind`` ("rank map" or "bounds table"),
    ``identity``, ``size`` (its number of distinct values), ``bytes`` and ``damaged``
    (None, or why the file cannot be used: it will be rebuilt when next needed)."""
    root = cache_dir()
    entries = []
    for sub, kind in (("rankmaps", "rank map"), ("bounds", "bounds table")):
        d = root / sub
        if d.is_dir():
            _sweep(d)
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
            name = f.name if sub == "rankmaps" else f"{sub}/{f.name}"
            entries.append({"file": name, "kind": kind, "bytes": nbytes, **entry})
    return {"dir": str(root), "entries": entries, "bytes": sum(e["bytes"] for e in entries)}


def cache_clear() -> int:
    """Remove every cached rank map and bounds table (and the rank maps' answers, and
    stale temp files); returns the number of rank maps and bounds tables removed.
    IrscaleError when a file cannot be removed."""
    n = 0
    for sub in ("rankmaps", "bounds"):
        d = cache_dir() / sub
        if not d.is_dir():
            continue
        _sweep(d)
        for f in _map_files(d):
            try:
                f.unlink()
            except FileNotFoundError:
                continue
            except OSError as e:
                raise IrscaleError(f"cannot remove {f} ({_why(e)}); remove it by hand or fix the permissions") from e
            n += ".answers" not in f.name
    return n
