"""How the reports write numbers (issue 23, items 3 and 6).

Item 3: ranked means at N = 1000 (phi / |M| of 1e-98 .. 1e-43) read as distinct values in
every renderer (Markdown, HTML, LaTeX, the CSV and JSON ``*_display`` columns, all the same
text), and only the true best of a measure is bold; values in [0, 1] keep 4 decimals.

Item 6: counts beyond a float (|M| = 4^1000 at N = 1000 on four levels) are written by
integer arithmetic (:func:`irscale.errors.count_text`), so transform, compare, the bounds'
refusals and the cache listing no longer raise ``OverflowError``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from importlib import resources

import numpy as np
import pytest
from conftest import DATA, TREC8, need
from typer.testing import CliRunner

import irscale
from irscale.errors import MeasureError, count_text
from irscale.report import study as rs
from irscale.report.html import html_table
from irscale.report.latex import latex_table
from irscale.report.tables import number_cell

TOY = resources.files("irscale") / "examples" / "toy"
TINY = {"bm25": 1e-98, "lm-dirichlet": 3e-60, "neural-rerank": 1e-43, "random": 1.5e-60, "tied-scores": 7e-99}


@pytest.fixture(scope="module")
def toy_study():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the toy's tied-scores run lacks a topic
        table = irscale.evaluate(TOY / "qrels.txt", [str(TOY / "runs")], ["AP"])
        return irscale.compare(table, ["P", "AP"], depth=5, tests=("ttest",), mid=False, measure_free=False)


def _means(study, tiny: bool = True) -> rs.ReportTable:
    """The study's means table; with ``tiny``, AP's ranked means (and their intervals)
    replaced by the magnitudes of ranked nDCG at N = 1000 with approx."""
    if tiny:
        m = study.means.copy()
        for system, v in TINY.items():
            sel = m.measure.str.startswith("AP") & (m.scale == "ranked") & (m.system == system)
            m.loc[sel, ["mean", "ci_low", "ci_high"]] = [v, v / 2, v * 2]
        study = dataclasses.replace(study, means=m)
    return next(t for t in rs.report_tables(study) if t.key == "means")


def _md_cells(table: rs.ReportTable, head: str) -> dict[tuple[str, str], str]:
    """``{(measure, system): cell}`` of the column headed ``head`` in the Markdown table
    (the measure without its cutoff: ``AP``, not ``AP@5``)."""
    lines = [x for x in rs.markdown_table(table).splitlines() if x.startswith("|")]
    heads = [h.strip() for h in lines[0].strip("|").split("|")]
    k, out = heads.index(head), {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[(cells[0].split("@")[0], cells[1].replace(" (baseline)", ""))] = cells[k]
    return out


# -- item 3: tiny means --------------------------------------------------------------------------


def test_float_text_keeps_tiny_values_apart_and_the_rest_at_four_decimals():
    f = rs.float_text
    assert [f(v) for v in (1e-98, 3e-60, 1e-43, 1.61e-42, -3e-60)] == ["1e-98", "3e-60", "1e-43", "1.61e-42", "-3e-60"]
    assert [f(v) for v in (0.0, 0.25, 0.6750123, 1.0, 0.00005, 12.5)] == [
        "0.0000",
        "0.2500",
        "0.6750",
        "1.0000",
        "0.0001",
        "12.5000",
    ]
    assert rs.format_value(1e-43, "float") == "1e-43" and rs.format_value(-0.0, "float") == "0.0000"
    assert number_cell(4.2e-24) == "4.2e-24" and number_cell(0.5) == "0.5000"  # the console: the same owner
    vals = np.array([1e-98, 3e-60, 1e-43, 0.25, -0.0, np.nan, -2e-7])
    assert rs._display(vals, "float") == ["1e-98", "3e-60", "1e-43", "0.2500", "0.0000", "", "-2e-07"]


def test_tiny_ranked_means_are_distinct_and_only_the_largest_is_bold(toy_study):
    means = _means(toy_study)
    md = _md_cells(means, "Mean (ranked)")
    ap = {s: md[("AP", s)] for s in TINY}
    assert ap == {
        "bm25": "1e-98 [5e-99, 2e-98]",
        "lm-dirichlet": "3e-60 [1.5e-60, 6e-60]",
        "neural-rerank": "**1e-43** [5e-44, 2e-43]",
        "random": "1.5e-60 [7.5e-61, 3e-60]",
        "tied-scores": "7e-99 [3.5e-99, 1.4e-98]",
    }
    # bold: the best of the measure by exact value, the same rows the rank column puts first
    best = rs.best_cells(means)
    rows = means.rows.reset_index(drop=True)
    for col in ("mean_original", "mean_ranked"):
        rank = col.replace("mean", "rank")
        assert {i for i, k in best if k == col} == set(rows.index[rows[rank] == 1])
    tex = latex_table(means)
    assert tex.count(r"\textbf{1e-43}") == 1 and not re.search(r"\\textbf\{[0-9.]+e-(98|60|99)\}", tex)
    html = html_table(means)
    assert html.count("<strong>1e-43</strong>") == 1 and "<strong>3e-60</strong>" not in html
    assert "<strong>0.0000</strong>" not in html and r"\textbf{0.0000}" not in tex


def test_every_renderer_shows_the_display_columns_digits(toy_study):
    """Markdown, HTML and LaTeX cells and the CSV/JSON *_display columns: the same text."""
    means = _means(toy_study)
    frame = rs.data_frame(means)
    data = json.loads(rs.table_json(means, {}, frame))["rows"]
    md = _md_cells(means, "Mean (ranked)")
    tex, html = latex_table(means), html_table(means)
    for i, row in enumerate(rs.row_dicts(means)):
        for col in means.shown:
            if f"{col.key}_display" not in frame:
                continue
            value, _ = rs.cell_parts(means, col, row)
            assert value == frame.loc[i, f"{col.key}_display"] == data[i][f"{col.key}_display"], (i, col.key)
            lo, hi = col.ci or (None, None)
            if lo:
                assert f"[{frame.loc[i, f'{lo}_display']}, {frame.loc[i, f'{hi}_display']}]" in rs.cell_text(
                    means, col, row
                )
        ranked = frame.loc[i, "mean_ranked_display"]
        assert md[(row["measure"].split("@")[0], row["system"])].strip("*").startswith(ranked.lstrip("*"))
        assert ranked in tex and ranked in html


def test_normal_means_keep_four_decimals_and_ties_for_best_are_all_bold(toy_study):
    means = _means(toy_study, tiny=False)
    md = _md_cells(means, "Mean (original)")
    assert all(re.fullmatch(r"(\*\*)?\d\.\d{4}(\*\*)? \[\d\.\d{4}, \d\.\d{4}\]", c) for c in md.values()), md
    frame = means.frame
    p = frame[frame.measure.str.split("@").str[0] == "P"]
    top = p.mean_original.max()
    tied = set(p.system[p.mean_original == top])
    assert len(tied) == 2  # bm25 and neural-rerank: P@5 = 0.975 both
    assert {s for (m, s), c in md.items() if m == "P" and c.startswith("**")} == tied


# -- item 6: counts beyond a float ---------------------------------------------------------------


def test_count_text():
    assert count_text(12345) == "12,345" and count_text(12345, sep="") == "12345"
    assert count_text(4**1000, 4) == "4^1000" and count_text(2**1000, 2) == "2^1000"
    assert count_text(4**1000) == "≈1.15e+602" and count_text(2**1000) == "≈1.07e+301"
    assert count_text(10**20) == "1e+20" and count_text(10**20, 10) == "10^20"
    assert count_text(10**20, exact=True, sep="") == "100000000000000000000"
    assert count_text(4**1000, exact=True, sep="") == str(4**1000)
    assert count_text(4**1000, 4, exact=True) == "4^1000"  # a power of the levels reads as one
    assert count_text(3 * 4**1000, 4, exact=True, sep="") == str(3 * 4**1000)
    assert count_text(10**15 - 1) == "999,999,999,999,999" and count_text(10**15) == "1e+15"
    assert count_text(9995 * 10**20) == "≈1e+24" and count_text(0) == "0"


def test_the_cache_listing_and_the_refusals_write_huge_counts():
    from irscale.report.console import cache_listing
    from irscale.scales.bounds import phi_bounds

    info = {
        "dir": "/c",
        "bytes": 0,
        "entries": [{"identity": "nDCG@1000 (4 levels)", "size": 4**1000 + 1, "bytes": 10**6}],
    }
    assert "nDCG@1000 (4 levels): ≈1.15e+602 values" in cache_listing(info)
    with pytest.raises(MeasureError, match=r"ERR at N = 1000: no certified bounds\. Its 4\^1000 runs"):
        phi_bounds("ERR", 1000, np.zeros((1, 1000), dtype=np.int64), levels=4)


def test_rankmap_cli_writes_the_run_count_as_a_power():
    from irscale.cli import app

    res = CliRunner().invoke(app, ["rankmap", "P", "-N", "1000", "--levels", "4", "--no-cache"])
    assert res.exit_code == 0, res.output
    assert "1000, 2 relevance levels, 2^1000 runs" in res.output and "size      1,001 distinct values" in res.output


@pytest.mark.slow
def test_dl19_graded_depth_1000_approx_transform_through_the_cli():
    """The command of issue 23 item 6, which raised OverflowError after the work."""
    from irscale.cli import app
    from irscale.scales.spaces import space_for

    dl19 = need(DATA / "dl19")
    res = CliRunner().invoke(
        app,
        [
            "transform",
            str(dl19 / "qrels.dl19-passage.txt"),
            str(dl19 / "runs"),
            "-m",
            "nDCG",
            "-N",
            "1000",
            "--approx",
            "1e-4",
            "--normalize",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output[-2000:]
    out = res.stdout
    bounds = json.loads(out[out.index("{") :])["provenance"]["transform"]["bounds"]["nDCG@1000"]
    assert bounds["method"] == "lattice convolution"
    assert bounds["size"] == str(space_for("nDCG", 1000, 3).n_values)  # every digit, not through a float
    assert len(bounds["size"]) > 309  # beyond a float


@pytest.mark.slow
@pytest.mark.xdist_group("study_audit")  # beside the audit's TREC-8 N = 1000 study: its bounds built once, cached
def test_trec8_depth_1000_approx_means_read_apart():
    """The study of issue 23 item 3 on ten TREC-8 runs: ranked nDCG means of 1e-233 .. 1e-23,
    distinct in the report, and only the highest bold."""
    runs = sorted((need(TREC8) / "runs").glob("*.gz"))[:10]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TREC8 / "qrels.trec8.txt", [str(r) for r in runs], ["P"], keep_depth=1000)
        st = irscale.compare(table, ["P", "nDCG"], depth=1000, approx=1e-4, mid=False, measure_free=False)
    means = next(t for t in rs.report_tables(st) if t.key == "means")
    md = _md_cells(means, "Mean (ranked)")
    ndcg = {s: c for (m, s), c in md.items() if m == "nDCG"}
    values = [c.split(" [")[0].strip("*") for c in ndcg.values()]
    assert len(set(values)) == len(values) and "0.0000" not in values, ndcg
    frame = means.frame[means.frame.measure.str.split("@").str[0] == "nDCG"]
    assert [s for s, c in ndcg.items() if c.startswith("**")] == list(frame.system[frame.rank_ranked == 1])
