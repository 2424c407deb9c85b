"""Benchmark: start-up time, irscale beside its peers, in one run.

Each command runs in a fresh process ``--repeat`` times (default 15); medians of the
wall time, and the same minus the bare interpreter's start (``python -c pass``: on some
machines site-packages hooks alone take 0.1 s). The goal (issue 12): ``import irscale``
and ``irscale --help`` under 0.3 s.

Then the import budget of an evaluate (issue 40): ``python -X importtime`` of a fresh
process that evaluates the embedded example's five runs (``irscale.evaluate``, and the
CLI's ``irscale evaluate``), the import time per top-level package (median of
``--repeat`` processes), and whether anything reading, judging and scoring never use was
imported (pandas, matplotlib, scipy.linalg and numpy.f2py, which numba's BLAS probe pulls
in unless irscale keeps it away from the first kernel).

    python bench/startup.py [--repeat 15] [--budget-repeat 5]
"""

from __future__ import annotations

import argparse
import os
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


NEVER = ("pandas", "matplotlib", "scipy.linalg", "scipy.stats", "scipy.special", "numpy.f2py", "statsmodels")

EVALUATE = """
import sys, irscale
from pathlib import Path
toy = Path(irscale.__file__).parent / "examples" / "toy"
irscale.evaluate(toy / "qrels.txt", toy / "runs", ["AP", "nDCG@10", "P@10", "RR", "Rprec", "bpref"])
"""


def import_budget(cmd: list[str], repeat: int) -> tuple[dict[str, float], list[str]]:
    """Median import seconds per top-level package over ``repeat`` fresh processes (the
    cumulative time of each package's first import, as ``-X importtime`` reports it),
    and the modules of :data:`NEVER` that were imported."""
    per: dict[str, list[float]] = {}
    bad: set[str] = set()
    for _ in range(repeat):
        p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:4])} ... failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
        seen: dict[str, float] = {}
        for line in p.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            _, cum, name = line.split("|")
            if not cum.strip().isdigit():
                continue
            mod = name.strip()
            if mod in NEVER:  # (a submodule comes after its package; scipy.linalg.cython_blas alone is the
                bad.add(mod)  # probe's import that irscale answered at once, without scipy.linalg)
            if name.startswith(" ") and not name.startswith("  "):  # top level: one space after the bar
                top = mod.split(".")[0]
                seen[top] = seen.get(top, 0.0) + int(cum) / 1e6
        for k, v in seen.items():
            per.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in per.items()}, sorted(bad)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--budget-repeat", type=int, default=5)
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
    cli = [py, "-X", "importtime", "-m", "irscale", "evaluate"]
    toy = Path(__file__).resolve().parents[1] / "src" / "irscale" / "examples" / "toy"
    budgets = [
        ("irscale.evaluate (embedded example)", [py, "-X", "importtime", "-c", EVALUATE]),
        ("irscale evaluate (the CLI, its table)", cli + [str(toy / "qrels.txt"), str(toy / "runs"), "-m", "AP"]),
    ]
    for what, cmd in budgets:
        seconds, bad = import_budget(cmd, args.budget_repeat)
        print(f"\nImport budget of {what}, median of {args.budget_repeat} fresh processes (python -X importtime)")
        for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {k:28s} {v:6.3f} s")
        print(f"  {'all imports':28s} {sum(seconds.values()):6.3f} s")
        print(f"  never needed, imported: {', '.join(bad) if bad else 'none'} (of {', '.join(NEVER)})")


if __name__ == "__main__":
    main()
