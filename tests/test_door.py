"""Nothing silent at the door (issue 38): a run with rank and score swapped is named, a
real-valued grade is announced, memory estimates only for maps that are built and in a short
form, advice computed from the command that ran, short lines, one format for tiny values."""

from __future__ import annotations

import gzip
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from irscale.io.trec import parse_run

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def swapped_copy(data: bytes) -> bytes:
    """The run with its 4th and 5th fields exchanged on every line of six fields or more."""
    out = []
    for line in data.split(b"\n"):
        f = line.split()
        if len(f) >= 6:
            f[3], f[4] = f[4], f[3]
        out.append(b" ".join(f))
    return b"\n".join(out)


def swap_warnings(data: bytes, path: str = "run.txt") -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_run(data, path, extra_fields="ignore", duplicates="first")
    return [str(w.message) for w in caught if "swapped" in str(w.message)]


def run_files(collection: str) -> list[Path]:
    if collection == "trec_eval_test":
        return [DATA / collection / "results.test", DATA / collection / "results.trunc"]
    return sorted((DATA / collection / "runs").glob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("collection", ["dl19", "trec8", "trec_eval_test"])
def test_every_swapped_copy_of_every_run_warns_and_no_original_does(collection):
    """Both directions over every run of ../shared/data: the originals (with their ties, odd
    inversions and ranks out of file order) say nothing; each swapped copy names its file."""
    if not (DATA / collection).is_dir():
        pytest.skip(f"../shared/data/{collection} is absent (the shared data is not in this checkout)")
    files = run_files(collection)
    assert len(files) >= 2
    loud, silent = [], []
    for f in files:
        data = gzip.open(f).read() if f.suffix == ".gz" else f.read_bytes()
        if swap_warnings(data, str(f)):
            loud.append(f.name)
        said = swap_warnings(swapped_copy(data), str(f))
        if len(said) != 1 or not said[0].startswith(f"{f}: rank and score columns swapped? "):
            silent.append((f.name, said))
    assert loud == [] and silent == []


def lines(rows) -> bytes:
    return "".join(f"{q} Q0 {d} {r} {s} t\n" for q, d, r, s in rows).encode()


def ranked(topics=3, depth=20, score=lambda k: 10.0 - 0.37 * k):
    return [(q, f"d{k}", k, score(k)) for q in range(1, topics + 1) for k in range(1, depth + 1)]


def test_a_swapped_run_with_the_odd_inversion_still_warns():
    """Ranks 1..400 read as scores, with one pair out of order (rank 12 before 11): the old
    check (every pair rises) was silenced by it."""
    rows = [(q, d, s, r) for q, d, r, s in ranked(depth=400)]  # swapped
    rows[10], rows[11] = rows[11], rows[10]
    (said,) = swap_warnings(lines(rows))
    assert said == (
        "run.txt: rank and score columns swapped? Scores rise like ranks in 99.9 % of 1,197 pairs of lines "
        "(guide: Warnings)"
    )


def test_runs_with_ties_and_constant_ranks_do_not_warn():
    # tied scores listed by docno, ranks in file order
    assert swap_warnings(lines(ranked(score=lambda k: float(10 - k // 4)))) == []
    # every rank 0 (a writer that leaves the column empty of meaning), scores falling
    assert swap_warnings(lines([(q, d, 0, s) for q, d, _, s in ranked()])) == []
    # whole, distinct scores (1000 - rank) with a constant rank column: falling, so not swapped
    assert swap_warnings(lines([(q, d, 1, 1000 - r) for q, d, r, _ in ranked()])) == []


def test_ranks_out_of_file_order_are_caught_by_their_look():
    """A writer that sorts tied scores by docno lists ranks out of order; swapped, its scores
    (the ranks) neither rise nor fall down the file, but they are distinct whole numbers and
    the rank column (the scores) repeats: the second sign names it."""
    rng = np.random.default_rng(5)
    rows = []
    for q in range(1, 4):
        scores = np.sort(rng.integers(1, 8, size=30))[::-1]
        for k, s in enumerate(scores):
            rows.append((q, f"d{k:02d}", k + 1, int(s)))
    # tied scores: ranks reversed within each tie (file sorted by score, then docno descending)
    fixed = []
    for q in range(1, 4):
        mine = [r for r in rows if r[0] == q]
        for s in sorted({r[3] for r in mine}, reverse=True):
            fixed += sorted((r for r in mine if r[3] == s), key=lambda r: r[2], reverse=True)
    assert swap_warnings(lines(fixed)) == []
    (said,) = swap_warnings(lines([(q, d, s, r) for q, d, r, s in fixed]))
    assert "Scores look like ranks (distinct whole numbers), ranks do not (" in said and "twice in a topic" in said
    fractional = [(q, d, r, s + 0.25) for q, d, r, s in fixed]
    (said,) = swap_warnings(lines([(q, d, s, r) for q, d, r, s in fractional]))
    assert "ranks do not ('7.25')" in said


def test_a_tiny_file_says_nothing():
    assert swap_warnings(lines([(1, f"d{k}", 0, k) for k in range(1, 6)])) == []


# -- item 2: real-valued grades are announced -------------------------------------------------------


def qrels_warnings(fn) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught if "whole number" in str(w.message)]


def test_one_stray_decimal_is_announced_once_naming_its_line(tmp_path):
    import irscale

    q = tmp_path / "qrels.txt"
    q.write_text("1 0 a 1\n1 0 b 2\n1 0 c 0\n2 0 a 3\n2 0 d 1.5\n2 0 e 0.25\n2 0 f 1.5\n")
    qrels, said = qrels_warnings(lambda: irscale.read_qrels(q))
    assert said == [
        f"{q}, line 5: grade 1.5 is not a whole number, so grades are real values; trec_eval reads 1, "
        "as --integer-grades does (integer_grades=True) (guide: Warnings)"
    ]
    assert qrels.values is not None and max(qrels.values) == 3
    whole, said = qrels_warnings(lambda: irscale.read_qrels(q, integer_grades=True))
    assert said == [] and whole.values is None
    assert dict(zip(whole.docno.astype(str), whole.grade.tolist())) == {"a": 3, "b": 2, "c": 0, "d": 1, "e": 0, "f": 1}
    # a file of whole numbers, however written, says nothing
    q2 = tmp_path / "whole.txt"
    q2.write_text("1 0 a 1.0\n1 0 b 2\n")
    assert qrels_warnings(lambda: irscale.read_qrels(q2))[1] == []


@pytest.mark.parametrize(
    "text, value", [(b"1.5", 1), (b"-0.5", 0), (b"2.5e-1", 2), (b"+3.99", 3), (b".75", 0), (b"-2.5", -2)]
)
def test_integer_grades_read_as_trec_eval_reads_them(text, value):
    """C's atol, which trec_eval's qrels reader calls: the leading [+-]digits."""
    from irscale.io.trec import trec_eval_grade

    assert trec_eval_grade(text) == value


def test_integer_grades_from_the_command_line_give_trec_eval_s_numbers(tmp_path):
    """--integer-grades scores a real-valued file as the same file with each grade's integer
    part written out (what trec_eval scores), and announces nothing."""
    from typer.testing import CliRunner

    from irscale.cli import app

    (tmp_path / "real.txt").write_text("1 0 a 2.5\n1 0 b 1.5\n1 0 c 0.5\n2 0 a 1\n2 0 b 0.75\n")
    (tmp_path / "cut.txt").write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n2 0 a 1\n2 0 b 0\n")
    (tmp_path / "run.txt").write_text(
        "".join(f"{q} Q0 {d} {k} {10 - k} r\n" for q in (1, 2) for k, d in enumerate("cba", 1))
    )
    args = ["run.txt", "-m", "P@2", "-m", "nDCG@3", "-m", "AP", "--format", "csv"]
    runner = CliRunner()
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        real = runner.invoke(app, ["evaluate", "real.txt", *args])
        cut = runner.invoke(app, ["evaluate", "cut.txt", *args])
        flag = runner.invoke(app, ["evaluate", "real.txt", *args, "--integer-grades"])
    finally:
        os.chdir(here)
    assert real.exit_code == cut.exit_code == flag.exit_code == 0, (real.output, flag.output)
    assert "real.txt, line 1: grade 2.5 is not a whole number" in real.stderr
    assert real.stderr.count("whole number") == 1 and "whole number" not in flag.stderr
    assert flag.stdout == cut.stdout != real.stdout


def test_a_frame_with_a_real_grade_is_announced_naming_its_row():
    import pandas as pd

    import irscale

    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "relevance": [1.0, 0.0, 1.5]})
    run = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "a"], "score": [1.0, 1.0]})
    _, said = qrels_warnings(lambda: irscale.evaluate(qrels, run, ["P@1"]))
    assert said == [
        "<DataFrame>, row 2: grade 1.5 is not a whole number, so grades are real values; trec_eval reads 1 "
        "(whole-number grades give its numbers) (guide: Warnings)"
    ]


