"""Benchmark of the swapped-columns check (issue 38, item 1): every run of ../shared/data
(TREC-8, TREC DL 2019, trec_eval's two result fixtures) and its copy with the rank and
score columns exchanged, read by irscale's run reader; counts the files that warn, under
the check as it is and under the old rule (every consecutive pair of a topic rising,
re-implemented here on the raw columns), and the time to read them all. No peer checks
this (trec_eval, pytrec_eval and ranx read the score column as given), so none is timed.

    python bench/swap_check.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import gzip
import os
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def swapped(data: bytes) -> bytes:
    out = []
    for line in data.split(b"\n"):
        f = line.split()
        if len(f) >= 6:
            f[3], f[4] = f[4], f[3]
        out.append(b" ".join(f))
    return b"\n".join(out)


def old_rule(data: bytes) -> bool:
    """Before: warn only if every pair of consecutive lines of a topic rises (ten at least)."""
    rows = [line.split() for line in data.split(b"\n")]
    rows = [r for r in rows if len(r) >= 6]
    topic = np.array([r[0] for r in rows])
    score = np.array([float(r[4]) for r in rows])
    same = topic[1:] == topic[:-1]
    return int(same.sum()) >= 10 and bool((score[1:][same] > score[:-1][same]).all())


def warns(data: bytes, path: str) -> bool:
    from irscale.io.trec import parse_run

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_run(data, path, extra_fields="ignore", duplicates="first")
    return any("swapped" in str(w.message) for w in caught)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    a = ap.parse_args()
    groups = {
        "TREC DL 2019": sorted((a.data / "dl19" / "runs").glob("*")),
        "TREC-8": sorted((a.data / "trec8" / "runs").glob("*")),
        "trec_eval fixtures": [a.data / "trec_eval_test" / n for n in ("results.test", "results.trunc")],
    }
    import irscale

    print(f"irscale {irscale.__version__}; load average before: {os.getloadavg()[0]:.2f}")
    head = ("collection", "runs", "orig. warn", "swapped warn", "old rule: swapped warn", "read s")
    print(f"{head[0]:<20} {head[1]:>5} {head[2]:>11} {head[3]:>13} {head[4]:>23} {head[5]:>7}")
    for name, files in groups.items():
        n = ow = sw = old = 0
        t = 0.0
        for f in files:
            data = gzip.open(f).read() if f.suffix == ".gz" else f.read_bytes()
            copy = swapped(data)
            t0 = time.perf_counter()
            ow += warns(data, str(f))
            sw += warns(copy, str(f))
            t += time.perf_counter() - t0
            old += old_rule(copy)
            n += 1
        print(f"{name:<20} {n:>5} {ow:>11} {sw:>13} {old:>23} {t:>7.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
