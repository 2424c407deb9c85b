"""Each class of bad input gets a clear error naming file and line, through the API and
through the CLI (exit code 2, one line on stderr)."""

import gzip

import pytest
from cli_lines import unwrap
from typer.testing import CliRunner

import irscale
from irscale.cli import app
from irscale.errors import InputFormatError, MeasureError, PolicyError

GOOD_QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
GOOD_RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.5 r\n"

CASES = [
    # (name, which file is bad, content, expected line, message fragment)
    (
        "run_too_few_fields",
        "run",
        "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0\n",
        2,
        "expected 6 fields 'qid Q0 docno rank score tag', found 5",
    ),
    ("run_too_many_fields", "run", "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r x\n", 2, "found 7"),
    (
        "run_bad_score",
        "run",
        "1 Q0 a 1 2.0 r\n\n1 Q0 b 2 high r\n",
        3,
        "score (5th field) must be a number, found 'high'",
    ),
    ("run_nan_score", "run", "1 Q0 a 1 nan r\n", 1, "score is NaN"),
    (
        "run_duplicate_docno",
        "run",
        "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n1 Q0 a 3 0.5 r\n",
        3,
        "duplicate docno 'a' for topic '1' (first at line 1)",
    ),
    ("run_empty", "run", "", None, "empty file"),
    ("run_blank", "run", "\n  \n", None, "empty file"),
    ("run_utf16", "run", "1 Q0 a 1 2.0 r\n".encode("utf-16"), 1, "NUL byte"),
    ("run_latin1", "run", "1 Q0 a 1 2.0 r\n1 Q0 caf\xe9 2 1.0 r\n".encode("latin-1"), 2, "not UTF-8"),
    ("run_no_common_topic", "run", "9 Q0 a 1 2.0 r\n", None, "shares no topic with the qrels"),
    ("run_two_tags", "run", "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 s\n", 2, "run tag 's' differs"),
    ("qrels_bad_grade", "qrels", "1 0 a 1\n1 0 b yes\n", 2, "grade (4th field) must be a number, found 'yes'"),
    ("qrels_nan_grade", "qrels", "1 0 a 0.5\n1 0 b NaN\n", 2, "grade (4th field) must be a finite number"),
    ("qrels_comma_grade", "qrels", "1 0 a 0,5\n", 1, "must be a number, found '0,5'; write a plain integer"),
    ("qrels_fields", "qrels", "1 0 a\n", 1, "expected 4 fields 'qid iter docno grade', found 3"),
    ("qrels_duplicate", "qrels", "1 0 a 1\n1 0 a 0\n", 2, "duplicate judgement of docno 'a'"),
    ("qrels_empty", "qrels", "", None, "empty file"),
    ("run_corrupt_gzip", "run", b"\x1f\x8b\x08\x00garbage", None, "corrupt gzip"),
    (
        "run_bom_inside",
        "run",
        "1 Q0 a 1 2.0 r\n\ufeff1 Q0 b 2 1.0 r\n",
        2,
        "byte-order mark (U+FEFF) after the start of the file",
    ),
    (
        "run_nbsp_in_docno",
        "run",
        "1 Q0 a\u00a0b 1 2.0 r\n",
        1,
        "non-breaking space (U+00A0) inside a field; fields are separated by spaces or tabs",
    ),
    ("run_del_character", "run", "1 Q0 a 1 2.0 r\n1 Q0 b\x7f 2 1.0 r\n", 2, "control character 0x7f"),
    (
        "run_underscore_score",
        "run",
        "1 Q0 a 1 1_000 r\n",
        1,
        "score (5th field) must be a number, found '1_000'; write a plain decimal number like 12.5 or 1.2e-3",
    ),
    (
        "run_two_tags_split_hint",
        "run",
        "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 s\n",
        2,
        "to read one run per tag use irscale.io.read_runs(path, split_tags=True)",
    ),
    ("qrels_underscore_grade", "qrels", "1 0 a 1_0\n", 1, "grade (4th field) must be a number, found '1_0'"),
    (
        "qrels_huge_grade",
        "qrels",
        "1 0 a 1\n1 0 b 99999999999999999999\n",
        2,
        "grade 99999999999999999999 out of the supported range [-32000, 32000]",
    ),
    ("qrels_ideographic_space", "qrels", "1 0 a\u30001\n", 1, "ideographic space (U+3000) inside a field"),
]


