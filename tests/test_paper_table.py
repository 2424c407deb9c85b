"""The table that goes into the paper, and whole reports (issue 37), on all 37 runs of TREC
DL 2019 at N = 20 with four measures, the paper's eight and the three randomised tests,
Holm, and a baseline: every table of the report whole (HTML, Markdown, LaTeX), every file a report
names exists, the comparisons with baselines one row per (measure, scale, baseline,
system) with the tests as columns, ``irscale table`` compiled by pdflatex in a two-column
article without an overfull box, its means equal to the means file, its marks equal to the
study's own decisions (re-derived here from the written p-values and counts), and the
notebook display. The study is written once for the module (about a minute)."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, need
from typer.testing import CliRunner

from irscale.cli import app

DL19 = DATA / "dl19"
BASELINE = "bm25base_p"
N = 20
# four of the paper's eleven measures (one binary set measure, AP, a graded gain measure, RBP): the
# suite's time; bench/report_size.py runs all eleven
MEASURES = ["-m", "P", "-m", "AP", "-m", "nDCG(base=10)", "-m", "RBP(p=0.8)"]
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("paper_table")]


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory) -> Path:
    need(DL19)
    out = tmp_path_factory.mktemp("paper") / "study"
    args = [
        str(DL19 / "qrels.dl19-passage.txt"),
        str(DL19 / "runs"),
        "-N",
        str(N),
        *MEASURES,
        "-t",
        "paper",
        "-t",
        "randomised",
        "--correction",
        "holm",
        "-b",
        BASELINE,
        "--out",
        str(out),
    ]
    p = subprocess.run([sys.executable, "-m", "irscale", "compare", *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _cli(*args: str) -> SimpleNamespace:
    """``irscale ARGS`` in this process (typer's runner): returncode, stdout, stderr."""
    res = CliRunner().invoke(app, list(args))
    return SimpleNamespace(returncode=res.exit_code, stdout=res.stdout, stderr=res.stderr)


# -- whole reports ----------------------------------------------------------------------------------


def test_every_file_a_report_names_exists(study_dir):
    names = set()
    pattern = re.compile(r"[A-Za-z0-9_.-]+\.(?:csv|json|tex|svg|pdf|yaml|html|md)\b")
    for p in study_dir.iterdir():
        if p.suffix in (".html", ".md", ".tex", ".json", ".yaml"):
            text = p.read_text(encoding="utf-8").replace("\\_", "_")  # LaTeX's escaped underscores
            text = re.sub(r"<style>.*?</style>", "", text, flags=re.S)  # (CSS selectors such as pre.yaml)
            names |= set(pattern.findall(text))
    names = {n for n in names if not n.startswith(".") and "<N>" not in n}
    assert len(names) > 30  # the reports do name their files
    missing = sorted(n for n in names if not (study_dir / n).exists())
    assert not missing, f"named by a report but not written: {missing}"


def test_every_table_is_whole(study_dir):
    means = _csv(study_dir / f"means_original_vs_ranked_N{N}.csv")
    pairs = _csv(study_dir / f"comparisons_with_baselines_N{N}.csv")
    assert len(means) == 4 * 37
    assert len(pairs) == 4 * 2 * 36  # one row per (measure, scale, system): tests are columns
    for f in study_dir.glob("*"):
        if f.suffix in (".html", ".md", ".tex"):
            text = f.read_text(encoding="utf-8")
            assert "rows are shown" not in text, f"{f.name} cuts a table"
    html = (study_dir / f"report_N{N}.html").read_text(encoding="utf-8")
    for key, frame in (("means", means), ("pairs", pairs)):
        section = html.split(f'<section id="{key}"', 1)[1].split("</section>", 1)[0]
        body = section.split("<tbody>", 1)[1]
        rows = [r for r in body.split("<tr")[1:] if 'class="group"' not in r.split(">", 1)[0]]
        assert len(rows) == len(frame), key
    md = (study_dir / f"report_N{N}.md").read_text(encoding="utf-8")
    for system in set(pairs["system_2"]):  # every system of the baseline table in the Markdown
        assert f"| {system} |" in md
    tex = (study_dir / f"comparisons_with_baselines_N{N}.tex").read_text(encoding="utf-8")
    first = [line for line in tex.splitlines() if re.match(r"^\w.* & ", line)]
    assert len({line.split(" & ", 1)[0] for line in first}) >= 36  # every system has its rows


def test_the_tests_are_columns_and_the_effects_written_once(study_dir):
    pairs = _csv(study_dir / f"comparisons_with_baselines_N{N}.csv")
    tests = ["sign", "ranksum", "signrank", "ttest", "anova1", "kruskal", "anova2", "friedman"]
    tests += ["permutation", "rtukey", "bootstrap"]
    for t in tests:
        for field in ("p_value", "p_adjusted", "significant", "meaningful", "rests_on_incomparable"):
            assert f"{field}_{t}" in pairs.columns
    assert list(pairs.columns).count("diff") == 1 and "test" not in pairs.columns
    # Holm over the 36 comparisons of each (measure, scale), Tukey-type tests as they are
    from statsmodels.stats.multitest import multipletests

    for (_, _), g in pairs.groupby(["measure", "scale"]):
        p = g["p_value_ttest"].astype(float).to_numpy()
        assert np.allclose(g["p_adjusted_ttest"].astype(float), multipletests(p, method="holm")[1], rtol=1e-12)
        assert (g["p_adjusted_rtukey"] == g["p_value_rtukey"]).all()


def test_means_marks_come_from_one_test(study_dir):
    md = (study_dir / f"report_N{N}.md").read_text(encoding="utf-8")
    section = md.split("## Mean scores", 1)[1].split("\n## ", 1)[0]
    assert "by Student's t Test" in section
    for other in ("by Sign Test", "by Paired Randomisation Test"):
        assert other not in section


def test_latex_report_numbers_tables_as_their_files(study_dir, tmp_path):
    if not shutil.which("pdflatex"):
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-base, texlive-latex-recommended)")
    work = tmp_path / "tex"
    shutil.copytree(study_dir, work)
    p = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", f"report_N{N}.tex"], cwd=work, capture_output=True, text=True
    )
    p = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", f"report_N{N}.tex"], cwd=work, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stdout[-2000:]
    tex = (work / f"report_N{N}.tex").read_text(encoding="utf-8")
    widths = re.findall(r"\\includegraphics\[width=([^,\]]+)", tex)
    assert len(widths) == 5 and set(widths) <= {"3.35in", "6.9in"}  # each figure at its print width, unscaled
    log = (work / f"report_N{N}.log").read_text(encoding="utf-8", errors="replace")
    assert "Overfull" not in log and "too large" not in log
    aux = (work / f"report_N{N}.aux").read_text(encoding="utf-8")
    number = dict(re.findall(r"\\newlabel\{tab:irscale-(\w+)-N\d+\}\{\{(\d+)\}", aux))
    assert number["table2"] == "2" and number["table4"] == "4"
    assert number["table5"] == "5" and number["table6"] == "6"


