"""Reader reliability: byte-order marks, invisible characters, several runs in one file,
option keywords, the number syntax trec_eval's C library reads, and grades out of range.

Every test here failed on the readers before these rules (commit f5143d8), except the
unit tests of the new helpers. Expected values are derived by hand next to each case; the
number syntax is checked against C's ``strtod``, which trec_eval's ``atof`` calls.
"""

import ctypes
import ctypes.util
import gzip
import re
import unicodedata
import warnings

import numpy as np
import pytest

import irscale
from irscale.errors import ArgumentError, InputFormatError, IrscaleWarning, PolicyError, check_choice, show
from irscale.io import Qrels, parse_qrels, parse_run, parse_runs, read_qrels, read_run, read_runs
from irscale.io.trec import GRADE_MAX, GRADE_MIN

BOM = b"\xef\xbb\xbf"
HIDDEN = {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cs", "Cn"}

# Topic 1 has relevant a and b; the run ranks a, c, b: AP = (1/1 + 2/3) / 2 = 0.8333.
# Topic 2 has relevant d, ranked first: AP = 1.
QRELS = b"1 0 a 1\n1 0 b 1\n1 0 c 0\n2 0 d 1\n"
RUN = b"1 Q0 a 1 3 r\n1 Q0 c 2 2 r\n1 Q0 b 3 1 r\n2 Q0 d 1 1 r\n"


def visible(msg: str) -> bool:
    return all(c == " " or unicodedata.category(c) not in HIDDEN for c in msg)


def ap(qrels, run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        t = irscale.evaluate(qrels, [run], ["AP"])
    return dict(zip(t.topics, t.values[0, 0].tolist()))


# --- 1. byte-order mark, invisible characters, Unicode whitespace -------------------------


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_bom_at_start_of_run_is_dropped_with_one_warning(tmp_path, compress):
    # before: the first qid read as '\ufeff1', so topic 1 lost document a: AP 0.25
    (tmp_path / "q").write_bytes(QRELS)
    p = tmp_path / "run"
    p.write_bytes(gzip.compress(BOM + RUN) if compress else BOM + RUN)
    with pytest.warns(IrscaleWarning) as rec:
        run = read_run(p)
    assert [str(w.message) for w in rec] == [
        f"{p}: ignoring the UTF-8 byte-order mark at the start of the file (guide: Warnings)"
    ]
    assert run.topic_names == ["1", "2"]
    assert ap(read_qrels(tmp_path / "q"), run) == pytest.approx({"1": 5 / 6, "2": 1.0})


def test_bom_at_start_of_qrels_is_dropped(tmp_path):
    # before: a phantom topic '\ufeff1' judged a relevant, and topic 1 had only b relevant
    p = tmp_path / "q"
    p.write_bytes(BOM + QRELS)
    with pytest.warns(IrscaleWarning, match="byte-order mark"):
        qrels = read_qrels(p)
    assert qrels.topic_names == ["1", "2"]
    assert ap(qrels, parse_run(RUN, "r")) == pytest.approx({"1": 5 / 6, "2": 1.0})


@pytest.mark.parametrize(
    "data, line",
    [
        (RUN + BOM + RUN, 5),  # two files with BOMs concatenated
        (b"1 Q0 a" + BOM + b" 1 3 r\n", 1),  # inside a field
        (RUN[:13] + BOM + RUN[13:], 2),  # at the start of a later line
    ],
)
def test_bom_elsewhere_is_an_error_naming_the_line(data, line):
    with pytest.raises(InputFormatError, match="byte-order mark") as e:
        parse_run(data, "r.txt")
    assert e.value.line == line and e.value.path == "r.txt"
    assert "\\ufeff" in str(e.value) and visible(str(e.value))


def test_bom_starting_a_second_gzip_member_is_an_error(tmp_path):
    p = tmp_path / "run.gz"
    p.write_bytes(gzip.compress(BOM + RUN) + gzip.compress(BOM + RUN))
    with pytest.warns(IrscaleWarning), pytest.raises(InputFormatError, match="byte-order mark") as e:
        read_run(p)
    assert e.value.line == 5


@pytest.mark.parametrize(
    "char, name",
    [
        ("\u00a0", "non-breaking space (U+00A0)"),
        ("\u2003", "em space (U+2003)"),
        ("\u3000", "ideographic space (U+3000)"),
        ("\u202f", "narrow non-breaking space (U+202F)"),
        ("\u2028", "line separator (U+2028)"),
    ],
)
def test_unicode_space_in_a_field_is_an_error(char, name):
    # before: 'a\u00a0x' was read as one docno, silently different from 'a'
    data = b"1 Q0 b 1 2 r\n1 Q0 a" + char.encode() + b"x 2 1 r\n"
    with pytest.raises(InputFormatError) as e:
        parse_run(data, "r.txt")
    assert e.value.line == 2
    msg = str(e.value)
    assert f"{name} inside a field; fields are separated by spaces or tabs" in msg
    assert visible(msg) and show(char) in msg


@pytest.mark.parametrize(
    "char, fragment",
    [
        ("\u200b", "zero-width space (U+200B)"),
        ("\u2060", "word joiner (U+2060)"),
        ("\x85", "next-line control character (U+0085)"),
        ("\x9b", "control character (U+009B)"),
    ],
)
def test_zero_width_and_c1_control_characters_are_errors(char, fragment):
    with pytest.raises(InputFormatError, match=re.escape(fragment)) as e:
        parse_qrels(b"1 0 a 1\n1 0 b" + char.encode() + b" 0\n", "q.txt")
    assert e.value.line == 2 and visible(str(e.value))


def test_delete_character_is_an_error():
    # before: byte 0x7f was part of the docno
    with pytest.raises(InputFormatError, match="control character 0x7f") as e:
        parse_run(b"1 Q0 a\x7f 1 2 r\n", "r.txt")
    assert e.value.line == 1 and "\\x7f" in str(e.value)


def test_other_non_ascii_text_is_kept():
    run = parse_run("1 Q0 café 1 2 r\n1 Q0 文書\u200d 2 1 r\n".encode(), "r")
    assert [d.decode() for d in run.docno] == ["café", "文書\u200d"]


def test_show_escapes_exactly_the_invisible_characters():
    assert (
        show("a b\tc\u00a0d\u200be\ufefff\x00g\x7fh\u2028i\U000e0001")
        == "a b\\tc\\xa0d\\u200be\\ufefff\\x00g\\x7fh\\u2028i\\U000e0001"
    )
    assert show("café, 文書 \\ ' \"") == "café, 文書 \\ ' \""
    every = "".join(map(chr, range(0x3100)))
    assert visible(show(every))


def test_input_format_error_shows_path_reason_and_line_escaped():
    e = InputFormatError("r\u200b.txt", 3, "bad \ufeff", "a\u00a0b\tc")
    assert str(e) == "r\\u200b.txt:3: bad \\ufeff (line: 'a\\xa0b\\tc')"
    assert (e.path, e.reason, e.text) == ("r\u200b.txt", "bad \ufeff", "a\u00a0b\tc")  # raw for programs


# --- 2. several runs in one file ---------------------------------------------------------

TWO_TAGS = b"1 Q0 a 1 2.0 r\n1 Q0 a 1 1.0 s\n2 Q0 b 1 1.0 s\n1 Q0 b 2 1.5 r\n"


@pytest.mark.parametrize("name", [None, "runX"])
def test_several_tags_are_an_error_even_with_a_name(tmp_path, name):
    # before: with name=, both runs were merged into one (and 'a' was a duplicate of itself)
    p = tmp_path / "two"
    p.write_bytes(TWO_TAGS)
    with pytest.raises(InputFormatError) as e:
        read_run(p, name=name)
    assert e.value.line == 2
    assert (
        "run tag 's' differs from the first line's 'r'; a run file must hold one run: to read one run per "
        "tag use irscale.io.read_runs(path, split_tags=True), evaluate(..., split_tags=True) or the CLI's "
        "--split-tags"
    ) in str(e.value)
    assert "--name" not in str(e.value)
    with pytest.raises(InputFormatError, match="split_tags=True"):
        read_runs(p)


def test_split_tags_gives_one_run_per_tag_in_order_of_appearance(tmp_path):
    p = tmp_path / "two"
    p.write_bytes(TWO_TAGS)
    r, s = read_runs(p, split_tags=True)
    assert (r.name, r.path, r.topic_names, r.docno.tolist(), r.score.tolist()) == (
        "r",
        str(p),
        ["1"],
        [b"a", b"b"],
        [2.0, 1.5],
    )
    assert (s.name, s.topic_names, s.docno.tolist(), s.offsets.tolist()) == ("s", ["1", "2"], [b"a", b"b"], [0, 1, 2])
    # same as reading each run from a file of its own
    alone = parse_run(b"".join(x for x in TWO_TAGS.splitlines(keepends=True) if x.endswith(b" s\n")), str(p))
    assert alone.docno.tolist() == s.docno.tolist() and alone.offsets.tolist() == s.offsets.tolist()


def test_split_tags_finds_duplicates_within_each_run_and_names_the_line():
    with pytest.raises(InputFormatError, match=r"duplicate docno 'a' for topic '1' \(first at line 2\)") as e:
        parse_runs(TWO_TAGS + b"1 Q0 a 9 0.5 s\n", "x", split_tags=True)
    assert e.value.line == 5
    r, s = parse_runs(TWO_TAGS + b"1 Q0 a 9 9.5 s\n", "x", split_tags=True, duplicates="first")
    assert s.docno.tolist() == [b"a", b"b"] and s.score.tolist() == [1.0, 1.0]


def test_name_renames_a_single_run_and_conflicts_with_several():
    assert parse_run(RUN, "x", name="bm25").name == "bm25"
    (only,) = parse_runs(RUN, "x", split_tags=True, name="bm25")
    assert only.name == "bm25"
    assert [r.name for r in parse_runs(RUN, "x")] == ["r"]
    with pytest.raises(
        ArgumentError, match=r"x: name='n' renames a single run, but the file holds 2 runs \(tags 'r', 's'\)"
    ):
        parse_runs(TWO_TAGS, "x", split_tags=True, name="n")


def test_read_runs_is_exported():
    assert irscale.io.read_runs is read_runs
    assert "read_runs" in irscale.io.__all__ and "parse_runs" in irscale.io.__all__


# --- 3. option keywords --------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("duplicates", "last", "duplicates must be one of 'error', 'first', not 'last'"),
        ("duplicates", "frist", "duplicates must be one of 'error', 'first', not 'frist'; did you mean 'first'?"),
        (
            "extra_fields",
            "ignored",
            "extra_fields must be one of 'error', 'ignore', not 'ignored'; did you mean 'ignore'?",
        ),
        ("score_precision", "Float32", "did you mean 'float32'?"),
        ("score_precision", None, "score_precision must be one of 'float64', 'float32', not None"),
    ],
)
def test_unknown_option_values_are_refused(tmp_path, option, value, message):
    # before: duplicates='last' (or any typo) behaved as 'first'
    p = tmp_path / "r"
    p.write_bytes(RUN + b"1 Q0 a 4 0.5 r\n")
    for reader in (read_run, read_runs):
        with pytest.raises(PolicyError) as e:
            reader(p, **{option: value})
        assert message in str(e.value)


