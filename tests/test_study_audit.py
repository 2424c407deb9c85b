"""An independent audit of what ``irscale compare --out DIR`` writes (issue 23, item 11).

Each study is run with the real CLI (a subprocess: ``python -m irscale compare ...``) on
real data; tests/audit_checker.py then reads the per-topic scores it rests on
(``scores_N<N>.csv``) and the provenance, and re-derives every number of every CSV and JSON
table with scipy, statsmodels, numpy and pandas (sharing no code with irscale.stats,
irscale.effects, irscale.study, irscale.report or irscale.measurefree), the measure-free
view from the raw runs, and checks that the HTML and LaTeX tables show the CSV's display
strings. Any disagreement fails the test with the file, column, row, irscale's value and the
checker's.

The studies:

1. TREC-8, the first 20 runs (sorted by file name), N = 30, P, AP, RBP(p=0.8), nDCG,
   baseline CL99SD, Holm correction, the paper's eight tests and the three randomised ones;
2. TREC DL 2019 passage (37 runs), graded nDCG, RBP(p=0.8), ERR at N = 10; nDCG and
   RBP(p=0.8) at N = 20 (ERR@20 on 4 relevance levels has no exact engine: irscale refuses it,
   checked below); the three at N = 10 under the lenient protocol;
3. TREC-8, the first 10 runs, N = 1000, P and nDCG with --approx 1e-4 --no-mid, baseline
   CL99SD (so that the bounded comparisons' half-widths are audited too), the t and sign
   tests and the randomised ones with --seed 7 (their could-flip flags re-derived);
4. TREC DL 2019 with its grades 0-3 written as real-valued grades 0, 0.25, 0.5, 1.0 (an LLM
   judge's probabilities), N = 10: graded nDCG and RBP(p=0.8) on the four grades, and P at
   the threshold 0.5, baseline and Holm correction;
5. TREC DL 2019 on condensed runs (``--judged-only``, trec_eval's -J), N = 10: graded nDCG,
   RBP(p=0.8) and AP, baseline idst_bert_p1 (the checker condenses the runs with its own
   reader).

All studies start at once (their rank maps go to the session's private cache) and each test
waits for its own; they take about two minutes together on two cores, most of it building
the rank maps and bounds tables cold.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from audit_checker import Audit, StudySpec
from conftest import DATA, TREC8, need

DL19 = DATA / "dl19"
DL19_QRELS = "qrels.dl19-passage.txt"

pytestmark = pytest.mark.xdist_group("study_audit")  # one worker: the studies run side by side


def _trec8_runs(k: int) -> list[Path]:
    return sorted((TREC8 / "runs").glob("*.gz"))[:k]


REAL = {"0": "0", "1": "0.25", "2": "0.5", "3": "1.0"}  # DL 2019's grades as real-valued ones


def _real_qrels(root: Path) -> Path:
    """DL 2019's qrels with real-valued grades (REAL), written under ``root``."""
    out = root / "dl19-real-qrels.txt"
    if not out.exists():
        rows = (line.rsplit(" ", 1) for line in (DL19 / DL19_QRELS).read_text().splitlines() if line.strip())
        out.write_text("".join(f"{head} {REAL[g.strip()]}\n" for head, g in rows))
    return out


def _specs(root: Path) -> dict[str, StudySpec]:
    q8, qd = TREC8 / "qrels.trec8.txt", DL19 / DL19_QRELS
    graded3 = ["nDCG", "RBP(p=0.8)", "ERR"]
    return {
        "trec8_N30": StudySpec(
            "trec8_N30",
            q8,
            _trec8_runs(20),
            30,
            ["P", "AP", "RBP(p=0.8)", "nDCG"],
            ["P@30", "AP@30", "RBP(p=0.8)@30", "nDCG@30"],
            baselines=["CL99SD"],
            correction="holm",
            tests=["paper", "randomised"],
        ),
        "dl19_N10_graded": StudySpec(
            "dl19_N10_graded",
            qd,
            [DL19 / "runs"],
            10,
            graded3,
            ["nDCG@10", "RBP(p=0.8)@10", "ERR@10"],
            relevance="graded",
        ),
        "dl19_N20_graded": StudySpec(
            "dl19_N20_graded",
            qd,
            [DL19 / "runs"],
            20,
            ["nDCG", "RBP(p=0.8)"],
            ["nDCG@20", "RBP(p=0.8)@20"],
            relevance="graded",
        ),
        "dl19_N10_lenient": StudySpec(
            "dl19_N10_lenient",
            qd,
            [DL19 / "runs"],
            10,
            graded3,
            ["nDCG(rel=1)@10", "RBP(p=0.8,rel=1)@10", "ERR(rel=1)@10"],
            relevance="lenient",
        ),
        "dl19_N10_real": StudySpec(
            "dl19_N10_real",
            _real_qrels(root),
            [DL19 / "runs"],
            10,
            ["nDCG", "RBP(p=0.8)", "P(rel=0.5)"],
            ["nDCG@10", "RBP(p=0.8)@10", "P(rel=0.5)@10"],
            baselines=["idst_bert_p1"],
            correction="holm",
        ),
        "dl19_N10_judged": StudySpec(  # condensed runs (-J): most of a DL19 run's top 10 is judged, not all
            "dl19_N10_judged",
            qd,
            [DL19 / "runs"],
            10,
            ["nDCG", "RBP(p=0.8)", "AP"],
            ["nDCG@10", "RBP(p=0.8)@10", "AP@10"],
            relevance="graded",
            baselines=["idst_bert_p1"],
            judged_only=True,
        ),
        "trec8_N1000_approx": StudySpec(
            "trec8_N1000_approx",
            q8,
            _trec8_runs(10),
            1000,
            ["P", "nDCG"],
            ["P@1000", "nDCG@1000"],
            baselines=["CL99SD"],
            approx=1e-4,
            mid=False,
            tests=["ttest", "sign", "randomised"],
            seed=7,
        ),
    }


