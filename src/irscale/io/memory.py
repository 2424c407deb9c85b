"""In-memory qrels and runs: pandas DataFrames, pytrec_eval dicts, ir_measures tuples,
ranx objects and Parquet files, turned into :class:`~irscale.io.Qrels` and
:class:`~irscale.io.Run`.

The arrays are built directly with numpy (no text is formatted and parsed again), and the
rules of the TREC readers apply: a run is put in trec_eval order by
:func:`~irscale.io.trec.trec_order`, a docno retrieved twice for a topic is an error
(``duplicates="first"`` keeps the first occurrence), ``score_precision="float32"`` rounds
scores to 32-bit floats, grades are integers in [GRADE_MIN, GRADE_MAX], and a qid or
docno may not hold whitespace, control or invisible characters (a TREC file could not
hold them, and a trailing space would silently miss the qrels). Every problem is an
:class:`~irscale.errors.InputFormatError` naming the input, the row (or item, or dict
entry), the qid and docno, and saying how to fix it; nothing is dropped or changed.

Inputs accepted:

* a pandas DataFrame with ir_measures' columns (``query_id, doc_id, score`` for runs,
  ``query_id, doc_id, relevance`` for qrels) or PyTerrier's (``qid, docno, score`` /
  ``qid, docno, label``); other columns are ignored. A run frame may hold several runs in
  a ``name`` or ``run`` column (one Run per value, in order of first appearance); qids and
  docnos may be strings or integers (written as ``str()`` writes them);
* a pytrec_eval dict ``{qid: {docno: score}}`` (or ``{qid: {docno: grade}}`` for qrels),
  or ``{name: {qid: {docno: score}}}`` for several runs;
* an iterable of ir_measures' ``ScoredDoc(query_id, doc_id, score)`` or
  ``Qrel(query_id, doc_id, relevance, iteration)`` (any namedtuples with those fields;
  ir_measures need not be installed);
* ranx ``Run`` and ``Qrels`` objects (found by ``isinstance`` when ranx is imported;
  irscale never imports it);
* Parquet files (``*.parquet``) holding such a frame, read with pyarrow
  (``pip install 'irscale[parquet]'``).

pandas is imported only when an input needs it, so importing this module stays cheap.
"""

from __future__ import annotations

import itertools
import numbers
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from operator import attrgetter
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from irscale.errors import ArgumentError, InputFormatError, IrscaleError, warn
from irscale.io.trec import (
    GRADE_MAX,
    GRADE_MIN,
    Duplicates,
    Qrels,
    Run,
    ScorePrecision,
    _find_duplicates,
    _topic_blocks,
    check_reader_options,
    gather,
    grade_codes,
    hidden_characters,
    ordered_run,
)

__all__ = [
    "RUN_COLUMNS",
    "QRELS_COLUMNS",
    "NAME_COLUMNS",
    "SCORED_DOC_FIELDS",
    "QREL_FIELDS",
    "PARQUET_ADVICE",
    "runs_from_frame",
    "qrels_from_frame",
    "runs_from_dict",
    "qrels_from_dict",
    "run_from_records",
    "qrels_from_records",
    "read_parquet_runs",
    "read_parquet_qrels",
    "is_parquet",
    "memory_runs",
    "memory_qrels",
    "one_run",
    "INPUTS_RUNS",
    "INPUTS_QRELS",
]

RUN_COLUMNS = (("query_id", "doc_id", "score"), ("qid", "docno", "score"))  # ir_measures, PyTerrier
QRELS_COLUMNS = (("query_id", "doc_id", "relevance"), ("qid", "docno", "label"))
NAME_COLUMNS = ("name", "run")  # a run frame's column naming each row's run
SCORED_DOC_FIELDS = ("query_id", "doc_id", "score")  # ir_measures.ScoredDoc
QREL_FIELDS = ("query_id", "doc_id", "relevance")  # ir_measures.Qrel (its iteration field is ignored)
PARQUET_ADVICE = "pip install 'irscale[parquet]'"
INPUTS_RUNS = (
    "a pandas DataFrame (query_id, doc_id, score or qid, docno, score; several runs in a name or run "
    "column), a dict {qid: {docno: score}}, ir_measures ScoredDoc tuples, a ranx Run, a .parquet file"
)
INPUTS_QRELS = (
    "a pandas DataFrame (query_id, doc_id, relevance or qid, docno, label), a dict {qid: {docno: grade}}, "
    "ir_measures Qrel tuples, a ranx Qrels, a .parquet file"
)

_TEXT_ADVICE = (
    "qids and docnos cannot hold whitespace, control or invisible characters (a TREC file could not hold "
    "them, and they would silently miss the qrels); strip or replace them"
)


# -- where a record is, for messages --------------------------------------------------------------


