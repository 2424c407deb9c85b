"""The measure-free view (irscale.measurefree): weak-order comparisons of runs, per topic
and system pair, the per-pair summary with its sign test, and the flag for significant
differences that rest on incomparable topics.

The reference for the order is the transitive closure of irscale.scales.orders.weak_moves
(a breadth-first search written here) and a plain-Python reading of the 2015 paper's
definition; neither shares code with the module."""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from irscale import measurefree as mf
from irscale.data import PAD, UNJUDGED, JudgedRuns, TopicStats
from irscale.errors import ArgumentError
from irscale.scales.orders import weak_moves
from irscale.scales.spaces import all_runs

# -- references --------------------------------------------------------------------------------


def reachable(n: int, lo, hi) -> np.ndarray:
    """reach[u, v]: v is reachable from u along the edges lo -> hi (u itself included)."""
    succ = [[] for _ in range(n)]
    for u, v in zip(list(lo), list(hi)):
        succ[int(u)].append(int(v))
    reach = np.zeros((n, n), dtype=bool)
    for s in range(n):
        seen = {s}
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v in succ[u]:
                if v not in seen:
                    seen.add(v)
                    queue.append(v)
        reach[s, list(seen)] = True
    return reach


def codes_of(reach: np.ndarray) -> np.ndarray:
    """codes[a, b] from reach[b, a] (b <= a)."""
    ge = reach.T
    n = len(ge)
    codes = np.full((n, n), 2, dtype=np.int8)
    codes[ge & ~ge.T] = 1
    codes[ge.T & ~ge] = -1
    codes[np.eye(n, dtype=bool)] = 0
    assert not (ge & ge.T & ~np.eye(n, dtype=bool)).any()  # antisymmetric
    return codes


def replacement_and_swap(N: int, c: int):
    """The 2015 paper's generators (Theorem 5.2): one grade replaced by a higher one, or
    grades a < b at any ranks i < j swapped; pairs (lower, upper) of run indices."""
    runs = [list(r) for r in all_runs(N, c).tolist()]
    index = {tuple(r): k for k, r in enumerate(runs)}
    lo, hi = [], []
    for k, r in enumerate(runs):
        for i in range(N):
            for g in range(r[i] + 1, c + 1):
                lo.append(k)
                hi.append(index[tuple(r[:i] + [g] + r[i + 1 :])])
            for j in range(i + 1, N):
                if r[i] < r[j]:
                    s = list(r)
                    s[i], s[j] = r[j], r[i]
                    lo.append(k)
                    hi.append(index[tuple(s)])
    return lo, hi


def plain_code(a: list[int], b: list[int]) -> int:
    """The 2015 paper's definition read literally: for every rel in REL and every k."""
    c = max(a + b + [1])
    ge = le = True
    for rel in range(1, c + 1):
        for k in range(1, len(a) + 1):
            ca = sum(1 for x in a[:k] if x >= rel)
            cb = sum(1 for x in b[:k] if x >= rel)
            ge &= ca >= cb
            le &= ca <= cb
    return 0 if ge and le else 1 if ge else -1 if le else 2


def measures(run: list[int], R: int) -> dict[str, float]:
    """Weakly monotone measures of one run (grades 0..c) with recall base R."""
    hits, ap, rr = 0, 0.0, 0.0
    for k, g in enumerate(run, 1):
        if g >= 1:
            hits += 1
            ap += hits / k
            rr = rr or 1 / k
    return {
        "P": sum(g >= 1 for g in run) / len(run),
        "AP": ap / R,
        "RR": rr,
        "DCG": sum((2**g - 1) / math.log2(k + 1) for k, g in enumerate(run, 1)),
        "RBP": sum(g * 0.8 ** (k - 1) for k, g in enumerate(run, 1)),
        "P_2": sum(g >= 2 for g in run) / len(run),
        "cumgain": sum(g for g in run),
    }


# -- weak_compare ----------------------------------------------------------------------------------


@pytest.mark.parametrize("N", [1, 2, 3, 4])
def test_binary_weak_compare_is_the_closure_of_weak_moves(N):
    runs = all_runs(N, 1)
    got = mf.weak_compare(runs[:, None, :], runs[None, :, :])
    np.testing.assert_array_equal(got, codes_of(reachable(len(runs), *weak_moves(N, 1))))


