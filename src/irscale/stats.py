"""Statistical analysis of a topics x systems score matrix (Ferrante, Ferro & Fuhr 2021, Section 7).

Every test is vectorised over all system pairs (129 systems: 8,256 pairs) and returns a
result object with the statistic, p-values, the significant pairs at ``alpha`` and its
provenance. Pairs are in ``itertools.combinations(range(S), 2)`` order (i < j).

Pairwise tests (no multiple-comparison adjustment, as in the paper):

* ``sign``: H0: P(x_i > x_j) = 1/2 over topics. Ties (equal scores) are dropped; exact
  two-sided binomial p-value (Matlab ``signtest`` for n < 100).
* ``ranksum`` (Wilcoxon rank-sum / Mann-Whitney): H0: the two systems' score samples come
  from the same distribution (topics treated as unpaired). Mid-ranks for ties; normal
  approximation with tie-corrected variance and continuity correction (Matlab
  ``ranksum`` for samples of this size).
* ``signrank`` (Wilcoxon signed-rank): H0: the paired differences are symmetric about 0.
  Zero differences dropped, mid-ranks for tied ``|differences|`` (equal up to 1e-9 of the
  score scale: float noise must not break the ties of, e.g., multiples of 1/N); normal approximation with
  tie-corrected variance and continuity correction (Matlab ``signrank``, n > 15).
* ``ttest`` (paired Student's t): H0: mean paired difference 0; two-sided.

Multi-system tests, each followed by all-pairs comparisons on the studentized range
(Tukey HSD; Tukey-Kramer form as Matlab's ``multcompare``):

* ``anova1``: one-way ANOVA, systems as groups; pairs on system means, MSE with
  S(T-1) degrees of freedom.
* ``kruskal``: Kruskal-Wallis; pairs on mean ranks (ranks over all S*T scores), variance
  N(N+1)/12 - sum(t^3-t)/(12(N-1)), infinite degrees of freedom (Matlab).
* ``anova2``: two-way ANOVA without interaction (topic + system, one score per cell); pairs
  on system means, MSE with (T-1)(S-1) degrees of freedom.
* ``friedman``: Friedman; pairs on mean within-topic ranks, variance
  S(S+1)/12 * (1 - sum(t^3-t) / (T S (S^2-1))) per topic, infinite degrees of freedom.

Randomised tests (:data:`RANDOMISED`, beside the paper's eight, seeded; compiled loops
with numpy paths that count the same): ``permutation`` (paired randomisation,
:func:`permutation_test`), ``rtukey`` (randomised Tukey HSD, :func:`rtukey_test`, family-wise
like the Tukey-type tests above), ``bootstrap`` (paired bootstrap, :func:`bootstrap_test`);
:func:`discriminative_power` gives any test's ASL curve.

Correlations: Kendall's tau-b (tie-aware) between system rankings, overall (systems by
mean over topics) and topic by topic; AP correlation tau_ap (Yilmaz, Aslam & Robertson
2008).
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from scipy import stats as sps

from irscale._version import __version__
from irscale.errors import ArgumentError, check_choice
from irscale.kernels import compiled
from irscale.parallel import split_rows
from irscale.scales import permissible as _permissible
from irscale.validate import integer, level

__all__ = [
    "ALL_TESTS",
    "anova1",
    "anova2",
    "bootstrap_test",
    "Change",
    "change",
    "could_flip",
    "discriminative_power",
    "DiscriminativePower",
    "EXACT_LIMIT",
    "expand_tests",
    "FAMILYWISE",
    "friedman",
    "kendall_tau",
    "kruskal",
    "MAX_EXACT",
    "MULTI",
    "ORDINAL",
    "pair_index",
    "PAIRWISE",
    "PERMUTATION_CACHE_BYTES",
    "permutation_test",
    "RANDOMISED",
    "RANDOMISED_NAMES",
    "ranksum_test",
    "RESAMPLES",
    "rtukey_test",
    "run_test",
    "sign_test",
    "SIGNED",
    "signrank_test",
    "t_test",
    "tau_ap",
    "tau_by_topic",
    "tau_overall",
    "TEST_GROUPS",
    "test_name",
    "TEST_NAMES",
    "TestResult",
    "TESTS",
    "unordered_share",
]


PAIRWISE = ("sign", "ranksum", "signrank", "ttest")
MULTI = ("anova1", "kruskal", "anova2", "friedman")
TESTS = PAIRWISE + MULTI
TEST_NAMES = {
    "sign": "Sign Test",
    "ranksum": "Wilcoxon Rank Sum Test",
    "signrank": "Wilcoxon Signed Rank Test",
    "ttest": "Student's t Test",
    "anova1": "One-way ANOVA",
    "kruskal": "Kruskal-Wallis Test",
    "anova2": "Two-way ANOVA",
    "friedman": "Friedman Test",
}
# tests assuming only an ordinal scale: whatever irscale.scales.permissible (the owner of
# meaningfulness) says needs no interval scale
ORDINAL = tuple(t for t in TESTS if "interval" not in _permissible.TEST_NEEDS[t])


def pair_index(S: int) -> tuple[np.ndarray, np.ndarray]:
    """The (i, j) of every pair i < j, in combinations order."""
    i, j = np.triu_indices(S, k=1)
    return i, j


@dataclass(frozen=True, eq=False)
class TestResult:
    """Outcome of one test on every pair of systems.

    ``statistic`` and ``pvalue`` are per pair (for Tukey-type comparisons the statistic is
    the studentized range of the pair; p-values are computed on demand there, as the
    studentized-range distribution is slow); ``significant`` is the pair decision at
    ``alpha``; ``omnibus`` the multi-system test (statistic, p-value) where there is one.
    """

    test: str
    alpha: float
    statistic: np.ndarray
    significant: np.ndarray
    method: str
    systems: tuple[str, ...] = ()
    omnibus: tuple[float, float] | None = None
    provenance: dict = field(default_factory=dict)
    _pvalue: np.ndarray | None = field(default=None, repr=False)
    _range: tuple[int, float] | None = field(default=None, repr=False)  # (k, df) of the studentized range

    @cached_property
    def pvalue(self) -> np.ndarray:
        if self._pvalue is not None:
            return self._pvalue
        # every constructor gives one or the other: p-values, or the studentized range's (k, df)
        assert self._range is not None, "a TestResult needs _pvalue or _range"
        k, df = self._range
        return sps.studentized_range.sf(self.statistic, k, df)

    @property
    def n_significant(self) -> int:
        return int(self.significant.sum())

    def to_frame(self):
        """One row per pair: system_1, system_2, statistic, p_value, significant.
        (For Tukey-type comparisons the p-values come from the studentized-range
        distribution, about 10 ms a pair.)"""
        import pandas as pd

        i, j = pair_index(len(self.systems))
        return pd.DataFrame(
            {
                "system_1": [self.systems[a] for a in i],
                "system_2": [self.systems[b] for b in j],
                "statistic": self.statistic,
                "p_value": self.pvalue,
                "significant": self.significant,
            }
        )

    def pairs(self) -> list[tuple[str, str]]:
        """Names of the significantly different pairs."""
        i, j = pair_index(len(self.systems))
        return [(self.systems[a], self.systems[b]) for a, b in zip(i[self.significant], j[self.significant])]


def _as_matrix(X) -> tuple[np.ndarray, tuple[str, ...]]:
    """A topics x systems float matrix and the system names; at least two systems."""
    if hasattr(X, "columns"):  # a pandas DataFrame topics x systems
        M, names = np.asarray(X.to_numpy(), dtype=np.float64), tuple(map(str, X.columns))
    else:
        try:
            M = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgumentError(
                f"expected a topics x systems matrix of numbers (a DataFrame like "
                f"ScoreTable.matrix('AP') or a 2-D array), not {type(X).__name__}"
            ) from None
        names = tuple(f"s{k}" for k in range(M.shape[1])) if M.ndim == 2 else ()
    if M.ndim != 2 or M.shape[0] < 1 or M.shape[1] < 2:
        raise ArgumentError(
            f"expected a topics x systems matrix with at least one topic and two systems, got shape {M.shape}"
        )
    return M, names


def _midranks(a: np.ndarray, axis: int) -> np.ndarray:
    return sps.rankdata(a, axis=axis, method="average")


def _tie_sum(a: np.ndarray, axis: int) -> np.ndarray:
    """sum over tie groups of t^3 - t along ``axis`` (each slice separately)."""
    s = np.sort(np.moveaxis(np.asarray(a, dtype=np.float64), axis, -1), axis=-1)
    shape, n = s.shape[:-1], s.shape[-1]
    s = s.reshape(-1, n)
    new = np.ones(s.shape, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    starts = np.flatnonzero(new.ravel())
    lengths = np.diff(np.append(starts, s.size)).astype(np.float64)
    out = np.bincount(starts // n, weights=lengths**3 - lengths, minlength=s.shape[0])
    return out.reshape(shape)


# -- pairwise tests -------------------------------------------------------------------------------


def sign_test(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    i, j = pair_index(X.shape[1])
    d = X[:, i] - X[:, j]
    pos = (d > 0).sum(axis=0)
    neg = (d < 0).sum(axis=0)
    n = pos + neg
    k = np.minimum(pos, neg)
    p = np.where(n > 0, np.minimum(1.0, 2 * sps.binom.cdf(k, n, 0.5)), 1.0)
    return TestResult(
        "sign",
        alpha,
        (pos - neg).astype(np.float64),
        p < alpha,
        "exact binomial, zero differences dropped",
        names,
        _pvalue=p,
    )


def ranksum_test(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    T = X.shape[0]
    i, j = pair_index(X.shape[1])
    both = np.concatenate([X[:, i], X[:, j]], axis=0)  # (2T, P)
    r = _midranks(both, axis=0)
    W = r[:T].sum(axis=0)  # rank sum of the first system
    n1 = n2 = T
    N = n1 + n2
    mean = n1 * (N + 1) / 2
    ties = _tie_sum(both, axis=0)
    var = n1 * n2 / 12 * ((N + 1) - ties / (N * (N - 1)))
    dev = W - mean
    z = np.where(var > 0, (dev - 0.5 * np.sign(dev)) / np.sqrt(np.maximum(var, 1e-300)), 0.0)
    p = np.where(var > 0, 2 * sps.norm.sf(np.abs(z)), 1.0)
    return TestResult(
        "ranksum",
        alpha,
        z,
        p < alpha,
        "normal approximation, tie-corrected variance, continuity correction",
        names,
        _pvalue=p,
    )


def signrank_test(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    i, j = pair_index(X.shape[1])
    d = X[:, i] - X[:, j]
    nz = d != 0
    n = nz.sum(axis=0)
    # |differences| equal up to float noise (3/30 - 1/30 vs 4/30 - 2/30) are ties: they
    # are ranked on a grid of 1e-9 of the score scale (zeros are decided exactly)
    scale = float(np.nanmax(np.abs(X))) or 1.0
    grid = np.round(np.abs(d) / scale, 9)
    a = np.where(nz, grid, np.nan)
    r = sps.rankdata(a, axis=0, method="average", nan_policy="omit")  # zeros (nan) get no rank
    r = np.where(nz, r, 0.0)
    Wp = (r * (d > 0)).sum(axis=0)
    mean = n * (n + 1) / 4
    ties = _tie_sum(np.where(nz, grid, -1.0 - np.arange(d.shape[0])[:, None]), axis=0)  # zeros: distinct
    var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    dev = Wp - mean
    z = np.where(var > 0, (dev - 0.5 * np.sign(dev)) / np.sqrt(np.maximum(var, 1e-300)), 0.0)
    p = np.where(var > 0, 2 * sps.norm.sf(np.abs(z)), 1.0)
    return TestResult(
        "signrank",
        alpha,
        z,
        p < alpha,
        "normal approximation, zero differences dropped, tie-corrected variance, continuity correction",
        names,
        _pvalue=p,
    )


def t_test(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    T = X.shape[0]
    i, j = pair_index(X.shape[1])
    d = X[:, i] - X[:, j]
    m = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = m / (sd / math.sqrt(T))
        # constant differences: t is 0 (all zero) or infinite
        t = np.where(sd > 0, t, np.where(m == 0, 0.0, np.copysign(np.inf, m)))
    p = 2 * sps.t.sf(np.abs(t), T - 1)
    return TestResult("ttest", alpha, t, p < alpha, "paired Student's t, two-sided", names, _pvalue=p)


# -- multi-system tests with Tukey-type comparisons --------------------------------------------


@lru_cache(maxsize=64)
def _q_critical(alpha: float, k: int, df: float) -> float:
    """The 1 - alpha quantile of the studentized range for k groups and df degrees of
    freedom. scipy finds it by root-finding over a numerically integrated cdf (about 0.4 s
    at finite df); a study asks for the same few (alpha, k, df) again and again (every
    measure, original and ranked), so each is computed once per process."""
    return float(sps.studentized_range.ppf(1 - alpha, k, df))


def _tukey(test, alpha, means, se_pair, k, df, names, method, omnibus) -> TestResult:
    """Pairs whose |mean difference| / se exceeds the studentized range quantile / sqrt(2)
    (Tukey-Kramer: se is the standard error of the difference)."""
    i, j = pair_index(len(means))
    q = np.abs(means[i] - means[j]) / se_pair * math.sqrt(2)  # studentized range statistic
    crit = _q_critical(float(alpha), k, df)
    return TestResult(
        test, alpha, q, q > crit, method, names, omnibus, {"q_critical": crit, "k": k, "df": df}, _range=(k, df)
    )


def anova1(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    T, S = X.shape
    means = X.mean(axis=0)
    grand = X.mean()
    ss_between = T * ((means - grand) ** 2).sum()
    ss_within = ((X - means) ** 2).sum()
    df_b, df_w = S - 1, S * (T - 1)
    mse = ss_within / df_w
    F = (ss_between / df_b) / mse if mse > 0 else np.inf
    se = math.sqrt(mse * 2 / T)
    return _tukey(
        "anova1",
        alpha,
        means,
        se,
        S,
        df_w,
        names,
        "one-way ANOVA (systems), Tukey HSD on system means",
        (F, float(sps.f.sf(F, df_b, df_w))),
    )


def anova2(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    T, S = X.shape
    grand = X.mean()
    sys_m = X.mean(axis=0)
    top_m = X.mean(axis=1)
    resid = X - sys_m[None, :] - top_m[:, None] + grand
    df_e = (T - 1) * (S - 1)
    mse = (resid**2).sum() / df_e
    ss_sys = T * ((sys_m - grand) ** 2).sum()
    F = (ss_sys / (S - 1)) / mse if mse > 0 else np.inf
    se = math.sqrt(mse * 2 / T)
    return _tukey(
        "anova2",
        alpha,
        sys_m,
        se,
        S,
        df_e,
        names,
        "two-way ANOVA (topic + system, no interaction), Tukey HSD on system means",
        (F, float(sps.f.sf(F, S - 1, df_e))),
    )


def kruskal(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    T, S = X.shape
    N = T * S
    r = _midranks(X.reshape(-1), axis=0).reshape(T, S)
    mr = r.mean(axis=0)
    ties = float(_tie_sum(X.reshape(-1), axis=0))
    H = 12 / (N * (N + 1)) * (T * (mr - (N + 1) / 2) ** 2).sum()
    H /= 1 - ties / (N**3 - N) if ties < N**3 - N else 1
    var = N * (N + 1) / 12 - ties / (12 * (N - 1))
    se = math.sqrt(var * 2 / T)
    return _tukey(
        "kruskal",
        alpha,
        mr,
        se,
        S,
        np.inf,
        names,
        "Kruskal-Wallis, Tukey-type comparisons of mean ranks (as Matlab multcompare)",
        (float(H), float(sps.chi2.sf(H, S - 1))),
    )


def friedman(X, alpha: float = 0.05) -> TestResult:
    X, names = _as_matrix(X)
    T, S = X.shape
    r = _midranks(X, axis=1)
    mr = r.mean(axis=0)
    ties = _tie_sum(X, axis=1).sum()
    factor = 1 - ties / (T * S * (S * S - 1))
    chi2 = 12 * T / (S * (S + 1)) * ((mr - (S + 1) / 2) ** 2).sum() / factor if factor > 0 else 0.0
    var = S * (S + 1) / 12 * factor
    se = math.sqrt(var * 2 / T)
    return _tukey(
        "friedman",
        alpha,
        mr,
        se,
        S,
        np.inf,
        names,
        "Friedman, Tukey-type comparisons of mean ranks (as Matlab multcompare)",
        (float(chi2), float(sps.chi2.sf(chi2, S - 1))),
    )


# -- randomised tests: paired permutation, randomised Tukey HSD, paired bootstrap ----------------

RANDOMISED = ("permutation", "rtukey", "bootstrap")
RANDOMISED_NAMES = {
    "permutation": "Paired Randomisation Test",
    "rtukey": "Randomised Tukey HSD",
    "bootstrap": "Paired Bootstrap Test",
}
ALL_TESTS = TESTS + RANDOMISED  # what compare/study accept (-t); their default is TESTS
# tests whose p-values already hold the family-wise error over all pairs: no correction on top
FAMILYWISE = MULTI + ("rtukey",)
# tests with a signed statistic per pair (system i versus j): negated to read j versus i
SIGNED = PAIRWISE + ("permutation", "rtukey", "bootstrap")


TEST_GROUPS = {"paper": TESTS, "randomised": RANDOMISED}  # names for several tests at once (-t paper)


def expand_tests(tests, name: str = "test") -> tuple[str, ...]:
    """Test names checked against :data:`ALL_TESTS`, each group of :data:`TEST_GROUPS`
    (``paper``: the eight; ``randomised``: the three) replaced by its tests, each test
    once in the order first named.

    >>> expand_tests(["ttest", "randomised", "permutation"])
    ('ttest', 'permutation', 'rtukey', 'bootstrap')
    """
    out: list[str] = []
    for t in tests:
        out += TEST_GROUPS[t] if t in TEST_GROUPS else [check_choice(name, t, ALL_TESTS + tuple(TEST_GROUPS))]
    return tuple(dict.fromkeys(out))


def test_name(test: str) -> str:
    """The full name of a test of :data:`ALL_TESTS`, as the tables print it."""
    return TEST_NAMES.get(test) or RANDOMISED_NAMES[test]


RESAMPLES = {"permutation": 100_000, "rtukey": 10_000, "bootstrap": 10_000}  # the defaults
EXACT_LIMIT = 20  # topics up to which the permutation test visits all 2^T sign vectors
MAX_EXACT = 26  # the largest exact_limit accepted (2^26 sign vectors: minutes for many pairs)
_ALTERNATIVES = ("two-sided", "greater", "less")
_BLOCK = 1 << 23  # floats held per block of resamples (64 MiB)


def _ties(scale: np.ndarray, terms: int) -> np.ndarray:
    """The float noise within which two resampled statistics count as equal: a sum of
    ``terms`` terms of absolute sum ``scale`` carries a rounding error below
    ``terms * 2^-53 * scale``; 8 times that (equal sums reached by different signs or
    orders differ by a few units in the last place, never more)."""
    return 8 * terms * np.finfo(np.float64).eps / 2 * scale


def _resample_blocks(total: int, per: int):
    """(start, stop) of blocks of resamples, each holding at most :data:`_BLOCK` floats
    when every resample is a row of ``per`` values (its draws and its statistics)."""
    rows = max(1, _BLOCK // max(per, 1))
    return [(a, min(a + rows, total)) for a in range(0, total, rows)]


def _pair_differences(X) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """The topics x pairs differences of a score matrix, a pair's column 0 where it has a
    missing score (NaN, as ``--missing-topics drop`` leaves), and which pairs had one:
    their p-value is NaN and they are never significant."""
    X, names = _as_matrix(X)
    i, j = pair_index(X.shape[1])
    D = X[:, i] - X[:, j]
    missing = np.isnan(D).any(axis=0)
    D[:, missing] = 0.0
    return D, missing, names


def permutation_test(
    X,
    alpha: float = 0.05,
    *,
    alternative: str = "two-sided",
    n_resamples: int = RESAMPLES["permutation"],
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> TestResult:
    """Paired randomisation (permutation) test of every pair of systems (Smucker, Allan &
    Carterette, CIKM 2007): under H0 each topic's two scores are exchangeable, so each
    topic's difference d_t keeps or flips its sign with probability 1/2. Statistic: the
    mean difference of system i minus system j. p-value: the share of sign vectors whose
    mean difference is at least as extreme as the observed one (two-sided: in absolute
    value; "greater": at least it; "less": at most it).

    With ``T <= exact_limit`` topics every one of the 2^T sign vectors is visited: the
    exact p-value (count / 2^T). Beyond, ``n_resamples`` sign vectors drawn with
    ``numpy.random.default_rng(seed)`` (one draw of ``integers(0, 2, (n_resamples, T))``,
    shared by all pairs), the p-value with the +1 correction ((count + 1) / (n + 1)) and
    its Monte Carlo standard error sqrt(p (1 - p) / n) in ``provenance["mc_se"]``.
    Statistics equal up to float noise (:func:`_ties`) count as equal. Scores on a lattice
    (every score k / L for one integer L, as P@N's and RR's: :func:`_lattice`) are summed
    as the integers k, exactly (faster: no rounding to guard against), under the same
    tolerance, so the p-values do not depend on which way they were summed. All pairs at once:
    one matrix product per block of sign vectors. A pair with a missing score (NaN) gets
    p-value NaN and is never significant. ``exact_limit`` is at most :data:`MAX_EXACT`."""
    check_choice("alternative", alternative, _ALTERNATIVES)
    n_resamples = integer("n_resamples", n_resamples, minimum=1)
    exact_limit = integer("exact_limit", exact_limit, minimum=0, maximum=MAX_EXACT)
    X, names = _as_matrix(X)
    D, missing, _ = _pair_differences(X)  # topics x pairs
    T = D.shape[0]
    obs = D.sum(axis=0)
    exact = T <= exact_limit
    sign = {"two-sided": 0, "greater": 1, "less": -1}[alternative]
    M = np.nan_to_num(X)
    tol = _ties(np.abs(D).sum(axis=0), T)
    lattice = _lattice(M)
    if lattice is not None:  # integer sums, exact (no rounding to guard against); the same tolerance
        K, L = lattice
        Dk = _pair_differences(K)[0]
        Dk[:, missing] = 0.0
        ok, tk = Dk.sum(axis=0), tol * L
        thr = {0: np.abs(ok) - tk, 1: ok - tk, -1: -ok - tk}[sign]
        count = _sign_count(Dk, thr, sign, exact, n_resamples, seed, K, exact_sums=True)
    else:
        thr = {0: np.abs(obs) - tol, 1: obs - tol, -1: -obs - tol}[sign]
        count = _sign_count(D, thr, sign, exact, n_resamples, seed, M)
    total = 2**T if exact else n_resamples
    p = _sign_p(count, exact, total)
    p[missing] = np.nan
    method = f"paired randomisation, {alternative}, " + (
        f"exact (all 2^{T} sign vectors)"
        if exact
        else f"{n_resamples:,} random sign vectors (seed {seed}, +1 correction)"
    )
    stat = obs / T
    stat[missing] = np.nan
    res = TestResult("permutation", alpha, stat, p < alpha, method, names, _pvalue=p)
    res.provenance.update(
        {"alternative": alternative, "exact": exact, "resamples": total, "seed": None if exact else seed}
    )
    if not exact:
        res.provenance["mc_se"] = np.sqrt(p * (1 - p) / n_resamples).tolist()
    return res


def _sign_p(count: np.ndarray, exact: bool, total: int) -> np.ndarray:
    """The permutation test's p-value of a count of extreme sign vectors."""
    return count / total if exact else (count + 1) / (total + 1)


