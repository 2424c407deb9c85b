"""The study's report (irscale.report.study, .latex, .html) on fabricated studies: every
table titled, captioned and explained; canonical measure names; LaTeX that compiles; CSV
and JSON with exact and display values; YAML provenance; one self-contained HTML file,
opened in headless Chromium (skipped, with the reason, where no Chromium is installed)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from irscale.report import files as rf
from irscale.report import study as rs
from irscale.report.html import html_report, inline_svg
from irscale.report.latex import latex_escape, latex_standalone, latex_table
from irscale.study import Study

MEASURES = ("P", "AP", "RBP(p=0.5)", "nDCG(base=2)")
LABELS = ("P", "AP", "RBP_p05", "nDCG_b02")  # what the study's frames hold today
RB = {"P": False, "AP": True, "RBP_p05": False, "nDCG_b02": True}
SYSTEMS = ("bm25", "dfr_b&c", "ql_dir%", "neural#1")  # LaTeX's special characters in names
TESTS = ("Sign Test", "Student's t Test")


def fake_study(extras: bool = True, changes_extra: bool = False, n_free: int | None = None) -> Study:
    """A small study built by hand: Tables 2-6 as compare() makes them, and with ``extras``
    the parts the integrator adds (means, pairs against the baseline bm25, measure-free)."""
    rng = np.random.default_rng(7)
    t2 = pd.DataFrame(
        {
            "measure": LABELS,
            "tau_unq": [1.0, 0.8219, 0.9999999999999999, 0.9759],
            "tau_ap_unq": [1.0, 0.7, 1.0, 0.95],
            "tau_mid": [1.0, 0.83, 1.0, 0.97],
            "topic_tau_min": [1.0, 0.9999999999999998, 1.0, 1.0],
            "topic_tau_max": [1.0] * 4,
            "rb_dependent": [RB[m] for m in LABELS],
        }
    )
    rows = []
    for a, b in combinations(LABELS, 2):
        t, r = rng.uniform(0.6, 1), rng.uniform(0.6, 1)
        rows.append(
            {
                "measure_1": a,
                "measure_2": b,
                "tau": t,
                "tau_ranked": r,
                "delta_pct": 100 * (r - t) / t,
                "tau_ap": t - 0.1,
                "tau_ap_ranked": r - 0.1,
            }
        )
    t4 = pd.DataFrame(rows)
    rows = []
    for m in LABELS:
        for test, ordinal in zip(TESTS, (True, False)):
            sig, s2ns, ns2s = 4, int(rng.integers(0, 2)), int(rng.integers(0, 2))
            row = {
                "measure": m,
                "test": test,
                "ordinal": ordinal,
                "sig": sig,
                "s2ns": s2ns,
                "s2ns_pct": 100 * s2ns / sig,
                "ns2s": ns2s,
                "ns2s_pct": 100 * ns2s / sig,
                "delta_pct": 100 * (s2ns + ns2s) / sig,
                "sig_ranked": sig - s2ns + ns2s,
                "meaningful": ordinal or m == "P",
                "meaningful_ranked": not (RB[m] and not ordinal),
            }
            if changes_extra:
                row.update({"correction": "holm", "sig_adjusted": sig - 1, "flagged_incomparable": 1})
            rows.append(row)
    changes = pd.DataFrame(rows)
    prov = {
        "irscale_version": "0.1.0",
        "N": 10,
        "relevance": "graded",
        "measures": list(MEASURES),
        "tests": ["sign", "ttest"],
        "alpha": 0.05,
        "systems": len(SYSTEMS),
        "topics": [str(t) for t in range(401, 411)],
        "theory": {"P": {"text": "P@10 (2 levels): interval scale under the set order"}},
        "qrels": {"path": "/data/qrels.txt", "sha256": "ab" * 32},
        "runs": list(SYSTEMS),
        "seconds": 1.5e-05,
        "note": "yes",
        "empty": {},
        "nothing": None,
    }
    st = Study(10, MEASURES, SYSTEMS, tuple(str(t) for t in range(401, 411)), t2, t4, changes, prov)
    if extras:
        means = []
        for m in MEASURES:
            for scale in ("original", "ranked"):
                for s in SYSTEMS:
                    mu = rng.uniform(0.1, 0.6) * (1 if scale == "original" else 1000)
                    means.append(
                        {"measure": m, "scale": scale, "system": s, "mean": mu, "ci_low": mu * 0.9, "ci_high": mu * 1.1}
                    )
        st.means = pd.DataFrame(means)
        pairs = []
        for m in LABELS:  # labels here: the renderer names them canonically
            for scale in ("original", "ranked"):
                for s in SYSTEMS[1:]:
                    p = float(rng.uniform(0, 0.1))
                    pairs.append(
                        {
                            "measure": m,
                            "scale": scale,
                            "test": "ttest",
                            "system_1": "bm25",
                            "system_2": s,
                            "diff": rng.normal(0, 0.05),
                            "ci_low": -0.1,
                            "ci_high": 0.1,
                            "d_z": 0.3,
                            "rank_biserial": -0.2,
                            "p_value": p / 3,
                            "p_adjusted": p,
                            "significant": p < 0.05,
                            "meaningful": scale == "ranked" or m == "P",
                            "incomparable_share": 0.3,
                            "rests_on_incomparable": p < 0.02,
                        }
                    )
        pairs[0].update({"p_value": 1e-9, "p_adjusted": 3e-9, "significant": True})
        st.pairs = pd.DataFrame(pairs)
        n = n_free or len(SYSTEMS)
        names = list(SYSTEMS) + [f"sys{i}" for i in range(max(0, n - len(SYSTEMS)))]
        free = []
        for a, b in combinations(names, 2):
            inc = int(rng.integers(0, 11))
            bet = int(rng.integers(0, 11 - inc))
            wor = int(rng.integers(0, 11 - inc - bet))
            free.append(
                {
                    "system_1": a,
                    "system_2": b,
                    "better": bet,
                    "worse": wor,
                    "equal": 10 - inc - bet - wor,
                    "incomparable": inc,
                    "incomparable_share": inc / 10,
                    "sign_p": float(rng.uniform()),
                }
            )
        st.measure_free = pd.DataFrame(free)
    return st


def keys(tables):
    return [t.key for t in tables]


# -- the tables --------------------------------------------------------------------------------------


def test_tables_without_the_new_parts():
    st = fake_study(extras=False)
    tables = rs.report_tables(st)
    assert keys(tables) == ["table2", "table4", "table5", "table6"]
    st.means = st.pairs = st.measure_free = None  # None means absent too
    assert keys(rs.report_tables(st)) == ["table2", "table4", "table5", "table6"]


def test_every_table_has_a_title_caption_and_explained_columns():
    for st in (fake_study(), fake_study(changes_extra=True)):
        tables = rs.report_tables(st)
        assert keys(tables) == [
            "means",
            "table2",
            "table4",
            "table5",
            "table6",
            "pairs",
            "measure_free_summary",
            "measure_free_histogram",
            "measure_free_top",
        ]
        for t in tables:
            assert t.title and t.caption and "_" not in t.title, t.key
            assert t.label.startswith("tab:irscale-") and t.label.endswith("N10")
            for c in t.columns:
                assert c.explain.endswith(".") and len(c.explain) > 15, (t.key, c.key)
                assert "does not describe" not in c.explain, (t.key, c.key)  # every column is known
            assert set(t.explanations) == {c.head for c in t.shown}
    t5 = rs.report_tables(fake_study(changes_extra=True))[3]
    assert {"Sig (adjusted)", "Flagged incomparable"} <= set(t5.explanations)
    assert "Correction" not in t5.explanations and "correction of the pairwise p-values: holm" in t5.notes[0]
    st = fake_study(changes_extra=True)
    st.changes.loc[st.changes.test == "Sign Test", "correction"] = "none"  # two corrections: a column
    assert "Correction" in rs.report_tables(st)[3].explanations


def test_tables_5_and_6_split_the_changes_by_recall_base():
    t5, t6 = (t for t in rs.report_tables(fake_study()) if t.key in ("table5", "table6"))
    assert set(t5.frame.measure) == {"P", "RBP(p=0.5)"} and set(t6.frame.measure) == {"AP", "nDCG(base=2)"}
    assert t5.paper == "Table 5" and t6.paper == "Table 6"


def test_canonical_measure_names_everywhere(tmp_path):
    st = fake_study()
    files = rf.write_report(st, tmp_path)
    for f in files:
        text = f.read_text()
        assert "RBP_p05" not in text and "nDCG_b02" not in text, f.name
    t2 = pd.read_csv(tmp_path / "table2_tau_measure_vs_ranked_N10.csv")
    assert list(t2.measure) == list(MEASURES)


def test_unknown_columns_are_shown_and_said_to_be_undescribed():
    st = fake_study(extras=False)
    st.table2["novel_stat"] = 0.5
    t2 = rs.report_tables(st)[0]
    assert "does not describe" in t2.column("novel_stat").explain
    assert "novel stat" in rs.markdown_table(t2)


def test_values_read_as_the_paper_prints_them():
    f = rs.format_value
    assert f(0.9999999999999999, "float") == "1.0000" and f(-0.0, "float") == "0.0000"
    assert f(-1e-9, "float") == "-1e-09"  # nonzero below 0.00005: significant digits (test_report_format.py)
    assert f(12.5, "pct") == "12.50%" and f(-5.13170, "signed_pct") == "-5.13%" and f(0.0, "signed_pct") == "+0.00%"
    assert f(True, "bool") == "yes" and f(np.bool_(False), "bool") == "no"
    assert f(True, "assumes") == "ordinal" and f(False, "assumes") == "interval"
    assert f(3e-9, "p") == "<0.0001" and f(0.04, "p") == "0.0400" and f(0.3, "share") == "30.00%"
    assert f(np.nan, "float") == f(None, "int") == rs.MISSING and f(np.int64(7), "int") == "7"


def test_means_side_by_side_with_best_bold_and_significance_marks():
    st = fake_study()
    means = rs.report_tables(st)[0]
    assert list(means.frame.columns[:3]) == ["measure", "system", "baseline"]
    assert {"mean_original", "mean_ranked", "ci_low_ranked", "rank_original", "rank_ranked"} <= set(means.frame)
    assert len(means.frame) == len(MEASURES) * len(SYSTEMS)
    best = rs.best_cells(means)
    for _, rows in means.frame.groupby("measure", sort=False):  # exactly the highest mean of each measure
        for col in ("mean_original", "mean_ranked"):
            top = {int(i) for i in rows.index[rows[col] == rows[col].max()]}
            assert {i for i, k in best if k == col and i in set(rows.index)} == top
    md = rs.markdown_table(means)
    assert "**" in md and "bm25 (baseline)" in md and re.search(r"\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]", md)
    sig = st.pairs[st.pairs.significant]
    assert len(means.marks) == len(sig) and means.legend[0][0] == "†"
    assert "baseline bm25" in means.legend[0][1] and "Student's t Test" in means.legend[0][1]


def test_pairs_table_raw_and_adjusted_p_values():
    pairs = [t for t in rs.report_tables(fake_study()) if t.key == "pairs"][0]
    assert pairs.group == ("measure", "scale", "system_1")  # the tests are columns, not rows
    md = rs.markdown_table(pairs)
    header = md.splitlines()[0]
    assert "| Difference [CI] |" in header and "<0.0001" in md
    assert "| t |" in header and "ttest" not in md  # one p-value column per test (the fake runs the t-test)
    frame = pairs.frame  # the files: raw and adjusted p-values of each test
    assert {"p_value_ttest", "p_adjusted_ttest", "significant_ttest"} <= set(frame.columns)
    assert "Student's t Test" in " ".join(c.explain for c in pairs.columns)


def test_measure_free_is_summarised_not_dumped(tmp_path):
    st = fake_study(n_free=127)  # 8,001 pairs of systems
    files = rf.write_report(st, tmp_path)
    full = pd.read_csv(tmp_path / "measure_free_pairs_N10.csv")
    assert len(full) == 127 * 126 // 2
    html = (tmp_path / "report_N10.html").read_text()
    assert html.count("<tr") < 400 and len(html) < 1_000_000
    summary = [t for t in rs.report_tables(st) if t.key == "measure_free_summary"][0]
    stats = dict(zip(summary.frame.statistic, summary.frame.exact))
    assert stats["system pairs"] == len(full)
    assert stats["mean incomparable share"] == pytest.approx(full.incomparable_share.mean())
    top = [t for t in rs.report_tables(st) if t.key == "measure_free_top"][0]
    assert len(top.frame) == 10 and top.frame.incomparable_share.iloc[0] == full.incomparable_share.max()
    tex = (tmp_path / "measure_free_summary_N10.tex").read_text()
    assert tex.count(r"\begin{table}") == 3 and any(f.name == "measure_free_summary_N10.tex" for f in files)


def test_long_tables_say_what_they_leave_out():
    st = fake_study()
    st.pairs = pd.concat([st.pairs] * 40, ignore_index=True)  # 960 rows
    pairs = [t for t in rs.report_tables(st, max_rows=100) if t.key == "pairs"][0]
    assert len(pairs.rows) == 100 and "first 100 of 960 rows" in pairs.truncated
    assert "first 100 of 960 rows" in rs.markdown_section(pairs)
    assert "first 100 of 960 rows" in latex_table(pairs)


# -- LaTeX ------------------------------------------------------------------------------------------


def test_latex_is_booktabs_captioned_labelled_and_right_aligned():
    st = fake_study()
    tables = {t.key: t for t in rs.report_tables(st)}
    tex = latex_table(tables["table2"])
    assert all(x in tex for x in (r"\toprule", r"\midrule", r"\bottomrule", r"\label{tab:irscale-table2-N10}"))
    assert r"\caption[Kendall's $\tau$ between each measure and its ranked version]" in tex
    assert r"\begin{tabular}{lrrrrrc}" in tex and r"\hline" not in tex
    assert "True" not in tex and "False" not in tex and "yes" in tex and "no" in tex
    assert "RBP(p=0.5) & 1.0000" in tex and "0.9999" not in tex
    assert (
        r"\textit{Columns.} \textbf{Measure}: the measure" in tex
        and "Recall-base dependent" not in tex.split(r"\textit{Columns.}")[0]
    )  # the header is short (RB-dep.), the note says what it means
    means = latex_table(tables["means"])
    assert r"\textbf{" in means and r"$^{\dagger}$" in means and r"$^{\dagger}$ significantly different" in means
    assert r"dfr\_b\&c" in means and r"ql\_dir\%" in means and r"neural\#1" in means
    t5 = latex_table(tables["table5"])
    assert r"\multicolumn{9}{@{}l}{\textit{P}}" in t5 and "ordinal" in t5 and "interval" in t5


def test_latex_escape():
    assert latex_escape(r"a_b&c%d$e#f{g}h~i^j\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i"
        r"\textasciicircum{}j\textbackslash{}k"
    )
    assert latex_escape("τ → Δ% “x” – α") == r"$\tau$ $\rightarrow$ $\Delta$\% ``x'' -- $\alpha$"


def test_long_latex_tables_continue_with_the_same_number():
    st = fake_study()
    st.pairs = pd.concat([st.pairs] * 4, ignore_index=True)
    pairs = [t for t in rs.report_tables(st) if t.key == "pairs"][0]
    tex = latex_table(pairs, part_rows=20)
    parts = tex.count(r"\begin{table}")
    assert parts > 1 and tex.count(r"\addtocounter{table}{-1}") == parts - 1 and tex.count(r"\label{") == 1
    assert "(continued)" in tex


@pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex is not installed (texlive-latex-base and texlive-latex-recommended give it and booktabs)",
)
def test_latex_compiles(tmp_path):
    st = fake_study(changes_extra=True)
    st.pairs = pd.concat([st.pairs] * 3, ignore_index=True)
    (tmp_path / "doc.tex").write_text(latex_standalone(rs.report_tables(st) + rs.tau_report_tables([st])))
    res = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout[-3000:]
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert "Float too large" not in log and "Missing character" not in log


# -- CSV, JSON, YAML ------------------------------------------------------------------------------


def test_csv_has_exact_and_display_values(tmp_path):
    rf.write_report(fake_study(), tmp_path)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "table2_tau_measure_vs_ranked_N10.csv").read_text())))
    rbp = next(r for r in rows if r["measure"] == "RBP(p=0.5)")
    assert float(rbp["tau_unq"]) == 0.9999999999999999 and rbp["tau_unq_display"] == "1.0000"
    assert rbp["rb_dependent"] == "False" and "rb_dependent_display" not in rbp
    header = (tmp_path / "table2_tau_measure_vs_ranked_N10.csv").read_text().splitlines()[0].split(",")
    assert header.index("tau_unq_display") == header.index("tau_unq") + 1
    ch = pd.read_csv(tmp_path / "tables5_6_significance_changes_N10.csv")
    assert len(ch) == len(LABELS) * len(TESTS) and ch.delta_pct_display.str.endswith("%").all()


def test_json_has_explanations_provenance_and_no_nan(tmp_path):
    st = fake_study()
    st.table2.loc[0, "tau_mid"] = np.nan
    rf.write_report(st, tmp_path)

    def no_nan(c):
        pytest.fail(f"{c} is not JSON")

    for f in tmp_path.glob("*.json"):
        data = json.loads(f.read_text(), parse_constant=no_nan)
        assert data["provenance"]["N"] == 10 and data["title"] and data["caption"] and data["columns"]
        assert set(data["rows"][0]) <= set(data["columns"]), f.name
    t2 = json.loads((tmp_path / "table2_tau_measure_vs_ranked_N10.json").read_text())
    assert t2["rows"][0]["tau_mid"] is None and t2["rows"][0]["tau_mid_display"] == ""
    assert t2["rows"][0]["measure"] == "P" and t2["label"] == "tab:irscale-table2-N10"


def test_yaml_emitter_round_trips():
    yaml = pytest.importorskip("yaml")  # PyYAML is a test oracle only: irscale writes YAML itself
    data = {
        "command": "irscale compare q.txt runs/ -N 5 --out 'x y'",
        "strings": [
            "yes",
            "No",
            "null",
            "1e-05",
            "0x1F",
            "a: b",
            "#x",
            "",
            " lead",
            "- x",
            "[x]",
            "{x}",
            "tab\there",
            "line\nbreak",
            "ünï ✓",
            "@x",
            "`x`",
            "x #y",
            "~",
            "2024-01-01",
            "3.0",
            "RBP(p=0.5)@5",
            "*ref",
            "&anchor",
            "!tag",
            "%x",
            "'q'",
            '"dq"',
            "?",
            "|",
            ">",
            "/data/qrels.txt",
            ".5",
            ".nan",
            "nel\x85x",
            "ls\u2028ps\u2029",
            "del\x7f",
            "bom\ufeff",
            "emoji 😀",
            "back\\slash",
            "N",
            "n",
            "Off",
            "=",
            "a,b",
            "C:\\x",
        ],
        "numbers": [0, -3, 1.5, 1e-05, 1e16, -2.5e-300, 123456789.123],
        "flags": [True, False, None],
        "nested": {"a": {"b": [1, {"c": "d"}, []], "e": {}}, "list of lists": [[1, 2], ["x"]]},
        "np": [np.int64(3), np.float64(0.25), np.bool_(True)],
        "weird key: here": 1,
        "yes": "key",
    }
    back = yaml.safe_load(rs.to_yaml(data))
    want = json.loads(json.dumps(data, default=lambda o: o.item()))
    assert back == want
    nan = yaml.safe_load(rs.to_yaml({"x": float("nan"), "y": float("inf"), "z": -float("inf")}))
    assert math.isnan(nan["x"]) and nan["y"] == math.inf and nan["z"] == -math.inf


def test_provenance_yaml_renders_whatever_the_provenance_holds():
    yaml = pytest.importorskip("yaml")
    st = fake_study()
    text = rs.provenance_yaml(st, command="irscale compare q r --out x")
    back = yaml.safe_load(text)
    assert back["command"] == "irscale compare q r --out x" and back["runs"] == list(SYSTEMS)
    assert back["qrels"] == {"path": "/data/qrels.txt", "sha256": "ab" * 32} and back["seconds"] == 1.5e-05
    assert back["note"] == "yes" and back["empty"] == {} and back["nothing"] is None
    st.provenance["command"] = "recorded"
    assert yaml.safe_load(rs.provenance_yaml(st, command="given"))["command"] == "recorded"


# -- the files --------------------------------------------------------------------------------------

SVG = (
    '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
    '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns:xlink="http://www.w3.org/1999/xlink" '
    'width="300pt" height="120pt" viewBox="0 0 300 120" xmlns="http://www.w3.org/2000/svg" version="1.1">'
    '<defs><clipPath id="p1"><rect x="0" y="0" width="300" height="120"/></clipPath>'
    '<path id="m1" d="M 0 0 L 4 4" style="stroke:#000"/></defs>'
    '<g clip-path="url(#p1)"><rect x="10" y="10" width="{w}" height="100" style="fill:{c}"/>'
    '<use xlink:href="#m1" x="50" y="50"/></g><text x="20" y="30">{label}</text></svg>'
)


def figures():
    return [
        (
            "Spacing of AP's values",
            SVG.replace("{w}", "120").replace("{c}", "#1f77b4").replace("{label}", "AP"),
            "All runs of length 5 ordered by AP.",
        ),
        (
            "Spacing of RBP(p=0.5)'s values",
            SVG.replace("{w}", "250").replace("{c}", "#ff7f0e").replace("{label}", "RBP"),
            "Equi-spaced: RBP(p=0.5) is an interval scale.",
        ),
    ]


def mpl_figures():
    """Two real matplotlib SVGs (the ids and styles of the figures irscale draws)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    for _, p in enumerate((0.5, 0.8)):
        fig, ax = plt.subplots(figsize=(4, 2.5))
        x = np.arange(1, 33) / 32
        ax.plot(
            x,
            np.sort((p ** np.arange(5)[None, :] * (np.arange(32)[:, None] >> np.arange(5) & 1)).sum(1)),
            ".",
            markersize=4,
        )
        ax.set_title(f"RBP(p={p}), N = 5")
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        plt.close(fig)
        out.append((f"Spacing of RBP(p={p})", buf.getvalue(), f"All 32 runs of length 5 ordered by RBP(p={p})."))
    return out


