"""Digests of what irscale writes for three fixed jobs, to show that a refactoring changed
no result: the T08 study (TREC-8, 129 runs, the paper's 11 measures and eight tests at
N = 30, float32 scores as the paper read them), a graded DL 2019 transform (37 runs, nDCG
and RBP(p=0.8) at N = 10 on the four grades) and ``irscale demo``.

Each job runs the installed ``irscale`` command in a fresh process; a study's digest is the
SHA-256 of its CSV files (names sorted; the HTML, LaTeX and provenance also hold dates and
versions), a transform's and the demo's of their CSV output. Run it on two checkouts and
compare the lines:

    python scripts/digests.py [--data ../shared/data] [--only t08,dl19,demo]
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAPER = ("P", "R", "RR", "AP", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)")
PAPER += ("DCG(base=2)", "DCG(base=10)", "nDCG(base=2)", "nDCG(base=10)")


def _run(args: list[str]) -> bytes:
    done = subprocess.run(["irscale", *args], capture_output=True, check=False)
    if done.returncode:
        sys.exit(f"irscale {' '.join(args)} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")
    return done.stdout


def t08(data: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        ms = [a for m in PAPER for a in ("-m", m)]
        qrels, runs = data / "trec8" / "qrels.trec8.txt", data / "trec8" / "runs"
        _run(["compare", str(qrels), str(runs), "-N", "30", *ms, "--float32-scores", "--no-figures", "-o", tmp])
        h = hashlib.sha256()
        for f in sorted(Path(tmp).glob("*.csv")):
            h.update(f.name.encode() + b"\0" + f.read_bytes())
        return h.hexdigest()


def dl19(data: Path) -> str:
    qrels, runs = data / "dl19" / "qrels.dl19-passage.txt", data / "dl19" / "runs"
    out = _run(["transform", str(qrels), str(runs), "-m", "nDCG", "-m", "RBP(p=0.8)", "-N", "10", "-f", "csv"])
    return hashlib.sha256(out).hexdigest()


def demo(data: Path) -> str:
    return hashlib.sha256(_run(["demo", "-f", "csv"])).hexdigest()


JOBS = {"t08": t08, "dl19": dl19, "demo": demo}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--only", default=",".join(JOBS))
    args = ap.parse_args()
    if not (args.data / "trec8").is_dir():
        sys.exit(f"no collection data at {args.data} (its README says what goes there)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    print(f"checkout {commit or '?'}" + (" with uncommitted changes" if dirty.stdout.strip() else ""))
    for name in args.only.split(","):
        t = time.perf_counter()
        print(f"{name:5} {JOBS[name](args.data)}  ({time.perf_counter() - t:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
