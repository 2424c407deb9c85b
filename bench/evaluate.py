"""Benchmark: the TREC-8 evaluation workload, irscale vs its peers, in one run.

For each of the 129 TREC-8 runs x 50 topics (up to 1000 documents), compute AP, P@10,
nDCG@10, RR, Rprec and bpref per topic, end to end (reading the gzip files included).
Each tool runs in a fresh Python process (so peak memory is its own, and ranx's numba
JIT is cold on its first call: NUMBA_CACHE_DIR points to an empty directory); the
median over ``--repeat`` runs is reported, with ratios to irscale.

    python bench/evaluate.py [--data ../shared/data/trec8] [--repeat 3] [--tools irscale,pytrec_eval,...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMON = """
import gzip, json, resource, sys, time
from pathlib import Path
data = Path(sys.argv[1])
files = sorted((data / "runs").glob("*.gz"))
qrels_path = data / "qrels.trec8.txt"
def read_qrels_dict():
    q = {}
    for line in open(qrels_path):
        t, _, d, g = line.split()
        q.setdefault(t, {})[d] = int(g)
    return q
def read_run_dict(f):
    r = {}
    with gzip.open(f, "rt") as fh:
        for line in fh:
            t, _, d, _, s, _ = line.split()
            r.setdefault(t, {})[d] = float(s)
    return r
def report(**kw):
    kw["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # worker processes (irscale reads runs in forked workers): the largest one
    kw["child_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print("RESULT " + json.dumps(kw))
"""

TOOLS = {
    "irscale": """
import irscale
t = time.perf_counter()
table = irscale.evaluate(qrels_path, files, ["AP", "P@10", "nDCG@10", "RR", "Rprec", "bpref"])
df = table.to_frame()
report(seconds=time.perf_counter() - t, cells=len(df))
""",
    "pytrec_eval": """
import pytrec_eval
t = time.perf_counter()
ev = pytrec_eval.RelevanceEvaluator(read_qrels_dict(), {"map", "P_10", "ndcg_cut_10", "recip_rank", "Rprec", "bpref"})
cells = 0
for f in files:
    res = ev.evaluate(read_run_dict(f))
    cells += sum(len(v) for v in res.values())
report(seconds=time.perf_counter() - t, cells=cells)
""",
    "ir_measures": """
import ir_measures
from ir_measures import AP, P, nDCG, RR, Rprec, Bpref
t = time.perf_counter()
qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
ev = ir_measures.evaluator([AP, P@10, nDCG@10, RR, Rprec, Bpref], qrels)
cells = 0
for f in files:
    cells += sum(1 for _ in ev.iter_calc(ir_measures.read_trec_run(str(f))))
report(seconds=time.perf_counter() - t, cells=cells)
""",
    "ranx": """
import tempfile
from ranx import Qrels, Run, evaluate
# ranx cannot read gzip: give it decompressed copies, made before the clock starts
tmp = Path(tempfile.mkdtemp())
plain = []
for f in files:
    plain.append(tmp / f.name[:-3])
    plain[-1].write_bytes(gzip.open(f).read())
def once():
    t = time.perf_counter()
    q = Qrels.from_file(str(qrels_path), kind="trec")
    cells = 0
    for f in plain:
        run = Run.from_file(str(f), kind="trec")
        out = evaluate(q, run, ["map", "precision@10", "ndcg@10", "mrr", "r-precision", "bpref"],
                       return_mean=False, make_comparable=True)
        cells += sum(len(v) for v in out.values())
    return time.perf_counter() - t, cells
cold, cells = once()
warm, _ = once()
report(seconds=warm, cold_seconds=cold, cells=cells)
""",
}


def run_tool(name: str, data: Path) -> dict:
    code = textwrap.dedent(COMMON) + textwrap.dedent(TOOLS[name])
    with tempfile.TemporaryDirectory() as numba_cache:
        env = {**__import__("os").environ, "NUMBA_CACHE_DIR": numba_cache, "PYTHONWARNINGS": "ignore"}
        p = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, text=True, env=env,
                           cwd=ROOT)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{name} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "trec8")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    args = ap.parse_args()
    if not (args.data / "qrels.trec8.txt").exists():
        sys.exit(f"no TREC-8 data at {args.data} (pass --data)")
    results = {}
    for name in args.tools.split(","):
        try:
            runs = [run_tool(name, args.data) for _ in range(args.repeat)]
        except Exception as e:  # a peer not installed: say so, keep going
            print(f"{name:12s} skipped: {str(e).strip().splitlines()[-1]}")
            continue
        results[name] = {
            "seconds": statistics.median(r["seconds"] for r in runs),
            "cold_seconds": statistics.median(r["cold_seconds"] for r in runs) if "cold_seconds" in runs[0] else None,
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
            "child_peak_mb": max(r.get("child_peak_mb", 0) for r in runs),
            "cells": runs[0]["cells"],
            "all": [round(r["seconds"], 2) for r in runs],
        }
    base = results.get("irscale", {}).get("seconds")
    print(f"\nTREC-8: 129 runs x 50 topics, 6 measures, end to end; median of {args.repeat} fresh processes")
    print(f"{'tool':12s} {'median s':>9s} {'x irscale':>10s} {'peak MB':>8s} {'worker MB':>9s}  cells   runs (s)")
    for name, r in results.items():
        ratio = f"{r['seconds'] / base:9.1f}x" if base else ""
        print(f"{name:12s} {r['seconds']:9.2f} {ratio:>10s} {r['peak_rss_mb']:8.0f} {r['child_peak_mb']:9.0f}  {r['cells']:6d}  {r['all']}")
        if r["cold_seconds"] is not None:
            ratio = f"{r['cold_seconds'] / base:9.1f}x" if base else ""
            print(f"{name + ' cold':12s} {r['cold_seconds']:9.2f} {ratio:>10s}  (first call: numba JIT compiles)")


if __name__ == "__main__":
    main()
