"""Warnings that are read and refusals that say everything at once (issue 24, item 6).

Each scenario below runs a verb of the CLI on small files written here (relative paths,
so the lines are as long as a user's) and triggers one warning or refusal. For every
warning line: at most 160 characters, ending by naming the guide section that explains
it (which exists and speaks of it), said once; for every refusal: one message of at most
three lines' length (480 characters). For both, every option they advise exists on the
verb that said it, and for most the advice is then typed and does what it says. A static
scan checks every option named anywhere in the package's messages exists on some verb."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from cli_lines import unwrap
from typer.main import get_command
from typer.testing import CliRunner

from irscale.cli import app

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
LINE = 160

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 c 1\n2 0 d 2\n2 0 e 0\n3 0 f 0\n4 0 h 1\n"  # 3: none relevant, 4: grade 1
RUN = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 c 1 3 r\n2 Q0 d 2 2 r\n3 Q0 f 1 1 r\n4 Q0 h 1 1 r\n"
RUN_S = "1 Q0 c 1 3 s\n1 Q0 a 2 2 s\n2 Q0 e 1 3 s\n2 Q0 d 2 2 s\n3 Q0 f 1 1 s\n4 Q0 a 1 1 s\n"
RUN_T = "1 Q0 a 1 3 t\n9 Q0 z 1 3 t\n"  # lacks topics 2 and 3, has topic 9 the qrels lack


def _verb(path: list[str]):
    cmd = get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def options(path: list[str]) -> set[str]:
    """The options a user may type with ``irscale PATH``: its own and the global ones."""
    out = {o for p in get_command(app).params for o in p.opts + p.secondary_opts}
    out |= {o for p in _verb(path).params for o in p.opts + p.secondary_opts}
    return out | {"--help"}


@pytest.fixture
def here(tmp_path, monkeypatch):
    from irscale import plan as planning

    monkeypatch.setattr(planning, "_WARNED_NOT_INTERVAL", set())  # said once per process: a test is a process
    monkeypatch.chdir(tmp_path)
    Path("q.txt").write_text(QRELS)
    Path("runs").mkdir()
    Path("runs/r.txt").write_text(RUN)
    Path("runs/s.txt").write_text(RUN_S)
    Path("t.txt").write_text(RUN_T)
    Path("big.txt").write_text(QRELS + "1 0 g 1000\n")  # one outlier grade
    Path("swapped.txt").write_text(
        "".join(f"{q} Q0 {d} {5 - k}.5 {k} x\n" for q in "124" for k, d in enumerate("acdefgh", 1))
    )
    Path("bom.txt").write_bytes("\ufeff".encode() + QRELS.encode())
    Path("withsub").mkdir()
    Path("withsub/r.txt").write_text(RUN)
    Path("withsub/sub").mkdir()
    Path("withsub/sub/s.txt").write_text(RUN_S)
    Path("junk").mkdir()
    Path("junk/r.txt").write_text(RUN)
    Path("junk/s.txt").write_text(RUN_S)
    Path("junk/README").write_text("These are the runs of our lab.\n")
    return tmp_path


def said(args: list[str]):
    res = CliRunner().invoke(app, args)
    lines = unwrap(res.stderr).splitlines()  # each message on one line (printed in lines of at most 160)
    warns = [x for x in lines if x.startswith("warning: ")]
    errors = [x for x in lines if x.startswith("error: ")]
    return res, warns, errors


# (verb path, arguments, a fragment of the warning it must say)
WARNINGS = [
    (["evaluate"], ["q.txt", "runs", "t.txt", "-m", "P@2"], "no results for"),
    (["evaluate"], ["q.txt", "t.txt", "-m", "P@2"], "absent from the qrels"),
    (["evaluate"], ["q.txt", "runs", "-m", "P@2"], "have no relevant document"),
    (["evaluate"], ["q.txt", "runs", "-m", "AP(rel=2)"], "no document of grade >= 2"),
    (["evaluate"], ["q.txt", "runs", "-m", "AP(rel=5)"], "no topic has a document of grade >= 5"),
    (["evaluate"], ["big.txt", "runs", "-m", "nDCG@3"], "top grade 1000"),
    (["evaluate"], ["q.txt", "runs", "-m", "nDCG@3", "--max-grade", "1"], "above --max-grade 1"),
    (["evaluate"], ["bom.txt", "runs", "-m", "P@2"], "byte-order mark"),
    (["evaluate"], ["q.txt", "withsub", "-m", "P@2"], "subdirectories are not read"),
    (["evaluate"], ["q.txt", "junk", "-m", "P@2", "--skip-invalid"], "not a valid run"),
    (["evaluate"], ["q.txt", "runs", "-m", "AP"], "means of AP are not meaningful on runs of up to 3 documents"),
    (["evaluate"], ["q.txt", "swapped.txt", "-m", "P@2"], "rank and score columns swapped?"),
    (["transform"], ["q.txt", "runs", "-m", "nDCG", "-N", "3"], "graded qrels"),
    (["transform"], ["q.txt", "runs", "-m", "P", "-N", "5", "--relevance", "graded"], "longer than every run"),
    (
        ["transform"],
        ["q.txt", "runs", "-m", "RBP(p=0.8)", "-N", "100", "--approx", "1e-4", "--relevance", "lenient"],
        "normalised",
    ),
    (
        ["compare"],
        [
            "q.txt",
            "runs",
            "t.txt",
            "-m",
            "AP",
            "-m",
            "P",
            "-N",
            "3",
            "-t",
            "ttest",
            "--missing-topics",
            "drop",
            "--relevance",
            "lenient",
        ],
        "no means with intervals",
    ),
    (
        ["compare"],
        ["q.txt", "runs", "-m", "P", "-m", "P@3", "-N", "3", "-t", "sign", "--relevance", "lenient"],
        "named more than once",
    ),
    (["compare"], ["q.txt", "runs", "-N", "3", "-t", "sign", "--no-measure-free"], "graded qrels: RBP(p=0.3)"),
    (
        ["compare"],
        [
            "q.txt",
            "runs",
            "-m",
            "AP",
            "-m",
            "RR",
            "-m",
            "P",
            "-N",
            "3",
            "-t",
            "ttest",
            "-t",
            "sign",
            "--relevance",
            "lenient",
        ],
        "is not meaningful at N = 3 (not interval); on ranked versions they are",
    ),
]


@pytest.mark.parametrize("verb,args,fragment", WARNINGS, ids=[w[2][:30] for w in WARNINGS])
def test_each_warning_is_one_line_naming_the_guide_once_with_options_that_exist(here, verb, args, fragment):
    res, warns, _ = said(verb + args)
    assert res.exit_code == 0, res.output
    hit = [w for w in warns if fragment in w]
    assert hit, (fragment, warns)
    assert len(warns) == len(set(warns)), warns  # each said once
    for w in warns:
        assert len(w) <= LINE, (len(w), w)
        assert w.endswith("(guide: Warnings)"), w
        have = options(verb).union(*(options([v]) for v in re.findall(r"irscale (\w+)", w)))  # or the verb it names
        assert set(OPTION.findall(w)) <= have, (set(OPTION.findall(w)) - have, w)


def test_the_guide_explains_every_warning():
    """The section the lines name exists and speaks of each warning (a fragment of each)."""
    section = " ".join(GUIDE.split("\n## Warnings\n", 1)[1].split("\n## ", 1)[0].split())
    for fragment in [
        "no results for",
        "absent from the qrels",
        "have no relevant document",
        "no document of grade",
        "no topic has a document of grade",
        "top grade 1000",
        "above --max-grade",
        "byte-order mark",
        "subdirectories are not read",
        "not a valid run",
        "not meaningful",
        "graded qrels",
        "longer than every run",
        "normalised",
        "no means with intervals",
        "named more than once",
        "no confidence intervals",
        "cache",
        "--no-warnings",
        "rank and score columns swapped",
        "ir_metadata header",
    ]:
        assert fragment in section, fragment


def test_a_study_says_the_not_meaningful_warning_once_for_all_its_N(here):
    res, warns, _ = said(
        [
            "study",
            "trec8-like",
            "q.txt",
            "runs",
            "--depths",
            "3,4",
            "--relevance",
            "lenient",
            "--no-measure-free",
            "--no-effects",
        ]
    )
    assert res.exit_code == 0, res.output
    meaningful = [w for w in warns if "not meaningful" in w]
    assert len(meaningful) == 1 and "at N = 3, 4 (not interval)" in meaningful[0], warns
    assert all(len(w) <= LINE for w in warns), warns


def test_no_warnings_silences_them_and_only_them(here):
    res, warns, _ = said(["evaluate", "q.txt", "runs", "t.txt", "-m", "AP"])
    assert res.exit_code == 0 and warns
    res, warns, _ = said(["--no-warnings", "evaluate", "q.txt", "runs", "t.txt", "-m", "P@2"])
    assert res.exit_code == 0 and warns == [] and "P@2" in res.stdout
    res, _, errors = said(["--no-warnings", "evaluate", "q.txt", "runs", "-m", "xx"])
    assert res.exit_code == 2 and errors  # errors are never silenced


# -- the advice, typed ------------------------------------------------------------------------------


def test_typed_advice_of_warnings_does_what_it_says(here):
    _, warns, _ = said(["transform", "q.txt", "runs", "-m", "nDCG", "-N", "3"])
    assert any("--relevance lenient binarises (as the 2021 paper), graded silences this" in w for w in warns)
    _, warns, _ = said(["transform", "q.txt", "runs", "-m", "nDCG", "-N", "3", "--relevance", "graded"])
    assert not any("graded qrels" in w for w in warns), warns
    _, warns, _ = said(["evaluate", "big.txt", "runs", "-m", "nDCG@3"])
    advice = re.search(r"(--max-grade \d+) caps it", " ".join(warns)).group(1).split()
    _, warns, _ = said(["evaluate", "big.txt", "runs", "-m", "nDCG@3", *advice])
    assert not any("top grade" in w for w in warns) and any("count as grade 2" in w for w in warns), warns
    _, warns, _ = said(["evaluate", "q.txt", "withsub", "-m", "P@2"])
    assert any("name them too" in w for w in warns)
    res, warns, _ = said(["evaluate", "q.txt", "withsub", "withsub/sub", "-m", "P@2"])
    assert res.exit_code == 0 and not any("subdirectories" in w for w in warns) and "s" in res.stdout
    _, warns, _ = said(["evaluate", "q.txt", "runs", "-m", "AP"])
    cmd = re.search(r"irscale (transform -N \d+)", " ".join(warns)).group(1).split()
    res, warns, _ = said([cmd[0], "q.txt", "runs", "-m", "AP", *cmd[1:], "--relevance", "lenient"])
    assert res.exit_code == 0 and "ranked(AP@3)" in res.stdout


# -- refusals ------------------------------------------------------------------------------------------

REFUSALS = [
    (
        ["compare"],
        ["q.txt", "runs", "-m", "xx", "-m", "nDGC", "-m", "AP(p=3)", "-N", "3"],
        ["'xx'", "'nDGC'", "AP(p=3)"],
    ),
    (
        ["transform"],
        ["q.txt", "runs", "-m", "AP", "-m", "ERR", "-m", "RBP(p=0.8)", "-m", "RR", "-N", "50"],
        ["AP@50", "ERR@50", "RBP(p=0.8)@50"],
    ),
    (["compare"], ["q.txt", "runs", "-m", "AP", "-m", "ERR", "-m", "nDCG", "-N", "50"], ["AP@50", "ERR@50", "nDCG@50"]),
    (["study", "trec8-like"], ["q.txt", "runs", "--depths", "5,40,50"], ["AP", "N = 40, 50"]),
    (["compare"], ["q.txt", "runs", "-m", "ERR", "-N", "25"], ["ERR@25"]),
    (["compare"], ["q.txt", "runs", "-m", "AP", "-N", "40", "--relevance", "lenient"], ["AP@40", "--max-pairs"]),
    (["compare"], ["q.txt", "runs", "-m", "AP", "-m", "ERR", "-N", "40"], ["AP@40", "ERR@40"]),
    (["evaluate"], ["q.txt", "runs", "t.txt", "--missing-topics", "error"], ["'t'"]),
    (["evaluate"], ["q.txt", "runs", "-m", "AP", "--trec-eval", "-f", "csv"], ["--trec-eval"]),
    (["evaluate"], ["runs/r.txt", "q.txt"], ["qrels come first"]),
]


@pytest.mark.parametrize("verb,args,named", REFUSALS, ids=[" ".join(r[0] + r[1][2:4]) for r in REFUSALS])
def test_each_refusal_names_everything_at_once_with_options_that_exist(here, verb, args, named):
    res, _, errors = said(verb + args)
    assert res.exit_code == 2, res.output
    assert len(errors) == 1, res.stderr  # one message
    text = errors[0]
    assert len(text) <= 3 * LINE, (len(text), text)
    for n in named:
        assert n in text, (n, text)
    have = options(verb)
    assert set(OPTION.findall(text)) <= have, (set(OPTION.findall(text)) - have, text)


@pytest.mark.slow
def test_typed_advice_of_refusals_does_what_it_says(here):
    _, _, errors = said(["transform", "q.txt", "runs", "-m", "RBP(p=0.8)", "-m", "nDCG", "-N", "50"])
    assert "--approx 1e-4" in errors[0]
    res, _, errors = said(
        ["transform", "q.txt", "runs", "-m", "RBP(p=0.8)", "-m", "nDCG", "-N", "50", "--approx", "1e-4"]
    )
    assert res.exit_code == 0 and not errors
    _, _, errors = said(["compare", "q.txt", "runs", "-m", "ERR", "-N", "25"])
    reach = re.search(r"use (-N) (\d+) or less", errors[0]).groups()
    res, _, errors = said(
        ["compare", "q.txt", "runs", "-m", "ERR", reach[0], "6", "-t", "sign", "--no-effects", "--no-measure-free"]
    )  # within the reach (6 of the 22 named: quick)
    assert res.exit_code == 0 and not errors and int(reach[1]) >= 6


def test_every_option_any_message_names_exists_on_some_verb():
    """A static scan of every string in the package (messages, help texts): each --option
    it names is an option of some verb (CSS custom properties of the HTML report aside)."""
    every = set()

    def walk(cmd):
        every.update(o for p in cmd.params for o in p.opts + p.secondary_opts)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(get_command(app))
    css = {"--accent", "--ink", "--line", "--muted", "--shade", "--kernels"}  # and bench/rankmap.py's --kernels
    wrong = {}
    for f in (ROOT / "src" / "irscale").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for o in set(OPTION.findall(node.value)) - every - css:
                    wrong.setdefault(o, f"{f.relative_to(ROOT)}:{node.lineno}")
    assert not wrong, wrong


@pytest.mark.slow
def test_measures_lists_whole_sentences_and_no_class_names():
    """`irscale measures`: each summary is whole sentences (never cut mid-sentence) and the
    interval-scale column says in words how phi is found (no class name like CountSpace)."""
    from irscale.measures import REGISTRY
    from irscale.report.console import measures_table, summary

    for name, cls in REGISTRY.items():
        text = summary(cls.__doc__ or "")
        assert text.endswith((".", ")")) and "``" not in text, (name, text)
    t = measures_table()
    cells = [str(c) for col in t.columns for c in col._cells]
    assert not [c for c in cells if re.search(r"\b[A-Z][a-z]+Space\b", c)], "a run space's class name is shown"
    res = CliRunner().invoke(app, ["measures"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "Space" not in res.stdout and "exact, by counting" in res.stdout


def test_warnings_of_runs_read_in_forked_processes_reach_the_caller_in_order(here):
    """Runs are read in forked processes: the warnings they raise come back to the caller
    (pytest.warns, catch_warnings) in the order of the files, not lost in the children."""
    import warnings

    import irscale

    files = []
    for tag in "abc":  # scores rising down every topic (rank and score swapped)
        Path(f"{tag}.txt").write_text(
            "".join(f"{q} Q0 {d} {k}.5 {k} {tag}\n" for q in "124" for k, d in enumerate("acdefgh", 1))
        )
        files.append(f"{tag}.txt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irscale.evaluate("q.txt", files, ["P@2"])  # in forked processes where the machine has two cores
    said = [str(w.message) for w in caught if "swapped" in str(w.message)]
    assert [x.split(":")[0] for x in said] == files, said


def test_heartbeat_says_still_working_only_when_no_tick_came(monkeypatch):
    import io

    from rich.console import Console

    from irscale import cli

    out = io.StringIO()
    monkeypatch.setattr(cli._Stderr, "_console", Console(file=out, force_terminal=False, width=200))
    monkeypatch.setattr(cli, "HEARTBEAT", 1.0)
    monkeypatch.setattr(cli._Feedback, "_heartbeat", lambda self: None)  # the test beats by hand, on its clock
    now = [1000.0]
    import time

    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    with cli._Feedback("reading runs") as tick:
        fb = tick.__self__
        for k in range(300):  # ticks every 0.1 s: the step is moving
            now[0] += 0.1
            tick(k, 1000, f"file{k}")
            fb.beat(now[0])
    lines = out.getvalue().splitlines()
    assert 2 <= len(lines) <= 4 and not any("still working" in x for x in lines), lines  # every ~9-10 s of 30


@pytest.mark.slow
def test_figures_are_never_drawn_in_threads(monkeypatch):
    """Where worker processes cannot be forked the figures are drawn one at a time:
    pyplot's style context is process-wide, and two threads would leave it changed."""
    import matplotlib
    from test_report import fake_study

    from irscale import parallel
    from irscale.report import figures as F

    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    F._plt()  # the backend chosen once
    before = {k: matplotlib.rcParams[k] for k in F._RC}
    first = [p.svg for p in F.study_figures(fake_study(), pdf=False)]
    for _ in range(3):
        assert [p.svg for p in F.study_figures(fake_study(), pdf=False)] == first
    assert {k: matplotlib.rcParams[k] for k in F._RC} == before  # the report's style did not leak
