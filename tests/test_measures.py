"""Every measure: batch (numpy) == reference (plain Python) on generated rankings;
brute-force checks; property tests (bounds, swap / replacement monotonicity, docno
renaming, padding of short runs); hand-derived values."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale import testing
from irscale.data import PAD, UNJUDGED, TopicStats
from irscale.measures import parse_measure

# every registered measure: each class's defaults and the instances its ``examples`` name
# (the conformance suite, tests/test_conformance.py, runs irscale.testing over the same)
ALL = [str(m) for cls in testing.registered() for m in testing.instances(cls)]

# Utility measures that satisfy swap and replacement (2015 paper, Theorem 5.2)
UTILITY = [
    "P@5",
    "R@5",
    "F@5",
    "AP",
    "AP@5",
    "RR",
    "DCG@5",
    "DCG(base=2)@6",
    "nDCG@5",
    "nDCG(base=10)@6",
    "RBP(p=0.8)@6",
    "RBP(p=0.3)@6",
    "ERR@6",
    "gP@5",
    "gR@5",
    "SBTO@5",
    "RBTO@5",
    "Success@3",
    "Rprec",
    "NumRelRet",
]


grade = st.sampled_from([0, 0, 1, 1, 2, -1, int(UNJUDGED)])
ranking = st.lists(grade, min_size=0, max_size=12)
counts = st.lists(st.integers(0, 6), min_size=3, max_size=3)


def run_batch(m, grades, lc):
    topic = TopicStats.single(lc)
    arr = np.full((1, 1, max(len(grades), 1)), PAD, dtype=np.int16)
    arr[0, 0, : len(grades)] = grades
    return float(m.batch(arr, topic)[0, 0]), topic


def test_batch_many_runs_equals_loop():
    """The (S, T, D) path equals scoring each (run, topic) alone."""
    rng = np.random.default_rng(0)
    S, T, D = 7, 5, 20
    g = rng.choice([0, 0, 1, 2, int(UNJUDGED)], size=(S, T, D)).astype(np.int16)
    lengths = rng.integers(0, D + 1, size=(S, T))
    for s in range(S):
        for t in range(T):
            g[s, t, lengths[s, t] :] = PAD
    lc = rng.integers(5, 30, size=(T, 3))
    topics = TopicStats(tuple(map(str, range(T))), lc, 2)
    for name in ALL:
        m = parse_measure(name)
        got = m.batch(g, topics)
        for s in range(S):
            for t in range(T):
                ref = m.reference(g[s, t, : lengths[s, t]].tolist(), TopicStats.single(lc[t]))
                assert got[s, t] == pytest.approx(ref, rel=1e-12, abs=1e-12), (name, s, t)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
@settings(max_examples=80, deadline=None)
@given(grades=ranking, lc=counts)
def test_bounds(name, grades, lc):
    m = parse_measure(name)
    lc = [max(c, 1) for c in lc]
    lc = [max(lc[g], grades.count(g)) if g < 3 else 0 for g, _ in enumerate(lc)]
    v, _ = run_batch(m, grades, lc)
    assert v >= 0
    if m.value_bound is not None:  # (the measure declares its range: DCG, SBTO, RBTO and the counts have none)
        assert v <= m.value_bound + 1e-12


def _swap_or_replace_pairs(n, levels=(0, 1, 2)):
    """Pairs (worse, better) of judged runs of length n that differ by one swap moving a
    better document up, or one replacement of a document by a better one."""
    for r in itertools.product(levels, repeat=n):
        r = list(r)
        for i in range(n):
            for b in levels:
                if b > r[i]:
                    yield r, r[:i] + [b] + r[i + 1 :]
            for j in range(i + 1, n):
                if r[j] > r[i]:
                    s = r.copy()
                    s[i], s[j] = s[j], s[i]
                    yield r, s


@pytest.mark.parametrize("name", UTILITY)
def test_swap_and_replacement_monotone(name):
    """Brute force over all graded runs of length 5 (3 levels): never decreases."""
    m = parse_measure(name)
    topic = TopicStats.single([5, 5, 5])
    pairs = list(_swap_or_replace_pairs(5))
    worse = np.array([[p[0]] for p in pairs], dtype=np.int16)
    better = np.array([[p[1]] for p in pairs], dtype=np.int16)
    tiny = 1e-12
    assert (m.batch(better, topic) >= m.batch(worse, topic) - tiny).all()


def test_strictly_monotone_where_theory_says():
    """AP, RBP, DCG, ERR and RBTO strictly prefer a relevant document moved up (binary)."""
    topic = TopicStats.single([5, 5])
    for name in ["AP", "RBP(p=0.8)@5", "DCG@5", "ERR@5", "RBTO@5", "RR"]:
        m = parse_measure(name)
        assert m.reference([1, 0, 0, 0, 0], topic) > m.reference([0, 1, 0, 0, 0], topic), name


def test_renaming_docnos_without_ties_changes_nothing():
    import irscale
    from irscale.io import Qrels, Run

    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(60)]
    qrels = [(t, d, int(rng.integers(0, 3))) for t in ("1", "2") for d in docs[:40]]
    run = [(t, d, float(s)) for t in ("1", "2") for d, s in zip(docs, rng.permutation(60))]
    rename = {d: f"x{(i * 37) % 997:04d}" for i, d in enumerate(docs)}
    a = irscale.evaluate(Qrels.from_records(qrels), [Run.from_records(run)], ALL)
    b = irscale.evaluate(
        Qrels.from_records([(t, rename[d], g) for t, d, g in qrels]),
        [Run.from_records([(t, rename[d], s) for t, d, s in run])],
        ALL,
    )
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize(
    "name",
    [
        "P@10",
        "R@10",
        "AP@10",
        "nDCG@10",
        "RBP(p=0.8)@10",
        "ERR@10",
        "RR@10",
        "SBTO@10",
        "RBTO@10",
        "gP@10",
        "DCG(base=2)@10",
        "F@10",
    ],
)
def test_short_run_equals_run_padded_with_nonrelevant(name):
    m = parse_measure(name)
    topic = TopicStats.single([20, 5, 2])
    short = [2, 0, 1]
    assert m.reference(short, topic) == pytest.approx(m.reference(short + [0] * 7, topic))
    v1, _ = run_batch(m, short, [20, 5, 2])
    v2, _ = run_batch(m, short + [0] * 7, [20, 5, 2])
    assert v1 == pytest.approx(v2)


def test_hand_derived_values():
    topic = TopicStats.single([3, 2])  # 3 non-relevant, 2 relevant judged
    run = [1, 0, 1, int(UNJUDGED)]
    assert parse_measure("AP").reference(run, topic) == pytest.approx((1 + 2 / 3) / 2)
    assert parse_measure("P@4")(run, [3, 2]) == 0.5
    assert parse_measure("RR")(run, [3, 2]) == 1.0
    assert parse_measure("RBP(p=0.5)@4")(run, [3, 2]) == pytest.approx(0.5 * (1 + 0.25))
    # paper's Example 12: DCG base 2 of (1,1,1,1) is 1 + 1 + 1/log2 3 + 1/2 = 3.131
    assert parse_measure("DCG(base=2)@4")([1, 1, 1, 1], [0, 4]) == pytest.approx(3.1309, abs=1e-4)
    assert parse_measure("DCG(base=2)@4")([1, 1, 0, 1], [0, 4]) == pytest.approx(2.5)
    # ERR binary: stop probability 1/2 -> 1/2 + (1/2)(1/2)/3 for (1, 0, 1)
    assert parse_measure("ERR")([1, 0, 1], [1, 2]) == pytest.approx(0.5 + 0.25 / 3)
    # SBTO with c = 2, N = 2: the order (0,0) < (1,0) < (1,1) < (2,0) < (2,1) < (2,2) -> 0..5
    sbto = parse_measure("SBTO@2")
    vals = [sbto.reference(r, TopicStats.single([1, 1, 1])) for r in ([0, 0], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2])]
    assert vals == [0, 1, 2, 3, 4, 5]
    # RBTO: the run read as a base-(c+1) number
    assert parse_measure("RBTO(rel=1)@4")([1, 0, 1, 1], [1, 1]) == 0b1011
    # bpref: the relevant document below one of the 3 judged non-relevant loses 1/min(3, 2)
    assert parse_measure("bpref")([0, 1, 1], [3, 2]) == pytest.approx((1 - 1 / 2) * 2 / 2)


def test_sbto_binary_is_count_and_rbto_is_strong_order():
    topic = TopicStats.single([5, 5])
    runs = list(itertools.product([0, 1], repeat=5))
    sb = [parse_measure("SBTO@5").reference(list(r), topic) for r in runs]
    assert sb == [sum(r) for r in runs]
    rb = [parse_measure("RBTO@5").reference(list(r), topic) for r in runs]
    assert rb == list(range(32))  # itertools.product is lexicographic = strong top-heaviness order
