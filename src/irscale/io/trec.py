r"""Readers for TREC qrels and run files.

Both readers tokenise a whole file at once with numpy (no Python object per line), so
the 129 runs of TREC-8 (6.3 million lines) are read in a few seconds. Every problem is
reported as an :class:`~irscale.errors.InputFormatError` naming the file, the line and
what was expected; nothing is dropped silently.

Format accepted (trec_eval's):

* run lines ``qid Q0 docno rank score tag``; qrels lines ``qid iter docno grade``;
* blank lines and lines whose first field starts with ``#`` are skipped, as trec_eval
  does;
* plain text or gzip (detected by content, not by the file name);
* UTF-8 (ASCII is a subset); docnos and qids are compared byte-wise. A UTF-8 byte-order
  mark at the very start of the (decompressed) file is dropped with an
  :class:`~irscale.errors.IrscaleWarning`; one anywhere else is an error;
* fields are separated by any ASCII whitespace: spaces and tabs (bytes 9-13 and 32, so
  CRLF line ends work too). Other control characters (NUL, C0 and C1 controls, DEL),
  Unicode spaces (non-breaking space U+00A0, U+2000-U+200A, ideographic space U+3000,
  ...), line and paragraph separators, the zero-width space U+200B and the word joiner
  U+2060 would silently become part of a qid or docno, so they are errors naming the line;
* scores are plain decimal numbers, ``[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?`` with
  ASCII digits ``\d``, or ``inf``/``infinity``/``nan`` in any case with an optional sign
  (a NaN score is then an error); grades are plain integers ``[+-]?\d+`` in
  [GRADE_MIN, GRADE_MAX], or decimals (``0.5``, ``1.75``, ``2.5e-1``: real-valued grades,
  read exactly as fractions from their text; see :func:`read_qrels`). Python spellings
  that C's ``atof`` (trec_eval) reads differently, such as ``1_000`` (atof: 1), non-ASCII
  digits and C99's hexadecimal floats are errors rather than silently different numbers;
* a run file holds one run (one tag): :func:`read_runs` with ``split_tags=True`` reads a
  file with several tags as one run per tag;
* a run file may open with an ir_metadata header (Breuer et al., SIGIR 2022): YAML lines,
  each prefixed with ``#``, between the lines ``# ir_metadata.start`` and
  ``# ir_metadata.end``, before the first run line. Its lines are comments to the run
  (trec_eval skips them too); the header is parsed with PyYAML and kept as the run's
  :attr:`Run.metadata`. Only the comment and blank lines at the top of a file are looked
  at, so a file without a header costs nothing more to read.

Error messages show invisible and control characters escaped (:func:`irscale.errors.show`).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import os
import re
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from irscale.errors import ArgumentError, InputFormatError, check_choice, warn
from irscale.io.ir_metadata import header_text, ir_metadata
from irscale.kernels import compiled
from irscale.validate import decimal_text

__all__ = [
    "BOM",
    "by_topic_and_docno",
    "check_reader_options",
    "Duplicates",
    "ExtraFields",
    "gather",
    "grade_codes",
    "GRADE_EXPONENT",
    "GRADE_SYNTAX",
    "grade_text",
    "hidden_characters",
    "inflater",
    "key_hash",
    "Metadata",
    "ordered_run",
    "parse_grades",
    "parse_qrels",
    "parse_run",
    "parse_runs",
    "parse_scores",
    "PIECE_BYTES",
    "Qrels",
    "QRELS_FIELDS",
    "read_bytes",
    "read_qrels",
    "read_run",
    "read_runs",
    "Run",
    "RUN_FIELDS",
    "SCORE_SYNTAX",
    "ScorePrecision",
    "SWAP_PAIRS",
    "SWAP_SHARE",
    "text_pieces",
    "tokenize",
    "trec_eval_grade",
    "trec_order",
    "write_run",
]


RUN_FIELDS = "qid Q0 docno rank score tag"
QRELS_FIELDS = "qid iter docno grade"

ScorePrecision = Literal["float64", "float32"]
ExtraFields = Literal["error", "ignore"]
Duplicates = Literal["error", "first"]
Metadata = Literal["error", "warn", "ignore"]


# grades must fit int16 beside the sentinels of irscale.data
GRADE_MIN, GRADE_MAX = -32000, 32000

BOM = b"\xef\xbb\xbf"

# Characters that must not hide inside a field: C1 controls and the non-breaking space
# (U+0080-U+00A0), Ogham space mark U+1680, U+2000-U+200B (spaces, zero-width space),
# line/paragraph separators U+2028/U+2029, narrow no-break space U+202F, medium
# mathematical space U+205F, word joiner U+2060, ideographic space U+3000, and the
# byte-order mark U+FEFF (allowed only at the very start of a file). Found in valid UTF-8
# by their bytes: a two-byte sequence c2 80-a0, or one of these three-byte sequences.
_HIDDEN_3 = np.array(
    sorted(
        int.from_bytes(chr(c).encode(), "big")
        for c in [0x1680, *range(0x2000, 0x200C), 0x2028, 0x2029, 0x202F, 0x205F, 0x2060, 0x3000, 0xFEFF]
    ),
    dtype=np.uint32,
)
_CHAR_NAMES = {
    0xA0: "non-breaking space",
    0x85: "next-line control character",
    0x200B: "zero-width space",
    0x202F: "narrow non-breaking space",
    0x2060: "word joiner",
    0x3000: "ideographic space",
}


# strict number syntax (C's strtod without hex floats; no Python underscores or Unicode digits)
_SCORE_RE = re.compile(rb"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))\Z")
_GRADE_RE = re.compile(rb"[+-]?[0-9]+\Z")
# bytes of the columns (NUL is the padding of the fixed-width column): those of decimal
# numbers, and the letters of inf/infinity/nan
_NUMBER_BYTES = b"\x000123456789+-.eE"
_INTEGER_BYTES = b"\x000123456789+-"
_INF_NAN_BYTES = b"infatyINFATY"
_INF_NAN_LUT = np.zeros(256, dtype=bool)
_INF_NAN_LUT[list(_INF_NAN_BYTES)] = True
SCORE_SYNTAX = "write a plain decimal number like 12.5 or 1.2e-3"
GRADE_SYNTAX = "write a plain integer like 2 or -1, or a decimal like 0.5"
# real-valued grades: decimals with an exponent of at most GRADE_EXPONENT digits' worth
_REAL_GRADE_RE = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\Z")
GRADE_EXPONENT = 30


def read_bytes(path: str | Path) -> bytes:
    """Return the content of ``path``, gunzipped if it is gzip (by magic number)."""
    return b"".join(_decompressed(_path(path)))


PIECE_BYTES = 1 << 24  # runs are read and tokenised 16 MB of text at a time (memory: see _parse_runs)


def _open_raw(path: str | Path):
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputFormatError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputFormatError(path, None, "is a directory, expected a file") from None


def inflater(name: str | None = None):
    """``(module, errors)``: the zlib-compatible inflater gzip runs are read with, and the
    exceptions its corrupt data raises. ISA-L's (``isal.isal_zlib``, a dependency where it
    has wheels: 3.1x Python's zlib on TREC-8's runs, bench/decompress.py) where installed,
    else Python's ``zlib``; ``name`` ("isal" or "zlib") asks for one (tests compare them),
    as does the environment variable ``IRSCALE_INFLATE``."""
    name = (name or os.environ.get("IRSCALE_INFLATE") or "isal").strip().lower()
    if name == "isal":
        try:
            from isal import isal_zlib

            return isal_zlib, (zlib.error, isal_zlib.error)
        except ImportError:
            pass
    elif name != "zlib":
        raise ArgumentError(f"IRSCALE_INFLATE must be 'isal' or 'zlib', not {name!r}")
    return zlib, (zlib.error,)


def _decompressed(path: str | Path, size: int | None = None, read: list | None = None):
    """The content of ``path`` (gunzipped if it is gzip, by magic number; concatenated
    members included) in pieces of at most ``size`` bytes, with :func:`read_bytes`'s
    errors; never more than one piece and one block of compressed data in memory.
    ``read``, if given, becomes [bytes of the file read so far, its size]."""
    size = size or PIECE_BYTES
    read = [0, 0] if read is None else read
    with _open_raw(path) as f:
        read[:] = [0, os.fstat(f.fileno()).st_size]
        head = f.read(2)
        f.seek(0)
        if head != b"\x1f\x8b":
            while block := f.read(size):
                read[0] += len(block)
                yield block
            return
        lib, errors = inflater()
        try:
            d, fed = lib.decompressobj(wbits=47), False  # 47: gzip (and zlib) headers
            while raw := f.read(1 << 22):
                read[0] += len(raw)
                while raw:
                    fed = True
                    out = d.decompress(raw, size)
                    if out:
                        yield out
                    if d.eof:  # the end of a member: what follows is the next one
                        raw = d.unused_data
                        d, fed = lib.decompressobj(wbits=47), False
                    else:
                        raw = d.unconsumed_tail
            while fed and not d.eof and (out := d.decompress(b"", size)):  # output still held back
                yield out
            if fed and not d.eof:
                raise zlib.error("truncated stream")
        except (*errors, EOFError) as e:
            raise InputFormatError(
                path, None, f"corrupt gzip data ({e}); check the download or re-compress the file"
            ) from None


def text_pieces(source: str | Path | bytes, size: int | None = None, read: list | None = None):
    """``(first line number, text)`` pieces of a file (path, plain or gzip) or of bytes,
    about ``size`` (default :data:`PIECE_BYTES`) bytes each and cut after a newline, so
    every line lies in one piece. ``read``: see :func:`_decompressed`."""
    line = 1
    for piece in _pieces(source, size, read):
        yield line, piece
        line += piece.count(b"\n")


def _pieces(source: str | Path | bytes, size: int | None = None, read: list | None = None):
    """The text of :func:`text_pieces` without line numbers (the run reader takes them
    from the tokenizer, which counts the newlines as it goes)."""
    size = size or PIECE_BYTES
    if isinstance(source, (bytes, bytearray, memoryview)):
        blocks = [source]
        if read is not None:
            read[:] = [len(source), len(source)]
    else:
        blocks = _decompressed(source, size, read)
    rest, first = b"", True
    for block in blocks:
        data = rest + block if rest else block
        start = 0
        while len(data) - start > size:
            cut = data.rfind(b"\n", start, start + size) + 1 or data.find(b"\n", start + size) + 1
            if cut == 0:  # one line longer than the rest: wait for its end
                break
            yield data[start:cut]
            first = False
            start = cut
        rest = data[start:]
    if rest or first:
        yield rest


def _line_of(source: str | Path | bytes, line: int) -> str:
    """The text of line ``line`` (1-based) of a file or bytes (error messages only)."""
    for first, piece in text_pieces(source):
        if line < first + piece.count(b"\n") + (not piece.endswith(b"\n")):
            if first == 1 and piece.startswith(BOM):
                piece = piece[len(BOM) :]
            return _line_text(piece, line - first + 1)
    return ""


@dataclass
class _Records:
    """Where the records of a file read in pieces came from, for error messages."""

    path: str
    source: str | Path | bytes  # the path or bytes, read again for the text of an offending line
    starts: np.ndarray  # index of each piece's first record (ascending)
    lines: list  # per piece: its records' line numbers, or (an int) the first one when consecutive

    def line(self, record: int) -> int:
        k = int(np.searchsorted(self.starts, record, side="right")) - 1
        at = self.lines[k]
        return int(at + record - self.starts[k]) if isinstance(at, int) else int(at[record - self.starts[k]])

    def error(self, record: int, reason: str) -> InputFormatError:
        line = self.line(record)
        return InputFormatError(self.path, line, reason, _line_of(self.source, line))

    def lines_of(self, records: np.ndarray) -> np.ndarray:
        """The line number of each of ``records`` (:meth:`line`, for many)."""
        records = np.asarray(records, dtype=np.int64)
        k = np.searchsorted(self.starts, records, side="right") - 1
        out = np.empty(len(records), dtype=np.int64)
        for piece in np.unique(k):
            at, mine = self.lines[piece], k == piece
            offset = records[mine] - self.starts[piece]
            out[mine] = at + offset if isinstance(at, int) else np.asarray(at)[offset]
        return out

    def field_text(self, records: np.ndarray, j: int) -> list[bytes]:
        """Field ``j`` (0-based) of each of ``records``, read again from the source (b"" where
        the line has fewer fields): for a rare check that needs a column the parser skips."""
        lines = self.lines_of(records)
        want: dict[int, bytes | None] = {int(n): None for n in lines}
        for first, piece in text_pieces(self.source):
            if first == 1 and piece.startswith(BOM):
                piece = piece[len(BOM) :]
            for n, text in enumerate(piece.split(b"\n"), first):
                if n in want:
                    fields = text.split()
                    want[n] = fields[j] if len(fields) > j else b""
        return [want[int(n)] or b"" for n in lines]


def _shifted(e: InputFormatError, first: int) -> InputFormatError:
    """``e`` raised in a piece whose first line is ``first``, with the file's line number."""
    return InputFormatError(e.path, None if e.line is None else e.line + first - 1, e.reason, e.text)


