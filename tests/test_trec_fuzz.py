r"""Fuzz both readers against a plain-Python reference reader.

Inputs are random bytes, and valid files mutated the ways real files go wrong: truncated
at any byte; a byte-order mark, NUL, control characters, Unicode spaces (U+00A0, U+2003,
U+3000), zero-width characters or bytes that are not UTF-8 inserted anywhere; fields
swapped, dropped or added; huge numbers and Python-only spellings (``1_000``); ``#``
comment lines, CRLF line ends, blank lines.

The outcome must be exactly what the reference reader below says: the same records in
the same (trec_eval) order, or an :class:`InputFormatError` whose ``path`` is the file,
whose ``line`` is ``None`` or a line of the input (and ``text`` that line), and whose
message shows no raw invisible character. Never another exception, never a silent
difference, no warning but the byte-order mark's.

The reference is written from the format's rules (see ``irscale.io.trec``), not from the
reader's code: lines split on ``\n``, fields on ASCII whitespace (``bytes.split()``),
characters classified with :mod:`unicodedata`, numbers with Python's ``float``/``int``
behind strict regular expressions, order by sorting tuples.

Examples are derandomized (reproducible in CI) and few enough for the file to run in
seconds; ``IRSCALE_FUZZ_EXAMPLES=20000 pytest tests/test_trec_fuzz.py`` searches harder,
with fresh random examples on every run (pass ``--hypothesis-seed`` to repeat one).
"""

import math
import os
import re
import unicodedata
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irscale.errors import ArgumentError, InputFormatError
from irscale.io import parse_qrels, parse_run, parse_runs
from irscale.io.trec import GRADE_MAX, GRADE_MIN

PATH = "fuzz.txt"
BOM = b"\xef\xbb\xbf"
EXAMPLES = os.environ.get("IRSCALE_FUZZ_EXAMPLES")  # a longer, random (not derandomized) search
FUZZ = settings(
    max_examples=int(EXAMPLES or 150),
    deadline=None,
    derandomize=EXAMPLES is None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- the reference reader ------------------------------------------------------------------

SCORE = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)
GRADE = re.compile(r"[+-]?[0-9]+")
FIELD_SEPARATORS = "\t\n\x0b\x0c\r "  # what bytes.split() splits on
INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cs", "Cn"}


class Bad(Exception):
    """The reference reader finds the input malformed."""


def visible(msg: str) -> bool:
    return all(c == " " or unicodedata.category(c) not in INVISIBLE for c in msg)


def ref_records(data: bytes, nfields: int, extra_ignored: bool = False):
    """[(line number, fields)] of the data lines."""
    if data.startswith(BOM):
        data = data[3:]
    if b"\0" in data:
        raise Bad("NUL")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Bad("not UTF-8") from None
    for line in text.split("\n"):
        first = line.encode().split()[:1]  # fields split on ASCII whitespace, as the reader does
        comment = bool(first) and first[0].startswith(b"#")
        for ch in line:
            if ch in FIELD_SEPARATORS:
                continue
            hidden = unicodedata.category(ch) == "Cc" or ch.isspace() or ch in "\u200b\u2060\ufeff"
            # ASCII controls are refused everywhere; other hidden characters only in data lines
            # (a comment may hold a non-breaking space)
            if hidden and (ord(ch) < 128 or not comment):
                raise Bad(f"hidden character {ch!r}")
    records = []
    for number, line in enumerate(data.split(b"\n"), 1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) < nfields or (len(fields) > nfields and not extra_ignored):
            raise Bad(f"line {number}: {len(fields)} fields")
        records.append((number, fields[:nfields]))
    if not records:
        raise Bad("no data")
    return records


def ref_qrels(data: bytes):
    judged = {}
    for _, (q, _, d, g) in ref_records(data, 4):
        if not GRADE.fullmatch(g.decode()):
            raise Bad(f"grade {g!r}")
        if not GRADE_MIN <= int(g) <= GRADE_MAX:
            raise Bad(f"grade {g!r} out of range")
        if (q, d) in judged:
            raise Bad("duplicate")
        judged[q, d] = int(g)
    return sorted((q, d, g) for (q, d), g in judged.items())


