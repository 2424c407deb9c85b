"""The ``irscale`` command line: the only layer that prints or exits.

An :class:`~irscale.errors.IrscaleError` becomes one red line on stderr and exit code 2;
warnings are yellow lines on stderr; results go to stdout.
"""

# No ``from __future__ import annotations`` here: typer reads every verb's annotations
# when it builds the commands, at each start, and evaluating them from strings costs
# about 50 ms. Annotations in this module must therefore name things defined at import.
import dataclasses
import os
import sys
import threading  # (loaded at import anyway: _SAY_LOCK)
import warnings
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from irscale._version import __version__
from irscale.errors import ArgumentError, IrscaleError, IrscaleWarning, check_choice, count_text, show
from irscale.validate import writable_dir

if TYPE_CHECKING:  # (annotations naming them are strings: never evaluated, typer reads none of them)
    from rich.console import Console

    from irscale.loading import ReadOptions

__all__ = [
    "AcrossOpt",
    "app",
    "ApproxOpt",
    "BaselineOpt",
    "cache_app",
    "cache_clear_cmd",
    "cache_info_cmd",
    "compare",
    "CorrectionOpt",
    "demo",
    "DuplicatesOpt",
    "DupOpt",
    "EngineOpt",
    "err",
    "ETA_MIN_SECONDS",
    "ETA_MIN_SHARE",
    "evaluate",
    "ExtraOpt",
    "FiguresOpt",
    "Float32Opt",
    "Format",
    "HEARTBEAT",
    "inspect",
    "IntegerGradesOpt",
    "LINE",
    "list_measures",
    "main",
    "MaxGradeOpt",
    "MaxPairsOpt",
    "MemoryOpt",
    "MetadataOpt",
    "MetadataPolicy",
    "MissingOpt",
    "MissingTopicsOpt",
    "NoEffectsOpt",
    "NoFreeOpt",
    "OrderOpt",
    "paper_table",
    "PLAIN_EVERY",
    "rankmap",
    "ReadOpts",
    "RelevanceArg",
    "RelevanceOpt",
    "SAY_MEMORY",
    "SeedOpt",
    "SkipOpt",
    "SpacingOpt",
    "SplitOpt",
    "study_app",
    "study_trec8_like",
    "StudyOpts",
    "TableFormat",
    "TableScale",
    "TestOpt",
    "TiesOpt",
    "transform",
    "version",
]


# Start-up (irscale --help, irscale version) loads typer and this module only: rich's
# console, progress and tables, numpy and every other irscale module are imported by the
# verbs that use them.
# rich_markup_mode=None: plain help (typer's rich help loads rich.markdown and pygments, 0.25 s per start)
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Measurement-theoretic evaluation of IR systems (trec_eval-exact scores, "
    "interval scales, meaningful statistics).",
)


LINE = 160  # no line a verb prints on stderr is longer: a longer message goes on, indented, on the next


class _Stderr:
    """``err``: the rich Console on stderr, made on first use (importing rich.console
    takes about 50 ms that ``irscale version`` need not pay). ``err.print(...)`` and
    the other methods are the Console's; rich objects that take a console (Progress)
    get ``err.console``, the Console itself."""

    _console: "Optional[Console]" = None

    @property
    def console(self) -> "Console":
        if _Stderr._console is None:
            from rich.console import Console

            wide = Console(stderr=True).width
            _Stderr._console = Console(stderr=True, highlight=False, width=min(wide, LINE))  # rich wraps at 160
        return _Stderr._console

    def __getattr__(self, name):
        return getattr(self.console, name)


err = _Stderr()


class Format(str, Enum):
    table = "table"
    tsv = "tsv"
    csv = "csv"
    json = "json"


class MissingTopicsOpt(str, Enum):
    zero = "zero"
    drop = "drop"
    error = "error"


class DuplicatesOpt(str, Enum):
    error = "error"
    first = "first"


class MetadataPolicy(str, Enum):
    error = "error"
    warn = "warn"
    ignore = "ignore"


def _plain(message) -> str:
    """A message as one safe line: invisible characters escaped (errors.show), and rich
    markup in user data (a docno like '[b]') printed literally."""
    from rich.markup import escape

    return escape(show(str(message)))


def _lines(text: str, head: str = "") -> list[str]:
    """``head + text`` (invisible characters escaped) in lines of at most :data:`LINE`
    characters: broken between words, the rest indented two spaces; a word longer than a
    line (a long path) broken inside it."""
    from textwrap import wrap

    return wrap(
        show(text),
        width=LINE,
        initial_indent=head,
        subsequent_indent="  ",
        break_long_words=True,
        break_on_hyphens=False,
    ) or [head]


def _say(tag: str, style: str, message) -> None:
    """``tag: message`` on stderr, ``tag`` in ``style``, in lines of at most :data:`LINE`
    characters (:func:`_lines`)."""
    from rich.markup import escape

    head = f"{tag}: "
    lines = _lines(str(message), head)
    first = escape(lines[0][len(head) :])
    err.print(f"[{style}]{tag}:[/] {first}" if style else head + first, soft_wrap=True)
    for line in lines[1:]:
        err.print(escape(line), soft_wrap=True)


def _note(text: str) -> None:
    """A line of information on stderr (what was written, a plan, progress), in lines of at
    most :data:`LINE` characters (:func:`_lines`)."""
    from rich.markup import escape

    for line in _lines(text):
        err.print(escape(line), soft_wrap=True)


def _fail(e: IrscaleError) -> None:
    _say("error", "bold red", e)
    raise typer.Exit(2)


_SAID: set = set()  # the warnings said by this command (each once: by its key, else its text)
_HELD: dict = {}  # while a study runs several N (_HOLDING): its "not meaningful" warnings, merged over the N
_HOLDING = [False]
_QUIET = [False]  # irscale --no-warnings


def _show_warning(message, category, filename, lineno, file=None, line=None):
    if _QUIET[0]:
        return
    key = getattr(message, "key", None) or (category.__name__, str(message))
    if _HOLDING[0] and hasattr(message, "merged"):  # a NotMeaningfulWarning of one N of a study
        held = _HELD.setdefault(message.merge_key, message)
        _HELD[message.merge_key] = held if held is message else held.merged(message)
        return
    if key in _SAID:
        return
    _SAID.add(key)
    if issubclass(category, IrscaleWarning):
        _say("warning", "yellow", message)
    else:
        _say("warning", "", f"{category.__name__}: {message}")


class _OnceOverN:
    """``with _OnceOverN():`` around a study's run lengths: each "not meaningful" warning is
    said once, after them, naming every N it holds at (not once per N)."""

    def __enter__(self):
        _HELD.clear()
        _HOLDING[0] = True
        return self

    def __exit__(self, *exc):
        self.flush()
        return False

    def flush(self) -> None:
        """Say the held warnings now (before an error line, which comes last)."""
        _HOLDING[0] = False
        held = list(_HELD.values())
        _HELD.clear()
        for w in held:
            _show_warning(w, type(w), "", 0)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _main(
    no_warnings: Annotated[
        bool,
        typer.Option(
            "--no-warnings", help="say no warning (each is one line; the guide's section Warnings explains them all)"
        ),
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", help="print irscale's version and exit", is_eager=True, callback=_print_version)
    ] = False,
):
    """Measurement-theoretic evaluation of IR systems (trec_eval-exact scores, interval
    scales, meaningful statistics)."""
    _SAID.clear()
    _HELD.clear()
    _HOLDING[0] = False
    _QUIET[0] = no_warnings
    warnings.showwarning = _show_warning  # every verb: warnings as one yellow line on stderr, each once