# -- irscale table ----------------------------------------------------------------------------------


def _compiled(tmp_path: Path, tables: list[str]) -> str:
    if not shutil.which("pdflatex"):
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-base, texlive-latex-recommended)")
    doc = tmp_path / "paper.tex"
    doc.write_text(
        "\\documentclass[twocolumn]{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
        "\\begin{document}\n" + "\n".join(tables) + "\n\\end{document}\n",
        encoding="utf-8",
    )
    p = subprocess.run(["pdflatex", "-interaction=nonstopmode", doc.name], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:]
    return (tmp_path / "paper.log").read_text(encoding="utf-8", errors="replace")


def test_table_compiles_in_a_two_column_article_without_overfull_boxes(study_dir, tmp_path):
    runs = [
        ("-m", "AP", "-m", "nDCG(base=10)", "-m", "P", "-m", "RBP(p=0.8)", "--top", "8"),
        ("-m", "AP", "-m", "nDCG(base=10)", "-b", BASELINE, "-t", "permutation"),
        ("--scale", "ranked", "-m", "AP", "-m", "P"),
        ("--systems", "bm25base_p,idst_bert_p1,p_bert,TUA1-1", "-m", "AP", "-m", "P"),
        (),  # every measure, every system
    ]
    tables = []
    for extra in runs:
        p = _cli("table", str(study_dir), *extra)
        assert p.returncode == 0, (extra, p.stderr)
        assert p.stdout.startswith("% irscale") and "booktabs" in p.stdout.splitlines()[0]
        tables.append(p.stdout)
    log = _compiled(tmp_path, tables)
    assert "Overfull" not in log, [line for line in log.splitlines() if "Overfull" in line]
    assert "\\begin{table}" in tables[3]  # two measures, four systems: one column wide


def test_table_means_equal_the_means_file(study_dir):
    p = _cli("table", str(study_dir), "--format", "csv", "--decimals", "4")
    assert p.returncode == 0, p.stderr
    import io
    import json

    got = pd.read_csv(io.StringIO(p.stdout), dtype={"system": str, "shown": str})
    means = _csv(study_dir / f"means_original_vs_ranked_N{N}.csv").set_index(["measure", "system"])
    prov = json.loads((study_dir / f"table2_tau_measure_vs_ranked_N{N}.json").read_text())["provenance"]
    assert len(got) == 4 * 37 * 2
    for r in got.itertuples():
        want = float(means.loc[(r.measure, r.system), f"mean_{r.scale}"])
        if r.scale == "ranked":  # phi / |V|: the rank map's size from the provenance
            want /= prov["rank_maps"][r.measure]["size"]
        assert r.mean == want, (r.measure, r.system, r.scale)
        assert abs(float(r.shown) - want) <= 0.5e-4 + 1e-12 and len(r.shown.split(".")[1]) == 4


