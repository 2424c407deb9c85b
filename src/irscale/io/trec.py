"""Readers for TREC qrels and run files.

Both readers tokenise a whole file at once with numpy (no Python object per line), so
the 129 runs of TREC-8 (6.3 million lines) are read in a few seconds. Every problem is
reported as an :class:`~irscale.errors.InputFormatError` naming the file, the line and
what was expected; nothing is dropped silently.

Format accepted (trec_eval's):

* run lines ``qid Q0 docno rank score tag``; qrels lines ``qid iter docno grade``;
* fields separated by any whitespace (spaces, tabs); blank lines and lines whose first
  field starts with ``#`` are skipped, as trec_eval does;
* plain text or gzip (detected by content, not by the file name);
* UTF-8 (ASCII is a subset); docnos and qids are compared byte-wise.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from irscale.errors import InputFormatError

RUN_FIELDS = "qid Q0 docno rank score tag"
QRELS_FIELDS = "qid iter docno grade"

ScorePrecision = Literal["float64", "float32"]
ExtraFields = Literal["error", "ignore"]
Duplicates = Literal["error", "first"]

# grades must fit int16 beside the sentinels of irscale.data
GRADE_MIN, GRADE_MAX = -32000, 32000


def read_bytes(path: str | Path) -> bytes:
    """Return the content of ``path``, gunzipped if it is gzip (by magic number)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputFormatError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputFormatError(path, None, "is a directory, expected a file") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            # zlib is faster than gzip.decompress; wbits=47 accepts gzip, concatenated members
            d = zlib.decompressobj(wbits=47)
            out = [d.decompress(raw)]
            while d.eof and d.unused_data:  # concatenated gzip members
                rest = d.unused_data
                d = zlib.decompressobj(wbits=47)
                out.append(d.decompress(rest))
            if not d.eof:
                raise zlib.error("truncated stream")
            raw = b"".join(out)
        except (zlib.error, EOFError, gzip.BadGzipFile) as e:
            raise InputFormatError(path, None, f"corrupt gzip data ({e}); check the download or re-compress the file") from None
    return raw


@dataclass
class _Tokens:
    """Tokens of a file laid out as records: ``starts``/``ends`` are (n, nfields)."""

    buf: np.ndarray  # uint8 view of the text
    starts: np.ndarray
    ends: np.ndarray
    lines: np.ndarray  # 1-based line number of each record
    path: str
    data: bytes = field(repr=False)

    def error(self, record: int, reason: str) -> InputFormatError:
        line = int(self.lines[record])
        return InputFormatError(self.path, line, reason, _line_text(self.data, line))

    def column(self, j: int) -> np.ndarray:
        """Field ``j`` of every record as a fixed-width bytes array (dtype ``S{w}``)."""
        return gather(self.buf, self.starts[:, j], self.ends[:, j])


def _line_text(data: bytes, line: int) -> str:
    lines = data.split(b"\n", line)
    return lines[line - 1].decode("utf-8", "replace").rstrip("\r")


def gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Copy the byte ranges ``buf[starts[i]:ends[i]]`` into a fixed-width ``S`` array
    (NUL-padded, so byte-wise order is preserved)."""
    lengths = ends - starts
    width = max(int(lengths.max()), 1) if len(lengths) else 1
    padded = np.concatenate((buf, np.zeros(width, dtype=np.uint8)))
    window = np.lib.stride_tricks.as_strided(padded, shape=(len(buf), width), strides=(1, 1))
    mat = window[starts]
    mat[np.arange(width) >= lengths[:, None]] = 0
    return mat.view(f"S{width}").ravel()


def tokenize(
    data: bytes,
    path: str | Path,
    nfields: int,
    expected: str,
    extra_fields: ExtraFields = "error",
) -> _Tokens:
    """Split ``data`` into records of ``nfields`` whitespace-separated fields.

    Raises :class:`InputFormatError` on an empty file, NUL bytes (UTF-16 or binary
    files), invalid UTF-8, and on any line whose field count is not ``nfields``
    (more fields are accepted with ``extra_fields="ignore"``; the rest of such a line is
    ignored, as trec_eval does).
    """
    path = str(path)
    buf = np.frombuffer(data, dtype=np.uint8)
    if len(buf) == 0:
        raise InputFormatError(path, None, f"empty file, expected lines '{expected}'")
    nul = np.flatnonzero(buf == 0)
    if len(nul):
        line = data.count(b"\n", 0, int(nul[0])) + 1
        raise InputFormatError(
            path, line,
            "NUL byte: the file is binary or UTF-16; expected UTF-8 (or ASCII) text "
            "(convert it, for example with iconv -f UTF-16 -t UTF-8)")
    if buf.max() >= 128:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise InputFormatError(
                path, line,
                f"not UTF-8 text (byte 0x{data[e.start]:02x}); re-encode the file as UTF-8"
            ) from None
    # token boundaries: transitions of the whitespace mask (padded with whitespace)
    ctrl = np.flatnonzero((buf < 9) | ((buf > 13) & (buf < 32)))
    if len(ctrl):
        line = data.count(b"\n", 0, int(ctrl[0])) + 1
        raise InputFormatError(path, line, f"control character 0x{data[ctrl[0]]:02x}; expected text "
                                           "fields separated by spaces or tabs", _line_text(data, line))
    ws = np.empty(len(buf) + 2, dtype=np.int8)
    ws[0] = ws[-1] = 1
    np.less_equal(buf, 32, out=ws[1:-1].view(bool))  # isspace() once control characters are excluded
    step = np.diff(ws)
    edges = np.flatnonzero(step != 0)  # alternately a token's start and its end
    starts = edges[0::2]
    ends = edges[1::2]
    if len(starts) == 0:
        raise InputFormatError(path, None, f"empty file (only whitespace), expected lines '{expected}'")
    # tokens per physical line, from the index of the first token after each newline
    newlines = np.flatnonzero(buf == 10)
    after = np.searchsorted(starts, newlines)
    per_line = np.diff(np.concatenate(([0], after, [len(starts)])))
    line_no = np.flatnonzero(per_line) + 1  # 1-based numbers of non-blank lines
    counts = per_line[line_no - 1]
    first_idx = np.concatenate(([0], np.cumsum(counts)[:-1]))
    keep = None
    comment = buf[starts[first_idx]] == ord("#")
    if comment.any():
        keep = np.repeat(~comment, counts)
        counts, first_idx, line_no = counts[~comment], first_idx[~comment], line_no[~comment]
        if len(counts) == 0:
            raise InputFormatError(path, None, f"no data lines (only comments), expected '{expected}'")
    bad = counts < nfields if extra_fields == "ignore" else counts != nfields
    if bad.any():
        k = int(np.argmax(bad))
        line = int(line_no[k])
        hint = "" if counts[k] < nfields else (
            " (pass extra_fields='ignore' / --ignore-extra-fields to ignore the rest of such lines,"
            " as trec_eval does)")
        raise InputFormatError(path, line, f"expected {nfields} fields '{expected}', found {counts[k]}{hint}",
                               _line_text(data, line))
    if (counts > nfields).any():
        pos = np.arange(len(starts)) - np.repeat(first_idx, counts)
        keep = (pos < nfields) if keep is None else (keep & (pos < nfields))
    if keep is not None:
        starts, ends = starts[keep], ends[keep]
    starts = starts.reshape(-1, nfields)
    ends = ends.reshape(-1, nfields)
    return _Tokens(buf, starts, ends, line_no, path, data)


def _parse_numbers(tok: _Tokens, j: int, kind: str, what: str) -> np.ndarray:
    col = tok.column(j)
    dtype = np.float64 if kind == "float" else np.int64
    try:
        return col.astype(dtype)
    except (ValueError, OverflowError):
        for i, v in enumerate(col):  # error path only: find the first bad value
            try:
                float(v) if kind == "float" else int(v)
            except (ValueError, OverflowError):
                raise tok.error(i, f"{what} must be {'a number' if kind == 'float' else 'an integer'}, found {v.decode('utf-8', 'replace')!r}") from None
        raise


def _topic_blocks(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the distinct qids (in sorted order) for each record; O(n) when the file
    is grouped by topic, as TREC files are."""
    change = np.empty(len(qid), dtype=bool)
    change[0] = True
    change[1:] = qid[1:] != qid[:-1]
    heads = qid[change]
    topics = np.unique(heads)
    codes_heads = np.searchsorted(topics, heads).astype(np.int16 if len(topics) < 32768 else np.int32)
    codes = codes_heads[np.cumsum(change) - 1]
    return topics, codes


def _hash_rows(mat: np.ndarray) -> np.ndarray:
    """64-bit polynomial hash of each row of a uint8 matrix (wrap-around arithmetic)."""
    h = np.zeros(mat.shape[0], dtype=np.uint64)
    mult = np.uint64(1099511628211)
    with np.errstate(over="ignore"):
        for j in range(mat.shape[1]):
            h = h * mult + mat[:, j].astype(np.uint64)
    return h


