"""The files of a study's report: :func:`write_report` (HTML, Markdown, LaTeX, CSV/JSON,
YAML provenance and the figures of one study), :func:`write_tau_tables` and
:func:`write_index` (a study over several run lengths). The renderers they call
(:mod:`irscale.report.study` for the tables, :mod:`irscale.report.html`,
:mod:`irscale.report.latex`) know nothing of files; this module is the one that writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from irscale.report.study import (
    ReportTable,
    _frame_table,
    canonical_names,
    changes_table,
    data_frame,
    measure_free_table,
    provenance_yaml,
    report_tables,
    study_markdown,
    summary_line,
    table_json,
    tau_report_tables,
)
from irscale.validate import writable_dir

if TYPE_CHECKING:
    from irscale.study import Study


# -- LaTeX (compatibility) -------------------------------------------------------------------------


__all__ = ["latex_table", "write_index", "write_report", "write_study", "write_tau_tables"]


def latex_table(table: ReportTable | pd.DataFrame, caption: str | None = None) -> str:
    """A LaTeX table (booktabs): see :func:`irscale.report.latex.latex_table`. A plain data
    frame is shown as it is with ``caption``."""
    from irscale.report.latex import latex_table as render

    if isinstance(table, pd.DataFrame):
        table = _frame_table(table, caption or "")
    return render(table)


def _figures(figures) -> list[tuple[str, str, str]]:
    out = []
    for f in figures or ():
        if hasattr(f, "figure") and hasattr(f, "svg"):  # a Picture (irscale.report.figures)
            f = f.figure()
        if len(f) != 3:
            raise ValueError("each figure is a Picture or a (title, svg_text, caption) triple")
        out.append((str(f[0]), str(f[1]), str(f[2])))
    return out


def _figure_files(figures, tag: str) -> list[list[tuple[str, bytes | str]]]:
    """For each figure, ``[(file name, content)]`` of the files written beside the report:
    figure k's SVG and (where the Picture has one) PDF as ``figure<k>_<stem>_<tag>.svg/.pdf``
    (k: its number in the HTML report), then the same of each of its parts
    (``Picture.parts``, each for a column: the means and ASL panels, tau blocks, groups of tests) as
    ``figure<k>_<part stem>_<tag>.svg/.pdf``; a bare (title, svg, caption) triple gives
    ``figure<k>_<tag>.svg``."""

    def files(k: int, f) -> list[tuple[str, bytes | str]]:
        stem = f"figure{k}_{f.stem}" if getattr(f, "stem", "") else f"figure{k}"  # k: its number in the HTML
        out: list[tuple[str, bytes | str]] = [(f"{stem}_{tag}.svg", f.svg if hasattr(f, "svg") else str(f[1]))]
        if getattr(f, "pdf", None):
            out.append((f"{stem}_{tag}.pdf", f.pdf))
        return out

    out = []
    for k, f in enumerate(figures or (), 1):
        own = files(k, f)
        for part in getattr(f, "parts", ()) or ():
            own += files(k, part)
        names = [name for name, _ in own]
        if len(set(names)) != len(names):
            raise ValueError(f"figure {k} and its parts would write one file twice: {sorted(names)}")
        out.append(own)
    return out


def write_report(
    study: Study, out: str | Path, figures: Sequence | None = None, command: str | None = None
) -> list[Path]:
    r"""Write the whole report of ``study`` into directory ``out`` (created if missing) and
    return every path written, in order:

    * ``report_N<N>.html``: one self-contained HTML file (inline CSS, figures inline as
      SVG; no script, font, image or style sheet loaded from anywhere);
    * ``report_N<N>.md``: the same tables in Markdown, linking the files below;
    * ``provenance_N<N>.yaml``: the provenance (ir_metadata style);
    * ``scores_N<N>.csv``: the per-topic scores every table rests on (``Study.scores``:
      measure, system, topic, value, ranked, ranked_mid, halfwidth), at full precision;
    * ``asl_curves_N<N>.csv``: the ASL curves of the discriminative power table
      (``Study.asl``: measure, test, scale, percent, asl);
    * for each table, ``<stem>_N<N>.csv`` and ``.json`` (exact values plus ``*_display``
      columns) and ``.tex`` (booktabs): the means, Tables 2/3, Table 4, Tables 5 and 6 (one
      CSV, both LaTeX tables in one ``.tex``), the comparisons with baselines; the
      measure-free comparison as ``measure_free_pairs`` (CSV only: every pair) and
      ``measure_free_summary_N<N>.tex``.

    * ``report_N<N>.tex``: a whole LaTeX document (article class) inputting every table and
      the figures' PDFs, for ``pdflatex`` (:func:`irscale.report.latex.latex_report`);
    * each figure as its own file: ``figure<k>_<stem>_N<N>.svg`` and, for a figure drawn with
      ``pdf=True`` (:func:`irscale.report.figures.study_figures` does), ``.pdf``
      for ``\includegraphics``; the HTML and Markdown reports list them under each figure.

    ``figures``: :class:`irscale.report.figures.Picture` objects or ``(title, svg_text,
    caption)`` triples, embedded in the HTML report; ``command``: the command line that ran
    the study, shown in the reports and the provenance."""
    from irscale.report.html import html_report

    # an existing file, a read-only place: one IrscaleError, before any file
    out = writable_dir("out", out, create=True)
    tag = f"N{study.N}"
    figure_files = _figure_files(figures, tag)
    widths = [getattr(f, "print_width_in", None) for f in figures or ()]  # inches each is drawn for print
    figures = _figures(figures)
    written: list[Path] = []

    def put(name: str, text: str) -> None:
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)

    tables = report_tables(study)
    for name, text in _data_files(study, tables, tag):
        put(name, text)
    for name, text in _latex_files(study, tables, tag, _latex_figures(figure_files, figures, widths)):
        put(name, text)
    links: dict[str, object] = {t.key: f"{t.stem}_{tag}" for t in tables}  # file stems; "figures": one list each
    links["provenance"] = f"provenance_{tag}"
    for name, content in (file for files in figure_files for file in files):
        path = out / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    links["figures"] = [[name for name, _ in files] for files in figure_files]
    scores = getattr(study, "scores", None)
    if isinstance(scores, pd.DataFrame):  # the per-topic scores every table rests on (full precision)
        put(f"scores_{tag}.csv", scores.to_csv(index=False))
        links["scores"] = f"scores_{tag}"
    asl = getattr(study, "asl", None)
    if isinstance(asl, pd.DataFrame) and len(asl):  # the ASL curves, sampled: measure, test, scale, percent, asl
        put(f"asl_curves_{tag}.csv", asl.assign(measure=asl["measure"].map(canonical_names(study))).to_csv(index=False))
        links["asl_curves"] = f"asl_curves_{tag}"
    put(f"provenance_{tag}.yaml", provenance_yaml(study, command))
    put(f"report_{tag}.md", study_markdown(study, links, figures, command, tables=tables))
    html = out / f"report_{tag}.html"
    html.write_text(html_report(study, figures, command, links, tables=tables), encoding="utf-8")
    return [html] + written


def _data_files(study: Study, tables: list[ReportTable], tag: str) -> Iterator[tuple[str, str]]:
    """The report's CSV and JSON files, one at a time as (name, text): the tables that have
    files, Tables 5 and 6 in one, and every measure-free pair (CSV only)."""
    own = {t.key: t for t in tables if t.files}
    data_tables = [
        own.get("means"),
        own.get("table2"),
        own.get("table4"),
        changes_table(study),
        own.get("power"),
        own.get("pairs"),
        measure_free_table(study),
    ]
    for t in (t for t in data_tables if t is not None):
        stem = f"{t.stem}_{tag}"
        frame = data_frame(t)
        yield f"{stem}.csv", frame.to_csv(index=False)
        if t.key != "measure_free":  # every system pair (8,256 on TREC-8): the CSV only, JSON would double it
            yield f"{stem}.json", table_json(t, study.provenance, frame)


def _latex_files(study: Study, tables: list[ReportTable], tag: str, figures) -> Iterator[tuple[str, str]]:
    """The report's LaTeX files, one at a time as (name, text): each table's ``.tex`` and the
    whole document ``report_N<N>.tex`` (``figures``: :func:`_latex_figures`)."""
    from irscale.report.latex import latex_document_tables, latex_report
    from irscale.report.latex import latex_table as latex_table_text

    texts = [latex_table_text(t) for t in tables]  # rendered once: the tables' files and report_N<N>.tex
    for stem, text in latex_document_tables(tables, texts=texts).items():
        yield f"{stem}_{tag}.tex", text
    yield f"report_{tag}.tex", latex_report(tables, figures, title=f"irscale report (N = {study.N})", texts=texts)


def _latex_figures(figure_files, figures, widths=()) -> list[tuple[str, str, float | None]]:
    """``(PDF file name, caption, print width in inches or None)`` of each figure written as
    a PDF, for ``report_N<N>.tex``: the figure's own PDF (``figure_files``' first file is its
    SVG), never one of its parts'."""
    out = []
    widths = list(widths) + [None] * (len(figures) - len(widths))
    for files, (title, _, caption), width in zip(figure_files, figures, widths):
        own = files[0][0].removesuffix(".svg") + ".pdf"
        if any(name == own for name, _ in files):
            out.append((own, f"{title}. {caption}" if caption else title, width))
    return out