def _lattice(X: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(K, L), the integers K with X == K / L exactly (every float equal to the division of
    its integer by one L), where X's scores are on such a lattice with sums of T integers
    exact in float64 (|K| below 2^52 / T): P@N's k/N, RR's 1/k (L = lcm(1..N)). None
    otherwise, and for more than 2,000 distinct scores (a ranked measure's on a TREC-size
    matrix, for example)."""
    from fractions import Fraction

    values = np.unique(X)
    if len(values) > 2000 or not np.isfinite(values).all():
        return None
    L = 1
    for v in values.tolist():
        f = Fraction(v).limit_denominator(1 << 40)
        if float(f) != v:
            return None
        L = math.lcm(L, f.denominator)
        if L > 1 << 52:
            return None
    K = np.round(X * L)
    if np.abs(K).max(initial=0.0) * X.shape[0] >= 2.0**52 or not np.array_equal(K / L, X):
        return None
    return K, L


def _sign_count(
    D: np.ndarray,
    thr: np.ndarray,
    sign: int,
    exact: bool,
    n_resamples: int,
    seed: int,
    X=None,
    exact_sums: bool = False,
) -> np.ndarray:
    """Per pair (a column of ``D``), how many sign vectors s give ``v >= thr``, where v is
    ``|s . d|`` (``sign`` 0), ``s . d`` (1) or ``-s . d`` (-1), over :func:`_sign_vectors`.

    With the compiled kernel and ``X`` (the topics x systems matrix whose pair differences
    ``D`` holds, missing scores as 0), a block of sign vectors costs one product with the
    S systems instead of the S(S-1)/2 pairs: ``s . d`` is ``s . x_i - s . x_j``, off from
    the direct sum by at most 4(T + 2) u (sum |x_i| + sum |x_j|) (u the unit roundoff; the
    bound of two sums of T terms, twice over), and wherever that could decide a
    comparison the kernel sums ``s . d`` directly (in order, topic by topic), so every count
    is that of a direct sum up to the float-noise tolerance of the thresholds (the numpy
    path sums in BLAS's order; a statistic within a unit in the last place of a threshold
    could count differently). ``exact_sums``: X holds integers whose sums are exact (no band)."""
    kernel = None if X is None else compiled("stats.randomised", _build_randomised_kernels)
    count = np.zeros(D.shape[1], dtype=np.int64)
    thr = np.ascontiguousarray(thr, dtype=np.float64)
    if kernel is not None:
        T, S = X.shape
        i, j = pair_index(S)
        size = np.abs(X).sum(axis=0)
        band = 4 * (T + 2) * (np.finfo(np.float64).eps / 2) * (size[i] + size[j]) * (not exact_sums)
        hi, lo = thr + band, thr - band
        Dt = np.ascontiguousarray(D.T)
    # a block holds its sign vectors and their products: with the systems' sums, S values a row (not the pairs)
    width = D.shape[1] if kernel is None else X.shape[1]
    for signs in _sign_vectors(D.shape[0], exact, n_resamples, seed, width):
        if kernel is None:
            Z = signs @ D
            count += ((np.abs(Z) if sign == 0 else Z if sign == 1 else -Z) >= thr).sum(axis=0)
            continue
        Y = signs @ X
        count += _in_threads(
            lambda rows, Y=Y, signs=signs: _flip_rows(kernel[0][sign], Y[rows], signs[rows], Dt, thr, hi, lo), len(Y)
        )
    return count


def _flip_rows(flips, Y, signs, Dt, thr, hi, lo) -> np.ndarray:
    out = np.zeros(Dt.shape[0], dtype=np.int64)
    flips(Y, signs, Dt, thr, hi, lo, out)
    return out


def _in_threads(fn, n: int):
    """``sum(fn(rows))`` over slices of ``range(n)``, one per CPU (the kernels release the GIL)."""
    return sum(split_rows(fn, n))


def _build_randomised_kernels(numba):
    """(flips, studentize, shuffles, ranges): the randomised tests' compiled inner loops; flips
    per permutation-test mode (0 two-sided, 1 greater, -1 less), each compiled with its
    mode fixed so that its main loop is vectorised."""
    flips = {mode: _flip_kernel(numba, mode) for mode in (0, 1, -1)}
    return (flips, _studentize_kernel(numba), *_rtukey_kernels(numba))


def _flip_kernel(numba, mode: int):
    """The permutation test's count of sign vectors at least as extreme, for one mode
    (compiled with ``mode`` fixed, so that the main loop over a row's pairs is vectorised;
    the rare pairs too close to call are summed directly in a loop of their own)."""

    @numba.njit(nogil=True, cache=True)
    def flips(Y, signs, Dt, thr, hi, lo, counts):  # pragma: no cover - compiled
        B, S = Y.shape
        T = signs.shape[1]
        for r in range(B):
            Yr = Y[r]
            p0 = 0
            for a in range(S - 1):
                ya = Yr[a]
                n = S - 1 - a
                row, h, low, c = Yr[a + 1 :], hi[p0 : p0 + n], lo[p0 : p0 + n], counts[p0 : p0 + n]
                near = 0
                for q in range(n):
                    z = ya - row[q]
                    v = abs(z) if mode == 0 else (z if mode == 1 else -z)
                    c[q] += 1 if v >= h[q] else 0
                    near += 1 if (v > low[q]) & (v < h[q]) else 0
                if near:  # the pairs (a, b) of this row whose value from the systems' sums is too close to call
                    for q in range(n):
                        z = ya - row[q]
                        v = abs(z) if mode == 0 else (z if mode == 1 else -z)
                        if v > low[q] and v < h[q]:
                            z = 0.0
                            for k in range(T):
                                z += signs[r, k] * Dt[p0 + q, k]
                            v = abs(z) if mode == 0 else (z if mode == 1 else -z)
                            if v >= thr[p0 + q]:
                                c[q] += 1
                p0 += n

    return flips


def _studentize_kernel(numba):
    """The bootstrap test's count of resamples at least as extreme, from the products."""

    @numba.njit(nogil=True, cache=True)
    def studentize(AM, AQ, thr, snap, T, counts):  # pragma: no cover - compiled
        # bootstrap_test's numpy path, element by element: the same operations in the same order
        B, P = AM.shape
        root = np.sqrt(T)
        here = np.zeros(P, np.int64)
        for r in range(B):
            am, aq = AM[r], AQ[r]
            for p in range(P):
                m = am[p] / T
                sd = np.sqrt(max(aq[p] - T * m * m, 0.0) / (T - 1))
                m = abs(m) if abs(m) > snap[p] else 0.0
                here[p] += ((sd > 0) & (m * root >= thr[p] * sd)) | ((sd <= 0) & ((m > 0) | (thr[p] <= 0)))
        for p in range(P):
            counts[p] += here[p]

    return studentize


def _rtukey_kernels(numba):
    """rtukey's Fisher-Yates permutations and the range of the permuted means."""

    @numba.njit(nogil=True, cache=True)
    def shuffles(U, P):  # pragma: no cover - compiled
        B, T, S = P.shape
        for b in range(B):
            for t in range(T):
                row = P[b, t]
                for s_ in range(S):
                    row[s_] = s_
                for k in range(S - 1, 0, -1):
                    q = int(U[b, t, k - 1] * (k + 1))
                    row[k], row[q] = row[q], row[k]

    @numba.njit(nogil=True, cache=True)
    def ranges(X, P, out):  # pragma: no cover - compiled
        B, T, S = P.shape
        sums = np.empty(S)
        for b in range(B):
            sums[:] = 0.0
            for t in range(T):
                row, x = P[b, t], X[t]
                for s_ in range(S):
                    sums[s_] += x[row[s_]]
            out[b] = (sums.max() - sums.min()) / T

    return shuffles, ranges


def _sign_vectors(T: int, exact: bool, n_resamples: int, seed: int, pairs: int):
    """The permutation test's sign vectors (+1 keep, -1 flip), block by block: all 2^T
    (``exact``; bit t of k flips topic t) or the ``n_resamples`` drawn by
    ``default_rng(seed).integers(0, 2, (n_resamples, T))`` (1 flips; block by block, the
    same stream as one draw)."""
    total = 2**T if exact else n_resamples
    rng = np.random.default_rng(seed)
    bits = np.arange(T, dtype=np.int64)
    for a, b in _resample_blocks(total, 2 * T + pairs):
        if exact:
            F = ((np.arange(a, b, dtype=np.int64)[:, None] >> bits) & 1).astype(np.float64)
        else:
            F = rng.integers(0, 2, size=(b - a, T)).astype(np.float64)
        yield 1.0 - 2.0 * F


def rtukey_test(X, alpha: float = 0.05, *, n_resamples: int = RESAMPLES["rtukey"], seed: int = 0) -> TestResult:
    """Randomised Tukey HSD (Carterette, TOIS 2012): under H0 the systems' scores on each
    topic are exchangeable. Each resample permutes every topic's scores over the systems
    (independently per topic) and keeps the largest difference of two system means (the
    range of the means); a pair's p-value is the share of resamples whose range reaches
    the pair's absolute difference of means (ranges equal up to float noise count). One
    distribution for all pairs controls the family-wise error (under the complete null,
    where every system's scores are exchangeable). As in Carterette (2012), no +1
    correction: a p-value of 0 means below 1 / ``n_resamples``.
    Resamples: one draw of ``numpy.random.default_rng(seed).random((n_resamples, T, S - 1))``
    (block by block, the same stream), u; resample b shuffles each topic t's row of scores
    by Fisher-Yates: for k = S - 1 down to 1, swap positions k and ``floor(u[b, t, k - 1] *
    (k + 1))``; system s's mean is the mean of position s over the topics.

    A system with a missing score (NaN, as ``--missing-topics drop`` leaves) cannot be
    permuted with the others on every topic: the test runs on the other systems (S is
    their number), and the pairs of such a system get p-value NaN, never significant."""
    n_resamples = integer("n_resamples", n_resamples, minimum=1)
    X, names = _as_matrix(X)
    T, S = X.shape
    i, j = pair_index(S)
    means = X.mean(axis=0)
    diff = means[i] - means[j]
    whole = ~np.isnan(X).any(axis=0)
    p = np.full(len(i), np.nan)
    if whole.sum() >= 2:
        Xw = X[:, whole]
        ranges = _rtukey_ranges(Xw, n_resamples, seed)
        kept = whole[i] & whole[j]
        count = n_resamples - np.searchsorted(ranges, np.abs(diff[kept]) - _rtukey_ties(Xw), side="left")
        p[kept] = count / n_resamples
    method = f"randomised Tukey HSD, {n_resamples:,} permutations within topics (seed {seed})"
    if not whole.all():
        method += f", {int((~whole).sum())} system(s) with missing scores left out"
    return _resampled("rtukey", alpha, diff, p, method, names, n_resamples, seed)


def _rtukey_ties(X: np.ndarray) -> float:
    """rtukey's float-noise tolerance: a difference of two means of T scores."""
    T = X.shape[0]
    return float(_ties(np.abs(X).sum(axis=0).max() / T * 2, T))


def _rtukey_ranges(X: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The range of the system means of each of rtukey's resamples (see :func:`rtukey_test`), sorted."""
    T, S = X.shape
    kernel = compiled("stats.randomised", _build_randomised_kernels)
    X = np.ascontiguousarray(X, dtype=np.float64)
    ranges = np.empty(n_resamples)
    rows = np.arange(T)[None, :, None]
    for a, P in _rtukey_permutations(T, S, n_resamples, seed):
        out = ranges[a : a + len(P)]
        if kernel is not None:  # each thread fills its part of out
            split_rows(functools.partial(_in_part, kernel[3], X, P, out), len(P))
            continue
        m = X[rows, P].sum(axis=1)  # over the topics in order, as the kernel adds them
        out[:] = (m.max(axis=1) - m.min(axis=1)) / T
    ranges.sort()
    return ranges


_PERMUTATIONS: dict = {}  # the last (T, S, n_resamples, seed)'s permutations, when they take at most:
PERMUTATION_CACHE_BYTES = 1 << 28  # 256 MiB (a study tests every measure on both scales with the same ones)
_PERMUTATIONS_LOCK = threading.Lock()


def _rtukey_permutations(T: int, S: int, n_resamples: int, seed: int):
    """rtukey's permutations as blocks ``(first resample, P)``, P[b, t, s] the column whose
    score system s gets on topic t in resample b: Fisher-Yates from one draw of
    ``default_rng(seed).random((n_resamples, T, S - 1))`` (see :func:`rtukey_test`). Kept
    for the next call with the same arguments where they fit :data:`PERMUTATION_CACHE_BYTES`;
    beyond, drawn block by block as they are used."""
    key = (T, S, n_resamples, seed)
    with _PERMUTATIONS_LOCK:
        kept = _PERMUTATIONS.get(key)
    if kept is not None:
        return kept
    dtype = np.uint8 if S <= 256 else np.uint16 if S <= 65536 else np.int64
    blocks = _permutation_blocks(T, S, n_resamples, seed, dtype)
    if n_resamples * T * S * np.dtype(dtype).itemsize > PERMUTATION_CACHE_BYTES:
        return blocks  # a generator: one block in memory at a time
    kept = list(blocks)
    with _PERMUTATIONS_LOCK:
        _PERMUTATIONS.clear()
        _PERMUTATIONS[key] = kept
    return kept


def _permutation_blocks(T: int, S: int, n_resamples: int, seed: int, dtype):
    """The blocks of :func:`_rtukey_permutations`, drawn one at a time."""
    kernel = compiled("stats.randomised", _build_randomised_kernels)
    rng = np.random.default_rng(seed)
    for a, b in _resample_blocks(n_resamples, 2 * T * S):
        U = rng.random((b - a, T, S - 1))
        P = np.empty((b - a, T, S), dtype=dtype)
        if kernel is not None:  # each thread shuffles its part of P
            split_rows(functools.partial(_in_part, kernel[2], None, U, P), b - a)
        else:
            P[:] = np.arange(S, dtype=dtype)
            for k in range(S - 1, 0, -1):
                q = (U[:, :, k - 1] * (k + 1)).astype(np.int64)[..., None]
                here = P[:, :, k].copy()
                P[:, :, k] = np.take_along_axis(P, q, axis=2)[..., 0]
                np.put_along_axis(P, q, here[..., None], axis=2)
        yield a, P


def _in_part(kernel, X, A: np.ndarray, B: np.ndarray, part: slice) -> None:
    """``kernel(A[part], B[part])``, or ``kernel(X, A[part], B[part])``: one thread's share of rtukey's rows."""
    if X is None:
        kernel(A[part], B[part])
    else:
        kernel(X, A[part], B[part])


def bootstrap_test(X, alpha: float = 0.05, *, n_resamples: int = RESAMPLES["bootstrap"], seed: int = 0) -> TestResult:
    """Paired bootstrap test (Sakai, SIGIR 2006) of every pair of systems: the differences
    d_t are centred (z_t = d_t - mean d, so H0 holds in the resampled world), topics are
    resampled with replacement, and the p-value (achieved significance level) is the share
    of resamples whose studentized mean ``|mean z* / (sd z* / sqrt T)|`` reaches the observed
    ``|mean d / (sd d / sqrt T)|`` (two-sided, compared as ``|mean z*| sqrt T >= (1 - 1e-12)
    |t| sd z*``, so that statistics equal up to float noise count; a mean within
    the float noise of its sum, ``8 u (T max|z| + sum|d|)`` with u the unit roundoff, is 0,
    so that a pair whose differences sum to 0 gets p-value 1). Resamples: one
    draw of ``numpy.random.default_rng(seed).integers(0, T, (n_resamples, T))``, the topics
    of each resample, shared by all pairs, drawn block by block. As in Sakai (2006), no +1
    correction. A pair with a missing score (NaN) gets p-value NaN, never significant."""
    n_resamples = integer("n_resamples", n_resamples, minimum=1)
    D, missing, names = _pair_differences(X)
    T = D.shape[0]
    if T < 2:
        raise ArgumentError("bootstrap_test studentizes the mean difference: it needs at least 2 topics")
    mean = D.mean(axis=0)
    Zc = D - mean
    # a mean within the float noise of T terms of these sizes is 0 (observed or resampled)
    snap = _ties(T * np.abs(Zc).max(axis=0) + np.abs(D).sum(axis=0), T) / T
    t_obs = _studentized(np.where(np.abs(mean) <= snap, 0.0, mean), D.var(axis=0, ddof=1), T)
    thr = np.abs(t_obs) * (1 - 1e-12)
    count = np.zeros(D.shape[1], dtype=np.int64)
    kernel = compiled("stats.randomised", _build_randomised_kernels)
    Zc2 = Zc * Zc
    buffers = None
    for C in _bootstrap_draws(T, n_resamples, seed, D.shape[1]):
        if kernel is not None:  # the same products, then each element's statistic compiled, in threads
            if buffers is None:  # reused: a fresh product of this size costs more in page faults than in flops
                buffers = np.empty((2, len(C), D.shape[1]))
            AM = np.matmul(C, Zc, out=buffers[0, : len(C)])
            AQ = np.matmul(C, Zc2, out=buffers[1, : len(C)])
            count += _in_threads(
                lambda rows, AM=AM, AQ=AQ: _studentize_rows(kernel, AM[rows], AQ[rows], thr, snap, T), len(C)
            )
            continue
        m = C @ Zc / T
        sd = np.sqrt(np.maximum(C @ Zc2 - T * m * m, 0.0) / (T - 1))
        m = np.where(np.abs(m) > snap, np.abs(m), 0.0)
        with np.errstate(invalid="ignore"):  # 0 * inf where the observed statistic is infinite: not counted
            reach = np.where(sd > 0, m * math.sqrt(T) >= thr * sd, (m > 0) | (thr <= 0))
        count += reach.sum(axis=0)
    p = count / n_resamples
    p[missing] = np.nan
    t_obs[missing] = np.nan
    method = (
        f"paired bootstrap (studentized, centred differences), {n_resamples:,} resamples of the topics (seed {seed})"
    )
    return _resampled("bootstrap", alpha, t_obs, p, method, names, n_resamples, seed)


def _studentize_rows(kernel, AM, AQ, thr, snap, T: int):
    out = np.zeros(AM.shape[1], dtype=np.int64)
    kernel[1](AM, AQ, thr, snap, T, out)
    return out


def _bootstrap_draws(T: int, n_resamples: int, seed: int, pairs: int):
    """The bootstrap's resamples, block by block (the stream of one ``(n_resamples, T)``
    draw of ``default_rng(seed).integers(0, T)``), each block as how often each topic was
    drawn: a (resamples x T) matrix of counts."""
    rng = np.random.default_rng(seed)
    for a, b in _resample_blocks(n_resamples, 4 * T + pairs):
        idx = rng.integers(0, T, size=(b - a, T))
        cells = (np.arange(b - a)[:, None] * T + idx).ravel()
        yield np.bincount(cells, minlength=(b - a) * T).reshape(b - a, T).astype(np.float64)


def _resampled(test, alpha, statistic, p, method, names, n_resamples: int, seed: int) -> TestResult:
    """A resampled test's result: decided p < alpha, its resamples and seed recorded."""
    res = TestResult(test, alpha, statistic, p < alpha, method, names, _pvalue=p)
    res.provenance.update({"resamples": n_resamples, "seed": seed})
    return res


@dataclass(frozen=True)
class DiscriminativePower:
    """Sakai's discriminative power (SIGIR 2006) of one test on one score matrix: the
    achieved significance level (p-value) of every system pair, sorted ascending (the ASL
    curve, ``asl``), and the share of pairs significant at ``alpha`` (p < alpha)."""

    test: str
    alpha: float
    asl: np.ndarray
    share: float
    method: str

    @property
    def n_pairs(self) -> int:
        return len(self.asl)


def discriminative_power(X, test: str = "permutation", alpha: float = 0.05, **options) -> DiscriminativePower:
    """The ASL curve and the share of pairs significant at ``alpha`` of ``test`` (any of
    :data:`TESTS` or :data:`RANDOMISED`; ``options`` go to a randomised test: ``seed``,
    ``n_resamples``, ``alternative``) on a topics x systems matrix. Run it on a measure
    and on its ranked version to see what the interval scale changes. The share is of
    the pairs the test calls significant (p < alpha; the Tukey-type tests compare the
    studentized range with its critical value, and their p-values, computed here for the
    curve, take about 10 ms a pair). Pairs with a missing score (p-value NaN) are left out.

    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((30, 6)) + np.linspace(0, 0.3, 6)
    >>> dp = discriminative_power(X, "ttest")
    >>> dp.n_pairs, bool((np.diff(dp.asl) >= 0).all()), round(dp.share, 3)
    (15, True, 0.4)
    """
    check_choice("test", test, ALL_TESTS)
    if options and test not in RANDOMISED:
        raise ArgumentError(f"{test} takes no options (seed, n_resamples, alternative are for {', '.join(RANDOMISED)})")
    alpha = level("alpha", alpha)
    res = _FUNCS[test](X, alpha, **options) if options else run_test(test, X, alpha)
    p = np.asarray(res.pvalue, dtype=np.float64)
    kept = ~np.isnan(p)
    asl = np.sort(p[kept])
    share = float(np.mean(res.significant[kept])) if kept.any() else 0.0
    return DiscriminativePower(res.test, res.alpha, asl, share, res.method)


def _studentized(m: np.ndarray, var: np.ndarray, T: int) -> np.ndarray:
    """mean / (sd / sqrt T), with 0 where mean and sd are 0 and +-inf where only sd is."""
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = m / (sd / math.sqrt(T))
    return np.where(sd > 0, t, np.where(m == 0, 0.0, np.copysign(np.inf, m)))


_RANDOMISED_FUNCS = {"permutation": permutation_test, "rtukey": rtukey_test, "bootstrap": bootstrap_test}
_FUNCS = {
    "sign": sign_test,
    "ranksum": ranksum_test,
    "signrank": signrank_test,
    "ttest": t_test,
    "anova1": anova1,
    "kruskal": kruskal,
    "anova2": anova2,
    "friedman": friedman,
    "permutation": permutation_test,
    "rtukey": rtukey_test,
    "bootstrap": bootstrap_test,
}


def run_test(name: str, X, alpha: float = 0.05, *, seed: int | None = None, **provenance) -> TestResult:
    """Run test ``name`` (one of :data:`TESTS`, the paper's eight, or :data:`RANDOMISED`,
    with their default resamples) on a topics x systems matrix. ``seed`` seeds a
    randomised test's draws (None: 0); the paper's eight draw nothing and ignore it.
    ``provenance`` adds labels to the result's provenance (the test's own entries win)."""
    check_choice("test", name, ALL_TESTS)
    alpha = level("alpha", alpha)
    if name in RANDOMISED:
        res = _RANDOMISED_FUNCS[name](X, alpha, seed=0 if seed is None else integer("seed", seed, minimum=0))
    else:
        res = _FUNCS[name](X, alpha)
    title = test_name(name)
    own = dict(res.provenance)  # what the test recorded (its seed, resamples) is not overwritten
    res.provenance.update({"irscale_version": __version__, "test": title, "alpha": alpha, **provenance, **own})
    return res


# -- correlations ----------------------------------------------------------------------------------


def kendall_tau(a, b) -> float:
    """Kendall's tau-b between two score vectors (one per system)."""
    return float(sps.kendalltau(a, b).statistic)


def tau_overall(X, Y, decimals: int | None = 8) -> float:
    """tau-b between systems ranked by mean over topics of X and of Y (topics x systems).
    Means are rounded to ``decimals`` first, as in the paper (footnote 9), so that float
    noise does not break ties between equal means."""
    X, _ = _as_matrix(X)
    Y, _ = _as_matrix(Y)
    a, b = np.nanmean(X, axis=0), np.nanmean(Y, axis=0)
    if decimals is not None:
        a, b = np.round(a, decimals), np.round(b, decimals)
    return kendall_tau(a, b)


def tau_by_topic(X, Y) -> np.ndarray:
    """tau-b per topic between the systems' scores in X and in Y (topics x systems); NaN
    for a topic where either has a NaN or is constant, as :func:`kendall_tau`."""
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    if X.ndim == 2 and X.shape == Y.shape and 2 <= X.shape[1] <= _PAIRWISE_TAU_MAX:
        return _tau_b_rows(X, Y)
    return np.array([kendall_tau(X[t], Y[t]) for t in range(X.shape[0])])


_PAIRWISE_TAU_MAX = 2000  # systems: beyond, scipy's O(n log n) algorithm topic by topic


def _tau_b_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of every row of X with the same row of Y, by counting over all pairs
    of columns at once. The counts are exact integers and the last step is scipy's own
    (``(tot - xtie - ytie + ntie - 2 dis) / sqrt(tot - xtie) / sqrt(tot - ytie)``, clipped
    to [-1, 1]), so the result equals ``scipy.stats.kendalltau`` bit for bit; a study asks
    for 50 topics x 11 measures of them, and scipy's per-call overhead was most of its
    correlation time."""
    R, n = X.shape
    i, j = np.triu_indices(n, k=1)
    tot = len(i)
    out = np.empty(R)
    step = max(1, 500_000 // tot)  # rows per chunk: at most about 16 MB of gathered pairs
    for r in range(0, R, step):
        xi, xj, yi, yj = X[r : r + step, i], X[r : r + step, j], Y[r : r + step, i], Y[r : r + step, j]
        xt, yt = xi == xj, yi == yj
        xtie, ytie = xt.sum(axis=1), yt.sum(axis=1)
        ntie = (xt & yt).sum(axis=1)
        dis = (((xi < xj) & (yi > yj)) | ((xi > xj) & (yi < yj))).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = (tot - xtie - ytie + ntie - 2 * dis) / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
        tau = np.minimum(1.0, np.maximum(-1.0, tau))
        tau[(xtie == tot) | (ytie == tot)] = np.nan  # a constant row: undefined
        out[r : r + step] = tau
    out[np.isnan(X).any(axis=1) | np.isnan(Y).any(axis=1)] = np.nan  # scipy's nan_policy="propagate"
    return out


def tau_ap(truth, estimate) -> float:
    """AP correlation (Yilmaz et al. 2008) of the ranking by ``estimate`` against the
    ranking by ``truth`` (higher score = better). Ties in a ranking are broken by system
    index, so the coefficient is defined for any input."""
    truth, estimate = np.asarray(truth, float), np.asarray(estimate, float)
    n = len(truth)
    if n < 2:
        return 1.0
    order_est = np.lexsort((np.arange(n), -estimate))  # ranking by the estimate, best first
    rank_truth = np.empty(n, dtype=np.int64)
    rank_truth[np.lexsort((np.arange(n), -truth))] = np.arange(n)
    total = 0.0
    for i in range(1, n):
        above = rank_truth[order_est[:i]]
        total += (above < rank_truth[order_est[i]]).sum() / i
    return 2 * total / (n - 1) - 1


# -- original vs ranked: how decisions change -------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """Sig, S2NS, NS2S and Delta% of the paper (Section 7.3) for one measure and test."""

    test: str
    sig: int
    s2ns: int
    ns2s: int
    sig_ranked: int

    @property
    def delta(self) -> float:
        return (self.s2ns + self.ns2s) / self.sig if self.sig else 0.0


def change(original: TestResult, ranked: TestResult) -> Change:
    a, b = original.significant, ranked.significant
    return Change(original.test, int(a.sum()), int((a & ~b).sum()), int((~a & b).sum()), int(b.sum()))


# -- decisions on bounded scores: could they flip? ----------------------------------------------------


def could_flip(test: str, X, H, ids, alpha: float = 0.05, reported=None, *, seed: int = 0) -> np.ndarray:
    """Per pair of systems (combinations order): whether ``test``'s decision at ``alpha``,
    as ``reported`` (default: the test run on ``X``), could be wrong for the exact scores.
    ``X`` (topics x systems) holds the midpoints of bounded scores, ``H`` the half-widths
    (each exact score lies in X +- H), ``ids`` the exact values' identities (equal ids:
    equal exact values, so a certain tie; unequal: distinct values). Sound and possibly
    conservative: False means every exact score within the bounds gives the reported
    decision.

    * sign test: the topics whose sign is uncertain are counted and every split of them
      tried (exact);
    * rank-sum, Kruskal-Wallis, Friedman: each score's mid-rank lies between the scores
      certainly below it and those not certainly above it (ties are exactly the equal ids,
      so the tie corrections are known), hence the rank sums or mean ranks, and the
      statistic, lie in an interval, flagged where the other decision is inside;
    * signed-rank: the same on the test's grid of ``|differences|`` (1e-9 of the score scale,
      itself bounded), with the signs the bounds leave open counted either way and the tie
      correction between the certain groups and the groups of overlapping intervals;
    * t test: the mean difference moves by at most the mean of w = H_i + H_j and the
      standard deviation by at most ||w|| / sqrt(T - 1) (centring is a projection);
    * ANOVA with Tukey HSD: means move by at most the systems' mean half-widths and
      sqrt(SSE) by at most ||H|| (the residuals are a projection of the scores);
    * the randomised tests, with their default resamples drawn from ``seed`` (the draws do
      not depend on the scores, so the exact scores meet the same ones): each resampled
      statistic and the observed one lie in intervals, and the count of resamples at
      least as extreme lies between those certainly and those possibly so. Permutation
      (two-sided): a sign vector counts where the sums of d over its flipped topics and over
      its kept ones have opposite signs or the smaller is within the float-noise tolerance
      (:func:`_permutation_bounds`), each sum within +- the sum of w = H_i + H_j over its
      topics. rtukey: a
      permuted system mean by at most the mean over topics of the largest half-width,
      the pair's difference of means by the mean of w. Bootstrap: the resampled mean by
      at most (c . w) / T + mean w (c: the resample's draws of each topic), its standard
      deviation by sqrt(c . w^2 / (T - 1)), the observed ones as in the t test.
    """
    X = np.asarray(X, dtype=np.float64)
    H = np.asarray(H, dtype=np.float64)
    ids = np.asarray(ids)
    _, S = X.shape
    i, j = pair_index(S)
    sig = run_test(test, X, alpha, seed=seed).significant if reported is None else np.asarray(reported, dtype=bool)
    bad = np.isnan(X).any(axis=0) | np.isnan(H).any(axis=0)  # systems with a topic left out: not analysed
    out = bad[i] | bad[j]
    if not (H > 0).any():
        return out
    X, H = np.nan_to_num(X), np.nan_to_num(H)
    # the rounding of midpoint and half-width, (lo + hi) / 2 and (hi - lo) / 2: relative to each
    # score (bounded scores may span many orders of magnitude, phi / |M| of 1e-70 to 1e-20)
    pad = 4 * np.finfo(np.float64).eps * (np.abs(X) + H)
    lo, hi = X - H - pad, X + H + pad

    if test == "sign":
        can_sig, can_not = _sign_decisions(X, ids, lo, hi, i, j, alpha)
    elif test == "ranksum":
        can_sig, can_not = _ranksum_decisions(lo, hi, ids, i, j, alpha)
    elif test in ("kruskal", "friedman"):
        can_sig, can_not = _mean_rank_decisions(test, lo, hi, ids, i, j, alpha)
    elif test == "signrank":
        can_sig, can_not = _signrank_decisions(X, H, pad, ids, i, j, alpha)
    elif test == "ttest":
        can_sig, can_not = _ttest_decisions(X, H, i, j, alpha)
    elif test in ("anova1", "anova2"):
        can_sig, can_not = _tukey_decisions(test, X, H, i, j, alpha)
    elif test in RANDOMISED:
        p_lo, p_hi = _RANDOMISED_BOUNDS[test](X, H + pad, i, j, seed)
        can_sig, can_not = p_lo < alpha, p_hi >= alpha
    else:
        raise ValueError(f"unknown test {test!r}")
    return out | np.where(sig, can_not, can_sig)  # the reported decision could be wrong


def _permutation_bounds(X, H, i, j, seed):
    """The permutation test's p-value range per pair (two-sided, default resamples) for
    every exact score within X +- H (see :func:`could_flip`). With A the sum of d over a
    sign vector's flipped topics and B over its kept ones, ``|s . d| - |sum d| = |B - A| -
    |B + A|`` is ``2 min(|A|, |B|)`` where A B <= 0 and minus that where A B > 0; the test
    counts s where it is at least minus its float-noise tolerance. A and B lie in their
    midpoint sums +- their half-width sums (and the rounding r of the sums), so s certainly
    counts where A B <= 0 over that box or min(|A|, |B|) stays within the least tolerance
    the exact scores can have, and possibly counts where A B can be <= 0 or min(|A|, |B|)
    can come within the largest."""
    D = X[:, i] - X[:, j]
    w = H[:, i] + H[:, j] + 2 * np.finfo(np.float64).eps * np.abs(D)  # and the subtraction's rounding
    T = D.shape[0]
    W = w.sum(axis=0)
    obs = D.sum(axis=0)
    r = _ties(np.abs(D).sum(axis=0) + W, T) / 8  # the rounding of a sum of T terms (of any of these scores)
    tol_hi = 8 * r  # the largest tolerance the test can use on exact scores (its sum |d| at most this one's)
    tol_lo = _ties(np.maximum(np.abs(obs) - W - r, 0), T)  # the least: sum |d| >= |sum d|
    exact = T <= EXACT_LIMIT
    n = RESAMPLES["permutation"]
    sure = np.zeros(D.shape[1], dtype=np.int64)
    maybe = np.zeros(D.shape[1], dtype=np.int64)
    for signs in _sign_vectors(T, exact, n, seed, 2 * D.shape[1]):
        Z, Zw = signs @ D, signs @ w
        A, B = (obs - Z) / 2, (obs + Z) / 2  # over the flipped topics, over the kept ones
        wa, wb = (W - Zw) / 2 + r, (W + Zw) / 2 + r
        corners = np.stack([(A - wa) * (B - wb), (A - wa) * (B + wb), (A + wa) * (B - wb), (A + wa) * (B + wb)])
        small = 2 * np.minimum(np.abs(A) + wa, np.abs(B) + wb) <= tol_lo - 2 * r
        near = 2 * np.minimum(np.maximum(np.abs(A) - wa, 0), np.maximum(np.abs(B) - wb, 0)) <= tol_hi + 2 * r
        sure += ((corners.max(axis=0) <= 0) | small).sum(axis=0)
        maybe += ((corners.min(axis=0) <= 0) | near).sum(axis=0)
    total = 2**T if exact else n
    return _sign_p(sure, exact, total), _sign_p(maybe, exact, total)


def _rtukey_bounds(X, H, i, j, seed):
    """rtukey's p-value range per pair (default resamples) within X +- H."""
    n = RESAMPLES["rtukey"]
    ranges = _rtukey_ranges(X, n, seed)
    shift = 2 * H.max(axis=1).mean()  # the range of permuted means moves by at most this
    means, hm = X.mean(axis=0), H.mean(axis=0)
    diff, dd = np.abs(means[i] - means[j]), hm[i] + hm[j]
    tol = _rtukey_ties(np.abs(X) + H) * 2 + 4 * np.finfo(np.float64).eps * (diff + dd)
    sure = n - np.searchsorted(ranges - shift, diff + dd + tol, side="left")
    maybe = n - np.searchsorted(ranges + shift, diff - dd - tol, side="left")
    return sure / n, maybe / n


def _bootstrap_bounds(X, H, i, j, seed):
    """The bootstrap test's p-value range per pair (default resamples) within X +- H."""
    D = X[:, i] - X[:, j]
    w = H[:, i] + H[:, j] + 2 * np.finfo(np.float64).eps * np.abs(D)
    T = D.shape[0]
    n = RESAMPLES["bootstrap"]
    slack = 1e-9  # relative: the rounding of the sums below, far inside
    mbar, wbar = D.mean(axis=0), w.mean(axis=0)
    sd, e = D.std(axis=0, ddof=1), np.sqrt((w * w).sum(axis=0) / (T - 1))
    root = math.sqrt(T)
    Zc = D - mbar
    # the largest "mean is 0" snap the test can use on the exact scores (bootstrap_test)
    snap = _ties(T * (np.abs(Zc).max(axis=0) + 2 * w.max(axis=0)) + np.abs(D).sum(axis=0) + w.sum(axis=0), T) / T
    wbar = wbar + snap  # and the absolute rounding of a mean of T terms (relative slack alone misses it near 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        obs_lo = np.maximum(np.abs(mbar) - wbar, 0) * root / (sd + e) * (1 - slack)
        obs_hi = np.where(sd - e > 0, (np.abs(mbar) + wbar) * root / (sd - e), np.inf) * (1 + slack)
    obs_lo = np.where(np.abs(mbar) - wbar <= snap, 0.0, np.nan_to_num(obs_lo))
    sure = np.zeros(D.shape[1], dtype=np.int64)
    maybe = np.zeros(D.shape[1], dtype=np.int64)
    for C in _bootstrap_draws(T, n, seed, 4 * D.shape[1]):
        m = C @ Zc / T
        s_ = np.sqrt(np.maximum(C @ (Zc * Zc) - T * m * m, 0.0) / (T - 1))
        a = C @ w / T + wbar + snap
        b = np.sqrt(C @ (w * w) / (T - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            t_lo = np.nan_to_num(np.maximum(np.abs(m) - a, 0) * root / (s_ + b)) * (1 - slack)
            t_hi = np.where(s_ - b > 0, (np.abs(m) + a) * root / (s_ - b), np.inf) * (1 + slack)
        t_lo[np.abs(m) - a <= snap] = 0.0  # the exact scores' resampled mean may be snapped to 0
        sure += (t_lo >= obs_hi).sum(axis=0)
        maybe += (t_hi >= obs_lo * (1 - 1e-12)).sum(axis=0)
    return sure / n, maybe / n


_RANDOMISED_BOUNDS = {"permutation": _permutation_bounds, "rtukey": _rtukey_bounds, "bootstrap": _bootstrap_bounds}


def _sign_decisions(X, ids, lo, hi, i, j, alpha):
    """Per pair (i, j): (could be significant, could be not) by the sign test, every split of unsure topics tried."""
    same = ids[:, i] == ids[:, j]
    d = X[:, i] - X[:, j]
    unsure = ~same & (lo[:, i] <= hi[:, j]) & (lo[:, j] <= hi[:, i])
    pos, neg, u = (~same & ~unsure & (d > 0)).sum(0), (~same & ~unsure & (d < 0)).sum(0), unsure.sum(0)
    can_sig, can_not = np.zeros(len(i), bool), np.zeros(len(i), bool)
    for p in range(len(i)):  # every split of the uncertain topics: exact
        k = np.arange(u[p] + 1)
        n = pos[p] + neg[p] + u[p]
        smaller = np.minimum(pos[p] + k, neg[p] + u[p] - k)
        s_ = (np.minimum(1.0, 2 * sps.binom.cdf(smaller, n, 0.5)) < alpha) if n else np.zeros(1, bool)
        can_sig[p], can_not[p] = s_.any(), not s_.all()
    return can_sig, can_not


def _ranksum_decisions(lo, hi, ids, i, j, alpha):
    """Per pair (i, j): (could be significant, could be not) by the rank-sum test, from bounds on the rank sums."""
    T = lo.shape[0]
    can_sig, can_not = np.zeros(len(i), bool), np.zeros(len(i), bool)
    n1 = n2 = T
    N = 2 * T
    z_crit = sps.norm.isf(alpha / 2)
    for c in range(0, len(i), 256):
        s_ = slice(c, c + 256)
        L = np.concatenate([lo[:, i[s_]], lo[:, j[s_]]])  # (2T, P)
        U = np.concatenate([hi[:, i[s_]], hi[:, j[s_]]])
        D = np.concatenate([ids[:, i[s_]], ids[:, j[s_]]])
        r_lo, r_hi, ties = _rank_bounds(L, U, D)
        W_lo, W_hi = r_lo[:T].sum(0), r_hi[:T].sum(0)
        var = n1 * n2 / 12 * ((N + 1) - ties / (N * (N - 1)))
        mean = n1 * (N + 1) / 2
        nearest = np.minimum(np.abs(W_lo - mean), np.abs(W_hi - mean))
        dev_min = np.where((W_lo <= mean) & (mean <= W_hi), 0.0, nearest)
        dev_max = np.maximum(np.abs(W_lo - mean), np.abs(W_hi - mean))
        sd = np.sqrt(np.maximum(var, 1e-300))
        z_lo, z_hi = np.maximum(dev_min - 0.5, 0) / sd, np.maximum(dev_max - 0.5, 0) / sd
        can_sig[s_] = (var > 0) & (z_hi > z_crit)
        can_not[s_] = (var <= 0) | (z_lo <= z_crit)
    return can_sig, can_not


def _mean_rank_decisions(test, lo, hi, ids, i, j, alpha):
    """Per pair (i, j): (could be significant, could be not) by Kruskal-Wallis or Friedman, from mean-rank bounds."""
    T, S = lo.shape
    if test == "kruskal":
        N = T * S
        r_lo, r_hi, ties = _rank_bounds(lo.reshape(-1, 1), hi.reshape(-1, 1), ids.reshape(-1, 1))
        r_lo, r_hi, ties = r_lo.reshape(T, S), r_hi.reshape(T, S), float(ties[0])
        var = N * (N + 1) / 12 - ties / (12 * (N - 1))
    else:
        r_lo, r_hi, ties = _rank_bounds(lo.T, hi.T, ids.T)  # within each topic
        r_lo, r_hi = r_lo.T, r_hi.T
        var = S * (S + 1) / 12 * (1 - ties.sum() / (T * S * (S * S - 1)))
    m_lo, m_hi = r_lo.mean(0), r_hi.mean(0)
    gap_max = np.maximum(m_hi[i] - m_lo[j], m_hi[j] - m_lo[i])
    gap_min = np.maximum(0.0, np.maximum(m_lo[i] - m_hi[j], m_lo[j] - m_hi[i]))
    se = math.sqrt(max(var, 1e-300) * 2 / T)
    crit = _q_critical(float(alpha), S, np.inf)
    return gap_max / se * math.sqrt(2) > crit, gap_min / se * math.sqrt(2) <= crit


def _signrank_decisions(X, H, pad, ids, i, j, alpha):
    """Per pair (i, j): (could be significant, could be not) by the signed-rank test, on its grid of |differences|."""
    T = X.shape[0]
    d, w = X[:, i] - X[:, j], H[:, i] + H[:, j] + pad[:, i] + pad[:, j]
    nonzero = ids[:, i] != ids[:, j]  # zero differences are exactly the equal values
    n = nonzero.sum(0)
    sure_pos, unsure = nonzero & (d - w > 0), nonzero & (np.abs(d) <= w)
    # the test ranks round(|d| / scale, 9), scale = the largest |score|: each cell's grid
    # value lies between its bounds' (rounding is monotone); equal bounds are a certain value
    scale_lo, scale_hi = float(np.max(np.abs(X) - H - pad)), float(np.max(np.abs(X) + H + pad))
    if scale_lo <= 0:  # the test's scale could fall back to 1: not worth bounding
        return np.ones(len(i), bool), np.ones(len(i), bool)  # either decision could be
    eps4 = 4 * np.finfo(np.float64).eps
    g_lo = np.round(np.where(unsure, 0.0, np.abs(d) - w) / scale_hi * (1 - eps4), 9)
    g_hi = np.round((np.abs(d) + w) / scale_lo * (1 + eps4), 9)
    zero_n = (~nonzero).sum(0)
    # zero differences: one group certainly below every other (its size taken off the ranks)
    L, U = np.where(nonzero, g_lo, -1.0), np.where(nonzero, g_hi, -1.0)
    grid_ids = np.where(~nonzero, -1.0, np.where(g_lo == g_hi, g_lo, -2.0 - np.arange(T)[:, None]))
    r_lo, r_hi, certain_ties = _rank_bounds(L, U, grid_ids)
    r_lo, r_hi = r_lo - zero_n, r_hi - zero_n
    W_lo = np.where(sure_pos, r_lo, 0).sum(0)
    W_hi = np.where(sure_pos | unsure, r_hi, 0).sum(0)
    mean = n * (n + 1) / 4
    # ties: at least the certain groups, at most groups of overlapping grid intervals
    t_min = certain_ties - (zero_n**3 - zero_n)
    t_max = np.maximum(t_min, [_overlap_tie_bound(L[nonzero[:, k], k], U[nonzero[:, k], k]) for k in range(len(i))])
    base = n * (n + 1) * (2 * n + 1) / 24
    var_lo, var_hi = base - t_max / 48, base - t_min / 48
    dev_min = np.where((W_lo <= mean) & (mean <= W_hi), 0.0, np.minimum(np.abs(W_lo - mean), np.abs(W_hi - mean)))
    dev_max = np.maximum(np.abs(W_lo - mean), np.abs(W_hi - mean))
    z_crit = sps.norm.isf(alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z_hi = np.where(var_lo > 0, np.maximum(dev_max - 0.5, 0) / np.sqrt(var_lo), np.inf)
        z_lo = np.where(var_hi > 0, np.maximum(dev_min - 0.5, 0) / np.sqrt(np.maximum(var_hi, 1e-300)), 0.0)
    return (var_hi > 0) & (z_hi > z_crit), (var_lo <= 0) | (z_lo <= z_crit)


def _ttest_decisions(X, H, i, j, alpha):
    """Per pair (i, j): (could be significant, could be not) by the t test, from bounds on mean difference and sd."""
    T = X.shape[0]
    d, w = X[:, i] - X[:, j], H[:, i] + H[:, j]
    m, s = d.mean(0), d.std(0, ddof=1) if T > 1 else np.zeros(len(i))
    dm, ds = w.mean(0), np.sqrt((w**2).sum(0) / max(T - 1, 1))
    crit = sps.t.isf(alpha / 2, max(T - 1, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = np.nan_to_num(np.maximum(np.abs(m) - dm, 0) * math.sqrt(T) / (s + ds))
        t_hi = np.where(s - ds > 0, (np.abs(m) + dm) * math.sqrt(T) / (s - ds), np.inf)
    return t_hi > crit, t_lo <= crit


def _tukey_decisions(test, X, H, i, j, alpha):
    """Per pair (i, j): (could be significant, could be not) by ANOVA and Tukey HSD, from bounds on means and on SSE."""
    T, S = X.shape
    if test == "anova1":
        resid, df = X - X.mean(axis=0), S * (T - 1)
    else:
        resid, df = X - X.mean(axis=0)[None, :] - X.mean(axis=1)[:, None] + X.mean(), (T - 1) * (S - 1)
    crit = _q_critical(float(alpha), S, df)
    root, move = math.sqrt((resid**2).sum()), math.sqrt((H**2).sum())
    means, hm = X.mean(axis=0), H.mean(axis=0)
    diff, dd = np.abs(means[i] - means[j]), hm[i] + hm[j]
    scale = math.sqrt(T * df)  # q = |difference| sqrt(T) / sqrt(SSE / df)
    q_lo = np.maximum(diff - dd, 0) * scale / (root + move)
    q_hi = (diff + dd) * scale / (root - move) if root > move else np.full(len(i), np.inf)
    return q_hi > crit, q_lo <= crit


def unordered_share(lo, hi, ids) -> float:
    """The share of the pairs of distinct values (``ids``: equal ids, one value) whose
    order the intervals [lo, hi] leave open (the intervals overlap); 0 with fewer than
    two values."""
    ids = np.asarray(ids).reshape(-1)
    _, first = np.unique(ids, return_index=True)
    n = len(first)
    if n < 2:
        return 0.0
    lo, hi = np.asarray(lo).reshape(-1)[first], np.asarray(hi).reshape(-1)[first]
    order = np.argsort(lo, kind="stable")
    ends = np.searchsorted(lo[order], hi[order], side="right")  # each against those starting before it ends
    return float(np.maximum(ends - np.arange(n) - 1, 0).sum() / (n * (n - 1) / 2))


def _overlap_tie_bound(lo: np.ndarray, hi: np.ndarray) -> float:
    """The largest sum(g^3 - g) of tie groups among intervals [lo, hi]: a tie group lies
    within one connected group of overlapping intervals, and g^3 - g is superadditive."""
    if len(lo) < 2:
        return 0.0
    order = np.argsort(lo, kind="stable")
    reach = np.maximum.accumulate(hi[order])
    starts = np.concatenate([[True], lo[order][1:] > reach[:-1]])  # a new group where no earlier one reaches
    sizes = np.diff(np.concatenate([np.flatnonzero(starts), [len(lo)]])).astype(np.float64)
    return float((sizes**3 - sizes).sum())


def _rank_bounds(lo, hi, ids):
    """Mid-ranks within each column of (n, k) arrays of score intervals [lo, hi] with
    value identities ``ids``: each score's rank is at least (scores certainly below) +
    (its tie group + 1) / 2 and at most that plus the scores of other values whose order
    with it is uncertain. Returns (r_lo, r_hi, tie sums sum(g^3 - g) per column)."""
    n = lo.shape[0]
    below = np.empty(lo.shape)
    above = np.empty(lo.shape)
    group = np.empty(lo.shape)
    ties = np.empty(lo.shape[1])
    for c in range(lo.shape[1]):
        h_sorted, l_sorted = np.sort(hi[:, c]), np.sort(lo[:, c])
        below[:, c] = np.searchsorted(h_sorted, lo[:, c], side="left")  # hi_b < lo_a
        above[:, c] = n - np.searchsorted(l_sorted, hi[:, c], side="right")  # lo_b > hi_a
        _, inv, counts = np.unique(ids[:, c], return_inverse=True, return_counts=True)
        group[:, c] = counts[inv.reshape(-1)]
        ties[c] = float((counts.astype(np.float64) ** 3 - counts).sum())
    r_lo = below + (group + 1) / 2
    return r_lo, r_lo + (n - group - below - above), ties