def test_write_report_returns_every_file_it_writes(tmp_path):
    st = fake_study()
    files = rf.write_report(st, tmp_path / "out", figures=figures(), command="irscale compare q r --out out")
    assert len(files) == len(set(files)) and all(f.exists() and f.stat().st_size > 0 for f in files)
    assert sorted(files) == sorted((tmp_path / "out").iterdir())
    names = {f.name for f in files}
    assert {
        "report_N10.html",
        "report_N10.md",
        "report_N10.tex",
        "provenance_N10.yaml",
        "means_original_vs_ranked_N10.csv",
        "comparisons_with_baselines_N10.tex",
        "tables5_6_significance_changes_N10.tex",
        "measure_free_pairs_N10.csv",
        "measure_free_summary_N10.tex",
    } <= names
    assert "measure_free_pairs_N10.json" not in names  # every pair: CSV only
    assert files[0].name == "report_N10.html"
    tex = (tmp_path / "out" / "tables5_6_significance_changes_N10.tex").read_text()
    assert r"\label{tab:irscale-table5-N10}" in tex and r"\label{tab:irscale-table6-N10}" in tex
    plain = rf.write_report(fake_study(extras=False), tmp_path / "plain")
    assert sorted(f.name for f in plain) == sorted(
        ["report_N10.html", "report_N10.md", "report_N10.tex", "provenance_N10.yaml"]
        + [
            f"{s}_N10.{e}"
            for s in ("table2_tau_measure_vs_ranked", "table4_tau_between_measures", "tables5_6_significance_changes")
            for e in ("csv", "json", "tex")
        ]
    )


