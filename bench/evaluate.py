"""Benchmark: evaluation workloads, irscale vs its peers, in one run.

Workloads (``--workloads``, all by default):

* ``trec8``: the 129 TREC-8 runs x 50 topics (up to 1000 documents, gzip), AP, P@10,
  nDCG@10, RR, Rprec and bpref per topic, end to end (reading the files included);
* ``msmarco``: MS MARCO-like, generated here (seeded): one run x 10,000 topics x 1,000
  documents (10 M lines, plain text), graded qrels (grades 0-3) with 60 judgements per
  topic, AP, nDCG@10, P@10, RR and R@1000;
* ``stream``: 125 and 1,000 runs of TREC-8 size (generated, gzip; ``--stream-runs``),
  TREC-8's six measures: peak memory must not grow with the number of runs.

Each tool runs in a fresh Python process (so peak memory is its own), the peers as their
users call them (pytrec_eval: one ``RelevanceEvaluator`` for all runs, runs read with a
plain gzip-and-split loop; irscale: ``irscale.evaluate`` to its ScoreTable, as
pytrec_eval's to its dicts; the long pandas table ``to_frame()`` makes after is timed
apart and printed below irscale's row). ranx's numba JIT is
cold on its first call (NUMBA_CACHE_DIR points to an empty directory; its warm time is a
second call in the same process); irscale's kernels are compiled by one untimed first run
(reported as cold) and loaded from numba's cache in the timed ones, as on a user's machine
after the first run. The tools take turns (every tool once, then again, ``--repeat``
times), so a slow spell of the shared machine falls on all of them; wall and CPU seconds
(user + system, the process and its workers) are given as the best and the median, with
ratios to irscale.

Ratios are results only on a quiet machine: the script prints every tool's version and
how it was installed (a wheel from the package registry, or built from source here), the
machine, and the 1-minute load average before and after each timed process; where any
exceeds ``--busy`` (0.5) it says the machine was busy and that those ratios are not to be
quoted. ``--wait-quiet S`` waits up to S seconds for the load to fall below that first.
Each irscale process prints a digest (sha256) of every score it computed: equal digests
across variants (``irscale-zlib``) and versions are bit-for-bit equal results.

    python bench/evaluate.py [--workloads trec8,msmarco,stream] [--repeat 3] [--tools irscale,pytrec_eval,...]
                             [--data ../shared/data] [--wait-quiet 120] [--busy 0.5] [--baseline /tmp/base/src]

``--baseline`` times another checkout's irscale (its ``src`` directory, e.g. a ``git
worktree`` of an earlier commit) as the tool ``irscale-base``, in the same turns: a
change's gain measured in one run on one machine, not across two runs of a noisy one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

COMMON = """
import gzip, json, os, resource, sys, time
from pathlib import Path
qrels_path = Path(sys.argv[1])
files = [Path(f) for f in json.loads(sys.argv[2])]
IRS, TE, IRM, RANX = json.loads(sys.argv[3])  # the workload's measures in each tool's names
def _open(f):
    return gzip.open(f, "rt") if str(f).endswith(".gz") else open(f)
def read_qrels_dict():
    q = {}
    for line in open(qrels_path):
        t, _, d, g = line.split()
        q.setdefault(t, {})[d] = int(g)
    return q
def read_run_dict(f):
    r = {}
    with _open(f) as fh:
        for line in fh:
            t, _, d, _, s, _ = line.split()
            r.setdefault(t, {})[d] = float(s)
    return r
