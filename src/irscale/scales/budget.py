"""The memory a rank map's engine may take: the one owner of the budget.

The budget is the environment variable ``IRSCALE_MEMORY`` where it is set (``4G``,
``512M``, ``1.5GiB``, or bytes; the CLI's ``--memory`` sets it), else half of the memory
the operating system reports available (Linux: ``MemAvailable``), else none. Engines
estimate their peak from the space alone, before they allocate anything
(:func:`irscale.scales.engines.dcg_engine_bytes`, the count engine's halves); the engine
choice (:func:`irscale.scales.rankmap.pick_engine`) takes one that fits, and an engine
that does not fit is refused in one line naming its estimate and the budget.

>>> parse_size("1.5G") == 3 * 2**29, parse_size("512M"), parse_size(1000)
(True, 536870912, 1000)
>>> size_text(3 * 2**29)
'1.5 GiB'
"""

from __future__ import annotations

import os
import re

from irscale.errors import ArgumentError

ENV = "IRSCALE_MEMORY"
_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)


def parse_size(value, name: str = "memory") -> int:
    """Bytes of a size: an int, or text like ``4G``, ``512M``, ``1.5GiB``, ``2GB`` (powers of 1024)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = _SIZE.fullmatch(str(value)) if isinstance(value, str) else None
    if m is None or float(m.group(1)) <= 0:
        raise ArgumentError(f"{name} must be a size such as 4G, 512M or 1.5GiB (powers of 1024), not {value!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def size_text(n: int) -> str:
    """``n`` bytes for a message: ``1.5 GiB``, ``320 MiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def available() -> int | None:
    """Bytes of memory the system reports available (Linux: ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def budget() -> int | None:
    """The bytes an engine may take (see the module docstring); None: no limit known."""
    text = os.environ.get(ENV)
    if text:
        return parse_size(text, ENV)
    free = available()
    return None if free is None else free // 2


def where() -> str:
    """Where the budget comes from, for a message."""
    if os.environ.get(ENV):
        return f"--memory / {ENV}: {os.environ[ENV]}"
    return f"half the available memory; --memory (API: the environment variable {ENV}) sets it"


def fits(need: int) -> bool:
    """Whether ``need`` bytes fit the budget."""
    limit = budget()
    return limit is None or need <= limit


def check(need: int, what: str, advice: str) -> None:
    """Refuse ``what`` (an engine on a space) when its estimated ``need`` exceeds the
    budget, in one line with the estimate, the budget and ``advice``."""
    limit = budget()
    if limit is not None and need > limit:
        raise ArgumentError(
            f"{what} needs about {size_text(need)} of memory and the budget is {size_text(limit)} ({where()}); {advice}"
        )


__all__ = ["ENV", "available", "budget", "check", "fits", "parse_size", "size_text", "where"]
