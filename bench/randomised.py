"""Benchmark: the randomised tests on every pair of TREC-8's 129 systems (8,256 pairs, 50
topics, AP at depth 1000 as trec_eval scores it), irscale against its peers.

Each tool runs in a fresh Python process on the same score matrix (written once to a
temporary .npy file; reading the runs is not timed):

* irscale: ``irscale.stats.permutation_test`` (100,000 sign vectors), ``rtukey_test``
  (10,000 permutations) and ``bootstrap_test`` (10,000 resamples), all pairs at once;
* ranx: ``ranx.statistical_tests.fisher_randomization_test`` (its Fisher randomisation
  test, compiled with numba, one pair per call) with 100,000 permutations; its
  compilation is timed apart;
* scipy: ``scipy.stats.permutation_test`` (paired, mean difference, 100,000 resamples,
  vectorised).

The peers take seconds per pair: they run on the first ``--peer-pairs`` pairs, and that
time scaled to all 8,256 pairs is printed as an extrapolation.

Prints the versions, the machine, the 1-minute load average before and after each
process, each tool's seconds and the pairs it found significant at 0.05.

    python bench/randomised.py [--data ../shared/data] [--peer-pairs 100]
    python bench/randomised.py --ranked 30   # AP@30 against ranked AP@30: significant pairs
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import BUSY, installed, load, machine  # noqa: E402  (the shared reporting of bench/)
from rankmap import run  # noqa: E402  (a snippet in a fresh process, its RESULT line)

ROOT = Path(__file__).resolve().parents[1]

MATRIX = """
import sys
import numpy as np
from pathlib import Path
import irscale
d = Path(sys.argv[1])
table = irscale.evaluate(d / "qrels.trec8.txt", sorted((d / "runs").glob("*.gz")), ["AP"])
np.save(sys.argv[2], table.matrix("AP").to_numpy())
"""

IRSCALE = """
import json, sys, time
import numpy as np
from irscale import stats
X = np.load(sys.argv[1])
out = {}
tests = (("permutation", stats.permutation_test), ("rtukey", stats.rtukey_test), ("bootstrap", stats.bootstrap_test))
for name, f in tests:
    t = time.perf_counter()
    r = f(X)
    out[name] = [time.perf_counter() - t, int(r.n_significant)]
print("RESULT " + json.dumps(out))
"""

RANX = """
import json, sys, time
import numpy as np
from ranx.statistical_tests import fisher_randomization_test as frt
X = np.load(sys.argv[1])
S, k = X.shape[1], int(sys.argv[2])
pairs = [(a, b) for a in range(S) for b in range(a + 1, S)][:k]
t = time.perf_counter()
frt(X[:, 0].copy(), X[:, 1].copy(), 10, 0.05, 42)  # numba compiles (or loads its cache)
compile_s = time.perf_counter() - t
t = time.perf_counter()
sig = 0
for a, b in pairs:
    p, _ = frt(X[:, a].copy(), X[:, b].copy(), 100_000, 0.05, 42)
    sig += p < 0.05  # as irscale decides (ranx itself uses <=)
print("RESULT " + json.dumps({"seconds": time.perf_counter() - t, "compile": compile_s, "pairs": len(pairs),
                              "significant": int(sig)}))
"""

SCIPY = """
import json, sys, time
import numpy as np
from scipy import stats
X = np.load(sys.argv[1])
S, k = X.shape[1], int(sys.argv[2])
pairs = [(a, b) for a in range(S) for b in range(a + 1, S)][:k]
t = time.perf_counter()
sig = 0
for a, b in pairs:
    r = stats.permutation_test((X[:, a], X[:, b]), lambda x, y, axis: np.mean(x - y, axis=axis),
                               permutation_type="samples", n_resamples=100_000, vectorized=True,
                               random_state=0)
    sig += r.pvalue < 0.05
