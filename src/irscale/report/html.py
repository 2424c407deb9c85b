"""One self-contained HTML file of a study's report (a pure renderer: study to text).

Inline CSS, figures inline as SVG text, no script: the page loads nothing from anywhere (a
Content-Security-Policy says so to the browser, which then refuses any stray request).
Every table has its title, caption and an explanation of each column under it; the page
explains what "meaningful" means, lists what the theory says about each measure and shows
the provenance as YAML. On screen no table hides a column at 1280 px (a narrower window
scrolls a wide table sideways in its box); printed, the page is landscape and every table
whole (every row, its header row on each page). :func:`html_index` is the page that links
the reports of a study over several run lengths and shows Tables 2 and 3 across them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from irscale._version import __version__
from irscale.report.study import (
    MEANINGFUL,
    MISSING,
    ReportTable,
    best_cells,
    cell_parts,
    group_title,
    provenance_yaml,
    report_tables,
    row_dicts,
    summary_line,
    theory_lines,
)

if TYPE_CHECKING:
    from irscale.study import Study

__all__ = ["CSP", "CSS", "html_index", "html_report", "html_table", "INDEX", "inline_svg", "link_index", "SCROLL_ROWS"]


SCROLL_ROWS = 30  # tables longer than this scroll inside a box of their own

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root { --ink: #1d2329; --muted: #59636e; --line: #d0d7de; --shade: #eceff2; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; line-height: 1.45;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header, main { max-width: 1240px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.6em; margin: 0 0 .3em; }
h2 { font-size: 1.25em; margin: 1.8em 0 .3em; border-bottom: 1px solid var(--line); padding-bottom: .2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 .3em; }
p.summary { margin: .2em 0 .6em; }
p.caption, p.files, p.note { color: var(--muted); margin: .3em 0; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
            font-size: .9em; }
nav ol { columns: 2; margin: .4em 0 1em; padding-left: 1.4em; }
nav a, p.files a { color: var(--accent); }
.box { overflow: auto; border: 1px solid var(--line); border-radius: 4px; margin: .6em 0; }
.box.tall { max-height: 34em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; width: auto; min-width: 100%;
        font-size: .9em; }
th, td { padding: 3px 6px; border-bottom: 1px solid #e6e9ec; text-align: left; }
td.n, td.c { white-space: nowrap; }
td.wrap { white-space: normal; }  /* a value and its CI: the CI may go under it where the table needs the room */
.ci { color: var(--muted); font-weight: 400; white-space: nowrap; }
thead th { position: sticky; top: 0; background: #f6f8fa; border-bottom: 2px solid var(--line);
           white-space: normal; vertical-align: bottom; }
td.n, th.n { text-align: right; }
td.c, th.c { text-align: center; }
tr.group th { background: #fafbfc; font-style: italic; font-weight: 600; border-top: 1px solid var(--line); }
tr.shade td { background: var(--shade); }
td.no { color: #b35900; font-weight: 600; }
sup { color: #8250df; font-weight: 600; }
dl.columns { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: .5em 0 1em;
             font-size: .92em; }
dl.columns dt { font-weight: 600; }
dl.columns dd { margin: 0; color: var(--muted); }
.legend { font-size: .92em; }
.meaning { background: #f6f8fa; border-left: 4px solid var(--accent); padding: .6em 1em; }
figure { margin: 1em 0; border: 1px solid var(--line); border-radius: 4px; padding: 10px; }
figure svg { max-width: 100%; height: auto; display: block; margin: 0 auto; }
figcaption { color: var(--muted); margin-top: .4em; }
figure h3 { margin-top: 0; }
pre.yaml { background: #f6f8fa; border: 1px solid var(--line); border-radius: 4px; padding: 10px 14px; overflow: auto;
           max-height: 40em; }
.bar { display: inline-block; height: .8em; background: var(--accent); vertical-align: middle; margin-left: 6px; }
footer { max-width: 1240px; margin: 2em auto; padding: 0 24px; color: var(--muted); font-size: .9em; }
p.up { margin: 0 0 .4em; }
p.up a, table a { color: var(--accent); }
@page { size: landscape; margin: 12mm 10mm; }
@media print {
  body { font-size: 10pt; }
  header, main, footer { max-width: none; padding: 0; }
  nav ol { columns: 3; }
  h2 { margin-top: 1.2em; }
  /* not h3: inside a figure it let the figure split */
  h2, section.table > p.caption, section.table > p.files, tr.group { break-after: avoid; }
  .box, .box.tall { max-height: none; overflow: visible; border: 0; border-radius: 0; }
  table { font-size: 8.5pt; }
  th, td { padding: 2px 5px; }
  td { vertical-align: top; }
  thead { display: table-header-group; }
  thead th { position: static; }
  tr, figure, dl.columns dt, dl.columns dd, .meaning { break-inside: avoid; }
  tr.shade td, thead th, tr.group th, .bar, .meaning { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  pre.yaml { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
  p.up { display: none; }
  figure svg { max-height: 150mm; width: auto; }
}
"""


