"""Benchmark: building rank maps, and transforming TREC-8 and TREC DL 2019.

Each build runs in a fresh Python process (cold: no cache), so its time and peak memory
are its own; a build that takes longer than ``--timeout`` seconds is reported as such.
``--levels 3,4,5`` adds graded rows (runs over grades 0..levels-1). Then all 129 TREC-8
runs x 50 topics are transformed at N = 30 for the eleven paper measures, and the 37 TREC
DL 2019 runs x 43 topics for nDCG, RBP(p=0.8) and ERR at N = 10 on their 4 grades
(relevance graded), each twice in one process, with an empty cache and then a warm one.

    python bench/rankmap.py [--N 5,10,20,30] [--levels 2] [--measures AP,RBP(p=0.8),...]
                            [--timeout 600] [--data ../shared/data]
    python bench/rankmap.py --measures "nDCG,DCG(base=2),RBP(p=0.8),ERR" --levels 3,4,5 --N 10,20
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
m, N, levels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = time.perf_counter()
rm = build(m, N, levels, cache=False)
built = time.perf_counter() - t
# and phi of 1000 random runs (the counting engine works per query)
g = np.random.default_rng(0).integers(0, 2 if rm.space.binary_measure else levels, (1000, N))
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
data, which = Path(sys.argv[1]), sys.argv[2]
if which == "trec8":
    files, qrels = sorted((data / "runs").glob("*.gz")), data / "qrels.trec8.txt"
    measures, N, relevance = PAPER_MEASURES, 30, None
else:
    files, qrels = sorted((data / "runs").iterdir()), data / "qrels.dl19-passage.txt"
    measures, N, relevance = ["nDCG", "RBP(p=0.8)", "ERR"], 10, "graded"
table = irscale.evaluate(qrels, files, ["AP"])
out = {"levels": table.judged.topics.max_grade + 1, "runs": len(table.systems), "topics": len(table.topics)}
for label in ("cold", "warm"):
    t = time.perf_counter()
    irscale.transform(table, measures, depth=N, relevance=relevance)
    out[label] = time.perf_counter() - t
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT " + json.dumps(out))
"""


def run(code: str, *args, env=None, timeout=None) -> dict:
    try:
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                           text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s (stopped)"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--N", default="5,10,20,30")
    ap.add_argument("--levels", default="2", help="relevance levels, comma-separated (2: binary)")
    ap.add_argument("--measures", default=",".join(PAPER))
    ap.add_argument("--timeout", type=float, default=600, help="seconds per build")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
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
    levels = [int(x) for x in args.levels.split(",")]
    print(f"{'measure':15s} {'lv':>2s} {'N':>3s} {'engine':>9s} {'size':>18s} {'build s':>8s} {'phi 1000 s':>10s} "
          f"{'peak MB':>8s}")
    for m in fixed:
        for L in levels:
            for N in Ns:
                r = run(BUILD, m, N, L, timeout=args.timeout)
                if "error" in r:
                    print(f"{m:15s} {L:2d} {N:3d}  error: {r['error']}", flush=True)
                    continue
                print(f"{m:15s} {L:2d} {N:3d} {r['engine']:>9s} {r['size']:18,d} {r['seconds']:8.2f} "
                      f"{r['query_1000']:10.3f} {r['peak_mb']:8.0f}", flush=True)
    if args.no_transform:
        return
    import os

    root = Path(args.data)
    for which, what in (("trec8", "eleven paper measures, N = 30"),
                        ("dl19", "nDCG, RBP(p=0.8), ERR at N = 10, relevance graded")):
        data = root / which
        if not (data / "runs").exists():
            print(f"\n{which} transform skipped: {data} is absent")
            continue
        with tempfile.TemporaryDirectory() as cache:
            r = run(TRANSFORM, data, which, env=dict(os.environ, IRSCALE_CACHE_DIR=cache))
        if "error" in r:
            print(f"\n{which} transform: error: {r['error']}")
            continue
        print(f"\n{which} transform, {r['runs']} runs x {r['topics']} topics, {r['levels']} levels, {what}: "
              f"cold cache {r['cold']:.1f} s, warm cache {r['warm']:.2f} s, peak {r['peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
