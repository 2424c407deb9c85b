"""Benchmark: what the publishable report costs. `irscale compare` of the T08 study
(129 TREC-8 runs x 50 topics, the eleven paper measures, N = 30, the eight tests) with
--out, at this checkout and at an earlier revision (the report's baseline, before issue
13: default e2e6cef), each in a fresh process, rank maps cached (one untimed warm-up run
each), the two taking turns, median of --repeat runs. Issue 13 asks for no more than 10 %
more time; issue 24 lets the figures drawn by default cost at most 3 s (the row "this
checkout --no-figures" against "this checkout" measures them).

    python bench/report.py [--before e2e6cef] [--repeat 3] [--data ../shared/data] [--extra "--spacing"]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(src: Path, args: list[str], out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONWARNINGS": "ignore"}
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "irscale", "compare", *args, "--out", str(out)], env=env, capture_output=True, text=True
    )
    if p.returncode:
        raise SystemExit(f"compare failed ({src}):\n{p.stderr[-3000:]}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="e2e6cef")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--extra", default="", help="more compare options for this checkout (e.g. --spacing)")
    a = ap.parse_args()
    t8 = a.data / "trec8"
    if not (t8 / "qrels.trec8.txt").exists():
        sys.exit(f"no TREC-8 data at {t8} (pass --data)")
    args = [str(t8 / "qrels.trec8.txt"), str(t8 / "runs"), "-N", "30", "--float32-scores"]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), a.before], check=True)
        try:
            versions = (
                (f"before ({a.before})", old / "src", []),
                ("this checkout --no-figures", ROOT / "src", ["--no-figures"] + shlex.split(a.extra)),
                ("this checkout", ROOT / "src", shlex.split(a.extra)),
            )
            outs = [Path(tmp) / f"out{k}" for k in range(len(versions))]
            for (_, src, extra), out in zip(versions, outs):
                timed(src, args + extra, out)  # warm-up: rank maps built or loaded, kernels compiled
            times: list[list[float]] = [[] for _ in versions]
            for _ in range(a.repeat):  # the versions take turns: a slow spell of the machine hits both
                for k, ((_, src, extra), out) in enumerate(zip(versions, outs)):
                    times[k].append(timed(src, args + extra, out))
            rows = [
                (name, statistics.median(ts), ts, sum(1 for f in out.iterdir() if f.is_file()))
                for (name, _, _), out, ts in zip(versions, outs, times)
            ]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)
    base = rows[0][1]
    print(
        f"\nT08 study, compare -N 30 --out (129 runs x 50 topics, 11 measures, 8 tests), median of {a.repeat}; "
        f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(f"{'version':28s} {'seconds':>8s} {'ratio':>6s} {'files':>6s}  runs")
    for name, med, times, files in rows:
        print(f"{name:28s} {med:8.1f} {med / base:6.3f} {files:6d}  {[round(t, 1) for t in times]}")
    if a.extra:
        print(f"(this checkout with {a.extra})")
    print(
        f"figures by default cost {rows[2][1] - rows[1][1]:+.1f} s (this checkout with and without --no-figures); "
        f"the whole report vs before: {rows[2][1] - rows[0][1]:+.1f} s"
    )


if __name__ == "__main__":
    main()