PLAIN_EVERY = 10.0  # seconds between the plain progress lines written when stderr is not a terminal
ETA_MIN_SECONDS = 5.0  # an ETA is shown once the rate has been measured over this long
ETA_MIN_SHARE = 0.05  # ... and over this share of the work


def _eta(first: tuple[float, float], now: float, done: float, total) -> float | None:
    """Seconds left at the rate measured since the step's first tick ``first`` = (time,
    done), which leaves out the setup before it; None until that rate is known (at least
    ETA_MIN_SECONDS and ETA_MIN_SHARE of the work since), so no first guess of hours for
    a job of minutes."""
    t0, d0 = first
    if not total or not done < total or done - d0 < ETA_MIN_SHARE * total or now - t0 < ETA_MIN_SECONDS:
        return None
    return (now - t0) / (done - d0) * (total - done)


def _new_say_lock():
    """The lock around progress output. A process forked while the heartbeat thread writes
    would inherit a held lock of stderr or of the console and could hang when it writes:
    each fork waits for the lock first (os.register_at_fork), so none happens mid-line."""
    import os

    lock = threading.Lock()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lock.acquire, after_in_parent=lock.release, after_in_child=lock.release)
    return lock


_SAY_LOCK = _new_say_lock()  # made at import: two threads never make two


HEARTBEAT = 1.0  # seconds between the heartbeat's looks at a step (it speaks only after PLAIN_EVERY of silence)


class _Heartbeat(threading.Thread):
    """The progress heartbeat's thread, marked ``fork_safe`` for :func:`irscale.parallel.can_fork`:
    it writes only under _SAY_LOCK, which every fork waits for."""

    fork_safe = True


class _Feedback:
    """Progress of one long step on stderr, as ``with _Feedback("reading runs") as tick:
    ... tick(done, total, description)``. On a terminal: a rich bar with the percentage,
    done/total, elapsed time and ETA (removed when the step ends). Elsewhere (a log
    file, CI): a plain line at most every ``PLAIN_EVERY`` seconds, the first after that
    long, so steps shorter than that print nothing; never a blank line. The ETA appears
    once the rate is known (:func:`_eta`), "ETA ..." until then. A heartbeat thread keeps
    a step that stops ticking (a rank map's phase between two progress reports) from
    going silent: the bar's elapsed time moves every second, and a plain line comes at
    least every ``PLAIN_EVERY`` seconds (the heartbeat looks every ``HEARTBEAT`` seconds and
    speaks from ``PLAIN_EVERY - HEARTBEAT`` on), saying "still working" when no tick came."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        import time

        self.t0 = self.last = time.monotonic()
        self.first = None  # (time, done) of the first tick: the rate is measured from there
        self.state = (0, None, "")  # the last tick's (done, total, description)
        self.ticked = self.t0  # when the last tick came
        if err.console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar: Optional[Progress] = Progress(
                TextColumn(self.what),
                BarColumn(),
                TaskProgressColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA {task.fields[eta]}"),
                TextColumn("{task.description}"),
                console=err.console,
                transient=True,
                auto_refresh=False,
            )  # refreshed by ticks and the heartbeat (fork-safe: _SAY_LOCK)
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=None, eta="...")
        else:
            self.bar = None
        self.stop = threading.Event()
        self.heart = _Heartbeat(target=self._heartbeat, name="irscale-progress", daemon=True)
        self.heart.start()
        return self.tick

    def _heartbeat(self) -> None:
        import time

        while not self.stop.wait(HEARTBEAT):
            self.beat(time.monotonic())

    def beat(self, now: float) -> None:
        """What the heartbeat does at time ``now``: refresh the bar (its elapsed time), or
        where stderr is not a terminal and nothing was said for PLAIN_EVERY seconds, say
        the step's last state with "still working"."""
        with _SAY_LOCK:
            if self.stop.is_set():
                return
            if self.bar is not None:
                self.bar.refresh()
            elif now - self.last >= PLAIN_EVERY - HEARTBEAT:  # it looks every HEARTBEAT: no gap over PLAIN_EVERY
                self._line(now, *self.state, still=self.ticked <= self.last)  # no tick since the last line

    def tick(self, done, total, description: str = "") -> None:
        import time

        now = time.monotonic()
        if self.first is None:
            self.first = (now, done)
        self.state, self.ticked = (done, total, description), now
        left = _eta(self.first, now, done, total)
        with _SAY_LOCK:
            if self.bar is not None:
                self.bar.update(
                    self.task,
                    completed=done,
                    total=total,
                    description=_plain(description),
                    eta="..." if left is None else _duration(left),
                )
                self.bar.refresh()
                return
            if now - self.last < PLAIN_EVERY:
                return
            self._line(now, done, total, description)

    def _line(self, now: float, done, total, description: str, still: bool = False) -> None:
        self.last = now
        elapsed = now - self.t0
        line = f"{self.what}: "
        if total:
            left = _eta(self.first, now, done, total) if self.first is not None else None
            line += f"{done:,.0f}/{total:,} ({100 * done / total:.0f}%), {_duration(elapsed)} elapsed"
            if done < total:
                line += f", ETA {'...' if left is None else _duration(left)}"
        elif self.first is None:
            line += f"{_duration(elapsed)} elapsed"
        else:
            line += f"{done:,.0f} done, {_duration(elapsed)} elapsed"
        if still:
            line += ", still working"
        _note(line + (f" ({description})" if description else ""))

    def __exit__(self, *exc):
        self.stop.set()
        self.heart.join()
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60:02d} s"


# options every verb that reads runs shares (one definition, one help text)
Float32Opt = Annotated[
    bool,
    typer.Option("--float32-scores", help="round scores to float32 before ordering (trec_eval <= 9.0.8, pytrec_eval)"),
]
MissingOpt = Annotated[
    MissingTopicsOpt,
    typer.Option(help="qrels topics a run lacks: score 0 (like trec_eval -c), drop from that run, or error"),
]
ExtraOpt = Annotated[
    bool,
    typer.Option(
        "--ignore-extra-fields", help="accept run lines with more than 6 fields (ignore the rest, like trec_eval)"
    ),
]
DupOpt = Annotated[
    DuplicatesOpt, typer.Option(help="a docno retrieved twice for a topic: error, or keep the first line")
]
MetadataOpt = Annotated[
    MetadataPolicy,
    typer.Option(
        help="a run file's ir_metadata header (kept in the provenance): a malformed one is an error, or "
        "ignored with a warning (warn); ignore: never read"
    ),
]
MemoryOpt = Annotated[
    Optional[str],
    typer.Option(
        "--memory",
        metavar="SIZE",
        help="memory budget of the rank-map engines, e.g. 4G or 512M (default: half the available memory); "
        "an engine that would need more is not used, or the measure is refused in one line",
    ),
]
IntegerGradesOpt = Annotated[
    bool,
    typer.Option(
        "--integer-grades",
        help="read each qrels grade as trec_eval does, its integer part (1.5 is 1), instead of as the real "
        "value it is written as",
    ),
]
JudgedOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--judged-only",
        "-J",
        help="trec_eval's -J: score each ranking with its unjudged documents removed (the condensed list: "
        "judged documents moved up in their order)",
    ),
]
SplitOpt = Annotated[bool, typer.Option("--split-tags", help="read a file holding several run tags as one run per tag")]
SkipOpt = Annotated[
    bool,
    typer.Option("--skip-invalid", help="skip, with a warning, files that are not runs (a README in a run directory)"),
]
MaxGradeOpt = Annotated[
    Optional[int],
    typer.Option(
        "--max-grade",
        min=1,
        max=32000,
        help="top grade c of the relevance scale for graded measures (default: the qrels' "
        "highest); higher grades count as c",
    ),
]