def key_hash(topic_codes: np.ndarray, docno_mat: np.ndarray) -> np.ndarray:
    """64-bit hash of (topic code, docno bytes); equal keys give equal hashes."""
    with np.errstate(over="ignore"):
        return _hash_rows(docno_mat) ^ (topic_codes.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def _find_duplicates(topic_codes: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Indices (i, j) pairs of records with equal (topic, docno); exact (hash + verify)."""
    h = key_hash(topic_codes, docno.view(np.uint8).reshape(-1, docno.dtype.itemsize))
    order = np.argsort(h)
    hs = h[order]
    cand = np.flatnonzero(hs[1:] == hs[:-1])
    pairs = []
    for c in cand:
        i, j = int(order[c]), int(order[c + 1])
        if topic_codes[i] == topic_codes[j] and docno[i] == docno[j]:
            pairs.append((min(i, j), max(i, j)))
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgements, sorted by (qid, docno) byte-wise.

    Attributes are parallel arrays: ``qid`` and ``docno`` (fixed-width bytes), ``grade``
    (int16). ``topics`` lists the distinct qids (sorted byte-wise, like trec_eval).
    Negative grades are kept: they are never relevant (see the user guide).
    """

    qid: np.ndarray
    docno: np.ndarray
    grade: np.ndarray
    topics: np.ndarray
    topic_code: np.ndarray
    path: str = "<memory>"

    def __len__(self) -> int:
        return len(self.qid)

    @property
    def topic_names(self) -> list[str]:
        return [t.decode() for t in self.topics]

    @property
    def max_grade(self) -> int:
        return int(self.grade.max()) if len(self.grade) else 0

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({
            "topic": np.char.decode(self.qid, "utf-8"),
            "docno": np.char.decode(self.docno, "utf-8"),
            "grade": self.grade.astype(int),
        })

    @classmethod
    def from_records(cls, records, path: str = "<memory>") -> "Qrels":
        """Build from ``(qid, docno, grade)`` tuples (for tests and small examples)."""
        lines = "\n".join(f"{q} 0 {d} {g}" for q, d, g in records) + "\n"
        return parse_qrels(lines.encode(), path)


@dataclass(frozen=True, eq=False)
class Run:
    """A run in trec_eval order: by topic (byte-wise), score descending, docno descending.

    ``qid``/``docno`` are fixed-width bytes arrays, ``score`` float64 (already rounded
    to float32 when read with ``score_precision="float32"``); ``topics`` the distinct
    qids and ``offsets`` the start of each topic's block (``len(topics) + 1`` entries).
    """

    name: str
    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    topics: np.ndarray
    offsets: np.ndarray
    path: str = "<memory>"

    def __len__(self) -> int:
        return len(self.qid)

    @property
    def topic_names(self) -> list[str]:
        return [t.decode() for t in self.topics]

    def to_frame(self):
        import pandas as pd

        rank = np.arange(len(self)) - np.repeat(self.offsets[:-1], np.diff(self.offsets)) + 1
        return pd.DataFrame({
            "topic": np.char.decode(self.qid, "utf-8"),
            "docno": np.char.decode(self.docno, "utf-8"),
            "rank": rank,
            "score": self.score,
        })

    @classmethod
    def from_records(cls, records, name: str = "run", **kw) -> "Run":
        """Build from ``(qid, docno, score)`` tuples (for tests and small examples)."""
        lines = "\n".join(f"{q} Q0 {d} 0 {s!r} {name}" for q, d, s in records) + "\n"
        return parse_run(lines.encode(), f"<{name}>", **kw)


def parse_qrels(data: bytes, path: str | Path = "<memory>") -> Qrels:
    """Parse qrels text (see :func:`read_qrels`)."""
    tok = tokenize(data, path, 4, QRELS_FIELDS)
    qid = tok.column(0)
    docno = tok.column(2)
    grade = _parse_numbers(tok, 3, "int", "grade (4th field)")
    out = np.flatnonzero((grade < GRADE_MIN) | (grade > GRADE_MAX))
    if len(out):
        raise tok.error(int(out[0]), f"grade {grade[out[0]]} out of the supported range [{GRADE_MIN}, {GRADE_MAX}]")
    topics, codes = _topic_blocks(qid)
    dups = _find_duplicates(codes, docno)
    if len(dups):
        i, j = dups[0]
        raise tok.error(int(j), f"duplicate judgement of docno {docno[j].decode()!r} for topic {qid[j].decode()!r} (first at line {tok.lines[i]})")
    order = np.lexsort((docno, codes))
    return Qrels(qid[order], docno[order], grade[order].astype(np.int16), topics,
                 codes[order].astype(np.int32), str(path))


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file ``qid iter docno grade`` (plain or gzip).

    The ``iter`` field is ignored and may be any token. Grades are integers; a document
    is relevant for a binary measure if its grade is at least the measure's ``rel``
    (default 1). Duplicate (qid, docno) pairs are an error.

    Raises
    ------
    InputFormatError
        naming the file and line, for every malformed input.
    """
    return parse_qrels(read_bytes(path), path)


def parse_run(
    data: bytes,
    path: str | Path = "<memory>",
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
) -> Run:
    """Parse run text (see :func:`read_run`)."""
    if score_precision not in ("float64", "float32"):
        raise ValueError(f"score_precision must be 'float64' or 'float32', not {score_precision!r}")
    tok = tokenize(data, path, 6, RUN_FIELDS, extra_fields)
    qid = tok.column(0)
    docno = tok.column(2)
    score = _parse_numbers(tok, 4, "float", "score (5th field)")
    nan = np.flatnonzero(np.isnan(score))
    if len(nan):
        raise tok.error(int(nan[0]), "score is NaN; scores must be numbers")
    if score_precision == "float32":
        score = score.astype(np.float32).astype(np.float64)
    if name is None:
        tags = tok.column(5)
        name = tags[0].decode("utf-8")
        if not (tags == tags[0]).all():
            i = int(np.argmax(tags != tags[0]))
            raise tok.error(i, f"run tag {tags[i].decode()!r} differs from the first line's {name!r}; "
                               "a run file must hold one run (or pass name=... / --name to choose one)")
    topics, codes = _topic_blocks(qid)
    dups = _find_duplicates(codes, docno)
    if len(dups):
        if duplicates == "error":
            i, j = dups[0]
            raise tok.error(int(j), f"duplicate docno {docno[j].decode()!r} for topic {qid[j].decode()!r} "
                                    f"(first at line {tok.lines[i]}); pass duplicates='first' to keep only the first occurrence")
        drop = np.zeros(len(qid), dtype=bool)
        drop[dups[:, 1]] = True
        keep = ~drop
        qid, docno, score, codes = qid[keep], docno[keep], score[keep], codes[keep]
    order = trec_order(codes, score, docno)
    codes = codes[order]
    offsets = np.searchsorted(codes, np.arange(len(topics) + 1))
    return Run(name, qid[order], docno[order], score[order], topics, offsets, str(path))


def trec_order(topic_codes: np.ndarray, score: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Permutation putting records in trec_eval order: topic ascending, score
    descending, docno descending (byte-wise)."""
    # stable sorts: score desc, then topic asc (radix sort for small ints)
    o = np.argsort(-score, kind="stable")
    o = o[np.argsort(topic_codes[o], kind="stable")]  # int16 codes: numpy uses radix sort
    # tie groups (same topic and score) are ordered by docno descending
    t, s = topic_codes[o], score[o]
    same = (t[1:] == t[:-1]) & (s[1:] == s[:-1])
    if same.any():
        in_tie = np.zeros(len(o), dtype=bool)
        in_tie[1:] |= same
        in_tie[:-1] |= same
        pos = np.flatnonzero(in_tie)
        group = np.cumsum(np.r_[True, ~same])[pos]
        d = docno[o[pos]]
        inner = np.argsort(d, kind="stable")[::-1]  # docno descending
        inner = inner[np.argsort(group[inner], kind="stable")]
        o[pos] = o[pos[inner]]
    return o


def read_run(
    path: str | Path,
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
) -> Run:
    """Read a TREC run file ``qid Q0 docno rank score tag`` (plain or gzip).

    Documents of a topic are ordered like trec_eval 10: by score descending, ties broken
    by docno descending (byte-wise). The rank column is ignored.

    Parameters
    ----------
    name : str, optional
        Name of the run; default the tag column (which must then be the same on every line).
    score_precision : {"float64", "float32"}
        ``"float32"`` rounds scores to 32-bit floats before ordering, like trec_eval up
        to 9.0.8, pytrec_eval and the official results of old TREC campaigns.
    extra_fields : {"error", "ignore"}
        What to do with lines that have more than six fields (trec_eval ignores the rest).
    duplicates : {"error", "first"}
        A docno retrieved twice for one topic is an error, or only its first line is kept.
    """
    return parse_run(read_bytes(path), path, name=name, score_precision=score_precision,
                     extra_fields=extra_fields, duplicates=duplicates)