def ref_runs(
    data: bytes, *, split_tags=False, name=None, score_precision="float64", extra_fields="error", duplicates="error"
):
    rows = []
    for _, (q, _, d, _, s, tag) in ref_records(data, 6, extra_fields == "ignore"):
        if not SCORE.fullmatch(s.decode()):
            raise Bad(f"score {s!r}")
        v = float(s)
        if math.isnan(v):
            raise Bad("NaN")
        if score_precision == "float32":
            with np.errstate(over="ignore"):
                v = float(np.float32(v))
        rows.append((tag, q, d, v))
    tags = list(dict.fromkeys(r[0] for r in rows))
    if len(tags) > 1 and not split_tags:
        raise Bad("several tags")
    runs = []
    for tag in tags:
        seen, kept = set(), []
        for t, q, d, v in rows:
            if t != tag:
                continue
            if (q, d) in seen:
                if duplicates == "error":
                    raise Bad("duplicate")
                continue
            seen.add((q, d))
            kept.append((q, d, v))
        kept.sort(key=lambda r: r[1], reverse=True)  # docno descending (byte-wise) breaks ties
        kept.sort(key=lambda r: (r[0], -r[2]))  # stable: topic ascending, score descending
        runs.append((tag.decode() if name is None else name, kept))
    return runs


def as_records(run):
    assert run.path == PATH
    assert run.topics.tolist() == sorted(set(run.qid.tolist()))
    assert run.offsets[0] == 0 and run.offsets[-1] == len(run)
    for k, t in enumerate(run.topics):
        assert (run.qid[run.offsets[k] : run.offsets[k + 1]] == t).all()
    return run.name, list(zip(run.qid.tolist(), run.docno.tolist(), run.score.tolist()))


def line_text(data: bytes, line: int) -> str:
    data = data[3:] if data.startswith(BOM) else data
    return data.split(b"\n")[line - 1].decode("utf-8", "replace").rstrip("\r")


def check(data: bytes, read, reference):
    """``read(data)`` agrees with ``reference(data)``: same result or both refuse."""
    try:
        expected = reference(data)
    except Bad as why:
        expected = Bad(str(why))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = read(data)
        except InputFormatError as e:
            assert isinstance(expected, Bad), f"refused valid input: {e}"
            assert e.path == PATH
            assert e.line is None or 1 <= e.line <= data.count(b"\n") + 1, e.line
            assert e.line is None or e.text is None or e.text == line_text(data, e.line)
            assert visible(str(e)), str(e)
            got = None
    if got is not None:
        assert not isinstance(expected, Bad), f"accepted input the reference refuses ({expected})"
        assert got == expected
    messages = [str(w.message) for w in caught]
    bom = [f"{PATH}: ignoring the UTF-8 byte-order mark at the start of the file (guide: Warnings)"]
    assert messages == (bom if data.startswith(BOM) else []), messages


# --- inputs -----------------------------------------------------------------------------------

qids = st.sampled_from([b"1", b"2", b"10", b"301", "q\u00e9".encode()])
docnos = st.text(alphabet="ABab019-_.#é文", min_size=1, max_size=5).map(str.encode)
plain_scores = st.one_of(
    st.floats(allow_nan=False, width=64).map(lambda x: repr(x).encode()),
    st.floats(min_value=-1e3, max_value=1e3).map(lambda x: f"{x:.3f}".encode()),
    st.integers(-(10**25), 10**25).map(lambda x: str(x).encode()),
)
odd_numbers = st.sampled_from(
    [
        b"1_000",
        b"1_0",
        b"1e400",
        b"-1e400",
        b"9" * 400,
        b"inf",
        b"-Infinity",
        b"nan",
        b"NaN",
        b"5.",
        b".5",
        b"+.5e-3",
        b"1e",
        b"--1",
        b"0x10",
        b"1,5",
        b"1.2.3",
        b"e5",
        b"-0",
        b"-0.0",
        b"32000",
        b"-32000",
        b"32001",
        b"99999999999999999999",
        "\u0661".encode(),
        "\uff11".encode(),
    ]
)