# -- item 3: memory estimates only for maps that are built, in a short form ------------------------


@pytest.mark.parametrize(
    "n, text",
    [
        (5, "5 bytes"),
        (320 << 20, "320 MiB"),
        (3 << 29, "1.5 GiB"),
        (812 << 40, "812 TiB"),
        (int(3.2 * 2**50), "3.2 PiB, more than any machine has"),
        (2**70, "about 1.2e+21 bytes, more than any machine has"),
        (128559346594214240460313998856822450042055087993958602783659 * 10**240, None),
    ],
)
def test_sizes_read_in_a_short_engineering_form(n, text):
    from irscale.scales.budget import size_text

    said = size_text(n)
    if text is not None:
        assert said == text
    else:  # the 300-digit estimate of the count engine for nDCG@1000 on 4 levels
        assert said == "about 1.3e+299 bytes, more than any machine has"
    assert len(said) <= 50


def test_a_map_approx_bounds_gets_no_estimate():
    """nDCG@1000 on four levels: no exact engine; --approx bounds it and builds no map, so
    the plan names no map to build (the old line estimated the count engine's 300 digits)."""
    from irscale.experiment import plan_rank_maps

    both = plan_rank_maps(["nDCG@1000", "P@1000"], 1000, 4, approx=1e-4)
    built = plan_rank_maps(["nDCG@1000", "P@1000"], 1000, 4, approx=1e-4, built_only=True)
    assert [str(m) for m in both] == ["nDCG@1000", "P@1000"] and [str(m) for m in built] == ["P@1000"]


