"""irscale.effects: multiple-comparison corrections, effect sizes, bootstrap intervals and
the pairwise table, checked against statsmodels, scipy and plain-Python hand formulas."""

from __future__ import annotations

import ast
import doctest
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

import irscale.effects as E
from irscale.errors import ArgumentError, IrscaleError, IrscaleWarning, PolicyError
from irscale.stats import MULTI, PAIRWISE, TESTS, pair_index, run_test

B = 999  # resamples in these tests: enough for BCa, fast


# -- independent plain-Python corrections ----------------------------------------------------------


def hand_bonferroni(p):
    m = len(p)
    return [min(1.0, m * x) for x in p]


def hand_holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out, running = [0.0] * m, 0.0
    for rank, k in enumerate(order):  # rank 0 is the smallest p: multiplied by m
        running = max(running, (m - rank) * p[k])
        out[k] = min(1.0, running)
    return out


def hand_bh(p):
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out, running = [0.0] * m, 1.0
    for rank in range(m - 1, -1, -1):  # from the largest p down: running minimum of m p / (rank + 1)
        k = order[rank]
        running = min(running, m * p[k] / (rank + 1))
        out[k] = running
    return out


HAND = {"bonferroni": hand_bonferroni, "holm": hand_holm, "bh": hand_bh}
SM = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}


def _pvals(rng, m):
    p = rng.uniform(0, 1, m) ** 3  # many small ones
    p[: m // 4] = p[m // 4 : 2 * (m // 4)]  # ties
    p[0] = 0.0
    return rng.permutation(p)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["bonferroni", "holm", "bh"])
@pytest.mark.parametrize("m", [1, 2, 7, 50])
def test_correct_matches_statsmodels_and_hand(method, m):
    p = _pvals(np.random.default_rng(m), m)
    adj, rej = E.correct(p, method, 0.05)
    sm_rej, sm_adj = multipletests(p, alpha=0.05, method=SM[method])[:2]
    np.testing.assert_allclose(adj, sm_adj, rtol=1e-12, atol=0)
    np.testing.assert_allclose(adj, HAND[method](list(p)), rtol=1e-12, atol=1e-15)
    assert np.array_equal(rej, adj < 0.05)
    assert np.array_equal(rej, sm_rej)  # no adjusted p-value exactly at alpha here


def test_correct_none_nan_and_shapes():
    p = np.array([[0.01, np.nan], [0.04, 0.2]])
    adj, rej = E.correct(p, "none", 0.05)
    assert adj.shape == (2, 2) and np.isnan(adj[0, 1]) and rej.tolist() == [[True, False], [True, False]]
    for method in ("bonferroni", "holm", "bh"):
        adj, rej = E.correct(p, method, 0.05)
        ok = ~np.isnan(p)
        assert np.isnan(adj[0, 1]) and not rej[0, 1]
        # NaN is not counted in the family: the same as correcting the three others
        np.testing.assert_allclose(adj[ok], E.correct(p[ok], method)[0])
        np.testing.assert_allclose(adj[ok], HAND[method](list(p[ok])))
    assert E.correct([0.01, 0.02], "bonferroni")[0].tolist() == [0.02, 0.04]
    adj, rej = E.correct([np.nan, np.nan], "holm")
    assert np.isnan(adj).all() and not rej.any()
    adj, rej = E.correct([], "bh")
    assert adj.shape == (0,) and rej.shape == (0,)
    assert float(E.correct(0.03, "holm")[0]) == 0.03  # a single p-value: m = 1


def test_correct_rejects_strictly_below_alpha():
    adj, rej = E.correct([0.025, 0.5], "bonferroni", 0.05)
    assert adj[0] == 0.05 and not rej[0]  # adjusted == alpha is not significant (as p < alpha in stats)


def test_correct_bad_arguments():
    with pytest.raises(
        PolicyError,
        match=r"correction must be one of 'none', 'holm', 'bonferroni', 'bh'.*"
        r"did you mean 'holm'",
    ):
        E.correct([0.1], "Holm")
    with pytest.raises(PolicyError, match="'fdr_bh'"):
        E.correct([0.1], "fdr_bh")
    with pytest.raises(ArgumentError, match=r"p-values in \[0, 1\].*1\.5.*index \(1,\)"):
        E.correct([0.1, 1.5], "holm")
    with pytest.raises(ArgumentError, match=r"in \[0, 1\]"):
        E.correct([-0.1], "none")
    with pytest.raises(ArgumentError, match=r"in \[0, 1\]"):
        E.correct([np.inf], "bh")
    with pytest.raises(ArgumentError, match="array of p-values"):
        E.correct(["a"], "holm")
    with pytest.raises(ArgumentError, match="alpha must be a number strictly between 0 and 1"):
        E.correct([0.1], "holm", alpha=5)


