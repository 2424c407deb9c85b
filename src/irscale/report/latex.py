"""LaTeX tables of a study's report (pure renderers: tables to text).

Each table is a ``table`` float that pastes into a paper with only ``\\usepackage{booktabs}``:
``\\toprule``/``\\midrule``/``\\bottomrule``, a caption in words and a ``\\label{tab:irscale-...}``,
numbers right-aligned with 4 decimals (percentages 2), yes/no for booleans, the best value
of a column in bold where "best" makes sense, significance marks as superscripts
(``$^{\\dagger}$``) with their legend, and a note under the table explaining every column.
Text is escaped (``\\ & % $ # _ { } ~ ^ < > |``) and the Unicode symbols the renderers use
(τ, Δ, φ, α, −, →, quotes, dashes) become LaTeX, so pdfLaTeX compiles it as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from irscale._version import __version__
from irscale.report.study import (
    MISSING,
    ReportTable,
    best_cells,
    cell_parts,
    group_title,
    row_dicts,
)

MAX_ROWS = 120  # the most body rows of one LaTeX table; the CSV holds all
PART_ROWS = 36  # lines per float (a page, with caption and notes); longer tables continue

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}", "|": r"\textbar{}"}
_UNICODE = {"τ_ap": r"$\tau_{ap}$", "τ": r"$\tau$", "φ": r"$\varphi$", "α": r"$\alpha$", "Δ": r"$\Delta$",
            "−": r"$-$", "→": r"$\rightarrow$", "∞": r"$\infty$", "·": r"$\cdot$", "×": r"$\times$", "≤": r"$\leq$",
            "≥": r"$\geq$", "“": "``", "”": "''",
            "‘": "`", "’": "'", "–": "--", "—": "---", "†": r"$\dagger$", "‡": r"$\ddagger$", "§": r"\S{}",
            "¶": r"\P{}", "‖": r"$\|$", "…": r"\ldots{}", "±": r"$\pm$", "≈": r"$\approx$", "\u00a0": "~"}
_MARKS = {"†": r"\dagger", "‡": r"\ddagger", "§": r"\S", "¶": r"\P", "‖": r"\|", "*": "*"}
_ESCAPE = re.compile("|".join(re.escape(k) for k in sorted({**_SPECIAL, **_UNICODE}, key=len, reverse=True)))


def latex_escape(text) -> str:
    """``text`` safe in LaTeX text mode: special characters escaped, the Unicode symbols of
    the reports as LaTeX commands."""
    return _ESCAPE.sub(lambda m: _SPECIAL.get(m.group(0)) or _UNICODE[m.group(0)], str(text))


def _mark(symbols: str) -> str:
    """Superscript significance marks: ``†‡`` -> ``$^{\\dagger\\ddagger}$``."""
    if not symbols:
        return ""
    body = "".join(_MARKS.get(ch, latex_escape(ch)) for ch in symbols)
    return f"$^{{{body}}}$"


def _number(text: str) -> str:
    """A number's cell text: escaped, with a real minus sign."""
    if text == MISSING:
        return "--"
    neg = text.startswith("-")
    body = latex_escape(text[1:] if neg else text)
    return ("$-$" if neg else "") + body


def _group_line(n: int, title: str) -> str:
    return rf"\multicolumn{{{n}}}{{@{{}}l}}{{\textit{{{title}}}}} \\"


def _rest(rest: str, numeric: bool) -> str:
    """What follows a value ([CI], (share)): escaped, minus signs of numbers as $-$."""
    text = latex_escape(rest)
    return re.sub(r"(?<![\w.])-(?=\d)", "$-$", text) if numeric else text


def _align(kind: str) -> str:
    return "r" if kind in ("int", "float", "pct", "signed_pct", "p", "share", "sci") else \
        "c" if kind in ("bool", "assumes") else "l"


