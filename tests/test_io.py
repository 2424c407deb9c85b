"""Reader against a naive line-by-line oracle: trec_eval order (score desc, docno desc
byte-wise), whitespace variants, float32 mode."""

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale.io import parse_run
from irscale.kernels import disabled

docno = st.text(alphabet="ABab019-_.é", min_size=1, max_size=6)
line = st.tuples(st.sampled_from(["1", "2", "10"]), docno, st.sampled_from([0.5, 1.0, 1.0000000001, 2.0, -3.0, 1e-40]))
sep = st.sampled_from([" ", "\t", "  ", " \t "])


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(line, min_size=1, max_size=40, unique_by=lambda x: (x[0], x[1])), s=sep, f32=st.booleans())
def test_order_equals_naive_sort(lines, s, f32):
    text = "".join(s.join([q, "Q0", d, "0", repr(sc), "tag"]) + "\n" for q, d, sc in lines)
    run = parse_run(text.encode(), "x", score_precision="float32" if f32 else "float64")
    key = (lambda v: float(np.float32(v))) if f32 else float
    naive = sorted(lines, key=lambda x: (x[0].encode(), -key(x[2]), tuple(-b for b in x[1].encode()) + (1,)))
    # docno descending byte-wise: a prefix sorts after its extensions
    got = [(q.decode(), d.decode()) for q, d in zip(run.qid, run.docno)]
    assert got == [(q, d) for q, d, _ in naive]


def test_trailing_text_without_newline_and_crlf():
    run = parse_run(b"1 Q0 a 1 1.0 t\r\n1 Q0 b 2 2.0 t", "x")
    assert [d.decode() for d in run.docno] == ["b", "a"]


_DEC = st.builds(
    lambda sign, i, f, e: f"{sign}{i}{f}{e}",
    st.sampled_from(["", "-", "+"]),
    st.from_regex(r"[0-9]{0,20}", fullmatch=True),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{0,20}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,3}", fullmatch=True)),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_DEC.filter(lambda s: any(ch.isdigit() for ch in s.split("e")[0].split("E")[0])), min_size=1, max_size=60)
)
@pytest.mark.slow
def test_scores_are_read_exactly_like_float(scores):
    """The compiled decimal reader (Clinger's fast path, the rest by float()) gives the
    very doubles of Python's correctly rounded float(), signed zeros included."""
    from irscale.io.trec import parse_run

    text = "".join(f"1 Q0 d{i} {i} {s} tag\n" for i, s in enumerate(scores)).encode()
    run = parse_run(text, "<t>", duplicates="error")
    got = {d.decode(): v for d, v in zip(run.docno, run.score)}
    for i, s in enumerate(scores):
        want = float(s)
        assert got[f"d{i}"] == want and np.signbit(got[f"d{i}"]) == np.signbit(want), s


def test_compiled_and_numpy_tokenizers_agree_on_odd_text():
    """The compiled token pass (numba) and the numpy one give the same tokens, lines and
    errors on random text made of fields, comments, blank lines, tabs, CRLF and control
    characters."""
    import random

    import irscale.io.trec as T
    from irscale.errors import InputFormatError

    compiled = T._kernels()
    if compiled is None:
        pytest.skip("numba is not installed: only the numpy tokenizer runs")

    def tokens(data, nf, ef):
        try:
            t = T.tokenize(data, "p", nf, "x", ef)
            return t.starts.tolist(), t.ends.tolist(), t.lines.tolist()
        except InputFormatError as e:
            return str(e)

    rng = random.Random(1)
    parts = [b"a", b"b1", b"#", b" ", b"  ", b"\t", b"\n", b"\r\n", b"\x01", b"\x7f", b"\x0b", b"x y z", b"\n\n"]
    for _ in range(1500):
        data = b"".join(rng.choice(parts) for _ in range(rng.randint(0, 30)))
        for nf, ef in ((2, "error"), (3, "ignore")):
            a = tokens(data, nf, ef)
            with disabled("io.trec"):  # the numpy path
                assert tokens(data, nf, ef) == a, data


