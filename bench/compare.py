"""Benchmark: the full T08_30 study (paper Section 7), before and after a change, cold and warm.

All 129 TREC-8 runs x 50 topics, the eleven paper measures at N = 30, all eight tests,
original and ranked, tie strategies unq and mid::

    irscale.compare(irscale.evaluate(qrels, runs, ["AP"]), depth=30)

Two versions are timed in the same run: the commit ``--before`` (checked out with
``git worktree add --detach`` into a temporary directory, removed afterwards) and the
current checkout (its working tree, uncommitted edits included). Each measurement is a
fresh Python process with ``PYTHONPATH=<version>/src``, so that version's code is
imported (the child prints ``irscale.__file__`` and the script stops if it is not under
the intended tree). Each version has its own rank-map cache (``IRSCALE_CACHE_DIR``, a
fresh temporary directory): the first process starts with it empty (cold), the next
``--repeat`` processes find it filled (warm; median reported). The cold runs go first,
then the warm ones alternate between the versions, so that a change in machine load
does not favour one of them.

Reported per version: cold seconds (evaluate + compare, in the child), warm median and
the list, the time reading the runs (evaluate), the peak RSS of the child process
(``ru_maxrss``) and of its largest worker process (irscale may fork workers to read
runs), and the ratios before/after. A digest of the study's decisions (Sig, S2NS, NS2S,
Sig ranked per measure and test; Kendall's tau of Table 2) tells whether both versions
found the same results.

    python bench/compare.py [--before 517424f] [--repeat 3] [--only before|after] [--quick]
                            [--data ../shared/data/trec8]
    python bench/compare.py --randomised [--repeat 3]

``--randomised`` times the current tree twice instead, as two "versions" with their own
caches: the study with the paper's eight tests ("eight") and with the three randomised
tests besides ("eleven": ``tests=["paper", "randomised"]``); the digests then differ
(more rows), and the line "randomised tests add" gives the difference of the times.

The full study takes minutes per process (about 8 min cold before the refit).
``--quick`` (10 runs, N = 10) is a smoke check of the script itself.
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STUDY = """
import hashlib, json, resource, sys, time, warnings
from pathlib import Path
t0 = time.perf_counter()
import irscale
evaluate, compare = irscale.evaluate, irscale.compare  # public names load lazily (PEP 562): load them before timing
imports = time.perf_counter() - t0
warnings.simplefilter("ignore")
data, n_runs, depth = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
runs = sorted((data / "runs").glob("*.gz"))
runs = runs[:n_runs] if n_runs else runs
t = time.perf_counter()
table = evaluate(data / "qrels.trec8.txt", runs, ["AP"])
read = time.perf_counter() - t
study = compare(table, depth=depth, tests=sys.argv[4].split(","))
total = time.perf_counter() - t
ch = study.changes
decisions = ch[["sig", "s2ns", "ns2s", "sig_ranked"]].to_numpy().astype("int64").tobytes()
taus = study.table2[["tau_unq", "tau_mid"]].to_numpy().round(10).tobytes()
print("RESULT " + json.dumps({
    "file": irscale.__file__, "seconds": total, "reading": read, "imports": imports,
    "systems": len(table.systems), "rows": len(ch),
    "digest": hashlib.sha256(decisions + taus).hexdigest()[:12],
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "worker_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def git(*args: str, cwd: Path = ROOT) -> str:
    p = subprocess.run(["git", *args], cwd=cwd, check=False, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"git {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout.strip()


def measure(version: dict, args) -> dict:
    """One study in a fresh Python process importing ``version``'s source tree."""
    env = dict(os.environ, PYTHONPATH=str(version["src"]), IRSCALE_CACHE_DIR=version["cache"])
    t = time.perf_counter()
    # cwd: the (empty at first) cache directory, so that nothing is imported from the caller's directory
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(STUDY), str(args.data), str(args.runs), str(args.depth)]
        + [version["tests"]],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=version["cache"],
    )
    wall = time.perf_counter() - t
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            break
    else:
        raise SystemExit(f"{version['name']}: the study failed (exit {p.returncode}):\n{p.stderr[-4000:]}")
    file = Path(res["file"]).resolve()
    if not file.is_relative_to(version["src"]):
        raise SystemExit(f"{version['name']}: the child imported {file}, not the tree {version['src']}")
    res["wall"] = wall
    print(
        f"  {version['name']:6} {'cold' if not version['results'] else 'warm'} {res['seconds']:8.1f} s "
        f"(process {wall:.1f} s, peak {res['peak_mb']:.0f} MB)",
        file=sys.stderr,
        flush=True,
    )
    version["results"].append(res)
    return res


def report(v: dict) -> None:
    cold, warm = v["results"][0], v["results"][1:]
    times = [w["seconds"] for w in warm]
    print(f"{v['name']}: {v['rev']}  irscale from {cold['file']}")
    print(
        f"  cold cache  {cold['seconds']:8.1f} s   (reading the runs {cold['reading']:.1f} s, "
        f"imports {cold['imports']:.1f} s, whole process {cold['wall']:.1f} s)"
    )
    if warm:
        print(
            f"  warm cache  {statistics.median(times):8.1f} s   median of {len(times)} "
            f"{[round(x, 1) for x in times]}  (reading the runs "
            f"{statistics.median(w['reading'] for w in warm):.1f} s)"
        )
    peak = max(r["peak_mb"] for r in v["results"])
    worker = max(r["worker_peak_mb"] for r in v["results"])
    print(
        f"  peak RSS    {cold['peak_mb']:8.0f} MB cold, {peak:.0f} MB max over all processes"
        f"  (largest worker {worker:.0f} MB)"
    )
    print(f"  results     digest {cold['digest']}  ({cold['systems']} systems, {cold['rows']} (measure, test) rows)")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "trec8")
    ap.add_argument("--before", default="517424f", help="commit before the change (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="warm processes per version (default: %(default)s)")
    ap.add_argument("--only", choices=("before", "after"), help="time one version only")
    ap.add_argument("--quick", action="store_true", help="smoke check: 10 runs, N = 10")
    ap.add_argument("--randomised", action="store_true", help="the current tree with and without the randomised tests")
    args = ap.parse_args()
    if not (args.data / "runs").is_dir() or not (args.data / "qrels.trec8.txt").is_file():
        raise SystemExit(f"{args.data}: no TREC-8 data there (runs/ and qrels.trec8.txt); give --data")
    if args.repeat < 0:
        raise SystemExit("--repeat must be 0 or more")
    args.data = args.data.resolve()
    args.runs, args.depth = (10, 10) if args.quick else (0, 30)

    tests_said = "eight tests (eight) and eleven (with the randomised)" if args.randomised else "eight tests"
    tmp = Path(tempfile.mkdtemp(prefix="irscale-bench-"))
    worktree = tmp / "before"
    versions = []
    try:
        if args.randomised:
            rev = git("log", "-1", "--format=%h %<(60,trunc)%s")
            for name, tests in (("eight", "paper"), ("eleven", "paper,randomised")):
                versions.append({"name": name, "src": (ROOT / "src").resolve(), "rev": rev, "tests": tests})
        elif args.only != "after":
            rev = git("rev-parse", "--verify", f"{args.before}^{{commit}}")
            git("worktree", "add", "--detach", str(worktree), rev)
            versions.append(
                {
                    "name": "before",
                    "src": (worktree / "src").resolve(),
                    "rev": git("log", "-1", "--format=%h %<(60,trunc)%s", cwd=worktree),
                    "tests": "paper",
                }
            )
        if args.only != "before" and not args.randomised:
            dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
            versions.append(
                {
                    "name": "after",
                    "src": (ROOT / "src").resolve(),
                    "rev": git("log", "-1", "--format=%h %<(60,trunc)%s") + dirty,
                    "tests": "paper",
                }
            )
        for v in versions:
            v["cache"] = str(tmp / f"cache-{v['name']}")
            os.mkdir(v["cache"])
            v["results"] = []
        what = "10 runs, N = 10 (--quick)" if args.quick else "129 runs, N = 30"
        print(
            f"T08_30 study on {args.data}: {what}, eleven measures, {tests_said}, unq + mid; {sys.executable}",
            file=sys.stderr,
        )
        load_before = os.getloadavg()
        for v in versions:  # cold: empty caches
            measure(v, args)
        for _ in range(args.repeat):  # warm, alternating
            for v in versions:
                measure(v, args)
    finally:
        if worktree.exists():
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
        subprocess.run(["rm", "-rf", str(tmp)], check=False)

    print(
        f"T08_30 study: {'--quick: 10 runs, N = 10' if args.quick else '129 runs x 50 topics, N = 30'}, "
        f"eleven measures, {tests_said}, unq + mid; each figure a fresh process"
    )
    print(
        f"load average (1, 5, 15 min): at the start {', '.join(f'{x:.2f}' for x in load_before)}; at the end "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)"
    )
    for v in versions:
        report(v)
    if len(versions) == 2:
        b, a = versions
        cold_b, cold_a = b["results"][0]["seconds"], a["results"][0]["seconds"]
        print(f"before/after: cold {ratio(cold_b, cold_a)}", end="")
        if args.repeat:
            warm_b = statistics.median(r["seconds"] for r in b["results"][1:])
            warm_a = statistics.median(r["seconds"] for r in a["results"][1:])
            print(f", warm {ratio(warm_b, warm_a)}", end="")
        peak_b, peak_a = (max(r["peak_mb"] for r in v["results"]) for v in (b, a))
        print(f", peak memory after/before {peak_a / peak_b:.2f}")
        same = b["results"][0]["digest"] == a["results"][0]["digest"]
        if args.randomised:
            print(f"randomised tests add: cold {cold_a - cold_b:+.1f} s", end="")
            if args.repeat:
                print(f", warm {warm_a - warm_b:+.1f} s", end="")
            print(" (eleven minus eight; the digests differ: more rows)")
        else:
            print(f"same decisions and taus: {'yes' if same else 'NO (compare the studies)'}")


if __name__ == "__main__":
    main()