def write(tmp_path, which, content):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(GOOD_QRELS)
    r.write_text(GOOD_RUN)
    target = q if which == "qrels" else r
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    return q, r, target


@pytest.mark.parametrize("name, which, content, line, fragment", CASES, ids=[c[0] for c in CASES])
def test_api_error(tmp_path, name, which, content, line, fragment):
    q, r, target = write(tmp_path, which, content)
    with pytest.raises(InputFormatError) as ei:
        irscale.evaluate(q, [r], ["AP"])
    e = ei.value
    assert e.path == str(target)
    assert e.line == line
    assert fragment in str(e)
    assert str(e).startswith(f"{target}:{line}: " if line else f"{target}: ")


@pytest.mark.parametrize("name, which, content, line, fragment", CASES, ids=[c[0] for c in CASES])
def test_cli_error(tmp_path, name, which, content, line, fragment):
    q, r, target = write(tmp_path, which, content)
    res = CliRunner().invoke(app, ["evaluate", str(q), str(r), "-m", "AP"])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1
    where = f"{target}:{line}:" if line else f"{target}:"
    text = unwrap(res.stderr)
    assert where in text and fragment.split("'")[0] in text
    assert res.stdout == ""


def test_policies_keep_going(tmp_path):
    q, r, _ = write(tmp_path, "run", "1 Q0 a 1 2.0 r extra\n1 Q0 a 3 0.5 r more\n2 Q0 c 1 1.5 r\n")
    t = irscale.evaluate(q, [r], ["NumRet"], extra_fields="ignore", duplicates="first")
    assert t.values[0, 0].tolist() == [1.0, 1.0]


def test_missing_topic_policies(tmp_path):
    q, r, _ = write(tmp_path, "run", "1 Q0 a 1 2.0 r\n")
    with pytest.warns(
        irscale.errors.IrscaleWarning, match=r"run 'r' has no results for 1 qrels topic\(s\), scored 0: 2"
    ):
        t = irscale.evaluate(q, [r], ["AP"])
    assert t.values[0, 0].tolist() == [1.0, 0.0] and t.mean()["AP"].iloc[0] == 0.5
    with pytest.warns(irscale.errors.IrscaleWarning, match="left out"):
        t = irscale.evaluate(q, [r], ["AP"], missing_topics="drop")
    assert t.mean()["AP"].iloc[0] == 1.0 and len(t.to_frame()) == 1
    with pytest.raises(PolicyError, match="no results for qrels topic"):
        irscale.evaluate(q, [r], ["AP"], missing_topics="error")


def test_topics_outside_qrels_and_topics_without_relevant_are_reported(tmp_path):
    q, r, _ = write(tmp_path, "run", GOOD_RUN + "7 Q0 z 1 1.0 r\n")
    q.write_text(GOOD_QRELS + "3 0 d 0\n")
    with pytest.warns(irscale.errors.IrscaleWarning) as rec:
        irscale.evaluate(q, [r], ["AP"])
    msgs = " | ".join(str(w.message) for w in rec)
    assert "ignoring 1 topic(s) absent from the qrels: 7" in msgs
    assert "have no relevant document" in msgs and ": 3" in msgs


def test_gzip_and_whitespace_and_comments(tmp_path):
    q, r, _ = write(tmp_path, "run", GOOD_RUN)
    gz = tmp_path / "run.gz.anything"
    gz.write_bytes(gzip.compress(("# a comment\n" + GOOD_RUN.replace(" ", "\t  ")).encode()))
    a = irscale.evaluate(q, [r], ["AP", "P@2"])
    b = irscale.evaluate(q, [gz], ["AP", "P@2"])
    assert (a.values == b.values).all()


def test_unknown_measure_suggests(tmp_path):
    q, r, _ = write(tmp_path, "run", GOOD_RUN)
    with pytest.raises(MeasureError, match=r"did you mean 'nDCG@10'"):
        irscale.evaluate(q, [r], ["nDGC@10"])
    res = CliRunner().invoke(app, ["evaluate", str(q), str(r), "-m", "ndgc@10"])
    assert res.exit_code == 2 and "did you mean 'nDCG@10'" in res.stderr


