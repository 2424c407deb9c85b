"""Publishable statistics for comparing IR systems: effect sizes, confidence intervals and
multiple-comparison corrections (layer: stats).

Everything works on one topics x systems score matrix ``X`` (a DataFrame whose columns name
the systems, such as ``ScoreTable.matrix('AP')``, or a 2-D array with ``names=``); an
original measure column and its interval-scaled ("ranked") column are two such matrices,
so a report calls these functions once for each.

* :func:`correct` / :func:`correct_families`: Holm, Bonferroni and Benjamini-Hochberg
  adjusted p-values (``statsmodels.stats.multitest.multipletests``), over one family or
  jointly over several (several measures, several tests).
* :func:`pairwise`: one row per compared pair of systems: the means, the mean paired
  difference with its BCa bootstrap confidence interval, Cohen's d_z, the matched-pairs
  rank-biserial correlation, the test statistic and p-value of any of
  :data:`irscale.stats.ALL_TESTS` (the paper's eight and the randomised tests), the
  corrected p-value and the decision.
* :func:`system_means`: each system's mean score with its BCa bootstrap confidence interval.

Conventions
-----------
* **Complete matrices only.** A NaN or infinite score is refused (``ArgumentError`` naming
  where it is): nothing is dropped silently. Drop the incomplete topics first
  (``X.dropna()``) or score a missing run as 0 (trec_eval's ``-c``), whichever the study
  means. At least two topics are needed.
* **Differences** are ``system_1 - system_2`` topic by topic: a positive ``diff``, ``d_z``,
  ``rank_biserial`` or (signed) statistic means that system_1 scored higher.
* **Each row on its own scale.** A system's mean and interval depend on that system's
  scores alone, a pair's difference, interval and ``d_z`` on the two systems' scores alone
  (their *own scale*: the largest ``|score|`` of the system, or of the pair), never on the
  other systems of ``X``: a ranked column at N = 1000 holds means from 1e-300 to 1 side by
  side. (The signed-rank test's tie grid, and so ``rank_biserial``, stay on the largest
  ``|score|`` in ``X``, as ``stats.signrank_test`` documents.)
* **Constant differences.** Differences are *constant* when their sample standard
  deviation is at most ``1e-9`` times their own scale (float noise, as the
  1e-9 tie grid of ``stats.signrank_test``; :data:`CONSTANT_TOL`). Then ``d_z`` is ``0.0``
  if the mean difference is within the same tolerance of 0 (identical systems) and
  ``+inf``/``-inf`` otherwise (as ``stats.t_test`` gives ``t = 0`` or ``+-inf``), and the
  confidence interval is the single point ``[diff, diff]``: every bootstrap resample has
  the same mean (scipy's BCa would return NaN with a ``DegenerateDataWarning``).
* **Bootstrap.** Confidence intervals are scipy's paired BCa intervals
  (``scipy.stats.bootstrap(..., method="BCa")``) of the mean, resampling topics. Each
  chunk of pairs (or systems) is resampled with a fresh ``numpy.random.default_rng(seed)``,
  so the interval of every pair is ``u`` times what (up to the last bits of BCa's
  interpolation, 1e-12 relative: a batch of pairs sums the jackknife in another order)
  ``scipy.stats.bootstrap((d / u,), SnappedMean(1.0), n_resamples=n_resamples,
  confidence_level=confidence, method="BCa", rng=np.random.default_rng(seed))`` gives for
  its differences ``d``, ``u`` the power of two at or above its own scale (:func:`units`:
  the division is exact), whatever the other pairs compared, and all pairs share the same
  topic resamples (common random numbers); likewise a system's interval of its scores.
  :class:`SnappedMean` is ``np.mean`` rounded to
  ``1e-12`` of the score scale, so that means equal in exact arithmetic tie in BCa's bias
  correction however numpy ordered the sums (with plain ``np.mean`` the intervals agree to
  about 1e-12 on continuous scores, but on discrete ones float noise decides ties).
  Where scipy still cannot compute an interval it is NaN and scipy warns.
* **NaN p-values** (which :func:`correct` accepts, e.g. from a test that could not be
  run) stay NaN after adjustment, are not counted in the family size ``m``, and are never
  rejected.
* **Rejection** is ``adjusted < alpha`` (strictly, as ``stats.run_test`` decides
  ``p < alpha``); statsmodels' own ``reject`` uses ``<=`` at the boundary.

A hand-checkable example: two systems over four topics whose differences are
``[1, 2, 3, -1]``. The mean difference is 1.25; the standard deviation (ddof=1) is
``sqrt(8.75 / 3) = 1.70783``, so ``d_z = 1.25 / 1.70783 = 0.73193``; the ``|differences|``
1, 2, 3, 1 have the ranks 1.5, 3, 4, 1.5, so the positive ranks sum to 8.5, the negative
to 1.5, and the rank-biserial correlation is ``(8.5 - 1.5) / 10 = 0.7``:

>>> import numpy as np
>>> X = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [0.0, 1.0]])
>>> row = pairwise(X, names=["A", "B"], ci=False).iloc[0]
>>> row["system_1"], row["system_2"], float(row["diff"])
('A', 'B', 1.25)
>>> round(float(row["d_z"]), 5), float(row["rank_biserial"])
(0.73193, 0.7)
>>> round(float(row["statistic"]), 5)  # paired t = d_z * sqrt(4)
1.46385

and Holm, Bonferroni and Benjamini-Hochberg on four p-values (sorted 0.01, 0.03, 0.04, 0.5:
Holm multiplies by 4, 3, 2, 1 and takes running maxima; BH multiplies by 4/1, 4/2, 4/3,
4/4 and takes running minima from the largest):

>>> p = [0.01, 0.04, 0.03, 0.5]
>>> correct(p, "holm")[0].round(6).tolist()
[0.04, 0.09, 0.09, 0.5]
>>> correct(p, "bonferroni")[0].round(6).tolist()
[0.04, 0.16, 0.12, 1.0]
>>> correct(p, "bh")[0].round(6).tolist()
[0.04, 0.053333, 0.053333, 0.5]
>>> correct([0.01, float("nan"), 0.03], "bonferroni")[0].round(6).tolist()  # m = 2
[0.02, nan, 0.06]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats as sps

from irscale._version import __version__
from irscale.errors import ArgumentError, check_choice, warn
from irscale.stats import ALL_TESTS, FAMILYWISE, SIGNED, _as_matrix, pair_index, run_test
from irscale.validate import flag, integer, level

__all__ = [
    "CORRECTIONS",
    "SnappedMean",
    "correct",
    "correct_families",
    "d_z",
    "pairwise",
    "rank_biserial",
    "system_means",
]

CORRECTIONS = ("none", "holm", "bonferroni", "bh")
_STATSMODELS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}
CORRECTION_NAMES = {
    "none": "no correction",
    "holm": "Holm (family-wise error rate)",
    "bonferroni": "Bonferroni (family-wise error rate)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
}

N_RESAMPLES = 9999  # scipy.stats.bootstrap's default
CI_AUTO_MAX = 2000  # ci=None computes intervals for at most this many comparisons
MEAN_DECIMALS = 12  # bootstrap means are rounded to 1e-12 of the score scale (see SnappedMean)
CONSTANT_TOL = 1e-9  # differences with sd <= CONSTANT_TOL * max|X| are constant (float noise)
_CHUNK_BYTES = 256 * 2**20  # the (chunk, n_resamples, topics) resample array of one scipy call


# -- multiple-comparison corrections -----------------------------------------------------------------


def _pvalues(pvalues, name: str = "pvalues") -> np.ndarray:
    """``pvalues`` as a float64 array of values in [0, 1] or NaN."""
    try:
        p = np.array(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentError(
            f"{name} must be an array of p-values (numbers in [0, 1] or NaN), not {type(pvalues).__name__}"
        ) from None
    bad = ~np.isnan(p) & ~((p >= 0) & (p <= 1))
    if bad.any():
        where = tuple(int(k) for k in np.argwhere(bad)[0]) if p.ndim else ()
        raise ArgumentError(
            f"{name} must hold p-values in [0, 1] (or NaN for a test not run); "
            f"{int(bad.sum())} are not, the first {float(p[bad][0])!r} at index {where}"
        )
    return p


def correct(pvalues, method: str = "holm", alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Adjust one family of p-values for multiple comparisons.

    ``method``: ``"holm"`` (Holm's step-down, family-wise error rate), ``"bonferroni"``
    (``min(1, m p)``), ``"bh"`` (Benjamini-Hochberg step-up, false discovery rate;
    statsmodels' ``"fdr_bh"``) or ``"none"`` (the p-values unchanged). ``pvalues`` may have
    any shape; NaN entries stay NaN, are left out of the family (``m`` counts the non-NaN
    p-values) and are never rejected.

    Returns ``(adjusted, reject)``, arrays of ``pvalues``' shape: the adjusted p-values
    (computed by ``statsmodels.stats.multitest.multipletests``, capped at 1) and
    ``adjusted < alpha``. Raises ``PolicyError`` for an unknown method and ``ArgumentError``
    for p-values outside [0, 1] or an ``alpha`` outside (0, 1). (statsmodels' Holm runs
    ``gc.collect()`` on every call: about 90 ms in a study's process holding many objects,
    23 of a DL 2019 study's 89 s, where Bonferroni and BH take well under one. The objects
    alive before the call are frozen for it (``gc.freeze``), so that collection looks at
    the call's own objects only: the same numbers, in well under a millisecond.)
    """
    method = check_choice("correction", method, CORRECTIONS)
    alpha = level("alpha", alpha)
    p = _pvalues(pvalues)
    adjusted = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if method == "none":
        adjusted[ok] = p[ok]
    elif ok.any():
        import gc

        from statsmodels.stats.multitest import multipletests

        gc.freeze()  # statsmodels' Holm collects garbage: only what the call itself made
        try:
            adjusted[ok] = multipletests(p[ok], alpha=alpha, method=_STATSMODELS[method])[1]
        finally:
            gc.unfreeze()
    with np.errstate(invalid="ignore"):
        reject = adjusted < alpha  # NaN: False
    return adjusted, reject


