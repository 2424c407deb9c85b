"""Reader against a naive line-by-line oracle: trec_eval order (score desc, docno desc
byte-wise), whitespace variants, float32 mode."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale.io import parse_run

docno = st.text(alphabet="ABab019-_.é", min_size=1, max_size=6)
line = st.tuples(st.sampled_from(["1", "2", "10"]), docno, st.sampled_from([0.5, 1.0, 1.0000000001, 2.0, -3.0, 1e-40]))
sep = st.sampled_from([" ", "\t", "  ", " \t "])


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(line, min_size=1, max_size=40, unique_by=lambda x: (x[0], x[1])), s=sep,
       f32=st.booleans())
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


_DEC = st.builds(lambda sign, i, f, e: f"{sign}{i}{f}{e}",
                 st.sampled_from(["", "-", "+"]), st.from_regex(r"[0-9]{0,20}", fullmatch=True),
                 st.one_of(st.just(""), st.from_regex(r"\.[0-9]{0,20}", fullmatch=True)),
                 st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,3}", fullmatch=True)))


@settings(max_examples=300, deadline=None)
@given(st.lists(_DEC.filter(lambda s: any(ch.isdigit() for ch in s.split("e")[0].split("E")[0])), min_size=1,
                max_size=60))
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
    try:
        for _ in range(1500):
            data = b"".join(rng.choice(parts) for _ in range(rng.randint(0, 30)))
            for nf, ef in ((2, "error"), (3, "ignore")):
                T._KERNELS["k"] = compiled
                a = tokens(data, nf, ef)
                T._KERNELS["k"] = None
                assert tokens(data, nf, ef) == a, data
    finally:
        T._KERNELS["k"] = compiled
