"""ir_metadata headers of run files (Breuer et al., SIGIR 2022): read, kept in the
provenance, written by transform with PRIMAD sections, read again."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import irscale
from irscale.cli import app
from irscale.errors import InputFormatError, IrscaleWarning, PolicyError
from irscale.io import parse_run, parse_runs, read_run, read_runs, write_run
from irscale.io.ir_metadata import PRIMAD, header_text
from irscale.report.runs import write_runs
from irscale.report.study import provenance_yaml

TOY = Path(irscale.__file__).parent / "examples" / "toy"
HEADER = {
    "tag": "bm25",
    "actor": {"team": "lab-x", "role": "experimenter"},
    "research goal": {"venue": {"name": "SIGIR", "year": 2022}, "description": "a header that travels"},
    "platform": {"software": {"libraries": {"python": ["3.11"], "pyterrier": "0.10"}}},
    "implementation": {"source": {"lang": "python", "commit": "abc123"}},
    "method": {"automatic": True, "retrieval": [{"name": "bm25", "method": "org.terrier.matching.models.BM25"}]},
    "data": {"test collection": {"name": "toy"}},
}


def _with_header(path: Path, header: dict | str) -> bytes:
    text = header if isinstance(header, str) else header_text(header)
    return text.encode() + path.read_bytes()


@pytest.fixture
def runs_dir(tmp_path):
    """The toy runs, bm25's with an ir_metadata header."""
    d = tmp_path / "runs"
    shutil.copytree(TOY / "runs", d)
    (d / "bm25.txt").write_bytes(_with_header(TOY / "runs" / "bm25.txt", HEADER))
    return d


def test_the_reader_keeps_the_header_and_the_run_is_unchanged(runs_dir):
    with_header = read_run(runs_dir / "bm25.txt")
    plain = read_run(TOY / "runs" / "bm25.txt")
    assert with_header.metadata == HEADER and plain.metadata is None
    for field in ("docno", "score", "topics", "offsets"):
        assert getattr(with_header, field).tobytes() == getattr(plain, field).tobytes()
    assert read_run(runs_dir / "bm25.txt", metadata="ignore").metadata is None


def test_files_without_a_header_score_bit_for_bit_as_before(runs_dir):
    """Header lines are comments: the scores of every run are the same bits with or
    without them, and a table of runs without headers has no ir_metadata entry."""
    before = irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP", "nDCG@10", "P@5"])
    after = irscale.evaluate(TOY / "qrels.txt", runs_dir, ["AP", "nDCG@10", "P@5"])
    assert before.values.tobytes() == after.values.tobytes()
    assert "ir_metadata" not in before.provenance
    assert after.provenance["ir_metadata"] == {"bm25": HEADER}


def test_a_header_after_other_comments_gzip_and_split_tags(tmp_path):
    import gzip

    text = b"# produced by a script\n\n" + header_text({"tag": "two"}).encode()
    text += b"1 Q0 a 1 2.0 x\n1 Q0 b 2 1.0 y\n"
    p = tmp_path / "r.gz"
    p.write_bytes(gzip.compress(text))
    runs = read_runs(p, split_tags=True)
    assert [r.name for r in runs] == ["x", "y"] and all(r.metadata == {"tag": "two"} for r in runs)
    # Windows line ends and a byte-order mark
    crlf = ("\ufeff" + header_text(HEADER) + "1 Q0 a 1 2.0 x\n").replace("\n", "\r\n").encode()
    with pytest.warns(IrscaleWarning, match="byte-order mark"):
        assert parse_run(crlf).metadata == HEADER
    # a header below the first run line is no header (a comment among the run lines)
    late = b"1 Q0 a 1 2.0 x\n" + header_text({"tag": "late"}).encode()
    assert parse_run(late).metadata is None


@pytest.mark.parametrize(
    "header, line, fragment",
    [
        ("# ir_metadata.start\n# tag: bm25\n# actor:\n#   team: [lab\n# ir_metadata.end\n", 4, "malformed YAML"),
        ("# ir_metadata.start\n# tag: bm25\n", 3, "run line inside the ir_metadata header opened at line 1"),
        ("# ir_metadata.start\n# - a\n# - b\n# ir_metadata.end\n", 1, "expected a mapping"),
        ("# ir_metadata.start\n# tag: x\n#  bad: : :\n# ir_metadata.end\n", 3, "malformed YAML"),
    ],
)
def test_a_malformed_header_is_an_error_naming_file_and_line_or_a_warning(tmp_path, header, line, fragment):
    p = tmp_path / "bad.run"
    p.write_bytes(_with_header(TOY / "runs" / "bm25.txt", header))
    with pytest.raises(InputFormatError) as e:
        read_run(p)
    assert e.value.path == str(p) and e.value.line == line and fragment in e.value.reason, str(e.value)
    assert "metadata='warn'" in str(e.value) and "--metadata warn" in str(e.value)
    with pytest.warns(IrscaleWarning, match=f"bad.run:{line}: .*{fragment}.*read without its ir_metadata header"):
        run = read_run(p, metadata="warn")
    assert run.metadata is None and run.score.tobytes() == read_run(TOY / "runs" / "bm25.txt").score.tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_run(p, metadata="ignore").metadata is None