def test_markdown_report_explains_every_column(tmp_path):
    st = fake_study()
    md = rs.study_markdown(
        st, links={"table2": "table2_tau_measure_vs_ranked_N10"}, figures=figures(), command="irscale compare q r"
    )
    for col in (
        "Scale assumed",
        "Meaningful (original)",
        "Meaningful (ranked)",
        "Recall-base dependent",
        "Incomparable share",
    ):
        assert f"- **{col}**: " in md, col
    assert "‡ significant, and more than half of the difference comes from topics" in md  # the pairs' legend
    assert "## What “meaningful” means" in md and "permissible transformation" in md
    assert "[table2_tau_measure_vs_ranked_N10.csv](table2_tau_measure_vs_ranked_N10.csv)" in md
    assert "```yaml" in md and "Spacing of AP's values" in md and "Command: `irscale compare q r`" in md
    assert "True" not in md and "False" not in md


def test_html_is_self_contained(tmp_path):
    html = html_report(fake_study(), figures=figures(), command="irscale compare q r")
    assert html.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in html
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert not re.search(r"url\((?!#)", html)  # CSS loads nothing; url(#id) are the figures' own references
    assert html.count("<svg") == 2 and "<?xml" not in html and "DOCTYPE svg" not in html
    for sec in (
        "meaningful",
        "means",
        "table2",
        "table4",
        "table5",
        "table6",
        "pairs",
        "measure_free_summary",
        "theory",
        "figures",
        "provenance",
    ):
        assert f'<section id="{sec}"' in html, sec
    assert html.count('<dl class="columns">') == 9
    assert "&lt;0.0001" in html and 'bm25 <span class="ci">(baseline)</span>' in html and "<sup>†</sup>" in html


