"""In-memory inputs (issue 12, item 2): pandas DataFrames (ir_measures' and PyTerrier's
columns), pytrec_eval dicts, ir_measures namedtuples, ranx objects and Parquet files give
exactly the scores of the same runs read from TREC files, and bad objects are errors that
name the row and the fix.

The in-memory inputs of the data tests are built here from the files with plain Python
(``str.split`` and ``float``), not with irscale's reader, in file order.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, TREC8, need

import irscale
from irscale.errors import ArgumentError, InputFormatError, IrscaleError, IrscaleWarning, PolicyError
from irscale.io import read_qrels, read_run
from irscale.io.memory import (
    qrels_from_dict,
    qrels_from_frame,
    qrels_from_records,
    read_parquet_runs,
    run_from_records,
    runs_from_dict,
    runs_from_frame,
)

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "bpref"]
ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")  # ir_measures' field names
Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration", defaults=["0"])

# -- a toy collection, as records, TREC files and every in-memory form ----------------------------

QRELS = [("1", "a", 1), ("1", "b", 0), ("1", "c", 2), ("2", "d", 1), ("2", "f", 3)]
RUNS = {
    "bm25": [("1", "c", 1.0), ("1", "a", 3.0), ("1", "b", 2.0), ("2", "e", 0.5), ("2", "d", 1.0), ("2", "f", 0.25)],
    "lm": [("2", "f", 4.0), ("1", "b", 2.0), ("1", "z", 2.0), ("1", "c", 1.5), ("2", "d", 4.0)],  # ties
}


@pytest.fixture
def toy_files(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{a} 0 {b} {g}\n" for a, b, g in QRELS))
    files = []
    for name, rows in RUNS.items():
        f = tmp_path / f"{name}.txt"
        f.write_text("".join(f"{a} Q0 {b} 0 {s!r} {name}\n" for a, b, s in rows))
        files.append(f)
    return q, files


@pytest.fixture
def toy_ref(toy_files):
    q, files = toy_files
    return irscale.evaluate(q, files, MEASURES)


def frame(rows, cols=("query_id", "doc_id", "score"), **extra) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(cols))
    for k, v in extra.items():
        df[k] = v
    return df


def nested(rows) -> dict:
    out: dict = {}
    for q, d, v in rows:
        out.setdefault(q, {})[d] = v
    return out


def assert_same(got, ref, names=None):
    """``got`` has the values of ``ref`` (of its first systems when there are fewer), exactly."""
    S = len(got.systems)
    assert list(got.systems) == list(names or ref.systems[:S])
    assert got.topics == ref.topics and [str(m) for m in got.measures] == [str(m) for m in ref.measures]
    assert np.array_equal(got.values, ref.values[:, :S], equal_nan=True)


# -- one test per input type ------------------------------------------------------------------------


def test_frames_with_ir_measures_columns(toy_ref):
    qrels = frame(QRELS, ("query_id", "doc_id", "relevance"))
    runs = [frame(rows) for rows in RUNS.values()]
    for r, name in zip(runs, RUNS):
        r.attrs["name"] = name
    assert_same(irscale.evaluate(qrels, runs, MEASURES), toy_ref)
    # unnamed frames in a list are named by their position
    got = irscale.evaluate(qrels, [frame(rows) for rows in RUNS.values()], MEASURES)
    assert_same(got, toy_ref, ["run1", "run2"])


def test_a_single_frame_is_one_run_not_a_list(toy_ref):
    qrels = frame(QRELS, ("query_id", "doc_id", "relevance"))
    got = irscale.evaluate(qrels, frame(RUNS["bm25"]), MEASURES)  # not iterated as column names
    assert got.systems == ("run",)
    assert np.array_equal(got.values[:, 0], toy_ref.values[:, 0])


def test_frames_with_pyterrier_columns_and_integer_ids(tmp_path):
    qrels = [(101, 7, 1), (101, 8, 0), (102, 7, 2)]
    run = [(101, 8, 2.0), (101, 7, 1.0), (102, 7, 5.0), (102, 70, 5.0)]
    (tmp_path / "q").write_text("".join(f"{a} 0 {b} {g}\n" for a, b, g in qrels))
    (tmp_path / "r").write_text("".join(f"{a} Q0 {b} 0 {s} r\n" for a, b, s in run))
    ref = irscale.evaluate(tmp_path / "q", tmp_path / "r", MEASURES)
    qf = frame(qrels, ("qid", "docno", "label"))
    rf = frame(run, ("qid", "docno", "score"), name="r", rank=[0, 1, 0, 1], docid=[3, 4, 5, 6])  # extra columns ignored
    assert qf.qid.dtype.kind == "i" and rf.docno.dtype.kind == "i"
    assert_same(irscale.evaluate(qf, rf, MEASURES), ref)
    # str() of the integers: docno 70 sorts before 8 byte-wise, as in the file
    (r,) = runs_from_frame(rf)
    assert r.docno.tolist() == [b"8", b"7", b"70", b"7"] and r.qid.dtype.kind == "S"


def test_frame_with_a_name_column_holds_several_runs(toy_ref):
    rows = [(*row, name) for name, rs in reversed(RUNS.items()) for row in rs]
    qrels = frame(QRELS, ("qid", "docno", "label"))
    for col in ("name", "run"):
        df = frame(rows, ("qid", "docno", "score", col)).sample(frac=1, random_state=3)  # rows in any order
        got = irscale.evaluate(qrels, df, MEASURES)
        first = list(dict.fromkeys(df[col]))  # runs in order of first appearance
        assert list(got.systems) == first
        assert np.array_equal(got.values[:, [first.index(n) for n in RUNS]], toy_ref.values)


def test_pytrec_eval_dicts(toy_ref):
    qrels = nested(QRELS)
    got = irscale.evaluate(qrels, [runs_from_dict(nested(rows), name=n)[0] for n, rows in RUNS.items()], MEASURES)
    assert_same(got, toy_ref)
    assert_same(irscale.evaluate(qrels, {n: nested(rows) for n, rows in RUNS.items()}, MEASURES), toy_ref)
    one = irscale.evaluate(qrels, nested(RUNS["lm"]), MEASURES)  # one run dict: one run named "run"
    assert one.systems == ("run",) and np.array_equal(one.values[:, 0], toy_ref.values[:, 1])
    assert qrels_from_dict(qrels).grade.tolist() == [1, 0, 2, 1, 3]


def test_namedtuples_with_ir_measures_fields(toy_ref):
    qrels = [Qrel(*r) for r in QRELS]
    runs = [[ScoredDoc(*r) for r in rows] for rows in RUNS.values()]
    assert_same(irscale.evaluate(qrels, runs, MEASURES), toy_ref, ["run1", "run2"])
    # one list, or one generator, of tuples is one run; generators of qrels too
    got = irscale.evaluate((q for q in qrels), (s for s in runs[1]), MEASURES)
    assert got.systems == ("run",) and np.array_equal(got.values[:, 0], toy_ref.values[:, 1])
    assert run_from_records(runs[0], name="bm25").docno.tolist() == [b"a", b"b", b"c", b"d", b"e", b"f"]


def test_ir_measures_namedtuples(toy_ref):
    ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is in the test extra")
    qrels = [ir_measures.Qrel(*r) for r in QRELS]
    runs = [[ir_measures.ScoredDoc(*r) for r in rows] for rows in RUNS.values()]
    assert_same(irscale.evaluate(qrels, runs, MEASURES), toy_ref, ["run1", "run2"])


RANX = pytest.mark.xdist_group("ranx")  # ranx compiles its numba code in each process (about 20 s): once


@pytest.mark.slow
@RANX
def test_ranx_objects(toy_ref):
    ranx = pytest.importorskip("ranx", reason="ranx is in the test extra")
    qrels = ranx.Qrels(nested(QRELS))
    runs = [ranx.Run(nested(rows), name=n) for n, rows in RUNS.items()]
    assert_same(irscale.evaluate(qrels, runs, MEASURES), toy_ref)
    got = irscale.evaluate(qrels, ranx.Run(nested(RUNS["lm"])), MEASURES)  # one unnamed ranx Run
    assert got.systems == ("run",) and np.array_equal(got.values[:, 0], toy_ref.values[:, 1])


def test_parquet_files(tmp_path, toy_files, toy_ref):
    pytest.importorskip("pyarrow", reason="pyarrow (irscale[parquet], in the test extra) reads Parquet files")
    q, files = toy_files
    frame(QRELS, ("query_id", "doc_id", "relevance")).to_parquet(tmp_path / "qrels.parquet")
    d = tmp_path / "runs"
    d.mkdir()
    for name, rows in RUNS.items():
        frame(rows, ("qid", "docno", "score")).to_parquet(d / f"{name}.parquet")  # named after the file
    assert_same(irscale.evaluate(tmp_path / "qrels.parquet", d, MEASURES), toy_ref)
    assert_same(irscale.evaluate(str(tmp_path / "qrels.parquet"), [d / "bm25.parquet", files[1]], MEASURES), toy_ref)
    multi = tmp_path / "all.parquet"
    frame([(*r, n) for n, rs in RUNS.items() for r in rs], ("qid", "docno", "score", "run")).to_parquet(multi)
    assert_same(irscale.evaluate(q, multi, MEASURES), toy_ref)
    assert [r.name for r in read_parquet_runs(d / "lm.parquet", name="x")] == ["x"]
    (d / "notes.parquet").write_text("not parquet")  # skip_invalid skips it, with a warning, like a README
    with pytest.warns(IrscaleWarning, match="skipping .*notes.parquet, not a valid run"):
        assert_same(irscale.evaluate(q, d, MEASURES, skip_invalid=True), toy_ref)
    with pytest.raises(InputFormatError, match="notes.parquet: not a valid Parquet file"):
        irscale.evaluate(q, d, MEASURES)


def test_parquet_errors(tmp_path, monkeypatch):
    bad = tmp_path / "bad.parquet"
    bad.write_text("1 Q0 a 1 1.0 r\n")
    qrels = qrels_from_dict(nested(QRELS))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if pyarrow were not installed
    with pytest.raises(
        IrscaleError,
        match=r"bad.parquet: reading Parquet files needs pyarrow, which is not "
        r"installed: pip install 'irscale\[parquet\]'",
    ):
        irscale.evaluate(qrels, bad)
    monkeypatch.undo()
    pytest.importorskip("pyarrow", reason="pyarrow (irscale[parquet], in the test extra) reads Parquet files")
    with pytest.raises(InputFormatError, match="bad.parquet: not a valid Parquet file"):
        irscale.evaluate(frame(QRELS, ("query_id", "doc_id", "relevance")), bad)
    with pytest.raises(InputFormatError, match="no such file"):
        irscale.evaluate(tmp_path / "nothing.parquet", bad)


def test_run_objects_and_paths_mix_with_memory_inputs(toy_files, toy_ref):
    q, files = toy_files
    assert_same(irscale.evaluate(q, [files[0], frame(RUNS["lm"])], MEASURES), toy_ref, ["bm25", "run2"])
    assert_same(irscale.evaluate(q, [read_run(files[0]), nested(RUNS["lm"])], MEASURES), toy_ref, ["bm25", "run2"])


def test_policies_hold_for_memory_runs(tmp_path):
    qrels = frame([("1", "a", 1), ("1", "b", 1)], ("qid", "docno", "label"))
    # 1 + 1e-9 and 1 tie in float32: then the docno decides (b before a)
    rows = [("1", "a", 1.0 + 1e-9), ("1", "b", 1.0)]
    r64 = runs_from_frame(frame(rows, ("qid", "docno", "score")))[0]
    r32 = runs_from_frame(frame(rows, ("qid", "docno", "score")), score_precision="float32")[0]
    assert r64.docno.tolist() == [b"a", b"b"] and r32.docno.tolist() == [b"b", b"a"]
    assert r32.score.tolist() == [1.0, 1.0]
    t = irscale.evaluate(qrels, {"1": {"a": 1.0 + 1e-9, "b": 1.0, "c": 0.5}}, ["RR"], score_precision="float32")
    assert t.values.ravel().tolist() == [1.0]
    dup = frame([("1", "a", 1.0), ("1", "c", 3.0), ("1", "a", 2.0)], ("qid", "docno", "score"))
    with pytest.raises(
        InputFormatError,
        match=r"row 2 \(qid '1', docno 'a'\): docno retrieved twice .*first at row 0"
        r".*duplicates='first'",
    ):
        irscale.evaluate(qrels, dup)
    (kept,) = runs_from_frame(dup, duplicates="first")
    assert kept.docno.tolist() == [b"c", b"a"] and kept.score.tolist() == [3.0, 1.0]  # the first 'a' kept
    with pytest.raises(PolicyError, match="duplicates must be one of"):
        irscale.evaluate(qrels, dup, duplicates="last")


@pytest.mark.filterwarnings("ignore:run 'tied-scores' has no results")  # a toy run lacks a topic
def test_transform_and_compare_take_a_frame_run():
    toy = Path(irscale.__file__).parent / "examples" / "toy"
    qrels = read_qrels(toy / "qrels.txt").to_frame().rename(columns={"topic": "qid", "grade": "label"})
    runs = []
    for f in sorted((toy / "runs").iterdir()):
        r = read_run(f).to_frame().rename(columns={"topic": "qid"})
        r["name"] = read_run(f).name
        runs.append(r)
    df = pd.concat(runs, ignore_index=True)
    ref = irscale.evaluate(toy / "qrels.txt", sorted((toy / "runs").iterdir()), ["AP", "P@5"])
    table = irscale.evaluate(qrels, df, ["AP", "P@5"])
    assert_same(table, ref)
    t = irscale.transform(table, ["AP", "P"], depth=5)
    assert np.array_equal(t.values, irscale.transform(ref, ["AP", "P"], depth=5).values)
    study = irscale.compare(table, ["P", "AP"], depth=5, tests=["sign"])
    assert list(study.systems) == list(ref.systems)


# -- bad objects -----------------------------------------------------------------------------------

QF = frame(QRELS, ("query_id", "doc_id", "relevance"))


def test_missing_column_lists_the_accepted_sets():
    with pytest.raises(
        InputFormatError,
        match=r"<DataFrame>: a run frame needs the columns \(query_id, doc_id, "
        r"score\) or \(qid, docno, score\).*missing column 'score'",
    ):
        irscale.evaluate(QF, frame(RUNS["lm"], ("qid", "docno", "sim")))
    with pytest.raises(
        InputFormatError,
        match=r"a qrels frame needs the columns \(query_id, doc_id, relevance\) or "
        r"\(qid, docno, label\).*missing column 'label'",
    ):
        qrels_from_frame(frame(QRELS, ("qid", "docno", "grade")))
    both = frame(RUNS["lm"], ("qid", "docno", "score"), query_id="1", doc_id="x")
    with pytest.raises(InputFormatError, match="both .* columns.*drop the other"):
        runs_from_frame(both)
    with pytest.raises(InputFormatError, match="both a 'name' and a 'run' column"):
        runs_from_frame(frame(RUNS["lm"], name="a", run="b"))


def test_nan_or_non_numeric_score_names_the_row():
    rows = [("1", "a", 1.0), ("1", "b", float("nan"))]
    with pytest.raises(InputFormatError, match=r"row 1 \(qid '1', docno 'b'\): score is missing or NaN"):
        irscale.evaluate(QF, frame(rows))
    with pytest.raises(InputFormatError, match=r"qid '1', docno 'b': score is missing or NaN"):
        irscale.evaluate(QF, {"1": {"a": 1.0, "b": float("nan")}})
    obj = frame([("1", "a", 1.0), ("1", "b", "2.5")])
    with pytest.raises(
        InputFormatError,
        match=r"row 1 \(qid '1', docno 'b'\): score must be a number, found str "
        r"'2.5' \(convert the column with pandas.to_numeric\)",
    ):
        irscale.evaluate(QF, obj)
    with pytest.raises(InputFormatError, match=r"item 0 \(qid '1', docno 'a'\): score is missing \(None\)"):
        run_from_records([ScoredDoc("1", "a", None)])
    with pytest.raises(InputFormatError, match="score must be a number, found bool True"):
        runs_from_dict({"1": {"a": True, "b": 1.0}})
    labelled = frame(rows).set_axis(["x", "y"])
    with pytest.raises(InputFormatError, match=r"row 1 \(index 'y'\) \(qid '1', docno 'b'\)"):
        runs_from_frame(labelled)


def test_duplicated_judgement_names_the_rows():
    with pytest.raises(InputFormatError, match=r"row 2 \(qid '1', docno 'a'\): document judged twice .*first at row 0"):
        qrels_from_frame(frame([("1", "a", 1), ("1", "b", 0), ("1", "a", 0)], ("qid", "docno", "label")))
    with pytest.raises(InputFormatError, match=r"item 1 \(qid '1', docno '7'\): document judged twice"):
        qrels_from_records([Qrel("1", 7, 1), Qrel("1", "7", 1)])  # 7 and '7' are the same docno


def test_non_integer_grade_names_the_row():
    with pytest.raises(InputFormatError, match=r"row 1 \(qid '1', docno 'b'\): grade must be finite, found inf"):
        irscale.evaluate(frame([("1", "a", 1), ("1", "b", np.inf)], ("qid", "docno", "label")), frame(RUNS["lm"]))
    with pytest.raises(InputFormatError, match=r"qid '1', docno 'b': grade is missing or NaN"):
        qrels_from_dict({"1": {"a": 1, "b": float("nan")}})
    with pytest.raises(InputFormatError, match="grade must be a number, found str '1'"):
        qrels_from_dict({"1": {"a": 1, "b": "1"}})
    with pytest.raises(InputFormatError, match=r"grade 40000 out of the supported range"):
        qrels_from_records([Qrel("1", "a", 40000)])
    assert qrels_from_frame(frame([("1", "a", 2.0)], ("qid", "docno", "label"))).grade.tolist() == [2]


def test_empty_inputs():
    with pytest.raises(InputFormatError, match="<DataFrame>: empty run: it holds no record"):
        irscale.evaluate(QF, frame([]))
    with pytest.raises(InputFormatError, match="<dict>: empty qrels"):
        irscale.evaluate({}, frame(RUNS["lm"]))
    with pytest.raises(InputFormatError, match="empty run"):
        runs_from_dict({"1": {}})
    with pytest.raises(InputFormatError, match="<ScoredDoc records>: empty run"):
        run_from_records([])
    with pytest.raises(ArgumentError, match="no run given"):
        irscale.evaluate(QF, [])


def test_bad_qids_and_docnos_name_the_row():
    with pytest.raises(InputFormatError, match=r"row 1: docno is missing \(nan\); every record needs a docno"):
        runs_from_frame(frame([("1", "a", 1.0), ("1", None, 2.0)]))
    with pytest.raises(
        InputFormatError,
        match=r"row 0: qid must be a string or an integer, found float 1.0 \(a float "
        r"column: were missing values filled with NaN",
    ):
        runs_from_frame(frame([(1, "a", 1.0), (None, "b", 2.0)]))  # pandas makes the qids floats: 1.0, NaN
    with pytest.raises(
        InputFormatError,
        match=r"row 0: docno 'a ' holds a space; qids and docnos cannot hold "
        "whitespace",
    ):
        runs_from_frame(frame([("1", "a ", 1.0)]))
    with pytest.raises(InputFormatError, match=r"docno 'a\\u200b' holds the invisible character U\+200B"):
        runs_from_frame(frame([("1", "b", 1.0), ("1", "a\u200b", 1.0)]))
    with pytest.raises(InputFormatError, match="docno is an empty string"):
        runs_from_dict({"1": {"": 1.0}})
    with pytest.raises(InputFormatError, match=r"the value of qid '1' is list"):
        runs_from_dict({"1": [("a", 1.0)]})
    with pytest.raises(InputFormatError, match=r"item 1.*has no field 'score'"):
        run_from_records([ScoredDoc("1", "a", 1.0), Qrel("1", "b", 1)])


def test_wrong_objects_list_the_accepted_inputs():
    with pytest.raises(
        ArgumentError,
        match=r"qrels must be a qrels file path .*a pandas DataFrame \(query_id, doc_id, "
        r"relevance or qid, docno, label\), a dict \{qid: \{docno: grade\}\}, "
        "ir_measures Qrel tuples, a ranx Qrels",
    ):
        irscale.evaluate([1, 2], frame(RUNS["lm"]))
    with pytest.raises(
        ArgumentError,
        match=r"each run must be a path .*a pandas DataFrame .*ir_measures ScoredDoc "
        "tuples, a ranx Run",
    ):
        irscale.evaluate(QF, [frame(RUNS["lm"]), 3.5])
    with pytest.raises(ArgumentError, match="renames a single run, but the frame holds 2 runs"):
        runs_from_frame(frame(RUNS["lm"], name=["a", "b", "a", "b", "a"]), name="x")


def test_importing_irscale_imports_none_of_the_input_libraries():
    code = textwrap.dedent("""
        import sys, irscale, irscale.io, irscale.io.memory, irscale.experiment
        print(sorted(m for m in ("ranx", "ir_measures", "pyarrow", "pandas") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- real data: every in-memory type gives exactly the scores of the files --------------------------


def read_trec(path: Path, fields: int) -> list[list[str]]:
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    rows = [line.split() for line in text.splitlines() if line.strip()]
    assert all(len(r) == fields for r in rows), path
    return rows


def collection(qrels_path: Path, run_files: list[Path]):
    """qrels rows (qid, docno, grade) and {tag: [(qid, docno, score)]}, in file order."""
    qrels = [(q, d, int(g)) for q, _, d, g in read_trec(qrels_path, 4)]
    runs = {}
    for f in run_files:
        rows = read_trec(f, 6)
        runs[rows[0][5]] = [(q, d, float(s)) for q, _, d, _, s, _ in rows]
    return qrels, runs


def as_type(kind: str, qrels, runs, tmp_path: Path):
    """(qrels, runs) in the in-memory form ``kind``, and the run names evaluate gives."""
    names = list(runs)
    if kind == "frame, ir_measures columns, run column":
        rows = [(q, d, s, n) for n, rs in runs.items() for q, d, s in rs]
        return (
            frame(qrels, ("query_id", "doc_id", "relevance")),
            frame(rows, ("query_id", "doc_id", "score", "run")),
            names,
        )
    if kind == "frames, PyTerrier columns":
        return (
            frame(qrels, ("qid", "docno", "label")),
            [frame(rs, ("qid", "docno", "score"), name=n) for n, rs in runs.items()],
            names,
        )
    if kind == "pytrec_eval dicts":
        return nested(qrels), {n: nested(rs) for n, rs in runs.items()}, names
    if kind == "namedtuples":
        return (
            [Qrel(*r) for r in qrels],
            [[ScoredDoc(*r) for r in rs] for rs in runs.values()],
            [f"run{k}" for k in range(1, len(runs) + 1)],
        )
    if kind == "ranx":  # two runs: ranx's objects are slow to build and read from Python (numba typed dicts)
        ranx = pytest.importorskip("ranx", reason="ranx is in the test extra")
        return ranx.Qrels(nested(qrels)), [ranx.Run(nested(runs[n]), name=n) for n in names[:2]], names[:2]
    if kind == "parquet":
        pytest.importorskip("pyarrow", reason="pyarrow (irscale[parquet], in the test extra) reads Parquet files")
        frame(qrels, ("query_id", "doc_id", "relevance")).to_parquet(tmp_path / "qrels.parquet")
        paths = []
        for k, (n, rs) in enumerate(runs.items()):
            paths.append(tmp_path / f"{k:03d}.parquet")
            frame(rs, ("qid", "docno", "score"), name=n).to_parquet(paths[-1])
        return tmp_path / "qrels.parquet", paths, names
    raise AssertionError(kind)


KINDS = [
    "frame, ir_measures columns, run column",
    "frames, PyTerrier columns",
    "pytrec_eval dicts",
    "namedtuples",
    "ranx",
    "parquet",
]


@pytest.fixture(scope="module")
def dl19():
    d = need(DATA / "dl19")
    files = sorted((d / "runs").glob("*.gz"))
    assert len(files) == 37
    return d / "qrels.dl19-passage.txt", files[::4]  # 10 of the 37 runs keep the six inputs under a few seconds


@pytest.fixture(scope="module")
def dl19_data(dl19):
    return collection(*dl19)


@pytest.fixture(scope="module")
def dl19_ref(dl19):
    return irscale.evaluate(dl19[0], dl19[1], MEASURES)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [pytest.param(k, marks=RANX) if k == "ranx" else k for k in KINDS])
def test_dl19_every_memory_input_equals_the_files(kind, dl19_data, dl19_ref, tmp_path):
    qrels, runs, names = as_type(kind, *dl19_data, tmp_path)
    got = irscale.evaluate(qrels, runs, MEASURES)
    assert len(got.topics) == 43 and len(got.systems) == (2 if kind == "ranx" else 10)
    assert_same(got, dl19_ref, names)


@pytest.fixture(scope="module")
def trec8_data():
    d = need(TREC8)
    files = [d / "runs" / f"input.{tag}.gz" for tag in ("1", "READWARE", "CL99SD")]  # a numeric tag, a short run
    return d / "qrels.trec8.txt", files


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["frame, ir_measures columns, run column", "pytrec_eval dicts", "namedtuples"])
def test_trec8_memory_inputs_equal_the_files(kind, trec8_data, tmp_path):
    qrels_path, files = trec8_data
    ref = irscale.evaluate(qrels_path, files, MEASURES)
    qrels, runs, names = as_type(kind, *collection(qrels_path, files), tmp_path)
    assert_same(irscale.evaluate(qrels, runs, MEASURES), ref, names)


@pytest.mark.slow
def test_dl19_dicts_equal_pytrec_eval_with_float32_scores(dl19_data):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")
    qrels, runs = dl19_data
    qd, rd = nested(qrels), {n: nested(rs) for n, rs in runs.items()}
    table = irscale.evaluate(qd, rd, MEASURES, score_precision="float32")
    # trec_eval names at pytrec_eval's default relevance_level = 1 (nDCG's gain is the grade)
    names = {"map": "AP", "ndcg_cut_10": "nDCG@10", "P_10": "P@10", "recip_rank": "RR", "bpref": "bpref"}
    ev = pytrec_eval.RelevanceEvaluator(qd, set(names))
    for s, name in enumerate(table.systems):
        res = ev.evaluate(rd[name])
        for te, ours in names.items():
            ref = [res[t][te] for t in table.topics]
            np.testing.assert_allclose(
                table.values[table.index(ours), s], ref, rtol=0, atol=1e-9, err_msg=f"{name} {ours}"
            )