@dataclass
class _Tokens:
    """Tokens of a file laid out as records: ``starts``/``ends`` are (n, nfields)."""

    buf: np.ndarray  # uint8 view of the text
    starts: np.ndarray
    ends: np.ndarray
    lines: np.ndarray  # 1-based line number of each record
    path: str
    data: bytes = field(repr=False)
    fields: tuple | None = None  # the fields kept, when not all (starts[:, k] is field fields[k])
    blank: bool = False  # (a piece of a file without records) not even a comment line
    newlines: int = 0  # newline bytes in data (the first line of the next piece follows)
    changed: dict = field(default_factory=dict)  # field -> the compiled pass's _changes of it

    def error(self, record: int, reason: str) -> InputFormatError:
        line = int(self.lines[record])
        return InputFormatError(self.path, line, reason, _line_text(self.data, line))

    def span(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Start and end offsets of field ``j`` in every record."""
        k = j if self.fields is None else self.fields.index(j)
        return self.starts[:, k], self.ends[:, k]

    def column(self, j: int) -> np.ndarray:
        """Field ``j`` of every record as a fixed-width bytes array (dtype ``S{w}``)."""
        return gather(self.buf, *self.span(j))


def _line_text(data: bytes, line: int) -> str:
    lines = data.split(b"\n", line)
    return lines[line - 1].decode("utf-8", "replace").rstrip("\r")


def _kernels():
    """(gather, decimals, tokens, hash, steps) compiled with numba, or None where numba is missing
    (numpy serves)."""
    return compiled("io.trec", _build_kernels)


def _build_kernels(numba):
    @numba.njit(nogil=True, cache=True)
    def gather_k(buf, starts, ends, out):  # pragma: no cover (compiled)
        for i in range(len(starts)):
            s = starts[i]
            for j in range(ends[i] - s):
                out[i, j] = buf[s + j]

    @numba.njit(nogil=True, cache=True)
    def decimals_k(buf, starts, ends, out, ok):  # pragma: no cover (compiled)
        # Clinger's fast path: m * 10^k with m < 2^53 and |k| <= 22 is one correctly
        # rounded operation on exact operands, so it equals strtod; others: ok = False
        pow10 = np.empty(23, dtype=np.float64)
        pow10[0] = 1.0
        for k in range(1, 23):
            pow10[k] = pow10[k - 1] * 10.0
        for i in range(len(starts)):
            p, e = starts[i], ends[i]
            ok[i] = False
            neg = False
            if p < e and (buf[p] == 45 or buf[p] == 43):  # - +
                neg = buf[p] == 45
                p += 1
            m = 0
            digits = 0
            scale = 0
            big = False
            while p < e and 48 <= buf[p] <= 57:
                if m >= 10**17:
                    big = True
                else:
                    m = m * 10 + (buf[p] - 48)
                digits += 1
                p += 1
            if p < e and buf[p] == 46:  # .
                p += 1
                while p < e and 48 <= buf[p] <= 57:
                    if m >= 10**17:
                        big = True
                    else:
                        m = m * 10 + (buf[p] - 48)
                        scale -= 1
                    digits += 1
                    p += 1
            if digits == 0 or big:
                continue
            if p < e and (buf[p] == 101 or buf[p] == 69):  # e E
                p += 1
                eneg = False
                if p < e and (buf[p] == 45 or buf[p] == 43):
                    eneg = buf[p] == 45
                    p += 1
                x = 0
                nd = 0
                while p < e and 48 <= buf[p] <= 57 and nd < 6:
                    x = x * 10 + (buf[p] - 48)
                    nd += 1
                    p += 1
                if nd == 0 or nd == 6:
                    continue
                scale += -x if eneg else x
            if p != e or m > 2**53 or scale > 22 or scale < -22:
                continue
            v = float(m) * pow10[scale] if scale >= 0 else float(m) / pow10[-scale]
            out[i] = -v if neg else v
            ok[i] = True

    @numba.njit(nogil=True, cache=True)
    def tokens_k(buf, nfields, slot, starts, ends, counts, lines, comment, track, changed):  # pragma: no cover
        # one pass: the first nfields tokens of every non-blank line (bytes <= 32 separate
        # tokens), its token count, line number and whether it starts with '#'; the
        # position of the first control character (other than tab..CR) or DEL, or -1; and
        # the number of lines. More records than the arrays hold: returns -1 records.
        # changed[rec, k]: field track[k] (a kept one) differs from the last data
        # record's (True for the first; the line is in cache, so this costs little)
        n = len(buf)
        rec = 0
        line = 1
        ctrl = -1
        i = 0
        m = len(track)
        prev = -1  # the last data record
        while i <= n:
            ntok = 0
            hashed = False
            while i < n and buf[i] != 10:
                b = buf[i]
                if b <= 32:
                    if ctrl < 0 and (b < 9 or (13 < b < 32)):
                        ctrl = i
                    i += 1
                    continue
                s = i
                while i < n and buf[i] > 32:
                    if ctrl < 0 and buf[i] == 127:
                        ctrl = i
                    i += 1
                if ntok == 0 and buf[s] == 35:
                    hashed = True
                if ntok < nfields and slot[ntok] >= 0 and rec < len(counts):
                    starts[rec, slot[ntok]] = s
                    ends[rec, slot[ntok]] = i
                ntok += 1
            if ntok > 0:
                if rec == len(counts):
                    return -1, ctrl, line
                counts[rec] = ntok
                lines[rec] = line
                comment[rec] = hashed
                if not hashed:
                    for k in range(m):
                        f = track[k]
                        if prev < 0 or ntok <= f:  # (too few fields: refused later)
                            changed[rec, k] = True
                            continue
                        c = slot[f]
                        s0, e0, s1 = starts[rec, c], ends[rec, c], starts[prev, c]
                        diff = e0 - s0 != ends[prev, c] - s1
                        j = 0
                        while not diff and j < e0 - s0:
                            diff = buf[s0 + j] != buf[s1 + j]
                            j += 1
                        changed[rec, k] = diff
                    if ntok >= nfields:
                        prev = rec
                rec += 1
            line += 1
            i += 1
        return rec, ctrl, line - 2

    @numba.njit(nogil=True, cache=True)
    def hash_k(mat, out):  # pragma: no cover (compiled)
        # _hash_rows's polynomial, row by row (the same values: uint64 wraps alike)
        mult = np.uint64(1099511628211)
        for i in range(mat.shape[0]):
            h = np.uint64(0)
            for j in range(mat.shape[1]):
                h = h * mult + np.uint64(mat[i, j])
            out[i] = h

    @numba.njit(nogil=True, cache=True)
    def steps_k(codes, score):  # pragma: no cover (compiled)
        # pairs of consecutive records of a topic whose scores rise, and whose scores fall
        up = down = 0
        for i in range(1, len(codes)):
            if codes[i] == codes[i - 1]:
                if score[i] > score[i - 1]:
                    up += 1
                elif score[i] < score[i - 1]:
                    down += 1
        return up, down

    return (gather_k, decimals_k, tokens_k, hash_k, steps_k)


def gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Copy the byte ranges ``buf[starts[i]:ends[i]]`` into a fixed-width ``S`` array
    (NUL-padded, so byte-wise order is preserved)."""
    lengths = ends - starts
    width = max(int(lengths.max()), 1) if len(lengths) else 1
    k = _kernels()
    if k is not None:
        out = np.zeros((len(starts), width), dtype=np.uint8)
        k[0](buf, starts, ends, out)
        return out.view(f"S{width}").ravel()
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
    extra_advice: str | None = None,
    keep: tuple[int, ...] | None = None,
    part: int = 0,
    track: tuple[int, ...] = (),
) -> _Tokens:
    """Split ``data`` into records of ``nfields`` whitespace-separated fields.

    Raises :class:`InputFormatError` on an empty file, NUL bytes (UTF-16 or binary
    files), invalid UTF-8, and on any line whose field count is not ``nfields``
    (more fields are accepted with ``extra_fields="ignore"``; the rest of such a line is
    ignored, as trec_eval does).

    ``part``: ``data`` is a piece of a file (see :func:`text_pieces`), the first (1) or a
    later one (2): a piece without data lines gives no records instead of an error (the
    caller decides for the whole file), and only the first may start with a byte-order
    mark. Line numbers are the piece's own.

    ``track``: kept fields for :func:`_changes` (where each record's value differs from the
    record before's), found by the compiled pass as it goes.
    """
    path = str(path)
    if data[:3] == BOM and part <= 1:
        warn(f"{path}: ignoring the UTF-8 byte-order mark at the start of the file", stacklevel=3)
        data = data[3:]
    buf = np.frombuffer(data, dtype=np.uint8)
    if len(buf) == 0:
        if part:
            return _no_tokens(buf, path, data, nfields, keep)
        raise InputFormatError(path, None, f"empty file, expected lines '{expected}'")
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputFormatError(
            path,
            line,
            "NUL byte: the file is binary or UTF-16; expected UTF-8 (or ASCII) text "
            "(convert it, for example with iconv -f UTF-16 -t UTF-8)",
        )
    if buf.max() >= 128:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise InputFormatError(
                path, line, f"not UTF-8 text (byte 0x{data[e.start]:02x}); re-encode the file as UTF-8"
            ) from None
        for pos in hidden_characters(buf):  # allowed in comment lines only ('# Lab\u00a0X')
            pos = int(pos)
            start = data.rfind(b"\n", 0, pos) + 1
            if not data[start : pos + 1].lstrip(b" \t\r\x0b\x0c").startswith(b"#"):
                raise _hidden_char_error(data, path, pos, data[pos : pos + 4].decode("utf-8", "ignore")[0])
    k = _kernels()
    if k is not None:
        return _tokens_compiled(k[2], buf, data, path, nfields, expected, extra_fields, extra_advice, keep, part, track)
    # ASCII control characters other than the whitespace 9-13 (tab, LF, VT, FF, CR)
    ctrl = np.flatnonzero((buf < 9) | ((buf > 13) & (buf < 32)))
    delete = data.find(b"\x7f")
    if len(ctrl) or delete >= 0:
        pos = min(int(ctrl[0]) if len(ctrl) else len(data), delete if delete >= 0 else len(data))
        line = data.count(b"\n", 0, pos) + 1
        raise InputFormatError(
            path,
            line,
            f"control character 0x{data[pos]:02x}; expected text fields separated by spaces or tabs",
            _line_text(data, line),
        )
    # token boundaries: transitions of the whitespace mask (padded with whitespace)
    ws = np.empty(len(buf) + 2, dtype=np.int8)
    ws[0] = ws[-1] = 1
    np.less_equal(buf, 32, out=ws[1:-1].view(bool))  # isspace() once control characters are excluded
    step = np.diff(ws)
    edges = np.flatnonzero(step != 0)  # alternately a token's start and its end
    starts = edges[0::2]
    ends = edges[1::2]
    if len(starts) == 0:
        if part:
            return _no_tokens(buf, path, data, nfields, keep)
        raise InputFormatError(path, None, f"empty file (only whitespace), expected lines '{expected}'")
    # tokens per physical line, from the index of the first token after each newline
    newlines = np.flatnonzero(buf == 10)
    after = np.searchsorted(starts, newlines)
    per_line = np.diff(np.concatenate(([0], after, [len(starts)])))
    line_no = np.flatnonzero(per_line) + 1  # 1-based numbers of non-blank lines
    counts = per_line[line_no - 1]
    first_idx = np.concatenate(([0], np.cumsum(counts)[:-1]))  # index of each line's first token
    comment = buf[starts[first_idx]] == ord("#")
    data_counts, data_lines = (counts[~comment], line_no[~comment]) if comment.any() else (counts, line_no)
    if part and len(data_counts) == 0:
        return _no_tokens(buf, path, data, nfields, keep, blank=False)
    _check_fields(data, path, data_counts, data_lines, nfields, expected, extra_fields, extra_advice)
    kept = np.repeat(~comment, counts) if comment.any() else None  # per token, over all lines
    if (data_counts > nfields).any():
        pos = np.arange(len(starts)) - np.repeat(first_idx, counts)  # position within its line
        kept = (pos < nfields) if kept is None else (kept & (pos < nfields))
    if kept is not None:
        starts, ends = starts[kept], ends[kept]
    starts = starts.reshape(-1, nfields)
    ends = ends.reshape(-1, nfields)
    return _Tokens(buf, starts, ends, data_lines, path, data, newlines=len(newlines))


