"""Benchmark: memory of rank maps and of a whole study, measured against the estimates.

1. ``study``: ``irscale study trec8-like`` on TREC 2019 DL (37 runs, grades 0-3, 4 levels)
   at ``--depths 5,10,20``, in a fresh process with an empty rank-map cache: its peak
   resident memory (the largest of the process and its workers) and wall time;
2. ``estimates``: for a grid of spaces, the engine's estimate (made from the space before
   anything is allocated: ``irscale.scales.engines.dcg_engine_bytes`` for the dcg engine,
   which lists every DCG value; ``irscale.scales.counting.count_engine_bytes`` for the
   count engine's halves, with 64 phi queries answered) against the peak it then
   allocates, measured twice in a fresh process each: numpy's buffers as ``tracemalloc``
   counts them, and the rise of the process's resident memory. The split engine's
   estimate (``split_engine_bytes``) prepares its halves and sizes the rest from them,
   its distinct values estimated from a sample of pairs; the enumerate engine's
   (``enumerate_engine_bytes``) counts one key per run, an upper bound where runs share
   values (binary AP; the "values" column shows the distinct values listed).

Prints the machine, irscale's version and the load average before and after.

    python bench/memory.py [--data ../shared/data] [--only study|estimates]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import BUSY, installed, load, machine  # noqa: E402  (the shared reporting of bench/)

ROOT = Path(__file__).resolve().parents[1]

GRID = [  # (measure, N, levels, engine)
    ("nDCG", 10, 4),
    ("nDCG", 11, 4),
    ("nDCG", 12, 4),
    ("nDCG", 12, 3),
    ("nDCG", 14, 3),
    ("DCG(base=2)", 12, 3),
    ("nDCG(base=10)", 16, 4),
    ("DCG(base=10)", 20, 4),
]
COUNT_GRID = [("RBP(p=0.8)", 24, 3), ("RBP(p=0.9,rel=1)", 44, 2), ("nDCG", 24, 3), ("nDCG", 20, 4), ("nDCG", 30, 3)]
SPLIT_GRID = [  # keys listed (a table) up to 2^25 pairs, else counted bucket by bucket; AP's runs share values
    ("RBP(p=0.8)", 14, 3),
    ("RBP(p=0.8)", 15, 3),
    ("RBP(p=0.8)", 12, 4),
    ("ERR", 15, 3),
    ("AP", 22, 2),
    ("AP", 25, 2),
    ("AP", 30, 2),
    ("ERR", 16, 3),
    ("ERR", 28, 2),
    ("ERR", 20, 3),  # keys beyond int64, four buckets wider than 2^62 (exact records)
]
ENUMERATE_GRID = [("RBP(p=0.8)", 10, 4), ("RBP(p=0.8)", 11, 4), ("ERR", 10, 4), ("ERR", 8, 5), ("AP", 11, 2)]

ONE = """
import json, resource, sys, tracemalloc
import numpy as np
from irscale.scales import space_for
from irscale.scales import engines
from irscale.scales.counting import count_engine_bytes, counter_for
m, N, L, engine = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
space = space_for(m, N, L - 1)
if engine == "count":  # the compiled merge loaded first (its first use allocates apart from the data)
    small = space_for("RBP(p=0.8)", 8, 1)
    counter_for(small).phi(small.keys(np.zeros((1, 8), dtype=np.int64)))
    keys = space.keys(np.random.default_rng(0).integers(0, L, size=(64, N)))
if engine in ("split", "enumerate"):  # their compiled kernels loaded first
    engines.split_engine(space_for("AP", 14, 1))
    engines.split_engine(space_for("AP", 26, 1), keep_in_memory=0)
    engines.enumerate_engine(space_for("AP", 8, 1))
estimate = {
    "dcg": engines.dcg_engine_bytes,
    "count": count_engine_bytes,
    "split": engines.split_engine_bytes,
    "enumerate": engines.enumerate_engine_bytes,
}[engine](space)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
tracemalloc.start()
if engine == "dcg":
    built = engines.dcg_engine(space)
elif engine == "count":
    built = counter_for(space)
    built.phi(keys)
    built.runs_le(keys)
elif engine == "split":
    built = engines.split_engine(space)
else:
    built = engines.enumerate_engine(space)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss0
values = int(getattr(space, "n_values", 0) or space.n_runs)  # RBP's count engine: every run its own value
if engine in ("split", "enumerate"):
    values = int(built.size)  # distinct values listed
print("RESULT " + json.dumps(dict(values=values, runs=int(space.n_runs), estimate=estimate, traced=peak, rss=rss)))
"""


def mib(n: float) -> str:
    return f"{n / 2**20:8.0f}"


def study(data: Path) -> None:
    dl19 = data / "dl19"
    if not (dl19 / "qrels.dl19-passage.txt").exists():
        print(f"study skipped: no TREC 2019 DL data at {dl19} (pass --data)")
        return
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            "-m",
            "irscale",
            "study",
            "trec8-like",
            str(dl19 / "qrels.dl19-passage.txt"),
            str(dl19 / "runs"),
            "--depths",
            "5,10,20",
            "--no-figures",
            "--out",
            out,
        ]
        before = load()
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "IRSCALE_CACHE_DIR": cache})
        wall = time.perf_counter() - t
        after = load()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    status = "ok" if p.returncode == 0 else f"failed ({p.returncode}): {p.stderr.strip().splitlines()[-1:]}"
    print(
        f"\nstudy trec8-like, DL 2019 (37 runs x 43 topics, 4 levels), --depths 5,10,20, cold cache: "
        f"peak resident memory {peak / 2**30:.2f} GiB, {wall:.1f} s wall, {status} (load {before:.2f} -> {after:.2f})"
    )
    print("  command: " + " ".join(cmd[2:]))


def estimates() -> None:
    print("\nEstimate (from the space, before any allocation) against the engine's peak, fresh process each")
    head = f"{'engine':9s} {'space':28s} {'values':>15s} {'estimate MiB':>12s} {'traced MiB':>10s} {'x':>6s}"
    print(f"{head} {'RSS rise MiB':>12s} {'x':>6s}")
    grid = [(*g, "dcg") for g in GRID] + [(*g, "count") for g in COUNT_GRID]
    grid += [(*g, "split") for g in SPLIT_GRID] + [(*g, "enumerate") for g in ENUMERATE_GRID]
    for m, N, L, engine in grid:
        p = subprocess.run([sys.executable, "-c", ONE, m, str(N), str(L), engine], capture_output=True, text=True)
        line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            print(f"{m}@{N} on {L} levels: failed {p.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(line[7:])
        load()
        print(
            f"{engine:9s} {f'{m}@{N}, {L} levels':28s} {r['values']:15,d} {mib(r['estimate']):>12s} "
            f"{mib(r['traced']):>10s} "
            f"{r['estimate'] / r['traced']:5.2f}x {mib(r['rss']):>12s} "
            + (f"{r['estimate'] / r['rss']:5.2f}x" if r["rss"] >= 2**20 else "    -"),  # no rise: memory reused
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--only", choices=("study", "estimates"))
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print(f"irscale {installed('irscale')}; numpy {installed('numpy')}")
    first = load()
    if args.only in (None, "study"):
        study(args.data)
    if args.only in (None, "estimates"):
        estimates()
    print(f"\nload average: before {first:.2f}, after {load():.2f}")
    if first > BUSY:
        print(f"WARNING: the machine was busy (load {first:.2f} > {BUSY}) when the measurements began")


if __name__ == "__main__":
    main()