def test_a_run_line_inside_the_header_names_its_line():
    text = b"# ir_metadata.start\n# tag: x\n1 Q0 a 1 2.0 x\n# ir_metadata.end\n1 Q0 b 2 1.0 x\n"
    with pytest.raises(InputFormatError, match=r"<memory>:3: run line inside the ir_metadata header"):
        parse_run(text)


def test_a_header_never_closed_names_its_first_line():
    with pytest.raises(InputFormatError, match=r"<memory>:2: ir_metadata header opened here is never closed"):
        parse_run(b"\n# ir_metadata.start\n# tag: x\n")


def test_aliases_are_refused_before_they_expand():
    """Seven nested levels of ten aliases (a few hundred bytes) would expand to 10^7
    values: the header is refused at its first alias, at once."""
    lines = ["# ir_metadata.start", "# l0: &l0 [" + ", ".join(["1"] * 10) + "]"]
    lines += [f"# l{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * 10) + "]" for k in range(1, 8)]
    text = ("\n".join(lines + ["# ir_metadata.end", "1 Q0 a 1 2.0 x"]) + "\n").encode()
    with pytest.raises(InputFormatError, match=r"<memory>:3: .*aliases \(\*name\) are not accepted"):
        parse_run(text)
    with pytest.warns(IrscaleWarning, match="aliases"):
        assert parse_run(text, metadata="warn").metadata is None


def test_header_values_json_has_no_word_for_are_text():
    run = parse_run(b"# ir_metadata.start\n# method:\n#   p: .inf\n#   q: .nan\n# ir_metadata.end\n1 Q0 a 1 2.0 x\n")
    assert run.metadata == {"method": {"p": "inf", "q": "nan"}}


def test_the_option_is_checked():
    with pytest.raises(PolicyError, match="metadata"):
        parse_run(b"1 Q0 a 1 2.0 x\n", metadata="strict")


def test_write_run_round_trips_a_run_and_its_header(tmp_path):
    run = read_run(TOY / "runs" / "bm25.txt")
    back = read_run(write_run(tmp_path / "out.run", run, HEADER))
    assert back.metadata == HEADER and back.name == run.name
    for field in ("docno", "score", "topics", "offsets"):
        assert getattr(back, field).tobytes() == getattr(run, field).tobytes()


def _check_primad(meta: dict, column: str, N: int):
    assert set(PRIMAD) <= set(meta), set(PRIMAD) - set(meta)
    assert meta["platform"]["software"]["libraries"]["irscale"] == irscale.__version__
    assert meta["implementation"]["source"]["software"] == f"irscale {irscale.__version__}"
    ev = meta["method"]["evaluation"]
    assert ev["column"] == column and ev["N"] == N and ev["ties"] == "unq" and ev["relevance"] == "graded"
    data = meta["data"]["test collection"]
    assert data["qrels"] == "qrels.txt" and len(data["qrels sha256"]) == 64
    assert meta["data"]["runs"]["bm25"] == HEADER  # the input run's own header
    # one run of five has a header: its team is not the evaluation's actor, nor its goal the evaluation's
    assert meta["actor"] == {"role": "evaluator (not recorded)"}
    assert "description" not in meta["research goal"]
    assert "qrels path" not in data  # the name and checksum, never the local folder


@pytest.mark.slow
def test_a_header_survives_read_report_written_run_and_read_again(runs_dir, tmp_path):
    """read -> provenance (evaluate, transform, compare) -> the report's YAML -> a run file
    written by transform -> read again: the header is the same, the PRIMAD sections are there."""
    table = irscale.evaluate(TOY / "qrels.txt", runs_dir, ["AP", "P@10"])
    t = irscale.transform(table, ["AP", "P"], depth=10)
    assert t.provenance["ir_metadata"] == {"bm25": HEADER}
    study = irscale.compare(table, ["AP", "P"], depth=10, tests=("ttest",), effects=False, measure_free=False)
    assert study.provenance["ir_metadata"] == {"bm25": HEADER}
    assert yaml.safe_load(provenance_yaml(study))["ir_metadata"] == {"bm25": HEADER}
    paths = write_runs(t, tmp_path / "out")
    assert [p.name for p in paths] == ["ranked_AP@10.run", "ranked_P@10.run"]
    run = read_run(paths[0])
    _check_primad(run.metadata, "ranked(AP@10)", 10)
    # the written run holds the ranked scores, each topic's systems by score
    col = [str(c) for c in t.measures].index("ranked(AP@10)")
    frame = run.to_frame()
    for t_i, topic in enumerate(t.topics):
        got = frame[frame.topic == topic]
        want = {s: t.values[col, s_i, t_i] for s_i, s in enumerate(t.systems)}
        assert dict(zip(got.docno, got.score)) == want
        assert list(got.score) == sorted(got.score, reverse=True)
    # a written run read again and written again keeps its header (and its input's header inside)
    again = read_run(write_run(tmp_path / "again.run", run))
    assert again.metadata == run.metadata


