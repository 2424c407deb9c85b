"""Benchmark: the full T08_30 study (paper Section 7) with warm rank-map caches.

All 129 TREC-8 runs x 50 topics, the eleven paper measures at N = 30, all eight tests,
original and ranked, tie strategies unq and mid. The first pass fills a fresh cache
(reported as cold); the timed passes run in fresh processes with that warm cache.

    python bench/compare.py [--data ../shared/data/trec8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STUDY = """
import json, resource, sys, time, warnings
from pathlib import Path
import irscale
warnings.simplefilter("ignore")
data = Path(sys.argv[1])
t = time.perf_counter()
table = irscale.evaluate(data / "qrels.trec8.txt", sorted((data / "runs").glob("*.gz")), ["AP"])
read = time.perf_counter() - t
study = irscale.compare(table, depth=30)
total = time.perf_counter() - t
print("RESULT " + json.dumps({"seconds": total, "reading": read, "pairs": int(len(table.systems) * (len(table.systems) - 1) / 2),
      "rows": len(study.changes), "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(env) -> dict:
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(STUDY), str(ARGS.data)], capture_output=True,
                       text=True, env=env)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(p.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "trec8"))
    ap.add_argument("--repeat", type=int, default=3)
    ARGS = ap.parse_args()
    if not (Path(ARGS.data) / "runs").exists():
        raise SystemExit(f"{ARGS.data} is absent")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, IRSCALE_CACHE_DIR=cache)
        cold = run(env)
        warm = [run(env) for _ in range(ARGS.repeat)]
    times = [w["seconds"] for w in warm]
    print(f"T08_30 study: {cold['pairs']} system pairs, {cold['rows']} (measure, test) rows, unq + mid")
    print(f"  cold cache  {cold['seconds']:7.1f} s  (peak {cold['peak_mb']:.0f} MB)")
    print(f"  warm cache  {statistics.median(times):7.1f} s  median of {len(times)} {[round(x, 1) for x in times]}"
          f"  (reading the runs {statistics.median(w['reading'] for w in warm):.1f} s; peak {max(w['peak_mb'] for w in warm):.0f} MB)")