def ReadOpts(  # noqa: N802 - (the verbs' one call that turns their reading options into the readers' shape)
    float32: bool = False,
    missing: MissingTopicsOpt = MissingTopicsOpt.zero,
    ignore_extra: bool = False,
    duplicates: DuplicatesOpt = DuplicatesOpt.error,
    split_tags: bool = False,
    skip_invalid: bool = False,
    max_grade: Optional[int] = None,
    metadata: MetadataPolicy = MetadataPolicy.error,
    integer_grades: bool = False,
    judged_only: bool = False,
) -> "ReadOptions":
    """How runs are read and judged (the shared options above), as the readers take it:
    one :class:`irscale.loading.ReadOptions` from here down."""
    from irscale.loading import ReadOptions

    return ReadOptions(
        missing_topics=missing.value,
        score_precision="float32" if float32 else "float64",
        extra_fields="ignore" if ignore_extra else "error",
        duplicates=duplicates.value,
        metadata=metadata.value,
        split_tags=split_tags,
        skip_invalid=skip_invalid,
        max_grade=max_grade,
        integer_grades=integer_grades,
        judged_only=judged_only,
    )


def _reading(fn):
    """Run ``fn(tick)`` under the 'reading runs' progress bar."""
    warnings.showwarning = _show_warning
    with _Feedback("reading runs") as tick:
        return fn(tick)


def _evaluate(qrels, runs, measures, depth, opts: "ReadOptions", rel_level: str | None = None):
    from irscale.experiment import DEFAULT_MEASURES, evaluate
    from irscale.measures import at_rel_level, parse_measures

    ms = at_rel_level(parse_measures(measures or DEFAULT_MEASURES), rel_level)  # trec_eval's -l
    q = opts.qrels(qrels)
    return _reading(lambda tick: evaluate(q, runs, ms, depth, progress=tick, read=opts))


def _set_memory(memory: str | None, ctx: typer.Context | None = None) -> None:
    """``--memory``: the engines' budget (:mod:`irscale.scales.budget`), checked and set
    for this process and the workers it starts."""
    if memory is not None:
        from irscale.scales.budget import ENV, parse_size

        parse_size(memory, "--memory")
        before = os.environ.get(ENV)
        os.environ[ENV] = memory
        if ctx is not None:  # the command's own budget: an in-process caller's later calls keep theirs
            ctx.call_on_close(lambda: os.environ.pop(ENV) if before is None else os.environ.update({ENV: before}))


def _judge(qrels, runs, opts: "ReadOptions", plan=None):
    """Read the qrels, run ``plan(levels, values)`` (checks that must fail before the runs
    are read: measure names, rank-map engines; ``values``: the grades of real-valued
    levels, else None), then read and judge the runs."""
    from irscale.data import grade_scale
    from irscale.experiment import load_runs

    warnings.showwarning = _show_warning
    q = opts.qrels(qrels)
    if plan is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the scale warnings come once, when the runs are judged
            levels = grade_scale(q, opts.max_grade) + 1
        plan(levels, q.values)
    return _reading(lambda tick: load_runs(runs, q, progress=tick, read=opts))


def _check_layout(fmt, trec_eval: bool) -> None:
    """--trec-eval is a layout of its own: with --format csv/tsv/json it is refused, not ignored."""
    if trec_eval and fmt is not Format.table:
        raise IrscaleError(
            f"--trec-eval prints trec_eval's own layout (tab-separated: measure, topic, value), so "
            f"it takes no --format {fmt.value}; drop one of them"
        )


def _print(table, per_topic, fmt, trec_eval=False):
    from rich.console import Console

    from irscale.report import tables

    out = sys.stdout
    if trec_eval:
        out.write(tables.trec_eval_text(table, per_topic))
    elif fmt is Format.table:
        rt = tables.rich_table(table, per_topic)
        width = Console(width=10_000).measure(rt).maximum  # never truncate a name or a value
        Console(width=max(Console().width, width)).print(rt)
    elif fmt is Format.json:
        out.write(tables.as_json(table, per_topic) + "\n")
    else:
        out.write(tables.delimited(table, per_topic, "\t" if fmt is Format.tsv else ","))


@app.command()
def evaluate(
    qrels: Annotated[Path, typer.Argument(help="qrels file: qid iter docno grade (plain or .gz)")],
    runs: Annotated[list[str], typer.Argument(help="run files, directories of runs, or glob patterns")],
    measure: Annotated[
        Optional[list[str]],
        typer.Option(
            "--measure",
            "-m",
            help="measure, e.g. AP, P@10, nDCG@10, 'RBP(p=0.8)@30' (repeatable; "
            "default AP P@10 nDCG@10 RR Rprec bpref)",
        ),
    ] = None,
    per_topic: Annotated[bool, typer.Option("--per-topic", "-q", help="one row per topic as well")] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="output format")] = Format.table,
    trec_eval: Annotated[bool, typer.Option("--trec-eval", help="print trec_eval's own layout")] = False,
    depth: Annotated[
        Optional[int], typer.Option("--depth", "-M", min=1, help="keep the first N documents of each topic")
    ] = None,
    float32_scores: Float32Opt = False,
    missing_topics: MissingOpt = MissingTopicsOpt.zero,
    ignore_extra_fields: ExtraOpt = False,
    duplicates: DupOpt = DuplicatesOpt.error,
    split_tags: SplitOpt = False,
    skip_invalid: SkipOpt = False,
    max_grade: MaxGradeOpt = None,
    metadata: MetadataOpt = MetadataPolicy.error,
    integer_grades: IntegerGradesOpt = False,
    judged_only: JudgedOnlyOpt = False,
    rel_level: Annotated[
        Optional[str],
        typer.Option(
            "--rel-level",
            "-l",
            metavar="GRADE",
            help="trec_eval's -l: binary measures (P, R, AP, RR, bpref, ...) count grade >= "
            "this as relevant (an integer; a decimal like 0.5 or a fraction like 1/3 for real-valued "
            "grades); graded ones (nDCG, ERR, RBP) keep the grades",
        ),
    ] = None,
):
    """Score runs against qrels, exactly like trec_eval (its measure names work too: map, P_10, P.10,
    ndcg_cut.10,20, recall.100, P_10(rel=2))."""
    opts = ReadOpts(
        float32_scores,
        missing_topics,
        ignore_extra_fields,
        duplicates,
        split_tags,
        skip_invalid,
        max_grade,
        metadata,
        integer_grades,
        judged_only,
    )
    try:
        _check_layout(fmt, trec_eval)
        table = _evaluate(qrels, runs, measure, depth, opts, rel_level)
    except IrscaleError as e:
        _fail(e)
    _print(table, per_topic, fmt, trec_eval)