def test_correct_families_joint():
    rng = np.random.default_rng(7)
    fams = [_pvals(rng, 6).reshape(2, 3), _pvals(rng, 5), np.array([np.nan, 0.3])]
    for method in ("holm", "bh", "bonferroni", "none"):
        adj, rej = E.correct_families(fams, method, 0.05)
        assert [a.shape for a in adj] == [f.shape for f in fams] == [r.shape for r in rej]
        flat = np.concatenate([f.ravel() for f in fams])
        whole, whole_rej = E.correct(flat, method, 0.05)
        np.testing.assert_array_equal(np.concatenate([a.ravel() for a in adj]), whole)
        np.testing.assert_array_equal(np.concatenate([r.ravel() for r in rej]), whole_rej)
    # jointly: m counts the 12 non-NaN p-values of all families
    adj, _ = E.correct_families([[0.001], [0.002, np.nan]], "bonferroni")
    np.testing.assert_allclose(adj[0], [0.002])
    np.testing.assert_allclose(adj[1], [0.004, np.nan])
    adj, rej = E.correct_families({"AP": [0.01, 0.02], "nDCG": [0.03]}, "holm")
    assert list(adj) == ["AP", "nDCG"] and list(rej) == ["AP", "nDCG"]
    np.testing.assert_allclose(adj["AP"], hand_holm([0.01, 0.02, 0.03])[:2])
    assert E.correct_families([], "holm") == ([], [])
    with pytest.raises(ArgumentError, match="list of p-value arrays"):
        E.correct_families(np.array([0.1, 0.2]), "holm")
    with pytest.raises(ArgumentError, match=r"families\[1\]"):
        E.correct_families([[0.1], [2.0]], "holm")
    with pytest.raises(PolicyError, match="correction must be one of"):
        E.correct_families([[0.1]], "sidak")


pvalue_lists = st.lists(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.05, 0.01])), min_size=1, max_size=40)