def _no_tokens(buf, path: str, data: bytes, nfields: int, keep, blank: bool = True) -> _Tokens:
    """The tokens of a piece of a file without data lines (``blank``: not even a comment)."""
    width = nfields if keep is None else len(keep)
    empty = np.zeros((0, width), dtype=np.int64)
    return _Tokens(
        buf,
        empty,
        empty,
        np.zeros(0, dtype=np.int64),
        path,
        data,
        None if keep is None or tuple(keep) == tuple(range(nfields)) else tuple(keep),
        blank,
        data.count(b"\n"),
    )


def _check_fields(
    data: bytes,
    path: str,
    counts: np.ndarray,
    lines: np.ndarray,
    nfields: int,
    expected: str,
    extra_fields: str,
    extra_advice: str | None,
) -> None:
    """Refuse a file without data lines, or whose data line has another number of fields
    than ``nfields`` (fewer, with ``extra_fields="ignore"``), naming the first."""
    if len(counts) == 0:
        raise InputFormatError(path, None, f"no data lines (only comments), expected '{expected}'")
    bad = counts < nfields if extra_fields == "ignore" else counts != nfields
    if bad.any():
        k = int(np.argmax(bad))
        line = int(lines[k])
        hint = f" ({extra_advice})" if counts[k] > nfields and extra_advice else ""
        if nfields == 4 and counts[k] == 6:  # qrels expected, a run line found: the arguments swapped?
            hint = (
                "; this looks like a run file ('qid Q0 docno rank score tag'): the qrels come first, "
                "as in irscale evaluate QRELS RUNS"
            )
        elif nfields == 6 and counts[k] == 4:
            hint = (
                "; this looks like a qrels file ('qid iter docno grade'): the qrels come first, the runs "
                "after, as in irscale evaluate QRELS RUNS"
            )
        raise InputFormatError(
            path, line, f"expected {nfields} fields '{expected}', found {counts[k]}{hint}", _line_text(data, line)
        )