def write_study(
    study: Study, out: str | Path, figures: Sequence | None = None, command: str | None = None
) -> list[Path]:
    """The same as :func:`write_report` (its former name)."""
    return write_report(study, out, figures, command)


def write_tau_tables(studies: Sequence[Study], out: str | Path) -> list[Path]:
    """:func:`tau_tables` as ``table2_tau_unq.csv`` and ``table3_tau_mid.csv`` (exact
    values and ``*_display`` columns) with their LaTeX tables (``.tex``) in ``out``.
    Returns the files written."""
    from irscale.report.latex import latex_table as render

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for t in tau_report_tables(studies):
        for path, text in (
            (out / f"{t.stem}.csv", data_frame(t).to_csv(index=False)),
            (out / f"{t.stem}.tex", render(t)),
        ):
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def write_index(studies: Sequence[Study], out: str | Path, command: str | None = None) -> Path:
    """``index.html`` in ``out``: one self-contained page
    (:func:`irscale.report.html.html_index`) linking each study's ``report_N<N>.html`` and
    showing Tables 2 and 3 over the run lengths (:func:`tau_report_tables`, linked to the
    ``.csv`` and ``.tex`` files that :func:`write_tau_tables` writes). Each of those reports
    already in ``out`` gets a link back to the index. ``command``: shown on the page (default:
    the last study's provenance ``command``). Returns the path written."""
    from irscale.report.html import INDEX, html_index, link_index

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if command is None and studies:
        command = studies[-1].provenance.get("command")
    entries = [(st.N, f"report_N{st.N}.html", summary_line(st)) for st in studies]
    for _, name, _ in entries:
        page = out / name
        if page.exists():
            text = page.read_text(encoding="utf-8")
            linked = link_index(text, INDEX)
            if linked != text:
                page.write_text(linked, encoding="utf-8")
    path = out / INDEX
    path.write_text(html_index(entries, tau_report_tables(studies), command), encoding="utf-8")
    return path
