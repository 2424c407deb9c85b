"""irscale.compare and the CLI study commands, end to end on the embedded example."""

import json
from importlib import resources

import pytest
from typer.testing import CliRunner

import irscale
from irscale.cli import app
from irscale.report.study import canonical_names

TOY = resources.files("irscale") / "examples" / "toy"


def test_compare_api_tables_and_files(tmp_path):
    with pytest.warns(irscale.errors.IrscaleWarning, match="tied-scores"):  # the toy run lacks a topic
        table = irscale.evaluate(TOY / "qrels.txt", [str(TOY / "runs")], ["AP"])
    st = irscale.compare(table, ["P", "AP", "RBP(p=0.5)", "RR"], depth=5, tests=("ttest", "friedman", "sign"))
    name = canonical_names(st)  # the frames may hold labels (RBP_p05) or canonical names
    assert [name(m) for m in st.table2.measure] == ["P@5", "AP@5", "RBP(p=0.5)@5", "RR@5"]  # as computed
    t2 = st.table2.assign(measure=st.table2.measure.map(name)).set_index("measure")
    assert t2.loc["P@5", "tau_unq"] == pytest.approx(1.0) and t2.loc["RBP(p=0.5)@5", "tau_unq"] == pytest.approx(1.0)
    assert (t2.topic_tau_min > 1 - 1e-12).all()
    assert len(st.table4) == 6 and set(st.table4.columns) >= {"tau", "tau_ranked", "delta_pct"}
    assert len(st.changes) == 12
    p = st.changes[st.changes.measure == "P@5"]
    assert (p.s2ns == 0).all() and (p.ns2s == 0).all()
    assert (st.changes.sig - st.changes.s2ns + st.changes.ns2s == st.changes.sig_ranked).all()
    files = st.write(tmp_path)
    assert sorted(files) == sorted(tmp_path.iterdir())  # every file written is returned, once
    names = {f.name for f in files}
    assert {"report_N5.md", "report_N5.html", "provenance_N5.yaml", "tables5_6_significance_changes_N5.tex"} <= names
    report = (tmp_path / "report_N5.md").read_text()
    assert "table2_tau_measure_vs_ranked_N5.csv" in report and "| P@5 |" in report and "RBP_p05" not in report
    assert "- **Meaningful (original)**: " in report and "- **Recall-base dependent**: " in report
    data = json.loads((tmp_path / "table2_tau_measure_vs_ranked_N5.json").read_text())
    assert data["provenance"]["N"] == 5 and data["rows"][0]["measure"] == "P@5"
    rows = {r["measure"]: r for r in data["rows"]}
    assert rows["RBP(p=0.5)@5"]["tau_unq_display"] == "1.0000"  # exact beside it, whatever its last bit
    tex = (tmp_path / "table4_tau_between_measures_N5.tex").read_text()
    assert r"\begin{tabular}{llrrrrr}" in tex and r"\label{tab:irscale-table4-N5}" in tex and r"\toprule" in tex
    tex = (tmp_path / "tables5_6_significance_changes_N5.tex").read_text()
    assert "True" not in tex and "False" not in tex and r"\label{tab:irscale-table5-N5}" in tex
    html = (tmp_path / "report_N5.html").read_text()
    assert '<section id="table6"' in html and "RBP(p=0.5)" in html and "RBP_p05" not in html


@pytest.mark.slow
def test_cli_compare_and_study(tmp_path):
    cli = CliRunner()
    res = cli.invoke(
        app,
        [
            "compare",
            str(TOY / "qrels.txt"),
            str(TOY / "runs"),
            "-N",
            "5",
            "-m",
            "AP",
            "-m",
            "P",
            "-t",
            "ttest",
            "--out",
            str(tmp_path / "c"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Table 2/3" in res.stdout and "Student's t Test" in res.stdout
    assert (tmp_path / "c" / "report_N5.md").exists() and (tmp_path / "c" / "report_N5.html").exists()
    assert f"wrote {len(list((tmp_path / 'c').iterdir()))} files" in res.stderr  # counts what it wrote
    res = cli.invoke(app, ["compare", str(TOY / "qrels.txt"), str(TOY / "runs"), "-t", "bogus"])
    assert res.exit_code == 2 and "--test must be one of" in res.stderr
    res = cli.invoke(
        app,
        [
            "study",
            "trec8-like",
            str(TOY / "qrels.txt"),
            str(TOY / "runs"),
            "--depths",
            "5,10",
            "--no-figures",  # (each N's figures: tests/test_report_figures.py)
            "--out",
            str(tmp_path / "s"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Table 2 (unq)" in res.stdout and "Table 3 (mid)" in res.stdout
    assert (tmp_path / "s" / "report_N10.md").exists() and (tmp_path / "s" / "report_N5.md").exists()
    assert (tmp_path / "s" / "table2_tau_unq.csv").exists()
