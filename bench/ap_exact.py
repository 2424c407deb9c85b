"""Benchmark: binary AP's exact rank map at N = 34 and 36 (issue 14), cold, one fresh Python
process per build, so that its time and peak memory are its own.

Each build is ``build("AP", N, 2, cache=False, queries=...)`` on local threads (the split
engine, bucketed over key ranges: memory stays bounded), answering phi of a fixed set of
runs in the same pass: the extremes (no relevant document, all relevant, only rank 1, only
rank N, the first or the last half, alternating) and ``--runs`` random runs (seeded). N with
more than ``engines.MAX_PAIRS`` runs (N >= 36) opts in with ``max_pairs=2**N``. With
``--dask`` the same build runs again on a ``distributed.LocalCluster`` (2 worker processes, 1
thread each), whose size and phi must equal the threads' ones.

Prints one row per build: distinct values, seconds, CPU seconds (all processes; about twice
the seconds when both cores are ours), peak RSS (GiB; Dask: the client process, which
runs the scheduler, + both workers' peaks), the load average before the build (other people's work shares these 2 cores)
and the issue's goals (<= 600 s, <= 4 GiB at N = 34; the memory goal at every N), then the phi
of the fixed runs and PASS/FAIL per goal.

    python bench/ap_exact.py                       # N = 34, threads
    python bench/ap_exact.py --n 34 --dask         # and the same on a Dask LocalCluster
    python bench/ap_exact.py --n 34,36             # N = 36: about four times N = 34's time
    python bench/ap_exact.py --n 26,28 --dask      # a quick check (seconds)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

GOAL_SECONDS = {34: 600}  # the time goal (N = 34); other N: reported, no goal
GOAL_GIB = 4.0  # the memory goal, every N

BUILD = """
import json, os, resource, sys, time
import numpy as np