def test_check_choice():
    assert check_choice("ties", "first", ("error", "first")) == "first"
    with pytest.raises(PolicyError, match=r"^ties must be one of 'a', 'b', not 'zzz'$"):
        check_choice("ties", "zzz", ("a", "b"))


# --- 4. number syntax: what C's strtod reads ---------------------------------------------


def _strtod():
    name = ctypes.util.find_library("c")
    if name is None:
        pytest.skip("no C library to compare with")
    libc = ctypes.CDLL(name)
    libc.strtod.restype = ctypes.c_double
    libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]

    def strtod(s: bytes):
        """(value, number of bytes read) like trec_eval's atof."""
        buf = ctypes.create_string_buffer(s)
        end = ctypes.c_char_p()
        v = libc.strtod(buf, ctypes.byref(end))
        return v, ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)

    return strtod


GOOD_SCORES = [
    b"12.5",
    b"-3",
    b"+0.25",
    b"5.",
    b".5",
    b"1e5",
    b"1.2E-3",
    b"-1e+2",
    b"007",
    b"1e400",
    b"-1e-400",
    b"inf",
    b"-Infinity",
    b"+INF",
    b"0.30000000000000004",
    b"1" * 30,
]
BAD_SCORES = [
    b"1_000",
    b"1_0.5",
    b"1e",
    b"--1",
    b"+-1",
    b"1.2.3",
    b".",
    b"e5",
    b"1,5",
    b"infi",
    b"nanx",
    "\u0661".encode(),
    "\uff11".encode(),
    "\u00b2".encode(),
    b"1d5",
    b"1j",
    b"1e5.0",
    b"inf1",
]


