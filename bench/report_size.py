"""Benchmark: the report of the paper-table issue (37). `irscale compare` of all 37 TREC DL
2019 passage runs at N = 20 with the paper's eight and the three randomised tests, Holm,
a baseline and --out, at this checkout and at an earlier revision (default e7402a7, before
the issue), each in a fresh process, rank maps cached (one untimed warm-up run each), the
two taking turns, median of --repeat runs; then each report's size (bytes, files) and the
rows of its means and baselines tables, and `irscale table` on the written study (this
checkout only). No peer writes such a report (ranx's Report has no interval scale), so no
peer is timed; the load average is printed before and after.

    python bench/report_size.py [--before e7402a7] [--repeat 3] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "bm25base_p"


def run(src: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONWARNINGS": "ignore"}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "irscale", *args], env=env, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"irscale {' '.join(args[:2])} failed ({src}):\n{p.stderr[-3000:]}")
    return time.perf_counter() - t


def rows(path: Path) -> int:
    with open(path, newline="", encoding="utf-8") as f:
        return sum(1 for _ in csv.reader(f)) - 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="e7402a7")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    a = ap.parse_args()
    dl = a.data / "dl19"
    if not (dl / "qrels.dl19-passage.txt").exists():
        sys.exit(f"no TREC DL 2019 data at {dl} (pass --data)")
    args = [str(dl / "qrels.dl19-passage.txt"), str(dl / "runs"), "-N", "20", "-t", "paper", "-t", "randomised"]
    args += ["--correction", "holm", "-b", BASELINE]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), a.before], check=True)
        try:
            versions = ((f"before ({a.before})", old / "src"), ("this checkout", ROOT / "src"))
            outs = [Path(tmp) / f"out{k}" for k in range(len(versions))]
            for (_, src), out in zip(versions, outs):
                run(src, ["compare", *args, "--out", str(out)])  # warm-up: rank maps, kernels
            times: list[list[float]] = [[] for _ in versions]
            for _ in range(a.repeat):  # taking turns: a slow spell of the machine hits both
                for k, ((_, src), out) in enumerate(zip(versions, outs)):
                    times[k].append(run(src, ["compare", *args, "--out", str(out)]))
            table = [
                run(
                    ROOT / "src",
                    ["table", str(outs[1]), "-m", "AP", "-m", "P", "--top", "8", "-o", str(Path(tmp) / "t.tex")],
                )
                for _ in range(a.repeat)
            ]
            print(
                f"\nDL 2019, compare -N 20 -t paper -t randomised --correction holm -b {BASELINE} --out "
                f"(37 runs x 43 topics, 11 measures, 11 tests), median of {a.repeat}; load average before "
                f"{load[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min)"
            )
            print(f"{'version':24s} {'seconds':>8s} {'MB':>7s} {'files':>6s} {'means':>6s} {'baselines':>10s}  runs")
            for (name, _), out, ts in zip(versions, outs, times):
                files = [f for f in out.iterdir() if f.is_file()]
                size = sum(f.stat().st_size for f in files) / 1e6
                means = rows(next(out.glob("means_original_vs_ranked_N*.csv")))
                pairs = rows(next(out.glob("comparisons_with_baselines_N*.csv")))
                med = statistics.median(ts)
                print(
                    f"{name:24s} {med:8.1f} {size:7.2f} {len(files):6d} {means:6d} {pairs:10d}  "
                    f"{[round(t, 1) for t in ts]}"
                )
            print(f"irscale table STUDY -m AP -m P --top 8 (this checkout): {statistics.median(table):.2f} s median")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)


if __name__ == "__main__":
    main()