def test_compiled_row_hash_equals_the_numpy_polynomial():
    """The compiled row hash gives _hash_rows's numpy values (wrap-around included), on
    contiguous and sliced matrices: the qrels index and the lookups may be hashed by either."""
    import irscale.io.trec as T

    compiled = T._kernels()
    if compiled is None:
        pytest.skip("numba is not installed: only the numpy hash runs")
    rng = np.random.default_rng(3)
    for w in (1, 2, 7, 16, 40):
        m = rng.integers(0, 256, (500, w), dtype=np.uint8)
        for mat in (m, m[:, : max(w // 2, 1)], m[::3]):
            a = T._hash_rows(mat)
            with disabled("io.trec"):
                assert np.array_equal(a, T._hash_rows(mat)), (w, mat.shape)


@settings(max_examples=200, deadline=None)
@given(
    keys=st.sets(
        st.tuples(st.integers(0, 5), st.text(alphabet="ab\u00e9-0", min_size=1, max_size=12)), min_size=1, max_size=60
    )
)
def test_qrels_order_equals_a_lexsort_on_bytes(keys):
    """by_topic_and_docno (big-endian 8-byte chunks) orders like np.lexsort on the bytes,
    docnos of one chunk or several, and says None only for records already in order."""
    import irscale.io.trec as T

    codes = np.array([c for c, _ in keys], dtype=np.int32)
    docno = np.array([d.encode() for _, d in keys])
    want = np.lexsort((docno, codes))
    got = T.by_topic_and_docno(codes, docno)
    if got is None:
        assert (want == np.arange(len(keys))).all()
    else:
        assert (got == want).all()
    assert T.by_topic_and_docno(codes[want], docno[want]) is None


def test_grades_read_by_the_compiled_and_the_numpy_path():
    """Signs, leading zeros and the range check give the same grades and errors either way."""
    import irscale.io.trec as T
    from irscale.errors import InputFormatError

    compiled = T._kernels()
    if compiled is None:
        pytest.skip("numba is not installed: only the numpy path runs")
    texts = [
        b"1 0 a +3\n1 0 b -0\n1 0 c 007\n2 0 a -1\n",
        b"1 0 a 1\n1 0 b 99999999999999999999\n",
        b"1 0 a 1\n1 0 b 1-\n",
        b"1 0 a 1\n1 0 b +\n",
        b"1 0 a 40000\n",
    ]
    for text in texts:
        out = []
        for numpy_path in (False, True):
            with disabled("io.trec") if numpy_path else contextlib.nullcontext():
                try:
                    q = T.parse_qrels(text)
                    out.append((q.docno.tolist(), q.grade.tolist()))
                except InputFormatError as e:
                    out.append(str(e))
        assert out[0] == out[1], text
    assert T.parse_qrels(texts[0]).grade.tolist() == [3, 0, 7, -1]


@pytest.mark.slow
def test_compiled_and_numpy_readers_give_the_same_runs():
    """Topic blocks and tags (tracked by the compiled token pass as it goes) and scores
    (read in place) equal the numpy reader's, on random run files with comments, blank
    lines, interleaved topics, several tags and odd scores, read whole and in pieces."""
    import random

    import irscale.io.trec as T
    from irscale.errors import InputFormatError

    compiled = T._kernels()
    if compiled is None:
        pytest.skip("numba is not installed: only the numpy reader runs")
    rng = random.Random(7)
    topics, tags = ["1", "2", "10", "1x"], ["a", "b", "ab"]
    scores = ["1", "-2.5", "3e2", ".5", "5.", "inf", "-INF", "12345678901234567890.5", "1e-400", "nan", "1.2.3"]

    def read(data, size):
        try:
            kept = T.PIECE_BYTES
            T.PIECE_BYTES = size
            runs = T.parse_runs(data, "f", split_tags=True, duplicates="first")
            return [(r.name, r.topics.tolist(), r.offsets.tolist(), r.docno.tolist(), r.score.tolist()) for r in runs]
        except InputFormatError as e:
            return str(e)
        finally:
            T.PIECE_BYTES = kept

    for _ in range(300):
        lines = []
        for i in range(rng.randint(1, 25)):
            r = rng.random()
            if r < 0.08:
                lines.append("# comment " + rng.choice(topics))
            elif r < 0.12:
                lines.append("")
            else:
                s = rng.choice(scores) if rng.random() < 0.3 else str(rng.randint(0, 9))
                lines.append(f"{rng.choice(topics)} Q0 d{rng.randint(0, 6)} {i} {s} {rng.choice(tags)}")
        data = ("\n".join(lines) + "\n").encode()
        for size in (7, 40, 1 << 20):
            a = read(data, size)
            with disabled("io.trec"):
                b = read(data, size)
            assert repr(a) == repr(b), (data, size)  # repr: nan equals nan