@pytest.mark.parametrize("s", GOOD_SCORES, ids=[x.decode() for x in GOOD_SCORES])
def test_plain_scores_read_as_strtod_reads_them(s):
    value, used = _strtod()(s)
    assert used == len(s)  # the whole field is a C number
    assert parse_run(b"1 Q0 a 1 " + s + b" r\n", "x").score[0] == value


@pytest.mark.parametrize("s", BAD_SCORES, ids=[x.decode() for x in BAD_SCORES])
def test_other_number_spellings_are_errors_naming_the_line(s):
    # before: '1_000' read as 1000 (strtod: 1), '1_0.5' as 10.5; Unicode digits 'must be a number'
    value, used = _strtod()(s)
    assert used < len(s)  # strtod (trec_eval) would read a prefix only
    with pytest.raises(InputFormatError) as e:
        parse_run(b"1 Q0 b 1 2 r\n1 Q0 a 1 " + s + b" r\n", "x")
    assert e.value.line == 2
    assert (
        f"score (5th field) must be a number, found {s.decode()!r}; write a plain decimal number like 12.5 or 1.2e-3"
    ) in str(e.value)


@pytest.mark.parametrize("s", [b"0x10", b"0x1.8p1", b"nan(1)"])
def test_c99_extensions_are_refused_too(s):
    # C99's strtod reads hex floats and nan(...) whole; the format is plain decimal
    assert _strtod()(s)[1] == len(s)
    with pytest.raises(InputFormatError, match="write a plain decimal number") as e:
        parse_run(b"1 Q0 a 1 " + s + b" r\n", "x")
    assert e.value.line == 1


