"""Benchmark: building rank maps, and transforming TREC-8 and TREC DL 2019.

Each build runs in a fresh Python process (cold: no cache), so its time and peak memory
are its own; a build that takes longer than ``--timeout`` seconds is reported as such.
``--levels 3,4,5`` adds graded rows (runs over grades 0..levels-1). Then all 129 TREC-8
runs x 50 topics are transformed at N = 30 for the eleven paper measures, and the 37 TREC
DL 2019 runs x 43 topics for nDCG, RBP(p=0.8) and ERR at N = 10 on their 4 grades
(relevance graded), each twice in one process, with an empty cache and then a warm one;
DL 2019 also measure by measure at N = 10 and 20 (4 levels), N = 20 and 30 (3 levels: grades
above 2 count as 2; ERR at N = 30 binary), with ``--dask`` once more on a Dask LocalCluster (the results'
digest must equal the threads' one).

    python bench/rankmap.py [--N 5,10,20,30] [--levels 2] [--measures AP,RBP(p=0.8),...]
                            [--timeout 600] [--data ../shared/data] [--dask]
    python bench/rankmap.py --measures "nDCG,DCG(base=2),RBP(p=0.8),ERR" --levels 3,4,5 --N 10,20,30
    python bench/rankmap.py --N "" --only-transform "nDCG@30" --dask
    python bench/rankmap.py --kernels       # the count engine's merge: numba against numpy
    python bench/rankmap.py --second-collection   # DL 2019 in two collections: the second's cost
    python bench/rankmap.py --covid-like          # 143 runs x 30 topics, grades 0-2, nDCG and RBP(p=0.8) @30

``--covid-like`` generates (seeded) a collection shaped like a TREC-COVID round: 143 runs
x 30 topics of 1,000 documents, qrels of grades 0-2 (about 400 judgements a topic: 55 %
0, 20 % 1, 25 % 2) that judge about a third of a run's top 30 (the rest is unjudged,
grade 0 on the interval scale), and transforms nDCG and RBP(p=0.8) together at N = 30 on
its 3 levels, cold (an empty cache) then warm.
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
PAPER = [
    "P",
    "R",
    "RR",
    "AP",
    "RBP(p=0.3)",
    "RBP(p=0.5)",
    "RBP(p=0.8)",
    "DCG(base=2)",
    "DCG(base=10)",
    "nDCG(base=2)",
    "nDCG(base=10)",
]

BUILD = """
import json, resource, sys, time
import numpy as np
from irscale.scales import build, all_runs
m, N, levels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = time.perf_counter()
rm = build(m, N, levels, cache=False)
built = time.perf_counter() - t
# and phi of 1,591 random runs, as many as the cells of a DL 2019 transform (37 runs x 43
# topics; the counting engine works per query), "unq" then "mid" (run counts)
nq = 1591
g = np.random.default_rng(0).integers(0, 2 if rm.space.binary_measure else levels, (nq, N))
keys = rm.space.keys(g)
t = time.perf_counter()
rm.rank(keys, ("unq",))
query = (time.perf_counter() - t) * 1000 / nq
t = time.perf_counter()
rm.rank(keys, ("mid",))
mid = (time.perf_counter() - t) * 1000 / nq
print("RESULT " + json.dumps({"size": rm.size, "engine": rm.engine, "seconds": built, "query_1000": query,
      "mid_1000": mid, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

TRANSFORM = """
import hashlib, json, os, resource, sys, time, warnings
from pathlib import Path
import numpy as np
import irscale
from irscale.experiment import PAPER_MEASURES
warnings.simplefilter("ignore")
data, which, N, measures, max_grade, scheduler = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), \
    json.loads(sys.argv[4]), json.loads(sys.argv[5]), sys.argv[6]
half = sys.argv[7] if len(sys.argv) > 7 else "all"  # "first" / "second": half of the topics, as a collection
ties = ("unq", "mid")
if which == "trec8":
    files, qrels = sorted((data / "runs").glob("*.gz")), data / "qrels.trec8.txt"
    measures, relevance, ties = PAPER_MEASURES, None, "unq"
elif which == "covid":  # generated (covid_like)
    files, qrels = sorted((data / "runs").iterdir()), data / "qrels.txt"
    relevance = "graded"
else:
    files, qrels = sorted((data / "runs").iterdir()), data / "qrels.dl19-passage.txt"
    relevance = "graded"
if half != "all":  # the qrels of every other topic: runs' other topics are not scored
    lines = Path(qrels).read_text().splitlines()
    topics = sorted({ln.split()[0] for ln in lines if ln.strip()})
    keep = set(topics[half == "second" :: 2])
    qrels = Path(os.environ["IRSCALE_CACHE_DIR"]).parent / f"qrels-{half}.txt"
    qrels.write_text("".join(ln + chr(10) for ln in lines if ln.strip() and ln.split()[0] in keep))
table = irscale.evaluate(qrels, files, ["AP"], max_grade=max_grade)
out = {"levels": table.judged.topics.max_grade + 1, "runs": len(table.systems), "topics": len(table.topics)}
client = None
if scheduler == "local-cluster":  # a Dask LocalCluster on this machine: same results as threads
    from distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True))
for label in ("cold", "warm"):
    t = time.perf_counter()
    res = irscale.transform(table, measures, depth=N, relevance=relevance, ties=ties, scheduler=client)
    out[label] = time.perf_counter() - t
out["digest"] = hashlib.sha256(np.ascontiguousarray(res.values).tobytes()).hexdigest()[:12]
out["maps"] = {k: [v["engine"], v["size"]] for k, v in res.provenance["transform"]["maps"].items()}
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT " + json.dumps(out))
"""


KERNELS = """
import contextlib, json, sys, time
import numpy as np
from irscale import kernels
from irscale.scales import build, merge
m, N, levels, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rm = build(m, N, levels, engine="count", cache=False)
vs = rm.summary
keys = rm.space.keys(np.random.default_rng(0).integers(0, levels, (nq, N)).astype(np.int8))
vs.count_many(keys[:2])  # numba compiles (or loads its cache) once
out = {"numba": merge.have_numba(), "halves": [len(vs.P), len(vs.S)]}
for label, off in (("numpy", True), ("numba", False)):
    vs._runs_le_of.clear()
    t = time.perf_counter()
    with kernels.disabled("scales.merge") if off else contextlib.nullcontext():
        out[label + "_answers"] = vs.count_many(keys).tolist()
    out[label] = (time.perf_counter() - t) * 1000 / nq
out["equal"] = out.pop("numpy_answers") == out.pop("numba_answers")
print("RESULT " + json.dumps(out))
"""


def run(code: str, *args, env=None, timeout=None) -> dict:
    try:
        p = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s (stopped)"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}


def covid_like(out: Path, runs: int = 143, topics: int = 30, depth: int = 1_000, seed: int = 0) -> Path:
    """A TREC-COVID-shaped collection in ``out`` (qrels.txt, runs/): see the module doc."""
    import numpy as np

    rng = np.random.default_rng(seed)
    pool = 20_000  # documents per topic
    judged = [rng.permutation(pool)[:400] for _ in range(topics)]
    grades = [rng.choice(3, size=400, p=[0.55, 0.20, 0.25]) for _ in range(topics)]
    with open(out / "qrels.txt", "w") as f:
        for t in range(topics):
            f.writelines(f"{t + 1} 0 cord{t}-{d} {g}\n" for d, g in zip(judged[t], grades[t]))
    (out / "runs").mkdir()
    for r in range(runs):
        lines = []
        for t in range(topics):
            # a third of the top 30 from the judged documents, the rest mostly unjudged
            top = np.where(rng.random(30) < 1 / 3, rng.choice(judged[t], 30), rng.integers(0, pool, 30))
            docs = list(dict.fromkeys(np.concatenate([top, rng.integers(0, pool, depth * 2)]).tolist()))[:depth]
            lines.extend(f"{t + 1} Q0 cord{t}-{d} {k + 1} {depth - k} run{r:03d}\n" for k, d in enumerate(docs))
        (out / "runs" / f"run{r:03d}.txt").write_text("".join(lines))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--N", default="5,10,20,30")
    ap.add_argument("--levels", default="2", help="relevance levels, comma-separated (2: binary)")
    ap.add_argument("--measures", default=",".join(PAPER))
    ap.add_argument("--timeout", type=float, default=600, help="seconds per build")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--no-transform", action="store_true")
    ap.add_argument(
        "--only-transform",
        default="",
        help="run only the transforms whose label holds one of these "
        "comma-separated words (e.g. 'nDCG@30,LocalCluster'); with --N '' no builds",
    )
    ap.add_argument("--dask", action="store_true", help="also the nDCG@30 transform on a Dask LocalCluster")
    ap.add_argument(
        "--second-collection",
        action="store_true",
        help="only this: DL 2019's topics split in two collections (every other topic), nDCG and "
        "RBP(p=0.8) at N = 30 on 3 levels transformed on the first with an empty cache, then on the "
        "second with the cache the first left (what a second collection at the same measure, N and "
        "levels costs), and the second alone with an empty cache",
    )
    ap.add_argument(
        "--kernels",
        action="store_true",
        help="only the count engine's merge, numba against numpy "
        "(DCG, 3 levels, N = 20 and 26: seconds per 1,000 phi queries, answers compared)",
    )
    ap.add_argument(
        "--covid-like",
        action="store_true",
        help="only this: a generated TREC-COVID-like collection, nDCG and RBP(p=0.8) @30 on 3 levels (module doc)",
    )
    args = ap.parse_args()
    if args.covid_like:
        import os

        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
            data = covid_like(Path(tmp))
            r = run(
                TRANSFORM,
                data,
                "covid",
                30,
                json.dumps(["nDCG", "RBP(p=0.8)"]),
                json.dumps(None),
                "threads",
                env=dict(os.environ, IRSCALE_CACHE_DIR=cache),
                timeout=args.timeout,
            )
        if "error" in r:
            print(f"COVID-like: error: {r['error']}")
            return
        maps = ", ".join(f"{k} {e} {s:,}" for k, (e, s) in r["maps"].items())
        print(
            f"COVID-like (generated): {r['runs']} runs x {r['topics']} topics, {r['levels']} levels, nDCG and "
            f"RBP(p=0.8) @30 together: cold {r['cold']:.1f} s, warm {r['warm']:.2f} s, peak {r['peak_mb']:.0f} MB, "
            f"results {r['digest']} ({maps})",
            flush=True,
        )
        return
    if args.kernels:
        for N, nq in ((20, 200), (26, 40)):
            r = run(KERNELS, "DCG", N, 3, nq, timeout=args.timeout)
            if "error" in r:
                print(f"kernels DCG 3 levels N={N}: error: {r['error']}")
                continue
            print(
                f"count-engine merge, DCG 3 levels N={N} (halves {r['halves'][0]:,} + {r['halves'][1]:,}), {nq} "
                f"queries: numpy {r['numpy']:.1f} s, numba {r['numba']:.1f} s per 1,000 phi "
                f"({r['numpy'] / r['numba']:.1f}x), answers equal: {r['equal']}",
                flush=True,
            )
        return
    if args.second_collection:
        second_collection(Path(args.data) / "dl19", args.timeout)
        return
    measures = [m for m in args.measures.split(",") if m]
    # commas inside parentheses belong to the measure
    fixed, buf = [], ""
    for part in measures:
        buf = f"{buf},{part}" if buf else part
        if buf.count("(") == buf.count(")"):
            fixed.append(buf)
            buf = ""
    Ns = [int(n) for n in args.N.split(",") if n]
    levels = [int(x) for x in args.levels.split(",")]
    print(
        f"{'measure':15s} {'lv':>2s} {'N':>3s} {'engine':>9s} {'size':>22s} {'build s':>8s} {'phi 1000 s':>10s} "
        f"{'mid 1000 s':>10s} {'peak MB':>8s}"
    )
    for m in fixed:
        for L in levels:
            for N in Ns:
                r = run(BUILD, m, N, L, timeout=args.timeout)
                if "error" in r:
                    print(f"{m:15s} {L:2d} {N:3d}  error: {r['error']}", flush=True)
                    continue
                print(
                    f"{m:15s} {L:2d} {N:3d} {r['engine']:>9s} {r['size']:22,d} {r['seconds']:8.2f} "
                    f"{r['query_1000']:10.3f} {r['mid_1000']:10.3f} {r['peak_mb']:8.0f}",
                    flush=True,
                )
    if args.no_transform:
        return
    import os

    root = Path(args.data)
    dl19 = ["nDCG", "RBP(p=0.8)", "ERR"]
    jobs = [("trec8", 30, None, None, "threads", "eleven paper measures, N = 30, ties unq")]
    jobs += [("dl19", N, [m], None, "threads", f"{m}@{N}, 4 levels") for N in (10, 20) for m in dl19]
    jobs += [("dl19", 10, dl19, None, "threads", "nDCG, RBP(p=0.8), ERR @10 together, 4 levels")]
    jobs += [("dl19", 20, [m], 2, "threads", f"{m}@20, 3 levels (--max-grade 2)") for m in dl19]
    jobs += [("dl19", 30, [m], 2, "threads", f"{m}@30, 3 levels (--max-grade 2)") for m in dl19[:2]]
    jobs += [("dl19", 30, ["ERR"], 1, "threads", "ERR@30, binary (--max-grade 1)")]
    if args.dask:
        jobs += [("dl19", 30, ["nDCG"], 2, "local-cluster", "nDCG@30, 3 levels, Dask LocalCluster (2 workers)")]
    if args.only_transform:
        jobs = [j for j in jobs if any(w in j[5] for w in args.only_transform.split(","))]
    print("\ntransforms (ties unq and mid for DL 2019; cold: empty cache, warm: the same process again)")
    for which, N, ms, max_grade, scheduler, what in jobs:
        data = root / which
        if not (data / "runs").exists():
            print(f"{which} transform skipped: {data} is absent")
            continue
        with tempfile.TemporaryDirectory() as cache:
            r = run(
                TRANSFORM,
                data,
                which,
                N,
                json.dumps(ms),
                json.dumps(max_grade),
                scheduler,
                env=dict(os.environ, IRSCALE_CACHE_DIR=cache),
                timeout=args.timeout,
            )
        if "error" in r:
            print(f"{which} {what}: error: {r['error']}", flush=True)
            continue
        maps = ", ".join(f"{k} {e} {s:,}" for k, (e, s) in r["maps"].items())
        print(
            f"{which} {what}: {r['runs']} runs x {r['topics']} topics, {r['levels']} levels: cold {r['cold']:.1f} s, "
            f"warm {r['warm']:.2f} s, peak {r['peak_mb']:.0f} MB, results {r['digest']} ({maps})",
            flush=True,
        )


def second_collection(data: Path, timeout: float) -> None:
    """--second-collection (see its help): three fresh processes, cold caches in temporary
    directories; prints the times and the load average before each."""
    import os

    if not (data / "runs").exists():
        print(f"second collection skipped: {data} is absent")
        return
    ms = json.dumps(["nDCG", "RBP(p=0.8)"])
    with tempfile.TemporaryDirectory() as shared, tempfile.TemporaryDirectory() as alone:
        out = {}
        for label, cache, half in (
            ("first", shared, "first"),
            ("second", shared, "second"),
            ("alone", alone, "second"),
        ):
            cdir = Path(cache) / "cache"
            load = os.getloadavg()[0]
            r = run(
                TRANSFORM,
                data,
                "dl19",
                30,
                ms,
                2,
                "threads",
                half,
                env=dict(os.environ, IRSCALE_CACHE_DIR=str(cdir)),
                timeout=timeout,
            )
            if "error" in r:
                print(f"second collection, {label}: error: {r['error']}")
                return
            out[label] = r
            what = {
                "first": "first collection (topics 1st, 3rd, ... of the sorted ids), empty cache",
                "second": "second collection (the other topics), the cache the first left",
                "alone": "second collection, empty cache",
            }[label]
            print(
                f"{what}: {r['runs']} runs x {r['topics']} topics, cold {r['cold']:.1f} s, warm {r['warm']:.2f} s, "
                f"peak {r['peak_mb']:.0f} MB, results {r['digest']} (load {load:.2f} before)",
                flush=True,
            )
        print(
            f"second / first: {out['second']['cold'] / out['first']['cold']:.2f}; "
            f"second with the first's cache / alone: {out['second']['cold'] / out['alone']['cold']:.2f}"
        )


if __name__ == "__main__":
    main()
