"""Benchmark: start-up time, irscale beside its peers, in one run.

Each command runs in a fresh process ``--repeat`` times (default 15); medians of the
wall time, and the same minus the bare interpreter's start (``python -c pass``: on some
machines site-packages hooks alone take 0.1 s). The goal (issue 12): ``import irscale``
and ``irscale --help`` under 0.3 s.

    python bench/startup.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(cmd: list[str], repeat: int) -> tuple[float, str]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if p.returncode != 0:
            return float("nan"), (p.stderr.strip().splitlines() or ["failed"])[-1]
    return statistics.median(times), ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    py = sys.executable
    # the console script pip installed beside this interpreter (not a pyenv shim, which adds its own start)
    script = Path(py).parent / "irscale"
    if not script.exists():
        found = shutil.which("irscale")
        script = Path(found) if found else None
    cases = [
        ("python -c pass (the interpreter alone)", [py, "-c", "pass"]),
        ("import irscale", [py, "-c", "import irscale"]),
        ("irscale --help", [str(script), "--help"] if script else [py, "-m", "irscale", "--help"]),
        ("python -m irscale --help", [py, "-m", "irscale", "--help"]),
        ("irscale version", [str(script), "version"] if script else [py, "-m", "irscale", "version"]),
        ("import pytrec_eval", [py, "-c", "import pytrec_eval"]),
        ("import ir_measures", [py, "-c", "import ir_measures"]),
        ("import ranx", [py, "-c", "import ranx"]),
    ]
    rows = [(name, *timed(cmd, args.repeat)) for name, cmd in cases]
    base = rows[0][1]
    print(f"\nStart-up, median of {args.repeat} fresh processes ({script or 'python -m irscale'})")
    print(f"{'command':42s} {'wall s':>8s} {'minus interpreter':>18s}")
    for name, t, why in rows:
        if why:
            print(f"{name:42s} {'skipped':>8s}  ({why})")
        else:
            print(f"{name:42s} {t:8.3f} {t - base:18.3f}")


if __name__ == "__main__":
    main()
