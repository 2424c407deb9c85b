"""Where pytrec_eval's time goes on TREC-8, as its users call it (one ``RelevanceEvaluator``,
runs read with a plain gzip-and-split loop): building the evaluator, reading the runs and
``evaluate`` timed apart, in this one process. ``--contend K`` starts K busy loops beside
it, to see what a busy machine does to it (the last wave's 25 s against 6-10 s here).

    python bench/peer_profile.py [--data ../shared/data] [--contend 2]
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import installed, load, machine  # noqa: E402  (the shared reporting of bench/)

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--contend", type=int, default=0, help="busy-loop processes started beside it")
    args = ap.parse_args()
    import pytrec_eval

    d = args.data / "trec8"
    files = sorted((d / "runs").glob("*.gz"))
    if not files:
        sys.exit(f"no TREC-8 runs under {d} (pass --data)")
    print(f"machine: {machine()}; pytrec-eval-terrier {installed('pytrec-eval-terrier')}")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.contend)]
    try:
        before = load()
        t0 = time.perf_counter()
        q: dict = {}
        for line in open(d / "qrels.trec8.txt"):
            t, _, doc, g = line.split()
            q.setdefault(t, {})[doc] = int(g)
        ev = pytrec_eval.RelevanceEvaluator(q, {"map", "P_10", "ndcg_cut_10", "recip_rank", "Rprec", "bpref"})
        t1 = time.perf_counter()
        read = scored = 0.0
        for f in files:
            a = time.perf_counter()
            run: dict = {}
            with gzip.open(f, "rt") as fh:
                for line in fh:
                    t, _, doc, _, s, _ = line.split()
                    run.setdefault(t, {})[doc] = float(s)
            b = time.perf_counter()
            ev.evaluate(run)
            scored += time.perf_counter() - b
            read += b - a
        total = time.perf_counter() - t0
    finally:
        for h in hogs:
            h.kill()
    print(
        f"qrels + evaluator {t1 - t0:.2f} s, reading runs {read:.2f} s, pytrec_eval.evaluate {scored:.2f} s, "
        f"total {total:.2f} s ({args.contend} busy loops beside it; load average {before:.2f} -> {load():.2f})"
    )


if __name__ == "__main__":
    main()
