"""Benchmark: building rank maps for the paper's measures, and transforming TREC-8.

Each build runs in a fresh Python process (cold: no cache), so its time and peak memory
are its own. Then all 129 TREC-8 runs x 50 topics are transformed at N = 30 for the
eleven paper measures twice in one process, with an empty cache and then a warm one.

    python bench/rankmap.py [--N 5,10,20,30] [--measures AP,RBP(p=0.8),...] [--data ../shared/data/trec8]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER = ["P", "R", "RR", "AP", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(base=2)", "DCG(base=10)",
         "nDCG(base=2)", "nDCG(base=10)"]

BUILD = """
import json, resource, sys, time
import numpy as np
from irscale.scales import build, all_runs
m, N = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
rm = build(m, N, cache=False)
built = time.perf_counter() - t
# and phi of 1000 random runs (the counting engine works per query)
g = np.random.default_rng(0).integers(0, 2, (1000, N))
t = time.perf_counter()
rm.phi_runs(g)
query = time.perf_counter() - t
print("RESULT " + json.dumps({"size": rm.size, "engine": rm.engine, "seconds": built, "query_1000": query,
      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

TRANSFORM = """
import json, os, resource, sys, time, warnings
from pathlib import Path
import irscale
from irscale.experiment import PAPER_MEASURES
warnings.simplefilter("ignore")
data = Path(sys.argv[1])
files = sorted((data / "runs").glob("*.gz"))
table = irscale.evaluate(data / "qrels.trec8.txt", files, ["AP"])
out = {}
for label in ("cold", "warm"):
    t = time.perf_counter()
    irscale.transform(table, PAPER_MEASURES, depth=30)
    out[label] = time.perf_counter() - t
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT " + json.dumps(out))
"""


def run(code: str, *args, env=None) -> dict:
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                       text=True, env=env)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--N", default="5,10,20,30")
    ap.add_argument("--measures", default=",".join(PAPER))
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "trec8"))
    ap.add_argument("--no-transform", action="store_true")
    args = ap.parse_args()
    measures = [m for m in args.measures.split(",") if m]
    # commas inside parentheses belong to the measure
    fixed, buf = [], ""
    for part in measures:
        buf = f"{buf},{part}" if buf else part
        if buf.count("(") == buf.count(")"):
            fixed.append(buf)
            buf = ""
    Ns = [int(n) for n in args.N.split(",")]
    print(f"{'measure':15s} {'N':>3s} {'engine':>9s} {'size':>14s} {'build s':>8s} {'phi 1000 s':>10s} {'peak MB':>8s}")
    for m in fixed:
        for N in Ns:
            r = run(BUILD, m, N)
            if "error" in r:
                print(f"{m:15s} {N:3d}  error: {r['error']}")
                continue
            print(f"{m:15s} {N:3d} {r['engine']:>9s} {r['size']:14,d} {r['seconds']:8.2f} {r['query_1000']:10.3f} "
                  f"{r['peak_mb']:8.0f}", flush=True)
    data = Path(args.data)
    if args.no_transform:
        return
    if not (data / "runs").exists():
        print(f"\nTREC-8 transform skipped: {data} is absent")
        return
    import os

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, IRSCALE_CACHE_DIR=cache)
        r = run(TRANSFORM, data, env=env)
    if "error" in r:
        print(f"\nTREC-8 transform: error: {r['error']}")
        return
    print(f"\nTREC-8 transform, 129 runs x 50 topics, N = 30, eleven paper measures: "
          f"cold cache {r['cold']:.1f} s, warm cache {r['warm']:.2f} s, peak {r['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
