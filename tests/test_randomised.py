"""The randomised tests of irscale.stats (paired permutation, randomised Tukey HSD, paired
bootstrap): exact p-values against scipy.stats.permutation_test, Monte Carlo p-values
within their standard error of the exact ones, the resampled tests against plain-Python
references written here from the definitions (same seeds, same draws), the family-wise
error of the randomised Tukey HSD under a simulated null, and the scale owner's verdict."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

import irscale
from irscale import stats
from irscale.errors import IrscaleError
from irscale.scales.permissible import meaningful_test
from irscale.study import compare


def _scipy_paired(x, y, alternative):
    return sps.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative=alternative,
    ).pvalue


@pytest.mark.slow
@pytest.mark.parametrize("T", [3, 8, 12, 16])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_permutation_equals_scipy(T, alternative):
    rng = np.random.default_rng(T)
    X = rng.random((T, 4))
    res = stats.permutation_test(X, alternative=alternative)
    assert res.provenance["exact"] and res.provenance["resamples"] == 2**T
    for k, (a, b) in enumerate(itertools.combinations(range(4), 2)):
        assert abs(res.pvalue[k] - _scipy_paired(X[:, a], X[:, b], alternative)) <= 1e-12
        assert res.statistic[k] == pytest.approx(np.mean(X[:, a] - X[:, b]), abs=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_permutation_counts_lattice_ties_as_the_exact_values_do(alternative):
    """Scores in tenths (P@10): many sign vectors reach the observed mean exactly, but
    their float sums differ in the last bits. irscale counts them as the exact
    fractions do (a reference over all 2^12 sign vectors in Fractions). scipy's
    tolerance is relative to the observed mean, so it can miscount them where that mean
    is float noise around 0 (differences in tenths: 0.9785 instead of 1)."""
    from fractions import Fraction

    rng = np.random.default_rng(7)
    K = rng.integers(0, 11, size=(12, 4))
    X = K / 10
    res = stats.permutation_test(X, alternative=alternative)
    for k, (a, b) in enumerate(itertools.combinations(range(4), 2)):
        d = [Fraction(int(K[t, a] - K[t, b]), 10) for t in range(12)]
        obs = sum(d)
        hits = 0
        for signs in itertools.product((1, -1), repeat=12):
            z = sum(s * x for s, x in zip(signs, d))
            hits += (
                abs(z) >= abs(obs) if alternative == "two-sided" else z >= obs if alternative == "greater" else z <= obs
            )
        assert res.pvalue[k] == hits / 2**12


def test_monte_carlo_permutation_is_within_three_standard_errors_of_the_exact_one():
    rng = np.random.default_rng(20)
    X = rng.normal(size=(20, 5)) * 0.1 + np.linspace(0, 0.06, 5)
    exact = stats.permutation_test(X)
    mc = stats.permutation_test(X, exact_limit=10, seed=4)  # a fixed draw: each pair within 3 SE
    assert exact.provenance["exact"] and not mc.provenance["exact"] and mc.provenance["resamples"] == 100_000
    se = mc.provenance["mc_se"]
    assert np.all(np.abs(mc.pvalue - exact.pvalue) <= 3 * np.maximum(se, 1 / 100_001))
    assert "+1 correction" in mc.method and "seed 4" in mc.method


def _rtukey_reference(X, B, seed):
    """Carterette (2012), written from the definition with loops: the same draws as
    irscale documents (one random((B, T, S - 1)) draw; each topic's row shuffled by
    Fisher-Yates, position k swapped with floor(u * (k + 1)) for k = S - 1 down to 1)."""
    T, S = X.shape
    U = np.random.default_rng(seed).random((B, T, S - 1)).tolist()
    ranges = []
    for b in range(B):
        rows = []
        for t in range(T):
            row = list(X[t])
            for k in range(S - 1, 0, -1):
                q = math.floor(U[b][t][k - 1] * (k + 1))
                row[k], row[q] = row[q], row[k]
            rows.append(row)
        means = [sum(rows[t][s] for t in range(T)) / T for s in range(S)]
        ranges.append(max(means) - min(means))
    out = []
    for a, b in itertools.combinations(range(S), 2):
        d = abs(sum(X[:, a]) / T - sum(X[:, b]) / T)
        out.append(sum(r >= d - 1e-12 for r in ranges) / B)
    return out


def test_rtukey_equals_a_plain_reference_with_the_same_seed():
    X = np.random.default_rng(4).random((9, 5)) + np.linspace(0, 0.3, 5)
    res = stats.rtukey_test(X, n_resamples=400, seed=11)
    assert res.pvalue.tolist() == pytest.approx(_rtukey_reference(X, 400, 11), abs=0)
    assert res.statistic == pytest.approx(
        [X[:, a].mean() - X[:, b].mean() for a, b in itertools.combinations(range(5), 2)]
    )


def _bootstrap_reference(X, B, seed):
    """Sakai (2006): centred differences, topics resampled, studentized means, two-sided."""
    T, S = X.shape
    idx = np.random.default_rng(seed).integers(0, T, size=(B, T))

    def t_of(v):
        m = sum(v) / len(v)
        sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
        return 0.0 if sd == 0 and m == 0 else math.copysign(math.inf, m) if sd == 0 else m / (sd / math.sqrt(len(v)))

    out = []
    for a, b in itertools.combinations(range(S), 2):
        d = [X[t, a] - X[t, b] for t in range(T)]
        mean = sum(d) / T
        z = [x - mean for x in d]
        t_obs = abs(t_of(d))
        out.append(sum(abs(t_of([z[k] for k in row])) >= t_obs * (1 - 1e-9) for row in idx) / B)
    return out


def test_bootstrap_equals_a_plain_reference_with_the_same_seed():
    X = np.random.default_rng(5).random((12, 4)) + np.array([0, 0.05, 0.2, 0.21])
    res = stats.bootstrap_test(X, n_resamples=500, seed=2)
    assert res.pvalue.tolist() == _bootstrap_reference(X, 500, 2)


@pytest.mark.slow
def test_rtukey_controls_the_family_wise_error_and_uncorrected_permutation_does_not(capsys):
    """500 simulated collections, 8 systems x 15 topics, all scores from one distribution
    (H0 true for every pair): the randomised Tukey HSD rejects some pair in at most alpha
    plus 3 standard errors of the collections; the uncorrected permutation test, 28 pairs
    each at alpha, far more often."""
    rng = np.random.default_rng(2026)
    alpha, n = 0.05, 500
    any_tukey = any_perm = 0
    for k in range(n):
        X = rng.beta(2, 5, size=(15, 8))
        any_tukey += stats.rtukey_test(X, alpha, n_resamples=400, seed=k).n_significant > 0
        any_perm += stats.permutation_test(X, alpha).n_significant > 0
    se = math.sqrt(alpha * (1 - alpha) / n)
    with capsys.disabled():  # the guide quotes these rates
        print(
            f"\nfamily-wise error over {n} null collections: rtukey {any_tukey / n:.3f}, permutation {any_perm / n:.3f}"
        )
    assert any_tukey / n <= alpha + 3 * se, any_tukey / n
    assert any_perm / n >= 3 * alpha, any_perm / n  # about 0.5 with 28 pairs


def test_all_pairs_at_once_and_degenerate_pairs():
    X = np.array([[0.5, 0.5, 0.2], [0.3, 0.3, 0.1], [0.9, 0.9, 0.8], [0.1, 0.1, 0.0]])
    for f in (stats.permutation_test, stats.bootstrap_test):
        res = f(X)
        assert res.pvalue[0] == 1.0  # identical systems: never significant
    # system 0 above system 2 by 0.1 or more on every topic: the exact test's smallest p
    res = stats.permutation_test(X, alternative="greater")
    assert res.pvalue[1] == 1 / 2**4
    with pytest.raises(IrscaleError):
        stats.permutation_test(X, alternative="bigger")
    with pytest.raises(IrscaleError):
        stats.bootstrap_test(X, n_resamples=0)


def test_run_test_names_them_and_the_scale_owner_needs_an_interval_scale():
    X = np.random.default_rng(1).random((10, 3))
    for name in stats.RANDOMISED:
        res = stats.run_test(name, X)
        assert res.test == name and res.provenance["test"] == stats.RANDOMISED_NAMES[name]
        assert not meaningful_test(name, False, False) and meaningful_test(name, True, False)
    assert set(stats.RANDOMISED).isdisjoint(stats.TESTS)  # the paper's eight stay the default


def test_missing_scores_few_topics_and_options():
    """A pair with a missing score (NaN, as --missing-topics drop leaves) gets p-value
    NaN and is never significant; the others are as without it (rtukey, which permutes
    whole topics, leaves a system with a missing score out). The bootstrap on one topic
    refuses. run_test seeds a randomised test
    (and records the seed); exact_limit is bounded."""
    X = np.random.default_rng(3).random((10, 3)) + np.array([0.0, 0.4, 0.8])
    Y = X.copy()
    Y[2, 0] = np.nan
    for f in (stats.permutation_test, stats.bootstrap_test):
        full, holed = f(X), f(Y)
        assert np.isnan(holed.pvalue[:2]).all() and not holed.significant[:2].any()
        assert holed.pvalue[2] == full.pvalue[2] and holed.significant[2] == full.significant[2]
    holed = stats.rtukey_test(Y)  # system 0 has a missing score: left out, its pairs NaN
    assert np.isnan(holed.pvalue[:2]).all() and not holed.significant[:2].any()
    assert holed.pvalue[2] == stats.rtukey_test(X[:, 1:]).pvalue[0]
    with pytest.raises(IrscaleError, match="at least 2 topics"):
        stats.bootstrap_test(X[:1])
    assert stats.permutation_test(X[:1]).pvalue.tolist() == [1.0, 1.0, 1.0]
    res = stats.run_test("bootstrap", X, seed=99, measure="toy")
    assert res.provenance["seed"] == 99 and res.provenance["measure"] == "toy"
    assert res.pvalue.tolist() == stats.bootstrap_test(X, seed=99).pvalue.tolist()
    assert stats.run_test("ttest", X, seed=99).pvalue.tolist() == stats.t_test(X).pvalue.tolist()  # draws nothing
    with pytest.raises(IrscaleError):
        stats.permutation_test(X, exact_limit=40)
    dp = stats.discriminative_power(Y, "permutation", seed=1)
    assert dp.n_pairs == 1
    with pytest.raises(IrscaleError, match="takes no options"):
        stats.discriminative_power(X, "ttest", seed=1)


def test_resampled_p_values_do_not_depend_on_the_blocks_or_the_other_systems(monkeypatch):
    """The draws come from one seeded stream whatever the block size (which depends on
    the number of pairs): a pair's Monte Carlo p-values are the same alone, among other
    systems, and in blocks of a few resamples."""
    X = np.random.default_rng(8).random((25, 6)) + np.linspace(0, 0.2, 6)
    whole = {f: f(X, n_resamples=3000, seed=4).pvalue[0] for f in (stats.permutation_test, stats.bootstrap_test)}
    monkeypatch.setattr(stats, "_BLOCK", 997)  # blocks of a few dozen resamples
    for f, p in whole.items():
        assert f(X, n_resamples=3000, seed=4).pvalue[0] == p
        assert f(X[:, :2], n_resamples=3000, seed=4).pvalue[0] == p


# -- in the study: compare / study -t permutation|rtukey|bootstrap ----------------------------------

TOY = Path(irscale.__file__).parent / "examples" / "toy"


@pytest.fixture(scope="module")
def toy_study():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP"])
        return table, compare(
            table, ["AP", "P"], 5, tests=["ttest", "randomised"], baselines=["bm25"], correction="holm", seed=3
        )


def test_groups_of_tests_expand_once_in_order():
    assert stats.expand_tests(["randomised", "paper"]) == stats.RANDOMISED + stats.TESTS
    assert stats.expand_tests(["rtukey", "randomised"]) == ("rtukey", "permutation", "bootstrap")
    with pytest.raises(IrscaleError, match="did you mean 'rtukey'"):
        stats.expand_tests(["rtukay"])


def test_the_study_runs_them_on_both_scales_with_its_seed(toy_study):
    """Tables 5/6 hold each randomised test's decisions on the original and the ranked
    scores, as stats.run_test gives them with the study's seed; meaningful only on one
    interval scale across topics (P's; not AP's, nor ranked AP's, which rests on each
    topic's recall base); rtukey keeps its count
    under a correction (it holds the family-wise error already); the comparisons with the
    baseline carry the same p-values, corrected (Holm) except rtukey's."""
    table, study = toy_study
    ch = study.changes.set_index(["measure", "test"])
    t = irscale.transform(table, ["AP", "P"], depth=5)
    for m in ("AP@5", "P@5"):
        orig, ranked = t.matrix(m), t.matrix(f"ranked({m})")
        for test in stats.RANDOMISED:
            row = ch.loc[(m, stats.test_name(test))]
            a, b = stats.run_test(test, orig, seed=3), stats.run_test(test, ranked, seed=3)
            assert (row["sig"], row["sig_ranked"]) == (a.n_significant, b.n_significant)
            # P is an interval scale; AP is not, and depends on each topic's recall base, so its
            # ranked version is an interval scale within a topic, not one across topics
            assert row["meaningful"] == row["meaningful_ranked"] == (m == "P@5")
            if test == "rtukey":
                assert (row["sig_adjusted"], row["sig_ranked_adjusted"]) == (row["sig"], row["sig_ranked"])
            pairs = study.pairs[(study.pairs["measure"] == m) & (study.pairs["test"] == stats.test_name(test))]
            systems = list(orig.columns)
            k = systems.index("bm25")
            for _, r in pairs[pairs["scale"] == "original"].iterrows():
                o = systems.index(r["system_2"])
                lo, hi = min(k, o), max(k, o)
                pos = list(zip(*stats.pair_index(len(systems)))).index((lo, hi))
                assert r["p_value"] == a.pvalue[pos]
            assert (pairs["correction"] == ("none" if test == "rtukey" else "holm")).all()
    prov = study.provenance["randomised_tests"]
    T = len(study.topics)
    assert prov["permutation"] == (
        {"exact": True, "sign_vectors": 2**T}
        if T <= 20
        else {"resamples": 100_000, "seed": 3, "plus_one_correction": True}
    )
    assert prov["rtukey"] == {"resamples": 10_000, "seed": 3} and study.provenance["tests"][0] == "ttest"


@pytest.mark.slow
def test_the_cli_takes_them_and_refuses_a_wrong_name_before_reading(tmp_path):
    from typer.testing import CliRunner

    from irscale.cli import app

    runner = CliRunner()
    args = ["compare", str(TOY / "qrels.txt"), str(TOY / "runs"), "-N", "5", "-m", "P", "--no-effects"]
    bad = runner.invoke(app, [*args, "-t", "permutaton"])
    assert bad.exit_code == 2 and "did you mean 'permutation'" in bad.output
    missing = runner.invoke(app, ["compare", str(tmp_path / "nope.txt"), str(tmp_path), "-t", "rtukee"])
    assert missing.exit_code == 2 and "rtukey" in missing.output  # the test name before the files
    ok = runner.invoke(app, [*args, "-t", "randomised", "--seed", "2", "--out", str(tmp_path / "out")])
    assert ok.exit_code == 0, ok.output
    assert "Paired Randomisation Test" in (tmp_path / "out" / "tables5_6_significance_changes_N5.csv").read_text()
    study = runner.invoke(app, ["study", "trec8-like", str(TOY / "qrels.txt"), str(TOY / "runs"), "-t", "rtukeyy"])
    assert study.exit_code == 2 and "did you mean 'rtukey'" in study.output


def test_the_compiled_kernels_give_the_numpy_paths_counts():
    """The compiled loops (systems' sums for the permutation test, drawn topics only for the
    bootstrap, Fisher-Yates for rtukey) count what the numpy paths count, on lattice scores
    crowded with exact ties, with a missing score, and in both permutation modes."""
    from irscale import kernels

    if kernels.compiled("stats.randomised", stats._build_randomised_kernels) is None:
        pytest.skip("numba is not installed here: only the numpy paths run")
    rng = np.random.default_rng(8)
    for T, S in ((12, 7), (30, 9)):
        X = np.round(rng.random((T, S)) * 5) / 5  # fifths: the permutation test's exact integer path
        X[:, 3] = X[:, 2]  # an identical pair: every difference 0
        W = X * (1 + 1e-3 * math.sqrt(2))  # not a lattice, crowded with near-ties: the float path and its band
        Y = W.copy()
        Y[1, 4] = np.nan
        assert stats._lattice(X) is not None and stats._lattice(W) is None
        for name in stats.RANDOMISED:
            for M in (X, W, Y) if name != "rtukey" else (X, W):
                fast = stats.run_test(name, M, seed=2).pvalue
                with kernels.disabled("stats.randomised"):
                    slow = stats.run_test(name, M, seed=2).pvalue
                np.testing.assert_array_equal(fast, slow, err_msg=f"{name} T={T}")
        for alternative in ("greater", "less"):
            fast = stats.permutation_test(X, alternative=alternative, seed=1).pvalue
            with kernels.disabled("stats.randomised"):
                slow = stats.permutation_test(X, alternative=alternative, seed=1).pvalue
            np.testing.assert_array_equal(fast, slow)


def test_a_zero_mean_difference_is_not_float_noise():
    """Differences that sum to 0 exactly (in exact arithmetic; float sums leave noise)
    give the bootstrap and the permutation test p-value 1, and a constant nonzero
    difference the bootstrap p-value 0."""
    a, b = [1, 4, 3, 0, 5, 6, 2, 3, 1, 4, 0, 2], [4, 1, 3, 2, 2, 3, 3, 2, 3, 0, 4, 4]  # sixths
    assert sum(a) == sum(b)
    X = np.column_stack([np.array(a) / 6, np.array(b) / 6])
    d = X[:, 0] - X[:, 1]
    assert d.mean() != 0  # float noise: the sixths sum to the same
    assert stats.bootstrap_test(X).pvalue[0] == 1.0
    assert stats.permutation_test(X).pvalue[0] == 1.0
    Y = np.column_stack([np.full(12, 0.7), np.full(12, 0.6)])
    assert stats.bootstrap_test(Y).pvalue[0] == 0.0


def test_scores_on_a_lattice_are_summed_exactly():
    """P@N's k/N and RR's 1/k (L = lcm(1..30), about 2.3e12) are summed as integers: at
    T = 10 (a tolerance below 1/L) the exact p-values equal those of exact fractions, sign
    vector by sign vector; and a lattice pair's p-value does not depend on whether another
    system's scores put the matrix off the lattice."""
    from fractions import Fraction

    rng = np.random.default_rng(5)
    T, S = 10, 4
    for X in (rng.integers(0, 31, (T, S)) / 30, 1 / rng.integers(1, 31, (T, S))):
        assert stats._lattice(X) is not None
        res = stats.permutation_test(X)
        F = [[Fraction(x).limit_denominator(10**13) for x in row] for row in X]
        for p, (a, b) in enumerate(itertools.combinations(range(S), 2)):
            d = [F[t][a] - F[t][b] for t in range(T)]
            obs = abs(sum(d))
            hits = sum(abs(sum(-x if (k >> t) & 1 else x for t, x in enumerate(d))) >= obs for k in range(2**T))
            assert res.pvalue[p] == hits / 2**T
        off = np.column_stack([X, rng.random(T)])  # one system off the lattice: the float path for all
        assert stats._lattice(off) is None
        same = [0, 1, 2, 4, 5, 7]  # the pairs of the first four systems among those of five
        np.testing.assert_array_equal(stats.permutation_test(off).pvalue[same], res.pvalue)


def test_the_study_reports_discriminative_power_and_the_asl_curves(toy_study):
    """study.power: per measure and test with a p-value per pair, what
    stats.discriminative_power says on each scale; study.asl: its sorted p-values at each
    percent of the pairs (position floor(k (n - 1) / 100))."""
    table, study = toy_study
    t = irscale.transform(table, ["AP", "P"], depth=5)
    assert list(study.power["test"].unique()) == [stats.test_name(x) for x in ("ttest", *stats.RANDOMISED)]
    for _, row in study.power.iterrows():
        test = next(x for x in stats.ALL_TESTS if stats.test_name(x) == row["test"])
        for suffix, col in (("", row["measure"]), ("_ranked", f"ranked({row['measure']})")):
            dp = stats.discriminative_power(t.matrix(col), test, seed=3) if test in stats.RANDOMISED else None
            dp = dp or stats.discriminative_power(t.matrix(col), test)
            assert row["share" + suffix] == dp.share and row["pairs"] == dp.n_pairs
            assert row["asl_median" + suffix] == np.median(dp.asl)
            curve = study.asl[
                (study.asl["measure"] == row["measure"])
                & (study.asl["test"] == row["test"])
                & (study.asl["scale"] == ("ranked" if suffix else "original"))
            ]
            n = dp.n_pairs
            assert curve["asl"].tolist() == [dp.asl[k * (n - 1) // 100] for k in range(101)]


def test_the_bootstrap_on_one_topic_is_refused_before_any_rank_map(tmp_path):
    """compare with -t bootstrap on runs of one topic: one clear error, before the rank maps."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2 0\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for k, order in enumerate(("d1 d2", "d2 d1", "d1 d3")):
        lines = [f"1 Q0 {d} {r + 1} {10 - r} run{k}" for r, d in enumerate(order.split())]
        (runs / f"run{k}.txt").write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IrscaleError, match="at least 2 topics"):
            compare(irscale.evaluate(tmp_path / "q.txt", runs, ["P"]), ["P"], 5, tests=["bootstrap"])