# -- item 4: every line a verb prints, on the example and on ../shared/data -----------------------

TOY = Path(__file__).resolve().parents[1] / "src" / "irscale" / "examples" / "toy"
DL19_RUNS = ["input.bm25base_p.gz", "input.p_bert.gz", "input.test1.gz", "input.TUA1-1.gz"]
TREC8_RUNS = ["input.1.gz", "input.CL99SD.gz", "input.UB99SW.gz", "input.weaver1.gz"]
DL19_QRELS = "data/dl19/qrels.dl19-passage.txt"

EXAMPLE = [
    ["demo"],
    ["measures"],
    ["version"],
    ["evaluate", "toy/qrels.txt", "toy/runs"],
    ["transform", "toy/qrels.txt", "toy/runs", "-N", "10"],
    ["compare", "toy/qrels.txt", "toy/runs", "-N", "5", "-m", "P", "-m", "AP", "--out", "study", "--no-figures"],
    ["table", "study", "-m", "AP"],
    ["inspect", "AP", "-N", "5"],
    ["rankmap", "P", "-N", "10"],
    ["study", "trec8-like", "toy/qrels.txt", "toy/runs", "--depths", "5", "-t", "ttest", "--no-figures"],
    ["cache", "info"],
]
SHARED = [
    ["evaluate", DL19_QRELS, *(f"data/dl19/runs/{r}" for r in DL19_RUNS)],
    ["evaluate", "data/trec8/qrels.trec8.txt", *(f"data/trec8/runs/{r}" for r in TREC8_RUNS)],
    ["evaluate", DL19_QRELS, "swapped.txt"],
    ["transform", DL19_QRELS, *(f"data/dl19/runs/{r}" for r in DL19_RUNS), "-N", "10", "-m", "nDCG", "-m", "P"],
    ["transform", DL19_QRELS, "data/dl19/runs/input.bm25base_p.gz", "-N", "20", "-m", "RR", "-m", "AP"],
    ["compare", "data/trec8/qrels.trec8.txt", *(f"data/trec8/runs/{r}" for r in TREC8_RUNS), "-N", "5", "-m", "AP"],
]