def test_inline_svg_keeps_figures_apart():
    a, b = (inline_svg(svg, f"fig{k}-") for k, (_, svg, _) in enumerate(figures(), 1))
    assert 'id="fig1-p1"' in a and "url(#fig1-p1)" in a and 'href="#fig1-m1"' in a
    assert 'id="fig2-p1"' in b and "fig1" not in b and a.startswith("<svg")
    assert "<script" not in inline_svg("<svg><script>alert(1)</script><g/></svg>", "x-")


def test_tau_tables_over_run_lengths(tmp_path):
    a, b = fake_study(extras=False), fake_study(extras=False)
    b.N = 20
    (title, col, df), _ = rs.tau_tables([a, b])
    assert title == "Table 2 (unq)" and col == "tau_unq"
    assert list(df.columns) == ["N", "P", "RBP(p=0.5)", "AP", "nDCG(base=2)"]  # the paper's order first
    assert list(df["N"]) == [10, 20]
    files = rf.write_tau_tables([a, b], tmp_path)
    assert sorted(f.name for f in files) == [
        "table2_tau_unq.csv",
        "table2_tau_unq.tex",
        "table3_tau_mid.csv",
        "table3_tau_mid.tex",
    ]
    csv_text = (tmp_path / "table2_tau_unq.csv").read_text()
    assert csv_text.splitlines()[0].startswith("N,P,P_display,RBP(p=0.5)") and "track" not in csv_text
    assert r"\label{tab:irscale-table2-tau_unq}" in (tmp_path / "table2_tau_unq.tex").read_text()