@app.command()
def demo(
    fmt: Annotated[Format, typer.Option("--format", "-f", help="output format")] = Format.table,
):
    """Evaluate the small synthetic collection shipped with irscale (no files needed)."""
    from importlib import resources

    root = resources.files("irscale") / "examples" / "toy"
    with resources.as_file(root) as path:
        err.print(f"[bold]irscale {__version__}[/] demo: synthetic collection in {path}")
        from irscale.experiment import transform as do_transform

        try:
            table = _evaluate(
                path / "qrels.txt",
                [str(path / "runs")],
                ["AP", "P@10", "nDCG@10", "RR", "RBP(p=0.8)@10", "ERR@10", "bpref"],
                None,
                ReadOpts(),
            )
            ranked = do_transform(table.judged, ["AP", "nDCG(base=2)", "RBP(p=0.8)", "RR"], 10, relevance="graded")
        except IrscaleError as e:
            _fail(e)
        _print(table, False, fmt)
        err.print(
            "[bold]interval scales[/] at N = 10: each measure and its ranked version (phi; guide: Interval scales); "
            "graded relevance (nDCG and RBP on the 3-level run space; --relevance lenient binarises)"
        )
        _print(ranked, False, fmt)


@app.command("measures")
def list_measures():
    """List the measures irscale knows: parameters with their meaning, graded, RB-dependent,
    and how their interval scale is computed."""
    from rich.console import Console

    from irscale.report.console import measures_table

    Console().print(measures_table())


class RelevanceOpt(str, Enum):
    graded = "graded"
    lenient = "lenient"


RelevanceArg = Annotated[
    Optional[RelevanceOpt],
    typer.Option(
        help="graded: graded measures on the graded run space; lenient: binarised qrels (grade >= 1 relevant), "
        "the 2021 paper's protocol for graded collections; default graded, with a note on graded qrels"
    ),
]


SAY_MEMORY = 64 << 20  # rank maps estimated to need at least this are named in the plan's memory line


def _say_memory(plans) -> None:
    """One line, before the runs are read, naming the rank maps that will take memory (each
    :class:`~irscale.plan.TransformPlan`'s measures: their engine's estimate,
    :attr:`irscale.plan.MeasurePlan.memory`; several plans: a study's --depths) and the
    budget; nothing where every map is small, cached or bounded."""
    from irscale.scales import budget

    big = []
    for plan in plans:
        seen = set()
        for p in plan.measures:
            if p.measure in seen:
                continue
            seen.add(p.measure)
            need = p.memory  # (None: nothing to build, or no estimate: the engine's own refusal comes with the map)
            if need is not None and need >= SAY_MEMORY:
                big.append(f"{p.measure} about {budget.size_text(need)} ({p.engine} engine)")
    if big:
        limit = budget.budget()
        _note(
            f"rank maps: {', '.join(big)}; memory budget {'none known' if limit is None else budget.size_text(limit)}"
        )


def _levels(levels: int, relevance) -> int:
    """Relevance levels the rank maps are checked for before the runs are read."""
    return 2 if relevance is not None and relevance.value == "lenient" else levels


class TiesOpt(str, Enum):
    unq = "unq"
    mid = "mid"
    min = "min"
    max = "max"


class EngineOpt(str, Enum):
    auto = "auto"
    closed = "closed"
    split = "split"  # type: ignore[assignment]  # shadows str.split (typer's choices need the str mixin); never called
    enumerate = "enumerate"
    dcg = "dcg"
    oracle = "oracle"


MaxPairsOpt = Annotated[
    Optional[int],
    typer.Option(
        "--max-pairs",
        min=1,
        help="let the split engine produce up to this many (prefix, suffix) pairs (default "
        "2^35 = 34359738368, about ten minutes on 2 cores; binary AP at N = 36 needs "
        "68719476736): memory stays bounded, the time grows with the pairs",
    ),
]
ApproxOpt = Annotated[
    Optional[float],
    typer.Option(
        "--approx",
        metavar="TOL",
        help="where no exact engine reaches N (RBP, DCG, nDCG at N = 100, 1000): rank by the "
        "midpoint of certified bounds on the normalised phi, at most TOL wide (e.g. 1e-4), "
        "with a half-width column (those columns are normalised: phi / the number of "
        "distinct values)",
    ),
]


@app.command()
def transform(
    ctx: typer.Context,
    qrels: Annotated[Path, typer.Argument(help="qrels file: qid iter docno grade (plain or .gz)")],
    runs: Annotated[list[str], typer.Argument(help="run files, directories of runs, or glob patterns")],
    measure: Annotated[
        Optional[list[str]],
        typer.Option(
            "--measure",
            "-m",
            help="measure without cutoff, e.g. AP, P, 'RBP(p=0.8)', 'nDCG(base=2)' (repeatable; default: AP P RR)",
        ),
    ] = None,
    N: Annotated[
        int,
        typer.Option(
            "-N", "--depth", min=1, help="run length N: runs are cut at N and padded with non-relevant documents"
        ),
    ] = 30,
    ties: Annotated[
        Optional[list[TiesOpt]],
        typer.Option(
            help="unq: ranks of distinct values (interval scale); min/max/mid: over all runs (analysis "
            "only); repeat for several ranked columns from one pass (--ties unq --ties mid)"
        ),
    ] = None,
    normalize: Annotated[
        bool,
        typer.Option(
            "--normalize", help="divide ranks by the number of distinct values (unq) or of runs (min/max/mid)"
        ),
    ] = False,
    per_topic: Annotated[bool, typer.Option("--per-topic", "-q", help="one row per topic as well")] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="output format")] = Format.table,
    trec_eval: Annotated[bool, typer.Option("--trec-eval", help="print trec_eval's own layout")] = False,
    float32_scores: Float32Opt = False,
    missing_topics: MissingOpt = MissingTopicsOpt.zero,
    ignore_extra_fields: ExtraOpt = False,
    duplicates: DupOpt = DuplicatesOpt.error,
    split_tags: SplitOpt = False,
    skip_invalid: SkipOpt = False,
    max_grade: MaxGradeOpt = None,
    metadata: MetadataOpt = MetadataPolicy.error,
    integer_grades: IntegerGradesOpt = False,
    judged_only: JudgedOnlyOpt = False,
    scheduler: Annotated[
        Optional[str],
        typer.Option(help="Dask scheduler address (tcp://host:8786) for building rank maps; default: local threads"),
    ] = None,
    relevance: RelevanceArg = None,
    approx: ApproxOpt = None,
    max_pairs: MaxPairsOpt = None,
    memory: MemoryOpt = None,
    residuals: Annotated[
        bool,
        typer.Option(
            "--residuals",
            help="for each RBP measure, its residual (rbp_resid: the weight of unjudged ranks and of those past "
            "the run) and phi at the residual's upper end (_hi: the unknown ranks at the top grade)",
        ),
    ] = False,
    run_out: Annotated[
        Optional[Path],
        typer.Option(
            "--run-out",
            metavar="DIR",
            help="also write each ranked column as a TREC run file in DIR (per topic, the systems ranked by it), "
            "with an ir_metadata header saying how it was made",
        ),
    ] = None,
):
    """Score runs and add the interval-scaled ("ranked") version of each measure at N."""
    from irscale.experiment import residual_measures
    from irscale.experiment import transform as do_transform
    from irscale.plan import plan_transform

    opts = ReadOpts(
        float32_scores,
        missing_topics,
        ignore_extra_fields,
        duplicates,
        split_tags,
        skip_invalid,
        max_grade,
        metadata,
        integer_grades,
        judged_only,
    )
    measures = measure or ["AP", "P", "RR"]
    try:
        _set_memory(memory, ctx)
        _check_layout(fmt, trec_eval)
        if run_out is not None:  # checked before any run is read
            writable_dir("--run-out", run_out)
        planned = []

        def plan(levels: int, values) -> None:  # before the runs are read: every refusal, the memory line
            planned.append(
                plan_transform(
                    measures,
                    N,
                    levels,
                    approx=approx,
                    max_pairs=max_pairs,
                    relevance=relevance and relevance.value,
                    values=values,
                )
            )
            residual_measures(planned[0], residuals)  # refused before the runs are read (no RBP, or bounded)
            _say_memory(planned)

        judged = _judge(qrels, runs, opts, plan=plan)
        with _Feedback("rank maps (cached after the first time)") as tick:

            def step(what, done, total):
                tick(done, total, what)

            strategies = [t.value for t in ties] if ties else ["unq"]
            out = do_transform(
                judged,
                planned[0],  # the plan made from the qrels: nothing is derived again
                ties=strategies if len(strategies) > 1 else strategies[0],
                normalize=normalize,
                scheduler=scheduler,
                steps=step,
                residuals=residuals,
            )
        if run_out is not None:
            from irscale.report.runs import write_runs

            out.provenance.update(_qrels_provenance(qrels, opts))  # the qrels file and its checksum, for the headers
            out.provenance.setdefault("score_precision", opts.score_precision)
            written = write_runs(out, run_out, command=_command_line())
    except IrscaleError as e:
        _fail(e)
    _print(out, per_topic, fmt, trec_eval)
    if run_out is not None:
        _note(f"wrote {len(written)} run file(s) with ir_metadata headers to {run_out}")
    if fmt is Format.table and not trec_eval:  # what the theory says about each original measure
        from rich.console import Console

        from irscale.report.console import theory_text
        from irscale.report.tables import theory_texts

        Console(width=max(Console().width, 160)).print(theory_text(theory_texts(out)), soft_wrap=True)


