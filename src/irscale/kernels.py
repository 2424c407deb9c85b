"""Compiled kernels, one way: each module that speeds a loop up with numba asks
:func:`compiled` for it, and every such loop has a numpy path beside it that serves
where numba is missing (or where a test turns the kernels off with :func:`disabled`).

    def _build_offsets(numba):
        @numba.njit(nogil=True, cache=True)
        def offsets(...): ...
        return offsets

    kernel = compiled("engines.offsets", _build_offsets)  # None: use the numpy path

A kernel is built once per process, on first use (numba's import and the compilation
cost seconds that a command which does not need the kernel should not pay), and cached
on disk by numba (``cache=True``). This module imports nothing of irscale's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

_BUILT: dict[str, Any] = {}  # name -> the kernel(s), or None where numba is missing
_OFF: set[str] = set()  # names turned off by disabled(); "*" turns every one off


def have_numba() -> bool:
    """Whether numba can be imported here."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def compiled(name: str, build: Callable[[Any], Any]) -> Any:
    """The kernel(s) ``build(numba)`` makes, built once under ``name``; None where numba
    is missing or the kernel is :func:`disabled` (the caller then takes its numpy path)."""
    if "*" in _OFF or name in _OFF:
        return None
    if name not in _BUILT:
        try:
            import numba
        except ImportError:  # numpy serves
            _BUILT[name] = None
        else:
            _BUILT[name] = build(numba)
    return _BUILT[name]


@contextlib.contextmanager
def disabled(*names: str) -> Iterator[None]:
    """``with disabled("io.trec"):`` (no name: every kernel) the kernels named give None,
    so their numpy paths run: how tests compare the two."""
    add = set(names or ("*",)) - _OFF
    _OFF.update(add)
    try:
        yield
    finally:
        _OFF.difference_update(add)


__all__ = ["compiled", "disabled", "have_numba"]