def test_write_study_and_the_study_methods_give_the_report(tmp_path):
    st = fake_study()
    files = st.write(tmp_path)
    assert (tmp_path / "report_N10.html").exists() and len(files) == len(list(tmp_path.iterdir()))
    assert "## What “meaningful” means" in st.markdown()


# -- in a real browser ------------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER = _chromium()
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium binary (chromium, chromium-browser, "
    "google-chrome) on PATH: install Debian's `chromium` package (.ci/run does)",
)


def _browse(page, tmp_path, *args):
    """Chromium headless on ``page``: (stdout, console lines of its log)."""
    res = subprocess.run(
        [
            BROWSER,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    problems = [
        line
        for line in res.stderr.splitlines()
        if ":CONSOLE" in line or "Uncaught" in line or "Content Security Policy" in line
    ]
    return res.stdout, problems


@needs_browser
def test_the_console_check_catches_errors(tmp_path):
    """The log scan below sees a script error and a blocked request when there is one."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        'content="default-src \'none\'; img-src data:"></head><body><img src="https://example.org/x.png">'
        "<p>x</p></body></html>"
    )
    _, problems = _browse(bad, tmp_path, "--dump-dom")
    assert any("example.org" in p for p in problems), problems


@pytest.mark.slow
@needs_browser
def test_report_in_headless_chromium(tmp_path):
    st = fake_study(changes_extra=True)
    figs = figures() + mpl_figures()
    files = rf.write_report(st, tmp_path / "report", figures=figs, command="irscale compare qrels.txt runs/")
    page = tmp_path / "report" / "report_N10.html"
    assert page in files
    dom, problems = _browse(page, tmp_path, "--dump-dom")
    assert problems == [], problems
    for sec in (
        "means",
        "table2",
        "table4",
        "table5",
        "table6",
        "pairs",
        "measure_free_summary",
        "figures",
        "provenance",
    ):
        assert re.search(rf'<section id="{sec}"', dom), sec
    assert dom.count("<svg") == 4 and "Spacing of RBP(p=0.5)'s values" in dom
    assert "Figure 4: Spacing of RBP(p=0.8)" in dom
    ids = re.findall(r'\bid="([^"]+)"', dom)
    assert len(ids) == len(set(ids))  # the figures' ids do not collide
    assert "RBP(p=0.5)" in dom and "RBP_p05" not in dom and "irscale compare qrels.txt runs/" in dom
    shot = tmp_path / "report_N10.png"
    _, problems = _browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,4000")
    assert problems == [], problems
    assert shot.exists() and shot.stat().st_size > 50_000
    try:
        from PIL import Image
    except ImportError:
        pass
    else:
        img = np.asarray(Image.open(shot).convert("L"))
        assert img.shape == (4000, 1280) and (img < 128).mean() > 0.01  # text drawn, not a blank page
    if os.environ.get("IRSCALE_ARTEFACTS"):
        dest = os.path.join(os.environ["IRSCALE_ARTEFACTS"], "report_N10.png")
        os.makedirs(os.environ["IRSCALE_ARTEFACTS"], exist_ok=True)
        shutil.copy(shot, dest)
        shutil.copy(page, os.path.join(os.environ["IRSCALE_ARTEFACTS"], "report_N10.html"))


def check_real_report(page, tmp_path, name: str, figures: int) -> str:
    """A report written by `irscale compare --out` renders in Chromium without console
    errors, with its sections and figures; the screenshot is kept as an artefact."""
    dom, problems = _browse(page, tmp_path, "--dump-dom")
    assert problems == [], problems
    for sec in ("means", "table2", "table4", "table5", "measure_free_summary", "figures", "provenance"):
        assert re.search(rf'<section id="{sec}"', dom), sec
    assert dom.count("<svg") >= figures
    shot = tmp_path / f"{name}.png"
    _, problems = _browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,6000")
    assert problems == [] and shot.stat().st_size > 50_000
    if os.environ.get("IRSCALE_ARTEFACTS"):
        os.makedirs(os.environ["IRSCALE_ARTEFACTS"], exist_ok=True)
        shutil.copy(shot, os.path.join(os.environ["IRSCALE_ARTEFACTS"], f"{name}.png"))
    return dom


@pytest.mark.slow
@needs_browser
def test_dl19_study_report_in_headless_chromium(tmp_path):
    from conftest import DATA, need
    from typer.testing import CliRunner

    from irscale.cli import app

    root = need(DATA / "dl19")
    runs = sorted((root / "runs").glob("*.gz"))[::4]  # 10 of the 37 runs
    out = tmp_path / "dl19"
    args = [
        "compare",
        str(root / "qrels.dl19-passage.txt"),
        *map(str, runs),
        "-N",
        "10",
        "-m",
        "nDCG",
        "-m",
        "P",
        "-m",
        "RBP(p=0.8)",
        "--relevance",
        "graded",
        "--correction",
        "holm",
        "-b",
        runs[0].name[6:-3],
        "--figures",
        "--out",
        str(out),
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    dom = check_real_report(out / "report_N10.html", tmp_path, "report_dl19_N10", figures=4)  # two tau, changes, means
    assert "nDCG" in dom and "Comparisons with the baseline" in dom and "4 levels" in dom


@pytest.mark.slow
def test_vectorised_display_equals_format_value():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(
        st.lists(
            st.floats(min_value=-1e12, max_value=1e12)
            | st.sampled_from(
                [float("nan"), float("inf"), -float("inf"), -0.0, -0.00001, 0.00004999, 0.00005, -0.004999, 1e-300]
            ),
            min_size=1,
            max_size=20,
        ),
        st.sampled_from(["float", "p", "pct", "share", "signed_pct", "bool"]),
    )
    def check(values, kind):
        v = np.array(values, dtype=np.float64)
        assert rs._display(v, kind) == ["" if x != x else rs.format_value(x, kind) for x in v.tolist()]

    check()