def fixed_runs(N, n_random, seed):
    # the extremes, then n_random seeded random runs (one per row, grades 0/1)
    one = lambda idx: np.isin(np.arange(N), idx).astype(np.int8)
    rows = [np.zeros(N, np.int8), np.ones(N, np.int8), one([0]), one([N - 1]), one(range(N // 2)),
            one(range(N // 2, N)), one(range(0, N, 2))]
    names = ["none", "all", "rank 1", f"rank {N}", "first half", "last half", "alternating"]
    rnd = np.random.default_rng(seed).integers(0, 2, (n_random, N)).astype(np.int8)
    return np.vstack([*rows, rnd]), names + [f"random {i}" for i in range(n_random)]

def main():
    N, n_random, seed, dask = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "dask"
    from irscale.scales import build
    from irscale.scales.engines import MAX_PAIRS
    from irscale.scales.spaces import space_for
    out = {"N": N, "scheduler": "dask" if dask else "threads", "load": os.getloadavg()[0]}
    g, out["names"] = fixed_runs(N, n_random, seed)
    keys = space_for("AP", N, 1).keys(g)
    max_pairs = 2 ** N if 2 ** N > MAX_PAIRS else None  # the opt-in beyond the default limit
    out["max_pairs"] = max_pairs
    last = [time.perf_counter()]
    t0 = time.perf_counter()

    def progress(done, total):  # a line on stderr every 60 s, with the ETA
        now = time.perf_counter()
        if now - last[0] >= 60 and 0 < done < total:
            last[0] = now
            el = now - t0
            print(f"  N={N} {out['scheduler']}: {done:,}/{total:,} buckets, {el:.0f} s, "
                  f"ETA {el * (total - done) / done:.0f} s", file=sys.stderr, flush=True)

    client = cluster = None
    if dask:
        import logging
        from distributed import Client, LocalCluster
        # silence_logs: no heartbeat tracebacks when a worker outlives the scheduler at shutdown (a
        # failing task still raises here)
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.CRITICAL)
        client = Client(cluster)
    try:
        t = time.perf_counter()
        t0 = last[0] = t
        rm = build("AP", N, 2, cache=False, queries=keys, scheduler=client, progress=progress, max_pairs=max_pairs)
        out["seconds"] = time.perf_counter() - t
        # a bucket summary remembers the answers its pass gave; a table in memory (N <= 24) needs no pass
        out["answered_in_pass"] = len(rm._answers()[0]) == len(np.unique(keys)) if rm.summary.kind == "buckets" \
            else None
        t = time.perf_counter()
        out["phi"] = rm.phi_runs(g).tolist()
        out["phi_seconds"] = time.perf_counter() - t
        out.update(size=rm.size, engine=rm.engine, kind=rm.summary.kind,
                   buckets=len(getattr(rm.summary, "bounds", [0])) - 1)
        me = resource.getrusage(resource.RUSAGE_SELF)
        out["peak_gib"] = me.ru_maxrss / 2**20
        out["cpu_seconds"] = me.ru_utime + me.ru_stime
        if client is not None:
            def usage():
                import resource
                r = resource.getrusage(resource.RUSAGE_SELF)
                return r.ru_maxrss / 2**20, r.ru_utime + r.ru_stime
            workers = list(client.run(usage).values())
            out["worker_peak_gib"] = [w[0] for w in workers]
            out["peak_gib"] += sum(w[0] for w in workers)
            out["cpu_seconds"] += sum(w[1] for w in workers)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    print("RESULT " + json.dumps(out), flush=True)

main()
"""


def run_build(N: int, n_random: int, seed: int, dask: bool, timeout: float) -> dict:
    """One build in a fresh process (stderr, its progress lines, passes through)."""
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                textwrap.dedent(BUILD),
                str(N),
                str(n_random),
                str(seed),
                "dask" if dask else "threads",
            ],
            stdout=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s (stopped)"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": f"exit code {p.returncode} (its traceback is above)"}


def parse_ns(text: str) -> list[int]:
    try:
        ns = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"--n takes comma-separated run lengths like 34,36, not {text!r}") from None
    bad = [n for n in ns if not 2 <= n <= 40]
    if not ns or bad:
        raise SystemExit(f"--n: run lengths from 2 to 40 (AP's keys are int64 up to N = 40), not {text!r}")
    return ns


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else "PASS" if ok else "FAIL"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="34", help="run lengths, comma-separated (default 34)")
    ap.add_argument(
        "--dask",
        action="store_true",
        help="also build on a Dask LocalCluster (2 workers) and check that size and phi equal the threads' ones",
    )
    ap.add_argument("--runs", type=int, default=20, help="random runs whose phi is asked (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=5400, help="seconds per build (default 5400)")
    args = ap.parse_args()
    if args.runs < 0:
        raise SystemExit(f"--runs must be 0 or more, not {args.runs}")
    ns = parse_ns(args.n)
    print(
        f"binary AP, exact rank map, cold (cache=False), one process per build; {os.cpu_count()} CPUs; "
        f"fixed runs: 7 extremes + {args.runs} random (seed {args.seed})",
        flush=True,
    )
    rows, phis, checks = [], {}, []
    for N in ns:
        for dask in (False, True) if args.dask else (False,):
            r = run_build(N, args.runs, args.seed, dask, args.timeout)
            label = "dask" if dask else "threads"
            if "error" in r:
                rows.append(f"{N:3d} {label:8s}  error: {r['error']}")
                checks.append((f"N={N} {label} builds", False))
                print(rows[-1], flush=True)
                continue
            goal_s = GOAL_SECONDS.get(N)
            ok_s = None if goal_s is None else r["seconds"] <= goal_s
            ok_m = r["peak_gib"] <= GOAL_GIB
            buckets = f"{r['buckets']:,}" if r["kind"] == "buckets" else "table"
            rows.append(
                f"{N:3d} {label:8s} {r['engine']:>6s} {buckets:>7s} {r['size']:16,d} {r['seconds']:9.1f} "
                f"{r['cpu_seconds']:9.1f} {r['peak_gib']:8.2f} {r['load']:5.1f} "
                f"{'<= ' + str(goal_s) if goal_s else '-':>7s} {verdict(ok_s):>5s} "
                f"{'<= ' + str(GOAL_GIB):>7s} {verdict(ok_m):>5s}"
            )
            print(f"  done: {rows[-1]}", flush=True)
            if not dask:
                checks += [(f"N={N} threads: <= {goal_s} s", ok_s), (f"N={N} threads: <= {GOAL_GIB} GiB", ok_m)]
                checks.append((f"N={N}: phi of the queried runs answered in the build's pass", r["answered_in_pass"]))
                checks.append(
                    (
                        f"N={N}: phi(no relevant) = 1 and phi(all relevant) = size",
                        r["phi"][0] == 1 and r["phi"][1] == r["size"],
                    )
                )
            else:
                checks.append((f"N={N} dask: <= {GOAL_GIB} GiB (client + both workers)", ok_m))
            phis[N, label] = r
        if (N, "threads") in phis and (N, "dask") in phis:
            a, b = phis[N, "threads"], phis[N, "dask"]
            checks.append(
                (
                    f"N={N}: Dask LocalCluster equals threads (size and {len(a['phi'])} phi)",
                    a["size"] == b["size"] and a["phi"] == b["phi"],
                )
            )
    print(
        "\n  N run      engine buckets         distinct   seconds   CPU s  peak GiB  load  goal s   res  goal GiB res"
    )
    for row in rows:
        print(row)
    for (N, label), r in phis.items():
        if label != "threads":
            continue
        print(
            f"\nphi at N={N} ({r['size']:,} distinct values; asked in the build's pass, read back in "
            f"{r['phi_seconds'] * 1000:.1f} ms)" + (f"; max_pairs={r['max_pairs']}" if r["max_pairs"] else "")
        )
        print("  " + ", ".join(f"{name}: {phi:,}" for name, phi in zip(r["names"], r["phi"])))
    print()
    for what, ok in checks:
        if ok is not None:
            print(f"{verdict(ok):4s}  {what}")
    if any(ok is False for _, ok in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
