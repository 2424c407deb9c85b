"""Reading and judging runs: run paths (files, directories, glob patterns), the readers'
options in one shape from the command line to the readers (:class:`ReadOptions`), and
:func:`load_runs` / :func:`iter_judged`, which read run files in parallel and look each
ranking up in the qrels."""

from __future__ import annotations

import dataclasses
import glob
import os
import warnings
from collections.abc import Callable, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from irscale.data import (
    JudgedRuns,
    MissingTopics,
    _index,
    _judge_kernels,
    _judge_tables,
    assemble,
    check_options,
    judge_run,
)
from irscale.errors import (
    ArgumentError,
    InputFormatError,
    IrscaleError,
    collecting,
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
    parse_runs,
    read_bytes,
    read_qrels,
    read_runs,
)
from irscale.parallel import can_fork as _can_fork
from irscale.parallel import parallel_imap
from irscale.validate import flag, integer, wrong_type

__all__ = [
    "as_qrels",
    "check_progress",
    "expand_run_paths",
    "iter_judged",
    "load_runs",
    "read_options",
    "reader_options",
    "ReadOptions",
]


@dataclass(frozen=True)
class ReadOptions:
    """How qrels and run files are read and judged: one shape from the command line (the
    verbs' reading options) to the readers. Every value is checked when the options are made.

    ``missing_topics``: a qrels topic a run retrieves nothing for scores 0 (``"zero"``, like
    ``trec_eval -c``), is left out of the run's mean (``"drop"``) or is an error
    (``"error"``); ``score_precision``: ``"float32"`` orders documents like trec_eval <= 9.0.8
    and pytrec_eval; ``extra_fields``: run lines with more than six fields are an error or
    the rest is ignored (``"ignore"``, trec_eval); ``duplicates``: a docno retrieved twice for
    a topic is an error or only the first line is kept (``"first"``); ``metadata``: a
    malformed ir_metadata header is an error, a warning (``"warn"``) or never read
    (``"ignore"``); ``split_tags``: a file holding several run tags is read as one run per
    tag; ``skip_invalid``: files that are not runs are skipped with a warning;
    ``max_grade``: the top grade c of the relevance scale (default the qrels' highest);
    ``integer_grades``: each qrels grade read as trec_eval reads it, its integer part (C's
    ``atol``: ``1.5`` is 1), for trec_eval's numbers on a file with decimals;
    ``judged_only``: every measure is computed on each ranking with its unjudged documents
    (and those judged below 0) removed, trec_eval's ``-J`` (:func:`irscale.data.condense`).

    >>> ReadOptions(score_precision="float32").reader()["score_precision"]
    'float32'
    """

    missing_topics: MissingTopics = "zero"
    score_precision: ScorePrecision = "float64"
    extra_fields: ExtraFields = "error"
    duplicates: Duplicates = "error"
    metadata: Metadata = "error"
    split_tags: bool = False
    skip_invalid: bool = False
    max_grade: int | None = None
    integer_grades: bool = False
    judged_only: bool = False

    def __post_init__(self):
        check_options(None, self.missing_topics)
        check_reader_options(self.score_precision, self.extra_fields, self.duplicates, self.metadata)
        for name in ("split_tags", "skip_invalid", "integer_grades", "judged_only"):
            flag(name, getattr(self, name))
        object.__setattr__(self, "max_grade", integer("max_grade", self.max_grade, minimum=1, none=True))

    def reader(self) -> dict:
        """The run readers' policies (:func:`irscale.io.read_runs`'s keywords)."""
        return reader_options(self.score_precision, self.extra_fields, self.duplicates, self.metadata)

    def qrels(self, qrels) -> Qrels:
        """The qrels as these options read them: a path read with ``integer_grades`` (each
        grade's integer part, as trec_eval reads it), anything else as given (:func:`as_qrels`)."""
        if not self.integer_grades or not isinstance(qrels, (str, os.PathLike)):
            return as_qrels(qrels)
        if is_parquet(qrels):
            raise ArgumentError(
                f"integer_grades (--integer-grades) reads the grades of a text qrels file as trec_eval does; "
                f"{qrels} is Parquet, whose grade column is read as its values are: cast it to integers to get "
                "trec_eval's reading"
            )
        return read_qrels(qrels if isinstance(qrels, str) else Path(qrels), integer_grades=True)