def _num(text: str) -> str:
    """A number with a real minus sign."""
    return "−" + text[1:] if text.startswith("-") else text


def _num_all(text: str) -> str:
    """Every number's minus sign in ``text`` a real one ([-0.1000, 0.2000])."""
    return re.sub(r"(?<![\w.])-(?=\d)", "−", text)


def html_table(table: ReportTable, link: str | None = None) -> str:
    """``table`` as an HTML section: heading, caption, links to its files (``link``: their
    stem), the table (groups as header rows, numbers right-aligned, best bold, marks as
    superscripts, shaded rows), its column explanations, legend and notes."""
    cols = [c for c in table.shown if c.key not in table.group]
    rows = row_dicts(table)
    best = best_cells(table)
    out = [
        f'<section id="{escape(table.key)}" class="table">',
        f"<h2>{escape(table.heading)}</h2>",
        f'<p class="caption">{escape(table.caption)}</p>',
    ]
    if link:
        out.append(
            '<p class="files">Files: '
            + " · ".join(f'<a href="{escape(link)}.{e}">{escape(link)}.{e}</a>' for e in table.exts)
            + "</p>"
        )
    head = "".join(f'<th class="{_cls(c.kind)}" title="{escape(c.explain)}">{escape(c.head)}</th>' for c in cols)
    body, last = [], None
    for i, r in enumerate(rows):
        if table.group:
            g = tuple(str(r.get(k)) for k in table.group)
            if g != last:
                body.append(f'<tr class="group"><th colspan="{len(cols)}">{escape(group_title(table, r))}</th></tr>')
                last = g
        shade = table.shade and bool(r.get(table.shade))
        cells = []
        for c in cols:
            value, rest = cell_parts(table, c, r)
            text = value + rest
            cls = [_cls(c.kind)]
            if c.key.startswith("meaningful") and text == "no":  # a statement that is not meaningful
                cls.append("no")
            if c.ci and rest:
                cls.append("wrap")
            if table.key == "measure_free_histogram" and c.key == "share_of_pairs" and text != MISSING:
                width = max(0.0, min(100.0, 100 * float(r.get(c.key) or 0)))
                text_html = f'{escape(text)}<span class="bar" style="width:{2 * width:.1f}px"></span>'
            else:
                text_html = escape(_num(value) if c.numeric else value)
                if (i, c.key) in best:
                    text_html = f"<strong>{text_html}</strong>"
                mark = table.marks.get((i, c.key))
                if mark:
                    text_html += f"<sup>{escape(mark)}</sup>"
                if rest:
                    rest = _num_all(rest.strip()) if c.numeric else rest.strip()
                    text_html += f' <span class="ci">{escape(rest)}</span>'

            cells.append(f'<td class="{" ".join(x for x in cls if x)}">{text_html}</td>')
        body.append(('<tr class="shade">' if shade else "<tr>") + "".join(cells) + "</tr>")
    tall = " tall" if len(rows) > SCROLL_ROWS else ""
    out += [f'<div class="box{tall}"><table><thead><tr>{head}</tr></thead><tbody>', *body, "</tbody></table></div>"]
    out.append(
        '<dl class="columns">'
        + "".join(f"<dt>{escape(c.head)}</dt><dd>{escape(c.explain)}</dd>" for c in cols)
        + "</dl>"
    )
    notes = []  # HTML
    if table.group:
        notes.append(
            escape(
                "Rows are grouped by "
                + ", ".join(table.column(k).head.lower() for k in table.group)
                + " (the italic header rows)."
            )
        )
    if table.shade:
        notes.append("Shaded rows: tests assuming only an ordinal scale (grey in the paper).")
    notes += [f"<sup>{escape(s)}</sup> {escape(t)}." for s, t in table.legend]
    notes += [escape(x) for x in table.notes]
    if table.truncated:
        notes.append(escape(table.truncated))
    out += [f'<p class="note">{n}</p>' for n in notes]
    out.append("</section>")
    return "\n".join(out)


def _cls(kind: str) -> str:
    return (
        "n"
        if kind in ("int", "float", "pct", "signed_pct", "p", "share", "sci")
        else "c"
        if kind in ("bool", "assumes")
        else ""
    )


_ID = re.compile(r'\bid="([^"]+)"')