def mostly(usual, odd, one_in):
    """``odd`` once in ``one_in`` draws, ``usual`` otherwise (one_of would draw each half the time)."""
    return st.sampled_from(range(one_in)).flatmap(lambda k: odd if k == 0 else usual)


numbers = mostly(plain_scores, odd_numbers, 5)
grades = mostly(st.integers(-3, 4).map(lambda x: str(x).encode()), odd_numbers, 10)
separators = st.sampled_from([b" ", b"\t", b"  ", b" \t ", b"\x0b", b"\x0c", b"\r"])
line_ends = st.sampled_from([b"\n", b"\r\n", b" \n", b"\t\r\n"])
INSERTS = [
    BOM,
    b"\x00",
    b"\x01",
    b"\x1b",
    b"\x1f",
    b"\x7f",
    b"\r",
    b"\x0b",
    b"\x0c",
    "\u00a0".encode(),
    "\u2003".encode(),
    "\u3000".encode(),
    "\u200b".encode(),
    "\u200d".encode(),
    "\u2060".encode(),
    "\u2028".encode(),
    "\x85".encode(),
    "\x9f".encode(),
    "é".encode(),
    "\U0001f600".encode(),
    b"\xff",
    b"\xc3",
    b"\xe2\x80",
    b"\xed\xa0\x80",
    b"_",
    b"#",
    b"\n",
    b"\r\n",
    b" ",
    b"\t",
    b"1",
    b"e",
    b"-",
    b".",
    b"nan",
    b"inf",
    b"9" * 25,
    b"\n# comment\n",
    b"\n\n",
    b"\n \t \n",
]


@st.composite
def lines_of(draw, fields_of):
    """Text of a file: lines of fields, some swapped, dropped or doubled, with comments
    and blank lines among them."""
    out = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["data"] * 8 + ["comment", "blank"]))
        if kind == "comment":
            out.append(b"#" + draw(st.sampled_from([b"", b" comment", b"1 Q0 a 1 2 r"])))
        elif kind == "blank":
            out.append(draw(st.sampled_from([b"", b"  ", b"\t"])))
        else:
            fields = draw(fields_of)
            change = draw(st.sampled_from(["none"] * 40 + ["swap", "drop", "add"]))
            if change == "swap":
                i, j = draw(st.integers(0, len(fields) - 1)), draw(st.integers(0, len(fields) - 1))
                fields[i], fields[j] = fields[j], fields[i]
            elif change == "drop":
                del fields[draw(st.integers(0, len(fields) - 1))]
            elif change == "add":
                fields.append(draw(st.sampled_from([b"x", b"1", b"#"])))
            sep = draw(separators)
            out.append(draw(st.sampled_from([b"", b" ", b"\t"])) + sep.join(fields))
    ends = [draw(line_ends) for _ in out]
    text = b"".join(line + end for line, end in zip(out, ends))
    return text if draw(st.booleans()) else text.rstrip(b"\r\n")  # with or without a final newline


@st.composite
def mutated(draw, valid):
    data = draw(valid)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        what = draw(st.sampled_from(["insert"] * 4 + ["delete", "truncate", "bom"]))
        at = draw(st.integers(0, len(data)))
        if what == "insert":
            data = data[:at] + draw(st.sampled_from(INSERTS)) + data[at:]
        elif what == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 4)) :]
        elif what == "truncate":
            data = data[:at]
        else:
            data = BOM + data
    return data


run_fields = st.builds(
    lambda q, d, r, s, t: [q, b"Q0", d, r, s, t],
    qids,
    docnos,
    st.sampled_from([b"1", b"0", b"17"]),
    numbers,
    st.sampled_from([b"r", b"r", b"r", b"s", b"run_1"]),
)
qrels_fields = st.builds(lambda q, i, d, g: [q, i, d, g], qids, st.sampled_from([b"0", b"Q0", b"iter"]), docnos, grades)
run_options = st.fixed_dictionaries(
    {
        "split_tags": st.booleans(),
        "score_precision": st.sampled_from(["float64", "float32"]),
        "extra_fields": st.sampled_from(["error", "ignore"]),
        "duplicates": st.sampled_from(["error", "first"]),
    }
)
# bytes that make up run and qrels files, for random files that are sometimes valid
alphabet_bytes = st.lists(
    st.sampled_from(
        [
            b"1",
            b"2",
            b"Q0",
            b"a",
            b"b",
            b"0",
            b".",
            b"5",
            b"e",
            b"-",
            b"r",
            b"s",
            b"#",
            b" ",
            b" ",
            b"\t",
            b"\n",
            b"\n",
            b"\r",
        ]
        + INSERTS
    ),
    max_size=60,
).map(b"".join)