@pytest.fixture
def verbs_here(tmp_path, monkeypatch):
    """A user's directory: the example as toy/, the shared data as data/ (short relative
    paths, as a user types them), a swapped copy of a DL 2019 run."""
    monkeypatch.chdir(tmp_path)
    Path("toy").symlink_to(TOY)
    if DATA.is_dir():
        Path("data").symlink_to(DATA)
        run = gzip.open(DATA / "dl19" / "runs" / DL19_RUNS[0]).read()
        Path("swapped.txt").write_bytes(swapped_copy(run))
    return tmp_path


def check_every_line(scenarios, monkeypatch) -> int:
    """Run each command as a fresh one and check what it prints on stderr: every line at most
    160 characters, each message (a line and its indented continuation) too at these path
    lengths, at most one guide pointer in a message, and advice computed from the command:
    transform never advises itself, and no run length advised is below the one the message
    speaks of or the one asked for."""
    import re

    from cli_lines import unwrap
    from typer.testing import CliRunner

    from irscale import cli, plan
    from irscale.cli import app

    checked = 0
    for args in scenarios:
        monkeypatch.setattr(plan, "_WARNED_NOT_INTERVAL", set())  # each command a process of its own
        cli._SAID.clear()
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, (args, res.output)
        where = " ".join(args)
        assert all(len(line) <= 160 for line in res.stderr.splitlines()), where
        asked = int(args[args.index("-N") + 1]) if "-N" in args else 0
        for message in unwrap(res.stderr).splitlines():
            checked += 1
            assert len(message) <= 160, (where, message)
            assert message.count("guide:") <= 1 and message.count("(guide") <= 1, (where, message)
            if args[0] == "transform":
                assert "irscale transform" not in message, (where, message)
            spoken = re.search(r"at (?:some of )?N = ([\d, ]+)|runs of up to (\d+) documents", message)
            for n in re.findall(r"-N (\d+)", message):
                assert int(n) >= asked, (where, message)
                if spoken:
                    said = spoken.group(1) or spoken.group(2)
                    assert int(n) >= max(int(x) for x in said.replace(",", " ").split()), (where, message)
    return checked


@pytest.mark.slow
def test_every_line_every_verb_prints_on_the_example(verbs_here, monkeypatch):
    assert check_every_line(EXAMPLE, monkeypatch) >= 10


@pytest.mark.slow
def test_every_line_every_verb_prints_on_the_shared_data(verbs_here, monkeypatch):
    if not DATA.is_dir():
        pytest.skip("../shared/data is absent (the shared data is not in this checkout)")
    assert check_every_line(SHARED, monkeypatch) >= 6


def test_advice_never_repeats_the_command_nor_asks_a_smaller_n():
    """The demo's evaluate (runs of 50: AP has no exact engine there) used to advise -N 10;
    a transform's own table used to advise the transform just run."""
    import irscale

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP", "P@10"])
        from irscale import plan

        plan._WARNED_NOT_INTERVAL.clear()
        plan.warn_not_interval(table, "means")  # (what the CLI says when it prints the means)
        ranked = irscale.transform(table, ["AP"], depth=10)
        plan._WARNED_NOT_INTERVAL.clear()
        plan.warn_not_interval(ranked, "means")
        plan._WARNED_NOT_INTERVAL.clear()
        plan.warn_not_interval(irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["nDCG@10"]), "means")
    said = [str(w.message) for w in caught if "not meaningful" in str(w.message)]
    assert "on runs of up to 50 documents" in said[0] and "-N 10" not in said[0]
    assert re.search(r"\(not interval\); ranked versions are exact up to N = \d+ \(guide: Warnings\)$", said[0])
    assert any("AP are not meaningful at N = 10 (not interval); their ranked columns (_R) are" in s for s in said)
    assert said[-1].endswith("ranked: irscale transform -N 10 (guide: Warnings)")  # evaluate's nDCG@10: N itself


