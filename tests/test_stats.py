"""Statistical tests against independent references (scipy's per-pair implementations,
statsmodels, scikit-posthocs), to 1e-6 in the p-value, and the paper's TREC-8 figures."""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from irscale import stats

RNG = np.random.default_rng(11)
# 20 topics x 6 systems, on a grid of quarters: many ties, as real score matrices have
X = np.round(RNG.beta(2, 3, size=(20, 6)) * 4) / 4 + np.arange(6) * 0.125  # exact in binary
TIE_FREE = RNG.normal(size=(15, 5)) + np.arange(5) * 0.4


def _pairs(S):
    return list(itertools.combinations(range(S), 2))


def test_sign_test_equals_binomtest():
    res = stats.sign_test(X)
    for k, (i, j) in enumerate(_pairs(X.shape[1])):
        d = X[:, i] - X[:, j]
        pos, neg = int((d > 0).sum()), int((d < 0).sum())
        ref = sps.binomtest(pos, pos + neg, 0.5).pvalue if pos + neg else 1.0
        assert res.pvalue[k] == pytest.approx(ref, abs=1e-6)


def test_ranksum_equals_mannwhitneyu():
    res = stats.ranksum_test(X)
    for k, (i, j) in enumerate(_pairs(X.shape[1])):
        ref = sps.mannwhitneyu(X[:, i], X[:, j], method="asymptotic", use_continuity=True).pvalue
        assert res.pvalue[k] == pytest.approx(ref, abs=1e-6)


def test_signrank_equals_scipy_wilcoxon():
    res = stats.signrank_test(X)
    for k, (i, j) in enumerate(_pairs(X.shape[1])):
        d = X[:, i] - X[:, j]
        if not np.any(d):
            assert res.pvalue[k] == 1.0
            continue
        ref = sps.wilcoxon(d, zero_method="wilcox", correction=True, method="approx").pvalue
        assert res.pvalue[k] == pytest.approx(ref, abs=1e-6)


def test_signrank_ties_survive_float_noise():
    """3/30 - 1/30 and 4/30 - 2/30 differ in the last bit; the ranks must tie them, as they
    do for the equivalent integers (P and 30 P + 1 give the same test)."""
    k = RNG.integers(0, 31, size=(40, 5))
    a = stats.signrank_test(k / 30)
    b = stats.signrank_test(k * 1.0 + 1)
    assert np.allclose(a.pvalue, b.pvalue, atol=1e-12)


def test_t_test_equals_ttest_rel():
    res = stats.t_test(X)
    for k, (i, j) in enumerate(_pairs(X.shape[1])):
        ref = sps.ttest_rel(X[:, i], X[:, j]).pvalue
        assert res.pvalue[k] == pytest.approx(ref, abs=1e-6)


def test_anova1_and_tukey_equal_scipy():
    res = stats.anova1(TIE_FREE)
    F, p = sps.f_oneway(*TIE_FREE.T)
    assert res.omnibus[0] == pytest.approx(F) and res.omnibus[1] == pytest.approx(p, abs=1e-6)
    ref = sps.tukey_hsd(*TIE_FREE.T).pvalue
    for k, (i, j) in enumerate(_pairs(TIE_FREE.shape[1])):
        assert res.pvalue[k] == pytest.approx(ref[i, j], abs=1e-6)
        assert res.significant[k] == (ref[i, j] < 0.05)


@pytest.mark.slow
def test_anova2_equals_statsmodels():
    smf = pytest.importorskip("statsmodels.formula.api", reason="statsmodels is in the test extra")
    sm = pytest.importorskip("statsmodels.api")
    import pandas as pd

    T, S = TIE_FREE.shape
    df = pd.DataFrame(
        {
            "y": TIE_FREE.reshape(-1),
            "topic": np.repeat(np.arange(T), S).astype(str),
            "system": np.tile(np.arange(S), T).astype(str),
        }
    )
    fit = smf.ols("y ~ C(topic) + C(system)", data=df).fit()
    table = sm.stats.anova_lm(fit, typ=2)
    res = stats.anova2(TIE_FREE)
    assert res.omnibus[0] == pytest.approx(table.loc["C(system)", "F"])
    assert res.omnibus[1] == pytest.approx(table.loc["C(system)", "PR(>F)"], abs=1e-6)
    # Tukey HSD on system means with the residual MSE: the studentized range of each pair
    mse = fit.mse_resid
    means = TIE_FREE.mean(axis=0)
    for k, (i, j) in enumerate(_pairs(S)):
        q = abs(means[i] - means[j]) / np.sqrt(mse / T)
        assert res.statistic[k] == pytest.approx(q)
        assert res.pvalue[k] == pytest.approx(sps.studentized_range.sf(q, S, fit.df_resid), abs=1e-6)