def read_runs_as_records(options):
    def read(data):
        return [as_records(r) for r in parse_runs(data, PATH, **options)]

    return read


def check_run(data, options):
    check(data, read_runs_as_records(options), lambda d: ref_runs(d, **options))


def check_qrels(data):
    def read(d):
        q = parse_qrels(d, PATH)
        assert q.path == PATH and q.topics.tolist() == sorted(set(q.qid.tolist()))
        return list(zip(q.qid.tolist(), q.docno.tolist(), q.grade.tolist()))

    check(data, read, ref_qrels)


# --- the properties ------------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(data=mutated(lines_of(run_fields)), options=run_options)
def test_run_reader_on_mutated_files(data, options):
    check_run(data, options)


@FUZZ
@given(data=mutated(lines_of(qrels_fields)))
def test_qrels_reader_on_mutated_files(data):
    check_qrels(data)


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), alphabet_bytes), options=run_options)
def test_readers_on_random_bytes(data, options):
    check_run(data, options)
    check_qrels(data)


@pytest.mark.slow
@FUZZ
@given(data=lines_of(run_fields), name=st.sampled_from([None, "renamed"]))
def test_parse_run_is_parse_runs_without_split(data, name):
    def read(d):
        return [as_records(parse_run(d, PATH, name=name))]

    check(data, read, lambda d: ref_runs(d, name=name))


def test_reference_agrees_on_a_hand_made_file():
    # the reference itself, on a file whose result is derived by hand: topic '1' ordered
    # by score descending, the tie at 2.0 by docno descending ('b' before 'a'); the
    # comment, blank and CRLF lines are skipped; '\ufeff' at the start is dropped
    data = BOM + b"# c\r\n1 Q0 a 1 2.0 r\r\n\r\n1\tQ0 c 2 3 r\n1 Q0 b 3 2 r\n"
    assert ref_runs(data) == [("r", [(b"1", b"c", 3.0), (b"1", b"b", 2.0), (b"1", b"a", 2.0)])]
    check_run(data, {})


# --- reading in pieces ------------------------------------------------------------------------
# Run files are read and tokenised PIECE_BYTES of text at a time (16 MB); with pieces of a
# few bytes, every file above crosses piece boundaries anywhere, and the outcome must not
# change: same runs, or the same error with the file's line number and text.


class pieces_of:
    """Read runs in pieces of ``size`` bytes within the block."""

    def __init__(self, size):
        self.size = size

    def __enter__(self):
        from irscale.io import trec

        self.old, trec.PIECE_BYTES = trec.PIECE_BYTES, self.size

    def __exit__(self, *exc):
        from irscale.io import trec

        trec.PIECE_BYTES = self.old


@pytest.mark.slow
@FUZZ
@given(data=mutated(lines_of(run_fields)), options=run_options, size=st.integers(1, 40))
def test_run_reader_in_small_pieces(data, options, size):
    with pieces_of(size):
        check_run(data, options)