# few examples: statsmodels' Holm calls gc.collect(), tens of milliseconds in a large process
@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(pvalue_lists)
def test_correction_properties(p):
    p = np.array(p)
    m = len(p)
    bonf, _ = E.correct(p, "bonferroni")
    holm, _ = E.correct(p, "holm")
    bh, _ = E.correct(p, "bh")
    np.testing.assert_allclose(bonf, np.minimum(1.0, m * p), rtol=1e-12)
    for adj in (bonf, holm, bh):
        assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
    assert np.all(holm <= bonf + 1e-15) and np.all(bh <= holm + 1e-15)
    order = np.argsort(p, kind="stable")
    for adj in (holm, bh, bonf):  # adjustment keeps the order of the p-values
        assert np.all(np.diff(adj[order]) >= -1e-15)
    np.testing.assert_allclose(holm, hand_holm(list(p)), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(bh, hand_bh(list(p)), rtol=1e-12, atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(pvalue_lists, st.lists(st.booleans(), min_size=40, max_size=40), st.sampled_from(["holm", "bh", "bonferroni"]))
def test_nan_is_left_out_of_the_family(p, holes, method):
    p = np.array(p)
    q = np.where(np.array(holes[: len(p)]), np.nan, p)
    ok = ~np.isnan(q)
    adj, rej = E.correct(q, method)
    assert np.isnan(adj[~ok]).all() and not rej[~ok].any()
    if ok.any():
        np.testing.assert_allclose(adj[ok], HAND[method](list(q[ok])), rtol=1e-12, atol=1e-15)


# -- effect sizes -------------------------------------------------------------------------------------


def hand_dz(d):
    n = len(d)
    m = sum(d) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    return m / sd


def hand_rank_biserial(d):
    nz = [x for x in d if x != 0]
    a = sorted(abs(x) for x in nz)
    rank = {}
    for v in set(a):  # mid-rank of each |difference|
        first = a.index(v) + 1
        rank[v] = first + (a.count(v) - 1) / 2
    pos = sum(rank[abs(x)] for x in nz if x > 0)
    neg = sum(rank[abs(x)] for x in nz if x < 0)
    return (pos - neg) / (pos + neg)


def test_effect_sizes_by_hand():
    d = [1.0, 2.0, 3.0, -1.0]
    assert E.d_z(d) == pytest.approx(1.25 / math.sqrt(8.75 / 3), rel=1e-12)
    assert E.rank_biserial(d) == pytest.approx(0.7)
    d = [0.0, 2.0, -2.0, 5.0, 0.0, -1.0, 2.0]
    assert E.d_z(d) == pytest.approx(hand_dz(d), rel=1e-12)
    assert E.rank_biserial(d) == pytest.approx(hand_rank_biserial(d), rel=1e-12)


def test_effect_sizes_vectorised_and_against_formulas():
    rng = np.random.default_rng(11)
    D = rng.integers(-4, 5, size=(20, 30)).astype(float)  # ties and zeros
    dz, rb = E.d_z(D), E.rank_biserial(D)
    for k in range(D.shape[1]):
        d = list(D[:, k])
        assert dz[k] == pytest.approx(hand_dz(d), rel=1e-12)
        assert rb[k] == pytest.approx(hand_rank_biserial(d), rel=1e-12)
        # scipy's Wilcoxon: R+ is the 'greater' statistic, min(R+, R-) the two-sided one
        nz = D[:, k][D[:, k] != 0]
        total = len(nz) * (len(nz) + 1) / 2
        w_plus = sps.wilcoxon(D[:, k], zero_method="wilcox", alternative="greater", method="approx").statistic
        w_min = sps.wilcoxon(D[:, k], zero_method="wilcox", method="approx").statistic
        assert rb[k] == pytest.approx(2 * w_plus / total - 1, abs=1e-12)
        assert abs(rb[k]) == pytest.approx(1 - 2 * w_min / total, abs=1e-12)


def test_constant_differences_policy():
    assert E.d_z([0.0, 0.0, 0.0]) == 0.0 and E.rank_biserial([0.0, 0.0]) == 0.0
    assert E.d_z([0.2, 0.2, 0.2]) == np.inf and E.d_z([-0.1, -0.1]) == -np.inf
    # equal up to float noise: constant (0.3 - 0.1 and 0.5 - 0.3 differ in the last bits)
    noisy = [0.3 - 0.1, 0.5 - 0.3, 0.7 - 0.5]
    assert np.std(noisy) > 0 and E.d_z(noisy) == np.inf
    assert E.rank_biserial([0.0, 0.0, 3.0]) == 1.0 and E.rank_biserial([-1.0, 0.0]) == -1.0
    with pytest.raises(ArgumentError, match="at least two differences"):
        E.d_z([1.0])


# -- pairwise ----------------------------------------------------------------------------------------


def _matrix(T=25, S=6, seed=0, grid=None):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.beta(2, 4, size=(T, S)) + rng.normal(0, 0.1, (T, 1)), 0, 1)
    if grid:
        X = np.round(X * grid) / grid  # discrete scores: ties and zero differences
    return pd.DataFrame(X, columns=[f"run{k}" for k in range(S)])


COLUMNS = [
    "system_1",
    "system_2",
    "mean_1",
    "mean_2",
    "diff",
    "ci_low",
    "ci_high",
    "d_z",
    "rank_biserial",
    "statistic",
    "p_value",
    "p_adjusted",
    "significant",
]


@pytest.mark.parametrize("test", TESTS)
def test_pairwise_all_pairs_matches_stats(test):
    X = _matrix(T=15, S=4, grid=10)
    df = E.pairwise(X, test=test, ci=False)
    assert list(df.columns) == COLUMNS and len(df) == 6
    res = run_test(test, X)
    i, j = pair_index(4)
    assert df.system_1.tolist() == [f"run{k}" for k in i] and df.system_2.tolist() == [f"run{k}" for k in j]
    np.testing.assert_allclose(df.statistic, res.statistic, rtol=1e-12)
    np.testing.assert_allclose(df.p_value, res.pvalue, rtol=1e-9)
    np.testing.assert_array_equal(df.p_adjusted, df.p_value)
    np.testing.assert_array_equal(df.significant, df.p_value < 0.05)
    M = X.to_numpy()
    np.testing.assert_allclose(df.mean_1, M.mean(0)[i])
    np.testing.assert_allclose(df["diff"], (M[:, i] - M[:, j]).mean(0), atol=1e-15)
    assert df.ci_low.isna().all() and df.ci_high.isna().all()


def test_pairwise_effect_sizes_agree_with_tests():
    X = _matrix(T=30, S=7, grid=20)
    T = len(X)
    t = E.pairwise(X, test="ttest", ci=False)
    np.testing.assert_allclose(t.d_z * math.sqrt(T), t.statistic, rtol=1e-9)  # t = d_z sqrt(T)
    s = E.pairwise(X, test="signrank", ci=False)
    assert np.all((np.sign(s.statistic) == 0) | (np.sign(s.statistic) == np.sign(s.rank_biserial)))
    M = X.to_numpy()
    i, j = pair_index(7)
    for k in range(len(s)):
        d = list(M[:, i[k]] - M[:, j[k]])
        assert s.d_z[k] == pytest.approx(hand_dz(d), rel=1e-9)


def test_pairwise_corrections():
    X = _matrix(T=20, S=8, seed=3)
    raw = E.pairwise(X, test="ttest", ci=False)
    for method in ("holm", "bh", "bonferroni"):
        df = E.pairwise(X, test="ttest", correction=method, alpha=0.1, ci=False)
        np.testing.assert_array_equal(df.p_value, raw.p_value)
        np.testing.assert_allclose(df.p_adjusted, multipletests(raw.p_value, method=SM[method])[1], rtol=1e-12)
        np.testing.assert_array_equal(df.significant, df.p_adjusted < 0.1)
        assert df.attrs["correction"] == method and df.attrs["alpha"] == 0.1


@pytest.mark.parametrize("test", MULTI)
def test_tukey_tests_refuse_a_correction(test):
    with pytest.raises(ArgumentError, match=rf"'{test}' is a Tukey-type.*already adjusted.*correction must be 'none'"):
        E.pairwise(_matrix(S=3), test=test, correction="holm", ci=False)


def test_pairwise_bootstrap_equals_scipy_and_is_reproducible(monkeypatch):
    X = _matrix(T=20, S=5, grid=50)
    M = X.to_numpy()
    monkeypatch.setattr(E, "_CHUNK_BYTES", 3 * B * 20 * 8)  # three pairs a chunk: 4 chunks for 10 pairs
    df = E.pairwise(X, n_resamples=B, seed=5, ci=True)
    again = E.pairwise(X, n_resamples=B, seed=5, ci=True)
    pd.testing.assert_frame_equal(df, again)
    other = E.pairwise(X, n_resamples=B, seed=6, ci=True)
    assert not np.array_equal(df.ci_low, other.ci_low)
    assert np.all(df.ci_low <= df["diff"]) and np.all(df["diff"] <= df.ci_high) and np.all(df.ci_low < df.ci_high)
    i, j = pair_index(5)
    stat = E.SnappedMean(1.0)
    for k in (0, 4, 9):  # first, second and last chunk: each pair as scipy gives it alone, on its own scale
        d = M[:, i[k]] - M[:, j[k]]
        u = E.units(max(np.abs(M[:, i[k]]).max(), np.abs(M[:, j[k]]).max()))[0]
        ref = sps.bootstrap(
            (d / u,), stat, n_resamples=B, confidence_level=0.95, method="BCa", rng=np.random.default_rng(5)
        )
        # as scipy gives it alone, up to the last bits of BCa's interpolation (a batch of rows sums
        # the jackknife in another order)
        assert df.ci_low[k] == pytest.approx(u * ref.confidence_interval.low, rel=1e-12, abs=1e-15)
        assert df.ci_high[k] == pytest.approx(u * ref.confidence_interval.high, rel=1e-12, abs=1e-15)
        # the scores are fiftieths: in integers the sums are exact, so np.mean's ties are the true ones
        exact = sps.bootstrap((np.round(d * 50),), np.mean, n_resamples=B, method="BCa", rng=np.random.default_rng(5))
        assert df.ci_low[k] == pytest.approx(exact.confidence_interval.low / 50, abs=1e-11)
        assert df.ci_high[k] == pytest.approx(exact.confidence_interval.high / 50, abs=1e-11)
    narrow = E.pairwise(X, n_resamples=B, seed=5, confidence=0.5, ci=True)
    assert np.all(narrow.ci_low >= df.ci_low) and np.all(narrow.ci_high <= df.ci_high)
    assert df.attrs["ci"] is True and df.attrs["seed"] == 5 and df.attrs["n_resamples"] == B


def test_bootstrap_equals_plain_scipy_on_continuous_scores():
    X = _matrix(T=20, S=4, seed=9)  # continuous: no resample mean ties the sample's
    M = X.to_numpy()
    df = E.pairwise(X, n_resamples=B, seed=1, confidence=0.9, ci=True)
    i, j = pair_index(4)
    for k in range(len(df)):
        ref = sps.bootstrap(
            (M[:, i[k]] - M[:, j[k]],),
            np.mean,
            n_resamples=B,
            confidence_level=0.9,
            method="BCa",
            rng=np.random.default_rng(1),
        )
        assert df.ci_low[k] == pytest.approx(ref.confidence_interval.low, abs=1e-11)
        assert df.ci_high[k] == pytest.approx(ref.confidence_interval.high, abs=1e-11)


def test_snapped_mean():
    f = E.SnappedMean(1.0)
    assert f.decimals == 12 and E.SnappedMean(0.5).decimals == 13 and E.SnappedMean(40.0).decimals == 11
    a, b = np.array([0.1, 0.2, 0.3]), np.array([0.3, 0.2, 0.1])
    assert np.mean(a) != np.mean(b) and f(a) == f(b)  # equal in exact arithmetic, equal here
    x = np.arange(12.0).reshape(3, 4) / 7
    np.testing.assert_allclose(f(x, axis=-1), x.mean(axis=-1), atol=1e-12)
    assert E.SnappedMean(0.0).decimals == 12


def test_identical_and_shifted_systems():
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 1, 12)
    X = pd.DataFrame({"A": a, "A2": a, "A+": a + 0.25, "B": rng.uniform(0, 1, 12)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DegenerateDataWarning from scipy
        df = E.pairwise(X, n_resamples=B, ci=True).set_index(["system_1", "system_2"])
    same, shift = df.loc[("A", "A2")], df.loc[("A", "A+")]
    assert same["diff"] == 0 and same.d_z == 0 and same.rank_biserial == 0
    assert same.ci_low == same.ci_high == 0 and same.p_value == 1 and not same.significant
    assert shift["diff"] == pytest.approx(-0.25) and shift.d_z == -np.inf and shift.rank_biserial == -1
    assert shift.ci_low == shift.ci_high == pytest.approx(-0.25)


def test_baselines():
    X = _matrix(T=18, S=5, grid=20)
    names = list(X.columns)
    full = E.pairwise(X, test="signrank", n_resamples=B, ci=True).set_index(["system_1", "system_2"])
    df = E.pairwise(X, test="signrank", baselines=["run3"], correction="holm", n_resamples=B, ci=True)
    assert df.system_1.tolist() == ["run3"] * 4 and df.system_2.tolist() == ["run0", "run1", "run2", "run4"]
    np.testing.assert_allclose(df.p_adjusted, multipletests(df.p_value, method="holm")[1])
    for _, row in df.iterrows():
        o = row.system_2
        if names.index(o) > 3:  # same orientation as in the all-pairs table
            ref, sign = full.loc[("run3", o)], 1
        else:  # mirrored: the signed quantities change sign, the interval is mirrored
            ref, sign = full.loc[(o, "run3")], -1
        for col in ("diff", "d_z", "rank_biserial", "statistic"):
            assert row[col] == pytest.approx(sign * ref[col], rel=1e-12, abs=1e-15)
        assert row.p_value == ref.p_value
        lo, hi = (ref.ci_low, ref.ci_high) if sign == 1 else (-ref.ci_high, -ref.ci_low)
        assert row.ci_low == pytest.approx(lo, rel=1e-9, abs=1e-12)
        assert row.ci_high == pytest.approx(hi, rel=1e-9, abs=1e-12)
    two = E.pairwise(X, baselines=["run4", "run1"], correction="bh", ci=False)
    pairs = list(zip(two.system_1, two.system_2))
    assert len(pairs) == 4 + 3 and ("run4", "run1") in pairs and ("run1", "run4") not in pairs
    np.testing.assert_allclose(two.p_adjusted, multipletests(two.p_value, method="fdr_bh")[1])
    one = E.pairwise(X, baselines="run0", ci=False)
    assert one.system_1.eq("run0").all() and len(one) == 4 and one.attrs["baselines"] == ["run0"]


def test_baselines_with_a_tukey_test():
    X = _matrix(T=10, S=4)
    full = E.pairwise(X, test="friedman", ci=False).set_index(["system_1", "system_2"])
    df = E.pairwise(X, test="friedman", baselines=["run2"], ci=False)
    for _, row in df.iterrows():
        key = ("run2", row.system_2) if row.system_2 > "run2" else (row.system_2, "run2")
        assert row.statistic == pytest.approx(full.loc[key].statistic)  # unsigned: not negated
        assert row.p_value == pytest.approx(full.loc[key].p_value, rel=1e-9)


def test_baseline_errors():
    X = _matrix(S=3)
    with pytest.raises(ArgumentError, match=r"unknown baseline 'bm25'.*'run0', 'run1', 'run2'"):
        E.pairwise(X, baselines=["bm25"], ci=False)
    with pytest.raises(ArgumentError, match="'run1' twice"):
        E.pairwise(X, baselines=["run1", "run1"], ci=False)
    with pytest.raises(ArgumentError, match="at least one system"):
        E.pairwise(X, baselines=[], ci=False)
    with pytest.raises(ArgumentError, match="list of system names"):
        E.pairwise(X, baselines=[0], ci=False)


def test_names_and_matrix_checks():
    M = _matrix(T=6, S=3).to_numpy()
    df = E.pairwise(M, names=["a", "b", "c"], ci=False)
    assert df.system_1.tolist() == ["a", "a", "b"]
    assert E.pairwise(M, ci=False).system_2.tolist() == ["s1", "s2", "s2"]  # stats' default names
    with pytest.raises(ArgumentError, match="name the 3 systems.*got 2"):
        E.pairwise(M, names=["a", "b"], ci=False)
    with pytest.raises(ArgumentError, match=r"unique; \['a'\]"):
        E.pairwise(M, names=["a", "a", "b"], ci=False)
    with pytest.raises(ArgumentError, match="DataFrame's columns name its systems"):
        E.pairwise(pd.DataFrame(M, columns=["x", "y", "z"]), names=["a", "b", "c"], ci=False)
    bad = M.copy()
    bad[2, 1] = np.nan
    with pytest.raises(
        ArgumentError,
        match=r"1 entries are NaN or infinite, the first at topic row 2, "
        r"system 's1'.*dropna",
    ):
        E.pairwise(bad, ci=False)
    with pytest.raises(ArgumentError, match="NaN or infinite"):
        E.system_means(pd.DataFrame(bad, columns=["x", "y", "z"]).replace(np.nan, np.inf))
    with pytest.raises(ArgumentError, match="at least two topics"):
        E.pairwise(M[:1], ci=False)
    with pytest.raises(ArgumentError, match="at least one topic and two systems"):
        E.pairwise(M[:, :1], ci=False)
    with pytest.raises(ArgumentError, match="topics x systems matrix of numbers"):
        E.pairwise([["a", "b"], ["c", "d"]], ci=False)


def test_bad_arguments():
    X = _matrix(S=3)
    with pytest.raises(PolicyError, match="test must be one of.*did you mean 'ttest'"):
        E.pairwise(X, test="t-test")
    with pytest.raises(PolicyError, match="correction must be one of"):
        E.pairwise(X, correction="fdr")
    with pytest.raises(
        ArgumentError,
        match=r"confidence must be a number strictly between 0 and 1 "
        r"\(for example 0.95\)",
    ):
        E.pairwise(X, confidence=95)
    with pytest.raises(ArgumentError, match="n_resamples must be at least 1"):
        E.pairwise(X, n_resamples=0)
    with pytest.raises(ArgumentError, match="n_resamples must be an integer"):
        E.system_means(X, n_resamples=1e4)
    with pytest.raises(ArgumentError, match="seed must be at least 0"):
        E.pairwise(X, seed=-1)
    with pytest.raises(ArgumentError, match="ci must be True or False"):
        E.pairwise(X, ci="yes")
    with pytest.raises(ArgumentError, match="alpha must be"):
        E.pairwise(X, alpha=0)
    assert issubclass(PolicyError, IrscaleError) and issubclass(ArgumentError, ValueError)


def test_ci_auto(monkeypatch):
    X = _matrix(T=10, S=4)
    monkeypatch.setattr(E, "CI_AUTO_MAX", 5)
    with pytest.warns(IrscaleWarning, match="no confidence intervals for 6 comparisons.*ci=True"):
        df = E.pairwise(X, n_resamples=B)
    assert df.ci_low.isna().all() and df.attrs["ci"] is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert E.pairwise(X, ci=False).ci_high.isna().all()
        small = E.pairwise(X, baselines=["run0"], n_resamples=B)  # 3 comparisons: computed
    assert small.ci_low.notna().all() and small.attrs["ci"] is True


def test_seed_none_is_recorded():
    X = _matrix(T=10, S=3)
    df = E.pairwise(X, seed=None, n_resamples=B, ci=True)
    again = E.pairwise(X, seed=df.attrs["seed"], n_resamples=B, ci=True)
    pd.testing.assert_frame_equal(df, again)


# -- system means ------------------------------------------------------------------------------------


def test_system_means(monkeypatch):
    X = _matrix(T=16, S=5, grid=30)
    X["flat"] = 0.4
    monkeypatch.setattr(E, "_CHUNK_BYTES", 2 * B * 16 * 8)  # two systems a chunk
    df = E.system_means(X, n_resamples=B, seed=3)
    assert list(df.columns) == ["system", "mean", "ci_low", "ci_high"]
    assert df.system.tolist() == list(X.columns)
    np.testing.assert_allclose(df["mean"], X.mean())
    stat = E.SnappedMean(1.0)
    for k in range(5):
        x = X.iloc[:, k].to_numpy()
        u = E.units(np.abs(x).max())[0]
        ref = sps.bootstrap((x / u,), stat, n_resamples=B, method="BCa", rng=np.random.default_rng(3))
        # as scipy gives it alone, up to the last bits of BCa's interpolation (a batch of rows sums
        # the jackknife in another order)
        assert df.ci_low[k] == pytest.approx(u * ref.confidence_interval.low, rel=1e-12, abs=1e-15)
        assert df.ci_high[k] == pytest.approx(u * ref.confidence_interval.high, rel=1e-12, abs=1e-15)
    assert np.all(df.ci_low <= df["mean"]) and np.all(df["mean"] <= df.ci_high)
    assert df.ci_low.iloc[-1] == df.ci_high.iloc[-1] == pytest.approx(0.4)
    pd.testing.assert_frame_equal(df, E.system_means(X, n_resamples=B, seed=3))
    assert df.attrs["seed"] == 3 and df.attrs["n_topics"] == 16


# -- the module itself ---------------------------------------------------------------------------------


def test_docstring_examples():
    result = doctest.testmod(E, verbose=False)
    assert result.attempted >= 8 and result.failed == 0


def test_imports_stay_in_its_layer():
    tree = ast.parse(Path(E.__file__).read_text(encoding="utf-8"))
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in mods if m.startswith("irscale")}
    assert ours <= {"irscale._version", "irscale.errors", "irscale.validate", "irscale.stats"}, ours
    assert set(PAIRWISE) | set(MULTI) == set(TESTS)


def test_each_system_and_pair_on_its_own_scale():
    """A system's interval and a pair's interval and d_z depend on those systems' scores
    alone: next to a system scoring 1e9 (a ranked column), or scaled down to 1e-200 (a
    normalised ranked column at N = 1000), they neither collapse nor move."""
    X = _matrix(T=16, S=3, grid=30)
    base = E.system_means(X, n_resamples=B, seed=3)
    big = X.assign(huge=X.iloc[:, 0] * 1e9 + 1e9)
    pd.testing.assert_frame_equal(
        E.system_means(big, n_resamples=B, seed=3).iloc[:3].reset_index(drop=True), base, check_exact=True
    )
    tiny = E.system_means(X * 2.0**-700, n_resamples=B, seed=3)  # exact scaling: the same intervals, scaled
    for col in ("mean", "ci_low", "ci_high"):
        assert np.array_equal(tiny[col].to_numpy(), base[col].to_numpy() * 2.0**-700)
    assert (tiny.ci_high > tiny.ci_low).all()
    pairs = E.pairwise(X, n_resamples=B, seed=3, ci=True)
    with_big = E.pairwise(big, n_resamples=B, seed=3, ci=True)
    first = with_big[(with_big.system_1 != "huge") & (with_big.system_2 != "huge")].reset_index(drop=True)
    for col in ("diff", "ci_low", "ci_high", "d_z"):
        assert np.array_equal(first[col].to_numpy(), pairs[col].to_numpy()), col