@app.command()
def rankmap(
    ctx: typer.Context,
    measure: Annotated[str, typer.Argument(help="measure without cutoff, e.g. AP, 'RBP(p=0.8)', 'DCG(base=2)'")],
    N: Annotated[int, typer.Option("-N", "--depth", min=1, help="run length N")] = 30,
    levels: Annotated[
        int, typer.Option(min=2, help="relevance degrees (2 = binary) for graded measures, at most 128")
    ] = 2,
    engine: Annotated[EngineOpt, typer.Option(help="engine (all exact); auto picks the fastest")] = EngineOpt.auto,
    show: Annotated[int, typer.Option(min=0, help="how many of the first and last values to print")] = 5,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="build afresh, do not read or write the cache")] = False,
    scheduler: Annotated[Optional[str], typer.Option(help="Dask scheduler address; default: local threads")] = None,
    max_pairs: MaxPairsOpt = None,
    memory: MemoryOpt = None,
):
    """Build the rank map of a measure at run length N: size, engine, time, values."""
    import time

    from irscale.scales import build
    from irscale.validate import levels as check_levels

    t = time.perf_counter()
    try:
        _set_memory(memory, ctx)
        check_levels(levels, "--levels")
        with _Feedback(f"rank map {measure} N={N}") as tick:
            rm = build(
                measure,
                N,
                levels,
                engine=engine.value,
                scheduler=scheduler,
                progress=tick,
                cache=not no_cache,
                max_pairs=max_pairs,
            )
    except IrscaleError as e:
        _fail(e)
    seconds = time.perf_counter() - t
    first = rm.values(first=show)
    last = rm.values(last=show)
    typer.echo(f"measure   {rm.measure} (RB-free core)")
    space_levels = rm.space.c + 1
    typer.echo(f"N         {rm.N}, {space_levels} relevance levels, {count_text(rm.n_runs, space_levels)} runs")
    typer.echo(f"size      {count_text(rm.size, space_levels)} distinct values")
    typer.echo(f"engine    {rm.engine}")
    _echo_memory(rm)
    built = f" (from the cache; built in {rm.seconds:.3f} s)" if rm.from_cache else ""
    typer.echo(f"time      {seconds:.3f} s{built}")
    if first is None or last is None:  # (both None: the counting engine)
        typer.echo("values    (the counting engine answers phi without listing the values)")
    else:
        typer.echo("first     " + " ".join(f"{v:.6g}" for v in first))
        typer.echo("last      " + " ".join(f"{v:.6g}" for v in last))


def _echo_memory(rm) -> None:
    """The engine's memory estimate and the budget (rankmap's output)."""
    from irscale.scales import budget
    from irscale.scales.rankmap import memory_estimate

    need = memory_estimate(rm.space, rm.engine, max_pairs=int(rm.space.n_runs))  # (built: its pairs were allowed)
    if need is not None:
        limit = budget.budget()
        shown = "none known" if limit is None else budget.size_text(limit)
        typer.echo(f"memory    about {budget.size_text(need)} to build (estimate); budget {shown}")


def _run_study(judged, measures, N, tests, alpha, mid, scheduler, relevance=None, extra=None):
    from irscale.study import compare as do_compare

    with _Feedback(f"study N={N}") as tick:
        return do_compare(
            judged,
            measures,
            N,
            tests,
            alpha,
            mid=mid,
            scheduler=scheduler,
            progress=lambda what, done, total: tick(done, total, what),
            relevance=relevance and relevance.value,
            **(extra or {}),
        )


@dataclass
class StudyOpts:
    """The report options of compare and study (one definition, one help text)."""

    correction: str = "none"
    across_measures: bool = False
    baseline: Optional[list] = None
    no_effects: bool = False
    no_measure_free: bool = False
    spacing: bool = False
    seed: int = 0

    def kwargs(self) -> dict:
        return dict(
            seed=self.seed,
            correction=self.correction,
            across_measures=self.across_measures,
            baselines=self.baseline or None,
            effects=not self.no_effects,
            measure_free=not self.no_measure_free,
        )


