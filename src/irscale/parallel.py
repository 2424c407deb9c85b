"""Parallel execution of independent tasks (run files to read and judge, rank-map buckets,
enumeration chunks): the one place that starts threads, processes or Dask.

* local threads by default (numpy sorts, decompression and hashing release the GIL);
* ``processes=True``: forked worker processes that inherit the task (its arguments, the
  qrels for example, are not pickled; only each item and each result travel), where the
  platform can fork and the calling process has no other thread; else threads;
* Dask: a local scheduler by name, or a cluster by address (``--scheduler
  tcp://host:8786``; install ``irscale[parallel]``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from irscale.errors import IrscaleError

__all__ = ["can_fork", "local_workers", "parallel_imap", "parallel_map", "Progress", "split_rows"]


Progress = Callable[[int, int], None] | None


def parallel_map(
    fn: Callable,
    items: Sequence,
    scheduler=None,
    progress: Progress = None,
    workers: int | None = None,
    processes: bool = False,
    shared: dict | None = None,
) -> list:
    """``[fn(x) for x in items]`` in parallel, results in order.

    ``shared``: large read-only arguments, passed to every call as ``fn(x, **shared)``;
    on a Dask cluster they are scattered to the workers once (not shipped with each task,
    which for the count engine's halves at N = 30 means gigabytes).

    ``scheduler=None``: local execution, see :func:`parallel_imap` for ``workers`` and
    ``processes``; ``progress(done, total)`` is called after each result, in order.
    ``"threads"``, ``"processes"`` or ``"synchronous"``: that Dask local scheduler; a
    ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``): that cluster
    (``workers`` and ``processes`` are then the scheduler's business).
    """
    items = list(items)
    n = len(items)
    if shared and scheduler is None:
        import functools

        fn = functools.partial(fn, **shared)
    if scheduler is None:
        out = []
        for i, r in enumerate(parallel_imap(fn, items, workers=workers, processes=processes)):
            out.append(r)
            if progress:
                progress(i + 1, n)
        return out
    try:
        import dask
    except ImportError:  # pragma: no cover - depends on the installation
        raise IrscaleError(
            "a Dask scheduler was requested but dask is not installed: pip install 'irscale[parallel]'"
        ) from None
    if isinstance(scheduler, str) and scheduler in ("threads", "processes", "synchronous"):
        kw = {k: dask.delayed(v, traverse=False) for k, v in (shared or {}).items()}  # one node each
        tasks = [dask.delayed(fn)(x, **kw) for x in items]
        return list(dask.compute(*tasks, scheduler=scheduler))
    from distributed import Client, as_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        kw = {k: client.scatter(v, broadcast=True) for k, v in (shared or {}).items()}
        futures = client.map(fn, items, pure=False, **kw)
        done = 0
        for _ in as_completed(futures):
            done += 1
            if progress:
                progress(done, n)
        return client.gather(futures)
    finally:
        if client is not scheduler:
            client.close()


def local_workers(tasks: int, workers: int | None = None) -> int:
    """How many workers :func:`parallel_imap` runs ``tasks`` on: ``workers``, by default one
    per CPU, at most 8, and never more than there are tasks (memory estimates count them)."""
    return min(workers or min(os.cpu_count() or 1, 8), tasks)


def parallel_imap(fn: Callable, items: Sequence, *, workers: int | None = None, processes: bool = False) -> Iterator:
    """``fn(x) for x in items`` on this machine, yielded in order as they are ready.

    ``workers`` (default: one per CPU, at most 8; never more than there are items) run
    ``fn``: threads, or with ``processes=True`` forked processes that inherit ``fn`` (only
    each item and its result are pickled) where :func:`can_fork`, else threads. One
    worker or one item: ``fn`` runs in the calling thread. An exception raised by ``fn``
    reaches the caller as it was raised (the remaining items are cancelled). Exhaust or
    close the iterator (``contextlib.closing``) to release the workers.
    """
    items = list(items)
    n = local_workers(len(items), workers)
    if n <= 1:
        yield from map(fn, items)
    elif processes and can_fork():
        import multiprocessing
        import warnings
        from concurrent.futures import ProcessPoolExecutor

        # Python >= 3.12 warns of any fork beside another thread; can_fork allowed only fork-safe ones
        warnings.filterwarnings("ignore", r"This process \(pid=\d+\) is multi-threaded", DeprecationWarning)

        global _SHARED_FN
        before, _SHARED_FN = _SHARED_FN, fn  # the workers fork with it: fn is not pickled
        owner = os.getpid()
        ex = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"))
        try:
            yield from ex.map(_call_shared_fn, items, chunksize=2)
        finally:
            _SHARED_FN = before
            if os.getpid() == owner:  # a forked child closing its copy of this iterator leaves the pool alone
                _shut_down(ex)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(n) as threads:
            yield from threads.map(fn, items)


def _shut_down(ex) -> None:
    """Stop a process pool whose results were all taken (or are no longer wanted): its workers
    are joined and its pending items cancelled. A ``Bad file descriptor`` from closing the
    pool's result pipe in its own teardown (seen once, in CI, under CPython 3.11.7, after a
    pool of two figure workers had delivered every figure; not reproduced in 700 local
    pools) is not the caller's business: what it asked for has arrived or is no longer wanted."""
    import errno

    try:
        ex.shutdown(wait=True, cancel_futures=True)
    except OSError as e:  # pragma: no cover - a timing race in the standard library
        if e.errno != errno.EBADF:
            raise


def split_rows(fn: Callable[[slice], object], n: int, min_rows: int = 256) -> list:
    """``[fn(rows) for rows in parts]`` over slices of ``range(n)``, one per CPU this process
    may use (at most 8,
    each at least ``min_rows``): the first in the calling thread, the others in threads of
    their own, for compiled kernels that release the GIL. Cheaper than a pool for the many
    short calls of the randomised tests (a pool's start costs a few milliseconds)."""
    import threading

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    parts = max(1, min(cpus, 8, n // max(min_rows, 1)))
    cuts = [n * k // parts for k in range(parts + 1)]
    slices = [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
    out: list = [None] * parts
    errors: list = []

    def work(k: int) -> None:
        try:
            out[k] = fn(slices[k])
        except BaseException as e:  # noqa: BLE001 - raised in the caller below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(1, parts)]
    for t in threads:
        t.start()
    work(0)
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def can_fork() -> bool:
    """Whether worker processes may be forked: only where the platform can fork and no
    other thread runs (a forked child would inherit any lock another thread holds), but
    threads marked ``fork_safe`` (the CLI's progress heartbeat: every fork waits until it
    holds no lock, see ``irscale.cli._new_say_lock``)."""
    import multiprocessing
    import threading

    me = threading.current_thread()
    others = [t for t in threading.enumerate() if t is not me and not getattr(t, "fork_safe", False)]
    return "fork" in multiprocessing.get_all_start_methods() and not others


_SHARED_FN: Callable | None = None  # the task of the process pool being started


def _call_shared_fn(item):
    assert _SHARED_FN is not None  # set before the pool's processes are started
    return _SHARED_FN(item)
