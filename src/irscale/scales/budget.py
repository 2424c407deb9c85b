"""The memory a rank map's engine may take: the one owner of the budget.

The budget is the environment variable ``IRSCALE_MEMORY`` where it is set (``4G``,
``512M``, ``1.5GiB``, or bytes; the CLI's ``--memory`` sets it), else half of the memory
the operating system reports available (Linux: ``MemAvailable``), else none. Every
engine that builds estimates its peak before it allocates anything big
(:func:`irscale.scales.rankmap.memory_estimate`: the dcg engine's values, the count
engine's halves, the split engine's buckets beside its halves, the enumerate engine's
chunks and keys); the engine choice (:func:`irscale.scales.rankmap.pick_engine`) takes
one that fits, the split engine streams its buckets where listing every key would not
fit, and an engine that does not fit is refused in one line naming its estimate and the
budget.

>>> parse_size("1.5G") == 3 * 2**29, parse_size("512M"), parse_size(2**21)
(True, 536870912, 2097152)
>>> size_text(3 * 2**29)
'1.5 GiB'
"""

from __future__ import annotations

import os
import re

from irscale.errors import ArgumentError

ENV = "IRSCALE_MEMORY"
_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT]?)(?:I?B|I)?\s*", re.IGNORECASE)
MIN_BUDGET = 2**20  # a budget below 1 MiB is a typo, not a budget


class MemoryBudgetError(ArgumentError):
    """An engine would need more memory than the budget allows, or the budget itself is
    malformed: never a reason to fall back to approximations, so it is its own error."""


def parse_size(value, name: str = "memory") -> int:
    """Bytes of a size: an int, or text like ``4G``, ``512M``, ``1.5GiB``, ``2GB``, ``4Gi``
    (powers of 1024); at least 1 MiB."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        m = _SIZE.fullmatch(value) if isinstance(value, str) else None
        n = -1 if m is None else int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if n < MIN_BUDGET:
        raise MemoryBudgetError(
            f"{name} must be a size of at least 1M, such as 4G, 512M or 1.5GiB (powers of 1024), not {value!r}"
        )
    return n


BEYOND_ANY_MACHINE = 2**50  # bytes (1 PiB): no machine's memory holds as much


def size_text(n: int) -> str:
    """``n`` bytes for a message, in a short engineering form: ``1.5 GiB``, ``320 MiB``,
    ``812 TiB``; from 1 PiB on, more than any machine has, which the text says in words
    (``3.2 PiB, more than any machine has``, ``about 1.3e+302 bytes, more than any
    machine has``)."""
    n = int(n)
    if n >= 1024 * 2**60:  # beyond EiB: a power of ten, from the integer's digits (never a float overflow)
        e = len(str(n)) - 2
        lead = (n + 5 * 10 ** (e - 1)) // 10**e  # two significant digits, rounded (10..100)
        if lead >= 100:
            lead, e = lead // 10, e + 1
        return f"about {lead // 10}.{lead % 10}e+{e + 1} bytes, more than any machine has"
    for unit, scale in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            x = n / scale
            text = f"{x:.3g} {unit}" if x < 100 else f"{x:.0f} {unit}"
            return text + (", more than any machine has" if n >= BEYOND_ANY_MACHINE else "")
    return f"{n} bytes"


def available() -> int | None:
    """Bytes of memory the system reports available (Linux: ``MemAvailable``, and no more
    than a cgroup v2 limit leaves, as in a container), or None."""
    free = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if free is None:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    room = _cgroup_room()
    return free if room is None else min(free, room)


def _cgroup_room() -> int | None:
    """What the process's cgroup v2 memory limit leaves (limit - usage), or None."""
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return None if limit == "max" else max(int(limit) - used, 0)


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


_READ = object()  # (check's and fits's default: the budget read now)


def fits(need: int, limit=_READ) -> bool:
    """Whether ``need`` bytes fit the budget (``limit``: one read already, see :func:`budget`)."""
    limit = budget() if limit is _READ else limit
    return limit is None or need <= limit


def check(need: int, what: str, advice: str, limit=_READ) -> None:
    """Refuse (:class:`MemoryBudgetError`) ``what`` (an engine on a space) when its
    estimated ``need`` exceeds the budget (``limit``: one read already, so that a choice
    made against it is checked against the same), in one line with the estimate, the
    budget and ``advice``."""
    limit = budget() if limit is _READ else limit
    if limit is not None and need > limit:
        raise MemoryBudgetError(
            f"{what} needs about {size_text(need)} of memory and the budget is {size_text(limit)} ({where()}); "
            f"{advice}, or give it more (--memory)"
        )


__all__ = ["ENV", "MemoryBudgetError", "available", "budget", "check", "fits", "parse_size", "size_text", "where"]