NAMES = [
    "dl19_N10_graded",
    "dl19_N10_judged",
    "dl19_N10_lenient",
    "dl19_N10_real",
    "dl19_N20_graded",
    "trec8_N1000_approx",
    "trec8_N30",
]
# (in this order: the quick studies are audited while the long ones still run)


def _cli(args: list[str], log: Path) -> subprocess.Popen:
    """``python -m irscale ARGS`` in the background, its output to ``log`` (a pipe that
    nobody reads yet would stall it once full). The cache: conftest's private one."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200")
    with open(log, "w") as f:
        return subprocess.Popen([sys.executable, "-m", "irscale", *args], stdout=f, stderr=subprocess.STDOUT, env=env)


class Studies:
    """The studies this session's tests need, started side by side; ``get`` waits for one."""

    def __init__(self, names, root: Path):
        self.specs = _specs(root)
        self.runs = {}
        for name in names:
            out = root / name
            self.runs[name] = (
                _cli(self.specs[name].argv(out), root / f"{name}.log"),
                out,
                root / f"{name}.log",
                time.perf_counter(),
            )

    def get(self, name: str):
        proc, out, log, t0 = self.runs[name]
        proc.wait()
        seconds = time.perf_counter() - t0
        assert proc.returncode == 0, (
            f"irscale {' '.join(self.specs[name].argv(out))} failed "
            f"(exit {proc.returncode}):\n{log.read_text()[-4000:]}"
        )
        return self.specs[name], out, seconds

    def close(self):
        for proc, *_ in self.runs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def studies(request, tmp_path_factory):
    need(TREC8)
    need(DL19)
    wanted = [
        item.callspec.params["name"]
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec") and "name" in item.callspec.params
    ]
    s = Studies([n for n in NAMES if n in wanted] or NAMES, tmp_path_factory.mktemp("study-audit"))
    yield s
    s.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_study_audit(name, studies, capsys):
    spec, out, seconds = studies.get(name)
    t0 = time.perf_counter()
    audit = Audit(spec, out).run()
    with capsys.disabled():
        print(
            f"\n{name}: study {seconds:.1f} s (started with the others), audit {time.perf_counter() - t0:.1f} s, "
            f"{sum(audit.checked.values())} values checked, {len(audit.mismatches)} mismatches"
        )
        for note in audit.notes:
            print(f"  not re-derived: {note}")
        if audit.inexact_summary():
            print(f"  {audit.inexact_summary()}")
    assert not audit.mismatches, audit.report()


@pytest.mark.slow
def test_dl19_err_at_20_graded_is_refused(tmp_path):
    """Why the N = 20 study leaves ERR out: on 4 relevance levels no exact engine reaches
    ERR@20 and ERR has no certified bounds, so compare refuses it (exit 2, one line that says
    how far it is exact and what to change) before reading a run."""
    need(DL19)
    log = tmp_path / "err20.log"
    proc = _cli(
        [
            "compare",
            str(DL19 / DL19_QRELS),
            str(DL19 / "runs"),
            "-N",
            "20",
            "-m",
            "ERR",
            "--relevance",
            "graded",
            "--no-effects",
            "--no-measure-free",
        ],
        log,
    )
    proc.wait(timeout=120)
    text = log.read_text()
    assert proc.returncode == 2, text[-2000:]
    assert "ERR@20" in text and "N=17 on 4 levels" in text and "--max-grade" in text, text[-2000:]
