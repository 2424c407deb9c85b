"""CLI: output formats, trec_eval layout, demo, directories and globs."""

import json

import pytest
from typer.testing import CliRunner

from irscale.cli import app

runner = CliRunner()


def test_demo_runs_on_embedded_example():
    res = runner.invoke(app, ["demo"])
    assert res.exit_code == 0, res.output
    for name in ("bm25", "neural-rerank", "AP", "nDCG@10", "RBP(p=0.8)@10"):
        assert name in res.stdout
    assert "tied-scores' has no results for 1 qrels topic" in res.stderr


def test_formats(te_test):
    base = ["evaluate", str(te_test / "qrels.test"), str(te_test / "results.test"), "-m", "AP", "-m", "P@10"]
    tsv = runner.invoke(app, base + ["--format", "tsv"])
    assert tsv.exit_code == 0
    assert tsv.stdout.splitlines()[0] == "system\ttopic\tmeasure\tvalue"
    rows = [line.split("\t") for line in tsv.stdout.splitlines()[1:]]
    assert ["STANDARD", "all", "AP"] == rows[0][:3] and abs(float(rows[0][3]) - 0.1785) < 5e-5
    js = json.loads(runner.invoke(app, base + ["--format", "json", "-q"]).stdout)
    assert js["provenance"]["measures"] == ["AP", "P@10"] and len(js["scores"]) == 8  # 3 topics and all, 2 measures
    csv = runner.invoke(app, base + ["--format", "csv", "-q"])
    assert csv.stdout.count("\n") == 9


def test_trec_eval_layout_matches_trec_eval(te_test):
    """Lines of ``--trec-eval -q`` equal trec_eval's for the measures both print."""
    ms = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P_5", "ndcg_cut_10"]
    args = ["evaluate", str(te_test / "qrels.test"), str(te_test / "results.test"), "--trec-eval", "-q"]
    for m in ms:
        args += ["-m", m]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    expected = {
        line
        for line in (te_test / "out.test.aq").read_text().splitlines()
        if line.split("\t")[0].strip() in ms + ["runid", "num_q"]
    }
    assert set(res.stdout.splitlines()) == expected


def test_directory_and_glob(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n")
    for name, order in [("x", "a b"), ("y", "b a")]:
        docs = order.split()
        (tmp_path / "runs" / f"{name}.txt").write_text(
            "".join(f"1 Q0 {d} {i} {10 - i} {name}\n" for i, d in enumerate(docs))
        )
    d = runner.invoke(app, ["evaluate", str(tmp_path / "q.txt"), str(tmp_path / "runs"), "-m", "RR", "-f", "csv"])
    g = runner.invoke(
        app, ["evaluate", str(tmp_path / "q.txt"), str(tmp_path / "runs" / "*.txt"), "-m", "RR", "-f", "csv"]
    )
    assert d.exit_code == 0 and d.stdout == g.stdout
    assert "x,all,RR,1.0" in d.stdout and "y,all,RR,0.5" in d.stdout


@pytest.mark.slow
def test_measures_listing():
    res = runner.invoke(app, ["measures"])
    assert res.exit_code == 0 and "RBP" in res.stdout and "SBTO" in res.stdout


def test_per_topic_outputs_end_each_run_with_its_mean():
    import csv
    import io
    from pathlib import Path

    import irscale

    toy = Path(irscale.__file__).parent / "examples" / "toy"
    base = ["evaluate", str(toy / "qrels.txt"), str(toy / "runs"), "-m", "P@10", "-m", "AP", "-q"]
    means = irscale.evaluate(toy / "qrels.txt", toy / "runs", ["P@10", "AP"]).mean()
    rows = list(csv.DictReader(io.StringIO(runner.invoke(app, base + ["--format", "csv"]).stdout)))
    for system in means.index:
        mine = [r for r in rows if r["system"] == system]
        assert [r["topic"] for r in mine[-2:]] == ["all", "all"]  # after the topics, as trec_eval -q
        assert {r["measure"]: float(r["value"]) for r in mine[-2:]} == means.loc[system].to_dict()
    js = json.loads(runner.invoke(app, base + ["--format", "json"]).stdout)["scores"]
    assert sum(r["topic"] == "all" for r in js) == 2 * len(means)
    table = runner.invoke(app, base + ["--format", "table"], env={"COLUMNS": "200"}).stdout
    assert sum(" all " in line for line in table.splitlines()) == len(means)