@pytest.mark.slow
def test_cli_transform_run_out_and_metadata_option(runs_dir, tmp_path):
    out = tmp_path / "written"
    res = CliRunner().invoke(
        app,
        [
            "transform",
            str(TOY / "qrels.txt"),
            str(runs_dir),
            "-m",
            "AP",
            "-N",
            "10",
            "--run-out",
            str(out),
            "-f",
            "csv",
        ],
    )
    assert res.exit_code == 0, res.output
    (path,) = sorted(out.iterdir())
    meta = read_run(path).metadata
    _check_primad(meta, "ranked(AP@10)", 10)
    assert meta["implementation"]["executable"]["cmd"].startswith("irscale")  # the command line as typed
    bad = tmp_path / "bad"
    shutil.copytree(TOY / "runs", bad)
    (bad / "bm25.txt").write_bytes(
        _with_header(TOY / "runs" / "bm25.txt", "# ir_metadata.start\n# a: [\n# ir_metadata.end\n")
    )
    res = CliRunner().invoke(app, ["evaluate", str(TOY / "qrels.txt"), str(bad), "-m", "AP"])
    assert res.exit_code == 2 and "bm25.txt:2" in res.output and "--metadata warn" in res.output, res.output
    res = CliRunner().invoke(app, ["evaluate", str(TOY / "qrels.txt"), str(bad), "-m", "AP", "--metadata", "warn"])
    assert res.exit_code == 0 and "ir_metadata header" in res.output, res.output
    assert "--skip-invalid" not in res.output  # the file is a run: no advice to skip it


def test_an_actor_every_input_run_shares_is_the_evaluations(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    for f in sorted((TOY / "runs").glob("*.txt")):
        (d / f.name).write_bytes(_with_header(f, {"actor": HEADER["actor"], "tag": f.stem}))
    t = irscale.transform(irscale.evaluate(TOY / "qrels.txt", d, ["AP"]), ["AP"], depth=10)
    (path,) = write_runs(t, tmp_path / "out")
    assert read_run(path).metadata["actor"] == HEADER["actor"]


def test_write_runs_refuses_names_with_spaces_and_unknown_columns(tmp_path):
    from irscale.io import Qrels, Run

    q = Qrels.from_records([("1", "a", 1), ("1", "b", 0)])
    r = Run.from_records([("1", "a", 2.0), ("1", "b", 1.0)], name="r1")
    table = irscale.evaluate(q, [r], ["AP"])
    with pytest.raises(irscale.errors.ArgumentError, match="no column 'P@5'"):
        write_runs(table, tmp_path, columns=["P@5"])
    (path,) = write_runs(table, tmp_path)  # an evaluate table: its measure columns
    assert read_run(path).name == "AP" and np.array_equal(read_run(path).score, table.values[0, :, 0])


def test_a_header_longer_than_the_first_piece_is_said_to_be_too_long(monkeypatch):
    import irscale.io.trec as trec

    monkeypatch.setattr(trec, "PIECE_BYTES", 4096)
    long_header = "# ir_metadata.start\n" + "".join(f"# k{i}: {'x' * 60}\n" for i in range(200)) + "# ir_metadata.end\n"
    text = (long_header + "1 Q0 a 1 2.0 x\n").encode()
    with pytest.raises(InputFormatError, match=r"<memory>:1: ir_metadata header opened here runs past the first"):
        parse_run(text)
    with pytest.raises(InputFormatError, match="never closed"):
        parse_run(b"# ir_metadata.start\n# tag: x\n")  # a short file: unclosed, as before


def test_runs_of_one_file_each_get_their_own_copy_of_its_header():
    text = b"# ir_metadata.start\n# tag: both\n# ir_metadata.end\n1 Q0 a 1 2.0 x\n1 Q0 b 1 2.0 y\n"
    x, y = parse_runs(text, split_tags=True)
    x.metadata["tag"] = "x only"
    assert y.metadata == {"tag": "both"}


def test_a_key_given_twice_is_an_error_at_its_second_place():
    """YAML loaders keep the last of two equal keys without a word; a header that gives a key
    twice loses one of them, so it is refused, naming the line of the second."""
    from irscale.io.trec import parse_run

    text = b"# ir_metadata.start\n# tag: a\n# method:\n#   name: x\n#   name: y\n# ir_metadata.end\n1 Q0 d 1 1.0 r\n"
    with pytest.raises(InputFormatError) as e:
        parse_run(text, "r.txt")
    assert e.value.line == 5 and "the key 'name' is given twice in one section" in str(e.value)
    nested = b"# ir_metadata.start\n# method:\n#   a:\n#     - {b: 1, b: 2}\n# ir_metadata.end\n1 Q0 d 1 1.0 r\n"
    with pytest.raises(InputFormatError, match="the key 'b' is given twice"):
        parse_run(nested, "r.txt")
    same_name_elsewhere = (
        b"# ir_metadata.start\n# method:\n#   name: x\n# platform:\n#   name: y\n# ir_metadata.end\n1 Q0 d 1 1.0 r\n"
    )
    assert parse_run(same_name_elsewhere, "r.txt").metadata["platform"]["name"] == "y"
