"""compare()'s publishable parts, each against an independent computation: corrected
significance counts (statsmodels), means with bootstrap intervals (irscale.effects on the
same columns), comparisons with baselines (differences by hand, system minus baseline),
the measure-free view and its flags (irscale.measurefree on the runs cut at N); the CLI
options and the report's figures."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

import irscale
from irscale import effects, stats
from irscale import measurefree as mf
from irscale.cli import app
from irscale.errors import ArgumentError, PolicyError
from irscale.study import compare

TOY = Path(irscale.__file__).parent / "examples" / "toy"
MEASURES = ["AP", "P", "RR"]
N = 5


@pytest.fixture(scope="module")
def table():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP"])


@pytest.fixture(scope="module")
def study(table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(table, MEASURES, N, correction="holm", baselines=["bm25"], n_resamples=500)


@pytest.fixture(scope="module")
def columns(table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(table, MEASURES, depth=N, exact_values=True)
    M = len(MEASURES)
    return t.values[:M], t.values[M : 2 * M]


@pytest.mark.slow
def test_corrected_counts_equal_statsmodels(study, columns):
    orig, ranked = columns
    for m, name in enumerate(MEASURES):
        for test in ("sign", "ttest", "signrank"):
            ch = study.changes
            row = ch[(ch.measure == f"{name}@{N}") & (ch.test == stats.TEST_NAMES[test])]
            for values, col in ((orig, "sig_adjusted"), (ranked, "sig_ranked_adjusted")):
                p = stats.run_test(test, values[m].T).pvalue
                assert int(row[col].iloc[0]) == int((multipletests(p, method="holm")[1] < 0.05).sum())
        # Tukey-type tests are adjusted over the pairs already: the count stays
        ch = study.changes
        row = ch[(ch.measure == f"{name}@{N}") & (ch.test == stats.TEST_NAMES["anova1"])]
        assert int(row["sig_adjusted"].iloc[0]) == int(row["sig"].iloc[0])
    assert set(study.changes["correction"]) == {"holm"}


def test_correction_across_measures_is_one_family(table, columns):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = compare(
            table,
            MEASURES,
            N,
            tests=["ttest"],
            correction="bonferroni",
            across_measures=True,
            effects=False,
            measure_free=False,
        )
    orig, _ = columns
    p = np.concatenate([stats.run_test("ttest", orig[m].T).pvalue for m in range(len(MEASURES))])
    joint = multipletests(p, method="bonferroni")[1] < 0.05
    assert st.changes["sig_adjusted"].sum() == joint.sum()
    assert set(st.changes["correction"]) == {"bonferroni across measures"}
    assert st.means is None and st.measure_free is None and "flagged_incomparable" not in st.changes


@pytest.mark.slow
def test_means_with_intervals(study, columns):
    orig, ranked = columns
    for m, name in enumerate(MEASURES):
        for scale, values in (("original", orig), ("ranked", ranked)):
            got = study.means[(study.means.measure == f"{name}@{N}") & (study.means.scale == scale)]
            want = effects.system_means(values[m].T, names=study.systems, n_resamples=500, seed=0)
            assert got["system"].tolist() == want["system"].tolist()
            np.testing.assert_allclose(
                got[["mean", "ci_low", "ci_high"]].to_numpy(), want[["mean", "ci_low", "ci_high"]].to_numpy()
            )
            np.testing.assert_allclose(got["mean"], values[m].mean(axis=1))


@pytest.mark.slow
def test_baseline_comparisons_read_system_minus_baseline(study, columns):
    orig, ranked = columns
    pairs = study.pairs
    assert set(pairs.system_1) == {"bm25"} and "bm25" not in set(pairs.system_2)
    b = study.systems.index("bm25")
    for m, name in enumerate(MEASURES):
        for scale, values in (("original", orig), ("ranked", ranked)):
            rows = pairs[(pairs.measure == f"{name}@{N}") & (pairs.scale == scale) & (pairs.test == "Student's t Test")]
            for _, r in rows.iterrows():
                s = study.systems.index(r.system_2)
                d = values[m][s] - values[m][b]
                assert r["diff"] == pytest.approx(d.mean(), abs=1e-12)
                assert r["ci_low"] <= r["diff"] <= r["ci_high"]
                if d.std() > 0:
                    assert r["d_z"] == pytest.approx(d.mean() / d.std(ddof=1))
            # Holm over the rows of this (measure, scale, test) table
            assert np.allclose(rows.p_adjusted, multipletests(rows.p_value, method="holm")[1])
            assert (rows.significant == (rows.p_adjusted < 0.05)).all()
            # t test: an interval scale, one for all topics (not AP's: its scale depends on the recall base)
            assert set(rows.meaningful) == {name == "P" or (name == "RR" and scale == "ranked")}


def test_measure_free_view_and_flags(study, table, columns):
    orig, ranked = columns
    codes = mf.topic_comparisons(table.judged, depth=N)  # graded (the toy qrels have grades 0-2)
    want = mf.pair_summary(codes, table.systems)
    assert study.measure_free.equals(want)
    # AP, P and RR see the qrels binarised (grade >= 1): their flags use that order
    binary = mf.topic_comparisons(table.judged, depth=N, rel=1)
    assert (binary != codes).any()
    codes = binary
    for m, name in enumerate(MEASURES):
        for test in ("ttest", "sign"):
            ch = study.changes
            row = ch[(ch.measure == f"{name}@{N}") & (ch.test == stats.TEST_NAMES[test])]
            for values, col in ((orig, "flagged_incomparable"), (ranked, "flagged_incomparable_ranked")):
                sig = stats.run_test(test, values[m].T).significant
                d = mf.pair_differences(values[m].T)
                assert int(row[col].iloc[0]) == int(mf.rests_on_incomparable(codes, d, significant=sig).sum())
    # the baselines' share of incomparable topics is the pair's share in the measure-free table
    pairs = study.pairs[
        (study.pairs.measure == f"AP@{N}") & (study.pairs.scale == "original") & (study.pairs.test == "Sign Test")
    ]
    mft = mf.pair_summary(binary, table.systems)
    for _, r in pairs.iterrows():
        hit = mft[
            ((mft.system_1 == "bm25") & (mft.system_2 == r.system_2))
            | ((mft.system_2 == "bm25") & (mft.system_1 == r.system_2))
        ]
        assert r.incomparable_share == pytest.approx(float(hit.incomparable_share.iloc[0]))


def test_bad_options_are_refused(table):
    with pytest.raises(ArgumentError, match="'nope' not among the systems; known: bm25"):
        compare(table, ["P"], N, baselines=["nope"])
    with pytest.raises(PolicyError, match="correction"):
        compare(table, ["P"], N, correction="fdr")
    res = CliRunner().invoke(
        app, ["compare", str(TOY / "qrels.txt"), str(TOY / "runs"), "-N", "5", "-m", "P", "--correction", "hochberg"]
    )
    assert res.exit_code == 2 and "error:" in res.stderr and "holm" in res.stderr


@pytest.mark.slow
def test_cli_report_has_the_parts_and_figures(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(
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
            "--correction",
            "holm",
            "-b",
            "bm25",
            "--out",
            str(out),
            "--figures",
            "--spacing",
        ],
    )
    assert res.exit_code == 0, res.output
    html = (out / "report_N5.html").read_text()
    for part in (
        "Mean scores on the original",
        "Comparisons with the baseline",
        "Measure-free comparison",
        "Kendall's tau between the measures",
        "Significance decisions changed",
        "Values of AP, P over all runs of length N",
    ):
        assert part.lower() in html.lower(), part
    assert html.count("<svg") >= 5  # two heatmaps, the changes, the means (one panel per measure), the spacing plot
    assert "does not describe" not in html  # every column is explained
    written = sorted(p.name for p in out.iterdir())
    assert f"wrote {len(written)} files" in res.stderr


def test_report_of_one_measure_or_no_test_and_its_provenance(table, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = compare(table, ["P"], N, tests=["sign"])  # Table 4 has no pair
        none = compare(table, ["P", "AP"], N, tests=[])  # correlations only
    assert list(one.table4.columns)[:2] == ["measure_1", "measure_2"] and one.table4.empty
    assert none.changes.empty and "sig" in none.changes
    for st, d in ((one, "one"), (none, "none")):
        files = st.write(tmp_path / d)
        assert (tmp_path / d / "report_N5.html") in files
    prov = one.provenance
    assert prov["runs"] == list(table.systems) and prov["levels"] == 3
    assert prov["qrels"].endswith("qrels.txt") and len(prov["qrels_sha256"]) == 64