def test_nan_score_is_still_refused_as_nan():
    for s in (b"nan", b"-NaN", b"+nan"):
        with pytest.raises(InputFormatError, match="score is NaN"):
            parse_run(b"1 Q0 a 1 " + s + b" r\n", "x")


@pytest.mark.parametrize(
    "g, value", [(b"2", 2), (b"+1", 1), (b"-1", -1), (b"0003", 3), (b"32000", 32000), (b"-32000", -32000)]
)
def test_plain_grades(g, value):
    assert parse_qrels(b"1 0 a " + g + b"\n", "q").grade.tolist() == [value]


@pytest.mark.parametrize("g", [b"1_0", b"+-1", b"-", b"0x1", "\u0661".encode(), b"1,0", b"1.0.0", b"1e"])
def test_other_grade_spellings_are_errors(g):
    # before: '1_0' was read as grade 10
    with pytest.raises(InputFormatError) as e:
        parse_qrels(b"1 0 a 1\n1 0 b " + g + b"\n", "q.txt")
    assert e.value.line == 2
    said = (
        f"grade (4th field) must be a number, found {g.decode()!r}; write a plain integer like 2 or -1, "
        "or a decimal like 0.5"
    )
    assert said in str(e.value)


@pytest.mark.parametrize("g", [b"inf", b"-Infinity", b"nan", b"NaN"])
def test_infinite_and_nan_grades_are_errors(g):
    with pytest.raises(InputFormatError) as e:
        parse_qrels(b"1 0 a 0.5\n1 0 b " + g + b"\n", "q.txt")
    assert e.value.line == 2
    assert "must be a finite number" in str(e.value) and "NaN and infinity are not grades" in str(e.value)


@pytest.mark.parametrize("g, value", [(b"1.0", 1), (b"1e2", 100), (b"2.", 2), (b"+3.000", 3), (b"-1.0", -1)])
def test_whole_numbers_written_as_decimals_are_integer_grades(g, value):
    q = parse_qrels(b"1 0 a " + g + b"\n1 0 b 1\n", "q.txt")
    assert q.grade.tolist() == [value, 1] and q.values is None


# --- 5. grades out of range ----------------------------------------------------------------


