"""Issue 24, item 5 (part): a trec_eval user's first habits on the command line.

trec_eval's own measure spelling (``-m P.10``, ``-m ndcg_cut.10,20``, ``map_cut.10``,
``recall.100``, ``success.10``), a trec_eval name with irscale's parameters
(``P_10(rel=2)``) and trec_eval's relevance level ``-l 2`` (binary measures count grade
>= 2; ndcg keeps the grades), checked against pytrec-eval-terrier on TREC DL 2019 (the
reference reads the runs and qrels here, without irscale)."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest
from conftest import DATA, need
from typer.testing import CliRunner

from irscale.cli import app
from irscale.errors import MeasureError
from irscale.measures import at_rel_level, parse_measure, parse_measures, trec_eval_names
from irscale.scales.rankmap import pick_engine

runner = CliRunner()
QRELS = "qrels.dl19-passage.txt"


def test_trec_eval_spelling_parses():
    assert trec_eval_names("ndcg_cut.10,20") == ["ndcg_cut_10", "ndcg_cut_20"]
    got = [
        str(m)
        for m in parse_measures(
            ["P.10", "ndcg_cut.10,20", "map_cut.10", "recall.100", "success.10", "P_10(rel=2)", "P.5(rel=3)", "map"]
        )
    ]
    assert got == ["P@10", "nDCG@10", "nDCG@20", "AP@10", "R@100", "Success@10", "P(rel=2)@10", "P(rel=3)@5", "AP"]
    assert str(parse_measure("ndcg_cut.5")) == "nDCG@5"
    with pytest.raises(MeasureError, match="names 2 measures"):
        parse_measure("P.5,10")
    with pytest.raises(MeasureError, match="no parameter 'rell'"):
        parse_measure("P_10(rell=2)")


def test_rel_level_changes_binary_measures_only():
    ms = at_rel_level(parse_measures(["map", "P_10", "ndcg_cut_10", "P(rel=3)@5", "recip_rank", "ERR@10"]), 2)
    assert [str(m) for m in ms] == ["AP(rel=2)", "P(rel=2)@10", "nDCG@10", "P(rel=3)@5", "RR(rel=2)", "ERR@10"]
    assert at_rel_level(ms, None) == ms


@pytest.fixture(scope="module")
def dl19():
    return need(DATA / "dl19")


def _read(dl19, files):
    qrels: dict[str, dict[str, int]] = {}
    for line in (dl19 / QRELS).read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    runs = {}
    for f in files:
        run: dict[str, dict[str, float]] = {}
        tag = None
        for line in gzip.decompress(f.read_bytes()).decode().splitlines():
            q, _, d, _, score, tag = line.split()
            run.setdefault(q, {})[d] = float(score)
        runs[tag] = run
    return qrels, runs


@pytest.mark.parametrize("level", [1, 2])
def test_cli_speaks_trec_eval_like_pytrec_eval(dl19, level):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")
    files = sorted((dl19 / "runs").glob("*.gz"))[::9]
    qrels, runs = _read(dl19, files)
    spelled = ["map", "recip_rank", "P.10", "recall.100", "ndcg_cut.10,20", "bpref", "map_cut.10", "success.10"]
    te = ["map", "recip_rank", "P_10", "recall_100", "ndcg_cut_10", "ndcg_cut_20", "bpref", "map_cut_10", "success_10"]
    args = ["evaluate", str(dl19 / QRELS), *map(str, files), "--float32-scores", "-q", "--trec-eval"]
    for m in spelled:
        args += ["-m", m]
    if level != 1:
        args += ["-l", str(level)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    got: dict[tuple[str, str, str], float] = {}
    pending = []  # trec_eval -q: a run's per-topic lines, then its summary with the runid
    for line in res.stdout.splitlines():
        name, topic, value = line.split()
        if name == "runid":
            got.update({(n, value, t): v for n, t, v in pending})
            pending = []
        elif topic != "all" and name != "num_q":
            pending.append((name, topic, float(value)))
    assert not pending
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(te), relevance_level=level)
    checked = 0
    for tag, run_scores in runs.items():
        ref = ev.evaluate(run_scores)
        for topic in qrels:
            for name in te:
                want = ref.get(topic, {}).get(name, 0.0)
                assert got[name, tag, topic] == pytest.approx(want, abs=1e-4), (name, tag, topic)  # printed to 4 places
                checked += 1
    assert checked == len(runs) * len(qrels) * len(te)


def test_rel_level_equals_explicit_rel(dl19):
    files = [str(f) for f in sorted((dl19 / "runs").glob("*.gz"))[:3]]
    a = runner.invoke(
        app, ["evaluate", str(dl19 / QRELS), *files, "-l", "2", "-m", "P.10", "-m", "map", "-q", "-f", "csv"]
    )
    b = runner.invoke(
        app, ["evaluate", str(dl19 / QRELS), *files, "-m", "P_10(rel=2)", "-m", "AP(rel=2)", "-q", "-f", "csv"]
    )
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    rows_a = [(r["measure"], r["system"], r["topic"], r["value"]) for r in csv.DictReader(a.stdout.splitlines())]
    rows_b = [(r["measure"], r["system"], r["topic"], r["value"]) for r in csv.DictReader(b.stdout.splitlines())]
    assert sorted(rows_a) == sorted(rows_b) and {r[0] for r in rows_a} == {"P(rel=2)@10", "AP(rel=2)"}
    lenient = runner.invoke(app, ["evaluate", str(dl19 / QRELS), *files, "-m", "P.10", "-q", "-f", "csv"])
    values = lambda out: np.array([float(r["value"]) for r in csv.DictReader(out.splitlines())])  # noqa: E731
    assert not np.array_equal(values(lenient.stdout), values(b.stdout)[: len(values(lenient.stdout))])


# -- issue 24, item 4: one name per measure in the console, the CSV and the HTML ----------------------


@pytest.mark.slow
def test_one_name_per_measure_everywhere(tmp_path):
    import re
    from pathlib import Path

    import irscale

    toy = Path(irscale.__file__).parent / "examples" / "toy"
    res = runner.invoke(
        app,
        ["compare", str(toy / "qrels.txt"), str(toy / "runs"), "-N", "5", "-t", "sign", "--out", str(tmp_path)],
        env={"COLUMNS": "250"},
    )
    assert res.exit_code == 0, res.output
    names = [
        "P@5",
        "R@5",
        "RR@5",
        "AP@5",
        "RBP(p=0.3)@5",
        "RBP(p=0.5)@5",
        "RBP(p=0.8)@5",
        "DCG(base=2)@5",
        "DCG(base=10)@5",
        "nDCG(base=2)@5",
        "nDCG(base=10)@5",
    ]
    labels = re.compile(r"\b(RBP_p\d+|n?DCG_b\d+)\b")  # the paper's short labels
    assert not labels.search(res.stdout), labels.search(res.stdout)
    t2 = list(csv.DictReader((tmp_path / "table2_tau_measure_vs_ranked_N5.csv").read_text().splitlines()))
    assert [r["measure"] for r in t2] == names
    html = (tmp_path / "report_N5.html").read_text()
    for name in names:
        assert name in res.stdout, name
        assert name.replace("&", "&amp;") in html, name
    assert not labels.search(html)


# -- issue 24, item 8 (part): small frictions ---------------------------------------------------------


def _toy():
    from pathlib import Path

    import irscale

    return Path(irscale.__file__).parent / "examples" / "toy"


def test_qrels_and_run_in_the_wrong_order():
    toy = _toy()
    res = runner.invoke(app, ["evaluate", str(toy / "runs" / "bm25.txt"), str(toy / "qrels.txt")])
    assert res.exit_code == 2 and "this looks like a run file" in res.output and "qrels come first" in res.output
    res = runner.invoke(app, ["evaluate", str(toy / "qrels.txt"), str(toy / "qrels.txt")])
    assert res.exit_code == 2 and "this looks like a qrels file" in res.output


def test_trec_eval_layout_with_a_format_is_refused_not_ignored():
    toy = _toy()
    for verb in (["evaluate"], ["transform", "-N", "5"]):
        res = runner.invoke(app, [*verb, str(toy / "qrels.txt"), str(toy / "runs"), "--trec-eval", "-f", "csv"])
        assert res.exit_code == 2 and "takes no --format csv" in res.output, verb


def test_subdirectories_and_padding_are_said(tmp_path):
    import shutil

    toy = _toy()
    (tmp_path / "sub").mkdir()
    shutil.copy(toy / "runs" / "bm25.txt", tmp_path)
    shutil.copy(toy / "runs" / "random.txt", tmp_path / "sub")
    res = runner.invoke(app, ["evaluate", str(toy / "qrels.txt"), str(tmp_path), "-m", "P@10"])
    assert res.exit_code == 0 and "subdirectories are not read (sub)" in res.stderr
    res = runner.invoke(app, ["transform", str(toy / "qrels.txt"), str(toy / "runs"), "-m", "P", "-N", "100"])
    assert res.exit_code == 0 and "longer than every run" in res.stderr and "padded" in res.stderr


# -- issue 24, item 5 (part): the recipes of "Reproducing official TREC numbers" (docs/guide.md) --------


def test_dl_recipes_equal_trec_eval_on_their_qrels(dl19):
    """The guide's two TREC DL recipes, each against pytrec-eval-terrier on the qrels that
    recipe stands for: (1) graded nDCG@10 on the qrels as they are (grade = gain); (2) the
    binary measures at level 2 and nDCG whose grade 1 gains nothing, which trec_eval computes
    on qrels where grade 1 is rewritten as 0."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")
    files = sorted((dl19 / "runs").glob("*.gz"))[::12]
    qrels, runs = _read(dl19, files)
    recipe2 = ["-l", "2", "-m", "map", "-m", "recip_rank", "-m", "P.10", "-m", "nDCG(gains=1:0)@10"]
    res = runner.invoke(
        app,
        [
            "evaluate",
            str(dl19 / QRELS),
            *map(str, files),
            "--float32-scores",
            "-q",
            "-f",
            "csv",
            "-m",
            "ndcg_cut.10",
            *recipe2,
        ],
    )
    assert res.exit_code == 0, res.output
    got = {(r["measure"], r["system"], r["topic"]): float(r["value"]) for r in csv.DictReader(res.stdout.splitlines())}
    no_grade_1 = {q: {d: (0 if g == 1 else g) for d, g in docs.items()} for q, docs in qrels.items()}
    checks = [
        (qrels, 1, "ndcg_cut_10", "nDCG@10"),
        (qrels, 2, "map", "AP(rel=2)"),
        (qrels, 2, "recip_rank", "RR(rel=2)"),
        (qrels, 2, "P_10", "P(rel=2)@10"),
        (no_grade_1, 2, "ndcg_cut_10", "nDCG(gains=1:0)@10"),
    ]
    for q, level, te, ours in checks:
        ev = pytrec_eval.RelevanceEvaluator(q, {te}, relevance_level=level)
        for tag, run in runs.items():
            ref = ev.evaluate(run)
            for topic in qrels:
                assert got[ours, tag, topic] == pytest.approx(ref.get(topic, {}).get(te, 0.0), abs=1e-9), (
                    ours,
                    tag,
                    topic,
                )
    differ = [got["nDCG@10", t, q] != got["nDCG(gains=1:0)@10", t, q] for t in runs for q in qrels]
    assert any(differ)  # the two nDCGs are not the same number


def test_err_refusal_advises_only_what_exists():
    """Issue 24 item 6 (part): the ERR refusal on 3 levels advised '--max-grade 1 or less'
    (the minimum is 1)."""
    from irscale.scales import space_for

    with pytest.raises(MeasureError) as info:
        pick_engine(space_for("ERR", 30, 2))
    text = str(info.value)
    assert "or less; max_grade" not in text and "or binary relevance (--max-grade 1 or --relevance lenient" in text
    with pytest.raises(MeasureError, match=r"fewer levels \(--max-grade 2 or less"):
        pick_engine(space_for("ERR", 30, 3))


def test_compare_help_says_out_writes_the_html_report():
    """Issue 24 item 3 (part)."""
    res = runner.invoke(app, ["compare", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "self-contained HTML file" in res.stdout and "scores_N<N>.csv" in res.stdout