class _Source:
    """An input's name (``<DataFrame>``, a path) and how to name its i-th record."""

    def __init__(self, label: str, row: Callable[[int], str]):
        self.label = label
        self.row = row  # "row 5", "item 5" or "" (dict entries are named by qid and docno)

    def error(self, reason: str, i: int | None = None, qid=None, docno=None) -> InputFormatError:
        where = [] if i is None else [self.row(i)]
        keys = ", ".join(f"{k} {_text(v)!r}" for k, v in (("qid", qid), ("docno", docno)) if v is not None)
        if keys:
            where.append(f"({keys})" if where and where[0] else keys)
        head = " ".join(w for w in where if w)
        return InputFormatError(self.label, None, f"{head}: {reason}" if head else reason)


def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _frame_rows(frame) -> Callable[[int], str]:
    import pandas as pd

    index = frame.index
    plain = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    return (lambda i: f"row {i}") if plain else (lambda i: f"row {i} (index {index[i]!r})")


def _item_rows(i: int) -> str:
    return f"item {i}"


# -- columns ------------------------------------------------------------------------------------------


def _pandas():
    import pandas as pd

    return pd


def _is_frame(obj) -> bool:
    pd = sys.modules.get("pandas")  # an object cannot be a DataFrame if pandas was never imported
    return pd is not None and isinstance(obj, pd.DataFrame)


def _is_series(obj) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.Series)


def _ranx(obj, kind: str) -> bool:
    ranx = sys.modules.get("ranx")  # never imported here: a ranx object means ranx is loaded
    cls = getattr(ranx, kind, None) if ranx is not None else None
    return isinstance(cls, type) and isinstance(obj, cls) and callable(getattr(obj, "to_dict", None))


def _int_text(v: np.ndarray) -> np.ndarray:
    """Decimal text of an integer array, as a fixed-width bytes array (vectorised)."""
    v = np.asarray(v)
    neg = v < 0 if v.dtype.kind == "i" else np.zeros(len(v), dtype=bool)
    mag = np.where(neg, -(v + 1), v).astype(np.uint64) + neg  # |v| without overflow at int64's minimum
    ndig = np.ones(len(v), dtype=np.int64)
    top = int(mag.max()) if len(v) else 0
    for k in range(1, 20):  # 10**19 < 2**64
        if 10**k > top:
            break
        ndig += mag >= np.uint64(10**k)
    width = int((ndig + neg).max()) if len(v) else 1
    mat = np.zeros((len(v), width), dtype=np.uint8)
    mat[neg, 0] = ord("-")
    rows = np.arange(len(v))
    rest = mag.copy()
    for j in range(int(ndig.max()) if len(v) else 0):  # j-th digit from the right
        has = ndig > j
        col = neg + ndig - 1 - j
        mat[rows[has], col[has]] = (rest[has] % np.uint64(10)).astype(np.uint8) + ord("0")
        rest //= np.uint64(10)
    return mat.view(f"S{width}").ravel()


def _object_values(values) -> np.ndarray:
    if _is_series(values):
        return values.to_numpy(dtype=object)
    return np.fromiter(values, dtype=object, count=len(values))


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def _bad_key(src: _Source, what: str, values, fix: str) -> InputFormatError:
    """The error for the first value that is neither a string nor an integer (error path)."""
    for i, v in enumerate(_object_values(values)):
        if _missing(v):
            return src.error(f"{what} is missing ({v!r}); every record needs a {what} ({fix})", i)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (str, numbers.Integral)):
            hint = ""
            if isinstance(v, (float, np.floating)) and float(v).is_integer():
                hint = " (a float column: were missing values filled with NaN? convert with .astype('int64'))"
            return src.error(f"{what} must be a string or an integer, found {type(v).__name__} {v!r}{hint}", i)
    raise AssertionError(f"no bad {what} found")  # a bug, not bad input


def _key_column(values, what: str, src: _Source, fix: str) -> np.ndarray:
    """qids or docnos (a Series or a sequence of str/int) as a fixed-width bytes array."""
    pd = _pandas()
    if _is_series(values):
        dt = values.dtype
        if pd.api.types.is_bool_dtype(dt):
            raise _bad_key(src, what, values, fix)
        if pd.api.types.is_integer_dtype(dt):
            if values.hasnans:
                raise _bad_key(src, what, values, fix)
            return _int_text(values.to_numpy())
        if pd.api.types.is_float_dtype(dt) or pd.api.types.is_complex_dtype(dt):
            raise _bad_key(src, what, values, fix)
        arrow = _arrow_text(values)
        if arrow is not None:
            buf, starts, ends, nulls = arrow
            if nulls:
                raise _bad_key(src, what, values, fix)
            return _checked(buf, starts, ends, what, src, sep=False)
        arr = values.to_numpy(dtype=object)
    else:
        arr = _object_values(values)
    kind = pd.api.types.infer_dtype(arr, skipna=False)
    if kind == "integer":
        try:
            return _int_text(arr.astype(np.int64))
        except OverflowError:
            strs = [str(v) for v in arr]
    elif kind == "string":
        strs = arr.tolist()
    elif kind == "mixed-integer" and all(
        isinstance(v, (str, numbers.Integral)) and not isinstance(v, (bool, np.bool_)) for v in arr
    ):
        strs = [v if isinstance(v, str) else str(int(v)) for v in arr]
    else:
        raise _bad_key(src, what, arr, fix)
    return _encode(strs, what, src)


