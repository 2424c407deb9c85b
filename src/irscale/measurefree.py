"""The measure-free view: compare runs topic by topic under the weak top-heaviness order.

The weak top-heaviness order (Ferrante, Ferro & Maistro 2015, Section 4.2, graded form;
``"weak"`` in :mod:`irscale.scales.orders`) compares two runs of the same length N over
grades 0..c by their prefix counts: r <= s iff for every grade g >= 1 and every rank k,
r has at most as many documents of grade >= g in its top k as s. It is the order every
utility-oriented measure respects (the 2015 paper's Definition 5.1; equivalently, every
measure with the replacement and swap properties, Theorem 5.2: P@N, AP, RR, DCG, RBP...
never rank r above s when r < s), so it is the one order on which every such measure
agrees. Where two runs are *incomparable* under it, whichever of them a measure puts
first is the measure's choice (its weighting of ranks and grades), not something the runs
themselves settle. Moffat & Mackenzie's "innate pairwise orderings" (JASIST 2024) test the
same thing.

For each topic and system pair this module says which of the four cases holds:

* :data:`ABOVE` (+1): the first run is above the second (a >= b and a != b);
* :data:`BELOW` (-1): the first run is below the second;
* :data:`EQUAL` (0): the two runs have the same grades at every rank (every measure of
  the grades ties);
* :data:`INCOMPARABLE` (2): neither is above the other.

Functions:

* :func:`weak_compare` — the code for two grade arrays (vectorised over leading axes);
* :func:`weak_grades` — judged grades (sentinels included) mapped onto runs of length N;
* :func:`topic_comparisons` — the codes of every system pair on every topic, in chunks
  (129 TREC-8 runs x 50 topics: about 0.5 s at depth 1,000, 0.1 s at N = 30);
* :func:`pair_summary` — per pair: better / worse / equal / incomparable topics and a
  sign test over the comparable, non-equal ones;
* :func:`pair_differences`, :func:`incomparable_share`, :func:`rests_on_incomparable`,
  :func:`flag_significant` — whether a significant difference found by some measure and
  test rests mostly on topics where the two runs are incomparable.

Pairs are in ``numpy.triu_indices(S, k=1)`` order (i < j), the order of
:func:`irscale.stats.pair_index` and every pairwise test of :mod:`irscale.stats`.

The comparisons must be made on the runs the measure saw: at the depth it was computed
at (``depth=N`` for a measure at run length N, as :func:`irscale.compare` uses; the full
depth for trec_eval-style AP), and binarised at the same ``rel`` for a binary measure on
graded qrels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from irscale.data import JudgedRuns
from irscale.errors import ArgumentError
from irscale.validate import flag, integer, level

__all__ = [
    "ABOVE",
    "BELOW",
    "CODE_NAMES",
    "EQUAL",
    "INCOMPARABLE",
    "flag_significant",
    "incomparable_share",
    "pair_differences",
    "pair_summary",
    "rests_on_incomparable",
    "topic_comparisons",
    "weak_compare",
    "weak_grades",
]

ABOVE = np.int8(1)
BELOW = np.int8(-1)
EQUAL = np.int8(0)
INCOMPARABLE = np.int8(2)
CODE_NAMES = {1: "above", -1: "below", 0: "equal", 2: "incomparable"}

TOL = 1e-9  # |score difference| at or below: a tie (float noise)
MAX_ELEMENTS = 1 << 24  # prefix counts compared at a time (int16: 32 MB per temporary)


# -- the order on two arrays -----------------------------------------------------------------


def _levels(*arrays: np.ndarray) -> np.ndarray:
    """The grade thresholds g that matter: the positive grades present. (The count of
    grades >= g equals that of grades >= g' for the smallest present g' >= g, so the other
    thresholds repeat a present one's constraints.)"""
    top = max((int(a.max(initial=0)) for a in arrays), default=0)
    return np.array([v for v in range(1, top + 1) if any((a == v).any() for a in arrays)], dtype=np.int64)


def _prefix_counts(g: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """(..., L * N) prefix counts: for each level l and rank k, grades >= levels[l] in the
    top k (levels outer, ranks inner)."""
    N = g.shape[-1]
    dtype = np.int16 if N < np.iinfo(np.int16).max else np.int32
    out = np.empty(g.shape[:-1] + (len(levels), N), dtype=dtype)
    for i, lv in enumerate(levels):
        np.cumsum(g >= lv, axis=-1, dtype=dtype, out=out[..., i, :])
    return out.reshape(g.shape[:-1] + (len(levels) * N,))


def _codes(up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Codes from "some count of a is larger" (up) and "some count of b is larger" (down)."""
    out = np.where(up, ABOVE, BELOW).astype(np.int8)
    out[up == down] = EQUAL
    out[up & down] = INCOMPARABLE
    return out


def weak_compare(a, b) -> np.ndarray:
    """Compare runs ``a`` and ``b`` under the weak top-heaviness order.

    The ``"weak"`` order as :mod:`irscale.scales.orders` defines it (prefix counts; the
    2015 paper's Section 4.2, graded form): ``a >= b`` iff for every grade g = 1..c and
    every rank k = 1..N, ``a`` has at least as many grades >= g in its top k as ``b``.
    The prefix counts are computed with one cumsum per grade present and compared at
    every (g, k). This is the transitive closure of the 2015 paper's replacement and swap
    moves (a grade raised; grades a < b at any ranks i < j swapped), and, for binary
    relevance, of :func:`irscale.scales.orders.weak_moves` (tests/test_measurefree.py
    checks both on every pair of runs). With grades 0..c, c >= 2, and N >= 3,
    ``weak_moves`` (raises and *adjacent* swaps) generates a smaller order: 0 2 1 <= 1 2 0
    here (one swap of ranks 1 and 3, every prefix count at least as large) but not there.

    Parameters
    ----------
    a, b : array_like of int
        Grades 0..c (0 non-relevant), shape (..., N), broadcast against each other; the
        last axis is the rank. Already mapped and cut to one common length N (see
        :func:`weak_grades` for judged runs with sentinels).

    Returns
    -------
    numpy.ndarray of int8, the broadcast shape without the last axis
        :data:`ABOVE` (+1, a above b: a >= b and a != b), :data:`BELOW` (-1),
        :data:`EQUAL` (0, the same grades at every rank) or :data:`INCOMPARABLE` (2).

    Examples
    --------
    >>> weak_compare([1, 0, 0], [0, 1, 0]).item()   # a relevant document moved up
    1
    >>> weak_compare([0, 1, 0, 1, 0], [1, 0, 0, 0, 1]).item()   # the 2015 paper's example
    2
    >>> weak_compare([[0, 1, 1, 2, 2]], [[0, 1, 1, 2, 3], [0, 1, 1, 1, 3]]).tolist()
    [-1, 2]
    """
    a, b = np.asarray(a), np.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if x.ndim == 0 or not np.issubdtype(x.dtype, np.integer):
            raise ArgumentError(
                f"{name} must be an integer array of grades with the rank as its last axis, "
                f"got {x.dtype} of shape {x.shape}"
            )
        if x.size and x.min() < 0:
            raise ArgumentError(
                f"{name} holds negative grades: map judged runs with weak_grades() first "
                "(sentinels and negative grades are non-relevant, 0)"
            )
    if a.shape[-1] != b.shape[-1]:
        raise ArgumentError(f"a and b must have the same run length (last axis), got {a.shape[-1]} and {b.shape[-1]}")
    levels = _levels(a, b)
    if len(levels) == 0 or a.shape[-1] == 0:
        return np.zeros(np.broadcast_shapes(a.shape, b.shape)[:-1], dtype=np.int8)
    d = _prefix_counts(a, levels).astype(np.int32) - _prefix_counts(b, levels)
    return _codes((d > 0).any(axis=-1), (d < 0).any(axis=-1))


# -- judged runs -> runs of length N ---------------------------------------------------------


def weak_grades(grades, depth: int | None = None, rel: int | None = None, max_grade: int | None = None) -> np.ndarray:
    """Judged grades mapped onto the runs the weak order compares.

    Parameters
    ----------
    grades : JudgedRuns or array_like of int, shape (..., D)
        Judged grades with the sentinels of :mod:`irscale.data`: :data:`~irscale.data.PAD`
        (past the end of the run) and :data:`~irscale.data.UNJUDGED` (retrieved, not in
        the qrels) become 0, non-relevant, as do negative grades.
    depth : int, optional
        The run length N: the top N ranks, the runs shorter than N padded with
        non-relevant documents (as :func:`irscale.transform` and :func:`irscale.compare`
        see a run at run length N). Default: all D ranks (every retrieved document).
    rel : int, optional
        Binary relevance: grade >= ``rel`` becomes 1, every other grade 0 (for a binary
        measure on graded qrels, e.g. AP with ``rel=2``). Default: graded, 0..c.
    max_grade : int, optional
        Grades above it count as it (the top grade c of the scale). Default: the
        JudgedRuns' ``topics.max_grade`` (as the study maps graded runs), no cap for an
        array.

    Returns
    -------
    numpy.ndarray of int8, shape (..., N)
    """
    if isinstance(grades, JudgedRuns):
        grades.check_depth(depth, "weak-order comparisons")
        if max_grade is None and rel is None:
            max_grade = grades.topics.max_grade
        g = grades.grades
    else:
        g = np.asarray(grades)
        if g.ndim == 0 or not np.issubdtype(g.dtype, np.integer):
            raise ArgumentError(
                f"grades must be a JudgedRuns or an integer array (..., depth), got {g.dtype} of shape {g.shape}"
            )
    depth = integer("depth", depth, minimum=1, none=True)
    rel = integer("rel", rel, minimum=1, none=True)
    max_grade = integer("max_grade", max_grade, minimum=1, none=True)
    N = g.shape[-1] if depth is None else depth
    cut = g[..., :N]
    if rel is not None:
        out = (cut >= rel).astype(np.int8)  # PAD, UNJUDGED and negative grades are < rel
    else:
        top = int(cut.max(initial=0))
        cap = top if max_grade is None else min(top, max_grade)
        if cap > np.iinfo(np.int8).max:
            raise ArgumentError(f"grades up to {cap}: at most 127 levels; cap them with max_grade=")
        out = np.clip(cut, 0, cap).astype(np.int8)  # sentinels and negative grades -> 0
    if out.shape[-1] < N:
        pad = np.zeros(out.shape[:-1] + (N - out.shape[-1],), dtype=np.int8)
        out = np.concatenate([out, pad], axis=-1)
    return out


# -- every pair of systems -------------------------------------------------------------------


def topic_comparisons(
    grades,
    depth: int | None = None,
    rel: int | None = None,
    *,
    max_grade: int | None = None,
    square: bool = False,
    max_elements: int = MAX_ELEMENTS,
) -> np.ndarray:
    """The weak-order comparison of every pair of systems on every topic.

    Parameters
    ----------
    grades : JudgedRuns or array_like of int, shape (S, T, D)
        Judged grades, sentinels included (mapped by :func:`weak_grades`).
    depth : int, optional
        Compare the top N = ``depth`` ranks only, shorter runs padded with non-relevant
        documents (the runs a measure at run length N sees: :func:`irscale.compare`
        works at ``depth=N``). Default: all D ranks, i.e. every retrieved document (the
        runs that trec_eval-style AP, nDCG... at full depth see).
    rel : int, optional
        Binarise: grade >= ``rel`` is relevant (for binary measures on graded qrels).
        Default: graded.
    max_grade : int, optional
        See :func:`weak_grades`.
    square : bool
        Return an (S, S, T) matrix (``out[i, j]`` compares system i with system j;
        ``out[j, i]`` is its mirror; the diagonal is :data:`EQUAL`) instead of the
        (pairs, T) rows.
    max_elements : int
        Prefix counts held at a time (per temporary array; default 2**24, 32 MB of int16):
        the work is done in blocks of topics and of systems, so memory stays bounded at
        any size (at least one topic's counts of every system are held together).

    Returns
    -------
    numpy.ndarray of int8
        (S(S-1)/2, T), pairs (i, j), i < j, in ``numpy.triu_indices(S, k=1)`` order
        (that of :func:`irscale.stats.pair_index`), each the code of
        ``weak_compare(run_i, run_j)``; (S, S, T) with ``square=True``.

    Notes
    -----
    A run that retrieved nothing on a topic is the all-non-relevant run, the bottom of the
    order (what ``missing_topics="zero"`` scores); with ``missing_topics="drop"`` leave
    those topics out of the system's pairs yourself (``JudgedRuns.missing``).
    """
    square = flag("square", square)
    max_elements = integer("max_elements", max_elements, minimum=1)
    G = weak_grades(grades, depth, rel, max_grade)
    if G.ndim != 3:
        raise ArgumentError(f"grades must have shape (systems, topics, depth), got {G.shape}")
    out = _pair_codes(G, max_elements)
    return _square(out, G.shape[0]) if square else out


def _pair_codes(G: np.ndarray, max_elements: int) -> np.ndarray:
    """The weak-order codes (pairs, T) of every pair of systems i < j of the weak grades ``G``
    on every topic, in blocks of topics and systems of at most ``max_elements`` prefix counts."""
    S, T, N = G.shape
    i_idx, _ = np.triu_indices(S, k=1)
    pair_start = np.concatenate([[0], np.cumsum(np.arange(S - 1, 0, -1))]).astype(np.int64)  # first pair of i
    out = np.empty((len(i_idx), T), dtype=np.int8)
    levels = _levels(G)
    if len(levels) == 0 or N == 0:
        out[:] = EQUAL
        return out
    M = len(levels) * N  # prefix counts per (system, topic)
    tb = int(max(1, min(T, max_elements // max(S * M, 1))))  # topics per block: counts of all systems
    for t0 in range(0, T, tb):
        t1 = min(T, t0 + tb)
        A = _prefix_counts(G[:, t0:t1], levels)  # (S, tb, M)
        jb = int(max(1, max_elements // max((t1 - t0) * M, 1)))  # systems compared at a time
        for i in range(S - 1):
            a = A[i]
            for j0 in range(i + 1, S, jb):
                j1 = min(S, j0 + jb)
                B = A[j0:j1]
                up = (B < a).any(axis=-1)  # system i has more somewhere
                down = (B > a).any(axis=-1)  # system j has more somewhere
                p0 = pair_start[i] + (j0 - i - 1)
                out[p0 : p0 + (j1 - j0), t0:t1] = _codes(up, down)
    return out


def _square(out: np.ndarray, S: int) -> np.ndarray:
    """The (S, S, T) matrix of the pairs' codes ``out`` (pairs, T): ``[i, j]`` and its mirror
    ``[j, i]`` (incomparable stays so, the others negated), the diagonal equal."""
    i_idx, j_idx = np.triu_indices(S, k=1)
    sq = np.zeros((S, S, out.shape[1]), dtype=np.int8)
    sq[i_idx, j_idx] = out
    sq[j_idx, i_idx] = np.where(out == INCOMPARABLE, INCOMPARABLE, -out)
    return sq


def _pairs_codes(codes) -> np.ndarray:
    codes = np.asarray(codes)
    if codes.ndim == 3 and codes.shape[0] == codes.shape[1]:  # square
        i, j = np.triu_indices(codes.shape[0], k=1)
        codes = codes[i, j]
    if codes.ndim != 2:
        raise ArgumentError(
            f"codes must be a (pairs, topics) or (S, S, topics) array of topic_comparisons, got shape {codes.shape}"
        )
    bad = ~np.isin(codes, (ABOVE, BELOW, EQUAL, INCOMPARABLE))
    if bad.any():
        raise ArgumentError(f"codes must be -1, 0, 1 or 2 (topic_comparisons), found {codes[bad][0]!r}")
    return codes.astype(np.int8, copy=False)


def _systems_for(n_pairs: int, names) -> tuple[str, ...]:
    if isinstance(names, (int, np.integer)) and not isinstance(names, bool):
        names = [f"s{k}" for k in range(int(names))]
    names = tuple(map(str, names))
    S = len(names)
    if S * (S - 1) // 2 != n_pairs:
        raise ArgumentError(f"{n_pairs} pairs of codes need S systems with S(S-1)/2 = {n_pairs}; got {S} names")
    return names


# -- per pair: counts and the sign test ------------------------------------------------------


def _sign_p(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Two-sided exact binomial p-value of k successes in n trials at p = 1/2 (what
    ``scipy.stats.binomtest(k, n).pvalue`` gives: the distribution is symmetric, so the
    outcomes at most as likely as k are the two tails beyond min(k, n-k)); NaN when n = 0."""
    from scipy import stats as sps

    k, n = np.asarray(k), np.asarray(n)
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * sps.binom.cdf(np.minimum(k, n - k), n, 0.5))
    return np.where(n > 0, p, np.nan)


def pair_summary(codes, names: Sequence[str] | int, alpha: float = 0.05):
    """One row per system pair: how the two runs compare topic by topic.

    Parameters
    ----------
    codes : ndarray
        :func:`topic_comparisons` output, (pairs, T) or (S, S, T).
    names : sequence of str, or int
        The S system names (``JudgedRuns.systems``), or S (then named s0, s1, ...).
    alpha : float
        Level of the sign test's ``sign_significant`` column.

    Returns
    -------
    pandas.DataFrame
        One row per pair (i < j, ``triu_indices`` order) with columns

        * ``system_1``, ``system_2``;
        * ``topics``: T;
        * ``better``: topics where system_1 is above system_2 in the weak order (every
          utility-oriented measure scores system_1 at least as high there);
        * ``worse``: topics where system_1 is below;
        * ``equal``: topics where the two runs have the same grades at every rank;
        * ``incomparable``: topics where neither is above the other (a measure's choice);
        * ``comparable``: better + worse + equal;
        * ``incomparable_share``: incomparable / topics;
        * ``sign_n``: better + worse, the topics the sign test counts;
        * ``sign_p``: two-sided exact binomial sign test of better against worse
          (``scipy.stats.binomtest(better, better + worse)``; NaN when both are 0);
        * ``sign_significant``: sign_p < alpha;
        * ``direction``: +1 when better > worse, -1 when worse > better, 0 otherwise.

        ``better > 0 and worse == 0`` means system_1 is at least as good as system_2 on
        every comparable topic; with ``incomparable == 0`` as well, every
        utility-oriented measure ranks system_1 at least as high on every topic.
    """
    import pandas as pd

    codes = _pairs_codes(codes)
    systems = _systems_for(codes.shape[0], names)
    alpha = level("alpha", alpha)
    T = codes.shape[1]
    better = (codes == ABOVE).sum(axis=1)
    worse = (codes == BELOW).sum(axis=1)
    equal = (codes == EQUAL).sum(axis=1)
    inc = (codes == INCOMPARABLE).sum(axis=1)
    n = better + worse
    p = _sign_p(better, n)
    i, j = np.triu_indices(len(systems), k=1)
    return pd.DataFrame(
        {
            "system_1": [systems[a] for a in i],
            "system_2": [systems[b] for b in j],
            "topics": np.full(len(i), T, dtype=np.int64),
            "better": better,
            "worse": worse,
            "equal": equal,
            "incomparable": inc,
            "comparable": better + worse + equal,
            "incomparable_share": inc / T if T else np.full(len(i), np.nan),
            "sign_n": n,
            "sign_p": p,
            "sign_significant": np.nan_to_num(p, nan=1.0) < alpha,
            "direction": np.sign(better - worse).astype(np.int8),
        }
    )


# -- does a significant difference rest on incomparable topics? ------------------------------


def pair_differences(scores) -> np.ndarray:
    """Per-topic score differences of every system pair: (pairs, T), row (i, j) is
    ``scores[:, i] - scores[:, j]`` in ``triu_indices`` order.

    ``scores`` is a topics x systems matrix (``ScoreTable.matrix("AP")``, a DataFrame or
    an array), the input of :mod:`irscale.stats`' tests."""
    X = np.asarray(scores.to_numpy() if hasattr(scores, "to_numpy") else scores, dtype=np.float64)
    if X.ndim != 2:
        raise ArgumentError(f"scores must be a topics x systems matrix, got shape {X.shape}")
    i, j = np.triu_indices(X.shape[1], k=1)
    return (X[:, i] - X[:, j]).T


def _check_pair(codes, differences) -> tuple[np.ndarray, np.ndarray]:
    codes = _pairs_codes(np.atleast_2d(codes))
    d = np.atleast_2d(np.asarray(differences, dtype=np.float64))
    if d.shape != codes.shape:
        raise ArgumentError(
            f"differences {d.shape} and codes {codes.shape} must have the same (pairs, topics) shape "
            "(pair_differences(scores) gives the differences in the codes' pair order)"
        )
    return codes, d


Share = Literal["mass", "count"]


def incomparable_share(codes, differences, by: Share = "mass", tol: float = TOL) -> np.ndarray:
    """Per pair, the part of the score difference that comes from incomparable topics.

    ``by="mass"`` (the default): ``sum |d_t| over incomparable topics / sum |d_t|``, the
    share of the total absolute per-topic difference contributed by topics where the two
    runs are incomparable. ``by="count"``: the share of the topics with a non-zero
    difference that are incomparable. NaN where every difference is 0.

    Parameters
    ----------
    codes : ndarray
        (pairs, T) codes of :func:`topic_comparisons` (or (T,) for one pair).
    differences : ndarray
        (pairs, T) per-topic score differences in the same pair order and orientation
        (:func:`pair_differences`).
    by : {"mass", "count"}
    tol : float
        Differences of at most ``tol`` in absolute value count as 0 (float noise: two
        sums of the same terms in another order).
    """
    codes, d = _check_pair(codes, differences)
    d = np.where(np.abs(d) <= tol, 0.0, d)
    if by not in ("mass", "count"):
        raise ArgumentError(f"by must be 'mass' or 'count', not {by!r}")
    w = np.abs(d) if by == "mass" else (d != 0).astype(np.float64)
    w = np.where(np.isnan(w), 0.0, w)
    total = w.sum(axis=1)
    part = np.where(codes == INCOMPARABLE, w, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, part / np.where(total > 0, total, 1.0), np.nan)


def rests_on_incomparable(
    codes, differences, threshold: float = 0.5, significant=None, by: Share = "mass", tol: float = TOL
) -> np.ndarray:
    """Flag the pairs whose score difference rests mostly on incomparable topics.

    Definition: a pair is flagged when ``incomparable_share(codes, differences, by) >
    threshold`` (and, if ``significant`` is given, the pair is significant), i.e. by
    default when more than half of ``sum_t |d_t|`` comes from topics where the two runs are
    incomparable in the weak order.

    Why this definition: on a topic where one run is above the other, every
    utility-oriented measure agrees on which is better (it can only tie them), and on an
    equal topic every measure gives d_t = 0; only on incomparable topics is the sign of
    d_t the measure's own choice. The difference of means that the t test and ANOVA
    judge is ``sum_t d_t / T``, and the signed-rank test weights each topic by the size of
    its difference, so the absolute differences say how much of the evidence each topic
    carries, whatever its sign; their share from incomparable topics is a number in
    [0, 1], test-independent, zero when the runs are comparable on every topic, and one
    when every non-zero difference is on an incomparable topic. When it exceeds 1/2, most
    of what the test saw is the measure's weighting, not a difference every measure would
    find. For the sign test, which sees only the signs, ``by="count"`` (the share of the
    non-zero differences that are on incomparable topics) is the matching reading.

    Parameters
    ----------
    codes, differences : ndarray
        (pairs, T) codes of :func:`topic_comparisons` and per-topic differences in the
        same pair order (:func:`pair_differences`); (T,) each for one pair.
    threshold : float
        Flag above this share (default 0.5: "mostly").
    significant : array_like of bool, optional
        (pairs,) decisions of a test (``TestResult.significant``); only these are flagged.
    by : {"mass", "count"}
    tol : float
        See :func:`incomparable_share`.

    Returns
    -------
    numpy.ndarray of bool, (pairs,)
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)) or not 0 <= threshold < 1:
        raise ArgumentError(f"threshold must be a number in [0, 1), not {threshold!r}")
    share = incomparable_share(codes, differences, by, tol)
    out = np.nan_to_num(share, nan=0.0) > threshold
    if significant is not None:
        sig = np.asarray(getattr(significant, "significant", significant), dtype=bool).ravel()
        if sig.shape != out.shape:
            raise ArgumentError(f"significant has {sig.size} pairs, codes {out.size}")
        out &= sig
    return out


def flag_significant(
    codes,
    scores,
    significant,
    names: Sequence[str] | None = None,
    threshold: float = 0.5,
    by: Share = "mass",
    tol: float = TOL,
):
    """The significant differences of one measure and test, each with how much of it rests
    on incomparable topics.

    Parameters
    ----------
    codes : ndarray
        :func:`topic_comparisons` of the runs the measure scored (same depth, same rel).
    scores : DataFrame or ndarray
        Topics x systems scores of the measure (``ScoreTable.matrix(measure)``; the
        columns name the systems when ``names`` is not given).
    significant : TestResult or array_like of bool
        The test's pair decisions (an :mod:`irscale.stats` result or its ``significant``).
    names : sequence of str, optional
        System names (default: the score DataFrame's columns, or the test's systems).
    threshold, by, tol
        See :func:`rests_on_incomparable`.

    Returns
    -------
    pandas.DataFrame
        One row per significant pair: ``system_1``, ``system_2``, ``mean_difference``
        (mean of system_1 - system_2), ``better``, ``worse``, ``equal``, ``incomparable``
        (topics, as :func:`pair_summary`), ``mass_share`` and ``count_share`` (the two
        :func:`incomparable_share` readings), ``contradictions`` (topics where the
        difference has the opposite sign of a strict weak-order comparison, or is non-zero
        on an equal topic: impossible for a utility-oriented measure on the same runs, so
        a sign that the codes were computed at another depth or ``rel``, or that the
        measure is not monotone, e.g. bpref, which tells unjudged from judged
        non-relevant documents) and ``rests_on_incomparable``.
    """
    import pandas as pd

    codes = _pairs_codes(codes)
    d = pair_differences(scores)
    codes, d = _check_pair(codes, d)
    if by not in ("mass", "count"):
        raise ArgumentError(f"by must be 'mass' or 'count', not {by!r}")
    if names is None:
        if hasattr(scores, "columns"):
            names = list(map(str, scores.columns))
        elif getattr(significant, "systems", ()):
            names = significant.systems
        else:
            names = np.asarray(scores).shape[1]
    systems = _systems_for(codes.shape[0], names)
    sig = np.asarray(getattr(significant, "significant", significant), dtype=bool).ravel()
    if sig.shape != (codes.shape[0],):
        raise ArgumentError(f"significant has {sig.size} pairs, codes {codes.shape[0]}")
    mass = incomparable_share(codes, d, "mass", tol)
    count = incomparable_share(codes, d, "count", tol)
    d = np.where(np.abs(d) <= tol, 0.0, d)
    contra = (((codes == ABOVE) & (d < 0)) | ((codes == BELOW) & (d > 0)) | ((codes == EQUAL) & (d != 0))).sum(axis=1)
    flagged = rests_on_incomparable(codes, d, threshold, sig, by, tol)
    i, j = np.triu_indices(len(systems), k=1)
    k = np.flatnonzero(sig)
    return pd.DataFrame(
        {
            "system_1": [systems[a] for a in i[k]],
            "system_2": [systems[b] for b in j[k]],
            "mean_difference": d[k].mean(axis=1) if d.shape[1] else np.full(len(k), np.nan),
            "better": (codes[k] == ABOVE).sum(axis=1),
            "worse": (codes[k] == BELOW).sum(axis=1),
            "equal": (codes[k] == EQUAL).sum(axis=1),
            "incomparable": (codes[k] == INCOMPARABLE).sum(axis=1),
            "mass_share": mass[k],
            "count_share": count[k],
            "contradictions": contra[k],
            "rests_on_incomparable": flagged[k],
        }
    )