CorrectionOpt = Annotated[
    str,
    typer.Option(
        "--correction",
        help="multiple-comparison correction of each test's p-values over the system pairs: none (the "
        "paper), holm, bonferroni, bh (Benjamini-Hochberg)",
    ),
]
TestOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--test",
        "-t",
        help="sign, ranksum, signrank, ttest, anova1, kruskal, anova2, friedman (the paper's eight: 'paper', "
        "the default), permutation, rtukey, bootstrap (the randomised tests: 'randomised'); repeatable",
    ),
]
SeedOpt = Annotated[
    int,
    typer.Option("--seed", min=0, help="seed of the bootstrap intervals and of the randomised tests' draws"),
]
AcrossOpt = Annotated[bool, typer.Option("--across-measures", help="correct over all measures' pairs together")]
BaselineOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--baseline",
        "-b",
        help="compare every system with this run (repeatable): differences with bootstrap CIs, "
        "effect sizes, raw and corrected p-values",
    ),
]
NoEffectsOpt = Annotated[bool, typer.Option("--no-effects", help="skip each system's mean with its bootstrap CI")]
NoFreeOpt = Annotated[bool, typer.Option("--no-measure-free", help="skip the measure-free (weak order) view")]
SpacingOpt = Annotated[
    bool,
    typer.Option(
        "--spacing", help="add spacing plots of every measure from its rank map to the report (seconds per measure)"
    ),
]
FiguresOpt = Annotated[
    bool,
    typer.Option(
        "--figures/--no-figures",
        help="with --out: draw the report's figures (the two tau heatmaps, the significance "
        "changes, the means original vs ranked, the ASL curves), embedded in the HTML and written as SVG "
        "and PDF files beside it (about 3 s)",
    ),
]


def _report_figures(study, figures: bool, spacing: bool):
    """The report's figures (drawn only for --out; --no-figures skips them: bench/report.py
    measures what they cost, at most 3 s on the T08 study)."""
    if not (figures or spacing):
        return []
    from irscale.report.figures import study_figures

    with _Feedback("figures") as tick:
        tick(0, 1, "")
        return study_figures(study, spacing=spacing, others=figures)


def _command_line() -> str:
    """The command as the user typed it (for the report's provenance)."""
    import shlex
    import sys

    return shlex.join(["irscale", *sys.argv[1:]])


def _wide_console(tables):
    """A console at least 160 columns wide, wider where a table needs it (measure names
    such as RBP(p=0.8,rel=1)@30 as column heads), so no number is cut to '1.0…'."""
    from rich.console import Console

    con = Console(width=max(Console().width, 160))
    wide = con.options.update_width(10_000)  # the table's natural width, not capped by the console's
    need = max((con.measure(t, options=wide).maximum for t in tables), default=0)
    return Console(width=max(con.width, need)) if need > con.width else con


def _show_study(study, out, figures=None):
    from irscale.report.console import study_tables, study_theory, theory_text

    tables = study_tables(study)
    con = _wide_console(tables)
    for t in tables:
        con.print(t)
    con.print(theory_text(study_theory(study)), soft_wrap=True)
    if out:
        if callable(figures):
            figures = figures()
        files = study.write(out, figures=figures)  # every path written: HTML, Markdown, YAML, CSV, JSON, LaTeX
        drawn = f"; {len(figures)} figure{'s' if len(figures) > 1 else ''} as SVG and PDF files" if figures else ""
        _note(
            f"wrote {len(files)} files to {out} (open report_N{study.N}.html; report_N{study.N}.md "
            f"links the rest{drawn})"
        )


@app.command()
def compare(
    ctx: typer.Context,
    qrels: Annotated[Path, typer.Argument(help="qrels file: qid iter docno grade (plain or .gz)")],
    runs: Annotated[list[str], typer.Argument(help="run files, directories of runs, or glob patterns")],
    measure: Annotated[
        Optional[list[str]],
        typer.Option(
            "--measure", "-m", help="measures (repeatable; a cutoff, if given, must be N; default: the paper's eleven)"
        ),
    ] = None,
    N: Annotated[int, typer.Option("-N", "--depth", min=1, help="run length N")] = 30,
    test: TestOpt = None,
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0, help="significance level")] = 0.05,
    no_mid: Annotated[bool, typer.Option("--no-mid", help="skip the mid tie strategy (Table 3)")] = False,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            help="write the report into this directory: one self-contained HTML file (report_N<N>.html), "
            "Markdown, LaTeX tables, CSV and JSON, the per-topic scores (scores_N<N>.csv) and the "
            "provenance",
        ),
    ] = None,
    float32_scores: Float32Opt = False,
    missing_topics: MissingOpt = MissingTopicsOpt.zero,
    ignore_extra_fields: ExtraOpt = False,
    duplicates: DupOpt = DuplicatesOpt.error,
    split_tags: SplitOpt = False,
    skip_invalid: SkipOpt = False,
    max_grade: MaxGradeOpt = None,
    metadata: MetadataOpt = MetadataPolicy.error,
    integer_grades: IntegerGradesOpt = False,
    judged_only: JudgedOnlyOpt = False,
    scheduler: Annotated[Optional[str], typer.Option(help="Dask scheduler address for rank maps")] = None,
    relevance: RelevanceArg = None,
    correction: CorrectionOpt = "none",
    across_measures: AcrossOpt = False,
    baseline: BaselineOpt = None,
    seed: SeedOpt = 0,
    no_effects: NoEffectsOpt = False,
    no_measure_free: NoFreeOpt = False,
    figures: FiguresOpt = True,
    spacing: SpacingOpt = False,
    approx: ApproxOpt = None,
    max_pairs: MaxPairsOpt = None,
    memory: MemoryOpt = None,
):
    """Original vs interval-scaled measures: correlations and significance tests (paper Section 7), with
    corrections, effect sizes, confidence intervals and the measure-free view; --out writes the report."""
    from irscale.experiment import PAPER_MEASURES

    opts = ReadOpts(
        float32_scores,
        missing_topics,
        ignore_extra_fields,
        duplicates,
        split_tags,
        skip_invalid,
        max_grade,
        metadata,
        integer_grades,
        judged_only,
    )
    report = StudyOpts(correction, across_measures, baseline, no_effects, no_measure_free, spacing, seed)
    measures = measure or list(PAPER_MEASURES)
    tests = test or _all_tests()
    try:
        _set_memory(memory, ctx)
        tests = _check_tests(tests)
        _check_correction(correction)
        from irscale.study import plan_study

        plan = plan_study(
            measures,
            N,
            tests,
            alpha,
            mid=not no_mid,
            relevance=relevance and relevance.value,
            approx=approx,
            max_pairs=max_pairs,
            **report.kwargs(),
        )  # every option, before any file
        _check_out(out)

        def check(levels, values):  # before the runs are read: the plan bound to the qrels, the memory line
            nonlocal plan
            plan = plan.bind(levels, values)
            _say_memory([plan.transform])

        judged = _judge(qrels, runs, opts, plan=check)
        study = _run_study(judged, measures, N, tests, alpha, not no_mid, scheduler, relevance, {"plan": plan})
        study.provenance.setdefault("command", _command_line())
        study.provenance.update(_qrels_provenance(qrels, opts))
        _show_study(study, out, figures=lambda: _report_figures(study, figures, spacing))
    except IrscaleError as e:
        _fail(e)


class TableFormat(str, Enum):
    latex = "latex"
    markdown = "markdown"
    html = "html"
    csv = "csv"


class TableScale(str, Enum):
    both = "both"
    original = "original"
    ranked = "ranked"