def _arrow_text(values) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """``(bytes, starts, ends, null count)`` of a pyarrow-backed string Series (pandas 3's
    default ``str`` dtype, ``ArrowDtype(pa.string())``, Parquet columns), read from its
    buffers without a Python object per value; None for any other Series."""
    pd = _pandas()
    dt = values.dtype
    if not (
        (isinstance(dt, pd.StringDtype) and dt.storage == "pyarrow")
        or (isinstance(dt, pd.ArrowDtype) and str(dt.pyarrow_dtype) in ("string", "large_string"))
    ):
        return None
    import pyarrow as pa

    arr = values.array.__arrow_array__()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    width: type[np.signedinteger]
    if arr.type == pa.string():
        width = np.int32
    elif arr.type == pa.large_string():
        width = np.int64
    else:
        return None
    _, offsets, data = arr.buffers()
    off = np.frombuffer(offsets, dtype=width)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)
    buf = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return buf, off[:-1], off[1:], arr.null_count


def _encode(strs: list[str], what: str, src: _Source) -> np.ndarray:
    """UTF-8 bytes of ``strs``, joined by newlines, as a fixed-width array (see :func:`_checked`)."""
    try:
        data = "\n".join(strs).encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate
        i = next(k for k, s in enumerate(strs) if not _encodes(s))
        raise src.error(f"{what} {strs[i]!r} is not valid Unicode text ({e.reason})", i) from None
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    if len(nl) != len(strs) - 1:  # a string holds a newline
        i = next(k for k, s in enumerate(strs) if "\n" in s)
        raise src.error(f"{what} {strs[i]!r} holds a newline; {_TEXT_ADVICE}", i)
    return _checked(buf, np.concatenate(([0], nl + 1)), np.concatenate((nl, [len(buf)])), what, src, sep=True)


def _checked(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, what: str, src: _Source, sep: bool) -> np.ndarray:
    """The strings ``buf[starts[i]:ends[i]]`` (UTF-8, in order, contiguous but for one
    newline between two with ``sep``) as a fixed-width array, refusing empty strings and
    whitespace, control and invisible characters (checked once over all the bytes)."""
    empty = np.flatnonzero(starts == ends)
    if len(empty):
        raise src.error(f"{what} is an empty string; every record needs a {what}", int(empty[0]))
    span = buf[starts[0] : ends[-1]]

    def text(i: int) -> str:
        return buf[starts[i] : ends[i]].tobytes().decode("utf-8", "replace")

    def owner(pos: int) -> int:
        return int(np.searchsorted(starts, starts[0] + pos, side="right")) - 1

    bad = (span <= 32) | (span == 127)
    if sep:
        bad &= span != 10
    bad = np.flatnonzero(bad)
    if len(bad):
        i, ch = owner(int(bad[0])), chr(span[bad[0]])
        name = "a space" if ch == " " else "a tab" if ch == "\t" else f"control character 0x{ord(ch):02x}"
        raise src.error(f"{what} {text(i)!r} holds {name}; {_TEXT_ADVICE}", i)
    if len(span) and span.max() >= 128:
        hidden = hidden_characters(span)
        if len(hidden):
            i, pos = owner(int(hidden[0])), int(hidden[0])
            ch = span[pos : pos + 4].tobytes().decode("utf-8", "ignore")[0]
            raise src.error(f"{what} {text(i)!r} holds the invisible character U+{ord(ch):04X}; {_TEXT_ADVICE}", i)
    return gather(buf, starts, ends)


def _encodes(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _not_a_number(v) -> bool:
    return isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real)