def test_missing_file_and_empty_dir(tmp_path):
    q, r, _ = write(tmp_path, "run", GOOD_RUN)
    res = CliRunner().invoke(app, ["evaluate", str(q), str(tmp_path / "nope.txt")])
    assert res.exit_code == 2 and "no such file" in res.stderr
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(app, ["evaluate", str(q), str(tmp_path / "empty")])
    assert res.exit_code == 2 and "holds no run files" in res.stderr


# -- measure parameters: gain maps, p, relevance levels (issue 11, acceptance: bad input) -------------

GRADED_QRELS = "1 0 a 3\n1 0 b 1\n1 0 c 0\n2 0 d 2\n"
GRADED_RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n1 Q0 c 3 0.5 r\n2 Q0 d 1 1.5 r\n"

BAD_MEASURES = [
    # (measure, exception, fragments the message must hold: the parameter and what to type)
    ("nDCG(gains=0:0,1:3,2:1)@10", MeasureError, ["gains must not decrease", "grade 2 gains 1 < 3 of grade 1"]),
    ("nDCG(gains=1:-1)@10", MeasureError, ["gain of grade 1 is negative", "gains=exp"]),
    ("RBP(p=0.8,gains=1:high)@10", MeasureError, ["gain of grade 1 must be a number", "fractions like 1/2"]),
    ("gP(gains=0:1)@10", MeasureError, ["grade 0 must gain 0"]),
    ("DCG(gains=1:1,2)@10", MeasureError, ["'2' is not a grade:gain pair"]),
    ("nDCG(gains=-1:2)@10", MeasureError, ["grades must be integers", "or decimals like 0.5"]),
    ("ERR(gains=exp)@10", MeasureError, ["ERR takes no gain map", "nDCG or RBP"]),
    ("RBP(p=1.5)@10", MeasureError, ["p must be in (0, 1)", "p=1/3"]),
    ("RBP(p=0)@10", MeasureError, ["p must be in (0, 1)", "p=0.8"]),
    ("RBP(p=1)@10", MeasureError, ["p must be in (0, 1)"]),
    ("RBP(p='high')@10", MeasureError, ["p must be a number in (0, 1)"]),
    ("RBP(p=1/0)@10", MeasureError, ["a fraction must be two integers"]),
    # a map fine on its own but decreasing on these qrels' grades 0..3: grade 3 keeps gain 3 < 5
    ("nDCG(gains=1:1,2:5)@10", MeasureError, ["grade 3, not in the map", "list every grade"]),
]


@pytest.mark.parametrize("measure, exc, fragments", BAD_MEASURES, ids=[b[0] for b in BAD_MEASURES])
def test_bad_measure_parameters_api_and_cli(tmp_path, measure, exc, fragments):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(GRADED_QRELS)
    r.write_text(GRADED_RUN)
    with pytest.raises(exc) as ei:
        irscale.evaluate(q, [r], [measure])
    for f in fragments:
        assert f in str(ei.value)
    for verb in (
        ["evaluate", str(q), str(r), "-m", measure],
        ["transform", str(q), str(r), "-m", measure, "-N", "10"],
        ["rankmap", measure.split("@")[0], "-N", "4", "--levels", "4", "--no-cache"],
    ):
        if verb[0] == "rankmap" and "grade 3, not in the map" in fragments[0]:
            verb[-2] = "4"  # 4 levels: grades 0..3
        res = CliRunner().invoke(app, verb)
        assert res.exit_code == 2, (verb, res.output)
        lines = [x for x in res.stderr.splitlines() if x.startswith("error:")]
        assert len(lines) == 1, res.stderr
        assert fragments[0] in unwrap(res.stderr), res.stderr


def test_too_many_relevance_levels():
    from irscale.errors import ArgumentError
    from irscale.scales import build

    for measure in ("nDCG", "RBP(p=0.8)", "gP"):
        with pytest.raises(ArgumentError, match=r"levels must be at most 128 .*max_grade="):
            build(measure, 5, 200, cache=False)
    res = CliRunner().invoke(app, ["rankmap", "ERR", "-N", "5", "--levels", "129", "--no-cache"])
    assert res.exit_code == 2 and "--levels must be at most 128" in res.stderr
    assert len([x for x in res.stderr.splitlines() if x.startswith("error:")]) == 1
