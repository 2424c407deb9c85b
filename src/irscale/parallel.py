"""Parallel execution of independent tasks (rank-map buckets, enumeration chunks):
local threads by default, or Dask — a local scheduler by name, or a cluster by address
(``--scheduler tcp://host:8786``; install ``irscale[parallel]``)."""

from __future__ import annotations

import os
from typing import Callable, Sequence

from irscale.errors import IrscaleError

Progress = Callable[[int, int], None] | None


def parallel_map(fn: Callable, items: Sequence, scheduler=None, progress: Progress = None,
                 workers: int | None = None) -> list:
    """``[fn(x) for x in items]`` in parallel, results in order.

    ``scheduler=None``: local threads (numpy sorts release the GIL); ``"threads"``,
    ``"processes"`` or ``"synchronous"``: that Dask local scheduler; a
    ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``): that cluster.
    """
    items = list(items)
    n = len(items)
    if scheduler is None:
        workers = workers or min(os.cpu_count() or 1, 8)
        if workers <= 1 or n <= 1:
            out = []
            for i, x in enumerate(items):
                out.append(fn(x))
                if progress:
                    progress(i + 1, n)
            return out
        from concurrent.futures import ThreadPoolExecutor

        out = []
        with ThreadPoolExecutor(workers) as ex:
            for i, r in enumerate(ex.map(fn, items)):
                out.append(r)
                if progress:
                    progress(i + 1, n)
        return out
    try:
        import dask
    except ImportError:  # pragma: no cover - depends on the installation
        raise IrscaleError("a Dask scheduler was requested but dask is not installed: "
                           "pip install 'irscale[parallel]'") from None
    if isinstance(scheduler, str) and scheduler in ("threads", "processes", "synchronous"):
        tasks = [dask.delayed(fn)(x) for x in items]
        return list(dask.compute(*tasks, scheduler=scheduler))
    from distributed import Client, as_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = client.map(fn, items, pure=False)
        done = 0
        for _ in as_completed(futures):
            done += 1
            if progress:
                progress(done, n)
        return client.gather(futures)
    finally:
        if client is not scheduler:
            client.close()