@pytest.mark.parametrize(
    "g",
    [
        b"99999999999999999999",
        b"-99999999999999999999",
        b"9223372036854775808",
        str(GRADE_MAX + 1).encode(),
        str(GRADE_MIN - 1).encode(),
    ],
)
def test_grade_out_of_range_names_the_line(g):
    # before: 20 digits raised a bare OverflowError
    with pytest.raises(InputFormatError) as e:
        parse_qrels(b"1 0 a 1\n1 0 b " + g + b"\n1 0 c 1_0\n", "q.txt")
    assert e.value.line == 2
    assert str(e.value).startswith(f"q.txt:2: grade {int(g)} out of the supported range [{GRADE_MIN}, {GRADE_MAX}]")


def test_first_bad_grade_is_reported_whatever_its_kind():
    with pytest.raises(InputFormatError, match="must be a number") as e:
        parse_qrels(b"1 0 a 1\n1 0 b x\n1 0 c 99999999999999999999\n", "q.txt")
    assert e.value.line == 2
    with pytest.raises(InputFormatError, match="out of the supported range") as e:
        parse_qrels(b"1 0 a 0.5\n1 0 b 40000.5\n1 0 c x\n", "q.txt")
    assert e.value.line == 2


# --- duplicates='first' with more than two copies ------------------------------------------


def test_duplicates_first_keeps_only_the_first_of_many_copies():
    # before: with three copies or more, the hash sort (not stable) could pair them so that
    # a later copy survived
    rng = np.random.default_rng(1)
    docs = [f"d{i}" for i in range(300)]
    for k in rng.integers(0, 300, 20):
        docs[k] = "dup"
    lines = [f"1 Q0 {d} 0 {rng.random()!r} r" for d in docs]
    first = docs.index("dup")
    run = parse_run(("\n".join(lines) + "\n").encode(), "x", duplicates="first")
    assert run.docno.tolist().count(b"dup") == 1
    assert run.score[run.docno == b"dup"][0] == float(lines[first].split()[4])
    assert len(run) == len(set(docs))


def test_first_duplicate_reported_is_the_earliest_line():
    with pytest.raises(InputFormatError) as e:
        parse_run(b"1 Q0 A 1 1 r\n1 Q0 B 1 1 r\n1 Q0 B 1 1 r\n1 Q0 A 1 1 r\n", "x")
    assert e.value.line == 3 and "docno 'B'" in str(e.value) and "(first at line 2)" in str(e.value)


def test_comment_lines_with_extra_fields_ignored():
    # found by the fuzz test; before: ValueError (operands could not be broadcast)
    run = parse_run(b"# c\n1 Q0 a 1 0.0 r x y\n#z\n1 Q0 b 1 1 r\n", "x", extra_fields="ignore")
    assert run.docno.tolist() == [b"b", b"a"] and run.score.tolist() == [1.0, 0.0]


def test_float32_scores_beyond_its_range_are_infinite_without_a_warning():
    # found by the fuzz test; before: numpy's RuntimeWarning 'overflow encountered in cast'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = parse_run(b"1 Q0 a 1 1e39 r\n1 Q0 b 1 3.4e38 r\n", "x", score_precision="float32")
    assert run.score[0] == np.inf and run.score[1] == float(np.float32(3.4e38))


def test_from_records_still_works():
    assert len(Qrels.from_records([("1", "a", 1)])) == 1


def test_hidden_character_set_is_exactly_the_unicode_definition():
    # every non-ASCII code point: refused iff it is whitespace, a control character, the
    # zero-width space, the word joiner or the byte-order mark
    from irscale.io.trec import hidden_characters

    chars = [chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    data = "|".join(chars).encode()
    found = {data[p : p + 4].decode("utf-8", "ignore")[0] for p in hidden_characters(np.frombuffer(data, np.uint8))}
    expected = {c for c in chars if c.isspace() or unicodedata.category(c) == "Cc" or c in "\u200b\u2060\ufeff"}
    assert found == expected


@pytest.mark.parametrize("name", ["", "  ", 42])
def test_run_name_must_be_a_non_empty_string(name):
    with pytest.raises(ArgumentError, match="name must be a non-empty string"):
        parse_run(b"1 Q0 a 1 2.0 r\n", "x", name=name)