def _number_column(values, what: str, src: _Source, qid: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Scores or grades (a Series or a sequence) as a numeric array (float64, or int64
    when every value is an integer); bools, strings and missing values are errors naming
    the record (a missing value in a float column is a NaN, found by the caller)."""
    pd = _pandas()
    if _is_series(values):
        dt = values.dtype
        if (
            pd.api.types.is_numeric_dtype(dt)
            and not pd.api.types.is_bool_dtype(dt)
            and not pd.api.types.is_complex_dtype(dt)
        ):
            if pd.api.types.is_integer_dtype(dt) and not values.hasnans:
                return values.to_numpy(dtype=np.int64)
            return values.to_numpy(dtype=np.float64, na_value=np.nan)
        arr = values.to_numpy(dtype=object)
    else:
        types = set(map(type, values))  # numpy would read True as 1.0 and "2" as text: look at each type
        if types and all(issubclass(t, numbers.Real) and not issubclass(t, (bool, np.bool_)) for t in types):
            exact = all(issubclass(t, numbers.Integral) for t in types)
            try:
                return np.asarray(values, dtype=np.int64 if exact else np.float64)
            except OverflowError:
                return np.asarray(values, dtype=np.float64)
        arr = _object_values(values)
    kind = pd.api.types.infer_dtype(arr, skipna=False)
    if kind in ("integer", "floating", "mixed-integer-float", "decimal"):
        try:
            return arr.astype(np.int64) if kind == "integer" else arr.astype(np.float64)
        except OverflowError:
            return arr.astype(np.float64)
    for i, v in enumerate(arr):
        if _missing(v):
            raise src.error(
                f"{what} is missing ({v!r}); every record needs a numeric {what} (drop the row or give it a {what})",
                i,
                qid[i],
                docno[i],
            )
        if _not_a_number(v):
            hint = " (convert the column with pandas.to_numeric)" if isinstance(v, str) else ""
            raise src.error(f"{what} must be a number, found {type(v).__name__} {v!r}{hint}", i, qid[i], docno[i])
    raise AssertionError(f"no bad {what} found")  # a bug, not bad input


def _scores(values, src: _Source, qid, docno, score_precision: str) -> np.ndarray:
    score = np.asarray(_number_column(values, "score", src, qid, docno), dtype=np.float64)
    nan = np.flatnonzero(np.isnan(score))
    if len(nan):
        i = int(nan[0])
        raise src.error(
            "score is missing or NaN; every retrieved document needs a numeric score (drop the row or give it a score)",
            i,
            qid[i],
            docno[i],
        )
    if score_precision == "float32":
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as in the file reader
            score = score.astype(np.float32).astype(np.float64)
    return score


def _grades(values, src: _Source, qid, docno) -> tuple[np.ndarray, tuple | None]:
    """Grade codes and the value of each code (:func:`irscale.io.trec.grade_codes`): whole
    numbers are their own codes; a float column with other values is real-valued, each
    float read as the decimal it is written as (0.1 is 1/10)."""
    from fractions import Fraction

    grade = _number_column(values, "grade", src, qid, docno)
    if grade.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(grade))
        if len(bad):
            i = int(bad[0])
            found = "is missing or NaN" if np.isnan(grade[i]) else f"must be finite, found {float(grade[i])!r}"
            raise src.error(
                f"grade {found}; grades are relevance levels (0 not relevant, 1, 2, ... or real values like 0.5)",
                i,
                qid[i],
                docno[i],
            )
        big = np.flatnonzero(np.abs(grade) > GRADE_MAX)
        if len(big):
            i = int(big[0])
            raise src.error(
                f"grade {grade[i]!r} out of the supported range [{GRADE_MIN}, {GRADE_MAX}]", i, qid[i], docno[i]
            )
        if (grade != np.floor(grade)).any():
            distinct, inverse = np.unique(grade, return_inverse=True)
            codes, levels = grade_codes([Fraction(repr(float(v))) for v in distinct], inverse.reshape(-1), src.label)
            if levels is not None:  # (a negative grade that is not whole reads as -1: no real values)
                i = int(np.flatnonzero((grade > 0) & (grade != np.floor(grade)))[0])
                at = src.row(i) or f"qid {_text(qid[i])!r}, docno {_text(docno[i])!r}"
                warn(
                    f"{src.label}, {at}: grade {float(grade[i])!r} is not a whole number, so grades are real "
                    f"values; trec_eval reads {int(grade[i])} (whole-number grades give its numbers)",
                    stacklevel=4,
                )
            return codes, levels
    grade = grade.astype(np.int64)
    out = np.flatnonzero((grade < GRADE_MIN) | (grade > GRADE_MAX))
    if len(out):
        i = int(out[0])
        raise src.error(
            f"grade {int(grade[i])} out of the supported range [{GRADE_MIN}, {GRADE_MAX}]", i, qid[i], docno[i]
        )
    return grade, None


# -- building Run and Qrels ----------------------------------------------------------------------


def _make_run(name: str, qid, docno, score, src: _Source, duplicates: str, rows: np.ndarray | None = None) -> Run:
    """The run of these records (``rows``: their record numbers in the input, for messages)."""
    topics, codes = _topic_blocks(qid)
    dups = _find_duplicates(codes, docno)
    if len(dups):
        if duplicates == "error":
            i, j = (int(k) for k in dups[0])
            first, dup = (i, j) if rows is None else (int(rows[i]), int(rows[j]))
            again = src.row(first) or "an earlier entry"
            raise src.error(
                f"docno retrieved twice for this topic (first at {again}); to keep only the first "
                "occurrence pass duplicates='first' (CLI --duplicates first)",
                dup,
                qid[j],
                docno[j],
            )
    return ordered_run(name, docno, score, topics, codes, dups[:, 1], src.label)


def _make_qrels(qid, docno, graded: tuple[np.ndarray, tuple | None], src: _Source) -> Qrels:
    grade, values = graded
    topics, codes = _topic_blocks(qid)
    dups = _find_duplicates(codes, docno)
    if len(dups):
        i, j = (int(k) for k in dups[0])
        again = src.row(i) or "an earlier entry"
        raise src.error(
            f"document judged twice for this topic (first at {again}); keep one judgement per (qid, docno)",
            j,
            qid[j],
            docno[j],
        )
    order = np.lexsort((docno, codes))
    return Qrels(
        qid[order],
        docno[order],
        grade[order].astype(np.int16),
        topics,
        codes[order].astype(np.int32),
        src.label,
        values,
    )


def _check_name(name, what: str = "name") -> str | None:
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ArgumentError(f"{what} must be a non-empty string naming the run, not {name!r}")
    return name


def _options(score_precision, duplicates) -> None:
    check_reader_options(score_precision, "error", duplicates)


def _empty(src: _Source, kind: str) -> InputFormatError:
    return src.error(
        f"empty {kind}: it holds no record; give at least one (qid, docno, {'score' if kind == 'run' else 'grade'})"
    )


# -- DataFrames ----------------------------------------------------------------------------------


def _columns(frame, sets, src: _Source, kind: str) -> tuple[str, str, str]:
    cols = [c for c in frame.columns]
    found = [s for s in sets if all(c in cols for c in s)]
    if len(found) == 1:
        return found[0]
    accepted = " or ".join(f"({', '.join(s)})" for s in sets)
    if found:
        raise src.error(
            f"the frame has both {' and '.join(str(s) for s in found)} columns; a {kind} frame needs "
            f"exactly one of the column sets {accepted}: drop the other"
        )
    near = max(sets, key=lambda s: sum(c in cols for c in s))
    lacking = [c for c in near if c not in cols]
    shown = ", ".join(map(str, cols[:12])) + (", ..." if len(cols) > 12 else "")
    raise src.error(
        f"a {kind} frame needs the columns {accepted} (ir_measures' or PyTerrier's names); "
        f"missing column {', '.join(map(repr, lacking))} (columns: {shown}); rename them, for example "
        f"frame.rename(columns={{...}})"
    )


def runs_from_frame(
    frame,
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    duplicates: Duplicates = "error",
    path: str = "<DataFrame>",
) -> list[Run]:
    """The runs of a pandas DataFrame: one, or one per value of its ``name`` or ``run`` column.

    Columns ``query_id, doc_id, score`` (ir_measures) or ``qid, docno, score``
    (PyTerrier); others are ignored. Runs are named by the ``name``/``run`` column (in
    order of first appearance), else by ``name``, ``frame.attrs["name"]`` or ``"run"``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "c"], "score": [1.0, 3.0, 1.0]})
    >>> [(r.name, r.docno.tolist()) for r in runs_from_frame(df)]
    [('run', [b'b', b'c', b'a'])]
    """
    _options(score_precision, duplicates)
    name = _check_name(name)
    src = _Source(path, _frame_rows(frame))
    q, d, s = _columns(frame, RUN_COLUMNS, src, "run")
    if len(frame) == 0:
        raise _empty(src, "run")
    qid = _key_column(frame[q], "qid", src, "fill the missing values or drop those rows")
    docno = _key_column(frame[d], "docno", src, "fill the missing values or drop those rows")
    score = _scores(frame[s], src, qid, docno, score_precision)
    by = [c for c in NAME_COLUMNS if c in frame.columns]
    if len(by) > 1:
        raise src.error("the frame has both a 'name' and a 'run' column; keep the one that names each row's run")
    if not by:
        default = frame.attrs.get("name") if isinstance(frame.attrs.get("name"), str) else "run"
        return [_make_run(name or default, qid, docno, score, src, duplicates)]
    codes, uniq = _pandas().factorize(frame[by[0]], sort=False)
    if (codes < 0).any():
        raise src.error(f"run name (column {by[0]!r}) is missing; name every row's run", int(np.argmax(codes < 0)))
    names = [str(u) for u in uniq]
    blank = [n for n in names if not n.strip()]
    if blank:
        i = int(np.argmax(codes == names.index(blank[0])))
        raise src.error(f"run name (column {by[0]!r}) is {blank[0]!r}; name every row's run", i)
    if name is not None:
        if len(names) > 1:
            shown = ", ".join(map(repr, names[:5])) + (", ..." if len(names) > 5 else "")
            raise ArgumentError(
                f"{path}: name={name!r} renames a single run, but the frame holds {len(names)} runs "
                f"(column {by[0]!r}: {shown}); leave name out to name each run by that column"
            )
        names = [name]
    if len(names) == 1:
        return [_make_run(names[0], qid, docno, score, src, duplicates)]
    records = np.argsort(codes, kind="stable")  # grouped by run, row order within a run
    bounds = np.searchsorted(codes[records], np.arange(len(names) + 1))
    out = []
    for g, n in enumerate(names):
        rows = records[bounds[g] : bounds[g + 1]]
        out.append(_make_run(n, qid[rows], docno[rows], score[rows], src, duplicates, rows))
    return out


def qrels_from_frame(frame, *, path: str = "<DataFrame>") -> Qrels:
    """Qrels from a pandas DataFrame with columns ``query_id, doc_id, relevance``
    (ir_measures) or ``qid, docno, label`` (PyTerrier); others are ignored.

    Examples
    --------
    >>> import pandas as pd
    >>> q = qrels_from_frame(pd.DataFrame({"query_id": [1, 1], "doc_id": ["b", "a"], "relevance": [0, 2]}))
    >>> q.docno.tolist(), q.grade.tolist(), q.topic_names
    ([b'a', b'b'], [2, 0], ['1'])
    """
    src = _Source(path, _frame_rows(frame))
    q, d, g = _columns(frame, QRELS_COLUMNS, src, "qrels")
    if len(frame) == 0:
        raise _empty(src, "qrels")
    qid = _key_column(frame[q], "qid", src, "fill the missing values or drop those rows")
    docno = _key_column(frame[d], "docno", src, "fill the missing values or drop those rows")
    return _make_qrels(qid, docno, _grades(frame[g], src, qid, docno), src)


# -- pytrec_eval dicts ------------------------------------------------------------------------------


def _flatten(d: Mapping, what: str, src: _Source):
    """qid, docno (bytes arrays) and the values of ``{qid: {docno: value}}``, with the
    message context of each record."""
    keys: list[Any] = []
    counts: list[int] = []
    docnos: list[Any] = []
    values: list[Any] = []
    for q, docs in d.items():
        if not isinstance(docs, Mapping):
            raise src.error(
                f"the value of qid {q!r} is {type(docs).__name__} {docs!r:.60}; a {what} dict is "
                f"{{qid: {{docno: {'score' if what == 'run' else 'grade'}}}}}"
            )
        keys.append(q)
        counts.append(len(docs))
        docnos.extend(docs.keys())
        values.extend(docs.values())
    if not docnos:
        raise _empty(src, what)
    per_topic = np.array(counts)
    topic_of = np.repeat(np.arange(len(keys)), per_topic)
    key_src = _Source(src.label, lambda i: f"key {keys[i]!r}")
    qid = np.repeat(_key_column(keys, "qid", key_src, "qids are the dict's keys"), per_topic)
    doc_src = _Source(src.label, lambda i: f"entry [{keys[topic_of[i]]!r}][{docnos[i]!r}]")
    docno = _key_column(docnos, "docno", doc_src, "docnos are the inner dicts' keys")
    return qid, docno, values


def _is_multi_run(d: Mapping) -> bool:
    for docs in d.values():
        if isinstance(docs, Mapping):
            for v in docs.values():
                return isinstance(v, Mapping)
    return False


def runs_from_dict(
    d: Mapping,
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    duplicates: Duplicates = "error",
    path: str = "<dict>",
) -> list[Run]:
    """The run of a pytrec_eval dict ``{qid: {docno: score}}`` (named ``name``, default
    ``"run"``), or the runs of ``{name: {qid: {docno: score}}}``.

    Examples
    --------
    >>> [(r.name, r.docno.tolist()) for r in runs_from_dict({"1": {"a": 0.5, "b": 2}}, name="bm25")]
    [('bm25', [b'b', b'a'])]
    """
    _options(score_precision, duplicates)
    name = _check_name(name)
    if not isinstance(d, Mapping):
        raise ArgumentError(f"a run dict {{qid: {{docno: score}}}} was expected, not {type(d).__name__}")
    if _is_multi_run(d):
        if name is not None:
            raise ArgumentError(
                f"{path}: name={name!r} renames a single run, but the dict holds {len(d)} runs "
                "({name: {qid: {docno: score}}}); leave name out to name each run by its key"
            )
        out = []
        for n, run in d.items():
            n = _check_name(n if isinstance(n, str) else str(n), "each run's key")
            if not isinstance(run, Mapping):
                raise InputFormatError(
                    path,
                    None,
                    f"run {n!r} is {type(run).__name__}; a dict of runs is {{name: {{qid: {{docno: score}}}}}}",
                )
            out.extend(
                runs_from_dict(
                    run, name=n, score_precision=score_precision, duplicates=duplicates, path=f"{path}[{n!r}]"
                )
            )
        return out
    src = _Source(path, lambda i: "")
    qid, docno, values = _flatten(d, "run", src)
    return [_make_run(name or "run", qid, docno, _scores(values, src, qid, docno, score_precision), src, duplicates)]


def qrels_from_dict(d: Mapping, *, path: str = "<dict>") -> Qrels:
    """Qrels from a pytrec_eval dict ``{qid: {docno: grade}}``.

    Examples
    --------
    >>> qrels_from_dict({"1": {"a": 1, "b": 0}}).grade.tolist()
    [1, 0]
    """
    if not isinstance(d, Mapping):
        raise ArgumentError(f"a qrels dict {{qid: {{docno: grade}}}} was expected, not {type(d).__name__}")
    src = _Source(path, lambda i: "")
    qid, docno, values = _flatten(d, "qrels", src)
    return _make_qrels(qid, docno, _grades(values, src, qid, docno), src)


# -- ir_measures tuples -----------------------------------------------------------------------------


def _has_fields(obj, fields) -> bool:
    have = getattr(type(obj), "_fields", None)
    return isinstance(obj, tuple) and isinstance(have, tuple) and all(f in have for f in fields)


def _peek(obj, fields) -> tuple[bool, object]:
    """Whether ``obj`` is an iterable of namedtuples with ``fields`` (judged by its first
    item), and ``obj`` itself (an iterator is chained back together after the look)."""
    if isinstance(obj, (str, bytes, os.PathLike, Mapping)) or _is_frame(obj) or _has_fields(obj, fields):
        return False, obj
    if isinstance(obj, (list, tuple)):
        return bool(obj) and _has_fields(obj[0], fields), obj
    if isinstance(obj, Iterator):
        try:
            first = next(obj)
        except StopIteration:
            return False, []
        return _has_fields(first, fields), itertools.chain([first], obj)
    return False, obj


def _records(records, fields, kind: str, path: str):
    rows = list(records)
    src = _Source(path, _item_rows)
    if not rows:
        raise _empty(src, kind)
    cols = []
    for f in fields:
        try:
            cols.append(list(map(attrgetter(f), rows)))
        except AttributeError:
            i = next(k for k, r in enumerate(rows) if not hasattr(r, f))
            raise src.error(
                f"{type(rows[i]).__name__} {rows[i]!r:.80} has no field {f!r}; every item must be a "
                f"namedtuple with the fields {', '.join(fields)} (like the first)",
                i,
            ) from None
    qid = _key_column(cols[0], "qid", src, "query_id")
    docno = _key_column(cols[1], "docno", src, "doc_id")
    return src, qid, docno, cols[2]


def run_from_records(
    records,
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    duplicates: Duplicates = "error",
    path: str = "<ScoredDoc records>",
) -> Run:
    """The run made of ir_measures ``ScoredDoc(query_id, doc_id, score)`` tuples (any
    namedtuples with those fields), named ``name`` (default ``"run"``).

    Examples
    --------
    >>> from collections import namedtuple
    >>> ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")
    >>> run_from_records([ScoredDoc("1", "a", 1.0), ScoredDoc("1", "b", 2.0)]).docno.tolist()
    [b'b', b'a']
    """
    _options(score_precision, duplicates)
    name = _check_name(name)
    src, qid, docno, values = _records(records, SCORED_DOC_FIELDS, "run", path)
    return _make_run(name or "run", qid, docno, _scores(values, src, qid, docno, score_precision), src, duplicates)


def qrels_from_records(records, *, path: str = "<Qrel records>") -> Qrels:
    """Qrels from ir_measures ``Qrel(query_id, doc_id, relevance, iteration)`` tuples (any
    namedtuples with the first three fields; ``iteration`` is ignored).

    Examples
    --------
    >>> from collections import namedtuple
    >>> Qrel = namedtuple("Qrel", "query_id doc_id relevance")
    >>> qrels_from_records([Qrel("1", "a", 2)]).grade.tolist()
    [2]
    """
    src, qid, docno, values = _records(records, QREL_FIELDS, "qrels", path)
    return _make_qrels(qid, docno, _grades(values, src, qid, docno), src)


# -- Parquet ----------------------------------------------------------------------------------------


def is_parquet(path) -> bool:
    """Whether ``path`` names a Parquet file (by its ``.parquet`` suffix)."""
    return (
        isinstance(path, (str, os.PathLike)) and not isinstance(path, bytes) and Path(path).suffix.lower() == ".parquet"
    )


def _read_parquet(path):
    try:
        import pyarrow
    except ImportError:
        raise IrscaleError(
            f"{path}: reading Parquet files needs pyarrow, which is not installed: {PARQUET_ADVICE}"
        ) from None
    pd = _pandas()
    p = Path(path)
    if not p.exists():
        raise InputFormatError(path, None, "no such file")
    if p.is_dir():
        raise InputFormatError(path, None, "is a directory, expected a Parquet file")
    try:
        return pd.read_parquet(p, engine="pyarrow")
    except (OSError, ValueError, pyarrow.ArrowException) as e:
        raise InputFormatError(path, None, f"not a valid Parquet file ({e})") from None


def read_parquet_runs(
    path: str | os.PathLike,
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    duplicates: Duplicates = "error",
) -> list[Run]:
    """The runs of a Parquet file holding a run frame (see :func:`runs_from_frame`); a
    run without a ``name``/``run`` column is named ``name`` or after the file
    (``bm25.parquet``: ``bm25``). Needs pyarrow (``pip install 'irscale[parquet]'``)."""
    _options(score_precision, duplicates)
    frame = _read_parquet(path)
    if name is None and not any(c in frame.columns for c in NAME_COLUMNS):
        name = Path(path).stem
    return runs_from_frame(frame, name=name, score_precision=score_precision, duplicates=duplicates, path=str(path))


def read_parquet_qrels(path: str | os.PathLike) -> Qrels:
    """Qrels from a Parquet file holding a qrels frame (see :func:`qrels_from_frame`).
    Needs pyarrow (``pip install 'irscale[parquet]'``)."""
    return qrels_from_frame(_read_parquet(path), path=str(path))


# -- any in-memory input ------------------------------------------------------------------------------


def one_run(runs) -> tuple[bool, object]:
    """Whether ``runs`` is a single in-memory run (a DataFrame, a run dict, a ranx Run,
    an iterable of ScoredDoc tuples) rather than a list of runs, and ``runs`` itself
    (an iterator is chained back together after its first item is looked at)."""
    if _is_frame(runs) or isinstance(runs, Mapping) or _ranx(runs, "Run"):
        return True, runs
    return _peek(runs, SCORED_DOC_FIELDS)


class _RunOptions(TypedDict):
    """The reading options memory_runs passes on to each reader."""

    score_precision: ScorePrecision
    duplicates: Duplicates


def memory_runs(
    obj,
    *,
    name: str | None = None,
    position: int | None = None,
    score_precision: ScorePrecision = "float64",
    duplicates: Duplicates = "error",
) -> list[Run] | None:
    """The runs of an in-memory input, or None if ``obj`` is none (a path, a Run...).

    ``position`` (1-based, in a list of runs) names an unnamed run ``run<position>`` and
    the input ``<DataFrame #position>`` in messages; without it, ``run`` and
    ``<DataFrame>``. A multi-run frame or dict names its runs itself.
    """
    tag = "" if position is None else f" #{position}"
    default = name or ("run" if position is None else f"run{position}")
    opts: _RunOptions = {"score_precision": score_precision, "duplicates": duplicates}
    if _is_frame(obj):
        own = obj.attrs.get("name") if isinstance(obj.attrs.get("name"), str) else None
        multi = any(c in obj.columns for c in NAME_COLUMNS)
        return runs_from_frame(obj, name=name or (None if multi else own or default), path=f"<DataFrame{tag}>", **opts)
    if isinstance(obj, Mapping):
        return runs_from_dict(obj, name=None if _is_multi_run(obj) else name or default, path=f"<dict{tag}>", **opts)
    if _ranx(obj, "Run"):
        own = obj.name if isinstance(getattr(obj, "name", None), str) and obj.name.strip() else None
        return runs_from_dict(obj.to_dict(), name=name or own or default, path=f"<ranx Run{tag}>", **opts)
    is_records, obj = _peek(obj, SCORED_DOC_FIELDS)
    if is_records:
        return [run_from_records(obj, name=default, path=f"<ScoredDoc records{tag}>", **opts)]
    return None


def memory_qrels(obj) -> Qrels | None:
    """Qrels from an in-memory input (a DataFrame, a dict, Qrel tuples, a ranx Qrels), or
    None if ``obj`` is none of them."""
    if _is_frame(obj):
        return qrels_from_frame(obj)
    if isinstance(obj, Mapping):
        return qrels_from_dict(obj)
    if _ranx(obj, "Qrels"):
        return qrels_from_dict(obj.to_dict(), path="<ranx Qrels>")
    is_records, obj = _peek(obj, QREL_FIELDS)
    if is_records:
        return qrels_from_records(obj)
    return None
