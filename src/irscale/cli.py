"""The ``irscale`` command line: the only layer that prints or exits.

An :class:`~irscale.errors.IrscaleError` becomes one red line on stderr and exit code 2;
warnings are yellow lines on stderr; results go to stdout.
"""

from __future__ import annotations

import sys
import warnings
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from irscale import __version__
from irscale.errors import IrscaleError, IrscaleWarning

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Measurement-theoretic evaluation of IR systems (trec_eval-exact scores, "
                       "interval scales, meaningful statistics).")
err = Console(stderr=True, highlight=False)


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


def _fail(e: IrscaleError) -> None:
    err.print(f"[bold red]error:[/] {e}", markup=True, soft_wrap=True)
    raise typer.Exit(2)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    if issubclass(category, IrscaleWarning):
        err.print(f"[yellow]warning:[/] {message}", soft_wrap=True)
    else:
        err.print(f"warning: {category.__name__}: {message}", soft_wrap=True)


def _progress():
    return Progress(TextColumn("reading runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("{task.description}"), console=err, transient=True,
                    auto_refresh=False)  # no refresh thread: the readers may then fork worker processes


def _evaluate_and_print(qrels, runs, measures, per_topic, fmt, trec_eval, depth, float32, missing,
                        ignore_extra, duplicates):
    from irscale.experiment import DEFAULT_MEASURES, evaluate
    from irscale.report import tables

    warnings.showwarning = _show_warning
    try:
        with _progress() as bar:
            task = bar.add_task("", total=None)

            def tick(done, total, name):
                bar.update(task, completed=done, total=total, description=name)
                bar.refresh()

            table = evaluate(qrels, runs, measures or DEFAULT_MEASURES, depth,
                             missing_topics=missing.value, score_precision="float32" if float32 else "float64",
                             extra_fields="ignore" if ignore_extra else "error",
                             duplicates=duplicates.value, progress=tick)
    except IrscaleError as e:
        _fail(e)
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
    measure: Annotated[Optional[list[str]], typer.Option(
        "--measure", "-m", help="measure, e.g. AP, P@10, nDCG@10, 'RBP(p=0.8)@30' (repeatable; "
                                "default AP P@10 nDCG@10 RR Rprec bpref)")] = None,
    per_topic: Annotated[bool, typer.Option("--per-topic", "-q", help="one row per topic as well")] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="output format")] = Format.table,
    trec_eval: Annotated[bool, typer.Option("--trec-eval", help="print trec_eval's own layout")] = False,
    depth: Annotated[Optional[int], typer.Option("--depth", "-M", min=1,
                                                 help="keep the first N documents of each topic")] = None,
    float32_scores: Annotated[bool, typer.Option(
        "--float32-scores", help="round scores to float32 before ordering (trec_eval <= 9.0.8, pytrec_eval)")] = False,
    missing_topics: Annotated[MissingTopicsOpt, typer.Option(
        help="qrels topics a run lacks: score 0 (like trec_eval -c), drop from that run, or error")] = MissingTopicsOpt.zero,
    ignore_extra_fields: Annotated[bool, typer.Option(
        "--ignore-extra-fields", help="accept run lines with more than 6 fields (ignore the rest, like trec_eval)")] = False,
    duplicates: Annotated[DuplicatesOpt, typer.Option(
        help="a docno retrieved twice for a topic: error, or keep the first line")] = DuplicatesOpt.error,
):
    """Score runs against qrels, exactly like trec_eval."""
    _evaluate_and_print(qrels, runs, measure, per_topic, fmt, trec_eval, depth, float32_scores,
                        missing_topics, ignore_extra_fields, duplicates)


@app.command()
def demo(
    fmt: Annotated[Format, typer.Option("--format", "-f", help="output format")] = Format.table,
):
    """Evaluate the small synthetic collection shipped with irscale (no files needed)."""
    root = resources.files("irscale") / "examples" / "toy"
    with resources.as_file(root) as path:
        err.print(f"[bold]irscale {__version__}[/] demo: synthetic collection in {path}")
        _evaluate_and_print(path / "qrels.txt", [str(path / "runs")],
                            ["AP", "P@10", "nDCG@10", "RR", "RBP(p=0.8)@10", "ERR@10", "bpref"],
                            False, fmt, False, None, False, MissingTopicsOpt.zero, False, DuplicatesOpt.error)


@app.command("measures")
def list_measures():
    """List the measures irscale knows, with their parameters."""
    import dataclasses

    from rich.table import Table

    from irscale.measures import REGISTRY

    t = Table("name", "parameters (default)", "graded", "RB", "summary")
    for name, cls in sorted(REGISTRY.items(), key=lambda kv: kv[0].lower()):
        params = ", ".join(f"{f.name}={f.default!r}" for f in dataclasses.fields(cls))
        doc = (cls.__doc__ or "").strip().split("\n")[0]
        t.add_row(name, params, "yes" if cls.graded else "", "yes" if cls.needs_recall_base else "", doc)
    Console().print(t)


@app.command()
def version():
    """Print irscale's version."""
    typer.echo(__version__)


def main():  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