@app.command("table")
def paper_table(
    study_dir: Annotated[Path, typer.Argument(help="the --out directory of irscale compare (or irscale study)")],
    measure: Annotated[
        Optional[list[str]],
        typer.Option(
            "--measure", "-m", help="measures as the study names them, the cutoff may be left out (default: all)"
        ),
    ] = None,
    systems: Annotated[
        Optional[str], typer.Option("--systems", help="the rows: comma-separated system names (default: all)")
    ] = None,
    top: Annotated[
        Optional[int], typer.Option("--top", min=1, help="the K systems with the highest mean of --by")
    ] = None,
    by: Annotated[
        Optional[str],
        typer.Option("--by", help="the measure --top ranks by (default: the first -m), first scale shown"),
    ] = None,
    scale: Annotated[
        TableScale, typer.Option("--scale", help="original, ranked or both side by side")
    ] = TableScale.both,
    test: Annotated[
        Optional[str],
        typer.Option("--test", "-t", help="the test of the marks (default: the study's t-test, else its first test)"),
    ] = None,
    correction: Annotated[
        Optional[str],
        typer.Option("--correction", help="none, holm, bonferroni, bh (default: the study's)"),
    ] = None,
    baseline: Annotated[
        Optional[str],
        typer.Option("--baseline", "-b", help="mark significantly better/worse than this system (default: letters)"),
    ] = None,
    fmt: Annotated[
        TableFormat, typer.Option("--format", "-f", help="latex, markdown, html or csv")
    ] = TableFormat.latex,
    decimals: Annotated[int, typer.Option("--decimals", min=0, max=12, help="decimals of the means shown")] = 3,
    N: Annotated[
        Optional[int], typer.Option("-N", "--depth", help="which run length, where the directory has several")
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="write the table to this file (default: stdout)")
    ] = None,
):
    """The table that goes into the paper, from a written study (nothing recomputed but the
    one test of the marks, on the study's own per-topic scores): the chosen measures' means,
    original and ranked side by side, best in bold, marks from one test against a baseline or
    ranx-style letters, and a dagger where a conclusion is not meaningful."""
    from irscale.study import read_study

    try:
        study = read_study(study_dir, N)
        chosen = None if systems is None else [s for s in systems.split(",") if s.strip()]
        if systems is not None and not chosen:
            raise ArgumentError("--systems names no system: give a comma-separated list, e.g. --systems a,b,c")
        table = study.table(measure, chosen, top, by, scale.value, test, correction, baseline, decimals)
        text = table.render(fmt.value)
        if out is None:
            sys.stdout.write(text)
            return

        writable_dir("out", out.parent if str(out.parent) else Path("."), create=True)
        out.write_text(text, encoding="utf-8")
        n, m = len(table.systems), len(table.measures)
        _note(f"wrote {out} ({fmt.value}, {n} system{'s' * (n != 1)}, {m} measure{'s' * (m != 1)})")
    except IrscaleError as e:
        _fail(e)


def _qrels_provenance(qrels, opts: "ReadOptions | None" = None) -> dict:
    """The qrels file and its checksum; with ``--integer-grades``, that its grades were read
    as their integer parts (the file alone does not say so)."""
    from irscale.study import qrels_provenance

    out = qrels_provenance(qrels)
    if opts is not None and opts.integer_grades:
        out["integer_grades"] = True
    return out


def _check_out(out) -> None:
    """--out can be written (checked before any run is read: a study is minutes of work)."""
    if out is not None:
        writable_dir("--out", out)


def _check_correction(correction):
    from irscale.effects import CORRECTIONS

    check_choice("--correction", correction, CORRECTIONS)


def _all_tests():
    from irscale.stats import TESTS

    return list(TESTS)


def _check_tests(tests) -> list[str]:
    """The tests named with -t (groups expanded), checked before any data is read."""
    from irscale.stats import expand_tests

    return list(expand_tests(tests, "--test"))


study_app = typer.Typer(help="Whole experiments in one command.", no_args_is_help=True)
app.add_typer(study_app, name="study")


@study_app.command("trec8-like")
def study_trec8_like(
    ctx: typer.Context,
    qrels: Annotated[Path, typer.Argument(help="qrels file")],
    runs: Annotated[list[str], typer.Argument(help="run directory, files or glob")],
    depths: Annotated[str, typer.Option("--depths", help="run lengths, comma-separated")] = "5,10,20,30",
    test: TestOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="write every table and reports here")] = None,
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0, help="significance level")] = 0.05,
    float32_scores: Float32Opt = False,
    missing_topics: MissingOpt = MissingTopicsOpt.zero,
    ignore_extra_fields: ExtraOpt = False,
    duplicates: DupOpt = DuplicatesOpt.error,
    split_tags: SplitOpt = False,
    skip_invalid: SkipOpt = False,
    max_grade: MaxGradeOpt = None,
    metadata: MetadataOpt = MetadataPolicy.error,
    integer_grades: IntegerGradesOpt = False,
    judged_only: JudgedOnlyOpt = False,
    relevance: RelevanceArg = None,
    correction: CorrectionOpt = "none",
    across_measures: AcrossOpt = False,
    baseline: BaselineOpt = None,
    seed: SeedOpt = 0,
    no_effects: NoEffectsOpt = False,
    no_measure_free: NoFreeOpt = False,
    figures: FiguresOpt = True,
    spacing: SpacingOpt = False,
    memory: MemoryOpt = None,
):
    """The whole experiment of Ferrante, Ferro & Fuhr (2021) on one campaign: the eleven
    measures at each N (Table 2 rows, Table 3, Table 4, Tables 5/6). Every (measure, N)
    is checked before the runs are read; with --out, each N's tables are written as soon
    as that N is finished, so a failure later loses only the part that failed."""
    from irscale.experiment import PAPER_MEASURES
    from irscale.report import console as report
    from irscale.report.files import write_index, write_tau_tables

    opts = ReadOpts(
        float32_scores,
        missing_topics,
        ignore_extra_fields,
        duplicates,
        split_tags,
        skip_invalid,
        max_grade,
        metadata,
        integer_grades,
        judged_only,
    )
    Ns = _depths(depths)
    measures = list(PAPER_MEASURES)
    extra = StudyOpts(correction, across_measures, baseline, no_effects, no_measure_free, spacing, seed).kwargs()
    try:
        _set_memory(memory, ctx)
        tests = _check_tests(test or _all_tests())
        _check_correction(correction)
        _check_out(out)
        from irscale.study import plan_study

        plans = {  # every option of each N's study, checked before any file is read
            N: plan_study(measures, N, tests, alpha, mid=True, relevance=relevance and relevance.value, **extra)
            for N in Ns
        }

        def plan(levels: int, values) -> None:  # bound to the qrels before the runs are read: planned once
            planned = _study_plan(measures, Ns, _levels(levels, relevance), relevance and relevance.value, values)
            plans.update({N: dataclasses.replace(plans[N], transform=planned[N]) for N in Ns})

        judged = _judge(qrels, runs, opts, plan=plan)
    except IrscaleError as e:
        _fail(e)
    studies = []
    with _OnceOverN() as once:  # each "not meaningful" warning once, for every N it holds at
        for N in Ns:
            try:
                st = _run_study(judged, measures, N, tests, alpha, True, None, relevance, {**extra, "plan": plans[N]})
                st.provenance.setdefault("command", _command_line())
                st.provenance.update(_qrels_provenance(qrels, opts))
                studies.append(st)
                if out:
                    files = st.write(out, figures=_report_figures(st, figures, spacing))
                    files += write_tau_tables(studies, out)  # Tables 2 and 3 over the N done so far (CSV, LaTeX)
                    files.append(write_index(studies, out))  # index.html: each N's report, Tables 2 and 3 over N
                    _note(
                        f"N = {N}: wrote {len(files)} files to {out} (open index.html: it links the report of "
                        f"each N and shows Tables 2 and 3 over N = {', '.join(str(x.N) for x in studies)})"
                    )
            except IrscaleError as e:
                once.flush()  # the warnings of the N done, before the error
                if studies and out:
                    _note(f"finished N = {', '.join(str(x.N) for x in studies)} (written to {out}); N = {N} failed")
                _fail(e)
    tables = report.tau_tables(studies)
    con = _wide_console(tables)
    for t in tables:
        con.print(t)
    _show_study(studies[-1], None)