print("RESULT " + json.dumps({"seconds": time.perf_counter() - t, "pairs": len(pairs), "significant": int(sig)}))
"""


RANKED = """
import json, sys, time
from pathlib import Path
import numpy as np
import irscale
from irscale import stats
d, N = Path(sys.argv[1]), int(sys.argv[2])
table = irscale.evaluate(d / "qrels.trec8.txt", sorted((d / "runs").glob("*.gz")), ["AP"], depth=N)
both = irscale.transform(table, ["AP"], depth=N)
out = {}
for label, m in zip(("AP", "ranked AP"), both.measures):
    X = both.matrix(m).to_numpy()
    for test in ("permutation", "rtukey", "bootstrap", "ttest"):
        dp = stats.discriminative_power(X, test)
        out[f"{label} {test}"] = [int(round(dp.share * dp.n_pairs)), dp.share, float(np.median(dp.asl))]
print("RESULT " + json.dumps(out))
"""


def ranked(data: Path, N: int) -> None:
    """--ranked N: TREC-8's AP at run length N and its ranked version (unq): pairs
    significant at 0.05 by each randomised test (and the t test), out of 8,256."""
    r = run(RANKED, data, N)
    if "error" in r:
        print(f"ranked: error: {r['error']}")
        return
    print(f"TREC-8, AP@{N} and ranked AP@{N} (129 systems x 50 topics, 8,256 pairs), alpha 0.05:")
    print(f"{'measure and test':28s} {'significant':>11s} {'share':>7s} {'median ASL':>10s}")
    for k, (n, share, med) in r.items():
        print(f"{k:28s} {n:11d} {share:7.3f} {med:10.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--peer-pairs", type=int, default=100, help="pairs the peers run (then scaled)")
    ap.add_argument("--ranked", type=int, metavar="N", help="only: AP@N against ranked AP@N, significant pairs")
    args = ap.parse_args()
    data = Path(args.data) / "trec8"
    if not (data / "runs").exists():
        print(f"skipped: {data} is absent (TREC-8 runs and qrels)")
        return
    if args.ranked:
        ranked(data, args.ranked)
        return
    print(f"machine: {machine()}")
    for dist in ("irscale", "numpy", "scipy", "ranx", "numba"):
        print(f"{dist:8s} {installed(dist)}")
    with tempfile.TemporaryDirectory() as tmp:
        X = os.path.join(tmp, "ap.npy")
        subprocess.run([sys.executable, "-c", textwrap.dedent(MATRIX), str(data), X], check=True)
        print("\nTREC-8, AP, 129 systems x 50 topics: 8,256 pairs; each tool in a fresh process")
        rows = []
        first = before = load()
        r = run(IRSCALE, X)
        after = load()
        if "error" in r:
            print(f"irscale: error: {r['error']}")
        else:
            total = sum(v[0] for v in r.values())
            for name, (sec, sig) in r.items():
                rows.append((f"irscale {name}", sec, sig, ""))
            rows.append(("irscale, the three", total, None, f"load {before:.2f} -> {after:.2f}"))
        peers = (("ranx", RANX, "ranx fisher_randomization_test"), ("scipy", SCIPY, "scipy permutation_test"))
        for peer, code, label in peers:  # one pair per call: timed on a few pairs, then scaled
            before = load()
            r = run(code, X, args.peer_pairs)
            after = load()
            if "error" in r:
                print(f"{peer}: error: {r['error']}")
                continue
            compiling = f"+ {r['compile']:.1f} s compiling; " if "compile" in r else ""
            note = f"all 8,256 pairs: about {r['seconds'] * 8256 / r['pairs']:.0f} s (extrapolated), {compiling}"
            rows.append(
                (
                    f"{label} ({r['pairs']} pairs)",
                    r["seconds"],
                    r["significant"],
                    note + f"load {before:.2f} -> {after:.2f}",
                )
            )
        print(f"{'tool':40s} {'seconds':>8s} {'significant':>11s}")
        for name, sec, sig, note in rows:
            print(f"{name:40s} {sec:8.2f} {'' if sig is None else sig:>11} {note}")
        if first > BUSY:  # the tools' own work raises the load of the later ones
            print(f"WARNING: the machine was busy before the first process (load {first:.2f} > {BUSY})")


if __name__ == "__main__":
    main()