def correct_families(families, method: str = "holm", alpha: float = 0.05):
    """Adjust several families of p-values jointly, as one family (for example the pairwise
    p-values of several measures, or of the original and the ranked column of a measure).

    ``families``: a sequence of p-value arrays (any shapes) or a mapping name -> array. All
    non-NaN p-values form one family of size ``m`` (their total count) and are adjusted
    together as by :func:`correct`; NaNs stay NaN. Returns ``(adjusted, reject)``: two lists
    of arrays in the shapes and order of ``families`` (two dicts with its keys for a
    mapping). Correcting each family on its own is ``[correct(p, method, alpha) for p in
    families]``.
    """
    keys = None
    if isinstance(families, Mapping):
        keys, families = list(families), list(families.values())
    elif isinstance(families, np.ndarray) or not isinstance(families, Sequence) or isinstance(families, str):
        raise ArgumentError(
            "families must be a list of p-value arrays (one per family) or a dict "
            f"name -> p-value array, not {type(families).__name__}; "
            "for a single family use correct()"
        )
    arrays = [
        _pvalues(p, f"families[{k!r}]" if keys else f"families[{n}]")
        for n, (k, p) in enumerate(zip(keys or range(len(families)), families))
    ]
    flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.empty(0)
    adj, rej = correct(flat, method, alpha)
    out_adj, out_rej, start = [], [], 0
    for a in arrays:
        out_adj.append(adj[start : start + a.size].reshape(a.shape))
        out_rej.append(rej[start : start + a.size].reshape(a.shape))
        start += a.size
    if keys is not None:
        return dict(zip(keys, out_adj)), dict(zip(keys, out_rej))
    return out_adj, out_rej