@pytest.mark.parametrize("N,c", [(1, 1), (3, 1), (4, 1), (1, 2), (2, 2), (3, 2), (4, 2), (2, 3), (3, 3), (4, 3)])
def test_weak_compare_is_the_closure_of_replacement_and_swap(N, c):
    runs = all_runs(N, c)
    got = mf.weak_compare(runs[:, None, :], runs[None, :, :])
    np.testing.assert_array_equal(got, codes_of(reachable(len(runs), *replacement_and_swap(N, c))))
    # weak_moves' generators give the whole order: with grades 0..c, c >= 2, they swap
    # across ranks holding grades outside [a, b] too (0 2 1 <= 1 2 0: one swap of ranks 1
    # and 3; adjacent swaps alone missed 2 of the 301 relations at N = 3, c = 2)
    lo, hi = weak_moves(N, c)
    assert (got[hi, lo] == mf.ABOVE).all()
    np.testing.assert_array_equal(got, codes_of(reachable(len(runs), lo, hi)))


def test_weak_compare_papers_examples():
    # Ferrante, Ferro & Maistro 2015, Section 4.2
    assert mf.weak_compare([0, 1, 1, 2, 2], [0, 1, 1, 2, 3]) == mf.BELOW
    assert mf.weak_compare([0, 1, 1, 2, 2], [0, 1, 1, 1, 3]) == mf.INCOMPARABLE
    # the paper's text calls (0, 1, 1, 2, 2) and (2, 0, 1, 2, 1) incomparable, but by its own
    # definition the second is above: every prefix count is at least as large, and two swaps
    # lead there (0 1 -> 1 0 at ranks 1-2, then 1 at rank 1 with 2 at rank 5)
    assert mf.weak_compare([0, 1, 1, 2, 2], [2, 0, 1, 2, 1]) == mf.BELOW
    assert mf.weak_compare([1, 0, 1, 2, 2], [0, 1, 1, 2, 2]) == mf.ABOVE
    assert mf.weak_compare([2, 0, 1, 2, 1], [1, 0, 1, 2, 2]) == mf.ABOVE
    assert mf.weak_compare([0, 1, 0, 1, 0], [1, 0, 0, 0, 1]) == mf.INCOMPARABLE
    # equation (1): between the minimum and maximum run with k relevant documents
    assert mf.weak_compare([0, 0, 0, 1, 1], [0, 1, 0, 1, 0]) == mf.BELOW
    assert mf.weak_compare([3, 3, 0, 0, 0], [0, 1, 0, 1, 0]) == mf.ABOVE
    assert mf.weak_compare([0, 0, 0], [0, 0, 0]) == mf.EQUAL
    assert {int(k) for k in (mf.ABOVE, mf.BELOW, mf.EQUAL, mf.INCOMPARABLE)} == set(mf.CODE_NAMES)


def test_weak_compare_shapes_and_errors():
    a = np.array([[1, 0], [0, 1]])
    assert mf.weak_compare(a[:, None], a[None]).shape == (2, 2)
    assert mf.weak_compare(a, a).dtype == np.int8
    assert mf.weak_compare(np.zeros((3, 0), int), np.zeros((3, 0), int)).tolist() == [0, 0, 0]
    with pytest.raises(ArgumentError):
        mf.weak_compare([1, 0], [1, 0, 0])
    with pytest.raises(ArgumentError):
        mf.weak_compare([1, -1], [1, 0])
    with pytest.raises(ArgumentError):
        mf.weak_compare([0.5, 0], [1, 0])