def cpu_now():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
def report(cpu_end=None, **kw):  # cpu_end: the CPU time where the timed work ended (else now)
    kw["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # worker processes (irscale reads runs in forked workers): the largest one
    kw["child_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    kw["cpu_seconds"] = (cpu_now() if cpu_end is None else cpu_end) - CPU0
    kw["total_cpu_seconds"] = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime  # imports included
    print("RESULT " + json.dumps(kw))
def digest(values):  # irscale's scores, bit for bit
    import hashlib
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]
_r = resource.getrusage(resource.RUSAGE_SELF)
CPU0 = _r.ru_utime + _r.ru_stime
"""

TOOLS = {
    "irscale": """
import irscale
t = time.perf_counter()
table = irscale.evaluate(qrels_path, files, IRS)
seconds, cpu = time.perf_counter() - t, cpu_now()
t = time.perf_counter()
df = table.to_frame()  # the long pandas table, timed apart: pytrec_eval's user gets dicts, irscale's a ScoreTable
report(seconds=seconds, cpu_end=cpu, frame_seconds=time.perf_counter() - t, cells=len(df), digest=digest(table.values))
""",
    "irscale-zlib": """
os.environ["IRSCALE_INFLATE"] = "zlib"  # Python's zlib instead of ISA-L for gzip runs (bench/decompress.py)
import irscale
t = time.perf_counter()
table = irscale.evaluate(qrels_path, files, IRS)
seconds, cpu = time.perf_counter() - t, cpu_now()
t = time.perf_counter()
df = table.to_frame()  # the long pandas table, timed apart: pytrec_eval's user gets dicts, irscale's a ScoreTable
report(seconds=seconds, cpu_end=cpu, frame_seconds=time.perf_counter() - t, cells=len(df), digest=digest(table.values))
""",
    "pytrec_eval": """
import pytrec_eval
t = time.perf_counter()
ev = pytrec_eval.RelevanceEvaluator(read_qrels_dict(), set(TE))
cells = 0
for f in files:
    res = ev.evaluate(read_run_dict(f))
    cells += sum(len(v) for v in res.values())
report(seconds=time.perf_counter() - t, cells=cells)
""",
    "ir_measures": """
import ir_measures
t = time.perf_counter()
qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
ev = ir_measures.evaluator([ir_measures.parse_measure(m) for m in IRM], qrels)
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
    if f.name.endswith(".gz"):
        plain.append(tmp / f.name[:-3])
        plain[-1].write_bytes(gzip.open(f).read())
    else:
        plain.append(f)
def once():
    t = time.perf_counter()
    q = Qrels.from_file(str(qrels_path), kind="trec")
    cells = 0
    for f in plain:
        run = Run.from_file(str(f), kind="trec")
        out = evaluate(q, run, RANX, return_mean=False, make_comparable=True)
        cells += sum(len(v) for v in out.values())
    return time.perf_counter() - t, cells
cold, cells = once()
warm, _ = once()
report(seconds=warm, cold_seconds=cold, cells=cells)
""",
}


WORKLOADS = {
    "trec8": dict(
        irscale=["AP", "P@10", "nDCG@10", "RR", "Rprec", "bpref"],
        trec_eval=["map", "P_10", "ndcg_cut_10", "recip_rank", "Rprec", "bpref"],
        ir_measures=["AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref"],
        ranx=["map", "precision@10", "ndcg@10", "mrr", "r-precision", "bpref"],
    ),
    "msmarco": dict(
        irscale=["AP", "nDCG@10", "P@10", "RR", "R@1000"],
        trec_eval=["map", "ndcg_cut_10", "P_10", "recip_rank", "recall_1000"],
        ir_measures=["AP", "nDCG@10", "P@10", "RR", "R@1000"],
        ranx=["map", "ndcg@10", "precision@10", "mrr", "recall@1000"],
    ),
}


def trec8_sized(out: Path, runs: int, topics: int = 50, depth: int = 1_000, judged: int = 1_700, seed: int = 0):
    """``runs`` gzip run files of TREC-8's size (``topics`` x ``depth`` documents, about
    50,000 lines) and binary qrels with ``judged`` judgements per topic (10 % relevant,
    TREC-8's share). Twenty distinct rankings serve every run (run i has ranking i mod
    20 and its own tag): reading, judging and scoring cost the same as for distinct runs."""
    import gzip

    rng = np.random.default_rng(seed)
    pool = 20_000  # documents per topic the runs draw from
    jdoc = np.stack([rng.permutation(pool)[:judged] for _ in range(topics)])
    rel = rng.random((topics, judged)) < 0.1
    with open(out / "qrels.txt", "w") as f:
        for t in range(topics):
            f.writelines(f"{401 + t} 0 FT{t}-{d} {int(r)}\n" for d, r in zip(jdoc[t], rel[t]))
    bodies = []
    for _ in range(20):
        lines = []
        for t in range(topics):
            # half the ranking from the judged documents, as pooled runs have it
            docs = np.concatenate([rng.permutation(jdoc[t])[: depth // 2], rng.integers(0, pool, depth)])
            docs = list(dict.fromkeys(docs.tolist()))[:depth]
            lines.extend(f"{401 + t} Q0 FT{t}-{d} {k + 1} {1000 - k * 0.5:.4f} TAG\n" for k, d in enumerate(docs))
        bodies.append("".join(lines).encode())
    files = []
    for i in range(runs):
        f = out / f"run{i:04d}.gz"
        f.write_bytes(gzip.compress(bodies[i % 20].replace(b" TAG\n", b" run%04d\n" % i), compresslevel=1))
        files.append(f)
    return out / "qrels.txt", files


def msmarco_like(out: Path, topics: int = 10_000, depth: int = 1_000, judged: int = 60, seed: int = 0):
    """One run x ``topics`` x ``depth`` documents and graded qrels with ``judged``
    judgements per topic (grades 0-3: 60 %, 20 %, 15 %, 5 %), half of them retrieved at
    random ranks; docnos from a pool of 8.8 M passages (MS MARCO's size)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(topics) + 1_000_000, depth)
    doc = rng.integers(0, 8_841_823, size=topics * depth)
    # judged documents: the first `judged` of a per-topic sample; half of them in the run
    jdoc = rng.integers(0, 8_841_823, size=(topics, judged))
    grades = rng.choice(4, size=(topics, judged), p=[0.6, 0.2, 0.15, 0.05])
    pos = rng.integers(0, depth, size=(topics, judged // 2))
    doc.reshape(topics, depth)[np.arange(topics)[:, None], pos] = jdoc[:, : judged // 2]
    score = np.sort(rng.random((topics, depth)), axis=1)[:, ::-1].reshape(-1) * 100
    q = pd.DataFrame(
        {"q": np.repeat(np.arange(topics) + 1_000_000, judged), "z": 0, "d": jdoc.reshape(-1), "g": grades.reshape(-1)}
    ).drop_duplicates(["q", "d"])
    q.to_csv(out / "qrels.txt", sep=" ", header=False, index=False)
    r = pd.DataFrame(
        {
            "q": qid,
            "Q0": "Q0",
            "d": doc,
            "rank": np.tile(np.arange(1, depth + 1), topics),
            "s": score.round(6),
            "tag": "msmarco_like",
        }
    ).drop_duplicates(["q", "d"])
    r.to_csv(out / "run.txt", sep=" ", header=False, index=False)
    return out / "qrels.txt", [out / "run.txt"]


PARSERS = {  # read one run file into columns (qid, docno, score): the part a parser choice changes
    "irscale tokenizer": """
from irscale.io.trec import RUN_FIELDS, parse_scores, read_bytes, tokenize
t = time.perf_counter()
tok = tokenize(read_bytes(files[0]), files[0], 6, RUN_FIELDS, keep=(0, 2, 4, 5))
qid, docno, score, tag = tok.column(0), tok.column(2), parse_scores(tok, 4), tok.column(5)
report(seconds=time.perf_counter() - t, cells=len(qid))
""",
    "irscale read_run": """
from irscale.io import read_run
t = time.perf_counter()
r = read_run(files[0])  # columns, and the run in trec_eval order with duplicates checked
report(seconds=time.perf_counter() - t, cells=len(r))
""",
    "pandas C engine": """  # the other two: columns only
import numpy as np, pandas as pd
t = time.perf_counter()
df = pd.read_csv(files[0], sep=" ", header=None, names=["q", "z", "d", "r", "s", "t"], engine="c",
                 dtype={"q": str, "z": str, "d": str, "r": np.int64, "s": np.float64, "t": str})
report(seconds=time.perf_counter() - t, cells=len(df))
""",
    "pyarrow csv": """
import pyarrow as pa, pyarrow.csv as pc
t = time.perf_counter()
tab = pc.read_csv(files[0], read_options=pc.ReadOptions(column_names=["q", "z", "d", "r", "s", "t"]),
                  parse_options=pc.ParseOptions(delimiter=" ", quote_char=False),
                  convert_options=pc.ConvertOptions(column_types={"q": pa.string(), "d": pa.string(),
                                                                  "s": pa.float64()}))
report(seconds=time.perf_counter() - t, cells=tab.num_rows)
""",
}


DISTRIBUTIONS = {  # the package each tool is installed as
    "irscale": "irscale",
    "irscale-zlib": "irscale",
    "pytrec_eval": "pytrec-eval-terrier",
    "ir_measures": "ir-measures",
    "ranx": "ranx",
}
BUSY = 0.5  # a 1-minute load average above this: the machine was busy (--busy)
LOADS: list[float] = []  # every load average taken around a timed process
OTHERS: list[float] = []  # CPU cores other processes kept busy during each timed process (/proc/stat)
QUIET = [0.0, BUSY]  # --wait-quiet seconds and --busy, waited for before each workload


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has been busy (all CPUs; /proc/stat), None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def installed(dist: str) -> str:
    """``version (how installed)``: a wheel from the package registry (a manylinux/musllinux
    or pure-Python tag), a wheel built from source on this machine (a plain ``linux`` tag),
    or an editable/local install (``direct_url.json``)."""
    import importlib.metadata as md

    try:
        d = md.distribution(dist)
    except md.PackageNotFoundError:
        return "not installed"
    tags = [
        line.split(":", 1)[1].strip() for line in (d.read_text("WHEEL") or "").splitlines() if line.startswith("Tag:")
    ]
    local = d.read_text("direct_url.json")
    if local and json.loads(local).get("dir_info", {}).get("editable"):
        how = "editable install of a checkout"
    elif local:
        how = "installed from a local path"
    elif any("manylinux" in t or "musllinux" in t or t.endswith("-any") for t in tags):
        how = f"wheel from the registry ({tags[0]})"
    elif tags:
        how = f"built from source here ({tags[0]})"
    else:
        how = "unknown"
    return f"{d.version} ({how})"


def machine() -> str:
    return (
        f"{platform.node()}: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.platform(terse=True)}"
    )


def load() -> float:
    value = os.getloadavg()[0]
    LOADS.append(value)
    return value


def wait_quiet(seconds: float, busy: float) -> None:
    """Wait up to ``seconds`` for the 1-minute load average to fall to ``busy`` or below."""
    end = time.monotonic() + seconds
    while os.getloadavg()[0] > busy and time.monotonic() < end:
        time.sleep(5)
    print(f"load average before the runs: {os.getloadavg()[0]:.2f}", flush=True)


BASELINE: list[str] = []  # --baseline: the src directory of the irscale to compare with


def run_tool(name: str, qrels: Path, files: list[Path], measures: dict, numba_cache: str | None = None) -> dict:
    """One fresh process; ``numba_cache``: numba's cache directory (None: an empty one, so
    compiled kernels are compiled again: cold). Records the load average before and after."""
    path = {}
    if name == "irscale-base":  # irscale from another checkout's src (--baseline), in the same turns
        code = textwrap.dedent(COMMON) + textwrap.dedent(TOOLS["irscale"])
        path = {"PYTHONPATH": BASELINE[0]}
    else:
        code = textwrap.dedent(COMMON) + textwrap.dedent(TOOLS.get(name) or PARSERS[name])
    names = [measures["irscale"], measures["trec_eval"], measures["ir_measures"], measures["ranx"]]
    before, busy0, t0 = load(), busy_seconds(), time.perf_counter()
    with tempfile.TemporaryDirectory() as empty:
        env = {**os.environ, "NUMBA_CACHE_DIR": numba_cache or empty, "PYTHONWARNINGS": "ignore", **path}
        p = subprocess.run(
            [sys.executable, "-c", code, str(qrels), json.dumps([str(f) for f in files]), json.dumps(names)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
    after, busy1, wall = load(), busy_seconds(), time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            out = json.loads(line[7:])
            # the machine's busy CPU time during the process, less the process's own (with its workers and
            # the interpreter's start, which rusage counts too): what ran beside it, in cores
            others = None
            if busy0 is not None and busy1 is not None:
                others = max(busy1 - busy0 - out["total_cpu_seconds"], 0.0) / wall
                OTHERS.append(others)
            return {**out, "load": (before, after), "others": others}
    raise RuntimeError(f"{name} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")


def bench(title: str, qrels: Path, files: list[Path], measures: dict, tools: list[str], repeat: int) -> None:
    """Each tool ``repeat`` times in fresh processes, the tools taking turns (round one:
    every tool once, then round two...), so that a slow spell of this shared machine
    falls on every tool alike; irscale's numba kernels compile once first (its cold run),
    then load from that cache."""
    wait_quiet(QUIET[0], QUIET[1])  # (a workload generated just before leaves the load average high)
    runs: dict[str, list] = {}
    colds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        for name in tools:
            if name.startswith("irscale"):
                try:
                    colds[name] = run_tool(name, qrels, files, measures, cache)["seconds"]
                except Exception as e:
                    print(f"{name:12s} skipped: {str(e).strip().splitlines()[-1]}")
                    continue
            runs[name] = []
        for _ in range(repeat):
            for name in list(runs):
                try:
                    runs[name].append(
                        run_tool(name, qrels, files, measures, cache if name.startswith("irscale") else None)
                    )
                except Exception as e:  # a peer not installed: say so, keep going
                    print(f"{name:12s} skipped: {str(e).strip().splitlines()[-1]}")
                    del runs[name]
    results = {}
    for name, rs in runs.items():
        results[name] = {
            "seconds": statistics.median(r["seconds"] for r in rs),
            "best": min(r["seconds"] for r in rs),
            "cpu": statistics.median(r["cpu_seconds"] for r in rs),
            "load": max(max(r["load"]) for r in rs),
            "others": max((r["others"] for r in rs if r["others"] is not None), default=float("nan")),
            "cold_seconds": colds.get(name)
            or (
                statistics.median(r["cold_seconds"] for r in rs) if "cold_seconds" in rs[0] else None
            ),  # ranx: its first call
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
            "child_peak_mb": max(r.get("child_peak_mb", 0) for r in rs),
            "cells": rs[0]["cells"],
            "digests": sorted({r["digest"] for r in rs if "digest" in r}),
            "frame": statistics.median(r["frame_seconds"] for r in rs) if "frame_seconds" in rs[0] else None,
            "all": [round(r["seconds"], 2) for r in rs],
        }
    base = results.get("irscale") or next(iter(results.values()), {})
    print(
        f"\n{title}; best and median of {repeat} fresh processes (ratios: the tool's time / "
        f"{next(iter(results), '')}'s); load: the highest 1-minute load average around its processes (the "
        "tools' own work raises it); others: the most CPU cores anything else kept busy during one of them"
    )
    print(
        f"{'tool':12s} {'best s':>7s} {'x':>6s} {'median s':>8s} {'x':>6s} {'CPU s':>7s} {'x':>6s} {'peak MB':>8s} "
        f"{'worker MB':>9s} {'load':>5s} {'others':>6s} {'cells':>8s}  runs (s)"
    )
    for name, r in results.items():
        rb = f"{r['best'] / base['best']:5.2f}x" if base else ""
        rw = f"{r['seconds'] / base['seconds']:5.2f}x" if base else ""
        rc = f"{r['cpu'] / base['cpu']:5.2f}x" if base else ""
        print(
            f"{name:12s} {r['best']:7.2f} {rb:>6s} {r['seconds']:8.2f} {rw:>6s} {r['cpu']:7.2f} {rc:>6s} "
            f"{r['peak_rss_mb']:8.0f} {r['child_peak_mb']:9.0f} {r['load']:5.2f} {r['others']:6.2f} {r['cells']:8d}  "
            f"{r['all']}",
            flush=True,
        )
        if r["digests"]:  # irscale's scores, bit for bit: equal digests, equal results
            print(f"{'':12s} results digest {', '.join(r['digests'])} (sha256 of every score, all its runs)")
        if r["frame"] is not None:
            print(
                f"{'':12s} then ScoreTable.to_frame(): +{r['frame']:.2f} s (median; pandas' import and the long "
                "table), not in the times above"
            )
        if r["cold_seconds"] is not None:
            rw = f"{r['cold_seconds'] / base['seconds']:5.1f}x" if base else ""
            print(
                f"{name + ' cold':12s} {r['cold_seconds']:8.2f} {rw:>6s}  (first run: numba compiles; ranx: first call)"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--workloads", default="trec8,msmarco,stream")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--stream-runs", default="125,1000", help="run counts of the 'stream' workload")
    ap.add_argument("--stream-repeat", type=int, default=1, help="repetitions of the 'stream' workload")
    ap.add_argument(
        "--parsers",
        action="store_true",
        help="also time reading the MS MARCO-like run with each "
        "parser (irscale's numpy tokenizer, pandas' C engine, pyarrow's CSV reader)",
    )
    ap.add_argument("--busy", type=float, default=BUSY, help="a load average above this marks the machine busy")
    ap.add_argument("--wait-quiet", type=float, default=0, help="wait up to this many seconds for a quiet machine")
    ap.add_argument(
        "--contend",
        type=int,
        default=0,
        help="start this many busy-loop processes beside the tools (to see what a busy machine does to the "
        "ratios, and that this script says so)",
    )
    ap.add_argument(
        "--baseline",
        default="",
        help="another checkout's src directory (git worktree add /tmp/base <commit>; --baseline "
        "/tmp/base/src): its irscale runs as the tool irscale-base, taking turns with this one",
    )
    args = ap.parse_args()
    tools = args.tools.split(",")
    if args.baseline:
        BASELINE[:] = [str(Path(args.baseline).resolve())]
        tools.insert(tools.index("irscale") + 1 if "irscale" in tools else 0, "irscale-base")
        DISTRIBUTIONS["irscale-base"] = "irscale"
    print(f"machine: {machine()}")
    for t in tools:
        print(f"{t:12s} {installed(DISTRIBUTIONS.get(t, t))}")
    print(f"numpy {installed('numpy')}; numba {installed('numba')}")
    QUIET[:] = [args.wait_quiet, args.busy]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.contend)]
    try:
        _workloads(args, tools)
    finally:
        for h in hogs:
            h.kill()
    first = LOADS[0] if LOADS else 0.0
    others = max(OTHERS, default=0.0)
    print(
        f"\nload average: before the first process {first:.2f}, highest {max(LOADS, default=0.0):.2f}, after the last "
        f"{LOADS[-1] if LOADS else 0:.2f}; other processes kept at most {others:.2f} CPU cores busy during a timed one"
    )
    if first > args.busy or others > args.busy:
        print(
            f"WARNING: the machine was busy (load average {first:.2f} before the first process; other processes "
            f"up to {others:.2f} cores during one; limit {args.busy}): these ratios are not results; run again on a "
            "quiet machine (--wait-quiet 300)"
        )


def _generate(function: str, out: Path, *counts: int) -> None:
    """Run a workload generator in a child process: a parent grown by pandas would hand its
    memory high-water mark to every tool's process it starts (Linux's ru_maxrss survives
    fork and exec), and every peak would read as the generator's."""
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import evaluate; "
        f"evaluate.{function}(Path(sys.argv[2]), *map(int, sys.argv[3:]))"
    )
    subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(out), *map(str, counts)], check=True)


def _workloads(args, tools: list[str]) -> None:
    for w in args.workloads.split(","):
        if w == "trec8":
            data = args.data / "trec8"
            if not (data / "qrels.trec8.txt").exists():
                print(f"trec8 skipped: no TREC-8 data at {data} (pass --data)")
                continue
            bench(
                "TREC-8: 129 runs x 50 topics, 6 measures, end to end",
                data / "qrels.trec8.txt",
                sorted((data / "runs").glob("*.gz")),
                WORKLOADS["trec8"],
                tools,
                args.repeat,
            )
        elif w == "msmarco":  # generated once per machine (about 2 minutes), kept in the temp directory
            cache = Path(tempfile.gettempdir()) / "irscale-bench-msmarco-v1"
            if not (cache / "done").exists():
                cache.mkdir(exist_ok=True)
                _generate("msmarco_like", cache)
                (cache / "done").write_text("ok")
            qrels, files = cache / "qrels.txt", [cache / "run.txt"]
            mb = files[0].stat().st_size / 2**20
            bench(
                f"MS MARCO-like: 1 run x 10,000 topics x 1,000 documents ({mb:.0f} MB text), "
                "graded qrels (60 per topic), 5 measures",
                qrels,
                files,
                WORKLOADS["msmarco"],
                tools,
                args.repeat,
            )
            if args.parsers:
                bench(
                    f"Parsers: reading the MS MARCO-like run ({mb:.0f} MB) into columns",
                    qrels,
                    files,
                    WORKLOADS["msmarco"],
                    list(PARSERS),
                    args.repeat,
                )
        elif w == "stream":  # generated once per machine (about a minute), kept in the temp directory
            counts = [int(n) for n in args.stream_runs.split(",")]
            cache = Path(tempfile.gettempdir()) / f"irscale-bench-stream-v1-{max(counts)}"
            if not (cache / "done").exists():
                cache.mkdir(exist_ok=True)
                _generate("trec8_sized", cache, max(counts))
                (cache / "done").write_text("ok")
            files = sorted(cache.glob("run*.gz"))
            for n in counts:
                bench(
                    f"Streaming: {n:,} runs of TREC-8 size (50 topics x 1,000 documents, gzip), 6 measures "
                    "(peak memory should not grow with the number of runs)",
                    cache / "qrels.txt",
                    files[:n],
                    WORKLOADS["trec8"],
                    tools,
                    args.stream_repeat,
                )
        else:
            sys.exit(f"unknown workload {w!r}: trec8, msmarco or stream")


if __name__ == "__main__":
    main()
