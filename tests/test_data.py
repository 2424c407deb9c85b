"""Judging a run against the qrels (data.judge_run): the compiled pass (numba, a hash
table per topic) and the numpy one (pandas hash index, bytes verified) against a plain
dictionary, on docnos that are prefixes of one another, of every width on either side,
with topics only one side has and a depth cut."""

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale import data as D
from irscale.io.trec import parse_qrels, parse_run
from irscale.kernels import disabled

DOCNO = st.text(alphabet="ab1-", min_size=1, max_size=9)  # short alphabet: prefixes and near misses
TOPIC = st.sampled_from(["1", "2", "10", "300"])


def _judge(run, qrels, depth, compiled: bool, spread: int = 1):
    """``spread=1``: the compiled pass's tables as full as they go (long probe chains, so
    the byte verification and the wide-judgement exclusion decide)."""
    kernel = D._judge_kernels()  # compiled once (then loaded from numba's cache), kept
    if compiled and kernel is None:
        pytest.skip("numba is not installed: only the numpy path runs")
    kept = D.JUDGE_SPREAD
    try:
        D.JUDGE_SPREAD = spread
        with contextlib.nullcontext() if compiled else disabled("data.judge"):
            return D.judge_run(run, qrels, depth)
    finally:
        D.JUDGE_SPREAD = kept


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    judged=st.dictionaries(st.tuples(TOPIC, DOCNO), st.integers(-1, 3), min_size=1, max_size=40),
    retrieved=st.lists(st.tuples(TOPIC, DOCNO), min_size=1, max_size=60, unique=True),
    pad=st.integers(0, 6),
    long=st.sampled_from(["run", "qrels", "both", "neither"]),
    depth=st.one_of(st.none(), st.integers(1, 5)),
    spread=st.sampled_from([1, 8]),
)
def test_compiled_and_numpy_judging_equal_a_dictionary(judged, retrieved, pad, long, depth, spread):
    # a long docno on one side only changes the widths of the fixed-width arrays; one
    # that starts with a short one tests the exclusion of judgements wider than the run's
    judged, retrieved = dict(judged), list(retrieved)
    if long in ("run", "both"):
        retrieved.append(("1", "z" * (10 + pad)))
    if long in ("qrels", "both"):
        judged[(retrieved[0][0], retrieved[0][1] + "z" * (10 + pad))] = 1
    qrels = parse_qrels("".join(f"{t} 0 {d} {g}\n" for (t, d), g in judged.items()).encode())
    run = parse_run("".join(f"{t} Q0 {d} {i} {-i} r\n" for i, (t, d) in enumerate(retrieved)).encode())
    want = {(t.encode(), d.encode()): g for (t, d), g in judged.items()}
    got = _judge(run, qrels, depth, compiled=True, spread=spread)
    other = _judge(run, qrels, depth, compiled=False)
    assert np.array_equal(got[0], other[0]) and got[1:] == other[1:]
    grades, missing, extra = got
    topics = list(qrels.topics)
    assert sorted(missing) == sorted(t.decode() for t in topics if t not in set(run.topics))
    assert sorted(extra) == sorted(t.decode() for t in run.topics if t not in set(topics))
    for k, t in enumerate(run.topics):
        if t not in set(topics):
            continue
        row = grades[topics.index(t)]
        docs = run.docno[run.offsets[k] : run.offsets[k + 1]][:depth]
        expect = [want.get((t, d), D.UNJUDGED) for d in docs]
        assert row[: len(docs)].tolist() == expect
        assert (row[len(docs) :] == D.PAD).all()


def test_judging_a_wide_docno_against_narrow_qrels_and_back():
    """A judged docno longer than any retrieved one matches nothing, and a retrieved docno
    longer than any judged one matches nothing, whichever side is wider."""
    qrels = parse_qrels(b"1 0 abc 2\n1 0 abcdefghij 1\n2 0 x 3\n")
    for text, want in (
        (b"1 Q0 abc 1 3 r\n1 Q0 abcdefghij 2 2 r\n1 Q0 ab 3 1 r\n", [2, 1, D.UNJUDGED]),
        (b"1 Q0 abcdefghijk 1 3 r\n1 Q0 abc 2 2 r\n2 Q0 x 1 1 r\n", [D.UNJUDGED, 2]),
        (b"1 Q0 abc 1 3 r\n2 Q0 xy 1 1 r\n", [2]),
    ):
        run = parse_run(text)
        for compiled, spread in ((True, 1), (True, 8), (False, 8)):
            grades, _, _ = _judge(run, qrels, None, compiled, spread)
            assert grades[0, : len(want)].tolist() == want, (text, compiled, spread)
    # the run's docno is a judged docno cut to the run's width: not judged
    run = parse_run(b"1 Q0 abc 1 3 r\n")
    for compiled, spread in ((True, 1), (True, 8), (False, 8)):
        grades, _, _ = _judge(run, parse_qrels(b"1 0 abcdefghij 1\n1 0 x 3\n"), None, compiled, spread)
        assert grades[0, 0] == D.UNJUDGED, (compiled, spread)


@pytest.mark.parametrize("spread", [1, 8])
def test_judging_many_docnos_that_differ_in_their_last_byte(spread):
    """200 judged and 200 unjudged docnos of one topic that share all but their last
    characters: with full tables every probe chain passes docnos that differ only at the
    end, so a match must be decided on every byte."""
    judged = [f"doc-{i:04d}" for i in range(0, 400, 2)]
    qrels = parse_qrels("".join(f"7 0 {d} {1 + i % 3}\n" for i, d in enumerate(judged)).encode())
    retrieved = [f"doc-{i:04d}" for i in range(400)]
    run = parse_run("".join(f"7 Q0 {d} {i} {-i} r\n" for i, d in enumerate(retrieved)).encode())
    want = [1 + (i // 2) % 3 if i % 2 == 0 else int(D.UNJUDGED) for i in range(400)]
    for compiled in (True, False):
        grades, _, _ = _judge(run, qrels, None, compiled, spread)
        assert grades[0].tolist() == want, compiled