# -- effect sizes ------------------------------------------------------------------------------------


def _constant(d: np.ndarray, scale) -> tuple[np.ndarray, np.ndarray]:
    """Per column of d (topics x K): whether the values are constant up to float noise, and
    whether they are moreover zero (see the module's conventions); ``scale`` one number or
    one per column."""
    tol = CONSTANT_TOL * scale
    const = d.std(axis=0, ddof=1) <= tol if d.shape[0] > 1 else np.ones(d.shape[1], bool)
    return const, const & (np.abs(d.mean(axis=0)) <= tol)


def d_z(d, scale: float | np.ndarray | None = None) -> np.ndarray:
    """Cohen's d_z of paired differences ``d`` (topics x pairs, or one vector of topics):
    the mean difference over its sample standard deviation (ddof=1), the paired t statistic
    divided by sqrt(topics). Constant differences (sd <= 1e-9 * ``scale``; ``scale``
    defaults to ``max |d|``, :func:`pairwise` passes each pair's largest ``|score|``) give 0.0 when
    their mean is within that tolerance of 0 and +-inf otherwise."""
    d = np.asarray(d, dtype=np.float64)
    one = d.ndim == 1
    d = d[:, None] if one else d
    if d.shape[0] < 2:
        raise ArgumentError(f"d_z needs at least two differences (topics), got {d.shape[0]}")
    scale = (float(np.max(np.abs(d))) or 1.0) if scale is None else np.asarray(scale, dtype=np.float64)
    m, sd = d.mean(axis=0), d.std(axis=0, ddof=1)
    const, zero = _constant(d, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(const, np.where(zero, 0.0, np.copysign(np.inf, m)), m / sd)
    return out[0] if one else out


def rank_biserial(d, scale: float | None = None) -> np.ndarray:
    """Matched-pairs rank-biserial correlation (Kerby 2014) of paired differences ``d``
    (topics x pairs, or one vector): ``(R+ - R-) / (R+ + R-)``, where R+ and R- are the sums
    of the Wilcoxon signed ranks of the positive and the negative differences. As in
    ``stats.signrank_test``, zero differences are dropped and tied ``|differences|`` (equal on
    a grid of 1e-9 of ``scale``: ``max |d|`` by default, :func:`pairwise` passes ``max |X|``) get
    mid-ranks; so R+ is the signed-rank statistic W+ and ``r = 2 W+ / (n (n+1) / 2) - 1``
    with n the nonzero differences. In [-1, 1]; 0.0 when every difference is zero."""
    d = np.asarray(d, dtype=np.float64)
    one = d.ndim == 1
    d = d[:, None] if one else d
    scale = (float(np.max(np.abs(d))) or 1.0) if scale is None else float(scale)
    nz = d != 0
    grid = np.where(nz, np.round(np.abs(d) / scale, 9), np.nan)
    r = sps.rankdata(grid, axis=0, method="average", nan_policy="omit")  # zeros (nan) get no rank
    r = np.where(nz, r, 0.0)
    pos, neg = (r * (d > 0)).sum(axis=0), (r * (d < 0)).sum(axis=0)
    total = pos + neg
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(total > 0, (pos - neg) / total, 0.0)
    return out[0] if one else out


# -- bootstrap confidence intervals ----------------------------------------------------------------


class SnappedMean:
    """The bootstrap statistic: ``np.mean`` along ``axis``, rounded to 12 decimals below the
    order of magnitude of ``scale`` (a score scale: ``np.round(mean, 12 -
    floor(log10(scale)))``, 12 decimals for scores in [0, 1]; :func:`pairwise` and
    :func:`system_means` use ``SnappedMean(1.0)`` on rows divided by their :func:`units`).

    IR scores are discrete (P@10 in tenths, AP in small fractions), so many bootstrap
    resamples have a mean *equal* to the sample's. BCa's bias correction counts those ties
    as half below and half above; but float sums in a different order (numpy sums a batch
    of pairs differently from a single pair) make equal means differ in their last bits, and
    which side each falls on would then move the interval (by about 1% of its width on
    P@k-like data). Snapping makes equal means equal, whatever the summation order; it
    moves an interval's ends by at most ``5e-13`` of the score scale. For one pair's differences
    ``d`` on their own scale (in (1/2, 1] after the exact division by :func:`units`),
    ``u * scipy.stats.bootstrap((d / u,), SnappedMean(1.0), method="BCa", ...)`` is what
    :func:`pairwise` reports (to 1e-12 relative: see the module's conventions).
    """

    def __init__(self, scale: float = 1.0):
        scale = float(scale) if scale > 0 else 1.0
        self.decimals = MEAN_DECIMALS - math.floor(math.log10(scale))

    def __call__(self, x, axis=-1):
        return np.round(np.mean(x, axis=axis), self.decimals)

    def __repr__(self) -> str:
        return f"SnappedMean(decimals={self.decimals})"


def units(scale) -> np.ndarray:
    """The power of two at or above each (positive) score scale, 1 for 0: dividing a row of
    scores by its unit is exact in floating point, and puts its largest ``|score|`` in (1/2, 1]."""
    s = np.atleast_1d(np.asarray(scale, dtype=np.float64))
    out = np.ones_like(s)
    pos = s > 0
    out[pos] = np.exp2(np.ceil(np.log2(s[pos])))
    return out


def _bca(series: np.ndarray, scale, confidence: float, n_resamples: int, seed: int):
    """BCa intervals of the mean of each row of ``series`` (K x topics), each row on its own
    scale (``scale``: one per row, its largest ``|score|``): the row is divided by its
    :func:`units` (exact), bootstrapped with ``SnappedMean(1.0)`` and the interval multiplied
    back, so a row's interval depends on that row alone (a column of means of 1e-200 next to
    means of 1 keeps its intervals). Rows in chunks whose resample array stays under
    _CHUNK_BYTES, each chunk with a fresh default_rng(seed). Constant rows (sd at most 1e-9
    of their own scale) get [mean, mean]."""
    K, T = series.shape
    unit = units(np.broadcast_to(np.asarray(scale, dtype=np.float64), (K,)))
    scaled = series / unit[:, None]
    mean = series.mean(axis=1)
    lo, hi = np.full(K, np.nan), np.full(K, np.nan)
    const, _ = _constant(scaled.T, 1.0)
    lo[const] = hi[const] = mean[const]
    todo = np.flatnonzero(~const)
    step = max(1, _CHUNK_BYTES // (n_resamples * T * 8))
    statistic = SnappedMean(1.0)
    for s in range(0, len(todo), step):
        rows = todo[s : s + step]
        res = sps.bootstrap(
            (scaled[rows],),
            statistic,
            n_resamples=n_resamples,
            vectorized=True,
            axis=-1,
            confidence_level=confidence,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
        lo[rows], hi[rows] = res.confidence_interval
        lo[rows] *= unit[rows]
        hi[rows] *= unit[rows]
    return lo, hi


# -- argument checks -----------------------------------------------------------------------------------


def _named_matrix(X, names) -> tuple[np.ndarray, tuple[str, ...]]:
    """A complete topics x systems float matrix (two topics and two systems at least) and
    unique system names."""
    M, own = _as_matrix(X)
    S = M.shape[1]
    if names is None:
        names = own
    else:
        if isinstance(names, str) or not isinstance(names, (Sequence, np.ndarray)):
            raise ArgumentError(f"names must be a list of {S} system names, not {type(names).__name__}")
        names = tuple(names)
        if not all(isinstance(n, str) for n in names):
            raise ArgumentError(
                "names must be strings (system names), got "
                f"{next(type(n).__name__ for n in names if not isinstance(n, str))}"
            )
        if hasattr(X, "columns") and names != own:
            raise ArgumentError(
                "names= is for a 2-D array; a DataFrame's columns name its systems "
                "(rename the columns instead, or pass X.to_numpy() with names=)"
            )
        if len(names) != S:
            raise ArgumentError(f"names must name the {S} systems (columns of X), got {len(names)} names")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ArgumentError(f"system names must be unique; {dup} appear more than once")
    bad = ~np.isfinite(M)
    if bad.any():
        t, s = np.argwhere(bad)[0]
        raise ArgumentError(
            f"X must be a complete matrix of finite scores; {int(bad.sum())} entries are NaN or "
            f"infinite, the first at topic row {int(t)}, system {names[s]!r}. Drop the incomplete "
            "topics (X.dropna()) or score missing runs as 0 (trec_eval -c) first"
        )
    if M.shape[0] < 2:
        raise ArgumentError(
            f"X needs at least two topics (rows) for a standard deviation and a bootstrap, got {M.shape[0]}"
        )
    return M, names


def _resampling(confidence, n_resamples, seed) -> tuple[float, int, int]:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < float(confidence) < 1:
        raise ArgumentError(
            f"confidence must be a number strictly between 0 and 1 (for example 0.95), not {confidence!r}"
        )
    n_resamples = integer("n_resamples", n_resamples, minimum=1)
    seed = integer("seed", seed, minimum=0, none=True)
    if seed is None:  # fresh entropy, recorded so that the result can be reproduced
        entropy = np.random.SeedSequence().entropy  # drawn here, so an int (the stubs allow a sequence, None)
        assert isinstance(entropy, int)
        seed = entropy
    return float(confidence), n_resamples, seed


def comparisons(names: tuple[str, ...], baselines) -> tuple[np.ndarray, np.ndarray]:
    """(first, second) system indices of every comparison: every pair ``i < j`` where
    ``baselines`` is None, else each baseline against every other system (the rows of
    :func:`pairwise`, and of a study's comparisons with baselines)."""
    S = len(names)
    if baselines is None:
        return pair_index(S)
    if isinstance(baselines, str):
        baselines = [baselines]
    if not isinstance(baselines, (Sequence, np.ndarray)) or not all(isinstance(b, str) for b in baselines):
        raise ArgumentError(f"baselines must be None (all pairs) or a list of system names, not {baselines!r}")
    if len(baselines) == 0:
        raise ArgumentError("baselines must name at least one system (or be None to compare all pairs)")
    index = {n: k for k, n in enumerate(names)}
    unknown = [b for b in baselines if b not in index]
    if unknown:
        known = ", ".join(repr(n) for n in names[:20]) + (f", ... ({S} in all)" if S > 20 else "")
        raise ArgumentError(f"unknown baseline {unknown[0]!r}: the systems are {known}")
    if len(set(baselines)) != len(baselines):
        raise ArgumentError(f"baselines lists {next(b for b in baselines if list(baselines).count(b) > 1)!r} twice")
    first, second, done = [], [], set()
    for b in baselines:
        k = index[b]
        others = [o for o in range(S) if o != k and o not in done]  # earlier baselines: compared already
        first += [k] * len(others)
        second += others
        done.add(k)
    return np.asarray(first, dtype=np.intp), np.asarray(second, dtype=np.intp)


# -- pairwise comparisons ------------------------------------------------------------------------------


def pairwise(
    X,
    test: str = "ttest",
    alpha: float = 0.05,
    correction: str = "none",
    baselines=None,
    names=None,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int | None = 0,
    ci: bool | None = None,
):
    """Compare systems pair by pair on a topics x systems matrix ``X``: one row per pair.

    ``baselines=None`` compares every pair ``i < j`` (``stats.pair_index`` order). A list
    of system names (or one name) compares every other system with each baseline in turn
    (``system_1`` = the baseline, others in column order); a pair of two baselines appears
    once, with the earlier baseline first. The correction is over all the comparisons of the
    table together.

    Columns:

    * ``system_1``, ``system_2``; ``mean_1``, ``mean_2``: their mean scores over topics;
    * ``diff``: the mean of the per-topic differences ``system_1 - system_2``;
    * ``ci_low``, ``ci_high``: the paired BCa bootstrap ``confidence`` interval of ``diff``
      (topics resampled ``n_resamples`` times with ``numpy.random.default_rng(seed)``;
      see the module's conventions);
    * ``d_z``: Cohen's d_z, ``diff`` over the standard deviation (ddof=1) of the
      differences (:func:`d_z`: 0.0 for identical systems, +-inf for constant nonzero
      differences);
    * ``rank_biserial``: the matched-pairs rank-biserial correlation of the Wilcoxon
      signed-rank test (:func:`rank_biserial`);
    * ``statistic``, ``p_value``: the pair's entries of ``stats.run_test(test, X, alpha,
      seed=seed)`` (``seed`` seeds the randomised tests' draws too; None: a fresh seed from
      the operating system, as for the intervals).
      Signed statistics (sign: #positive - #negative differences; ranksum, signrank: z;
      ttest, bootstrap: t; permutation, rtukey: the difference of means) are negated when a
      baseline comes after the other system in ``X``, so they always read ``system_1``
      versus ``system_2``; the Tukey-type statistic (studentized range) is unsigned;
    * ``p_adjusted``: ``p_value`` after ``correction`` (:func:`correct`) over the rows;
    * ``significant``: ``p_adjusted < alpha``.

    The Tukey-type tests (``anova1``, ``kruskal``, ``anova2``, ``friedman``, and the
    randomised Tukey HSD ``rtukey``) compare on the range over all S systems: their
    p-values are already family-wise adjusted (over all S(S-1)/2 pairs, even when only the
    baseline comparisons are listed, which is conservative), so ``p_adjusted = p_value``
    and any ``correction`` but ``"none"`` is refused. The studentized range's p-values
    cost time at finite degrees of freedom (``anova1``, ``anova2``: scipy integrates it,
    about 40 ms a pair here), so only the listed pairs' are computed.

    ``ci``: True computes the intervals, False leaves ``ci_low``/``ci_high`` NaN (the
    columns stay, so the table's layout does not depend on it); None (default) computes them
    for at most :data:`CI_AUTO_MAX` (2,000) comparisons and otherwise leaves them NaN with
    an ``IrscaleWarning``: all 8,256 pairs of 129 systems over 50 topics take about 32 s
    at 9,999 resamples on two cores (most of it scipy gathering the resamples), against a
    few hundred milliseconds without intervals. ``df.attrs`` records the test, correction,
    alpha, confidence, n_resamples, seed, whether intervals were computed and the irscale
    version.
    """
    import pandas as pd

    M, names = _named_matrix(X, names)
    test, alpha, correction = _test_and_correction(test, alpha, correction)
    confidence, n_resamples, seed = _resampling(confidence, n_resamples, seed)
    if ci is not None:
        ci = flag("ci", ci)
    a, b = comparisons(names, baselines)
    P = len(a)
    if ci is None:
        ci = _auto_ci(P)

    res, stat, p = _pair_tests(M, a, b, test, alpha, seed)
    p_adj, sig = correct(p, correction, alpha)
    df = pd.DataFrame(
        {
            "system_1": [names[x] for x in a],
            "system_2": [names[x] for x in b],
            **pair_effects(M, a, b, confidence, n_resamples, seed, ci),
            "statistic": stat,
            "p_value": p,
            "p_adjusted": p_adj,
            "significant": sig,
        }
    )
    df.attrs.update(
        {
            "test": test,
            "method": res.method,
            "correction": correction,
            "correction_method": CORRECTION_NAMES[correction],
            "alpha": alpha,
            "baselines": None if baselines is None else list([baselines] if isinstance(baselines, str) else baselines),
            "ci": bool(ci),
            "confidence": confidence,
            "n_resamples": n_resamples,
            "seed": seed,
            "ci_method": "paired BCa bootstrap of the mean difference (scipy.stats.bootstrap), topics resampled",
            "n_topics": int(M.shape[0]),
            "irscale_version": __version__,
        }
    )
    return df


def pair_effects(
    M: np.ndarray, a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int, seed: int, ci: bool
) -> dict[str, np.ndarray]:
    """What a comparison of column ``a[k]`` with column ``b[k]`` of the topics x systems
    matrix ``M`` is whatever the test: ``mean_1``, ``mean_2``, ``diff`` (mean of ``a - b``),
    its paired BCa interval ``ci_low``/``ci_high`` (NaN unless ``ci``), ``d_z`` and
    ``rank_biserial`` (see :func:`pairwise`). One owner for :func:`pairwise` and the
    study's comparisons with baselines, which compute these once for all their tests."""
    scale = float(np.max(np.abs(M))) or 1.0  # the signed-rank tie grid of stats.run_test (and rank_biserial)
    own = np.maximum(np.abs(M[:, a]).max(axis=0), np.abs(M[:, b]).max(axis=0))  # each pair's own scale
    D = M[:, a] - M[:, b]  # topics x comparisons
    Dt = np.ascontiguousarray(D.T)  # comparisons x topics: diff and the bootstrap sum alike
    means = M.mean(axis=0)
    lo = np.full(len(a), np.nan)
    hi = np.full(len(a), np.nan)
    if ci:
        lo, hi = _bca(Dt, own, confidence, n_resamples, seed)
    return {
        "mean_1": means[a],
        "mean_2": means[b],
        "diff": Dt.mean(axis=1),
        "ci_low": lo,
        "ci_high": hi,
        "d_z": d_z(D, np.where(own > 0, own, 1.0)),
        "rank_biserial": rank_biserial(D, scale),
    }


def pair_pvalues(res, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The p-values of comparisons ``a[k]`` vs ``b[k]`` from a test's result on all pairs
    (``stats.run_test``): its own where it has them, else (Tukey-type at finite degrees of
    freedom) the studentized range's for these pairs alone, each distinct statistic once
    (scipy integrates each, about 12 ms)."""
    S = len(res.systems) if res.systems else int(round((1 + math.sqrt(1 + 8 * len(res.statistic))) / 2))
    lo_, hi_ = np.minimum(a, b), np.maximum(a, b)
    k = lo_ * (2 * S - lo_ - 1) // 2 + (hi_ - lo_ - 1)  # position of (lo, hi) in pair_index order
    if res.test in SIGNED:
        return np.asarray(res.pvalue, dtype=np.float64)[k]
    stat = np.asarray(res.statistic, dtype=np.float64)[k]
    uniq, back = np.unique(stat, return_inverse=True)
    return sps.studentized_range.sf(uniq, res.provenance["k"], res.provenance["df"])[back.reshape(-1)]


def _test_and_correction(test, alpha, correction) -> tuple[str, float, str]:
    """pairwise's test, alpha and correction checked (a Tukey-type test takes no correction)."""
    test = check_choice("test", test, ALL_TESTS)
    alpha = level("alpha", alpha)
    correction = check_choice("correction", correction, CORRECTIONS)
    if test in FAMILYWISE and correction != "none":
        raise ArgumentError(
            f"test {test!r} is a Tukey-type multiple comparison: its p-values are already "
            f"adjusted over all pairs of systems (the range of the system means), so correction "
            f"must be 'none', not {correction!r}; for a Holm or BH correction use a pairwise test "
            f"({', '.join(repr(t) for t in SIGNED if t not in FAMILYWISE)})"
        )
    return test, alpha, correction


def _auto_ci(P: int) -> bool:
    """Whether pairwise computes intervals when ``ci=None``: for at most CI_AUTO_MAX
    comparisons; beyond, a warning (at pairwise's caller) says they are left out."""
    if P <= CI_AUTO_MAX:
        return True
    warn(
        f"pairwise: no confidence intervals for {P:,} comparisons (more than {CI_AUTO_MAX:,}): ci_low and "
        "ci_high are NaN; ci=True computes them, ci=False skips them silently",
        stacklevel=3,
    )
    return False


def _pair_tests(M: np.ndarray, a: np.ndarray, b: np.ndarray, test: str, alpha: float, seed: int | None = 0):
    """``stats.run_test(test, M, alpha, seed=seed)`` and each comparison's (a[k] vs b[k])
    statistic, signed to read system_1 versus system_2, and p-value: (the test's result,
    statistics, p-values)."""
    S = M.shape[1]
    res = run_test(test, M, alpha, seed=seed)
    lo_, hi_ = np.minimum(a, b), np.maximum(a, b)
    k = lo_ * (2 * S - lo_ - 1) // 2 + (hi_ - lo_ - 1)  # position of (lo, hi) in pair_index order
    stat = res.statistic[k].astype(np.float64)
    if test in SIGNED:
        stat = np.where(a > b, -stat, stat)
    return res, stat, pair_pvalues(res, a, b)  # Tukey-type: only the listed pairs' (slow at finite df)


def system_means(X, names=None, confidence: float = 0.95, n_resamples: int = N_RESAMPLES, seed: int | None = 0):
    """Each system's mean score over topics with its BCa bootstrap confidence interval.

    Returns a DataFrame with columns ``system``, ``mean``, ``ci_low``, ``ci_high`` (one row
    per system, in ``X``'s column order). The intervals resample topics ``n_resamples``
    times, vectorised across systems in bounded chunks, each chunk with a fresh
    ``numpy.random.default_rng(seed)``: a system's interval is (to 1e-12 relative) ``u`` times
    ``scipy.stats.bootstrap((X[:, s] / u,), SnappedMean(1.0), method="BCa",
    rng=default_rng(seed), ...)``, ``u = units(max|X[:, s]|)``: the power of two at or above
    the system's own largest ``|score|``, so it depends on that system's scores alone.
    A system with the same score on every topic gets ``[mean, mean]``. ``df.attrs`` records
    confidence, n_resamples, seed and the irscale version.
    """
    import pandas as pd

    M, names = _named_matrix(X, names)
    confidence, n_resamples, seed = _resampling(confidence, n_resamples, seed)
    lo, hi = _bca(M.T, np.abs(M).max(axis=0), confidence, n_resamples, seed)
    df = pd.DataFrame({"system": list(names), "mean": M.mean(axis=0), "ci_low": lo, "ci_high": hi})
    df.attrs.update(
        {
            "confidence": confidence,
            "n_resamples": n_resamples,
            "seed": seed,
            "ci_method": "BCa bootstrap of the mean (scipy.stats.bootstrap), topics resampled",
            "n_topics": int(M.shape[0]),
            "irscale_version": __version__,
        }
    )
    return df