runs_pair = st.integers(1, 9).flatmap(
    lambda n: st.integers(1, 3).flatmap(
        lambda c: st.tuples(
            st.lists(st.integers(0, c), min_size=n, max_size=n), st.lists(st.integers(0, c), min_size=n, max_size=n)
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(runs_pair)
def test_weak_compare_properties(ab):
    a, b = ab
    code = int(mf.weak_compare(a, b))
    assert code == plain_code(a, b)
    back = int(mf.weak_compare(b, a))
    assert back == (code if code in (0, 2) else -code)  # antisymmetry
    assert int(mf.weak_compare(a, a)) == 0 and int(mf.weak_compare(b, b)) == 0  # reflexive
    assert (code == 0) == (a == b)  # equal means the same grades
    if code in (1, -1):  # every weakly monotone measure agrees with a strict comparison
        hi, lo = (a, b) if code == 1 else (b, a)
        R = max(len(a), 1)
        mh, ml = measures(hi, R), measures(lo, R)
        for name in mh:
            assert mh[name] >= ml[name] - 1e-12, (name, hi, lo)


@settings(max_examples=100, deadline=None)
@given(runs_pair, st.lists(st.integers(0, 3), min_size=9, max_size=9))
def test_weak_compare_is_transitive(ab, third):
    a, b = ab
    c = third[: len(a)]
    if mf.weak_compare(a, b) == 1 and mf.weak_compare(b, c) == 1:
        assert mf.weak_compare(a, c) == 1


# -- judged runs -------------------------------------------------------------------------------


def test_weak_grades_maps_sentinels_cuts_and_pads():
    g = np.array([[PAD, UNJUDGED, -1, 2, 1, 0, 3]], dtype=np.int16)
    np.testing.assert_array_equal(mf.weak_grades(g), [[0, 0, 0, 2, 1, 0, 3]])
    np.testing.assert_array_equal(mf.weak_grades(g, rel=2), [[0, 0, 0, 1, 0, 0, 1]])
    np.testing.assert_array_equal(mf.weak_grades(g, max_grade=2), [[0, 0, 0, 2, 1, 0, 2]])
    np.testing.assert_array_equal(mf.weak_grades(g, depth=4), [[0, 0, 0, 2]])
    np.testing.assert_array_equal(mf.weak_grades(g, depth=9), [[0, 0, 0, 2, 1, 0, 3, 0, 0]])
    assert mf.weak_grades(g).dtype == np.int8
    with pytest.raises(ArgumentError):
        mf.weak_grades(g, depth=0)
    with pytest.raises(ArgumentError):
        mf.weak_grades(g, rel=True)


def _judged(grades, c=2, kept=None):
    g = np.asarray(grades, dtype=np.int16)
    topics = TopicStats(tuple(f"t{k}" for k in range(g.shape[1])), np.ones((g.shape[1], c + 1), np.int64), c)
    return JudgedRuns(tuple(f"r{k}" for k in range(g.shape[0])), topics, g, kept=kept)


def test_judged_runs_input():
    jr = _judged([[[3, PAD, PAD]], [[UNJUDGED, 2, PAD]], [[2, 0, 0]]], c=2)
    np.testing.assert_array_equal(mf.weak_grades(jr)[:, 0], [[2, 0, 0], [0, 2, 0], [2, 0, 0]])  # 3 counts as c = 2
    codes = mf.topic_comparisons(jr)
    np.testing.assert_array_equal(codes[:, 0], [mf.ABOVE, mf.EQUAL, mf.BELOW])  # (0,1), (0,2), (1,2)
    # a run padded past its end is the same run as one with non-relevant documents there
    assert mf.topic_comparisons(jr, depth=1)[:, 0].tolist() == [1, 0, -1]
    with pytest.raises(Exception, match="keep"):
        mf.topic_comparisons(_judged(jr.grades, kept=2))
    assert mf.topic_comparisons(_judged(jr.grades, kept=2), depth=2).shape == (3, 1)


def test_unjudged_and_pad_are_non_relevant():
    g = np.array([[[UNJUDGED, 1]], [[PAD, 1]], [[-2, 1]], [[0, 1]]], dtype=np.int16)
    assert (mf.topic_comparisons(g) == mf.EQUAL).all()


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(1, 7),
    st.integers(1, 3),
    st.integers(1, 5000),
    st.integers(0, 2**32 - 1),
)
def test_topic_comparisons_match_pairwise_compare(S, T, D, c, max_elements, seed):
    rng = np.random.default_rng(seed)
    choices = np.array([PAD, UNJUDGED, -1] + list(range(c + 1)), dtype=np.int16)
    g = rng.choice(choices, size=(S, T, D))
    for depth in (None, max(1, D - 2), D + 2):
        codes = mf.topic_comparisons(g, depth, max_elements=max_elements)
        view = mf.weak_grades(g, depth)
        i, j = np.triu_indices(S, k=1)
        np.testing.assert_array_equal(codes, mf.weak_compare(view[i], view[j]))
        sq = mf.topic_comparisons(g, depth, square=True, max_elements=max_elements)
        np.testing.assert_array_equal(sq, mf.weak_compare(view[:, None], view[None, :]))
    binary = mf.topic_comparisons(g, rel=2)
    np.testing.assert_array_equal(binary, mf.topic_comparisons((g >= 2).astype(np.int16)))


def test_pair_order_is_stats_pair_index():
    from irscale.stats import pair_index

    g = np.array([[[1, 0]], [[0, 1]], [[1, 1]], [[0, 0]]], dtype=np.int16)
    codes = mf.topic_comparisons(g)[:, 0]
    i, j = pair_index(4)
    view = mf.weak_grades(g)[:, 0]
    assert codes.tolist() == [int(mf.weak_compare(view[a], view[b])) for a, b in zip(i, j)]
    assert codes.tolist() == [1, -1, 1, -1, 1, 1]


# -- pair_summary --------------------------------------------------------------------------------


def test_pair_summary_counts_and_sign_test():
    rng = np.random.default_rng(7)
    S, T = 5, 23
    codes = rng.choice(np.array([1, -1, 0, 2], dtype=np.int8), size=(S * (S - 1) // 2, T), p=[0.5, 0.2, 0.05, 0.25])
    codes[3] = 2  # nothing comparable
    codes[4] = 0  # all equal
    names = [f"sys{k}" for k in range(S)]
    df = mf.pair_summary(codes, names)
    assert list(df.columns) == [
        "system_1",
        "system_2",
        "topics",
        "better",
        "worse",
        "equal",
        "incomparable",
        "comparable",
        "incomparable_share",
        "sign_n",
        "sign_p",
        "sign_significant",
        "direction",
    ]
    i, j = np.triu_indices(S, k=1)
    assert df.system_1.tolist() == [names[a] for a in i] and df.system_2.tolist() == [names[b] for b in j]
    for row, c in zip(df.itertuples(), codes):
        assert (row.better, row.worse, row.equal, row.incomparable) == tuple(int((c == v).sum()) for v in (1, -1, 0, 2))
        assert row.comparable == T - row.incomparable and row.incomparable_share == row.incomparable / T
        n = row.better + row.worse
        if n:
            assert row.sign_p == pytest.approx(sps.binomtest(row.better, n).pvalue, rel=1e-9, abs=1e-15)
            assert row.sign_significant == (row.sign_p < 0.05)
        else:
            assert math.isnan(row.sign_p) and not row.sign_significant
        assert row.direction == np.sign(row.better - row.worse)
    # square input and integer names
    sq = np.zeros((S, S, T), dtype=np.int8)
    sq[i, j] = codes
    sq[j, i] = np.where(codes == 2, 2, -codes)
    assert (
        mf.pair_summary(sq, S).drop(columns=["system_1", "system_2"]).equals(df.drop(columns=["system_1", "system_2"]))
    )
    with pytest.raises(ArgumentError):
        mf.pair_summary(codes, names[:3])
    with pytest.raises(ArgumentError):
        mf.pair_summary(codes + 5, names)


def test_sign_p_edge_cases():
    for k, n in [(0, 1), (1, 1), (5, 10), (0, 30), (30, 30), (12, 31), (3, 120)]:
        assert mf._sign_p(k, n) == pytest.approx(sps.binomtest(k, n).pvalue, rel=1e-9, abs=1e-300)


# -- resting on incomparable topics -------------------------------------------------------------


def test_flag_rule_on_a_hand_made_example():
    # pair 0: the difference is mostly on incomparable topics (0.3 + 0.3 of 0.8)
    # pair 1: mostly on comparable ones (0.1 of 0.7); pair 2: no difference at all
    codes = np.array([[2, 2, 1, 1, 0], [2, 1, 1, -1, 0], [2, 2, 2, 2, 2]], dtype=np.int8)
    d = np.array([[0.3, 0.3, 0.1, 0.1, 0.0], [0.1, 0.4, 0.2, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    mass = mf.incomparable_share(codes, d)
    np.testing.assert_allclose(mass[:2], [0.6 / 0.8, 0.1 / 0.7])
    assert math.isnan(mass[2])
    count = mf.incomparable_share(codes, d, by="count")
    np.testing.assert_allclose(count[:2], [2 / 4, 1 / 3])
    assert mf.rests_on_incomparable(codes, d).tolist() == [True, False, False]
    assert mf.rests_on_incomparable(codes, d, significant=[False, True, True]).tolist() == [False, False, False]
    assert mf.rests_on_incomparable(codes, d, threshold=0.1).tolist() == [True, True, False]
    assert mf.rests_on_incomparable(codes, d, by="count").tolist() == [False, False, False]  # 1/2 is not > 1/2
    assert mf.rests_on_incomparable(codes[0], d[0]).tolist() == [True]  # one pair
    # float noise is a tie
    assert mf.incomparable_share([[2, 1]], [[1e-12, 0.5]], by="count")[0] == 0.0
    with pytest.raises(ArgumentError):
        mf.rests_on_incomparable(codes, d[:, :4])
    with pytest.raises(ArgumentError):
        mf.rests_on_incomparable(codes, d, threshold=1.5)
    with pytest.raises(ArgumentError):
        mf.incomparable_share(codes, d, by="sum")


def test_flag_significant_frame():
    import pandas as pd

    # three systems, four topics; scores chosen to agree with the codes below
    g = np.array(
        [
            [[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 1]],
            [[0, 1, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1]],
            [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]],
        ],
        dtype=np.int16,
    )
    codes = mf.topic_comparisons(g)
    assert codes.tolist() == [[1, 1, -1, 0], [1, 1, 1, 1], [1, 1, 1, 1]]
    rr = np.array([[measures(list(run), 1)["RR"] for run in system] for system in g]).T  # topics x systems
    scores = pd.DataFrame(rr, columns=["a", "b", "c"])
    f = mf.flag_significant(codes, scores, np.array([True, False, True]))
    assert f.system_1.tolist() == ["a", "b"] and f.system_2.tolist() == ["b", "c"]
    assert f.contradictions.tolist() == [0, 0]
    assert not f.rests_on_incomparable.any()
    np.testing.assert_allclose(f.mean_difference, [rr[:, 0].mean() - rr[:, 1].mean(), rr[:, 1].mean()])
    # a measure that is not monotone in the weak order contradicts it (here: the negated RR)
    bad = mf.flag_significant(codes, -scores, np.array([True, True, True]))
    assert bad.contradictions.tolist() == [3, 4, 4]
    # a pair resting on incomparable topics
    codes2 = np.array([[2, 2, 1, 0]] * 3, dtype=np.int8)
    x = np.array([[0.9, 0.9, 0.6, 0.5], [0.1, 0.2, 0.5, 0.5], [0.1, 0.2, 0.5, 0.5]]).T
    f2 = mf.flag_significant(codes2, x, [True, False, False], names=["a", "b", "c"])
    assert f2.rests_on_incomparable.tolist() == [True]
    assert f2.mass_share.iloc[0] == pytest.approx(1.5 / 1.6) and f2.count_share.iloc[0] == pytest.approx(2 / 3)


def test_pair_differences_orientation():
    X = np.array([[1.0, 0.5, 0.0], [0.2, 0.4, 0.8]])  # topics x systems
    np.testing.assert_allclose(mf.pair_differences(X), [[0.5, -0.2], [1.0, -0.6], [0.5, -0.4]])


# -- on real runs ----------------------------------------------------------------------------


def test_trec8_measures_never_contradict_the_order(trec8):
    from irscale.experiment import load_runs
    from irscale.io import read_qrels
    from irscale.measures.base import parse_measure

    files = sorted((trec8 / "runs").glob("*.gz"))[:4]
    jr = load_runs(files, read_qrels(trec8 / "qrels.trec8.txt"), workers=1)
    for depth, names in ((None, ["AP", "nDCG", "RR", "P_1000"]), (30, ["AP@30", "P@30", "nDCG@30", "RBP(p=0.8)@30"])):
        codes = mf.topic_comparisons(jr, depth=depth)
        for name in names:
            X = parse_measure(name).batch(jr.grades, jr.topics).T
            f = mf.flag_significant(codes, X, np.ones(len(codes), bool), names=jr.systems)
            assert (f.contradictions == 0).all(), name


def test_bpref_contradicts_the_order():
    """bpref tells unjudged from judged non-relevant documents, which the order (and
    every measure of the runs' grades) does not: equal runs, different bpref."""
    from irscale.measures.base import parse_measure

    jr = _judged([[[UNJUDGED, 1, PAD]], [[0, 1, PAD]]], c=1)
    jr = JudgedRuns(jr.systems, TopicStats(("t0",), np.array([[1, 1]]), 1), jr.grades)
    codes = mf.topic_comparisons(jr)
    assert codes.tolist() == [[mf.EQUAL]]
    X = parse_measure("bpref").batch(jr.grades, jr.topics).T
    assert X[0, 0] > X[0, 1]
    assert mf.flag_significant(codes, X, [True]).contradictions.tolist() == [1]
