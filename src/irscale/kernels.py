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

numba's first kernel load imports ``numba.np.arraymath``, which asks at import time whether
a BLAS is there by importing ``scipy.linalg.cython_blas``: scipy.linalg and numpy.f2py,
about a third of a second that reading, judging and scoring never use. :func:`_numba`
imports that module itself with the probe answered "not yet" and leaves numba a lazy
answer instead, which asks scipy the first time a kernel's typing needs it (np.dot,
np.correlate in a user's kernel): nothing numba does changes, only when scipy loads.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_LOCK = threading.RLock()  # kernels are first asked for from reader threads at once
_BUILT: dict[str, Any] = {}  # name -> the kernel(s), or None where numba is missing
_OFF: set[str] = set()  # names turned off by disabled(); "*" turns every one off


def have_numba() -> bool:
    """Whether numba can be imported here."""
    return _numba() is not None


def compiled(name: str, build: Callable[[Any], Any]) -> Any:
    """The kernel(s) ``build(numba)`` makes, built once under ``name``; None where numba
    is missing or the kernel is :func:`disabled` (the caller then takes its numpy path)."""
    if "*" in _OFF or name in _OFF:
        return None
    if name not in _BUILT:
        with _LOCK:
            if name not in _BUILT:
                numba = _numba()
                _BUILT[name] = None if numba is None else build(numba)  # None: numpy serves
    return _BUILT[name]


_BLAS = "scipy.linalg.cython_blas"


class _LazyBlas:
    """numba's ``_HAVE_BLAS`` (in the module that probes it), answered when first asked
    (numba reads it with ``if not _HAVE_BLAS`` while typing an inner product), by numba's
    own probe."""

    answer: bool | None = None

    def __init__(self, check):
        self.check = check

    def __bool__(self) -> bool:
        if self.answer is None:
            self.answer = bool(self.check())
        return self.answer


def _numba() -> Any:
    """numba, imported once, with its BLAS probe deferred (see the module's docstring);
    None where numba is missing."""
    with _LOCK:
        try:
            import numba
        except ImportError:
            return None
        if "numba.np.arraymath" not in sys.modules and "scipy.linalg" not in sys.modules:
            hidden = _BLAS not in sys.modules
            if hidden:  # an import of it now fails at once
                sys.modules[_BLAS] = None  # type: ignore[assignment]
            try:
                from numba.np import arraymath
            finally:
                if hidden and sys.modules.get(_BLAS, 0) is None:
                    del sys.modules[_BLAS]
            # the module that probed (numba.np.arraymath, or the module a redirecting shim
            # of that name stands for in some numba releases)
            probed: Any = sys.modules[arraymath._check_blas.__module__]
            if probed._HAVE_BLAS is False:  # it saw the hidden module: ask again when needed
                probed._HAVE_BLAS = _LazyBlas(probed._check_blas)
    return numba


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