def inline_svg(svg: str, prefix: str) -> str:
    """SVG text made fit to sit inside an HTML page: the XML declaration, DOCTYPE and any
    script removed, every ``id`` (and each reference to it) prefixed with ``prefix`` so that
    two figures never share one."""
    svg = re.sub(r"<\?xml[^>]*\?>", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>", "", svg, flags=re.IGNORECASE)
    svg = re.sub(r"<script\b.*?</script\s*>", "", svg, flags=re.IGNORECASE | re.DOTALL)
    ids = set(_ID.findall(svg))
    if ids:
        pattern = re.compile(
            r'(\bid="|url\(#|href="#)('
            + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
            + r')(?=[")])'
        )
        svg = pattern.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)
    return svg.strip()


def _head(title: str) -> list[str]:
    """A page's start, up to and including ``<body>``: the CSP, the inline style sheet, the title."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="irscale {escape(__version__)}">',
        f"<title>{escape(title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
    ]


def _foot() -> list[str]:
    return [
        f"<footer>Written by irscale {escape(__version__)}. This page loads nothing from the network.</footer>",
        "</body>",
        "</html>",
        "",
    ]


INDEX = "index.html"  # the page that links the reports of a study over several run lengths


def _up(index: str) -> str:
    """The link from a report back to its index page (the first line of its header)."""
    return f'<p class="up"><a href="{escape(index)}">↑ Every run length of this study ({escape(index)})</a></p>'


def link_index(page: str, index: str = INDEX) -> str:
    """The text ``page`` of a report (:func:`html_report`) with the link back to ``index``
    that ``html_report(..., index=index)`` would have written; unchanged if it has one."""
    if 'class="up"' in page or "<header>" not in page:
        return page
    return page.replace("<header>", f"<header>\n{_up(index)}", 1)


def html_report(
    study: Study,
    figures: Sequence | None = None,
    command: str | None = None,
    links: dict | None = None,
    tables: list | None = None,
    index: str | None = None,
) -> str:
    """The study as one self-contained HTML page: what it covers (and the command), what
    “meaningful” means, every table (:func:`irscale.report.study.report_tables`) with its
    columns explained, what the theory says about each measure, the figures
    (``[(title, svg_text, caption)]``, inline) and the provenance as YAML. ``links`` maps a
    table's key to the stem of its files, to link them; ``index``: the file name of an index
    page (:func:`html_index`) to link back to.

    Printed (``@media print``), the page is laid out landscape, every table whole (no scroll
    box, every row, the header row repeated on each page, no row cut by a page break)."""
    tables = report_tables(study) if tables is None else tables  # (report_tables(study), if made)
    figures = list(figures or ())
    said = theory_lines(study)
    title = f"irscale study: original vs interval-scaled measures, N = {study.N}"
    toc = [("meaningful", "What “meaningful” means")] + [(t.key, t.heading) for t in tables]
    if said:
        toc.append(("theory", "What the theory says about each measure"))
    if figures:
        toc.append(("figures", "Figures"))
    toc.append(("provenance", "Provenance"))
    parts = _head(title) + _header(study, title, command, toc, index) + ["<main>"] + _meaning_section()
    parts += [html_table(t, (links or {}).get(t.key)) for t in tables]
    parts += _theory_section(said) if said else []
    parts += _figures_section(figures, (links or {}).get("figures"))
    parts += _provenance_section(study, command, links) + ["</main>", *_foot()]
    return "\n".join(parts)


def _header(study: Study, title: str, command: str | None, toc: list[tuple[str, str]], index: str | None) -> list[str]:
    """The page's header: the way back to the index, the title, what the study covers,
    the command, and the contents."""
    parts = [
        "<header>",
        *([_up(index)] if index else []),
        f"<h1>{escape(title)}</h1>",
        f'<p class="summary">{escape(summary_line(study))}</p>',
    ]
    if command:
        parts.append(f'<p class="summary">Command: <code>{escape(command)}</code></p>')
    return (
        parts
        + ["<nav><strong>Contents</strong><ol>"]
        + [f'<li><a href="#{escape(k)}">{escape(v)}</a></li>' for k, v in toc]
        + ["</ol></nav>", "</header>"]
    )


def _meaning_section() -> list[str]:
    """What "meaningful" means, and which columns say it."""
    return [
        '<section id="meaningful">',
        "<h2>What “meaningful” means</h2>",
        f'<p class="meaning">{escape(MEANINGFUL)}</p>',
        "<p>The columns <em>Meaningful</em> below say, for each statement, whether it is meaningful in this "
        "sense; <em>Scale assumed</em> says which scale a test needs; <em>Recall-base dependent</em> marks "
        "the measures whose scale changes from topic to topic.</p>",
        "</section>",
    ]


def _theory_section(said: list[str]) -> list[str]:
    """What the theory says about each measure (one line each)."""
    return (
        [
            '<section id="theory">',
            "<h2>What the theory says about each measure</h2>",
            "<p>The order under which each original measure is an interval or ordinal scale (or none): the "
            "2019 and 2021 papers' statement where they make one (<code>irscale inspect MEASURE --theory</code> "
            "checks it over every run), else irscale's exhaustive check of the measure's own values.</p>",
            "<ul>",
        ]
        + [f"<li>{escape(s)}</li>" for s in said]
        + ["</ul>", "</section>"]
    )


def _figures_section(figures: list, files: list | None) -> list[str]:
    """The figures inline, each with its files; or how to draw them where none were."""
    if not figures:
        return [
            '<section id="figures">',
            "<h2>Figures</h2>",
            "<p>Not drawn: <code>irscale compare ... --out DIR</code> without <code>--no-figures</code> draws "
            "Kendall's τ heatmaps, the significance changes and the means original vs ranked (about 3 s), "
            "and <code>--spacing</code> adds the spacing of every measure's values over all runs from its rank "
            "map (the paper's Figures 3-5); from Python, "
            "<code>irscale.report.figures.study_figures(study)</code> gives them for "
            "<code>study.write(out, figures=...)</code>.</p>",
            "</section>",
        ]
    parts = ['<section id="figures">', "<h2>Figures</h2>"]
    for k, ((ftitle, svg, caption), names) in enumerate(zip(figures, files or [[] for _ in figures]), 1):
        parts += [
            f'<figure id="figure-{k}">',
            f"<h3>Figure {k}: {escape(str(ftitle))}</h3>",
            inline_svg(str(svg), f"fig{k}-"),
            f"<figcaption>{escape(str(caption))}</figcaption>",
        ]
        if names:
            parts.append(
                '<p class="files">Files: '
                + " · ".join(f'<a href="{escape(n)}">{escape(n)}</a>' for n in names)
                + "</p>"
            )
        parts.append("</figure>")
    return parts + ["</section>"]


def _provenance_section(study: Study, command: str | None, links: dict | None) -> list[str]:
    """The provenance as YAML, with a link to its file."""
    return [
        '<section id="provenance">',
        "<h2>Provenance</h2>",
        "<p>Everything the study recorded about how it was made, as YAML in the style of ir_metadata.</p>",
        *(
            [
                f'<p class="files">File: <a href="{escape(links["provenance"])}.yaml">'
                f"{escape(links['provenance'])}.yaml</a></p>"
            ]
            if links and "provenance" in links
            else []
        ),
        f'<pre class="yaml"><code>{escape(provenance_yaml(study, command))}</code></pre>',
        "</section>",
    ]


def html_index(
    entries: Sequence[tuple[int, str, str]], tau_tables: Sequence[ReportTable] = (), command: str | None = None
) -> str:
    """The index page of a study over several run lengths N, self-contained like
    :func:`html_report` (same style sheet and CSP): a link to each N's report
    (``entries``: ``[(N, file name of its HTML report, its one-line summary)]``) and the
    tables across run lengths (``tau_tables``: :func:`irscale.report.study.tau_report_tables`,
    each shown as in a report and linked to its files by its ``stem``)."""
    Ns = ", ".join(str(n) for n, _, _ in entries)
    title = f"irscale study: original vs interval-scaled measures, N = {Ns}"
    toc = [("reports", "The report of each run length")] + [(t.key, t.heading) for t in tau_tables]
    parts = _head(title) + [
        "<header>",
        f"<h1>{escape(title)}</h1>",
        '<p class="summary">One report per run length N, and the tables that compare the run lengths.</p>',
    ]
    if command:
        parts.append(f'<p class="summary">Command: <code>{escape(command)}</code></p>')
    parts += (
        ["<nav><strong>Contents</strong><ol>"]
        + [f'<li><a href="#{escape(k)}">{escape(v)}</a></li>' for k, v in toc]
        + ["</ol></nav>", "</header>", "<main>"]
    )
    parts += [
        '<section id="reports">',
        "<h2>The report of each run length</h2>",
        '<p class="caption">Each report holds every table of its run length with its columns explained, the '
        "figures and the provenance; its CSV, JSON and LaTeX files sit beside it.</p>",
        '<div class="box"><table><thead><tr><th class="n">N</th><th>Report</th><th>Study</th></tr></thead><tbody>',
    ]
    parts += [
        f'<tr><td class="n">{n}</td><td><a href="{escape(page)}">{escape(page)}</a></td><td>{escape(summary)}</td></tr>'
        for n, page, summary in entries
    ]
    parts += ["</tbody></table></div>", "</section>"]
    parts += [html_table(t, t.stem) for t in tau_tables]
    parts += ["</main>", *_foot()]
    return "\n".join(parts)