def read_options(read: ReadOptions | None, **given) -> ReadOptions:
    """The reading options of a call that takes ``read=ReadOptions(...)`` or the reading
    keywords (one release more): the one or the other, never both."""
    if read is None:
        return ReadOptions(**given)
    if not isinstance(read, ReadOptions):
        raise wrong_type("read", read, "a ReadOptions (irscale.loading.ReadOptions) or None")
    defaults = ReadOptions()
    named = [k for k, v in given.items() if v != getattr(defaults, k)]
    if named:
        raise ArgumentError(
            f"got read=ReadOptions(...) and {', '.join(named)}: give the reading options in one of the "
            f"two shapes, for example read=ReadOptions({named[0]}=...)"
        )
    return read


def expand_run_paths(items: Sequence[str | os.PathLike], quiet: bool = False) -> list[Path]:
    """Files named by ``items``: files as they are, directories (their files, sorted,
    hidden files skipped) and glob patterns; ``quiet``: no warning about subdirectories
    (a second look at the same items)."""
    out: list[Path] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            subdirs = sorted(f.name for f in p.iterdir() if f.is_dir() and not f.name.startswith("."))
            if subdirs and not quiet:
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
    read: ReadOptions | None = None,
    judged_only: bool = False,
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
    ``judged_only=True`` condenses each ranking, its unjudged documents removed
    (trec_eval ``-J``; see :class:`ReadOptions`).
    ``read``: these options as one :class:`ReadOptions` (instead of the keywords).
    """
    read = read_options(
        read,
        missing_topics=missing_topics,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        metadata=metadata,
        split_tags=split_tags,
        skip_invalid=skip_invalid,
        max_grade=max_grade,
        judged_only=judged_only,
    )
    judged = list(iter_judged(runs, qrels, depth=depth, progress=progress, workers=workers, read=read))
    return assemble(
        judged,
        qrels,
        depth=depth,
        missing_topics=read.missing_topics,
        max_grade=read.max_grade,
        judged_only=read.judged_only,
    )


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
    read: ReadOptions | None = None,
    judged_only: bool = False,
):
    """:func:`load_runs` one run at a time: ``(name, path, grades, missing, extra, metadata)``
    per run (see :func:`irscale.data.judge_run`; ``metadata``: the file's ir_metadata header
    or None), in input order, as the workers finish them;
    only the runs not yet consumed are held. With ``judged_only`` the grades are condensed
    already; give :func:`irscale.data.assemble` ``judged_only=True`` too, so that the
    stacked runs say so (:func:`load_runs` does)."""
    read = read_options(
        read,
        missing_topics=missing_topics,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        metadata=metadata,
        split_tags=split_tags,
        skip_invalid=skip_invalid,
        judged_only=judged_only,
    )
    depth = check_options(depth, read.missing_topics)
    opts = read.reader()
    check_progress(progress)
    split_tags, skip_invalid, score_precision, duplicates = (
        read.split_tags,
        read.skip_invalid,
        read.score_precision,
        read.duplicates,
    )
    items = _run_items(runs, skip_invalid, score_precision=score_precision, duplicates=duplicates)
    kernels = _judge_kernels()  # the lookup tables, built once, before workers share them
    if kernels is None:
        _index(qrels)  # the numpy path's pandas hash index
    else:
        _judge_tables(qrels, kernels)  # the compiled judge's per-topic hash tables (no pandas)
    total = len(items)
    _Prefetch.stop()  # (gzip runs inflated ahead: the thread ends before the readers fork)
    forked = _can_fork() and min(workers or min(os.cpu_count() or 1, 8), total) > 1  # parallel_imap's choice
    task = partial(
        _read_and_judge,
        qrels=qrels,
        depth=depth,
        opts=opts,
        split_tags=split_tags,
        skip_invalid=skip_invalid,
        said=forked,
        judged_only=read.judged_only,
    )
    if progress:
        progress(0, total, "")
    valid = 0
    # forked processes where they can be (they inherit the task: the qrels are not pickled), else
    # threads; results arrive in order, so warnings and progress follow the input order
    results = _judged_results(task, items, progress, workers, forked)
    with closing(results):
        for i, res in enumerate(results):
            if i == 0 and forked:  # the readers are forked, each with its copy of the text inflated ahead
                _Prefetch.drop()
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
    judged_only: bool = False,
):
    """Judged tuples ``(name, path, grades, missing, extra)`` of the run(s) in ``entry``
    (a Run or a path, and whether a directory or pattern named it); with
    ``skip_invalid`` a file that is not a valid run gives its error instead.
    ``on_read(fraction)``: the file's reading progress (see :func:`read_runs`). Returns
    :class:`_Said`: the result and the warnings irscale raised (in any thread), for the
    caller to say in the input's order; ``said`` (in a forked process only:
    catch_warnings is process-wide) keeps any other warning too."""
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
            judged_only=judged_only,
        )
    return _Said(result, kept + [w.message for w in caught or ()])


def _judge_entry(
    entry,
    *,
    qrels: Qrels,
    depth: int | None,
    opts: dict,
    split_tags: bool,
    skip_invalid: bool,
    on_read,
    judged_only: bool = False,
):
    """:func:`_read_and_judge`'s work: its result (warnings said as they come)."""
    item, listed = entry
    try:
        text = None if isinstance(item, Run) or on_read else _Prefetch.take(item)
        if text is not None:  # inflated ahead (see _Prefetch)
            runs = parse_runs(text, str(item), split_tags=split_tags, **opts)
        elif isinstance(item, Run):
            runs = [item]
        else:
            runs = read_runs(item, split_tags=split_tags, progress=on_read, **opts)
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
    return [(run.name, run.path, *judge_run(run, qrels, depth, judged_only), run.metadata) for run in runs]