def _depths(depths: str) -> list[int]:
    """The run lengths of ``--depths`` (positive integers separated by commas); else the refusal."""
    try:
        Ns = [int(x) for x in depths.split(",") if x.strip()]
        if not Ns or min(Ns) < 1:
            raise ValueError
    except ValueError:
        _fail(
            IrscaleError(
                f"--depths must be positive integers separated by commas (for example 5,10,20,30), not {depths!r}"
            )
        )
    return Ns


def _study_plan(measures, Ns, levels: int, relevance, values=None) -> dict:
    """Every (measure, N) of a study has an exact engine, checked before the runs are read;
    else one refusal naming every N and measure out of reach, advising only what `study`
    has (--depths, --relevance, --max-grade: not compare's --approx or --max-pairs)."""
    from irscale.measures import parse_measures
    from irscale.plan import plan_transform
    from irscale.scales.rankmap import exact_reach

    bad, planned = {}, {}
    for N in Ns:
        try:
            planned[N] = plan_transform(measures, N, levels, relevance=relevance, values=values)
        except IrscaleError:
            bad[N] = [
                m
                for m in parse_measures(measures, default_cutoff=N)
                if exact_reach(m.for_grades(values), levels - 1, N + 1) < N
            ]
    if bad:
        names = list(dict.fromkeys(str(m).split("@")[0] for ms in bad.values() for m in ms))
        reach = min(exact_reach(m.for_grades(values), levels - 1, min(bad) + 1) for ms in bad.values() for m in ms)
        graded = " (or binary relevance: --relevance lenient)" if levels > 2 else ""
        raise IrscaleError(
            f"--depths: no exact engine ranks {', '.join(names)} at N = {', '.join(map(str, bad))} "
            f"on {levels} relevance levels; the study's measures are exact together up to N = "
            f"{reach}: use --depths with N of at most {reach}{graded}"
        )
    _say_memory(planned.values())
    return planned


class OrderOpt(str, Enum):
    all = "all"
    strong = "strong"
    weak = "weak"
    set = "set"
    induced = "induced"


def _load_user_measure(spec: str):
    """``module:function`` -> the function (a user measure f(runs, c) -> values)."""
    import importlib

    mod, _, fn = spec.partition(":")
    try:
        return getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise IrscaleError(
            f"cannot load user measure {spec!r} ({e}); give it as module:function with the "
            "module importable (on PYTHONPATH)"
        ) from None


@app.command()
def inspect(
    measure: Annotated[
        str, typer.Argument(help="a measure name ('AP', 'RBP(p=0.8)') or a user function module:function")
    ],
    N: Annotated[int, typer.Option("-N", "--depth", min=1, max=16, help="run length (all runs are enumerated)")] = 10,
    levels: Annotated[int, typer.Option(min=2, max=5, help="relevance degrees (2 = binary)")] = 2,
    order: Annotated[OrderOpt, typer.Option(help="order(s) to check the scale against")] = OrderOpt.all,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write PNG and SVG pictures here")] = None,
    theory: Annotated[
        bool,
        typer.Option(
            "--theory",
            help="only what the 2019/2021 papers say about the measure "
            "(the order under which it is interval, ordinal or neither), checked "
            "over every run, with counterexample runs",
        ),
    ] = False,
):
    """On which scale is a measure, and why? Orders, swap/replacement, balancing, pictures."""
    from rich.console import Console

    from irscale import inspect as ins
    from irscale.report.inspect import theory_check_text, verdict_table

    try:
        target = _load_user_measure(measure) if ":" in measure and "(" not in measure else measure
        if levels > 2 and levels**N > 3**10:
            raise IrscaleError(
                f"{levels} levels and N={N} make {count_text(levels**N, levels)} runs; use N <= 10 for graded checks"
            )
        if theory:
            if not isinstance(target, str):
                raise IrscaleError(
                    f"the papers make no statement about a user function ({measure}); drop --theory "
                    "for the checks of its scale"
                )
            check = ins.verify_theory(target, N, levels)
            Console(width=max(Console().width, 120)).print(theory_check_text(check), soft_wrap=True)
            return
        fn = ins.as_measure(target, N, levels - 1)
        orders = list(ins.ORDERS) if order is OrderOpt.all else [order.value]
        verdicts = []
        for o in orders:
            verdicts.append(ins.is_ordinal(fn, o, N, levels))
            try:
                verdicts.append(ins.is_interval(fn, o, N, levels))
            except IrscaleError as e:
                err.print(f"[yellow]interval ({o}): {_plain(e)}[/]")
        verdicts.append(ins.swap_holds(fn, N, levels))
        verdicts.append(ins.replacement_holds(fn, N, levels))
        b = ins.balancing_index(fn, N, 1, levels - 1, levels)
        summary = ins.intervalness(fn, N, levels)
    except IrscaleError as e:
        _fail(e)
    con = Console(width=max(Console().width, 120))
    con.print(verdict_table(fn.name, N, levels, verdicts, b, summary))
    if isinstance(target, str):  # what the papers say (irscale inspect MEASURE --theory checks it)
        from irscale.report.inspect import theory_line

        said = ins.theory_statement(target, N, levels)
        if said is not None:
            con.print(theory_line(said), soft_wrap=True)
    if plot:
        from irscale.report import figures as plots

        files = plots.spacing_plot([target], sorted({min(N, 5), N}), plot, levels)
        if N <= 6:
            files += plots.hasse_diagram(N, plot, measure=target, levels=levels)
        files += plots.balancing_plot([target], [n for n in (2, 5, 10, 20, 50, 100) if n <= max(N, 100)], plot)
        _note(f"wrote {', '.join(str(f) for f in files)}")


cache_app = typer.Typer(help="The on-disk cache of rank maps.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
def cache_info_cmd():
    """Where the cache is and what it holds."""
    from irscale.report.console import cache_listing
    from irscale.scales import cache_info

    try:
        info = cache_info()
    except IrscaleError as e:
        _fail(e)
    typer.echo(cache_listing(info))


@cache_app.command("clear")
def cache_clear_cmd():
    """Remove every cached rank map and bounds table."""
    from irscale.scales import cache_clear

    try:
        n = cache_clear()
    except IrscaleError as e:
        _fail(e)
    typer.echo(f"removed {n} cache {'entry' if n == 1 else 'entries'} (rank maps and bounds tables)")


@app.command()
def version():
    """Print irscale's version."""
    typer.echo(__version__)


def main():
    """The console script. ``irscale version`` is answered before typer builds the
    command (typer 0.29 loads pydantic to build any verb's parameters: 0.25 s)."""
    if sys.argv[1:] in (["version"], ["--version"]):
        print(__version__)
        return
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
