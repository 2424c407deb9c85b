"""evaluate -> (transform -> compare): the user-facing pipeline as plain functions."""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from irscale._version import __version__
from irscale.data import (
    PAD,
    JudgedRuns,
    MissingTopics,
    _index,
    _judge_kernels,
    assemble,
    check_options,
    grade_values_record,
    judge_run,
    stack,
    topic_stats,
    warn_no_relevant,
)
from irscale.errors import (
    ArgumentError,
    InputFormatError,
    IrscaleError,
    IrscaleWarning,
    MeasureError,
    check_choice,
    count_text,
    warn,
)
from irscale.io.memory import (
    INPUTS_QRELS,
    INPUTS_RUNS,
    is_parquet,
    memory_qrels,
    memory_runs,
    one_run,
    read_parquet_qrels,
    read_parquet_runs,
)
from irscale.io.trec import (
    Duplicates,
    ExtraFields,
    Metadata,
    Qrels,
    Run,
    ScorePrecision,
    check_reader_options,
    read_qrels,
    read_runs,
)
from irscale.measures import Measure, at_depth, parse_measures
from irscale.parallel import can_fork as _can_fork
from irscale.parallel import parallel_imap
from irscale.validate import flag, integer, wrong_type

DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "bpref")


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Per-topic scores of S systems on T topics for M measures.

    ``values[m, s, t]`` is the score of system s on topic t for measure m; NaN marks a
    topic left out of a system's scores (``missing_topics="drop"``).
    """

    measures: tuple[Measure | Ranked | HalfWidth, ...]  # columns: a Measure, its Ranked version, a HalfWidth
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    provenance: dict = field(default_factory=dict)
    judged: JudgedRuns | None = field(default=None, repr=False)  # the grades behind the scores
    # bounded ranked columns (transform's approx=): str(column) -> (systems, topics) ids of the
    # exact values (equal ids: equal values), which tell certain ties from uncertain orders
    exact_ids: dict = field(default_factory=dict, repr=False)

    def to_frame(self):
        """Tidy pandas DataFrame with columns system, topic, measure, value."""
        import pandas as pd

        M, S, T = self.values.shape
        return (
            pd.DataFrame(
                {
                    "system": np.repeat(np.array(self.systems, dtype=object), T).tolist() * M,
                    "topic": list(self.topics) * (S * M),
                    "measure": np.repeat(np.array([str(m) for m in self.measures], dtype=object), S * T),
                    "value": self.values.reshape(-1),
                }
            )
            .dropna(subset=["value"])
            .reset_index(drop=True)
        )

    def mean(self):
        """Mean over topics: DataFrame indexed by system, one column per measure
        (topics left out with ``missing_topics="drop"`` are not counted).

        A mean treats differences of scores as comparable: it is meaningful on an interval
        scale. For a measure that is shown not to be one at this run length (AP, RR,
        nDCG, ...; :func:`irscale.scales.permissible.scale_of`) a warning, once per
        measure and process, says so and names its ranked version, whose mean is."""
        import pandas as pd

        warn_not_interval(self, "means")

        with np.errstate(invalid="ignore"):
            means = np.nanmean(self.values, axis=2) if np.isnan(self.values).any() else self.values.mean(axis=2)
        return pd.DataFrame(
            means.T, index=pd.Index(self.systems, name="system"), columns=[str(m) for m in self.measures]
        )

    def records(self, system: str | None = None):
        """Per-topic values of one system as ir_measures-style ``Metric(query_id, measure,
        value)`` records; ``system`` may be left out when the table holds one run
        (see :func:`irscale.report.records.records`)."""
        from irscale.report.records import records

        return records(self, system)

    def aggregate(self, system: str | None = None) -> dict[str, float]:
        """``{measure: mean}`` of one system, like ``ir_measures.calc_aggregate`` (the
        means of :meth:`mean`; see :func:`irscale.report.records.aggregate`)."""
        from irscale.report.records import aggregate

        return aggregate(self, system)

    def matrix(self, measure: str | Measure):
        """Topics x systems DataFrame of one measure (the input of the statistics)."""
        import pandas as pd

        m = self.index(measure)
        return pd.DataFrame(
            self.values[m].T, index=pd.Index(self.topics, name="topic"), columns=pd.Index(self.systems, name="system")
        )

    def index(self, measure: str | Measure) -> int:
        from irscale.measures import parse_measure

        names = [str(x) for x in self.measures]
        if str(measure) in names:
            return names.index(str(measure))
        m = parse_measure(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            raise IrscaleError(f"measure {m} was not evaluated (have: {', '.join(map(str, self.measures))})") from None

    def _repr_html_(self) -> str:
        """A compact display for notebooks: the shape, each system's mean per measure (at
        most ``irscale._display.MAX_ROWS`` systems and ``MAX_COLS`` measures shown, the rest
        counted) and notes on the ranked columns and on means that are not meaningful.
        The means are :meth:`mean`'s, without its warning (a note says it instead)."""
        from html import escape

        from irscale._display import MAX_COLS, MAX_ROWS, caption, card, table

        M, S, T = self.values.shape
        cols = self.values[:MAX_COLS, :MAX_ROWS]  # only what is shown is averaged
        with warnings.catch_warnings(), np.errstate(invalid="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # a row of NaN: no mean (shown as a dash)
            means = np.nanmean(cols, axis=2) if np.isnan(cols).any() else cols.mean(axis=2)
        rows = [[s, *means[:, i]] for i, s in enumerate(self.systems[:MAX_ROWS])]
        notes = []
        ranked = [str(m) for m in self.measures if isinstance(m, Ranked)]
        if ranked:
            notes.append(
                f"{len(ranked)} ranked column{'s' * (len(ranked) > 1)} (interval scales: phi, the rank of the "
                "measure's value among the distinct values of all runs of length N)"
            )
        if any(isinstance(m, HalfWidth) for m in self.measures):
            notes.append("halfwidth columns: the exact normalised phi lies within the midpoint &plusmn; half-width")
        try:
            bad = list(not_interval(self))
        except IrscaleError:  # a measure the checks cannot settle: no note
            bad = []
        if bad:
            notes.append(
                "means of " + escape(", ".join(bad)) + " are not meaningful (not interval scales at their run "
                "length): irscale.transform gives their ranked versions"
            )
        if np.isnan(self.values).any():
            notes.append("topics left out of a system's scores are not counted in its means")
        notes.append("per topic: .matrix(measure), .to_frame(); means: .mean()")
        title = (
            f"ScoreTable: {M:,} measure{'s' * (M != 1)} × {S:,} system{'s' * (S != 1)} × {T:,} topic{'s' * (T != 1)}"
        )
        body = caption("mean over topics") + table([str(m) for m in self.measures], rows, index="system", total=S)
        return card(title, [], body, notes)


_WARNED_NOT_INTERVAL: set[str] = set()


WARN_CHECK_RUNS = 2**12  # runs the warnings check a measure without a statement on at most (cheap)


def not_interval(table: ScoreTable) -> dict[str, tuple[int, object]]:
    """The original (not ranked) measures of ``table`` that are shown not to be interval
    scales on runs of their length, as :func:`irscale.scales.permissible.scale_of` (the one
    owner of that question) says: ``{name: (N, Statement)}``. N is the measure's cutoff,
    else the longest run judged; levels are the qrels' (binary measures live on 2 whatever
    they are). A measure the papers say nothing about is checked over at most
    :data:`WARN_CHECK_RUNS` runs; where that does not decide, no claim is made."""
    judged = table.judged
    out = {}
    for m in table.measures:
        if isinstance(m, Ranked) or not isinstance(m, Measure):
            continue
        N = getattr(m, "cutoff", None)
        if N is None:
            if judged is None:
                continue
            N = int(np.max(judged.num_ret, initial=1))
        levels = max(judged.topics.max_grade, 1) + 1 if judged is not None else 2
        values = judged.topics.values if judged is not None else None
        said = scale_as_named(m, values, max(int(N), 1), levels, max_runs=WARN_CHECK_RUNS)
        if said.established and not said.interval:
            out[str(m)] = (int(N), said)
    return out


def scale_as_named(m: Measure, values, N: int, levels: int, **kw):
    """The scale owner's verdict (:func:`irscale.scales.permissible.scale_of`) on ``m`` as
    computed on grades ``values`` (:meth:`Measure.for_grades`; None: integer grades), its
    statement naming ``m`` as written (real-valued grades compute nDCG with their gain map)."""
    from irscale.scales.permissible import scale_of

    computed = m.for_grades(values)
    said = scale_of(computed, N, levels, **kw)
    if computed is m:
        return said
    return dataclasses.replace(said, measure=str(at_depth(m, N)))


LINE = 160  # a warning's line, "warning: " included, at most about this long


def _fit(names: list[str], room: int) -> str:
    """``a, b and c`` or, where that is longer than ``room``, the first names that fit and
    ``and k more``."""
    full = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    if len(full) <= room:
        return full
    for k in range(len(names) - 1, 0, -1):
        text = ", ".join(names[:k]) + f" and {len(names) - k} more"
        if len(text) <= room or k == 1:  # the first name at least
            return text
    return full


class NotMeaningfulWarning(IrscaleWarning):
    """``what`` (means, a t test, ANOVA: statements that add or subtract scores) of
    ``measures`` is not meaningful: they are not interval scales at the run lengths ``at``
    ({measure name without its cutoff: [N, ...]}); ``longest``: the measures have no
    cutoff and ``longest`` is the longest run's length (0: every measure has its cutoff).
    One line (:data:`LINE`); the CLI's ``study`` merges the warnings of its run lengths into
    one (:meth:`merged`)."""

    def __init__(self, what: str, at: dict[str, list[int]], advice: str, longest: int = 0):
        self.what, self.advice, self.longest = what, advice, longest
        self.at = {k: sorted(set(v)) for k, v in at.items()}
        super().__init__(self._text(), key=("not meaningful", what, tuple(self.at)))
        self.merge_key = ("not meaningful", what)  # the CLI's study merges these over its N

    def __reduce__(self):
        return (NotMeaningfulWarning, (self.what, self.at, self.advice, self.longest))

    def _text(self) -> str:
        from irscale.errors import GUIDE

        Ns = sorted({n for v in self.at.values() for n in v})
        some = "some of " if any(v != Ns for v in self.at.values()) else ""  # not every measure at every N
        where = (
            f"on runs of up to {self.longest} documents" if self.longest else f"at {some}N = " + ", ".join(map(str, Ns))
        )
        plural = self.what.endswith("s") or "/" in self.what  # means, ttest/anova1 (the verb agrees with them)
        head = f"{self.what} of "
        tail = f" {'are' if plural else 'is'} not meaningful {where} (not interval); {self.advice} ({GUIDE})"
        return head + _fit(list(self.at), LINE - len("warning: ") - len(head) - len(tail)) + tail

    def merged(self, other: NotMeaningfulWarning) -> NotMeaningfulWarning:
        """One warning for ``self`` and ``other`` (the same statement at other run lengths)."""
        at = {k: self.at.get(k, []) + other.at.get(k, []) for k in dict.fromkeys([*self.at, *other.at])}
        return NotMeaningfulWarning(self.what, at, self.advice, max(self.longest, other.longest))


def _transform_advice(measures, N: int, table: ScoreTable) -> str:
    """What gives the ranked versions of ``measures`` at run length N, computed from what
    ran: where the table carries them already (a transform's), its ranked columns; else
    the command at that same N (never a smaller one: the researcher asked for N) where exact
    engines reach it for every one, else with certified bounds (--approx) where those
    exist, else with binary relevance where that reaches N; else that nothing reaches N
    exactly, and how far the exact engines reach (a fact: a shorter run is another measure)."""
    ranked = {str(m.measure) for m in table.measures if isinstance(m, Ranked)}
    if measures and all(str(m) in ranked for m in measures):
        return "their ranked columns (_R) are"
    levels = max(table.judged.topics.max_grade, 1) + 1 if table.judged is not None else 2
    values = table.judged.topics.values if table.judged is not None else None  # real-valued grades' levels
    at_N = [dataclasses.replace(m, cutoff=N) if hasattr(m, "cutoff") else m for m in measures]

    def reach(lv: int, approx: float | None = None) -> bool:
        try:
            plan_rank_maps(at_N, N, lv, approx, values=values if lv == levels else None)
        except (IrscaleError, TypeError, ValueError):
            return False
        return True

    if reach(levels):
        return f"ranked: irscale transform -N {N}"
    if reach(levels, 1e-4):
        return f"ranked, within certified bounds: irscale transform -N {N} --approx 1e-4"
    if levels > 2 and values is None and reach(2):
        return f"ranked: irscale transform -N {N} --relevance lenient"
    if values is not None:  # real-valued grades: a threshold binarises them
        return "ranked versions need fewer distinct grades or a threshold rel="
    from irscale.scales.rankmap import exact_reach

    try:  # how far they are exact: a fact, not advice to shorten the runs
        exact_to = min(exact_reach(m, levels - 1, N + 1) for m in at_N)
    except (IrscaleError, TypeError, ValueError):
        return f"no exact ranked version reaches N = {N}"
    return f"ranked versions are exact up to N = {exact_to}"


def warn_not_interval(table: ScoreTable, what: str, names=None, advice: str | None = None, stacklevel: int = 3) -> None:
    """Warn, once per measure and process, that ``what`` (means, t tests, ANOVA) of the
    measures of ``table`` that are not interval scales are not meaningful, in one line
    (:class:`NotMeaningfulWarning`): the measures by name without their cutoff, the N
    (the cutoff; the longest run where a measure has none) and ``advice`` (default: the
    command that gives their ranked versions). ``names``: only these measures."""
    bad = {
        k: v for k, v in not_interval(table).items() if k not in _WARNED_NOT_INTERVAL and (names is None or k in names)
    }
    if not bad:
        return
    _WARNED_NOT_INTERVAL.update(bad)
    cut = all(name.endswith(f"@{N}") for name, (N, _) in bad.items())  # every one named at its cutoff N
    at: dict[str, list[int]] = {}
    for name, (N, _said) in bad.items():  # at their cutoffs: named without it (N is said); else as they are
        at.setdefault(name[: -len(f"@{N}")] if cut else name, []).append(N)
    N = max(n for n, _ in bad.values())
    longest = 0 if cut else max(n for name, (n, _) in bad.items() if not name.endswith(f"@{n}"))
    advice = advice or _transform_advice([m for m in table.measures if str(m) in bad], N, table)
    warnings.warn(NotMeaningfulWarning(what, at, advice, longest), stacklevel=stacklevel)


def score(judged: JudgedRuns, measures: Iterable[str | Measure]) -> ScoreTable:
    """Compute measures on already judged runs."""
    ms = parse_measures(list(measures)) if measures else []
    for m in ms:
        judged.check_depth(getattr(m, "cutoff", None), f"measure {m}")
    values = np.empty((len(ms), len(judged.systems), len(judged.topics)), dtype=np.float64)
    for i, m in enumerate(ms):  # on real-valued grades, as computed on their level codes
        values[i] = m.for_grades(judged.topics.values).batch(judged.grades, judged.topics)
    values[:, _dropped(judged)] = np.nan
    return ScoreTable(tuple(ms), judged.systems, judged.topics.names, values, _provenance(judged, ms), judged)


def _provenance(judged: JudgedRuns, ms) -> dict:
    prov: dict = {
        "irscale_version": __version__,
        "measures": [str(m) for m in ms],
        "depth": judged.depth,
        "missing_topics": judged.missing_topics,
        "topics": list(judged.topics.names),
        "max_grade": judged.topics.max_grade,
        **grade_values_record(judged.topics),
    }
    if judged.metadata:  # the runs' ir_metadata headers, by run name (only where some run has one)
        prov["ir_metadata"] = {s: judged.metadata[s] for s in judged.systems if s in judged.metadata}
    return prov


KEEP_DEPTH = 100  # ranks of each run a ScoreTable keeps for transform and compare (evaluate's keep_depth)
STREAM_RUNS = 16  # runs scored together as they are read


def _score_stream(
    stream,
    qrels: Qrels,
    ms: list,
    *,
    depth: int | None,
    missing_topics: str,
    max_grade: int | None,
    keep_depth: int | None,
) -> ScoreTable:
    """Score judged runs ``STREAM_RUNS`` at a time as they arrive, keeping of each run its
    scores, its first ``keep_depth`` grades and its number of documents retrieved: memory
    grows with one run's size (times ``STREAM_RUNS``) and the kept grades, not with every
    rank of every run."""
    stats = topic_stats(qrels, max_grade)
    seen: dict[str, str] = {}
    values, kept, retrieved, missing = [], [], [], {}
    names: list[str] = []
    headers: dict[str, dict] = {}
    deepest = 0
    chunk: list = []
    for item in _with_end(stream):
        if item is not None:
            chunk.append(item)
        if chunk and (item is None or len(chunk) == STREAM_RUNS):
            part = stack(chunk, qrels, stats, depth=depth, missing_topics=missing_topics, seen=seen)
            chunk = []
            values.append(score(part, ms).values)
            deepest = max(deepest, part.grades.shape[2])
            kept.append(part.grades if keep_depth is None else part.grades[:, :, :keep_depth].copy())
            retrieved.append(part.num_ret)
            names.extend(part.systems)
            missing.update(part.missing)
            headers.update(part.metadata)
    width = max(k.shape[2] for k in kept)
    grades = np.full((len(names), len(stats), width), PAD, dtype=np.int16)
    s = 0
    for k in kept:
        grades[s : s + len(k), :, : k.shape[2]] = k
        s += len(k)
    cut = keep_depth is not None and deepest > keep_depth
    judged = JudgedRuns(
        tuple(names),
        stats,
        grades,
        missing,
        missing_topics,
        depth,
        keep_depth if cut else None,
        np.concatenate(retrieved) if cut else None,
        headers,
    )
    return ScoreTable(
        tuple(ms), judged.systems, stats.names, np.concatenate(values, axis=1), _provenance(judged, ms), judged
    )


def _with_end(stream):
    yield from stream
    yield None


def expand_run_paths(items: Sequence[str | os.PathLike]) -> list[Path]:
    """Files named by ``items``: files as they are, directories (their files, sorted,
    hidden files skipped) and glob patterns."""
    out: list[Path] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            subdirs = sorted(f.name for f in p.iterdir() if f.is_dir() and not f.name.startswith("."))
            if subdirs:
                warn(
                    f"{p}: subdirectories are not read ({', '.join(subdirs[:2])}{', ...' if len(subdirs) > 2 else ''}"
                    f"); name them too to read their runs",
                    stacklevel=3,
                )
            if not files:
                raise IrscaleError(
                    f"{p}: directory holds no run files"
                    + (" (only subdirectories, which are not read)" if subdirs else "")
                )
            out.extend(files)
        elif p.exists():
            out.append(p)
        elif any(ch in str(it) for ch in "*?["):
            hits = sorted(Path(h) for h in glob.glob(str(it)) if Path(h).is_file())
            if not hits:
                raise IrscaleError(f"{it}: the pattern matches no file")
            out.extend(hits)
        else:
            raise IrscaleError(f"{p}: no such file or directory")
    return out


def load_runs(
    runs: Sequence[str | os.PathLike | Run] | str | os.PathLike,
    qrels: Qrels,
    *,
    depth: int | None = None,
    missing_topics: MissingTopics = "zero",
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    metadata: Metadata = "error",
    split_tags: bool = False,
    skip_invalid: bool = False,
    max_grade: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
) -> JudgedRuns:
    """Read and judge runs (files, directories, globs or :class:`Run` objects, and the
    in-memory inputs of :mod:`irscale.io.memory`: DataFrames, dicts, ScoredDoc tuples,
    ranx Runs, ``.parquet`` files; ``score_precision`` and ``duplicates`` apply to them).

    Files are read and judged in parallel: in ``workers`` processes (default: one per
    CPU, at most 8) where the platform can fork and the calling process has no other
    thread, else in as many threads (decompression and numpy release the GIL, so
    threads still overlap). Only each run's small grade matrix travels back.
    ``workers=1`` reads in the calling thread.

    ``split_tags=True`` reads a file whose lines carry several tags as one run per tag
    (otherwise that is an error). ``metadata``: what becomes of a malformed ir_metadata
    header (see :func:`evaluate`); the headers are kept in ``JudgedRuns.metadata``.
    ``skip_invalid=True`` skips, with a warning naming the
    file and the reason, files that are not valid runs (a README or the qrels file in a
    directory of runs); otherwise the first such file is an error that names it.
    """
    judged = list(
        iter_judged(
            runs,
            qrels,
            depth=depth,
            missing_topics=missing_topics,
            score_precision=score_precision,
            extra_fields=extra_fields,
            duplicates=duplicates,
            metadata=metadata,
            split_tags=split_tags,
            skip_invalid=skip_invalid,
            progress=progress,
            workers=workers,
        )
    )
    return assemble(judged, qrels, depth=depth, missing_topics=missing_topics, max_grade=max_grade)


def iter_judged(
    runs,
    qrels: Qrels,
    *,
    depth: int | None = None,
    missing_topics: MissingTopics = "zero",
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    metadata: Metadata = "error",
    split_tags: bool = False,
    skip_invalid: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
):
    """:func:`load_runs` one run at a time: ``(name, path, grades, missing, extra, metadata)``
    per run (see :func:`irscale.data.judge_run`; ``metadata``: the file's ir_metadata header
    or None), in input order, as the workers finish them;
    only the runs not yet consumed are held."""
    depth = check_options(depth, missing_topics)
    opts = reader_options(score_precision, extra_fields, duplicates, metadata)
    check_progress(progress)
    split_tags = flag("split_tags", split_tags)
    skip_invalid = flag("skip_invalid", skip_invalid)
    items = _run_items(runs, skip_invalid, score_precision=score_precision, duplicates=duplicates)
    if _judge_kernels() is None:  # the numpy path's lookup index: built once, before workers share it
        _index(qrels)  # (the compiled judge hashes each topic itself: no pandas import, no index)
    total = len(items)
    forked = _can_fork() and min(workers or min(os.cpu_count() or 1, 8), total) > 1  # parallel_imap's choice
    task = partial(
        _read_and_judge,
        qrels=qrels,
        depth=depth,
        opts=opts,
        split_tags=split_tags,
        skip_invalid=skip_invalid,
        said=forked,
    )
    if progress:
        progress(0, total, "")
    valid = 0
    # forked processes where they can be (they inherit the task: the qrels are not pickled), else
    # threads; results arrive in order, so warnings and progress follow the input order
    results = _judged_results(task, items, progress, workers, forked)
    with closing(results):
        for i, res in enumerate(results):
            if isinstance(res, _Said):  # a forked reader's warnings, said here in the input's order
                for w in res.warnings:
                    warnings.warn(w, stacklevel=3)
                res = res.result
            if isinstance(res, InputFormatError):  # skip_invalid: the file is not a run
                warn(f"skipping {res.path}, not a valid run ({_reason(res)})", stacklevel=3)
                name = Path(res.path).name
            else:
                valid += len(res)
                name = ", ".join(r[0] for r in res)
            if progress:
                progress(i + 1, total, name)
            if not isinstance(res, InputFormatError):
                yield from res
    if not valid:
        raise IrscaleError(f"none of the {total} file(s) given is a valid run (see the warnings above)")


def _run_items(runs, skip_invalid: bool, **mem_opts) -> list:
    """What iter_judged reads, one entry per run or run file: (a Run or a path, whether a
    directory or a pattern named it); Parquet files and in-memory inputs become Runs here."""
    if runs is None or isinstance(runs, (bytes, int, float)):
        raise wrong_type(
            "runs", runs, f"a run file, a directory, a glob pattern, a Run, {INPUTS_RUNS}, or a list of them"
        )
    single, runs = one_run(runs)  # one DataFrame, dict, ranx Run or ScoredDoc iterable is one run, not a list
    if single or isinstance(runs, (str, os.PathLike, Run)):
        runs = [runs]
    items: list = []  # (Run or path, whether it came from a directory or a pattern)
    for k, r in enumerate(runs, 1):
        if isinstance(r, Run):
            items.append((r, False))
        elif isinstance(r, (str, os.PathLike)):
            for f in expand_run_paths([r]):
                if not is_parquet(f):
                    items.append((f, f != Path(r)))
                    continue
                try:  # read here: a Parquet file becomes Run objects
                    items.extend((m, False) for m in read_parquet_runs(f, **mem_opts))
                except InputFormatError as e:
                    if not skip_invalid:
                        raise
                    warn(f"skipping {e.path}, not a valid run ({_reason(e)})", stacklevel=3)
        elif (mem := memory_runs(r, position=None if single else k, **mem_opts)) is not None:
            items.extend((m, False) for m in mem)
        else:
            raise wrong_type("each run", r, f"a path (str or Path), a Run, or {INPUTS_RUNS}")
    if not items:
        raise ArgumentError("no run given; name run files, a directory of runs or a glob pattern")
    return items


def _judged_results(task, items: list, progress, workers: int | None, forked: bool):
    """``task`` applied to each of ``items``, results in input order: in the calling thread
    where one file's reading progress is worth reporting, else in parallel (parallel_imap)."""
    total = len(items)
    if progress and (total == 1 or workers == 1):  # read here: report each file's progress as it is read

        def read(k, entry):
            label = entry[0].name if isinstance(entry[0], Run) else Path(entry[0]).name
            return task(entry, on_read=lambda f: progress(k + 0.95 * f, total, label))

        return (read(k, entry) for k, entry in enumerate(items))
    return parallel_imap(task, items, workers=workers, processes=forked)


def reader_options(score_precision: str, extra_fields: str, duplicates: str, metadata: str = "error") -> dict:
    """The run readers' policies, validated (the allowed values are in the message)."""
    check_reader_options(score_precision, extra_fields, duplicates, metadata)
    return dict(score_precision=score_precision, extra_fields=extra_fields, duplicates=duplicates, metadata=metadata)


@dataclasses.dataclass
class _Said:
    """What a reader in a forked process returns: its result and the warnings it raised
    (a child's warnings would otherwise go to its own stderr, unordered, unseen by the
    caller's ``warnings.catch_warnings``)."""

    result: object
    warnings: list


def _read_and_judge(
    entry,
    *,
    qrels: Qrels,
    depth: int | None,
    opts: dict,
    split_tags: bool = False,
    skip_invalid: bool = False,
    on_read=None,
    said: bool = False,
):
    """Judged tuples ``(name, path, grades, missing, extra)`` of the run(s) in ``entry``
    (a Run or a path, and whether a directory or pattern named it); with
    ``skip_invalid`` a file that is not a valid run gives its error instead.
    ``on_read(fraction)``: the file's reading progress (see :func:`read_runs`). Returns
    :class:`_Said`: the result and the warnings irscale raised (in any thread), for the
    caller to say in the input's order; ``said`` (in a forked process only:
    catch_warnings is process-wide) keeps any other warning too."""
    from irscale.errors import collecting

    with collecting() as kept, warnings.catch_warnings(record=True) if said else nullcontext() as caught:
        if said:
            warnings.simplefilter("always")
        result = _judge_entry(
            entry,
            qrels=qrels,
            depth=depth,
            opts=opts,
            split_tags=split_tags,
            skip_invalid=skip_invalid,
            on_read=on_read,
        )
    return _Said(result, kept + [w.message for w in caught or ()])


def _judge_entry(entry, *, qrels: Qrels, depth: int | None, opts: dict, split_tags: bool, skip_invalid: bool, on_read):
    """:func:`_read_and_judge`'s work: its result (warnings said as they come)."""
    item, listed = entry
    try:
        runs = [item] if isinstance(item, Run) else read_runs(item, split_tags=split_tags, progress=on_read, **opts)
    except InputFormatError as e:
        if skip_invalid:
            return e
        if listed and e.path == str(item) and "run tag" not in e.reason and "ir_metadata" not in e.reason:
            e = InputFormatError(
                e.path,
                e.line,
                e.reason + f"; if {Path(e.path).name} is not a run, move it out of "
                "the directory or pass skip_invalid=True (CLI --skip-invalid) to skip files that "
                "are not runs",
                e.text,
            )
        raise e from None
    return [(run.name, run.path, *judge_run(run, qrels, depth), run.metadata) for run in runs]


def evaluate(
    qrels: str | os.PathLike | Qrels,
    runs,
    measures: Iterable[str | Measure] | str = DEFAULT_MEASURES,
    depth: int | None = None,
    *,
    missing_topics: MissingTopics = "zero",
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    metadata: Metadata = "error",
    split_tags: bool = False,
    skip_invalid: bool = False,
    max_grade: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    keep_depth: int | None = KEEP_DEPTH,
) -> ScoreTable:
    """Score runs against qrels, per topic, exactly like trec_eval 10.

    Parameters
    ----------
    qrels : path or Qrels
    runs : path, directory, glob pattern, Run, or a sequence of them; or a JudgedRuns
    measures : a measure name (``"AP"``, ``"nDCG@10"``, ``"RBP(p=0.8)@30"``) or object,
        or a list of them (names are case-insensitive)
    depth : int, optional
        Keep only the first ``depth`` documents of each topic of each run.
    missing_topics : {"zero", "drop", "error"}
        A qrels topic that a run retrieves nothing for: the run scores 0 on it with every
        measure (``"zero"``, like ``trec_eval -c``; a warning names run and topics), the
        topic is left out of that run's mean (``"drop"``, like trec_eval without ``-c``),
        or it is an error (``"error"``).
    score_precision : {"float64", "float32"}
        ``"float32"`` orders documents like trec_eval <= 9.0.8 and pytrec_eval.
    extra_fields : {"error", "ignore"}
        Run lines with more than six fields: an error, or the rest ignored (trec_eval).
    duplicates : {"error", "first"}
        A docno retrieved twice for a topic: an error, or only the first line kept.
    metadata : {"error", "warn", "ignore"}
        A run file's ir_metadata header (YAML between ``# ir_metadata.start`` and
        ``# ir_metadata.end`` at its top) is kept in ``provenance["ir_metadata"][run]``:
        a malformed one is an error naming the file and line (``"error"``) or is left out
        with a warning (``"warn"``); ``"ignore"`` never reads it.
    split_tags : bool
        Read a file holding several run tags as one run per tag (else an error).
    skip_invalid : bool
        Skip, with a warning, files that are not runs (a README in a directory of runs).
    max_grade : int, optional
        The top grade c of the relevance scale (graded measures use gain g / c, stop
        probability (2^g - 1) / 2^c, ideal rankings...); default the qrels' highest
        grade. Higher grades count as c, with a warning.
    keep_depth : int or None
        Runs are scored as they are read (16 at a time), so memory does not grow with
        every rank of every run; the table keeps the first ``keep_depth`` grades of each
        run (default 100) for :func:`transform` and :func:`compare` at run lengths up to
        that, and refuses, with this advice, anything that needs deeper ranks. ``None``
        keeps every rank.

    Returns
    -------
    ScoreTable
        ``to_frame()`` gives the tidy table (system, topic, measure, value).

    Examples
    --------
    >>> from irscale import evaluate
    >>> from irscale.io import Qrels, Run
    >>> q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1)])
    >>> r = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)], name="r")
    >>> float(evaluate(q, [r], ["AP"]).values[0, 0, 0])  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    ms = parse_measures(measures)  # a misspelt measure fails before any file is read
    depth = check_options(depth, missing_topics)
    keep_depth = integer("keep_depth", keep_depth, minimum=1, none=True)
    reader_options(score_precision, extra_fields, duplicates, metadata)
    check_progress(progress)
    qrels = as_qrels(qrels)
    for m in ms:  # a measure real-valued grades refuse (ERR) fails before any run is read
        m.for_grades(qrels.values)
    if isinstance(runs, JudgedRuns):
        _refuse_reading_options(
            depth=depth,
            missing_topics=missing_topics,
            split_tags=split_tags,
            skip_invalid=skip_invalid,
            max_grade=max_grade,
            duplicates=duplicates,
            extra_fields=extra_fields,
            score_precision=score_precision,
            metadata=metadata,
        )
        table = score(runs, ms)
    else:
        stream = iter_judged(
            runs,
            qrels,
            depth=depth,
            missing_topics=missing_topics,
            score_precision=score_precision,
            extra_fields=extra_fields,
            duplicates=duplicates,
            metadata=metadata,
            split_tags=split_tags,
            skip_invalid=skip_invalid,
            progress=progress,
        )
        table = _score_stream(
            stream, qrels, ms, depth=depth, missing_topics=missing_topics, max_grade=max_grade, keep_depth=keep_depth
        )
    table.provenance.update({"qrels": qrels.path, "score_precision": score_precision})
    if table.judged is not None:
        warn_no_relevant(ms, table.judged.topics)  # each measure at its own rel
    return table


_READING_DEFAULTS = dict(
    depth=None,
    missing_topics="zero",
    split_tags=False,
    skip_invalid=False,
    max_grade=None,
    duplicates="error",
    extra_fields="error",
    score_precision="float64",
    metadata="error",
)


def _refuse_reading_options(**options) -> None:
    """Refuse the options of reading and judging runs (any not at its default) given with runs judged already."""
    given = [k for k, v in options.items() if v != _READING_DEFAULTS[k]]
    if given:
        raise ArgumentError(
            f"{', '.join(given)} apply when runs are read and judged; these runs are judged "
            "already (JudgedRuns): pass the run files instead, or judge them with those options"
        )


def check_progress(progress) -> None:
    if progress is not None and not callable(progress):
        raise wrong_type("progress", progress, "a function called as progress(done, total, ...) or None")


def as_qrels(qrels) -> Qrels:
    """A :class:`Qrels` from a path (read; ``.parquet`` too), an in-memory input
    (:mod:`irscale.io.memory`) or as given."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        if is_parquet(qrels):
            return read_parquet_qrels(qrels)
        return read_qrels(qrels if isinstance(qrels, str) else Path(qrels))  # (the reader takes str or Path)
    mem = memory_qrels(qrels)  # a DataFrame, a dict, Qrel tuples, a ranx Qrels
    if mem is not None:
        return mem
    raise wrong_type("qrels", qrels, f"a qrels file path (str or Path), a Qrels (irscale.read_qrels), {INPUTS_QRELS}")


# -- transform ----------------------------------------------------------------------------------

PAPER_MEASURES = (
    "P",
    "R",
    "RR",
    "AP",
    "RBP(p=0.3)",
    "RBP(p=0.5)",
    "RBP(p=0.8)",
    "DCG(base=2)",
    "DCG(base=10)",
    "nDCG(base=2)",
    "nDCG(base=10)",
)


@dataclass(frozen=True)
class Ranked:
    """The interval-scaled ("ranked") version of ``measure`` at run length ``N``: phi of
    the measure's value: the number of distinct values of the measure over all judged runs
    of length N that are at most it (Ferrante, Ferro & Fuhr 2021). A column of a
    :class:`ScoreTable` like a :class:`~irscale.measures.Measure`: renderers read ``str``,
    ``label``, ``trec_eval_name`` and ``is_count`` of either. ``theory``: what the theory
    says about the original measure on its run space
    (:class:`irscale.scales.theory.Statement`: the order under which it is an interval or
    ordinal scale, or not ordinal, and whether phi only equi-spaces the measure's own
    order); None for measures the papers say nothing about."""

    measure: Measure
    N: int
    ties: str = "unq"
    normalized: bool = False
    theory: object = field(default=None, compare=False)  # scales.theory.Statement | None
    midpoint: bool = False  # the midpoint of certified bounds (transform's approx=), not exact
    trec_eval_name = None  # trec_eval has no ranked measures
    is_count = False

    def __str__(self):
        opts = "".join(
            [
                f", ties={self.ties}" if self.ties != "unq" else "",
                ", normalized" if self.normalized else "",
                ", midpoint" if self.midpoint else "",
            ]
        )
        return f"ranked({self.measure}{opts})"

    @property
    def label(self) -> str:
        return f"{self.measure.label}_R"


@dataclass(frozen=True)
class HalfWidth:
    """The half-width of a bounded ranked column (``transform(..., approx=TOL)``): where no
    exact engine reaches N, ``ranked`` holds the midpoint of certified bounds on the
    normalised phi (:func:`irscale.scales.bounds.phi_bounds`), and this column the half of
    their width, so the exact normalised phi lies within midpoint +- half-width (0 where
    the value is exact). The mean of a system's half-widths bounds the error of its mean."""

    ranked: Ranked
    trec_eval_name = None
    is_count = False

    def __str__(self):
        return f"halfwidth({self.ranked})"

    @property
    def label(self) -> str:
        return f"{self.ranked.label}_hw"


RELEVANCE = ("graded", "lenient")


def apply_relevance(
    judged: JudgedRuns, measures: Sequence[Measure], relevance: str | None = None
) -> tuple[JudgedRuns, str]:
    """The judged runs under a relevance protocol, and the protocol's name.

    ``"graded"``: graded measures live on the graded run space ((c+1)^N runs, c the top
    grade). ``"lenient"``: the qrels are binarised (grade >= 1 relevant), so every measure
    is binary: the 2021 paper's protocol for the graded Common Core tracks. ``None``:
    graded, with a one-line note when graded qrels meet a graded measure (saying how to
    get the other protocol)."""
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
    check_lenient(relevance, judged.topics.values)
    if relevance == "lenient":
        relevance_measures(measures, relevance)  # what lenient refuses (rel > 1, gP, gains=) is said there
        return judged.binarised(1), "lenient"
    c = judged.topics.max_grade
    graded = [str(m) for m in measures if m.graded and getattr(m, "rel", None) is None]
    if relevance is None and c > 1 and graded:
        graded = list(dict.fromkeys(re.sub(r"@\d+$", "", g) for g in graded))  # the same at every N of a study
        binarise = (
            "--relevance lenient binarises (as the 2021 paper)"
            if judged.topics.values is None
            else "rel= binarises (rel=0.5: grade >= 0.5 relevant)"
        )
        tail = f" use{'s' if len(graded) == 1 else ''} all {c + 1} grades: {binarise}, graded silences this"
        warn(f"graded qrels: {_fit(graded, LINE - 41 - len(tail))}{tail}", key="graded qrels", stacklevel=3)
    return judged, "graded"


def check_lenient(relevance: str | None, values) -> None:
    """``"lenient"`` binarises integer grades (grade >= 1 relevant: the 2021 paper's
    "whatever above not relevant"); on real-valued grades (``values``, not None) it is
    refused, with what to do instead: a threshold is a measure's ``rel=``."""
    if relevance == "lenient" and values is not None:
        raise ArgumentError(
            "relevance='lenient' (--relevance lenient) binarises integer grades at grade >= 1, and these "
            "qrels have real-valued grades; give binary measures the threshold you mean (P(rel=0.5), "
            "nDCG(rel=0.5): grade >= 0.5 relevant), or keep the grades (relevance='graded')"
        )


def relevance_measures(measures: Sequence[Measure], relevance: str | None) -> list[Measure]:
    """The measures as they are computed under ``relevance``: under ``"lenient"`` the
    qrels are binarised (grade >= 1 relevant), so a graded measure is the binary measure
    at rel = 1 and is named so (``nDCG(rel=1)@10``, ``RBP(p=0.8, rel=1)``: the same
    values as on the binarised qrels); otherwise as given. A graded measure with a gain
    map (``gains=``) has no lenient form and is refused."""
    if relevance != "lenient":
        return list(measures)
    high = [str(m) for m in measures if (getattr(m, "rel", None) or 1) > 1]
    if high:
        raise ArgumentError(
            f"relevance='lenient' binarises the qrels (grade >= 1 relevant), so no document "
            f"reaches the level asked by {', '.join(high)}; use relevance='graded' (CLI "
            "--relevance graded) to keep the grades, or drop rel= from the measure"
        )
    out = []
    for m in measures:
        if m.graded and not any(f.name == "rel" for f in dataclasses.fields(m)):  # no binary form to name
            binary = {"gP": "P", "gR": "R"}.get(type(m).NAME)
            if binary:
                raise ArgumentError(
                    f"relevance='lenient' binarises the qrels (grade >= 1 relevant), and {m} on "
                    f"binary grades is {binary}: name {binary} instead, or use relevance='graded' "
                    "(CLI --relevance graded) for the graded measure"
                )
            raise ArgumentError(
                f"relevance='lenient' binarises the qrels (grade >= 1 relevant), so every measure is "
                f"named as the binary measure it becomes (nDCG(rel=1)); {m} has no rel parameter to "
                f"name that: give its class a field 'rel: int | None = None' (binary relevance, "
                f"grade >= rel, as nDCG has), or use relevance='graded' (CLI --relevance graded)"
            )
        if m.graded and getattr(m, "rel", None) is None:
            if getattr(m, "gains", None) is not None:
                raise ArgumentError(
                    f"relevance='lenient' binarises the qrels (grade >= 1 relevant), so the gain map "
                    f"of {m} does not apply; drop gains= or use relevance='graded' (CLI --relevance "
                    "graded)"
                )
            m = dataclasses.replace(m, **{"rel": 1})  # (the base class has no rel field; m's has: checked above)
        out.append(m)
    return out


def plan_rank_maps(
    measures,
    depth: int,
    levels: int,
    approx: float | None = None,
    max_pairs: int | None = None,
    relevance: str | None = None,
    values: tuple | None = None,
    built_only: bool = False,
) -> list[Measure]:
    """The measures at run length ``depth``, each checked to have an exact engine for
    ``levels`` relevance levels, before any rank map is built (so a job fails in a
    second, not after minutes of building the others). With ``approx`` (see
    :func:`transform`), a measure no exact engine serves passes if it has certified
    bounds (RBP, DCG, nDCG); without, the error says that ``approx`` would serve it.
    ``max_pairs``: the split engine's opt-in (:func:`irscale.scales.build`). ``relevance``:
    the measures as that protocol computes and names them (:func:`relevance_measures`).
    ``values``: the grade of each level of real-valued qrels (:attr:`irscale.io.Qrels.values`;
    None for integer grades; ``"lenient"`` refuses real-valued ones, :func:`check_lenient`).
    ``built_only``: only the measures whose rank map will be built (not those ``approx``
    bounds: no map of theirs is built, so none takes memory)."""
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
        check_lenient(relevance, values)
        measures = relevance_measures(parse_measures(measures, default_cutoff=depth), relevance)
    return [
        m for m, bounded in _plan(measures, depth, levels, approx, max_pairs, values) if not (built_only and bounded)
    ]


def _plan(
    measures, depth: int, levels: int, approx: float | None, max_pairs: int | None = None, values: tuple | None = None
) -> list[tuple[Measure, bool]]:
    """[(measure at depth, whether it is bounded: no exact engine, approx serves it)], in
    the order given (a measure named twice, as P and P@10 at depth 10, twice). Each is
    checked as computed on grades ``values`` (:meth:`Measure.for_grades`) and returned as named."""
    from irscale.scales import space_for
    from irscale.scales.budget import MemoryBudgetError
    from irscale.scales.rankmap import choose_engine, in_cache

    approx = _approx(approx)
    ms = []
    for m in parse_measures(measures, default_cutoff=depth):
        if not any(f.name == "cutoff" for f in dataclasses.fields(m)):
            space_for(m, depth)  # its message lists the measures that have a ranked version
        ms.append(at_depth(m, depth))
    verdict: dict[Measure, bool] = {}
    fails = []
    for m in ms:
        if m not in verdict:
            space = space_for(m.for_grades(values), depth, levels - 1)
            try:
                choose_engine(space, max_pairs=max_pairs)
                verdict[m] = False
            except MemoryBudgetError:  # the budget's own refusal: never a reason to take bounds instead
                if not in_cache(space):
                    raise
                verdict[m] = False
            except IrscaleError as e:
                try:
                    verdict[m] = False if in_cache(space) else _no_engine(m, space, e, approx, values is not None)
                except NoEngineError as no:  # every measure checked: one refusal names them all
                    fails.append(no)
                    verdict[m] = False
    if fails:
        raise _no_engines(fails)
    return [(m, verdict[m]) for m in ms]


def _approx(approx) -> float | None:
    import numbers

    if approx is None:
        return None
    if isinstance(approx, bool) or not isinstance(approx, numbers.Real) or not 0 < float(approx) < 1:
        raise ArgumentError(
            f"approx must be a width strictly between 0 and 1 of the normalised phi (for "
            f"example 1e-4), or None for exact phi only, not {approx!r}"
        )
    return float(approx)


class NoEngineError(MeasureError):
    """Measures that no exact engine serves at N (and that ``approx`` does not serve). One
    measure: ``m``, ``limit`` how far it is exact (the engine's words), ``bounded`` whether
    certified bounds exist (then ``--approx`` would), ``advice`` the run length to use
    instead, ``c`` its top grade. Several (:func:`_no_engines`): ``fails``, one each."""

    def __init__(
        self, m, N: int, limit: str, bounded: bool, advice: str, c: int = 1, text: str | None = None, fails: tuple = ()
    ):
        self.m, self.N, self.limit, self.bounded, self.advice, self.c = m, N, limit, bounded, advice, c
        self.fails = tuple(fails) or (self,)
        if text is None and bounded:
            text = (
                f"{m}: no exact engine reaches run length N = {N} ({limit}); certified bounds on its normalised "
                f"phi do: transform(..., approx=1e-4) (CLI --approx 1e-4) gives the midpoint and a half-width "
                f"column, or use a smaller N"
            )
        elif text is None:
            text = (
                f"{m}: no exact engine reaches run length N = {N} ({limit}), and {str(m).split('@')[0]} has no "
                f"certified bounds (guide: Long runs)" + (f"; use {advice}" if advice else "")
            )
        super().__init__(text)

    def __reduce__(self):
        return (
            _no_engine_error,
            (
                self.m,
                self.N,
                self.limit,
                self.bounded,
                self.advice,
                self.c,
                str(self),
                self.fails if self.fails != (self,) else (),
            ),
        )


def _no_engine_error(
    m, N: int, limit: str, bounded: bool, advice: str, c: int, text: str, fails: tuple
) -> NoEngineError:
    """A NoEngineError back from pickle (:meth:`NoEngineError.__reduce__`'s arguments)."""
    return NoEngineError(m, N, limit, bounded, advice, c, text=text, fails=fails)


def _no_engines(fails: list) -> IrscaleError:
    """One refusal for every measure no engine serves (:class:`NoEngineError`), in one line of
    at most about three lines' length: the measures without bounds (each with how far it
    is exact), then those that --approx serves."""
    from irscale.scales.rankmap import exact_reach

    if len(fails) == 1:
        return fails[0]
    N = fails[0].N
    parts = []
    hard = [f for f in fails if not f.bounded]
    soft = [f for f in fails if f.bounded]
    if len(hard) == 1:
        parts.append(str(hard[0]))
    elif hard:
        reach = "; ".join(
            f"{f.m} exact up to N = {exact_reach(f.m, f.c, N)}" + (f" on {f.c + 1} levels" if f.c > 1 else "")
            for f in hard
        )
        parts.append(
            f"{', '.join(str(f.m) for f in hard)}: no exact engine at N = {N} and no certified bounds "
            f"({reach}); use a smaller run length -N (guide: Long runs)"
        )
    if soft:
        parts.append(
            f"{', '.join(str(f.m) for f in soft)}: no exact engine reaches N = {N}; certified bounds do "
            f"(CLI --approx 1e-4, approx=1e-4), or use a smaller N"
        )
    return NoEngineError(None, N, "", not hard, "", text=". Also ".join(parts), fails=tuple(fails))


def _no_engine(m: Measure, space, engine_error: IrscaleError, approx: float | None, real: bool = False) -> bool:
    """No exact engine serves ``space``: True where certified bounds will (and ``approx``
    asks for them); else :class:`NoEngineError`: the engine's limit, and either how to ask for
    bounds or why there are none. ``real``: the grades are real-valued (``space`` serves ``m``
    as computed on their levels): the limit names ``m`` as written, and its advice on fewer
    levels is for real grades (``--max-grade`` caps integer grades only)."""
    from irscale.scales.rankmap import exact_reach

    limit = _short(str(engine_error))
    if real:
        limit = re.sub(r"\s*\([^()]*max.grade[^()]*\)", "", limit.replace(str(space.measure), str(m)))
        limit += (
            f"; the {space.c + 1} levels are the distinct real-valued grades: fewer levels means fewer distinct "
            "grades (round them, for example to steps of 0.25), or binary relevance (a threshold such as rel=0.5)"
        )
    if space.certified_bounds:
        if approx is not None:
            return True
        raise NoEngineError(m, space.N, limit, True, "a smaller N", space.c)
    advice = ""  # the engine's limit says what to type
    if "no engine for this case is built yet" in limit:  # beyond 64-bit keys: the reach in N says more
        top = exact_reach(space.measure, space.c, space.N)
        longest = exact_reach(space.measure, space.c, space.N, max_pairs=2**62)
        limit = f"exact up to N = {top}" + (f", {longest} with --max-pairs" if longest > top else "")
        advice = f"-N {top} or less (the 2021 paper stopped at 30), or RBP, DCG or nDCG with --approx"
    raise NoEngineError(m, space.N, limit, False, advice, space.c)


def _reason(e: IrscaleError) -> str:
    """Why a file is not a valid run, in a few words (a warning's line)."""
    reason = getattr(e, "reason", None) or str(e)
    line = getattr(e, "line", None)
    text = (f"line {line}: " if line else "") + reason
    return text if len(text) <= 60 else text[:57] + "..."


def _short(text: str) -> str:
    """An engine's refusal with its huge integers written as powers of ten."""
    return re.sub(
        r"\d{1,3}(?:,\d{3}){5,}|\d{16,}", lambda x: count_text(int(x.group().replace(",", ""))), text.rstrip(".")
    )


def transform(
    data: ScoreTable | JudgedRuns,
    measures: Iterable[str | Measure] | None = None,
    depth: int = 30,
    ties: str | Sequence[str] = "unq",
    normalize: bool = False,
    *,
    scheduler=None,
    cache: bool = True,
    progress: Callable[[int, int], None] | None = None,
    exact_values: bool = False,
    relevance: str | None = None,
    steps: Callable[[str, int, int], None] | None = None,
    approx: float | None = None,
    max_pairs: int | None = None,
) -> ScoreTable:
    """Add the interval-scaled version of each measure at run length ``depth`` = N.

    ``data`` is a :class:`ScoreTable` from :func:`evaluate` (its grades are kept with
    it) or :class:`~irscale.data.JudgedRuns`. Each run is cut at N and padded with
    non-relevant documents; for every measure the table holds the measure at N (e.g.
    ``AP@30``) and ``ranked(AP@30)``: phi of the run's value, 1..size (the "unq" ranks of
    Ferrante, Ferro & Fuhr 2021; ``ties="min"|"max"|"mid"`` rank over all (c+1)^N runs
    instead; several strategies at once, ``ties=("unq", "mid")``, add one ranked column
    per measure and strategy, in that order; ``normalize`` divides "unq" ranks by the
    number of distinct values and the others by the number of runs, so all lie in
    (0, 1]). Recall-base-dependent measures
    map through their RB-free core. Each rank map is built once and each run's exact
    key computed once, whatever the number of strategies. ``exact_values=True``
    derives the measure columns from the same exact keys (equal values are then
    bitwise equal, which rank-based statistics need; they may differ from trec_eval's
    arithmetic in the last bit). ``relevance``: ``"graded"`` or ``"lenient"`` (binarised
    qrels, every measure binary, the 2021 paper's protocol for graded collections); see
    :func:`apply_relevance` (the default is graded, with a note on graded qrels).
    ``progress(done, total)`` is called per measure; ``steps(measure, done, total)``
    within each rank map (buckets of a build, blocks of phi queries of the count engine).

    Runs of any length: phi is exact wherever an engine reaches N (closed forms at any N:
    P, R, F, RR, binary RBP with p <= 1/2; the others to N = 30-40). Beyond, ``approx=TOL``
    (with ``normalize=True``) gives RBP, DCG and nDCG from certified bounds on the
    normalised phi (:func:`irscale.scales.bounds.phi_bounds`): the ranked column holds
    the midpoint (``ranked(..., midpoint)``) and a :class:`HalfWidth` column after the
    ranked ones the half-width, so the exact normalised phi lies within midpoint +-
    half-width; an error is raised where a width would exceed TOL at the finest
    resolution tried. Measures with neither (AP beyond N = 35) are refused with the limit
    and the reason. ``provenance["transform"]["bounds"]`` records each bounded measure's
    method, resolution, assumptions and largest half-width. ``max_pairs`` lets the split
    engine list longer runs than it accepts by default (binary AP at N = 36:
    ``max_pairs=2**36``, about 20 minutes on 2 cores; see :func:`irscale.scales.build`).

    Examples
    --------
    >>> from irscale.io import Qrels, Run
    >>> q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1)])
    >>> r = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)], name="r")
    >>> t = transform(evaluate(q, [r], ["AP"]), ["AP", "P"], depth=3)
    >>> [str(m) for m in t.measures]
    ['AP@3', 'P@3', 'ranked(AP@3)', 'ranked(P@3)']
    >>> t.values[:, 0, 0].tolist()  # RB*AP = 5/3: 6th of 0,1/3,1/2,1,7/6,5/3,2,3; P@3 = 2/3: 3rd
    [0.8333333333333333, 0.6666666666666666, 6.0, 3.0]
    """
    from irscale.scales import build, space_for

    tie_list, depth, normalize, exact_values = _transform_options(ties, depth, normalize, exact_values, progress, steps)
    judged = judged_runs(data)
    judged.check_depth(depth, f"transform at run length N = {depth}")
    _warn_padding(judged, depth)
    measures = _measures_to_transform(data, measures, depth, relevance)
    judged, relevance = apply_relevance(judged, measures, relevance)
    levels = max(judged.topics.max_grade, 1) + 1
    warn_no_relevant(measures, judged.topics)
    planned = _plan(measures, depth, levels, approx, max_pairs, judged.topics.values)
    ms = [m for m, _ in planned]  # as named; computed (on real-valued grades: on their level codes) as:
    computed = {m: m.for_grades(judged.topics.values) for m in ms}
    plan = dict(planned)
    bounded = [k for k, m in enumerate(ms) if plan[m]]  # positions of the bounded measures
    _check_bounded({ms[k]: computed[ms[k]] for k in bounded}, tie_list, depth, levels, normalize)
    unique = list(dict.fromkeys(ms))  # a measure named twice (P and P@10 at depth 10) is scored once
    base = score(judged, [] if exact_values else unique)
    shape = (len(judged.systems), len(judged.topics))
    values = np.empty((len(ms) * (1 + len(tie_list)) + len(bounded),) + shape, dtype=np.float64)
    maps, bounds, ids = [], {}, {}
    building = {"scheduler": scheduler, "cache": cache, "max_pairs": max_pairs}
    for i, m in enumerate(ms):
        step = (lambda done, total, lab=str(m): steps(lab, done, total)) if steps else None
        space = space_for(computed[m], depth, levels - 1)
        keys = space.keys(space.grade_view(judged.grades).reshape(-1, depth))
        values[i] = (
            space.measure_values(keys.reshape(shape), judged.topics) if exact_values else base.values[unique.index(m)]
        )
        if plan[m]:
            if m not in bounds:  # a measure named twice is bounded once
                bounds[m], ids[m] = _bounds_and_ids(
                    computed[m], judged, depth, levels, approx, space, step, cache, keys
                )
                _warn_uncertain(m, bounds[m], ids[m].reshape(-1))
            mid, half = _midpoint_and_half_width(bounds[m])
            for k in range(len(tie_list)):  # the runs' values are distinct (checked): one phi for every strategy
                values[len(ms) * (1 + k) + i] = mid.reshape(shape)
            values[len(ms) * (1 + len(tie_list)) + bounded.index(i)] = half.reshape(shape)
        else:
            rm = build(computed[m], depth, levels, progress=step, queries=keys, **building)
            maps.append((m, _map_record(m, rm)))  # what the provenance says of it: the map itself is let go
            for k, phi in enumerate(_phi_columns(rm, keys, tie_list, normalize)):  # in the order asked
                values[len(ms) * (1 + k) + i] = phi.reshape(shape)
            del rm  # (a large one, 1.5 GiB at DCG(base=10)@20 on 4 levels, is freed before the next is built)
        if progress:
            progress(i + 1, len(ms))
    values[:, _dropped(judged)] = np.nan  # topics dropped by missing_topics="drop"

    said = [scale_as_named(m, judged.topics.values, depth, levels) for m in ms]
    ranked = [Ranked(m, depth, t, normalize or plan[m], said[i], plan[m]) for t in tie_list for i, m in enumerate(ms)]
    cols = tuple(ms) + tuple(ranked) + tuple(HalfWidth(ranked[k]) for k in bounded)
    record = _transform_record(
        depth, relevance, ties if isinstance(ties, str) else tie_list, normalize, exact_values, maps, zip(ms, said)
    )
    if approx is not None:
        record.update(approx=approx, bounds=_bounds_provenance(bounds, depth, levels))
    prov = _transformed_provenance(data, base.provenance, ms, record)
    return ScoreTable(
        cols, base.systems, base.topics, values, prov, judged, {str(c): ids[c.measure] for c in ranked if c.midpoint}
    )


def _transformed_provenance(data, scored: dict, ms: list, record: dict) -> dict:
    """A transformed table's provenance: the scoring's (``scored``) with the measures at N,
    what evaluate recorded of the qrels and the reading, and the transform's ``record``."""
    prov = dict(scored, measures=[str(m) for m in ms])
    if isinstance(data, ScoreTable):
        prov.update(
            {k: data.provenance[k] for k in ("qrels", "qrels_sha256", "score_precision") if k in data.provenance}
        )
    prov["transform"] = record
    return prov


def _transform_options(ties, depth, normalize, exact_values, progress, steps) -> tuple[list[str], int, bool, bool]:
    """transform's options checked: (the tie strategies, N, normalize, exact_values)."""
    from irscale.scales.spaces import MAX_N

    tie_list = _tie_list(ties)
    depth = integer("depth", depth, minimum=1, maximum=MAX_N)
    normalize = flag("normalize", normalize)
    exact_values = flag("exact_values", exact_values)
    check_progress(progress)
    check_progress(steps)
    return tie_list, depth, normalize, exact_values


def _tie_list(ties) -> list[str]:
    """The tie strategies asked for (one name or a list), checked, each once, in the order given."""
    from irscale.scales import TIES

    tie_list = [ties] if isinstance(ties, str) else list(ties) if isinstance(ties, (list, tuple)) else None
    if not tie_list:
        raise ArgumentError(f"ties must be one of {', '.join(map(repr, TIES))} or a list of them, not {ties!r}")
    return list(dict.fromkeys(check_choice("ties", t, TIES) for t in tie_list))


def _warn_padding(judged: JudgedRuns, depth: int) -> None:
    """Warn (at transform's caller) where N is longer than every run: all are padded to N."""
    longest = int(np.max(judged.num_ret, initial=0))
    if depth > longest:
        warn(
            f"N = {depth} is longer than every run (the longest has {longest} documents): runs are padded with "
            "non-relevant documents to N",
            stacklevel=3,
        )


def _measures_to_transform(data, measures, depth: int, relevance: str | None) -> list[Measure]:
    """The measures transform was asked for (by default a ScoreTable's own), parsed at ``depth``
    and named as they will be computed under ``relevance``."""
    if measures is None and isinstance(data, ScoreTable):
        measures = [m for m in data.measures]
    if measures is None:
        raise ArgumentError("name the measures to transform, for example ['AP', 'nDCG']")
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
    return relevance_measures(parse_measures(measures, default_cutoff=depth), relevance)  # named as computed


def _check_bounded(bounded: dict, tie_list: list[str], depth: int, levels: int, normalize: bool) -> None:
    """Refuse ties over all runs for bounded measures whose runs tie; warn (at transform's
    caller) that bounded columns are normalised when ``normalize`` is off. ``bounded``: each
    bounded measure as named -> as computed (:meth:`Measure.for_grades`)."""
    from irscale.scales import space_for
    from irscale.scales.bounds import runs_distinct

    bounded_ms = list(bounded)
    tied = [m for m in bounded_ms if not runs_distinct(space_for(bounded[m], depth, levels - 1))]
    if tie_list != ["unq"] and tied:
        raise ArgumentError(
            f"{', '.join(map(str, tied))}: ties={tie_list} rank over all runs, but at N = {depth} "
            f"only bounds on phi over distinct values exist, and its runs tie (several runs share "
            f"a value); use ties='unq' (compare: mid=False, CLI --no-mid)"
        )
    if bounded_ms and not normalize:  # approx implies the normalised form for the columns it bounds
        tail = (
            f": normalised (phi / number of values), as --approx bounds {'it' if len(bounded_ms) == 1 else 'them'}"
            "; --normalize does the rest too"
        )
        warn(f"ranked {_fit([str(m) for m in bounded_ms], LINE - 34 - len(tail))}{tail}", stacklevel=3)


def _bounds_and_ids(m: Measure, judged: JudgedRuns, depth, levels, approx, space, step, cache, keys) -> tuple:
    """Certified bounds on the phi of every run of ``judged`` (:func:`_bounded`) and the
    identities of the runs' exact values (one per system and topic)."""
    b = _bounded(m, depth, levels, _judged_view(judged.grades, depth, levels), approx, space, step, cache, keys)
    return b, np.unique(keys, return_inverse=True)[1].reshape(len(judged.systems), len(judged.topics))


def _midpoint_and_half_width(b) -> tuple[np.ndarray, np.ndarray]:
    """The midpoint of each run's bounds [lo, hi] and the half-width rounded up, so that
    [lo, hi] lies within midpoint +- half-width exactly."""
    mid = (b.lo + b.hi) / 2
    return mid, np.nextafter(np.maximum(b.hi - mid, mid - b.lo), np.inf)


def _phi_columns(rm, keys: np.ndarray, tie_list: list[str], normalize: bool) -> list[np.ndarray]:
    """phi of the runs' ``keys`` under each tie strategy, in the order of ``tie_list``
    (normalised where asked)."""
    ranks = rm.rank(keys, tie_list)
    return [rm.normalized(ranks[tie], tie) if normalize else ranks[tie] for tie in tie_list]


def _transform_record(N: int, relevance, ties, normalize: bool, exact_values: bool, maps: list, theory) -> dict:
    """What ``provenance["transform"]`` records: the options, each rank map's size, engine and
    levels by the measure's name (``maps``: pairs of a measure and :func:`_map_record` of its
    rank map; on real-valued grades ``computed_as`` is the measure on the level codes), and each measure's scale
    (``theory``: pairs of a measure and its statement or None)."""
    return {
        "N": N,
        "relevance": relevance,
        "ties": ties,
        "normalized": normalize,
        "exact_values": exact_values,
        "maps": {str(m): record for m, record in maps},
        "theory": {str(m): st.as_dict() for m, st in theory if st is not None},
    }


def _map_record(m, rm) -> dict:
    record = {"size": rm.size, "engine": rm.engine, "levels": rm.space.c + 1}
    if str(rm.measure) != str(m):
        record["computed_as"] = str(rm.measure)
    return record


def _bounds_provenance(bounds: dict, depth: int, levels: int) -> dict:
    """What transform's provenance records of each bounded measure's certified bounds."""
    from irscale.scales import space_for

    return {
        str(m): {
            "method": b.method,
            "resolution": b.resolution,  # the size exactly, never through a float (4^1000)
            "size": count_text(b.size, space_for(m, depth, levels - 1).c + 1, exact=True, sep=""),
            "confidence": b.confidence,
            "assumptions": b.assumptions,
            "largest_half_width": b.width / 2,
            "table_max_width": b.max_width,
            "seconds": round(b.seconds, 3),
            **{k: str(v) for k, v in b.details.items()},
        }
        for m, b in bounds.items()
    }


def _warn_uncertain(m: Measure, b, ids: np.ndarray) -> None:
    """Warn where the bounds leave the order of more than 1% of the pairs of distinct
    values of the runs uncertain (their intervals overlap): the ranked column then cannot
    tell those runs apart (typically runs far below the run space's typical run, where
    phi / |M| is tinier than any absolute width)."""
    from irscale.stats import unordered_share

    share, n = unordered_share(b.lo, b.hi, ids), len(np.unique(ids))
    if share > 0.01:
        warn(
            f"ranked({m}): the --approx bounds leave the order of {share:.0%} of the pairs of the runs' {n:,} "
            "values uncertain; compare flags decisions that could flip (could_flip_ranked)",
            stacklevel=4,
        )


def _judged_view(grades: np.ndarray, depth: int, levels: int) -> np.ndarray:
    """The judged grades cut at ``depth``, padded with non-relevant documents and clipped
    to 0..levels-1 (sentinels: 0), one row per run and topic: what the bounds take (they
    binarise for binary measures themselves)."""
    from irscale.scales.spaces import cut_and_pad

    return np.clip(cut_and_pad(grades, depth), 0, levels - 1).astype(np.int8).reshape(-1, depth)


BOUNDS_MEMORY = 4 * 2**30  # bytes the bounds tables of one measure may take (a retry beyond is refused)


def _bounded(m: Measure, depth: int, levels: int, grades: np.ndarray, approx: float, space, step, cache: bool, keys):
    """Certified bounds on the normalised phi of every run (``grades``: judged grades
    0..levels-1, one row per run; ``keys``: their exact keys) no wider than ``approx``: at a first resolution, then
    once at the resolution that should reach ``approx`` (widths shrink about as 1 /
    resolution), unless its tables would pass BOUNDS_MEMORY."""
    from irscale.errors import MeasureError
    from irscale.scales.bounds import bounds_resolution, phi_bounds

    if step:
        step(0, 1)
    first, per_unit = bounds_resolution(space, approx)
    b = phi_bounds(m, depth, grades, levels, resolution=first, cache=cache, keys=keys)
    if b.width > approx:
        resolution = int(b.resolution * b.width / approx * 1.25) + 1
        largest = int(BOUNDS_MEMORY / per_unit)  # the tables' memory
        if resolution > largest:
            reach = b.width * b.resolution / largest
            raise MeasureError(
                f"{m} at N = {depth}: the certified bounds are {b.width:.3g} wide at resolution "
                f"{b.resolution:,}, wider than approx={approx:g}; reaching it needs a resolution of "
                f"{resolution:,}, whose tables would take more than {BOUNDS_MEMORY / 2**30:.0f} GiB; "
                f"ask for approx={reach * 1.3:.2g} or more"
            ) from None
        try:
            b = phi_bounds(m, depth, grades, levels, resolution=resolution, cache=cache, keys=keys)
        except IrscaleError as e:
            raise MeasureError(
                f"{m} at N = {depth}: the certified bounds are {b.width:.3g} wide at resolution "
                f"{b.resolution:,}, wider than approx={approx:g}, and a resolution of {resolution:,} "
                f"is refused ({e}); ask for approx={b.width * 1.01:.2g} or more"
            ) from None
        if b.width > approx:
            raise MeasureError(
                f"{m} at N = {depth}: the certified bounds are {b.width:.3g} wide even at resolution "
                f"{b.resolution:,}, wider than approx={approx:g}; ask for approx={b.width * 1.01:.2g} "
                f"or more"
            )
    if step:
        step(1, 1)
    return b


def judged_runs(data: ScoreTable | JudgedRuns) -> JudgedRuns:
    """The judged runs behind ``data`` (a ScoreTable from :func:`evaluate`, or JudgedRuns):
    what transform and compare work on."""
    if isinstance(data, ScoreTable):
        if data.judged is None:
            raise ArgumentError(
                "this score table carries no grades (it was not made by irscale.evaluate); "
                "pass the JudgedRuns or evaluate the runs first"
            )
        return data.judged
    if isinstance(data, JudgedRuns):
        return data
    raise wrong_type(
        "data",
        data,
        "the ScoreTable returned by irscale.evaluate(qrels, runs) (or JudgedRuns); evaluate the runs first",
    )


def _dropped(judged: JudgedRuns) -> np.ndarray:
    """(systems, topics) mask of the topics left out of a system's scores
    (``missing_topics="drop"``)."""
    out = np.zeros((len(judged.systems), len(judged.topics)), dtype=bool)
    if judged.missing_topics == "drop":
        pos = {t: k for k, t in enumerate(judged.topics.names)}
        for s, name in enumerate(judged.systems):
            for t in judged.missing.get(name, []):
                out[s, pos[t]] = True
    return out
