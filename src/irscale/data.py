"""Judged runs: the representation every later stage consumes.

A :class:`JudgedRuns` holds, for S systems over the T qrels topics, the grade of the
document at each rank as an int16 array of shape (S, T, D). Two sentinels mark what is
not a judged grade:

* :data:`UNJUDGED` — a retrieved document absent from the qrels (non-relevant for every
  measure; skipped by bpref, as in trec_eval);
* :data:`PAD` — past the end of the run on that topic (never relevant, not counted as
  retrieved).

Negative grades from the qrels are kept as they are: they are never relevant and, as in
trec_eval, bpref skips them like unjudged documents.

Judged only (``judged_only=True``, trec_eval's ``-J``): each ranking is condensed, its
unjudged documents and those judged below 0 removed and the judged ones moved up in
order (:func:`condense`), after the cut at ``depth`` (trec_eval's ``-M``) and before
any measure's cutoff: Sakai's condensed lists.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np

from irscale.errors import ArgumentError, InputFormatError, IrscaleError, PolicyError, check_choice, warn
from irscale.io.trec import Qrels, Run, grade_text, key_hash
from irscale.kernels import compiled
from irscale.validate import decimal_text, integer

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "assemble",
    "check_options",
    "condense",
    "Grade",
    "grade_level",
    "grade_scale",
    "grade_values_record",
    "JUDGE_BLOCK",
    "judge_run",
    "JUDGE_SPREAD",
    "JudgedRuns",
    "MissingTopics",
    "PAD",
    "stack",
    "topic_stats",
    "TopicStats",
    "UNJUDGED",
    "warn_no_relevant",
]


PAD = np.int16(-32768)
UNJUDGED = np.int16(-32767)

MissingTopics = Literal["zero", "drop", "error"]

Grade = int | Fraction  # a grade threshold (a measure's rel): an integer, or a real-valued grade


def grade_level(rel: Grade, values: Sequence[Fraction] | None = None) -> int:
    """The level code from which a grade counts as relevant at threshold ``rel`` (grade >=
    rel): on integer grades (``values`` None) the least integer >= rel; on real-valued
    ones (``values[code]``, increasing from 0) the first code whose grade is >= rel
    (``len(values)``, past the top, where none is). The one place a threshold meets codes.

    >>> from fractions import Fraction
    >>> grade_level(2), grade_level(Fraction(1, 2)), grade_level(Fraction(1, 2), (0, Fraction(1, 4), Fraction(7, 10)))
    (2, 1, 2)
    """
    if values is None:
        return rel if isinstance(rel, int) else math.ceil(rel)
    return bisect_left(values, rel)


@dataclass(frozen=True, eq=False)
class TopicStats:
    """What measures need to know about each topic beyond the ranked list.

    ``level_counts[t, g]`` is the number of judged documents of grade ``g`` (0..c) for
    topic ``t``; ``max_grade`` is c, the highest grade of the relevance scale (at least 1).
    ``values``: None for integer grades; for real-valued ones the exact grade of each
    level code 0..c (the grades of the run arrays are then codes; a measure is computed on
    them as :meth:`irscale.measures.Measure.for_grades` turns it).
    """

    names: tuple[str, ...]
    level_counts: np.ndarray
    max_grade: int
    values: tuple[Fraction, ...] | None = None

    def __post_init__(self):
        if self.level_counts.ndim != 2 or self.level_counts.shape[1] != self.max_grade + 1:
            raise ValueError("level_counts must have shape (topics, max_grade + 1)")
        if self.values is not None and len(self.values) != self.max_grade + 1:
            raise ValueError("values must give the grade of each level 0..max_grade")

    def __len__(self) -> int:
        return len(self.names)

    def level_of(self, rel: Grade) -> int:
        """The level code of the threshold ``rel`` on this scale (:func:`grade_level`)."""
        return grade_level(rel, self.values)

    def grade_text(self, code: int) -> str:
        """The grade of a level code as a file writes it (:func:`irscale.io.trec.grade_text`)."""
        return grade_text(code, self.values)

    def num_rel(self, rel: Grade = 1) -> np.ndarray:
        """Recall base: judged documents with grade code >= ``rel``, per topic."""
        return self.level_counts[:, max(grade_level(rel), 0) :].sum(axis=1)

    def num_nonrel(self, rel: Grade = 1) -> np.ndarray:
        """Judged non-relevant documents (0 <= grade code < ``rel``), per topic."""
        return self.level_counts[:, : max(grade_level(rel), 0)].sum(axis=1)

    def gain_base(self) -> np.ndarray:
        """Recall base in gain units, sum of the grades of all judged documents."""
        return self.level_counts @ np.arange(self.max_grade + 1)

    def ideal_grades(self, rel: Grade | None = None) -> np.ndarray:
        """Grades of the ideal ranking per topic, descending, zero-padded: (T, max R).

        With ``rel`` given, relevance is binary (grade 1 for grade >= rel)."""
        if rel is None:
            counts = self.level_counts[:, 1:]
            levels = np.arange(1, self.max_grade + 1)
        else:
            counts = self.num_rel(rel)[:, None]
            levels = np.array([1])
        width = max(int(counts.sum(axis=1).max(initial=0)), 1)
        out = np.zeros((len(self), width), dtype=np.float64)
        for t in range(len(self)):
            g = np.repeat(levels[::-1], counts[t][::-1])
            out[t, : len(g)] = g
        return out

    @classmethod
    def from_qrels(cls, qrels: Qrels, max_grade: int | None = None) -> TopicStats:
        """Judgement counts per topic and grade; ``max_grade`` (default: the qrels'
        highest grade) is the top c of the scale, higher grades count as c."""
        c = max(qrels.max_grade if max_grade is None else max_grade, 1)
        pos = qrels.grade >= 0
        lc = np.zeros((len(qrels.topics), c + 1), dtype=np.int64)
        np.add.at(lc, (qrels.topic_code[pos], np.minimum(qrels.grade[pos].astype(np.int64), c)), 1)
        values = qrels.values  # real-valued: 0 and at least one positive grade, so c = len(values) - 1
        return cls(tuple(qrels.topic_names), lc, c, None if values is None else tuple(values[: c + 1]))

    @classmethod
    def single(cls, level_counts: Sequence[int]) -> TopicStats:
        """One topic with ``level_counts[g]`` judged documents of grade g (0..c)."""
        lc = np.asarray(level_counts, dtype=np.int64)
        c = max(len(lc) - 1, 1)
        full = np.zeros(c + 1, dtype=np.int64)
        full[: len(lc)] = lc
        return cls(("t",), full[None, :], c)


@dataclass(frozen=True, eq=False)
class JudgedRuns:
    """Grades of S runs on T topics at D ranks (see the module docstring).

    Attributes
    ----------
    systems : tuple of str
        Run names, in input order.
    topics : TopicStats
        The qrels topics (sorted byte-wise, like trec_eval) and their judgement counts.
    grades : ndarray of int16, shape (S, T, D)
    missing : dict
        For each system, the qrels topics it did not retrieve anything for.
    missing_topics : {"zero", "drop"}
        How those topics are scored: 0 on every measure, or left out of that run's means
        (see :func:`assemble`).
    depth : int, optional
        The depth the runs were cut at when read (``evaluate(..., depth=)``), if any.
    kept : int, optional
        Set when only the first ``kept`` ranks of each run were kept (the rest was scored
        and let go: see ``irscale.evaluate``'s ``keep_depth``); a measure or run length
        that needs deeper ranks is then refused (:meth:`check_depth`).
    retrieved : ndarray, optional
        (S, T) documents retrieved, counted before the cut (:attr:`num_ret`).
    metadata : dict
        The ir_metadata header of each run whose file has one (run name -> its
        PRIMAD sections); runs without a header are not in it.
    judged_only : bool
        Each ranking was condensed when judged (trec_eval ``-J``; :func:`condense`): it
        holds no unjudged document, and its ranks are ranks among the judged ones.
    """

    systems: tuple[str, ...]
    topics: TopicStats
    grades: np.ndarray
    missing: dict[str, list[str]] = field(default_factory=dict)
    missing_topics: str = "zero"
    depth: int | None = None
    kept: int | None = None
    retrieved: np.ndarray | None = field(default=None, repr=False)
    metadata: dict[str, dict] = field(default_factory=dict, repr=False)
    judged_only: bool = False

    def check_depth(self, needed: int | None, what: str) -> None:
        """Refuse ``what`` (a measure, a run length) when it needs ranks below those kept
        (``needed``: its depth; None, every rank)."""
        if self.kept is not None and (needed is None or needed > self.kept):
            raise ArgumentError(
                f"{what} needs {'every rank' if needed is None else f'the first {needed} ranks'} of each run, but "
                "these "
                f"runs keep their first {self.kept} (irscale.evaluate scores every rank it reads, then keeps "
                f"keep_depth={self.kept} of them); evaluate the runs with keep_depth={needed or 'None'}, or score "
                "it in the evaluate call itself"
            )

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.grades.shape

    def binarised(self, rel: Grade = 1) -> JudgedRuns:
        """The same runs judged against binarised qrels: grade >= ``rel`` becomes 1 and
        every other judged grade 0 (the "lenient" mapping of the 2021 paper for graded
        collections); unjudged documents and padding stay as they are. ``rel`` is a grade
        (0.5 on real-valued grades)."""
        rel = self.topics.level_of(rel)
        g = self.grades
        sentinel = (g == PAD) | (g == UNJUDGED)
        out = np.where(sentinel, g, np.where(g >= rel, 1, 0)).astype(g.dtype)
        lc = self.topics.level_counts
        counts = np.stack([lc[:, : max(rel, 0)].sum(axis=1), lc[:, max(rel, 0) :].sum(axis=1)], axis=1)
        topics = TopicStats(self.topics.names, counts, 1)
        return JudgedRuns(
            self.systems,
            topics,
            out,
            self.missing,
            self.missing_topics,
            self.depth,
            self.kept,
            self.retrieved,
            self.metadata,
            self.judged_only,
        )

    @cached_property
    def num_ret(self) -> np.ndarray:
        """Number of retrieved documents per (system, topic)."""
        return self.retrieved if self.retrieved is not None else (self.grades != PAD).sum(axis=-1)


@dataclass(frozen=True, eq=False)
class _QrelsIndex:
    """Hash table of the qrels: a 64-bit hash of (topic, docno) per record, in a pandas
    hash index (O(1) lookups); every hit is then verified on the bytes, so the lookup
    stays exact."""

    table: pd.Index  # the record hashes, in record order
    width: int  # docno width the hash covers
    unique: bool  # no two qrels keys share a hash (else the slow exact path is used)


def _index(qrels: Qrels) -> _QrelsIndex:
    cached = getattr(qrels, "_irscale_index", None)
    if cached is not None:
        return cached
    import pandas as pd

    W = qrels.docno.dtype.itemsize
    table = pd.Index(key_hash(qrels.topic_code, qrels.docno.view(np.uint8).reshape(-1, W)))
    idx = _QrelsIndex(table, W, bool(table.is_unique))
    object.__setattr__(qrels, "_irscale_index", idx)
    return idx


JUDGE_BLOCK = 1 << 21  # records looked up at a time: temporaries stay near 100 MB on any run

JUDGE_SPREAD = 8  # the compiled pass's hash tables are at most 1/JUDGE_SPREAD full


def _judge_kernels():
    """The judging pass compiled with numba, ``(hashes, judge)``, or None where numba is
    missing (the pandas hash index of :func:`_index` serves). ``hashes`` hashes each
    judged docno once per qrels (:func:`_judge_tables`); ``judge`` fills, topic by topic,
    a small hash table from those hashes (it stays in cache) and looks each document of a
    run up in it: one pass over the run's docnos and no temporary the size of the run,
    where the numpy path hashes, looks up in pandas and verifies in separate passes
    (several times slower on the 10 M records of bench/evaluate.py's MS MARCO-like run)."""
    return compiled("data.judge", _build_judge_kernels)


def _build_judge_kernels(numba):
    # (The helpers are inner functions: a kernel that calls another numba function is
    # compiled again in every process instead of loaded from numba's cache.)

    @numba.njit(nogil=True, cache=True)
    def hashes(qdocs):  # pragma: no cover
        # FNV-1a over the bytes of each row but NULs (padding: a docno hashes the same at
        # any width), then murmur's finaliser (the tables use the low bits)
        out = np.empty(qdocs.shape[0], dtype=np.uint64)
        for i in range(qdocs.shape[0]):
            h = np.uint64(14695981039346656037)
            for j in range(qdocs.shape[1]):
                b = qdocs[i, j]
                if b != 0:
                    h = (h ^ np.uint64(b)) * np.uint64(1099511628211)
            h ^= h >> np.uint64(33)
            h *= np.uint64(0xFF51AFD7ED558CCD)
            h ^= h >> np.uint64(33)
            out[i] = h
        return out

    @numba.njit(nogil=True, cache=True)
    def judge(docs, offsets, sizes, pos, qdocs, qhash, qstart, qgrades, out, unjudged, spread):  # pragma: no cover
        # out[pos[t], r] = the grade of the r-th document of run topic t, for r < sizes[t].
        # Per topic, a hash table of its judgements at most 1/spread full (spread 8: it
        # stays in cache and an unjudged document mostly meets an empty slot at once;
        # tests pass 1 for long probe chains), filled from the qrels' hashes (computed
        # once per qrels); one slot at least stays empty. A slot holds the record index in
        # its low 32 bits and the top 31 bits of the docno's hash above them, so a probe
        # reads a judged docno's bytes only where those agree; -1 is empty. docs and qdocs
        # may differ in width: a docno equals a judged one where their bytes agree and the
        # wider one has only NULs (padding) past the narrower's width. (Slots are int64:
        # numba types int64 + uint64 as a float.)
        def key(m, i):  # hashes()'s loop body, repeated: an inner function cannot be shared
            h = np.uint64(14695981039346656037)
            for j in range(m.shape[1]):
                b = m[i, j]
                if b != 0:
                    h = (h ^ np.uint64(b)) * np.uint64(1099511628211)
            h ^= h >> np.uint64(33)
            h *= np.uint64(0xFF51AFD7ED558CCD)
            h ^= h >> np.uint64(33)
            return h

        def pow2(n):
            m = 16
            while m < n:
                m *= 2
            return m

        most = 1
        for q in range(len(qstart) - 1):
            most = max(most, qstart[q + 1] - qstart[q])
        table = np.empty(pow2(spread * most + 1), dtype=np.int64)
        w, W = docs.shape[1], qdocs.shape[1]
        n = min(w, W)
        for t in range(len(sizes)):
            if sizes[t] == 0:
                continue
            tq = pos[t]
            lo, hi = qstart[tq], qstart[tq + 1]
            mask = pow2(spread * (hi - lo) + 1) - 1
            table[: mask + 1] = -1
            for k in range(lo, hi):  # the qrels hold no duplicate key
                h = qhash[k]
                i = np.int64(h & np.uint64(mask))
                while table[i] >= 0:
                    i = (i + 1) & mask
                table[i] = (np.int64(h >> np.uint64(33)) << 32) | k
            for r in range(sizes[t]):
                d = offsets[t] + r
                h = key(docs, d)
                i = np.int64(h & np.uint64(mask))
                top = np.int64(h >> np.uint64(33))
                g = unjudged
                while table[i] >= 0:
                    k = table[i] & 0xFFFFFFFF
                    if table[i] >> 32 == top:  # else another docno: its bytes need no reading
                        j = 0
                        while j < n and docs[d, j] == qdocs[k, j]:
                            j += 1
                        if j == n:
                            while j < w and docs[d, j] == 0:
                                j += 1
                            while j < W and qdocs[k, j] == 0:
                                j += 1
                            if j == max(w, W):
                                g = qgrades[k]
                                break
                    i = (i + 1) & mask
                out[tq, r] = g

    return hashes, judge


def _judge_tables(qrels: Qrels, kernels) -> tuple[np.ndarray, np.ndarray]:
    """The qrels' docnos as byte rows and the hash of each, ``(qdocs, qhash)``, computed
    once per qrels and kept on it: :func:`irscale.loading.iter_judged` makes them before
    its forked readers share them, so no run hashes the judgements again."""
    cached = getattr(qrels, "_irscale_judge", None)
    if cached is None:
        if len(qrels.docno) >= 2**32:  # (a slot keeps the record index in 32 bits)
            raise ArgumentError(f"{len(qrels.docno):,} judgements: the compiled judge takes fewer than 2^32")
        qdocs = _byte_rows(qrels.docno)
        cached = (qdocs, kernels[0](qdocs))
        object.__setattr__(qrels, "_irscale_judge", cached)
    return cached


def _byte_rows(a: np.ndarray) -> np.ndarray:
    """An ``S`` array as a (n, width) uint8 matrix (a view where it is contiguous)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(len(a), a.dtype.itemsize)


def _topic_starts(qrels: Qrels) -> np.ndarray:
    """Where each qrels topic's records start (``len(topics) + 1`` entries), cached."""
    cached = getattr(qrels, "_irscale_starts", None)
    if cached is None:
        cached = np.searchsorted(qrels.topic_code, np.arange(len(qrels.topics) + 1)).astype(np.int64)
        object.__setattr__(qrels, "_irscale_starts", cached)
    return cached


def judge_run(
    run: Run, qrels: Qrels, depth: int | None = None, judged_only: bool = False
) -> tuple[np.ndarray, list[str], list[str]]:
    """Grades of one run on the qrels topics, in trec_eval order.

    Returns the (T, D) int16 grade matrix (PAD-filled), the qrels topics the run lacks,
    and the run topics absent from the qrels (ignored, as trec_eval does). The run is cut
    at ``depth`` first; ``judged_only`` then condenses each ranking (:func:`condense`,
    trec_eval ``-J``). A topic the run retrieved only unjudged documents for stays a
    topic of the run (an empty ranking, scored as trec_eval -J scores it: 0, but
    NumRel, and rbp_resid 1), not a missing one.
    """
    T = len(qrels.topics)
    pos = np.searchsorted(qrels.topics, run.topics)
    pos_c = np.minimum(pos, T - 1)
    known = (pos < T) & (qrels.topics[pos_c] == run.topics)
    extra = [t.decode() for t in run.topics[~known]]
    present = np.zeros(T, dtype=bool)
    present[pos[known]] = True
    missing = [qrels.topics[t].decode() for t in np.flatnonzero(~present)]
    sizes = np.diff(run.offsets)
    if depth is not None:
        sizes = np.minimum(sizes, depth)
    sizes = np.where(known, sizes, 0)  # topics absent from the qrels are skipped
    out = np.full((T, max(int(sizes.max(initial=0)), 1)), PAD, dtype=np.int16)
    kernels = _judge_kernels()
    if kernels is not None:
        qdocs, qhash = _judge_tables(qrels, kernels)
        kernels[1](
            _byte_rows(run.docno),
            run.offsets[:-1].astype(np.int64),
            sizes.astype(np.int64),
            pos_c.astype(np.int64),
            qdocs,
            qhash,
            _topic_starts(qrels),
            qrels.grade,
            out,
            UNJUDGED,
            JUDGE_SPREAD,
        )
        return (condense(out) if judged_only else out), missing, extra
    # blocks of whole topics, about JUDGE_BLOCK records each (a topic larger than that alone)
    ends = np.cumsum(sizes)
    k = 0
    while k < len(sizes):
        stop = max(int(np.searchsorted(ends, ends[k] - sizes[k] + JUDGE_BLOCK, side="right")), k + 1)
        block = np.arange(k, stop)
        n = sizes[block]
        rank = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)  # rank within its topic
        rec = np.repeat(run.offsets[block], n) + rank  # record index in the run
        tq = np.repeat(pos_c[block], n)
        out[tq, rank] = _lookup(qrels, tq, run.docno[rec])
        k = stop
    return (condense(out) if judged_only else out), missing, extra


def condense(grades: np.ndarray) -> np.ndarray:
    """Each ranking (the last axis) with its unjudged documents and those judged below 0
    removed, the judged ones moved up in their order and PAD after them: the condensed
    list (Sakai 2007), what trec_eval ``-J`` scores (it keeps the documents judged 0 or
    above, their order that of the full ranking). The last axis is cut to the longest
    condensed ranking (at least 1).

    >>> condense(np.array([[2, UNJUDGED, 0, -1, 1, PAD]], dtype=np.int16)).tolist()
    [[2, 0, 1]]
    """
    keep = grades >= 0  # PAD, UNJUDGED and negative judgements are all < 0
    n = keep.sum(axis=-1)
    width = max(int(n.max(initial=0)), 1)
    order = np.argsort(~keep, axis=-1, kind="stable")[..., :width]
    out = np.take_along_axis(grades, order, axis=-1)
    out[np.arange(width) >= n[..., None]] = PAD
    return out


def _lookup(qrels: Qrels, topic_idx: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Qrels grade of each (topic index, docno) pair, UNJUDGED when absent."""
    ix = _index(qrels)
    W = ix.width
    n = len(docno)
    w = docno.dtype.itemsize
    dm = docno.view(np.uint8).reshape(n, w)
    if w >= W:
        mat = dm[:, :W]
        too_long = dm[:, W] != 0 if w > W else np.zeros(n, dtype=bool)
    else:
        mat = np.zeros((n, W), dtype=np.uint8)
        mat[:, :w] = dm
        too_long = np.zeros(n, dtype=bool)
    if ix.unique:
        rec = ix.table.get_indexer(key_hash(topic_idx, mat))
        rec[rec < 0] = 0  # absent: record 0, rejected by the verification below
    else:  # a hash collision inside the qrels (improbable): exact search per topic
        rec = np.zeros(n, dtype=np.int64)
        for t in np.unique(topic_idx):
            lo, hi = np.searchsorted(qrels.topic_code, [t, t + 1])
            sel = topic_idx == t
            rec[sel] = lo + np.minimum(np.searchsorted(qrels.docno[lo:hi], docno[sel]), max(hi - lo - 1, 0))
    hit = (qrels.topic_code[rec] == topic_idx) & (qrels.docno[rec] == docno) & ~too_long
    return np.where(hit, qrels.grade[rec], UNJUDGED).astype(np.int16)


def check_options(depth: int | None, missing_topics: str) -> int | None:
    """Validate the judging options; returns ``depth`` as an int (or None)."""
    check_choice("missing_topics", missing_topics, ("zero", "drop", "error"))
    return integer("depth", depth, minimum=1, none=True)


def grade_scale(qrels: Qrels, max_grade: int | None = None) -> int:
    """The top grade c of the relevance scale: ``max_grade`` if given (grades above it
    count as c, with a warning), else the qrels' highest grade (with a warning when that
    grade looks like an outlier that would silently rescale every topic: more than 10
    above the next grade used, or used by under 1% of the judgements with an unused
    grade between it and the next)."""
    grades = qrels.grade[qrels.grade >= 0].astype(np.int64)
    if qrels.values is not None:  # real-valued: the levels are the grades present, nothing to cap or doubt
        if max_grade is not None:
            raise ArgumentError(
                f"{qrels.path}: max_grade (--max-grade) caps integer grades, and these grades are real-valued "
                f"({len(qrels.values) - 1} distinct positive grades, up to {qrels.grade_text(qrels.max_grade)}); "
                "leave it out, or give binary measures a threshold such as rel=0.5"
            )
        return max(qrels.max_grade, 1)
    if max_grade is not None:
        from irscale.io.trec import GRADE_MAX

        max_grade = integer("max_grade", max_grade, minimum=1, maximum=GRADE_MAX)
        above = np.flatnonzero(qrels.grade > max_grade)
        if len(above):
            line, grade = _first_line_above(qrels, max_grade)
            where = f"{qrels.path}:{line}" if line else qrels.path
            warn(
                f"{where}: {len(above):,} judgement(s) have a grade above --max-grade {max_grade} (the first: "
                f"{grade}); they count as grade {max_grade}",
                stacklevel=3,
            )
        return max_grade
    if len(grades) == 0:
        return 1
    levels, counts = np.unique(grades, return_counts=True)
    top = int(levels[-1])
    if len(levels) >= 2 and top >= 2:
        nxt = int(levels[-2])
        share = counts[-1] / len(grades)
        if top - nxt > 10 or (share < 0.01 and top - nxt > 1):
            i = int(np.flatnonzero(qrels.grade == top)[0])
            many = "s" if counts[-1] != 1 else ""
            warn(
                f"{_where(qrels, i)}: top grade {top} ({int(counts[-1]):,} judgement{many}) is {top - nxt} above the "
                f"next ({nxt}) and scales RBP, ERR, gP; a typo? else --max-grade {nxt} caps it",
                stacklevel=3,
            )
    return max(top, 1)


def _where(qrels: Qrels, i: int) -> str:
    """``file:line`` of qrels record i (found again in the file: warnings only)."""
    line = _qrels_line(qrels, i)
    return f"{qrels.path}:{line}" if line else qrels.path


def _qrels_lines(qrels: Qrels):
    """(line number, fields) of the data lines of the qrels file (warnings only)."""
    from irscale.io.trec import BOM, read_bytes

    try:
        data = read_bytes(qrels.path)
    except (IrscaleError, OSError):
        return
    if data.startswith(BOM):
        data = data[len(BOM) :]
    for n, line in enumerate(data.split(b"\n"), 1):
        f = line.split()
        if len(f) >= 4 and not f[0].startswith(b"#"):
            yield n, f


def _qrels_line(qrels: Qrels, i: int) -> int | None:
    want_q, want_d = qrels.qid[i], qrels.docno[i]
    return next((n for n, f in _qrels_lines(qrels) if f[0] == want_q and f[2] == want_d), None)


def _first_line_above(qrels: Qrels, max_grade: int) -> tuple[int | None, int]:
    """The first line (in file order) whose grade exceeds ``max_grade``, and that grade."""
    for n, f in _qrels_lines(qrels):
        try:
            if int(f[3]) > max_grade:
                return n, int(f[3])
        except ValueError:
            continue
    return None, int(qrels.grade.max())


def assemble(
    judged: Sequence[tuple[str, str, np.ndarray, list[str], list[str]]],
    qrels: Qrels,
    *,
    depth: int | None = None,
    missing_topics: MissingTopics = "zero",
    max_grade: int | None = None,
    judged_only: bool = False,
) -> JudgedRuns:
    """Stack the results of :func:`judge_run` (``(name, path, grades, missing, extra)``
    per run, optionally followed by the run's ir_metadata header or None) into
    :class:`JudgedRuns`.

    Run names must be unique; topics absent from the qrels are ignored with a warning.
    ``missing_topics`` says what becomes of a qrels topic that a run retrieves nothing
    for: ``"zero"``, the run scores 0 on it with every measure (like ``trec_eval -c``),
    with a warning naming run and topics; ``"drop"``, the topic is left out of that run's
    mean (like trec_eval without ``-c``), with a warning; ``"error"``, a
    :class:`~irscale.errors.PolicyError`. ``max_grade``: see :func:`grade_scale`.
    ``judged_only``: the rankings were condensed by :func:`judge_run` (recorded in
    :attr:`JudgedRuns.judged_only`).
    """
    stats = topic_stats(qrels, max_grade)
    return stack(judged, qrels, stats, depth=depth, missing_topics=missing_topics, seen={}, judged_only=judged_only)


def topic_stats(qrels: Qrels, max_grade: int | None = None) -> TopicStats:
    """The qrels' :class:`TopicStats` on the scale of :func:`grade_scale` (its warnings),
    with a warning naming the topics that have no relevant document."""
    stats = TopicStats.from_qrels(qrels, grade_scale(qrels, max_grade))
    empty = [stats.names[t] for t in np.flatnonzero(stats.num_rel(1) == 0)]  # (real-valued: no grade above 0)
    if empty:
        what = "no relevant document" if stats.values is None else "no grade above 0"
        warn(
            f"{len(empty)} qrels topic(s) have {what}; they score 0 on recall-based measures and "
            f"count in means: {_short(empty, 3)}",
            stacklevel=3,
        )
    return stats


def grade_values_record(stats: TopicStats) -> dict:
    """What a provenance records of real-valued grades: ``{"grade_values": [...]}``, the
    grade of each level code 0..c as decimal text (``["0", "0.25", "0.5", "1.7"]``; the
    level codes are what ``max_grade`` and ``levels`` count); nothing for integer grades."""
    if stats.values is None:
        return {}
    return {"grade_values": [stats.grade_text(k) for k in range(stats.max_grade + 1)]}


def warn_no_relevant(measures, stats: TopicStats) -> None:
    """Warn, per measure with a relevance level ``rel`` above the lowest positive grade
    (``AP(rel=3)``; ``P(rel=0.5)`` where 0.25 is a grade), naming the topics with no
    document of grade >= rel that still have a positive one (those are named once by
    :func:`topic_stats`): the measure scores 0 on them and they count in its means. Where
    no topic reaches rel (above the qrels' top grade) it says so. Each measure once per
    qrels (evaluate and then transform do not say it twice)."""
    warned = stats.__dict__.setdefault("_warned_no_relevant", set())
    top = stats.grade_text(stats.max_grade)
    for rel, names in _by_rel(measures, stats).items():
        names = [n for n in names if n not in warned]
        if not names:
            continue
        warned.update(names)
        empty = np.flatnonzero(stats.num_rel(stats.level_of(rel)) == 0)
        new = [stats.names[t] for t in empty if stats.num_rel(1)[t] > 0]
        if not new:
            continue
        what, shown = ", ".join(names), decimal_text(rel)
        if len(empty) == len(stats.names):
            warn(
                f"{what}: no topic has a document of grade >= {shown} (the top grade is {top}), so "
                f"{'they score' if len(names) > 1 else 'it scores'} 0 everywhere; use rel={top} or less",
                stacklevel=3,
            )
        else:
            warn(
                f"{what}: {len(new)} qrels topic(s) have no document of grade >= {shown}; "
                f"{'they score' if len(names) > 1 else 'it scores'} 0 there, counted in means: {_short(new, 3)}",
                stacklevel=3,
            )


def _by_rel(measures, stats: TopicStats) -> dict[Grade, list[str]]:
    """The measures' relevance levels above the first positive grade, with the measures at each."""
    out: dict[Grade, list[str]] = {}
    for m in measures:
        rel = getattr(m, "rel", None)
        if isinstance(rel, (int, Fraction)) and not isinstance(rel, bool) and stats.level_of(rel) > 1:
            out.setdefault(rel, []).append(str(m))
    return out


def stack(
    judged,
    qrels: Qrels,
    stats: TopicStats,
    *,
    depth: int | None,
    missing_topics: str,
    seen: dict[str, str],
    judged_only: bool = False,
) -> JudgedRuns:
    """:func:`assemble` for some of the runs: each run checked (see there) and their
    grades stacked; ``seen`` maps the names of the runs before them to their files (and
    gains theirs), so names stay unique across calls."""
    mats, missing, names = [], {}, []
    extras: dict[str, list[str]] = {}
    lacking: dict[str, list[str]] = {}
    headers: dict[str, dict] = {}
    for name, path, m, miss, extra, *header in judged:  # header: (the run's ir_metadata or None,), if given
        if header and header[0] is not None:
            headers[name] = header[0]
        if name in seen:
            first = seen[name]
            if first == path:
                raise PolicyError(f"{path} is given more than once (run names must be unique); name each run file once")
            raise PolicyError(
                f"two runs are named {name!r} ({first}, {path}); run names come from the tag column "
                "(6th field) and must be unique: change the tag in all but one of these files"
            )
        seen[name] = path
        if len(miss) == len(qrels.topics):
            raise InputFormatError(
                path,
                None,
                f"run {name!r} shares no topic with the qrels "
                f"({qrels.path}); check that they belong to the same collection",
            )
        if extra:
            extras[name] = extra
        if miss:
            if missing_topics == "error":
                raise PolicyError(
                    f"run {name!r} ({path}) has no results for qrels topic(s) "
                    f"{_short(miss)}; to score them 0 (trec_eval -c) pass missing_topics='zero' "
                    "(CLI --missing-topics zero), to leave them out pass 'drop' "
                    "(--missing-topics drop)"
                )
            lacking[name] = miss
        mats.append(m)
        missing[name] = miss
        names.append(name)
    what = "scored 0" if missing_topics == "zero" else "left out of its scores"
    _warn_topics(extras, ": ignoring {k} topic(s) absent from the qrels", "have topics absent from the qrels (ignored)")
    _warn_topics(
        lacking,
        " has no results for {k} qrels topic(s), " + what,
        "have no results for some qrels topics, " + what.replace("its", "their"),
    )
    D = max(m.shape[1] for m in mats) if mats else 1
    grades = np.full((len(mats), len(qrels.topics), D), PAD, dtype=np.int16)
    for i, m in enumerate(mats):
        grades[i, :, : m.shape[1]] = m
    return JudgedRuns(
        tuple(names), stats, grades, missing, missing_topics, depth, metadata=headers, judged_only=judged_only
    )


def _warn_topics(by_run: dict[str, list[str]], one: str, several: str) -> None:
    """One line for the topics of one batch of runs: ``run 'r'<one>: 401, 402`` (``{k}``
    in ``one``: how many) or, for several runs, ``3 runs <several>: r (2), s (1), t (1)``
    (the number of topics of each)."""
    if not by_run:
        return
    if len(by_run) == 1:
        ((name, topics),) = by_run.items()
        warn(f"run {name!r}{one.format(k=len(topics))}: {_short(topics, 3)}", stacklevel=4)
        return
    shown = ", ".join(f"{n} ({len(t)})" for n, t in list(by_run.items())[:3])
    more = f", ... ({len(by_run) - 3} more)" if len(by_run) > 3 else ""
    warn(f"{len(by_run)} runs {several}: {shown}{more}", stacklevel=4)


def _short(items: list[str], n: int = 10) -> str:
    return ", ".join(items[:n]) + (f", ... ({len(items) - n} more)" if len(items) > n else "")