PREFETCH_BYTES = 1 << 27  # at most this much text of gzip runs is inflated ahead (see _Prefetch)


class _Prefetch:
    """gzip run files inflated by one thread from the first instant of a call, while the
    calling thread reads the qrels and numba loads its kernels (inflating releases the
    GIL, so the other core takes the runs, in order). It stops when the readers start
    (:meth:`stop`: after the file in hand, so the readers may fork), or before a file
    whose text (its gzip size field) would pass :data:`PREFETCH_BYTES` in all; its files'
    text waits for their readers. A file that cannot be read here is read again by its
    reader, whose error then comes in its place, in order."""

    _text: dict[str, bytes] = {}  # absolute path -> its text, until a reader takes it
    _running: list = []  # the threads inflating (with their stop events)

    def __init__(self, runs):
        import threading

        self.paths: list[str] = []
        try:
            # paths only, in a list or tuple (an iterator is the readers' to consume)
            items = [runs] if isinstance(runs, (str, os.PathLike)) else runs if isinstance(runs, (list, tuple)) else []
            if items and all(isinstance(r, (str, os.PathLike)) for r in items):
                self.paths = [os.path.abspath(f) for f in expand_run_paths(items, quiet=True)]
        except (OSError, IrscaleError, TypeError):  # the readers say what is wrong, in order
            self.paths = []
        if len(self.paths) < 2:  # (one file: its reader starts at once)
            self.paths = []
            return
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._inflate, name="irscale-inflate", daemon=True)
        _Prefetch._running.append((self.thread, self.halt))
        self.thread.start()

    def _inflate(self) -> None:
        left = PREFETCH_BYTES
        for path in self.paths:
            if self.halt.is_set():
                return
            try:
                with open(path, "rb") as fh:
                    if fh.read(2) != b"\x1f\x8b":  # plain text: nothing to inflate
                        continue
                    fh.seek(-4, os.SEEK_END)  # gzip's size field: the text's length modulo 2^32
                    size = max(int.from_bytes(fh.read(4), "little"), fh.tell())
                if size > left:
                    return
                text = read_bytes(path)
            except Exception:  # its reader reads it again and says why
                continue
            left -= len(text)
            _Prefetch._text[path] = text

    @staticmethod
    def stop() -> None:
        """Stop inflating after the file in hand and wait for that (a process with threads
        does not fork its readers)."""
        while True:
            try:
                thread, halt = _Prefetch._running.pop()
            except IndexError:  # (another call took the last one)
                return
            halt.set()
            thread.join()

    @staticmethod
    def drop() -> None:
        """Let go of every text inflated ahead (forked readers have their own copies)."""
        _Prefetch._text.clear()

    def close(self) -> None:
        """Let go of what was not taken."""
        self.stop()
        for path in self.paths:
            _Prefetch._text.pop(path, None)
        self.paths = []

    @staticmethod
    def take(path) -> bytes | None:
        return _Prefetch._text.pop(os.path.abspath(path), None)


def _refuse_reading_options(given: list[str]) -> None:
    """Refuse the options of reading and judging runs (``given``: those not at their default)
    with runs judged already."""
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


def _reason(e: IrscaleError) -> str:
    """Why a file is not a valid run, in a few words (a warning's line)."""
    reason = getattr(e, "reason", None) or str(e)
    line = getattr(e, "line", None)
    text = (f"line {line}: " if line else "") + reason
    return text if len(text) <= 60 else text[:57] + "..."