def test_table_marks_are_the_studys_decisions(study_dir):
    """Against the baseline: the marks are the comparisons with baselines' significant_ttest
    (Holm over the 36 comparisons), read from the file; letters: each measure's count of
    significant pairs is Tables 5/6's sig_adjusted."""
    import irscale

    st = irscale.read_study(study_dir)
    pairs = _csv(study_dir / f"comparisons_with_baselines_N{N}.csv")
    table = st.table(measures=["AP", "P"], baseline=BASELINE)
    f = table.frame
    for (m, sc), g in f.groupby(["measure", "scale"]):
        ref = pairs[(pairs["measure"] == m) & (pairs["scale"] == sc)].set_index("system_2")
        for s, marks in zip(g["system"], g["marks"]):
            if s == BASELINE:
                assert marks == ""
                continue
            sig = ref.loc[s, "significant_ttest"] == "True"
            better = float(ref.loc[s, "diff"]) > 0
            assert marks == ("" if not sig else "+" if better else "-"), (m, sc, s)
    changes = _csv(study_dir / f"tables5_6_significance_changes_N{N}.csv")
    letters = st.table(measures=["AP", "P", "nDCG(base=10)"], test="ttest")
    for m in ("AP@20", "P@20", "nDCG(base=10)@20"):
        for sc, col in (("original", "sig_adjusted"), ("ranked", "sig_ranked_adjusted")):
            part = letters.frame[(letters.frame["measure"] == m) & (letters.frame["scale"] == sc)]
            count = sum(_n_letters(x) for x in part["marks"])
            want = changes[(changes["measure"] == m) & (changes["test"] == "Student's t Test")][col].iloc[0]
            assert count == int(want), (m, sc)


def _n_letters(marks: str) -> int:
    from irscale.report.paper import _letter

    alphabet = [_letter(k) for k in range(200)]
    n = 0
    for part in filter(None, marks.split(",")):
        if "–" in part:
            a, b = part.split("–")
            n += alphabet.index(b) - alphabet.index(a) + 1
        else:
            n += 1
    return n


def test_table_in_a_notebook_and_markdown(study_dir):
    import irscale

    table = irscale.read_study(study_dir).table(measures=["AP"], top=5)
    html = table._repr_html_()
    assert html.startswith('<table class="irscale-paper">') and html.count("<tr>") == 5 + 2
    assert "φ" in html and "<caption>" in html
    md = table.to_markdown()
    assert md.count("\n| (") == 5


def test_table_refuses_in_one_line(study_dir, tmp_path):
    for args, words in (
        (("-m", "ERR"), "no measure 'ERR'"),
        (("-m", "R"), "no measure 'R'"),
        (("--systems", "nope"), "no system 'nope'"),
        (("-b", "nope"), "unknown baseline"),
        (("-t", "zz"), "test"),
        (("--by", "AP"), "--top"),
    ):
        p = _cli("table", str(study_dir), *args)
        assert p.returncode != 0 and words in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
    p = _cli("table", str(tmp_path))
    assert p.returncode != 0 and "no study here" in p.stderr


def test_table_out_writes_the_file_and_says_so(study_dir, tmp_path):
    out = tmp_path / "t.md"
    p = _cli("table", str(study_dir), "-m", "AP", "--top", "3", "--format", "markdown", "-o", str(out))
    assert p.returncode == 0 and p.stdout == ""
    assert p.stderr.strip() == f"wrote {out} (markdown, 3 systems, 1 measure)"
    assert out.read_text(encoding="utf-8").count("\n| (") == 3


def test_csv_reads_back(study_dir):
    p = _cli("table", str(study_dir), "-m", "AP", "--format", "csv")
    rows = list(csv.DictReader(p.stdout.splitlines()))
    assert len(rows) == 37 * 2 and set(rows[0]) >= {"system", "measure", "scale", "mean", "shown", "marks"}


def test_a_family_name_must_name_one_measure():
    from irscale.errors import ArgumentError
    from irscale.report.paper import _measures

    study = SimpleNamespace(measures=("AP@20", "nDCG(base=2)@20", "nDCG(base=10)@20"), N=20)
    assert _measures(study, ["map", "nDCG(base=10)", "AP@20"]) == ["AP@20", "nDCG(base=10)@20"]
    with pytest.raises(ArgumentError, match="several nDCG: nDCG\\(base=2\\)@20, nDCG\\(base=10\\)@20"):
        _measures(study, ["nDCG"])