def outcome(read):
    """What ``read()`` gives: the runs, or the error's (line, reason, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            runs = [(r.name, list(zip(r.qid.tolist(), r.docno.tolist(), r.score.tolist()))) for r in read()]
            return runs, [str(w.message).split(": ", 1)[1] for w in caught]
        except InputFormatError as e:
            return (e.line, e.reason, e.text), []


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=mutated(lines_of(run_fields)),
    options=run_options,
    size=st.integers(1, 40),
    members=st.integers(1, 3),
    gz=st.booleans(),
)
def test_files_read_in_pieces_equal_bytes_read_whole(tmp_path, data, options, size, members, gz):
    # read_runs streams the file (gzip decompressed piece by piece, concatenated members
    # included) and finds an offending line's text again in the file. A file is refused
    # at its first piece with an error; the error is then the one the whole-file reader
    # gives for the text up to the end of that piece (errors found across the whole run,
    # duplicates and tags, come after every piece is read).
    import gzip

    from irscale.io import read_runs
    from irscale.io.trec import text_pieces

    path = tmp_path / "run.txt"
    cut = [len(data) * k // members for k in range(members + 1)]
    path.write_bytes(b"".join(gzip.compress(data[a:b]) for a, b in zip(cut, cut[1:])) if gz else data)
    with pieces_of(size):
        got = outcome(lambda: read_runs(path, **options))
    whole = outcome(lambda: parse_runs(data, PATH, **options))
    if isinstance(got[0], tuple) and got[0][0] is not None and got != whole:
        line = got[0][0]
        prefix = b"".join(p for first, p in text_pieces(data, size) if first <= line)
        whole = outcome(lambda: parse_runs(prefix, PATH, **options))
    assert got == whole


def test_truncated_and_corrupt_gzip_streamed(tmp_path):
    import gzip

    from irscale.io import read_run

    text = b"".join(b"1 Q0 d%d 1 %d r\n" % (i, 1000 - i) for i in range(500))
    good = gzip.compress(text)
    for name, raw in [
        ("truncated", good[:-20]),
        ("corrupt", good[:40] + b"\xff" * 8 + good[48:]),
        ("trailing junk", good + b"junk"),
    ]:
        (tmp_path / name).write_bytes(raw)
        with pieces_of(64):
            try:
                read_run(tmp_path / name)
            except InputFormatError as e:
                assert e.line is None and "corrupt gzip data" in e.reason, (name, e)
            else:
                raise AssertionError(f"{name} gzip read without error")
    (tmp_path / "good.gz").write_bytes(good + gzip.compress(b"1 Q0 z 1 0 r\n"))
    with pieces_of(64):
        assert len(read_run(tmp_path / "good.gz")) == 501


@pytest.mark.slow
def test_isal_and_zlib_inflate_alike(tmp_path, monkeypatch):
    """gzip runs are inflated with ISA-L where installed (irscale.io.trec.inflater): the same
    text, pieces and errors as Python's zlib, on whole, multi-member, empty-member, long,
    truncated, corrupt and junk-trailed files."""
    import gzip

    pytest.importorskip("isal")
    from irscale.io.trec import inflater, read_bytes, text_pieces

    assert inflater()[0].__name__.endswith("isal_zlib") and inflater("zlib")[0].__name__ == "zlib"
    rng = np.random.default_rng(5)
    text = b"".join(
        b"%d Q0 d%d 1 %.6f r\n" % (q, i, s)
        for q, i, s in zip(rng.integers(1, 50, 200_000), range(200_000), rng.random(200_000))
    )
    good = gzip.compress(text, compresslevel=6)
    cases = {
        "whole": good,
        "members": gzip.compress(text[:1000]) + gzip.compress(b"") + gzip.compress(text[1000:]),
        "truncated": good[:-20],
        "corrupt": good[:40] + b"\xff" * 8 + good[48:],
        "trailing junk": good + b"junk",
        "header only": good[:10],
    }

    def outcome(path):
        try:
            with pieces_of(1 << 20):
                return [p for _, p in text_pieces(path)], None
        except InputFormatError as e:
            return None, (e.line, "corrupt gzip data" in e.reason)

    for name, raw in cases.items():
        (tmp_path / name).write_bytes(raw)
        seen = {}
        for lib in ("isal", "zlib"):
            monkeypatch.setenv("IRSCALE_INFLATE", lib)
            seen[lib] = outcome(tmp_path / name)
        assert seen["isal"] == seen["zlib"], name
        if name in ("whole", "members"):
            assert b"".join(seen["isal"][0]) == text and read_bytes(tmp_path / name) == text
    monkeypatch.setenv("IRSCALE_INFLATE", "zstd")
    with pytest.raises(ArgumentError, match="IRSCALE_INFLATE must be 'isal' or 'zlib'"):
        read_bytes(tmp_path / "whole")