def test_kruskal_and_friedman_equal_references():
    sp = pytest.importorskip("scikit_posthocs", reason="scikit-posthocs is in the test extra")
    import pandas as pd

    res = stats.kruskal(X)
    H, p = sps.kruskal(*X.T)
    assert res.omnibus[0] == pytest.approx(H) and res.omnibus[1] == pytest.approx(p, abs=1e-6)
    fr = stats.friedman(X)
    chi, pf = sps.friedmanchisquare(*X.T)
    assert fr.omnibus[0] == pytest.approx(chi) and fr.omnibus[1] == pytest.approx(pf, abs=1e-6)
    # Tukey-type comparison of mean ranks after Friedman = Nemenyi (tie-free data)
    fr = stats.friedman(TIE_FREE)
    ref = sp.posthoc_nemenyi_friedman(pd.DataFrame(TIE_FREE)).to_numpy()
    for k, (i, j) in enumerate(_pairs(TIE_FREE.shape[1])):
        assert fr.pvalue[k] == pytest.approx(ref[i, j], abs=1e-6)
    # after Kruskal-Wallis: Nemenyi on mean ranks of the pooled sample (tie-free data)
    kw = stats.kruskal(TIE_FREE)
    long = pd.DataFrame({"v": TIE_FREE.reshape(-1), "g": np.tile(np.arange(TIE_FREE.shape[1]), TIE_FREE.shape[0])})
    ref = sp.posthoc_nemenyi(long, val_col="v", group_col="g", dist="tukey").to_numpy()
    for k, (i, j) in enumerate(_pairs(TIE_FREE.shape[1])):
        assert kw.pvalue[k] == pytest.approx(ref[i, j], abs=1e-6)


def test_kendall_and_tau_ap():
    a = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    assert stats.kendall_tau(a, a) == pytest.approx(1.0) and stats.kendall_tau(a, -a) == pytest.approx(-1.0)
    assert stats.tau_ap(a, a) == pytest.approx(1.0) and stats.tau_ap(a, -a) == pytest.approx(-1.0)
    # swapping the top two costs more in tau_ap than swapping the bottom two; tau is equal
    top = np.array([0.8, 0.9, 0.7, 0.6, 0.5])
    bottom = np.array([0.9, 0.8, 0.7, 0.5, 0.6])
    assert stats.kendall_tau(a, top) == stats.kendall_tau(a, bottom) == pytest.approx(0.8)
    # by the definition: C(i)/(i-1) over i = 2..5 is 0, 1, 1, 1 (top) and 1, 1, 1, 3/4 (bottom)
    assert stats.tau_ap(a, top) == pytest.approx(2 / 4 * 3 - 1)
    assert stats.tau_ap(a, bottom) == pytest.approx(2 / 4 * 3.75 - 1)


def test_change_counts():
    a = stats.t_test(X)
    b = stats.t_test(X**3)
    ch = stats.change(a, b)
    assert ch.sig == a.n_significant and ch.sig_ranked == b.n_significant
    assert ch.sig - ch.s2ns + ch.ns2s == ch.sig_ranked


# -- the paper's TREC-8 experiment ----------------------------------------------------------------

PAPER_T2 = {  # Table 2, T08 rows: P RBP_p05 RR RBP_p03 RBP_p08 DCG_b02 DCG_b10 R AP nDCG_b02 nDCG_b10
    5: [1.0000, 1.0000, 0.9211, 0.9522, 0.9605, 0.9759, 1.0000, 0.8145, 0.8219, 0.9759, 1.0000],
    10: [1.0000, 1.0000, 0.8466, 0.9500, 0.9527, 0.9553, 1.0000, 0.8030, 0.8243, 0.9541, 0.9965],
    20: [1.0000, 1.0000, 0.7677, 0.9498, 0.9498, 0.9334, 0.9537, 0.7943, 0.8197, 0.9285, 0.9452],
    30: [1.0000, 1.0000, 0.7329, 0.9498, 0.9508, 0.9128, 0.9261, 0.7948, 0.8377, 0.9072, 0.9147],
}
ORDER = [
    "P",
    "RBP(p=0.5)",
    "RR",
    "RBP(p=0.3)",
    "RBP(p=0.8)",
    "DCG(base=2)",
    "DCG(base=10)",
    "R",
    "AP",
    "nDCG(base=2)",
    "nDCG(base=10)",
]
PAPER_P_SIG = {
    "Sign Test": 5153,
    "Wilcoxon Rank Sum Test": 4276,
    "Wilcoxon Signed Rank Test": 5644,
    "Student's t Test": 5633,
    "One-way ANOVA": 1923,
    "Kruskal-Wallis Test": 1740,
    "Two-way ANOVA": 3362,
    "Friedman Test": 2595,
}