def latex_table(table: ReportTable, max_rows: int = MAX_ROWS, part_rows: int = PART_ROWS,
                placement: str = "tbp") -> str:
    """``table`` as a LaTeX ``table`` float (booktabs), its groups as italic header rows,
    at most ``max_rows`` body rows (a note says how many the CSV holds), every column
    explained in a note under it. A table longer than ``part_rows`` lines continues in
    further floats with the same number (``Table 5 (continued)``)."""
    cols = [c for c in table.shown if c.key not in table.group]
    rows = row_dicts(table)
    shown = min(len(rows), max_rows if table.max_rows is None else min(max_rows, table.max_rows))
    best = best_cells(table)
    n = len(cols)
    body: list[tuple[bool, str, str | None]] = []  # (is a group header, line, its group's title)
    last, title_now = None, None
    for i, r in enumerate(rows[:shown]):
        if table.group:
            g = tuple(str(r.get(k)) for k in table.group)
            if g != last:
                title_now = latex_escape(group_title(table, r))
                body.append((True, _group_line(n, title_now), title_now))
                last = g
        cells = []
        for c in cols:
            value, rest = cell_parts(table, c, r)
            cell = _number(value) if c.numeric else latex_escape(value)
            if (i, c.key) in best:
                cell = rf"\textbf{{{cell}}}"
            cells.append(cell + _mark(table.marks.get((i, c.key), "")) + _rest(rest, c.numeric))
        body.append((False, " & ".join(cells) + r" \\", title_now))
    parts: list[list[tuple[bool, str]]] = []
    cur: list[tuple[bool, str]] = []
    for is_group, line, group in body:
        if len(cur) >= part_rows:
            carry = [cur.pop()] if cur[-1][0] and not is_group else []  # no group header left alone
            parts.append(cur)
            cur = carry
            if not carry and not is_group and group is not None:  # a group goes on in the next part
                cur.append((True, _group_line(n, group + " (continued)")))
        cur.append((is_group, line))
    parts.append(cur)
    notes = ["\\textit{Columns.} " + "; ".join(
        f"\\textbf{{{c.latex if c.latex else latex_escape(c.head)}}}: {latex_escape(c.explain.rstrip('.'))}"
        for c in cols) + "."]
    if table.group:
        notes.append("Rows are grouped by " + ", ".join(latex_escape(table.column(k).head.lower())
                                                         for k in table.group) + " (italic rows).")
    notes += [f"{_mark(s)} {latex_escape(t)}." for s, t in table.legend]
    notes += [latex_escape(x) for x in table.notes]
    if shown < len(table.frame):
        notes.append(latex_escape(f"The first {shown:,} of {len(table.frame):,} rows are shown; "
                                  f"{table.stem}.csv holds them all."))
    title = latex_escape(table.title)
    head = " & ".join(c.latex if c.latex else latex_escape(c.head) for c in cols) + r" \\"
    lines = [f"% irscale {__version__}: {title}".replace("\n", " "), r"% needs \usepackage{booktabs} in the preamble"]
    for k, part in enumerate(parts):
        lines += [rf"\begin{{table}}[{placement}]", r"\centering"]
        if n > 6:
            lines.append(r"\small")
        if k == 0:
            lines += [rf"\caption[{title}]{{{title}. {latex_escape(table.caption)}}}", rf"\label{{{table.label}}}"]
        else:  # the same number as the first part
            lines += [r"\addtocounter{table}{-1}", rf"\caption[]{{{title} (continued)}}"]
        lines += [rf"\begin{{tabular}}{{{''.join(_align(c.kind) for c in cols)}}}", r"\toprule", head, r"\midrule"]
        for j, (is_group, line) in enumerate(part):
            if is_group and j > 0:
                lines.append(r"\addlinespace")
            lines.append(line)
        lines += [r"\bottomrule", r"\end{tabular}"]
        if k == len(parts) - 1:
            lines += [r"\par\smallskip", r"\begin{minipage}{\linewidth}\footnotesize", *notes, r"\end{minipage}"]
        else:
            lines += [r"\par\smallskip", r"{\footnotesize Continued in the next table.}"]
        lines += [r"\end{table}"]
    return "\n".join(lines) + "\n"


def latex_document_tables(tables: Iterable[ReportTable]) -> dict[str, str]:
    """``{file stem: LaTeX}``: tables sharing a stem (Tables 5 and 6; the measure-free
    summary's parts) go into one file, one float each."""
    out: dict[str, list[str]] = {}
    for t in tables:
        out.setdefault(t.stem, []).append(latex_table(t))
    return {stem: "\n".join(parts) for stem, parts in out.items()}


def latex_standalone(tables: Iterable[ReportTable]) -> str:
    """A complete LaTeX document of ``tables`` (article class, booktabs): for checking that
    the tables compile, or for a quick PDF."""
    body = "\n".join(latex_table(t) for t in tables)
    return "\n".join([r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{booktabs}",
                      r"\usepackage[margin=2cm]{geometry}", r"\begin{document}", body, r"\end{document}", ""])