def test_a_tiny_mean_and_its_interval_read_in_one_format():
    """A ranked mean phi/|M| at N = 1000 is about 1e-98: the mean and both ends of its
    interval in significant digits (0 as 0), never 0.0000 beside 6.45e-98."""
    import pandas as pd

    from irscale.report.study import Column, ReportTable, cell_parts

    frame = pd.DataFrame({"mean": [6.45e-98, 0.5], "lo": [0.0, 0.4], "hi": [3.86e-97, 0.6]})
    columns = (Column("mean", "mean", "", ci=("lo", "hi")), Column("lo", "lo", ""), Column("hi", "hi", ""))
    table = ReportTable("t", "means", "Means", "", frame, columns, "tab:t")
    col = table.columns[0]
    assert cell_parts(table, col, frame.iloc[0].to_dict()) == ("6.45e-98", " [0, 3.86e-97]")
    assert cell_parts(table, col, frame.iloc[1].to_dict()) == ("0.5000", " [0.4000, 0.6000]")


def test_the_plan_line_names_only_the_maps_that_are_built(tmp_path, monkeypatch):
    """The CLI's plan, said before any run is read (the run below fails on its second line):
    a map transform or compare builds gets its estimate; one --approx bounds gets none."""
    from cli_lines import unwrap
    from typer.testing import CliRunner

    from irscale.cli import app

    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "bad-run.txt"
    bad.write_text("101 Q0 d 1 1.0 r\n101 Q0 e 2 x r\n")
    q = str(TOY / "qrels.txt")
    built = CliRunner().invoke(app, ["transform", q, str(bad), "-m", "nDCG", "-N", "30"])
    assert built.exit_code == 2 and "bad-run.txt:2" in built.stderr
    assert re.search(r"^rank maps: nDCG@30 about \d+ MiB \(count engine\); memory budget ", built.stderr, re.M)
    for verb in ("transform", "compare"):
        bounded = CliRunner().invoke(app, [verb, q, str(bad), "-m", "nDCG", "-N", "1000", "--approx", "1e-4"])
        assert bounded.exit_code == 2 and "bad-run.txt:2" in unwrap(bounded.stderr), bounded.stderr
        assert "rank maps:" not in bounded.stderr, bounded.stderr


def test_advice_at_a_run_length_only_bounds_reach():
    """nDCG@1000 on three levels: no exact engine, certified bounds: the advice says so at
    that N (never a shorter run)."""
    import irscale
    from irscale import plan

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["nDCG@1000"])
        plan._WARNED_NOT_INTERVAL.clear()
        plan.warn_not_interval(table, "means")  # (what the CLI says when it prints the means)
    (said,) = [str(w.message) for w in caught if "not meaningful" in str(w.message)]
    assert said.endswith("ranked, within certified bounds: irscale transform -N 1000 --approx 1e-4 (guide: Warnings)")


def test_data_frame_display_reads_a_value_and_its_interval_in_one_format():
    import pandas as pd

    from irscale.report.study import Column, ReportTable, data_frame

    frame = pd.DataFrame({"mean": [6.45e-98, 0.5, -0.0], "lo": [0.0, 0.4, -3e-60], "hi": [3.86e-97, 0.6, 1e-60]})
    columns = (Column("mean", "mean", "", ci=("lo", "hi")), Column("lo", "lo", ""), Column("hi", "hi", ""))
    df = data_frame(ReportTable("t", "means", "Means", "", frame, columns, "tab:t"))
    assert df["mean_display"].tolist() == ["6.45e-98", "0.5000", "0"]
    assert df["lo_display"].tolist() == ["0", "0.4000", "-3e-60"]
    assert df["hi_display"].tolist() == ["3.86e-97", "0.6000", "1e-60"]


def test_a_negative_grade_that_is_not_whole_announces_nothing(tmp_path):
    """-0.5 reads as -1 (never relevant) and makes no file real-valued: it is neither
    announced nor named in place of the first positive grade that is not whole."""
    import irscale

    q = tmp_path / "q.txt"
    q.write_text("1 0 a -0.5\n1 0 b 1\n")
    assert qrels_warnings(lambda: irscale.read_qrels(q))[1] == []
    q.write_text("1 0 a -0.5\n1 0 b 1\n1 0 c 2.5\n")
    (said,) = qrels_warnings(lambda: irscale.read_qrels(q))[1]
    assert said.startswith(f"{q}, line 3: grade 2.5 is not a whole number")
    import pandas as pd

    frame = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [-0.5, 1.0]})
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    assert qrels_warnings(lambda: irscale.evaluate(frame, run, ["P@1"]))[1] == []