@pytest.fixture(scope="module")
def trec8_judged(trec8):
    import irscale

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(trec8 / "qrels.trec8.txt", sorted((trec8 / "runs").glob("*.gz")), ["AP"]).judged


# one worker runs the trec8_judged tests (one evaluation of the runs) and builds the N = 30 rank
# maps once for them and tests/test_transform.py's N = 30 test (the session's disk cache)
N30 = pytest.mark.xdist_group("trec8_n30")


@pytest.mark.slow
@N30
@pytest.mark.parametrize("N", [5, 10, 20, 30])
def test_table2_reproduces_the_paper(trec8_judged, N):
    from irscale.study import compare

    st = compare(trec8_judged, ORDER, N, tests=(), mid=False)
    from conftest import paper_label

    tau = dict(zip(st.table2["measure"].map(paper_label), st.table2["tau_unq"]))
    from irscale.study import label

    got = [tau[label(m)] for m in ORDER]
    assert np.abs(np.array(got) - PAPER_T2[N]).max() <= 0.005, list(zip(ORDER, got, PAPER_T2[N]))
    assert tau["P"] == pytest.approx(1.0, abs=1e-12) and tau["RBP_p05"] == pytest.approx(1.0, abs=1e-12)  # proved
    assert (st.table2["topic_tau_min"] > 1 - 1e-12).all()  # topic by topic: always 1


@pytest.mark.slow
@N30
def test_tables_5_6_invariances_on_t08_30(trec8_judged):
    from conftest import by_label

    from irscale.study import compare

    st = compare(trec8_judged, ORDER, 30, mid=False)
    ch = by_label(st.changes)
    for m in ("P", "RBP_p05"):
        rows = ch[ch.measure == m]
        assert (rows.s2ns == 0).all() and (rows.ns2s == 0).all(), rows
    # ordinal tests are unchanged for RB-free measures (their ranked version keeps per-topic order)
    for m in ("P", "RR", "RBP_p03", "RBP_p05", "RBP_p08", "DCG_b02", "DCG_b10"):
        rows = ch[(ch.measure == m) & ch.ordinal]
        assert (rows.s2ns == 0).all() and (rows.ns2s == 0).all(), rows
    p = ch[ch.measure == "P"].set_index("test")["sig"]
    for test, paper in PAPER_P_SIG.items():
        assert abs(p[test] - paper) <= 0.005 * paper, (test, p[test], paper)


def test_results_are_objects_with_frames():
    res = stats.run_test("friedman", TIE_FREE, measure="toy")
    df = res.to_frame()
    assert list(df.columns) == ["system_1", "system_2", "statistic", "p_value", "significant"]
    assert len(df) == 10 and df.significant.sum() == res.n_significant
    assert res.provenance["test"] == "Friedman Test" and res.provenance["measure"] == "toy"
    assert len(res.pairs()) == res.n_significant


def test_tau_by_topic_equals_scipy_row_by_row():
    """The vectorised tau-b per topic (pair counts over all topics at once) is scipy's
    kendalltau topic by topic, bit for bit: ties, NaN, constant rows, -0.0; and the
    scipy fallback beyond the pairwise limit gives the same."""
    from scipy.stats import kendalltau

    from irscale import stats

    rng = np.random.default_rng(7)
    X = rng.integers(0, 4, (40, 12)).astype(float)  # many ties
    Y = X + rng.integers(-1, 2, X.shape)
    X[3] = 1.0  # constant row
    Y[5, 2] = np.nan
    X[7, 0], X[7, 1] = 0.0, -0.0
    got = stats.tau_by_topic(X, Y)
    want = np.array([kendalltau(X[t], Y[t]).statistic for t in range(len(X))])
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(got[3]) and np.isnan(got[5])
    old = stats._PAIRWISE_TAU_MAX
    try:
        stats._PAIRWISE_TAU_MAX = 1  # force the topic-by-topic scipy path
        assert np.array_equal(stats.tau_by_topic(X, Y), want, equal_nan=True)
    finally:
        stats._PAIRWISE_TAU_MAX = old