def _tokens_compiled(
    kernel,
    buf,
    data: bytes,
    path: str,
    nfields: int,
    expected: str,
    extra_fields: str,
    extra_advice: str | None,
    keep: tuple[int, ...] | None,
    part: int = 0,
    track: tuple[int, ...] = (),
) -> _Tokens:
    """:func:`tokenize`'s token pass in one compiled scan (no array the size of the file
    besides the file), with the same errors in the same order; only the fields in
    ``keep`` are recorded (all by default), as int32 offsets in files below 2 GiB."""
    slot = np.full(nfields, -1, dtype=np.int64)  # field -> column of starts/ends, -1: not kept
    keep = tuple(range(nfields)) if keep is None else tuple(keep)
    slot[list(keep)] = np.arange(len(keep))
    offset = np.int32 if len(buf) < 2**31 else np.int64
    # room for a record per 12 bytes (run and qrels lines are longer); where a file has more
    # (short lines), the lines are counted and the pass made again. The kernel fills every
    # kept field of a record with all its fields (others are refused or are comments)
    for rows in (len(buf) // 12 + 1, None):
        rows = rows or data.count(b"\n") + 1
        starts = np.empty((rows, len(keep)), dtype=offset)
        ends = np.empty((rows, len(keep)), dtype=offset)
        counts = np.empty(rows, dtype=np.int64)
        line_no = np.empty(rows, dtype=np.int64)
        comment = np.empty(rows, dtype=np.bool_)
        changed = np.empty((rows, len(track)), dtype=np.bool_)
        n, ctrl, newlines = kernel(
            buf, nfields, slot, starts, ends, counts, line_no, comment, np.array(track, dtype=np.int64), changed
        )
        if n >= 0:
            break
    if ctrl >= 0:
        line = data.count(b"\n", 0, ctrl) + 1
        raise InputFormatError(
            path,
            line,
            f"control character 0x{data[ctrl]:02x}; expected text fields separated by spaces or tabs",
            _line_text(data, line),
        )
    if n == 0:
        if part:
            return _no_tokens(buf, path, data, nfields, keep)
        raise InputFormatError(path, None, f"empty file (only whitespace), expected lines '{expected}'")
    starts, ends, counts, line_no = starts[:n], ends[:n], counts[:n], line_no[:n]
    comment, changed = comment[:n], changed[:n]
    if comment.any():
        data_line = ~comment
        starts, ends, counts, line_no, changed = (
            starts[data_line],
            ends[data_line],
            counts[data_line],
            line_no[data_line],
            changed[data_line],
        )
    if part and len(counts) == 0:
        return _no_tokens(buf, path, data, nfields, keep, blank=False)
    _check_fields(data, path, counts, line_no, nfields, expected, extra_fields, extra_advice)
    return _Tokens(
        buf,
        starts,
        ends,
        line_no,
        path,
        data,
        None if keep == tuple(range(nfields)) else keep,
        newlines=newlines,
        changed={f: changed[:, k] for k, f in enumerate(track)},
    )


def hidden_characters(buf: np.ndarray) -> np.ndarray:
    """Positions in ``buf`` (valid UTF-8) of the characters that may not hide in a field
    (see ``_HIDDEN_3``), vectorised: only lead bytes c2, e1-e3 and ef can start one."""
    lead = np.flatnonzero((buf == 0xC2) | ((buf >= 0xE1) & (buf <= 0xE3)) | (buf == 0xEF))
    if len(lead) == 0:
        return lead
    last = len(buf) - 1
    b0 = buf[lead].astype(np.uint32)
    b1 = buf[np.minimum(lead + 1, last)].astype(np.uint32)
    b2 = buf[np.minimum(lead + 2, last)].astype(np.uint32)
    two = (b0 == 0xC2) & (b1 <= 0xA0)  # U+0080-U+00A0 (b1 >= 0x80: valid UTF-8)
    three = (b0 != 0xC2) & np.isin((b0 << 16) | (b1 << 8) | b2, _HIDDEN_3)
    return lead[two | three]


def _hidden_char_error(data: bytes, path: str, pos: int, ch: str) -> InputFormatError:
    line = data.count(b"\n", 0, pos) + 1
    cp = ord(ch)
    if cp == 0xFEFF:
        reason = (
            "byte-order mark (U+FEFF) after the start of the file, where it is not allowed "
            "(were files with byte-order marks concatenated?); remove it"
        )
    else:
        cat = unicodedata.category(ch)
        name = _CHAR_NAMES.get(cp) or unicodedata.name(ch, "control character").lower()
        if cat == "Cc":
            reason = f"{name} (U+{cp:04X}); expected text fields separated by spaces or tabs"
        elif cat == "Cf":
            reason = (
                f"{name} (U+{cp:04X}) inside a field, where it would silently become part of a qid or docno; remove it"
            )
        else:
            reason = f"{name} (U+{cp:04X}) inside a field; fields are separated by spaces or tabs"
    return InputFormatError(path, line, reason, _line_text(data, line))


def _first_bad(
    tok: _Tokens,
    col: np.ndarray,
    what: str,
    pattern: re.Pattern,
    syntax: str,
    lo: int | None = None,
    hi: int | None = None,
    records: np.ndarray | None = None,
) -> InputFormatError:
    """The error for the first value of ``col`` that does not match ``pattern`` (or,
    for integers, lies outside [lo, hi]); ``records``: the record of each value of ``col``
    (default: ``col`` is the whole field). Error path only."""
    for i, v in enumerate(col):
        if not pattern.match(v):
            return tok.error(
                i if records is None else int(records[i]),
                f"{what} must be a number, found {v.decode('utf-8', 'replace')!r}; {syntax}",
            )
        if lo is not None and hi is not None and not lo <= int(v) <= hi:
            return _range_error(tok, i, int(v))
    raise AssertionError(f"no bad {what} found in a column numpy could not parse")  # a bug, not bad input


def _range_error(tok: _Tokens, i: int, value: int) -> InputFormatError:
    return tok.error(i, f"grade {value} out of the supported range [{GRADE_MIN}, {GRADE_MAX}]")


def _column_bytes(col: np.ndarray) -> np.ndarray:
    return col.view(np.uint8).reshape(len(col), col.dtype.itemsize)


def parse_scores(tok: _Tokens, j: int, what: str = "score (5th field)") -> np.ndarray:
    """Field ``j`` as float64, accepting only the strict syntax of ``_SCORE_RE``.

    Compiled (numba): decimals with at most 17 significant digits and exponents within 22
    are read exactly in place (Clinger's fast path: one correctly rounded operation on
    exact operands, so the value equals strtod's), and only the syntax ``[+-]?`` digits
    ``[.digits]`` ``[e[+-]digits]`` is accepted there, a subset of ``_SCORE_RE``; the other
    values (long mantissas, inf, nan, and anything malformed) go through
    :func:`_checked_scores`, which raises for the first bad one.
    """
    k = _kernels()
    if k is None:
        return _checked_scores(tok, tok.column(j), what)
    starts, ends = tok.span(j)
    out = np.empty(len(starts), dtype=np.float64)
    ok = np.empty(len(starts), dtype=np.bool_)
    k[1](tok.buf, starts, ends, out, ok)
    rest = np.flatnonzero(~ok)
    if len(rest):
        out[rest] = _checked_scores(tok, gather(tok.buf, starts[rest], ends[rest]), what, rest)
    return out


def _checked_scores(tok: _Tokens, col: np.ndarray, what: str, records: np.ndarray | None = None) -> np.ndarray:
    """``col`` (the score field of ``records``, default all) as float64, or the error for
    its first value outside the strict syntax.

    numpy converts bytes with Python's ``float()``, which also reads ``1_000`` (C's
    ``atof``: 1), but nothing else that ``_SCORE_RE`` rejects once the bytes are limited to
    digits, ``+-.eE`` and the letters of inf/nan. So: one ``bytes.translate`` over the
    column to check its bytes (about 1 ms for 50,000 scores), a regular expression only
    for the rare values with letters, then numpy's conversion.
    """
    rest = col.tobytes().translate(None, _NUMBER_BYTES)
    if rest:  # letters of inf/nan, or bytes that have no place in a number
        if rest.translate(None, _INF_NAN_BYTES):
            raise _first_bad(tok, col, what, _SCORE_RE, SCORE_SYNTAX, records=records)
        letters = np.flatnonzero(_INF_NAN_LUT[_column_bytes(col)].any(axis=1))
        if not all(_SCORE_RE.match(col[i]) for i in letters):
            raise _first_bad(tok, col, what, _SCORE_RE, SCORE_SYNTAX, records=records)
    try:
        return col.astype(np.float64)
    except ValueError:
        raise _first_bad(tok, col, what, _SCORE_RE, SCORE_SYNTAX, records=records) from None


def parse_grades(
    tok: _Tokens, j: int, what: str = "grade (4th field)", integer_grades: bool = False
) -> tuple[np.ndarray, tuple[Fraction, ...] | None]:
    """Field ``j`` as grade codes (int64) and the value of each code (see
    :func:`grade_codes`): integers ``[+-]?digits`` in [GRADE_MIN, GRADE_MAX] are their own
    codes (values None); a column with a decimal point or an exponent is real-valued
    (announced once, naming the first grade that is not a whole number), or with
    ``integer_grades`` each grade's integer part as trec_eval reads it (:func:`trec_eval_grade`)."""
    col = tok.column(j)
    if col.tobytes().translate(None, _INTEGER_BYTES):
        return _real_grades(tok, col, what, integer_grades)
    try:
        k = _kernels()
        if k is None:
            grade = col.astype(np.int64)
        else:  # the bytes are [0-9+-]: what the decimal kernel reads is [+-]?digits, exactly
            value = np.zeros(len(col), dtype=np.float64)  # (not-ok entries are replaced below)
            ok = np.empty(len(col), dtype=np.bool_)
            k[1](tok.buf, *tok.span(j), value, ok)
            grade = value.astype(np.int64)
            rest = np.flatnonzero(~ok)
            if len(rest):
                grade[rest] = col[rest].astype(np.int64)
    except (ValueError, OverflowError):
        raise _first_bad(tok, col, what, _GRADE_RE, GRADE_SYNTAX, GRADE_MIN, GRADE_MAX) from None
    out = np.flatnonzero((grade < GRADE_MIN) | (grade > GRADE_MAX))
    if len(out):
        raise _range_error(tok, int(out[0]), int(grade[out[0]]))
    return grade, None


def _real_grades(
    tok: _Tokens, col: np.ndarray, what: str, integer_grades: bool = False
) -> tuple[np.ndarray, tuple[Fraction, ...] | None]:
    """A grade column with decimals: each distinct text read once, exactly, as a Fraction
    (``0.50`` and ``0.5`` are one grade); the first bad value in file order is the error.
    Real-valued grades are announced in one line naming the first grade (in file order)
    that is not a whole number; ``integer_grades``: each grade's integer part instead, as
    trec_eval reads it, and nothing to announce."""
    texts, first, inverse = np.unique(col, return_index=True, return_inverse=True)
    values: list[Fraction] = []
    bad: tuple[int, str] | None = None
    for t, at in zip(texts, first):
        reason = _real_grade_problem(t)
        if reason is None:
            v = Fraction(trec_eval_grade(t)) if integer_grades else Fraction(t.decode())
            if not GRADE_MIN <= v <= GRADE_MAX:
                reason = f"grade {t.decode()} out of the supported range [{GRADE_MIN}, {GRADE_MAX}]"
            values.append(v)
        else:
            values.append(Fraction(0))
        if reason is not None and (bad is None or at < bad[0]):
            bad = (int(at), reason)
    if bad is not None:
        raise tok.error(*bad)
    codes, levels = grade_codes(values, inverse, tok.path)
    if levels is not None:
        at, t = min((int(at), t) for t, at, v in zip(texts, first, values) if v > 0 and v.denominator != 1)
        warn(
            f"{tok.path}, line {tok.lines[at]}: grade {t.decode()} is not a whole number, so grades are real "
            f"values; trec_eval reads {trec_eval_grade(t)}, as --integer-grades does (integer_grades=True)",
            stacklevel=4,
        )
    return codes, levels


def trec_eval_grade(text: bytes) -> int:
    """A grade as trec_eval reads it: C's ``atol``, the leading ``[+-]?digits`` of the text
    (``1.5`` is 1, ``-0.5`` is 0, ``2.5e-1`` is 2)."""
    m = re.match(rb"\s*([+-]?\d*)", text)
    digits = m.group(1) if m else b""
    return int(digits) if digits.strip(b"+-") else 0


def _real_grade_problem(text: bytes) -> str | None:
    """Why ``text`` is not a real-valued grade (None: it is one)."""
    shown = text.decode("utf-8", "replace")
    m = _REAL_GRADE_RE.match(text)
    if m is None:
        if shown.strip("+-").lower() in ("nan", "inf", "infinity"):
            return f"grade (4th field) must be a finite number, found {shown!r}; NaN and infinity are not grades"
        return f"grade (4th field) must be a number, found {shown!r}; {GRADE_SYNTAX}"
    if m.group(1) is not None and abs(int(m.group(1))) > GRADE_EXPONENT:
        return (
            f"grade (4th field) {shown}: its exponent is out of range (at most {GRADE_EXPONENT} either way); "
            "write the grade as a plain decimal like 0.25"
        )
    return None


def grade_text(code: int, values: tuple[Fraction, ...] | None) -> str:
    """The grade of a level code as a file writes it: the code itself for integer grades
    (``values`` None) and for a negative code (every negative real-valued grade is -1),
    else ``values[code]`` as a decimal (``0.5``)."""
    return str(code) if values is None or code < 0 else decimal_text(values[code])


def grade_codes(
    values: list[Fraction], inverse: np.ndarray, path: str = "<memory>"
) -> tuple[np.ndarray, tuple[Fraction, ...] | None]:
    """Grade codes of records whose grade is ``values[inverse[i]]``, and the value of each code.

    Integer grades (every positive value a whole number, however written: ``2``, ``2.0``)
    are their own codes and the values are None: nothing changes for an integer qrels
    file (a negative grade that is not whole reads as -1). Otherwise the grades are
    real-valued and the codes are levels: 0 for grade 0, 1..k for the distinct positive
    grades in increasing order, -1 for every negative grade (never relevant, like a
    negative integer grade); the values are the exact grade of codes 0..k (``values[0] ==
    0``), the finite set of levels the interval scales use.
    """
    positive = sorted({v for v in values if v > 0})
    if all(v.denominator == 1 for v in positive):  # integer grades (a negative non-integer one reads as -1)
        return np.array([int(v) if v.denominator == 1 else -1 for v in values], dtype=np.int64)[inverse], None
    if len(positive) > GRADE_MAX:
        raise InputFormatError(
            path, None, f"{len(positive):,} distinct positive grades; at most {GRADE_MAX:,} are supported"
        )
    level = {v: k for k, v in enumerate(positive, 1)}
    codes = np.array([level.get(v, 0 if v == 0 else -1) for v in values], dtype=np.int64)
    return codes[inverse], (Fraction(0), *positive)


def _changes(tok: _Tokens, j: int) -> np.ndarray:
    """Whether field ``j`` of each record differs from the record before's (the first:
    True): from the compiled token pass where it tracked the field, else compared here."""
    if j in tok.changed:
        return tok.changed[j]
    col = tok.column(j)
    change = np.empty(len(col), dtype=bool)
    change[:1] = True
    change[1:] = col[1:] != col[:-1]
    return change


def _topic_blocks_of(tok: _Tokens, j: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_topic_blocks` of field ``j``, gathering only the first qid of each block."""
    change = _changes(tok, j)
    heads = np.flatnonzero(change)
    starts, ends = tok.span(j)
    return _blocks(change, gather(tok.buf, starts[heads], ends[heads]))


def _topic_blocks(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the distinct qids (in sorted order) for each record; O(n) when the file
    is grouped by topic, as TREC files are."""
    change = np.empty(len(qid), dtype=bool)
    change[0] = True
    change[1:] = qid[1:] != qid[:-1]
    return _blocks(change, qid[change])


def _blocks(change: np.ndarray, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct qids and each record's code, from where the qid changes and the qid
    of each block (``heads``)."""
    topics = np.unique(heads)
    codes_heads = np.searchsorted(topics, heads).astype(np.int16 if len(topics) < 32768 else np.int32)
    codes = codes_heads[np.cumsum(change) - 1]
    return topics, codes


def _hash_rows(mat: np.ndarray) -> np.ndarray:
    """64-bit polynomial hash of each row of a uint8 matrix (wrap-around arithmetic; in
    place, so the only array the size of the rows is the result). Compiled where numba
    is, with the same values (one pass instead of one per column)."""
    h = np.zeros(mat.shape[0], dtype=np.uint64)
    k = _kernels()
    if k is not None:
        k[3](mat, h)
        return h
    mult = np.uint64(1099511628211)
    with np.errstate(over="ignore"):
        for j in range(mat.shape[1]):
            np.multiply(h, mult, out=h)
            np.add(h, mat[:, j], out=h)
    return h


def key_hash(topic_codes: np.ndarray, docno_mat: np.ndarray) -> np.ndarray:
    """64-bit hash of (topic code, docno bytes); equal keys give equal hashes."""
    h = _hash_rows(docno_mat)
    with np.errstate(over="ignore"):
        t = topic_codes.astype(np.uint64)
        np.multiply(t, np.uint64(0x9E3779B97F4A7C15), out=t)
    np.bitwise_xor(h, t, out=h)
    return h


def _find_duplicates(topic_codes: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Pairs ``(first, later)`` of record indices with equal (topic, docno), one per later
    occurrence (``first`` is the previous occurrence), ordered by ``later``; exact (hash,
    then the records of equal hashes compared)."""
    hs = key_hash(topic_codes, docno.view(np.uint8).reshape(-1, docno.dtype.itemsize))
    hs.sort()  # a sort without indices is several times faster: no equal hashes, no duplicates
    if not (hs[1:] == hs[:-1]).any():
        return np.empty((0, 2), dtype=np.int64)
    h = key_hash(topic_codes, docno.view(np.uint8).reshape(-1, docno.dtype.itemsize))
    order = np.argsort(h)
    hs = h[order]
    eq = hs[1:] == hs[:-1]
    if not eq.any():
        return np.empty((0, 2), dtype=np.int64)
    in_group = np.zeros(len(hs), dtype=bool)
    in_group[1:] |= eq
    in_group[:-1] |= eq
    pos = np.flatnonzero(in_group)
    group = np.cumsum(np.r_[True, ~eq])[pos]
    idx = order[pos]
    # within a hash group: by topic and docno (exact, in case of a collision), then file order
    o = np.lexsort((idx, docno[idx], topic_codes[idx], group))
    idx, group = idx[o], group[o]
    t, d = topic_codes[idx], docno[idx]
    same = (group[1:] == group[:-1]) & (t[1:] == t[:-1]) & (d[1:] == d[:-1])
    pairs = np.stack((idx[:-1][same], idx[1:][same]), axis=1).astype(np.int64)
    return pairs[np.argsort(pairs[:, 1], kind="stable")]


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgements, sorted by (qid, docno) byte-wise.

    Attributes are parallel arrays: ``qid`` and ``docno`` (fixed-width bytes), ``grade``
    (int16). ``topics`` lists the distinct qids (sorted byte-wise, like trec_eval).
    Negative grades are kept: they are never relevant (see the user guide).

    ``values`` is None for integer grades (each grade is its own value). For real-valued
    grades (``0.5``, ``1.7``) ``grade`` holds level codes and ``values[code]`` the exact
    grade (a Fraction) of codes 0..k: 0 is grade 0, 1..k the distinct positive grades in
    increasing order, -1 any negative grade (:func:`grade_codes`).
    """

    qid: np.ndarray
    docno: np.ndarray
    grade: np.ndarray
    topics: np.ndarray
    topic_code: np.ndarray
    path: str = "<memory>"
    values: tuple[Fraction, ...] | None = None

    def __len__(self) -> int:
        return len(self.qid)

    @property
    def topic_names(self) -> list[str]:
        return [t.decode() for t in self.topics]

    @property
    def max_grade(self) -> int:
        """The highest grade (for real-valued grades: the highest level code, k)."""
        return int(self.grade.max()) if len(self.grade) else 0

    def grade_text(self, code: int) -> str:
        """The grade of a code as it reads in a file (:func:`grade_text`)."""
        return grade_text(code, self.values)

    def to_frame(self):
        """Columns topic, docno, grade (int; float for real-valued grades, -1 for a negative one)."""
        import pandas as pd

        grade = self.grade.astype(int)
        if self.values is not None:
            table = np.array([float(v) for v in self.values])
            grade = np.where(grade >= 0, table[np.maximum(grade, 0)], -1.0)
        return pd.DataFrame(
            {
                "topic": np.char.decode(self.qid, "utf-8"),
                "docno": np.char.decode(self.docno, "utf-8"),
                "grade": grade,
            }
        )

    @classmethod
    def from_records(cls, records, path: str = "<memory>") -> Qrels:
        """Build from ``(qid, docno, grade)`` tuples (for tests and small examples); a grade
        may be an int, a float or a Fraction with a finite decimal (``Fraction(1, 4)``)."""
        lines = (
            "\n".join(f"{q} 0 {d} {decimal_text(g) if isinstance(g, Fraction) else g}" for q, d, g in records) + "\n"
        )
        return parse_qrels(lines.encode(), path)


@dataclass(frozen=True, eq=False)
class Run:
    """A run in trec_eval order: by topic (byte-wise), score descending, docno descending.

    ``docno`` is a fixed-width bytes array, ``score`` float64 (already rounded to float32
    when read with ``score_precision="float32"``); ``topics`` the distinct qids (bytes)
    and ``offsets`` the start of each topic's block (``len(topics) + 1`` entries), so the
    qid of every record (:attr:`qid`) is not stored. ``metadata``: the run file's
    ir_metadata header as plain Python values (dicts, lists, strings, numbers; dates as
    ISO text), None where the file has none.
    """

    name: str
    docno: np.ndarray
    score: np.ndarray
    topics: np.ndarray
    offsets: np.ndarray
    path: str = "<memory>"
    metadata: dict | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.docno)

    @property
    def qid(self) -> np.ndarray:
        """The qid of every record (fixed-width bytes), made from topics and offsets."""
        return np.repeat(self.topics, np.diff(self.offsets))

    @property
    def topic_names(self) -> list[str]:
        return [t.decode() for t in self.topics]

    def to_frame(self):
        import pandas as pd

        rank = np.arange(len(self)) - np.repeat(self.offsets[:-1], np.diff(self.offsets)) + 1
        return pd.DataFrame(
            {
                "topic": np.char.decode(self.qid, "utf-8"),
                "docno": np.char.decode(self.docno, "utf-8"),
                "rank": rank,
                "score": self.score,
            }
        )

    @classmethod
    def from_records(cls, records, name: str = "run", **kw) -> Run:
        """Build from ``(qid, docno, score)`` tuples (for tests and small examples)."""
        lines = "\n".join(f"{q} Q0 {d} 0 {s!r} {name}" for q, d, s in records) + "\n"
        return parse_run(lines.encode(), f"<{name}>", **kw)


def parse_qrels(data: bytes, path: str | Path = "<memory>", *, integer_grades: bool = False) -> Qrels:
    """Parse qrels text (see :func:`read_qrels`)."""
    tok = tokenize(data, path, 4, QRELS_FIELDS, keep=(0, 2, 3))
    qid = tok.column(0)
    docno = tok.column(2)
    grade, values = parse_grades(tok, 3, integer_grades=integer_grades)
    topics, codes = _topic_blocks(qid)
    dups = _find_duplicates(codes, docno)
    if len(dups):
        i, j = dups[0]
        raise tok.error(
            int(j),
            f"duplicate judgement of docno {docno[j].decode()!r} for topic {qid[j].decode()!r} "
            f"(first at line {tok.lines[i]})",
        )
    order = by_topic_and_docno(codes, docno)
    if order is None:
        return Qrels(qid, docno, grade.astype(np.int16), topics, codes.astype(np.int32), str(path), values)
    return Qrels(
        qid[order],
        docno[order],
        grade[order].astype(np.int16),
        topics,
        codes[order].astype(np.int32),
        str(path),
        values,
    )


def by_topic_and_docno(codes: np.ndarray, docno: np.ndarray) -> np.ndarray | None:
    """The order of records with distinct (topic code, docno) keys by topic, then docno
    byte-wise; None when they are in that order already (as most qrels files are).
    Exact: docnos are compared as big-endian 8-byte integers (byte-wise order of the
    NUL-padded fixed-width values), which sort several times faster than bytes."""
    if len(codes) < 2 or ((codes[1:] > codes[:-1]) | ((codes[1:] == codes[:-1]) & (docno[1:] > docno[:-1]))).all():
        return None
    n, w = len(docno), docno.dtype.itemsize
    mat = np.zeros((n, -(-w // 8) * 8), dtype=np.uint8)
    mat[:, :w] = docno.view(np.uint8).reshape(n, w)
    chunks = mat.view(">u8")
    if chunks.shape[1] == 1:  # equal docnos lie in different topics, which the stable sort separates
        order = np.argsort(chunks[:, 0])
        return order[np.argsort(codes[order], kind="stable")]
    return np.lexsort((*(chunks[:, k] for k in range(chunks.shape[1] - 1, -1, -1)), codes))


def read_qrels(path: str | Path, *, integer_grades: bool = False) -> Qrels:
    """Read a TREC qrels file ``qid iter docno grade`` (plain or gzip).

    The ``iter`` field is ignored and may be any token. A document is relevant for a
    binary measure if its grade is at least the measure's ``rel`` (default 1). Duplicate
    (qid, docno) pairs are an error.

    Grades are plain integers (``[+-]?digits``) in [GRADE_MIN, GRADE_MAX], or real
    numbers written as decimals (``0.5``, ``1.75``, ``2.5e-1``: LLM judges, graded pools):
    each is read exactly, as the fraction its text is (``0.1`` is 1/10, never a float), and
    NaN, infinity and exponents beyond +-GRADE_EXPONENT are errors naming the line. A file
    whose grades are all whole numbers (``2.0`` included) is an integer file; one grade that
    is not (``1.5``) makes the file real-valued, which a warning announces, naming that
    grade's line. ``integer_grades=True`` reads every grade as trec_eval does instead: its
    integer part (C's ``atol``: ``1.5`` is 1, ``2.5e-1`` is 2; CLI ``--integer-grades``). See
    :class:`Qrels` for how real-valued grades are kept, and the module docstring for the
    rest of the format.

    Raises
    ------
    InputFormatError
        naming the file and line, for every malformed input.

    Warns
    -----
    IrscaleWarning
        when a UTF-8 byte-order mark at the start of the file is ignored, and when the
        grades are real-valued (once, naming the first grade that is not a whole number).
    """
    return parse_qrels(read_bytes(path), path, integer_grades=integer_grades)


def check_reader_options(score_precision, extra_fields, duplicates, metadata="error") -> None:
    """Refuse (PolicyError) any value of the run readers' policies but the documented ones."""
    check_choice("score_precision", score_precision, get_args(ScorePrecision))
    check_choice("extra_fields", extra_fields, get_args(ExtraFields))
    check_choice("duplicates", duplicates, get_args(Duplicates))
    check_choice("metadata", metadata, get_args(Metadata))


def parse_runs(
    data: bytes,
    path: str | Path = "<memory>",
    *,
    split_tags: bool = False,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    metadata: Metadata = "error",
) -> list[Run]:
    """Parse run text into one run per tag (see :func:`read_runs`)."""
    return _parse_runs(
        data,
        str(path),
        split_tags=split_tags,
        name=name,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        metadata=metadata,
    )


@dataclass
class _Columns:
    """The columns of the run lines of one piece of a file."""

    topics: np.ndarray  # distinct qids of the piece, sorted
    codes: np.ndarray  # index into topics of each record
    docno: np.ndarray
    score: np.ndarray
    lines: np.ndarray | int  # line numbers in the file; the first one where they are consecutive
    tags: list  # distinct tags of the piece, in order of first appearance
    tag_codes: np.ndarray | None  # index into tags of each record (None: one tag)


def _run_columns(tok: _Tokens, first: int, score_precision: str) -> _Columns:
    score = parse_scores(tok, 4)
    nan = np.flatnonzero(np.isnan(score))
    if len(nan):
        raise tok.error(int(nan[0]), "score is NaN; scores must be numbers")
    if score_precision == "float32":
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as in trec_eval 9
            score = score.astype(np.float32).astype(np.float64)
    topics, codes = _topic_blocks_of(tok, 0)
    if not _changes(tok, 5)[1:].any():
        starts, ends = tok.span(5)
        tag_list, tag_codes = [gather(tok.buf, starts[:1], ends[:1])[0]], None  # one tag: not gathered
    else:
        tags = tok.column(5)
        uniq, first_at, inverse = np.unique(tags, return_index=True, return_inverse=True)
        order = np.argsort(first_at)  # tags in order of first appearance
        rank = np.empty(len(uniq), dtype=np.int32)
        rank[order] = np.arange(len(uniq), dtype=np.int32)
        tag_list, tag_codes = list(uniq[order]), rank[inverse.reshape(-1)]
    lines = tok.lines + (first - 1)
    where: np.ndarray | int = lines
    if lines[-1] - lines[0] == len(lines) - 1:  # no comment or blank line among them: keep the first
        where = int(lines[0])
    return _Columns(topics, codes, tok.column(2), score, where, tag_list, tag_codes)


def _parse_runs(
    source, path: str, *, split_tags, name, score_precision, extra_fields, duplicates, progress=None, metadata="error"
) -> list[Run]:
    """Runs of a file (``source`` its path) or of bytes, read and tokenised in pieces of
    :data:`PIECE_BYTES`: besides a few pieces (:data:`PIECE_THREADS` in flight), memory
    holds the columns the runs keep (docno, score and topic code per record), not the
    file's text.
    ``progress(fraction)`` is called after each piece with the share of the file read."""
    check_reader_options(score_precision, extra_fields, duplicates, metadata)
    if not isinstance(split_tags, (bool, np.bool_)):
        raise ArgumentError(f"split_tags must be True or False, not {split_tags!r}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ArgumentError(f"name must be a non-empty string naming the run, not {name!r}")
    parts: list[_Columns] = []
    size, blank = 0, True
    if progress is not None and not callable(progress):
        raise ArgumentError(f"progress must be a function progress(fraction) or None, not {progress!r}")
    read = [0, 0]
    line = 1  # of the piece's first line
    header = None
    pieces = _tokenized_pieces(source, read, path=path, extra_fields=extra_fields, score_precision=score_precision)
    try:
        for k, piece, (n, piece_blank, cols, newlines) in pieces:
            if cols is not None:  # (tokenised as if the piece began the file)
                cols.lines = cols.lines + (line - 1)
            if k == 0 and metadata != "ignore":  # (after the piece is checked: UTF-8, no NUL)
                # a first piece of more than half PIECE_BYTES was cut: the file goes on past it
                header = ir_metadata(piece, path, metadata, more=len(piece) > PIECE_BYTES // 2)
            line += newlines
            size += n
            blank = blank and piece_blank
            if cols is not None:
                parts.append(cols)
            if progress is not None and read[1]:
                progress(read[0] / read[1])
    except InputFormatError as e:  # a piece's error: its line in the file
        raise _shifted(e, line) from None
    finally:
        pieces.close()  # (the pieces ahead, where an error stopped the loop)
    if not parts:
        what = (
            "empty file" if size == 0 else "empty file (only whitespace)" if blank else "no data lines (only comments)"
        )
        raise InputFormatError(path, None, f"{what}, expected lines '{RUN_FIELDS}'")
    tag_list = list(dict.fromkeys(t for c in parts for t in c.tags))
    if len(tag_list) > 1:
        pos = {t: i for i, t in enumerate(tag_list)}
        tag_codes = _concat(
            [
                np.full(len(c.score), pos[c.tags[0]], dtype=np.int32)
                if c.tag_codes is None
                else np.array([pos[t] for t in c.tags], dtype=np.int32)[c.tag_codes]
                for c in parts
            ]
        )
    # one column at a time, each piece's copy let go once concatenated (memory: the columns
    # and one more column, not twice the columns)
    where = _Records(path, source, np.cumsum([0] + [len(c.score) for c in parts[:-1]]), [c.lines for c in parts])
    topics, codes = _merge_codes(parts)
    docno = _take(parts, "docno")
    score = _take(parts, "score")
    del parts
    if len(tag_list) == 1:
        return [
            _build_run(
                where,
                None,
                topics,
                codes,
                docno,
                score,
                tag_list[0].decode("utf-8") if name is None else name,
                duplicates,
                header,
            )
        ]
    if not split_tags:
        i = int(np.argmax(tag_codes != 0))
        raise where.error(
            i,
            f"run tag {tag_list[tag_codes[i]].decode()!r} differs from the first line's "
            f"{tag_list[0].decode()!r}; a run file must hold one run: to read one run per tag use "
            "irscale.io.read_runs(path, split_tags=True), evaluate(..., split_tags=True) or the "
            "CLI's --split-tags",
        )
    if name is not None:
        shown = ", ".join(repr(t.decode()) for t in tag_list[:5]) + (", ..." if len(tag_list) > 5 else "")
        raise ArgumentError(
            f"{path}: name={name!r} renames a single run, but the file holds {len(tag_list)} runs "
            f"(tags {shown}); leave name out to name each run by its tag"
        )
    records = np.argsort(tag_codes, kind="stable")  # grouped by tag, file order within a tag
    bounds = np.searchsorted(tag_codes[records], np.arange(len(tag_list) + 1))
    return [
        _build_run(
            where,
            records[bounds[g] : bounds[g + 1]],
            topics,
            codes,
            docno,
            score,
            tag_list[g].decode("utf-8"),
            duplicates,
            copy.deepcopy(header),  # each run its own copy: changing one run's never changes another's
        )
        for g in range(len(tag_list))
    ]


PIECE_THREADS = 2  # pieces of one file tokenised at a time (threads: the kernels release the GIL)


def _tokenized_pieces(source, read: list, **options):
    """``(k, piece, _piece_columns(k, 1, piece))`` for each piece of ``source`` in order,
    each piece's line numbers counted from 1 (the caller shifts them, and an error's, by
    the lines before the piece). The first piece is tokenised here (its warnings, a
    byte-order mark, are said in this thread); the next ones by :data:`PIECE_THREADS`
    threads, that many ahead of the one consumed (memory: that many pieces and their
    columns, not the file). An error met reading ahead (corrupt gzip data) comes after
    the pieces before it, so a bad line before it is still the error reported."""
    pieces = enumerate(_pieces(source, read=read))
    k, piece = next(pieces)
    yield k, piece, _piece_columns(k, 1, piece, **options)
    nxt = next(pieces, None)
    if nxt is None:
        return
    if PIECE_THREADS < 2:
        for k, piece in itertools.chain([nxt], pieces):
            yield k, piece, _piece_columns(k, 1, piece, **options)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    late: Exception | None = None  # an error reading ahead, raised in its turn
    with ThreadPoolExecutor(PIECE_THREADS, thread_name_prefix="irscale-piece") as pool:
        ahead: deque = deque([(*nxt, pool.submit(_piece_columns, nxt[0], 1, nxt[1], **options))])
        try:
            while ahead:
                while late is None and len(ahead) < PIECE_THREADS:
                    try:
                        more = next(pieces, None)
                    except Exception as e:
                        late = e
                        break
                    if more is None:
                        break
                    ahead.append((*more, pool.submit(_piece_columns, more[0], 1, more[1], **options)))
                k, piece, done = ahead.popleft()
                yield k, piece, done.result()
        finally:  # an error, or the caller stopped: the pieces not started are dropped (the
            for *_, f in ahead:  # pool's exit waits for those being tokenised)
                f.cancel()
    if late is not None:
        raise late


def _piece_columns(k: int, first: int, piece: bytes, *, path: str, extra_fields: ExtraFields, score_precision: str):
    """(bytes, blank, columns or None, newlines) of the ``k``-th piece of a file, whose
    first line is ``first``."""
    try:
        tok = tokenize(
            piece,
            path,
            6,
            RUN_FIELDS,
            extra_fields,
            extra_advice="pass extra_fields='ignore', CLI --ignore-extra-fields, to ignore the rest of "
            "such lines, as trec_eval does",
            keep=(0, 2, 4, 5),
            part=1 if k == 0 else 2,
            track=(0, 5),
        )
        cols = _run_columns(tok, first, score_precision) if len(tok.lines) else None
        return len(piece), tok.blank, cols, tok.newlines
    except InputFormatError as e:
        raise _shifted(e, first) from None


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _take(parts: list[_Columns], column: str) -> np.ndarray:
    """The column of all pieces, concatenated; the pieces' own arrays are dropped."""
    out = _concat([getattr(c, column) for c in parts])
    for c in parts:
        setattr(c, column, None)
    return out


def _merge_codes(parts: list[_Columns]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct qids of all pieces (sorted) and each record's index into them."""
    if len(parts) == 1:
        return parts[0].topics, parts[0].codes
    topics = np.unique(np.concatenate([c.topics for c in parts]))
    dtype = np.int16 if len(topics) < 32768 else np.int32
    for c in parts:
        c.codes = np.searchsorted(topics, c.topics).astype(dtype)[c.codes]
    return topics, _take(parts, "codes")


def _build_run(
    where: _Records,
    records: np.ndarray | None,
    topics,
    codes,
    docno,
    score,
    name: str,
    duplicates: str,
    metadata: dict | None = None,
) -> Run:
    """The run made of ``records`` (indices into the file's records; None for all)."""
    if records is not None:
        codes, docno, score = codes[records], docno[records], score[records]
        used = np.unique(codes)
        if len(used) < len(topics):  # the topics of this tag only
            topics, codes = topics[used], np.searchsorted(used, codes).astype(codes.dtype)
    swapped = _columns_swapped(codes, score, lambda: where.field_text(_records_all(records, len(score)), 3))
    if swapped:
        warn(f"{where.path}: rank and score columns swapped? {swapped}", stacklevel=5)
    dups = _find_duplicates(codes, docno)
    if len(dups):
        if duplicates == "error":
            i, j = (int(k) for k in dups[0])
            first, dup = (i, j) if records is None else (int(records[i]), int(records[j]))
            raise where.error(
                dup,
                f"duplicate docno {docno[j].decode()!r} for topic {topics[codes[j]].decode()!r} "
                f"(first at line {where.line(first)}); to keep only the first occurrence pass "
                "duplicates='first' (CLI --duplicates first)",
            )
    run = ordered_run(name, docno, score, topics, codes, dups[:, 1], where.path, owned=True)
    return run if metadata is None else dataclasses.replace(run, metadata=metadata)


def _records_all(records: np.ndarray | None, n: int) -> np.ndarray:
    """The file's record indices of a run's records (``records``, or all ``n`` of the file)."""
    return np.arange(n) if records is None else records


SWAP_SHARE = 0.99  # of the pairs of consecutive lines of a topic with unequal scores
SWAP_PAIRS = 10  # at least this many such pairs: a tiny file says nothing


def _columns_swapped(codes: np.ndarray, score: np.ndarray, rank_column: Callable[[], list[bytes]]) -> str:
    """Why the rank and score columns look swapped, or "" where they do not. Two signs:

    * in file order, the scores rise in at least 99 % of the pairs of consecutive lines of a
      topic whose scores differ (at least ten such pairs): ranks in rank order (1, 2, 3, ...),
      or scores written the wrong way, ranking each topic's last line first; a real run's odd
      inversion (rank 772 before 771) does not hide it;
    * the scores are distinct whole numbers in (99 % of) the topics, like ranks, the rank
      column is not (fractions or repeats in most topics), and the scores do not fall down
      the file (a writer that sorts tied scores by docno lists the ranks out of order).
      ``rank_column`` (called only then) gives the rank column's text of each record.
    """
    up, down = _steps(codes, score)
    pairs = up + down
    if pairs >= SWAP_PAIRS and up >= SWAP_SHARE * pairs:
        return f"Scores rise like ranks in {_share(up, pairs)} of {pairs:,} pairs of lines"
    if len(score) < SWAP_PAIRS or (pairs >= SWAP_PAIRS and down >= SWAP_SHARE * pairs):
        return ""
    if _whole_distinct(codes, score) < SWAP_SHARE:
        return ""
    text = rank_column()
    if not all(text):  # the rank column could not be read again (a pipe): no claim
        return ""
    rank = np.array([_number(t) for t in text], dtype=np.float64)
    if _whole_distinct(codes, rank) >= 0.5 or len(np.unique(rank)) < 2:  # (a constant rank column says nothing)
        return ""
    odd = next((k for k, r in enumerate(rank) if not (np.isfinite(r) and r == np.floor(r))), None)
    if odd is not None:
        shown = f" ({text[odd].decode('utf-8', 'replace')!r})"
    else:  # whole numbers, repeated within a topic
        seen: set = set()
        twice = b""
        for c, t in zip(codes.tolist(), text):
            if (c, t) in seen:
                twice = t
                break
            seen.add((c, t))
        shown = f" ({twice.decode('utf-8', 'replace')!r} twice in a topic)" if twice else ""
    return f"Scores look like ranks (distinct whole numbers), ranks do not{shown}"


def _steps(codes: np.ndarray, score: np.ndarray) -> tuple[int, int]:
    """How many pairs of consecutive records of a topic have rising scores, and how many
    falling (one compiled pass; numpy's takes four passes and two copies of the column)."""
    k = _kernels()
    if k is not None:
        up, down = k[4](codes, score)
        return int(up), int(down)
    same = codes[1:] == codes[:-1]
    a, b = score[:-1][same], score[1:][same]
    return int((b > a).sum()), int((b < a).sum())


def _share(k: int, n: int) -> str:
    """``k`` of ``n`` as a percentage that never rounds to 100 % short of all."""
    pct = 100 * k / n
    return "100 %" if k == n else f"{min(pct, 99.9):.1f} %" if pct >= 1 else f"{pct:.2g} %"


def _number(text: bytes) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _whole_distinct(codes: np.ndarray, values: np.ndarray) -> float:
    """The share of topics whose values are whole numbers, none repeated (ranks are)."""
    topics = np.unique(codes)
    if not len(topics):
        return 0.0
    whole = np.isfinite(values) & (values == np.floor(values))
    bad_topics = set(np.unique(codes[~whole]).tolist())
    if len(bad_topics) == len(topics):  # (real-valued scores: no sort needed)
        return 0.0
    order = np.lexsort((values, codes))
    c, v = codes[order], values[order]
    repeat = (c[1:] == c[:-1]) & (v[1:] == v[:-1])
    bad_topics |= set(np.unique(c[1:][repeat]).tolist())
    return 1 - len(bad_topics) / len(topics)


def ordered_run(name: str, docno, score, topics, codes, drop, path: str, owned: bool = False) -> Run:
    """The :class:`Run` of these records (topic ``topics[codes[i]]``) without those in
    ``drop`` (later duplicates), in trec_eval order (shared by the file reader and
    irscale.io.memory). ``owned``: the arrays are the caller's to reorder in place."""
    if len(drop):
        keep = np.ones(len(docno), dtype=bool)
        keep[drop] = False
        docno, score, codes, owned = docno[keep], score[keep], codes[keep], True
    order, ties = _trec_order(codes, score, docno)
    if order is not None:
        docno, score, codes, owned = docno[order], score[order], codes[order], True
    if ties is not None:  # records already in order but for ties, reordered where they are
        pos, src = ties
        if not owned:
            docno, score = docno.copy(), score.copy()
        docno[pos], score[pos] = docno[src], score[src]  # (codes are equal within a tie)
    offsets = np.searchsorted(codes, np.arange(len(topics) + 1))
    return Run(name, docno, score, topics, offsets, path)


def parse_run(
    data: bytes,
    path: str | Path = "<memory>",
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    metadata: Metadata = "error",
) -> Run:
    """Parse run text (see :func:`read_run`)."""
    (run,) = parse_runs(
        data,
        path,
        name=name,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        metadata=metadata,
    )
    return run


def trec_order(topic_codes: np.ndarray, score: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Permutation putting records in trec_eval order: topic ascending, score
    descending, docno descending (byte-wise)."""
    order, ties = _trec_order(topic_codes, score, docno)
    o = np.arange(len(score)) if order is None else order
    if ties is not None:
        o[ties[0]] = o[ties[1]]
    return o


def _trec_order(topic_codes: np.ndarray, score: np.ndarray, docno: np.ndarray):
    """:func:`trec_order` in two steps, ``(order, ties)``: ``order`` sorts by topic and
    score (None when the records are in that order already), then ``ties = (pos, src)``
    orders each tie group by docno descending: the record at ``pos[i]`` is the one at
    ``src[i]`` (None when no two records of a topic share a score). Ties touch few
    records, so a file in rank order is put in trec_eval order without a full copy."""
    # files usually list each topic's documents by rank, so scores already fall within a
    # topic: then a stable sort by topic (radix sort for int16 codes, or none when the
    # topics come in order) is the order; else stable sorts by score desc, then topic asc
    o = None if (np.diff(topic_codes) >= 0).all() else np.argsort(topic_codes, kind="stable")
    t, s = (topic_codes, score) if o is None else (topic_codes[o], score[o])
    if not ((s[1:] <= s[:-1]) | (t[1:] != t[:-1])).all():
        o = np.argsort(-score, kind="stable")
        o = o[np.argsort(topic_codes[o], kind="stable")]
        t, s = topic_codes[o], score[o]
    same = (t[1:] == t[:-1]) & (s[1:] == s[:-1])
    if not same.any():
        return o, None
    in_tie = np.zeros(len(t), dtype=bool)
    in_tie[1:] |= same
    in_tie[:-1] |= same
    pos = np.flatnonzero(in_tie)
    group = np.cumsum(np.r_[True, ~same])[pos]
    d = docno[pos] if o is None else docno[o[pos]]
    inner = np.argsort(d, kind="stable")[::-1]  # docno descending
    inner = inner[np.argsort(group[inner], kind="stable")]
    return o, (pos, pos[inner])


def read_run(
    path: str | Path,
    *,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    progress: Callable[[float], None] | None = None,
    metadata: Metadata = "error",
) -> Run:
    """Read a TREC run file ``qid Q0 docno rank score tag`` (plain or gzip).

    Documents of a topic are ordered like trec_eval 10: by score descending, ties broken
    by docno descending (byte-wise). The rank column is ignored. Scores are plain decimal
    numbers or inf/infinity (see the module docstring).

    Parameters
    ----------
    name : str, optional
        Name of the run; default its tag. The tag must be the same on every line: a file
        with several tags is an error whatever ``name`` is (read it with
        ``read_runs(path, split_tags=True)``).
    score_precision : {"float64", "float32"}
        ``"float32"`` rounds scores to 32-bit floats before ordering, like trec_eval up
        to 9.0.8, pytrec_eval and the official results of old TREC campaigns.
    extra_fields : {"error", "ignore"}
        What to do with lines that have more than six fields (trec_eval ignores the rest).
    duplicates : {"error", "first"}
        A docno retrieved twice for one topic (of one run) is an error, or only its first
        line is kept.
    progress : callable, optional
        ``progress(fraction)``, called with the share of the file read as it is read
        (in pieces of 16 MB of text, so memory never holds the whole text).
    metadata : {"error", "warn", "ignore"}
        The file's ir_metadata header (YAML between ``# ir_metadata.start`` and
        ``# ir_metadata.end`` at the top of the file), kept as :attr:`Run.metadata`: a
        malformed one is an error naming the file and line (``"error"``), or is left out
        with a warning (``"warn"``); ``"ignore"`` never reads it (its lines are comments).

    Raises
    ------
    InputFormatError
        naming the file and line, for every malformed input and for several tags.
    PolicyError
        for an option value that is not one of those listed.

    Warns
    -----
    IrscaleWarning
        when a UTF-8 byte-order mark at the start of the file is ignored.
    """
    (run,) = _parse_runs(
        _path(path),
        str(path),
        split_tags=False,
        name=name,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        progress=progress,
        metadata=metadata,
    )
    return run


def read_runs(
    path: str | Path,
    *,
    split_tags: bool = False,
    name: str | None = None,
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    progress: Callable[[float], None] | None = None,
    metadata: Metadata = "error",
) -> list[Run]:
    r"""Read a TREC run file that may hold several runs, one per tag.

    Parameters
    ----------
    split_tags : bool
        ``True``: one :class:`Run` per distinct tag, named by the tag, in the order of
        each tag's first line; each is in trec_eval order and duplicates are found within
        it (the same docno in two runs is no duplicate). ``False``: like :func:`read_run`
        (several tags are an error), as a list of one run.
    name : str, optional
        Name of the run when the file holds a single one; with several tags, an error.
    score_precision, extra_fields, duplicates, progress, metadata
        As in :func:`read_run` (duplicates are looked for within each run; every run of
        the file gets the file's ir_metadata header).

    Returns
    -------
    list of Run

    Examples
    --------
    >>> runs = parse_runs(b"1 Q0 a 1 2.0 bm25\n1 Q0 a 1 0.5 lm\n1 Q0 b 2 1.5 bm25\n", split_tags=True)
    >>> [(r.name, [d.decode() for d in r.docno]) for r in runs]
    [('bm25', ['a', 'b']), ('lm', ['a'])]
    """
    return _parse_runs(
        _path(path),
        str(path),
        split_tags=split_tags,
        name=name,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        progress=progress,
        metadata=metadata,
    )


def _path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise ArgumentError(f"a file path (str or pathlib.Path) was expected, not {type(path).__name__} {path!r}")
    return Path(path)


def write_run(path: str | Path, run: Run, metadata: dict | None = None) -> Path:
    r"""Write ``run`` as a TREC run file ``qid Q0 docno rank score tag`` (plain text),
    in trec_eval order with ranks 1, 2, ... per topic and the run's name as the tag;
    scores as the shortest text that reads back to the same float, so
    :func:`read_run` gives the run back bit for bit. ``metadata`` (default: the run's
    own :attr:`Run.metadata`) becomes an ir_metadata header at the top of the file.
    Returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> run = Run.from_records([("1", "a", 2.0), ("1", "b", 0.5)], name="bm25")
    >>> path = write_run(pathlib.Path(tempfile.mkdtemp()) / "bm25.run", run, {"tag": "bm25"})
    >>> print(path.read_text(), end="")
    # ir_metadata.start
    # tag: bm25
    # ir_metadata.end
    1 Q0 a 1 2.0 bm25
    1 Q0 b 2 0.5 bm25
    >>> read_run(path).metadata
    {'tag': 'bm25'}
    """
    path = _path(path)
    if not isinstance(run, Run):
        raise ArgumentError(f"run must be an irscale.io.Run, not {type(run).__name__}")
    if not run.name or any(c.isspace() for c in run.name):
        raise ArgumentError(
            f"the run's name {run.name!r} is its tag (6th field): it must be non-empty without spaces; "
            "rename it, e.g. dataclasses.replace(run, name='bm25')"
        )
    metadata = run.metadata if metadata is None else metadata
    if metadata is not None and not isinstance(metadata, dict):
        raise ArgumentError(f"metadata must be a dict (the PRIMAD sections) or None, not {type(metadata).__name__}")
    tag = run.name
    sizes = np.diff(run.offsets)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        if metadata is not None:
            f.write(header_text(metadata))
        for t, qid in enumerate(run.topic_names):
            lo = int(run.offsets[t])
            for r in range(int(sizes[t])):
                f.write(f"{qid} Q0 {run.docno[lo + r].decode()} {r + 1} {float(run.score[lo + r])!r} {tag}\n")
    return path
