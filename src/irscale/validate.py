"""Argument checks shared by the public functions (``evaluate``, ``transform``,
``compare``, ``meaningful``, ``scales.build``, ``stats.run_test``...).

Each raises :class:`~irscale.errors.ArgumentError` (an ``IrscaleError`` that is also a
``TypeError``/``ValueError``) saying what was expected, so a wrong call never ends in a
raw ``AttributeError`` deep inside, and never silently means something else
(``depth=2.5`` keeping 3 documents, ``True`` meaning 1).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Literal, overload

from irscale.errors import ArgumentError

if TYPE_CHECKING:
    from pathlib import Path


__all__ = ["decimal_text", "flag", "integer", "level", "levels", "MAX_LEVELS", "writable_dir", "wrong_type"]


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@overload
def integer(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None, none: Literal[False] = False
) -> int: ...
@overload
def integer(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None, none: bool
) -> int | None: ...
def integer(
    name: str, value, *, minimum: int | None = None, maximum: int | None = None, none: bool = False
) -> int | None:
    """``value`` as an int (numpy integers accepted; bools, floats and strings are not)."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(
            f"{name} must be an integer{' or None' if none else ''}, not {type(value).__name__} {_show(value)}"
        )
    value = int(value)
    if minimum is not None and value < minimum:
        raise ArgumentError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ArgumentError(f"{name} must be at most {maximum}, not {value}")
    return value


def level(name: str, value) -> float:
    """A significance level strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < float(value) < 1:
        raise ArgumentError(f"{name} must be a number strictly between 0 and 1 (for example 0.05), not {_show(value)}")
    return float(value)


def flag(name: str, value) -> bool:
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name} must be True or False, not {_show(value)}")
    return bool(value)


def wrong_type(name: str, value, expected: str) -> ArgumentError:
    return ArgumentError(f"{name} must be {expected}, not {type(value).__name__} {_show(value)}")


def decimal_text(value) -> str:
    """An exact number as text: an integer as itself, a fraction whose denominator has
    no prime factor but 2 and 5 as the shortest decimal that is exactly it, any other as
    ``a/b`` (what a real-valued grade or a rel threshold is written as).

    >>> from fractions import Fraction
    >>> decimal_text(Fraction(17, 10)), decimal_text(Fraction(1, 8)), decimal_text(Fraction(1, 3)), decimal_text(2)
    ('1.7', '0.125', '1/3', '2')
    """
    from fractions import Fraction

    f = Fraction(value)
    if f.denominator == 1:
        return str(f.numerator)
    d, twos, fives = f.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{f.numerator}/{f.denominator}"
    places = max(twos, fives)
    digits = str(abs(f.numerator) * 10**places // f.denominator).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0")
    return ("-" if f < 0 else "") + text


MAX_LEVELS = 128  # relevance degrees a run space serves: grades 0..127 (runs are int8 grade matrices)


def levels(value, name: str = "levels") -> int:
    """A number of relevance degrees c + 1 a run space can serve: 2..:data:`MAX_LEVELS`
    (a graded measure on qrels with grades 0..c is mapped on c + 1 levels)."""
    value = integer(name, value, minimum=2)
    if value > MAX_LEVELS:
        raise ArgumentError(
            f"{name} must be at most {MAX_LEVELS} (grades 0..{MAX_LEVELS - 1}: run spaces hold grades "
            f"as 8-bit integers), not {value}; cap the grades with max_grade= (CLI --max-grade), "
            "or use binary relevance (relevance='lenient' / --relevance lenient)"
        )
    return value


def writable_dir(name: str, path, *, create: bool = False) -> Path:
    """``path`` checked as a directory that can be written, before the work that will write
    there: an existing directory, or one that can be made (every existing parent a
    directory, the nearest existing one writable: a probe file is made and removed there).
    Nothing else is created unless ``create`` (then the directory and its parents are).
    An existing file, a path under a file, a broken link, a read-only place (a read-only
    mount, /proc) get one :class:`ArgumentError` naming it. Returns the path."""
    import errno
    import os
    import tempfile
    from pathlib import Path

    p = Path(path)
    if p.is_symlink() and not p.exists():
        raise ArgumentError(
            f"{name} {p}: is a broken symbolic link (to {os.readlink(p)}); name a directory for the "
            "report, for example --out study/"
        )
    if p.exists() and not p.is_dir():
        raise ArgumentError(
            f"{name} {p}: is a file, not a directory; name a directory for the report (it is "
            "created if missing), for example --out study/"
        )
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise ArgumentError(
                f"{name} {p}: {parent} is a file, not a directory; name a directory whose parents are directories"
            )
    try:
        if create:
            p.mkdir(parents=True, exist_ok=True)
        base = p if p.exists() else next(a for a in p.absolute().parents if a.exists())
        fd, probe = tempfile.mkstemp(prefix=".irscale-probe-", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        reasons: dict[int | None, str] = {
            errno.EROFS: "a read-only file system",
            errno.EACCES: "permission denied",
            errno.EPERM: "operation not permitted",
            errno.ENOENT: "it cannot hold new files",
        }
        why = reasons.get(e.errno, e.strerror or str(e))
        raise ArgumentError(
            f"{name} {p}: cannot write there ({why}); name a directory you can write, for example --out ./study"
        ) from None
    return p
