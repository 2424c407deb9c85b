r"""LaTeX tables of a study's report (pure renderers: tables to text).

Each table is a ``table`` float that pastes into a paper with only ``\usepackage{booktabs}``:
``\toprule``/``\midrule``/``\bottomrule``, a caption in words and a ``\label{tab:irscale-...}``,
numbers right-aligned with 4 decimals (percentages 2), yes/no for booleans, the best value
of a column in bold where "best" makes sense, significance marks as superscripts
(``$^{\dagger}$``) with their legend, and a note under the table explaining every column.
Text is escaped (``\ & % $ # _ { } ~ ^ < > |``) and the Unicode symbols the renderers use
(τ, Δ, φ, α, −, →, quotes, dashes) become LaTeX, so pdfLaTeX compiles it as it is.

Every table fits the width it is made for (``width`` of :func:`latex_table`): the text of the
standard ``article`` class (345pt, the default) or a column of a two-column paper (229.5pt),
or any width in pt. Widths are estimated from the fonts' metrics (:func:`tex_width`); a table
too wide is set smaller, with its headers on several lines, its intervals under their values,
or in column parts one under the other that repeat the key columns; a long one continues in
further floats with the same number, none taller than a page. :func:`latex_report` is a whole
document of a report's tables and figures.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from itertools import combinations

from irscale._version import __version__
from irscale.report.study import (
    MISSING,
    ReportTable,
    best_cells,
    cell_parts,
    group_title,
    row_dicts,
)

__all__ = [
    "latex_document_tables",
    "latex_escape",
    "latex_report",
    "latex_standalone",
    "latex_table",
    "MAX_ROWS",
    "PAGE_HEIGHT",
    "paper_number",
    "PART_ROWS",
    "tex_width",
    "WIDTHS",
]


MAX_ROWS: int | None = None  # the most body rows of one LaTeX table (None: every row, in continued floats)
PART_ROWS = 36  # lines per float (a page, with caption and notes); longer tables continue

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_UNICODE = {
    "τ_ap": r"$\tau_{ap}$",
    "τ": r"$\tau$",
    "φ": r"$\varphi$",
    "α": r"$\alpha$",
    "Δ": r"$\Delta$",
    "−": r"$-$",
    "→": r"$\rightarrow$",
    "∞": r"$\infty$",
    "·": r"$\cdot$",
    "×": r"$\times$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "“": "``",
    "”": "''",
    "‘": "`",
    "’": "'",
    "–": "--",
    "—": "---",
    "†": r"$\dagger$",
    "‡": r"$\ddagger$",
    "§": r"\S{}",
    "¶": r"\P{}",
    "‖": r"$\|$",
    "…": r"\ldots{}",
    "±": r"$\pm$",
    "≈": r"$\approx$",
    "\u00a0": "~",
}
_MARKS = {"†": r"\dagger", "‡": r"\ddagger", "§": r"\S", "¶": r"\P", "‖": r"\|", "*": "*"}
_ESCAPE = re.compile("|".join(re.escape(k) for k in sorted({**_SPECIAL, **_UNICODE}, key=len, reverse=True)))


def latex_escape(text) -> str:
    """``text`` safe in LaTeX text mode: special characters escaped, the Unicode symbols of
    the reports as LaTeX commands."""
    return _ESCAPE.sub(lambda m: _SPECIAL.get(m.group(0)) or _UNICODE[m.group(0)], str(text))


def _mark(symbols: str) -> str:
    r"""Superscript significance marks: ``†‡`` -> ``$^{\dagger\ddagger}$``."""
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
    return (
        "r"
        if kind in ("int", "float", "pct", "signed_pct", "p", "share", "sci")
        else "c"
        if kind in ("bool", "assumes")
        else "l"
    )


# -- how wide and tall LaTeX text is (pdfLaTeX, the EC fonts of T1 at 10pt and smaller) ---------------

WIDTHS = {"onecolumn": 345.0, "twocolumn": 229.5}
"""Named targets (pt): ``onecolumn`` is ``\\textwidth`` of the standard ``article`` class at
10pt (letter or A4 paper; LNCS's 347pt too); ``twocolumn`` is ``\\columnwidth`` of
``\\documentclass[twocolumn]{article}`` (letter paper), narrower than acmart's 241pt and
IEEEtran's 252pt columns, so a table that fits it fits theirs."""
PAGE_HEIGHT = 550.0  # \textheight of article at 10pt (the lowest of the usual classes): no float is taller

# widths of the printable ASCII characters (33-126) in thousandths of the design size, from the TFM
# files of ecrm1000, ecbx1000 and ecti1000 (the T1 Computer Modern fonts pdfLaTeX uses with fontenc T1)
_ASCII = {
    "rm": "278 500 833 500 833 778 278 389 389 500 778 278 333 278 500 500 500 500 500 500 500 500 500 500 500 278 "
    "278 778 778 778 472 778 750 708 722 764 680 653 785 750 361 514 778 625 916 750 778 680 778 736 555 722 "
    "750 750 1028 750 750 611 278 500 278 611 778 278 500 555 444 555 444 305 500 555 278 305 528 278 833 555 "
    "500 555 528 392 394 389 555 528 722 528 528 444 500 278 500 611",
    "bx": "350 575 958 575 958 894 319 447 447 575 894 319 383 319 575 575 575 575 575 575 575 575 575 575 575 319 "
    "319 894 894 894 543 894 869 818 830 882 755 723 904 900 436 594 901 691 1091 900 864 786 864 862 639 800 "
    "885 869 1189 869 869 703 319 575 319 703 894 319 559 639 511 639 527 351 575 639 319 351 607 319 958 639 "
    "575 639 607 473 454 447 639 607 830 607 607 511 575 319 575 703",
    "it": "307 511 818 511 818 766 307 409 409 511 766 307 358 307 511 511 511 511 511 511 511 511 511 511 511 307 "
    "307 766 766 766 511 766 743 704 715 755 678 653 773 743 385 525 769 627 896 743 766 678 766 729 562 715 "
    "743 743 999 743 743 613 307 511 307 613 766 307 511 460 460 511 460 307 460 511 307 307 460 255 818 562 "
    "511 511 460 422 409 332 537 460 664 464 485 409 511 307 511 613",
}
_GLYPHS = {f: [int(x) for x in s.split()] for f, s in _ASCII.items()}
# math italic letters A-Z, a-z (cmmi10), italic correction included
_MATH_LETTERS = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        (
            int(x)
            for x in (
                "750 809 786 856 796 782 786 912 518 651 921 681 1079 912 791 781 791 767 671 723 792 806 "
                "1083 907 803 754 529 429 433 520 466 597 513 576 345 469 552 318 878 600 485 503 482 479 "
                "469 361 572 521 743 572 526 509"
            ).split()
        ),
    )
)
_SPACE = {"rm": 333, "bx": 383, "it": 358}  # the interword space
# symbols (cmsy, cmmi, cmr; text dashes and quotes) in thousandths of the size; anything else counts 1000
_SYMBOLS = {
    "τ": 550,
    "φ": 654,
    "α": 640,
    "Δ": 833,
    "−": 778,
    "→": 1000,
    "∞": 1000,
    "·": 278,
    "×": 778,
    "≤": 778,
    "≥": 778,
    "“": 500,
    "”": 500,
    "‘": 278,
    "’": 278,
    "–": 500,
    "—": 1000,
    "†": 444,
    "‡": 444,
    "§": 444,
    "¶": 611,
    "‖": 500,
    "…": 1000,
    "±": 778,
    "≈": 778,
    "\\": 500,
    "~": 500,
    "^": 500,
    "<": 778,
    ">": 778,
    "|": 278,
    "\u00a0": 333,
}
_MACROS = {
    "tau": "τ",
    "varphi": "φ",
    "alpha": "α",
    "Delta": "Δ",
    "rightarrow": "→",
    "infty": "∞",
    "cdot": "·",
    "times": "×",
    "leq": "≤",
    "geq": "≥",
    "dagger": "†",
    "ddagger": "‡",
    "S": "§",
    "P": "¶",
    "ldots": "…",
    "pm": "±",
    "approx": "≈",
    "textbackslash": "\\",
    "textasciitilde": "~",
    "textasciicircum": "^",
    "textless": "<",
    "textgreater": ">",
    "textbar": "|",
}
# the EC fonts are drawn wider at small sizes than a scaled 10pt font: the width factor per size (pt)
_OPTICAL = {10: 1.0, 9: 1.0275, 8: 1.0622, 7: 1.1386, 6: 1.2219, 5: 1.3608}
_SCRIPT = {10: 7, 9: 6, 8: 6}  # the size of superscripts and subscripts
_TOKEN = re.compile(r"\\[a-zA-Z]+ ?|\\.|---|--|``|''|[{}$^_~]|.", re.S)


@functools.lru_cache(maxsize=1 << 16)
def tex_width(src: str, size: int = 10) -> float:
    r"""The width in pt of ``src``, one line of the LaTeX these renderers write (text, ``\textbf``,
    ``\textit``, inline math with symbols, superscripts and subscripts), set at ``size`` pt
    in pdfLaTeX's T1 Computer Modern: from the fonts' metrics, within a few percent."""
    total = 0.0
    stack = [("rm", size, False)]  # (font, size, math) of each open group
    pending: tuple | None = None  # what the next group or character is set in (after \textbf, ^, _)
    for tok in _TOKEN.findall(src):
        font, pt, math = stack[-1]
        if pending is not None and tok != "{":
            if tok.startswith("\\") or len(tok) == 1:  # one character or symbol at the pending setting
                font, pt, math = pending
            pending = None
        if tok == "{":
            stack.append(pending or stack[-1])
            pending = None
            continue
        if tok == "}":
            if len(stack) > 1:
                stack.pop()
            continue
        if tok == "$":
            stack[-1] = (font, pt, not math)
            continue
        if tok in ("^", "_") and math:
            pending = (font, _SCRIPT.get(pt, 5), True)
            total += 0.5  # \scriptspace
            continue
        if tok.startswith("\\") and tok[1:2].isalpha():
            name = tok[1:].strip()
            if name in ("textbf", "bfseries"):
                pending = ("bx", pt, math)
            elif name in ("textit", "itshape", "emph"):
                pending = ("it", pt, math)
            elif name in _MACROS:
                total += _char_width(_MACROS[name], font, pt, math)
            elif name == "quad":
                total += pt
            continue  # other commands (\relax, \par, \raggedright, \addlinespace): no width
        if tok.startswith("\\"):  # \% \& \_ \{ \| \  \,
            ch = tok[1]
            total += pt * 0.167 if ch == "," else _char_width({"|": "‖", " ": " "}.get(ch, ch), font, pt, math)
            continue
        text = {"--": "–", "---": "—", "``": "“", "''": "”", "~": "\u00a0"}.get(tok, tok)
        if math and text == " ":
            continue
        if math and text == "-":
            text = "−"
        total += _char_width(text, font, pt, math)
    return total


def _char_width(ch: str, font: str, pt: int, math: bool) -> float:
    if math and ch in _MATH_LETTERS:
        return _MATH_LETTERS[ch] / 1000 * pt * _OPTICAL.get(pt, 1.4)
    code = ord(ch)
    units = _SPACE[font] if ch == " " else _GLYPHS[font][code - 33] if 33 <= code <= 126 else _SYMBOLS.get(ch, 1000)
    return units / 1000 * pt * _OPTICAL.get(pt, 1.4)


def _words(src: str) -> list[str]:
    """``src`` split at its spaces outside braces and math (where a line may break)."""
    out: list[str] = []
    cur: list[str] = []
    depth, math = 0, False
    for tok in _TOKEN.findall(src):
        if tok == " " and depth == 0 and not math:
            if cur:
                out.append("".join(cur))
            cur = []
            continue
        depth += tok == "{"
        depth -= tok == "}"
        math ^= tok == "$"
        cur.append(tok)
    if cur:
        out.append("".join(cur))
    return out


def _width_of(width: str | float) -> float:
    """The target width in pt of ``width``: a name of :data:`WIDTHS` or a number of points."""
    if isinstance(width, str):
        if width not in WIDTHS:
            raise ValueError(f"width must be one of {', '.join(WIDTHS)} or a width in pt, not {width!r}")
        return WIDTHS[width]
    w = float(width)
    if not 100 <= w <= 1000:
        raise ValueError(f"a width in pt between 100 and 1000, not {width!r}")
    return w


# -- the layout: font size, column separation, stacked headers and cells, column parts ---------------

_LEADING = {"normalsize": (10, 12.0), "small": (9, 11.0), "footnotesize": (8, 9.5)}  # (size, baselineskip) pt
# the settings tried in turn (size, \tabcolsep, compaction): 0 as written, 1 headers on up to three lines,
# 2 also prose columns wrapped, 3 also a cell's CI or companion under its value
_SETTINGS = (
    ("normalsize", 6, 0),
    ("small", 6, 0),
    ("small", 6, 1),
    ("small", 4, 1),
    ("footnotesize", 4, 1),
    ("footnotesize", 3, 1),
    ("small", 4, 2),
    ("footnotesize", 4, 2),
    ("footnotesize", 3, 2),
    ("small", 4, 3),
    ("footnotesize", 4, 3),
    ("footnotesize", 3, 3),
)
_SLACK = 0.98  # estimates are within a few percent: keep that much room


class _Col:
    """One shown column's LaTeX: its header and each row's (value, rest) cells, with widths."""

    def __init__(self, col, head: str, cells: list[tuple[str, str]]):
        self.col, self.head, self.cells = col, head, cells
        self.align = _align(col.kind)
        self.has_rest = any(rest for _, rest in cells)
        self.prose = col.kind == "text" and any(len(_words(v + r)) > 1 for v, r in cells)
        self._w: dict = {}
        self._heads: dict = {}

    def widths(self, size: int):
        """(inline, value, rest, longest word) widths over the cells, header words' widths."""
        if size not in self._w:
            inline = max((tex_width(v + r, size) for v, r in self.cells), default=0.0)
            value = max((tex_width(v, size) for v, _ in self.cells), default=0.0)
            rest = max((tex_width(r.strip(), size) for _, r in self.cells), default=0.0)
            word = max((tex_width(w, size) for v, r in self.cells for w in _words(v + r)), default=0.0)
            self._w[size] = (inline, value, rest, word, [tex_width(w, size) for w in _words(self.head)] or [0.0])
        return self._w[size]

    def stacks(self, size: int, level: int) -> bool:
        """Whether the cells' rest goes under the value (compaction 3, where that is narrower)."""
        inline, value, rest, _, _ = self.widths(size)
        return level >= 3 and self.has_rest and not self.prose and max(value, rest) < inline

    def body(self, size: int, level: int) -> float:
        inline, value, rest, _, _ = self.widths(size)
        return max(value, rest) if self.stacks(size, level) else inline

    def head_lines(self, size: int, level: int, room: float | None = None) -> list[str]:
        """The header's lines: one, or (compaction 1 and up) the fewest of up to three that are no
        wider than ``room`` (default: the cells), else the narrowest."""
        if (size, level, room) not in self._heads:
            self._heads[size, level, room] = self._head_lines(size, level, room)
        return self._heads[size, level, room]

    def _head_lines(self, size: int, level: int, room: float | None) -> list[str]:
        words = _words(self.head)
        if level == 0 or len(words) < 2:
            return [self.head]
        ws = self.widths(size)[4]
        room = self.body(size, level) if room is None else room
        space = _char_width(" ", "rm", size, False)
        best: tuple[float, tuple[int, ...]] | None = None
        for k in range(1, min(3, len(words)) + 1):
            for cuts in combinations(range(1, len(words)), k - 1):
                bounds = (0, *cuts, len(words))
                wide = max(sum(ws[a:b]) + space * (b - a - 1) for a, b in zip(bounds, bounds[1:]))
                if best is None or wide < best[0] - 0.01:
                    best = (wide, bounds)
            assert best is not None  # k = 1 proposes the head on one line
            if best[0] <= room:
                break
        assert best is not None  # len(words) >= 2: the loop ran
        bounds = best[1]
        return [" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:])]

    def head_width(self, size: int, level: int, room: float | None = None) -> float:
        return max(tex_width(line, size) for line in self.head_lines(size, level, room))

    def natural(self, size: int, level: int) -> float:
        """The column's width without wrapping."""
        return max(self.body(size, level), self.head_width(size, level))

    def least(self, size: int, level: int) -> float:
        """The narrowest a wrapped (p{}) prose column may be: its longest word or header word."""
        return max(self.widths(size)[3], max(self.widths(size)[4]), 2.5 * size)


def _fit(cols: list[_Col], size: int, sep: float, level: int, target: float) -> dict[int, float] | None:
    """The widths (pt) of ``cols`` set side by side in ``target`` pt, prose columns wrapped where
    needed (compaction 2): ``{column index: width}``, or None when they do not fit."""
    natural = {i: c.natural(size, level) for i, c in enumerate(cols)}
    room = target * _SLACK - 2 * sep * len(cols)
    if sum(natural.values()) <= room:
        return natural
    wrap = [i for i, c in enumerate(cols) if level >= 2 and c.prose]
    least = {i: min(natural[i], cols[i].least(size, level)) for i in wrap}
    fixed = sum(w for i, w in natural.items() if i not in least)
    spare = room - fixed - sum(least.values())
    if not wrap or spare < 0:
        return None
    out = dict(natural)
    want = sum(natural[i] - least[i] for i in wrap)
    for i in wrap:  # share the room left in proportion to what each prose column would take unwrapped
        out[i] = least[i] + (spare * (natural[i] - least[i]) / want if want else 0.0)
    return out


class _Layout:
    r"""A table's layout: its setting (size, ``\tabcolsep``, compaction) and column parts, each a list
    of (column index, width, wrapped) with the key columns first."""

    def __init__(self, size_name: str, sep: float, level: int, parts: list[list[tuple[int, float, bool]]], fits: bool):
        self.size_name, self.sep, self.level, self.parts, self.fits = size_name, sep, level, parts, fits
        self.size, self.leading = _LEADING[size_name]
        self.cost = 0
        self.keys = 0  # the key columns each part starts with (when there are several parts)


def _layout(cols: list[_Col], target: float, allow_normal: bool) -> _Layout:
    """The first setting of :data:`_SETTINGS` at which the table fits ``target`` in one part;
    else the setting whose column parts, each repeating the key columns (the leading text
    columns, which name the row), print the fewest lines."""
    keys = []
    for i, c in enumerate(cols):
        if c.col.kind != "text" or i == len(cols) - 1:
            break
        keys.append(i)
    best: _Layout | None = None
    for size_name, sep, level in _SETTINGS:
        if size_name == "normalsize" and not allow_normal:
            continue
        size = _LEADING[size_name][0]
        whole = _fit(cols, size, sep, level, target)
        if whole is not None:
            return _Layout(size_name, sep, level, [_part(cols, list(range(len(cols))), whole, size, level)], True)
        k = list(keys)
        parts: list[list[int]] = []
        cur: list[int] = []
        ok = True
        for i in range(len(k), len(cols)):
            if cur and _fit([cols[j] for j in k + cur + [i]], size, sep, level, target) is None:
                parts.append(cur)
                cur = []
            cur.append(i)
        parts.append(cur)
        laid = []
        for p in parts:
            idx = k + p
            got = _fit([cols[j] for j in idx], size, sep, level, target)
            ok = ok and got is not None
            w = {j: got[n] for n, j in enumerate(idx)} if got else {j: cols[j].natural(size, level) for j in idx}
            laid.append(_part(cols, idx, w, size, level))
        cand = _Layout(size_name, sep, level, laid, ok)
        cand.cost, cand.keys = _printed(cols, cand), len(k)
        if best is None or (not cand.fits, cand.cost) < (not best.fits, best.cost):
            best = cand
    assert best is not None  # _SETTINGS has sizes other than normalsize
    return best


def _printed(cols: list[_Col], lay: _Layout) -> int:
    """The lines a layout prints for its rows: every part repeats them, a stacked cell or a
    wrapped one takes more than one."""
    n_rows = len(cols[0].cells) if cols else 0
    total = 0
    for part in lay.parts:
        for i in range(n_rows):
            lines = 1
            for j, w, wrapped in part:
                value, rest = cols[j].cells[i]
                if wrapped:
                    lines = max(lines, _lines(tex_width(value + rest, lay.size), w))
                elif rest and cols[j].stacks(lay.size, lay.level):
                    lines = max(lines, 2)
            total += lines
    return total


def _part(cols, idx, widths, size, level) -> list[tuple[int, float, bool]]:
    return [(j, widths[j], widths[j] < cols[j].natural(size, level) - 0.01) for j in idx]


def _nested(lines: list[str], align: str, pos: str) -> str:
    r"""Lines stacked in one cell: a nested tabular, its baseline on the first (``t``) or last
    (``b``) line; ``\\{}`` so that a line starting with [ is not read as a length."""
    return rf"\begin{{tabular}}[{pos}]{{@{{}}{align}@{{}}}}" + r"\\{}".join(lines) + r"\end{tabular}"


def _lines(width: float, room: float) -> int:
    """Lines a paragraph of ``width`` pt takes in ``room`` pt (ragged right: some room is lost)."""
    return max(1, math.ceil(width / max(room * 0.92, 1.0)))


# -- tables ------------------------------------------------------------------------------------------


class _Block:
    """One column part of a table as a tabular: its header, rows and group titles, with the
    height (pt) of each."""

    def __init__(self, lcols: list[_Col], part: list[tuple[int, float, bool]], lay: _Layout, target: float):
        self.lcols, self.part, self.lay, self.target = lcols, part, lay, target
        self.width = sum(w for _, w, _ in part) + 2 * lay.sep * len(part)
        heads, lines = [], 1
        for j, w, wrapped in part:
            col = lcols[j]
            got = col.head_lines(lay.size, max(lay.level, 1), w) if wrapped else col.head_lines(lay.size, lay.level)
            heads.append(got[0] if len(got) == 1 else _nested(got, "l" if wrapped else col.align, "b"))
            lines = max(lines, len(got))
        self.spec = "".join(lcols[j].align for j, _, _ in part)  # a wrapped column: l with \parbox cells
        self.head = [rf"\begin{{tabular}}{{{self.spec}}}", r"\toprule", " & ".join(heads) + r" \\", r"\midrule"]
        self.head_height = lines * lay.leading + 12  # the lines and booktabs' three rules with their space

    def row(self, i: int) -> tuple[str, float, int]:
        """Row ``i``: its line, height and lines."""
        out, lines, size = [], 1, self.lay.size
        for j, w, wrapped in self.part:
            col = self.lcols[j]
            value, rest = col.cells[i]
            if wrapped:
                out.append(rf"\parbox[t]{{{w:.1f}pt}}{{\raggedright {value}{rest}\strut}}")
                lines = max(lines, _lines(tex_width(value + rest, size), w))
            elif rest and col.stacks(size, self.lay.level):
                out.append(_nested([value, rest.strip()], col.align, "t"))
                lines = max(lines, 2)
            else:
                out.append(value + rest)
        line = " & ".join(out) + r" \\"
        return line, lines * self.lay.leading + (0.8 if "$^{" in line else 0.0), lines  # marks stand a little higher

    def cost(self, item: _Item, first: bool) -> tuple[int, float]:
        """The lines and height of a body item (a group title or a row)."""
        _, height, lines = self.group(str(item[1]), first) if item[0] == "group" else self.row(int(item[1]))
        return lines, height

    def group(self, title: str, first: bool) -> tuple[str, float, int]:
        r"""A group's italic title row (wrapped when wider than the page); above it, unless
        ``first``, booktabs' ``\addlinespace``."""
        n, size = len(self.part), self.lay.size
        wide = tex_width(rf"\textit{{{title}}}", size)
        lines = 1
        if wide + self.lay.sep <= self.target * _SLACK:  # (the multicolumn keeps the right \tabcolsep)
            line = _group_line(n, title)
        else:
            room = self.width - self.lay.sep
            lines = _lines(wide, room)
            box = rf"\parbox[t]{{{room:.1f}pt}}{{\raggedright\textit{{{title}}}\strut}}"
            line = rf"\multicolumn{{{n}}}{{@{{}}l}}{{{box}}} \\"
        height = lines * self.lay.leading + (0 if first else size / 2)
        return ("" if first else "\\addlinespace\n") + line, height, lines


_Item = tuple[str, str | int]  # a body item: ("group", title) or ("row", position)


def _items(table: ReportTable, cols, rows, shown, best) -> tuple[list[list[tuple[str, str]]], list[_Item]]:
    """Each column's cells ``(value with bold and marks, what follows)`` in LaTeX, and the
    body's items in order: ``("group", title)`` or ``("row", position)``."""
    cells: list[list[tuple[str, str]]] = [[] for _ in cols]
    items: list[_Item] = []
    last = None
    for i, r in enumerate(rows[:shown]):
        if table.group:
            g = tuple(str(r.get(k)) for k in table.group)
            if g != last:
                items.append(("group", latex_escape(group_title(table, r))))
                last = g
        for k, c in enumerate(cols):
            value, rest = cell_parts(table, c, r)
            cell = _number(value) if c.numeric else latex_escape(value)
            if (i, c.key) in best:
                cell = rf"\textbf{{{cell}}}"
            cells[k].append((cell + _mark(table.marks.get((i, c.key), "")), _rest(rest, c.numeric)))
        items.append(("row", i))
    return cells, items


def latex_table(
    table: ReportTable,
    max_rows: int | None = MAX_ROWS,
    part_rows: int = PART_ROWS,
    placement: str = "tbp",
    width: str | float = "onecolumn",
) -> str:
    r"""``table`` as a LaTeX ``table`` float (booktabs), its groups as italic header rows,
    every row (``max_rows``: at most that many, a note saying how many the CSV holds), every column
    explained in a note under it.

    The table fits ``width``: ``"onecolumn"`` (345pt, ``\textwidth`` of ``article``),
    ``"twocolumn"`` (229.5pt, ``\columnwidth`` of ``article``'s two columns; acmart's and
    IEEEtran's are wider) or a width in pt (:data:`WIDTHS`). Widths are estimated from the
    fonts' metrics, and the first of these that fits is taken: the table as it is (``\small``
    from 7 columns), ``\small``, headers on up to three lines, ``\tabcolsep`` 4pt,
    ``\footnotesize``, 3pt, then prose columns wrapped, then a cell's interval or companion
    under its value. A table that fits none is split into column parts, each repeating the
    key columns (the leading text columns, which name the row: system, test, measures), in the
    setting that prints the fewest lines; a comment before each part's tabular says which
    columns it holds (``% irscale column part 2 of 3: columns 1, 6-10 of 13 (key columns: 1)``).
    A group title wider than the page wraps.

    A table longer than ``part_rows`` lines, or taller than a page (:data:`PAGE_HEIGHT`),
    continues in further floats with the same number (``Table 5 (continued)``): each column
    part in turn, as many of its rows in a float as fit, and as many parts in one float as
    fit it (a short table: all); notes that do not fit under the last part follow in a float
    of their own."""
    target = _width_of(width)
    cols = [c for c in table.shown if c.key not in table.group]
    rows = row_dicts(table)
    limits = [n for n in (max_rows, table.max_rows) if n is not None]
    shown = min([len(rows), *limits])
    cells, items = _items(table, cols, rows, shown, best_cells(table))
    lcols = [_Col(c, c.latex if c.latex else latex_escape(c.head), cells[k]) for k, c in enumerate(cols)]
    lay = _layout(lcols, target, allow_normal=len(cols) <= 6)
    blocks = [_Block(lcols, part, lay, target) for part in lay.parts]

    title = latex_escape(table.title)
    caption = f"{title}. {latex_escape(table.caption)}"
    cap_size, cap_lead = (10, 12.0) if lay.size_name == "normalsize" else (9, 11.0)
    cap_h = 15 + cap_lead * _lines(tex_width("Table 99: " + caption, cap_size), target)
    more_h = 15 + cap_lead  # a continuation's caption
    limit = PAGE_HEIGHT * 0.92

    floats, used_h = _floats(items, blocks, part_rows, limit, cap_h, more_h)
    notes = _notes(table, cols, shown)
    last_h = (cap_h if len(floats) == 1 else more_h) + used_h
    notes_apart = last_h + _notes_height(notes, target) > limit

    out = [f"% irscale {__version__}: {title}".replace("\n", " "), r"% needs \usepackage{booktabs} in the preamble"]
    for k, content in enumerate(floats):
        out += _float_begin(table, lay, placement, title, caption, k == 0)
        out += _float_body(content, blocks, len(cols), lay)
        if k == len(floats) - 1 and not notes_apart:
            out += _notes_block(notes)
        else:
            out += [r"\par\smallskip", r"{\footnotesize Continued in the next table.}"]
        out.append(r"\end{table}")
    if notes_apart:  # notes in floats of their own, none taller than a page
        for piece in _note_pieces(notes, limit - more_h, target):
            out += _float_begin(table, lay, placement, title, caption, False) + _notes_block(piece) + [r"\end{table}"]
    return "\n".join(out) + "\n"


def _floats(
    items: list, blocks: list[_Block], part_rows: int, limit: float, cap_h: float, more_h: float
) -> tuple[list[list[tuple[list, _Block]]], float]:
    """The table's floats, each a list of (chunk of body items, its column part), and the
    height the last one's parts take: each column part in turn, its rows in chunks that fit
    a float; then as many chunks in one float as fit it (a short table: every part in one float)."""

    def size_of(chunk, b: _Block) -> tuple[int, float]:  # a chunk's lines and height in block b
        costs = [b.cost(x, k == 0) for k, x in enumerate(chunk)]
        return sum(n for n, _ in costs), sum(h for _, h in costs) + b.head_height

    blocks_in = [
        (c, b)
        for b in blocks
        for c in _chunks(items, b.cost, part_rows, limit - max(cap_h, more_h) - 14 - b.head_height)
    ]
    floats: list[list[tuple[list, _Block]]] = [[]]
    used_lines, used_h = 0, 0.0
    for chunk, b in blocks_in:
        n, h = size_of(chunk, b)
        if floats[-1] and (
            used_lines + n > part_rows or (cap_h if len(floats) == 1 else more_h) + used_h + 7 + h + 14 > limit
        ):
            floats.append([])
            used_lines, used_h = 0, 0.0
        floats[-1].append((chunk, b))
        used_lines += n
        used_h += h + (7 if len(floats[-1]) > 1 else 0)  # \medskip between two parts
    return floats, used_h


def _float_begin(table: ReportTable, lay: _Layout, placement: str, title: str, caption: str, first: bool) -> list[str]:
    """The opening lines of one of the table's floats: the first captioned and labelled, the
    others ``(continued)`` under the same number."""
    got = [rf"\begin{{table}}[{placement}]", r"\centering"]
    if lay.size_name != "normalsize":
        got.append(r"\small")
    if first:
        got += [rf"\caption[{title}]{{{caption}}}", rf"\label{{{table.label}}}"]
    else:  # the same number as the first part
        got += [r"\addtocounter{table}{-1}", rf"\caption[]{{{title} (continued)}}"]
    return got + [r"\smallskip"]  # (article sets no space between a caption and what follows)


def _float_body(content: list[tuple[list, _Block]], blocks: list[_Block], n_cols: int, lay: _Layout) -> list[str]:
    """One float's tabulars: the layout's font size and column separation, then each chunk in
    its column part (a comment names the part's columns where there are several)."""
    out = []
    if lay.size_name == "footnotesize":
        out.append(r"\footnotesize")
    if lay.sep != 6:
        out.append(rf"\setlength{{\tabcolsep}}{{{lay.sep:g}pt}}")
    for p, (chunk, b) in enumerate(content):
        if p:
            out.append(r"\par\medskip")
        if len(blocks) > 1:  # which columns (a reader of the .tex, or a program, joins the parts by row)
            out.append(
                f"% irscale column part {blocks.index(b) + 1} of {len(blocks)}: columns "
                f"{_spans(j + 1 for j, _, _ in b.part)} of {n_cols} (key columns: {lay.keys})"
            )
        out += b.head
        out += [(b.group(str(x[1]), j == 0) if x[0] == "group" else b.row(int(x[1])))[0] for j, x in enumerate(chunk)]
        out += [r"\bottomrule", r"\end{tabular}"]
    return out


def _chunks(items: list, cost, part_rows: int, room: float) -> list[list]:
    """``items`` in chunks of at most ``part_rows`` lines and ``room`` pt (``cost(item, first)``:
    its lines and height, ``first`` at the top of a chunk), a group that goes on in the next
    chunk titled again there (``... (continued)``), never a group title alone at a chunk's end."""
    chunks: list[list] = []
    cur: list = []
    lines, height = 0, 0.0
    group_now: str | None = None
    for it in items:
        n, h = cost(it, not cur)
        if any(x[0] == "row" for x in cur) and (lines + n > part_rows or height + h > room):
            carry = [cur.pop()] if cur[-1][0] == "group" and it[0] == "row" else []  # no group title left alone
            chunks.append(cur)
            cur = carry
            if not carry and it[0] == "row" and group_now is not None:  # the group goes on in the next chunk
                cur.append(("group", group_now + " (continued)"))
            lines = sum(cost(x, k == 0)[0] for k, x in enumerate(cur))
            height = sum(cost(x, k == 0)[1] for k, x in enumerate(cur))
            n, h = cost(it, not cur)
        if it[0] == "group":
            group_now = str(it[1])
        cur.append(it)
        lines += n
        height += h
    chunks.append(cur)
    return chunks


def _spans(numbers) -> str:
    """``1, 2, 3, 5`` -> ``1-3, 5``."""
    out: list[list[int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in out)


def _notes(table: ReportTable, cols, shown: int) -> list[str]:
    """The notes under a table, one paragraph per line: the columns explained, the groups,
    the marks' legend, the table's notes, the rows left out."""
    items = [
        f"\\textbf{{{c.latex if c.latex else latex_escape(c.head)}}}: {latex_escape(c.explain.rstrip('.'))}"
        for c in cols
    ]
    notes = ["\\textit{Columns.} " + "; ".join(items) + "."]
    if table.group:
        notes.append(
            "Rows are grouped by "
            + ", ".join(latex_escape(table.column(k).head.lower()) for k in table.group)
            + " (italic rows)."
        )
    notes += [f"{_mark(s)} {latex_escape(t)}." for s, t in table.legend]
    notes += [latex_escape(x) for x in table.notes]
    if shown < len(table.frame):
        notes.append(latex_escape(f"The first {shown:,} of {len(table.frame):,} rows are shown; {table.holds_all}."))
    return notes


def _notes_block(notes: list[str]) -> list[str]:
    return [r"\par\smallskip", r"\begin{minipage}{\linewidth}\footnotesize\raggedright", *notes, r"\end{minipage}"]


def _notes_height(notes: list[str], target: float) -> float:
    r"""The notes' height (one paragraph, ``\footnotesize``, ragged right) with the space above."""
    return 4 + 9.5 * _lines(tex_width(" ".join(notes), 8) * 1.04, target)


def _note_pieces(notes: list[str], room: float, target: float) -> list[list[str]]:
    """``notes`` in pieces no taller than ``room`` pt at ``target`` pt wide (a long paragraph
    split between its sentences or column explanations)."""
    atoms = []
    for n in notes:
        atoms += re.split(r"(?<=[;.]) (?=\\textbf\{|\$\^)", n)
    pieces: list[list[str]] = [[]]
    for a in atoms:
        if pieces[-1] and _notes_height(pieces[-1] + [a], target) > room:
            pieces.append([a])
        else:
            pieces[-1].append(a)
    return pieces


# -- documents ---------------------------------------------------------------------------------------


def latex_document_tables(
    tables: Iterable[ReportTable], width: str | float = "onecolumn", texts: Sequence[str] | None = None
) -> dict[str, str]:
    """``{file stem: LaTeX}``: tables sharing a stem (Tables 5 and 6; the measure-free
    summary's parts) go into one file, one float each (or more: see :func:`latex_table`).
    ``texts``: the tables already rendered at ``width``, one each (not rendered again)."""
    tables = list(tables)
    texts = [latex_table(t, width=width) for t in tables] if texts is None else texts
    out: dict[str, list[str]] = {}
    for t, tex in zip(tables, texts, strict=True):
        out.setdefault(t.stem, []).append(tex)
    return {stem: "\n".join(parts) for stem, parts in out.items()}


def latex_standalone(tables: Iterable[ReportTable]) -> str:
    """A complete LaTeX document of ``tables`` (article class, booktabs): for checking that
    the tables compile, or for a quick PDF."""
    body = "\n".join(latex_table(t) for t in tables)
    return "\n".join(
        [
            r"\documentclass{article}",
            r"\usepackage[T1]{fontenc}",
            r"\usepackage{booktabs}",
            r"\usepackage[margin=2cm]{geometry}",
            r"\begin{document}",
            body,
            r"\end{document}",
            "",
        ]
    )


_FILE = re.compile(r"[A-Za-z0-9_.\-/]+")


def paper_number(table: ReportTable) -> int | None:
    """The number of the paper's table that ``table`` is the analogue of (``Table 4``: 4;
    ``Tables 2 and 3``: 2), so that a report numbers it as its file is named; None for
    irscale's own tables, which take the next free number."""
    got = re.match(r"Tables? (\d+)", table.paper or "")
    return int(got.group(1)) if got else None


def latex_report(
    tables: Iterable[ReportTable],
    figures: Iterable[tuple[str, str]] = (),
    *,
    title: str = "irscale report",
    width: str | float = "onecolumn",
    texts: Sequence[str] | None = None,
) -> str:
    r"""A complete LaTeX document (``report_N<N>.tex``): every table of ``tables`` fitted to
    ``width`` (:func:`latex_table`), then each of ``figures``, ``(PDF file name, caption)``
    or ``(PDF file name, caption, print width in inches)`` of files beside the ``.tex``, as
    a figure float: a figure with a print width is included at that width, unscaled (its
    text is drawn 8 pt there), and the page is made as wide as the widest such figure.

    The document is the page the tables are fitted to: ``"onecolumn"``, the ``article`` class
    as it is (``\textwidth`` 345pt); ``"twocolumn"``, ``\documentclass[twocolumn]{article}``
    (``\columnwidth`` 229.5pt); a width in pt, one column that wide (``geometry``). It needs
    only texlive-latex-base and texlive-latex-recommended (booktabs; graphicx with figures):
    ``pdflatex report_N<N>.tex``. ``texts``: the tables already rendered at ``width``, one
    each (not rendered again)."""
    target = _width_of(width)
    placed: list[tuple[str, str, float | None]] = [
        (str(f[0]), str(f[1]), f[2] if len(f) > 2 else None) for f in figures
    ]
    for f, _, _ in placed:
        if not _FILE.fullmatch(f):
            raise ValueError(f"a figure's file name is letters, digits and _ . - / only: {f!r}")
    head = [
        r"\documentclass[twocolumn]{article}" if width == "twocolumn" else r"\documentclass{article}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage{booktabs}",
    ]
    wide = max((w for _, _, w in placed if w is not None), default=0.0) * 72.27  # pt
    if not isinstance(width, str):
        head.append(rf"\usepackage[textwidth={max(target, wide):g}pt]{{geometry}}")
    elif wide > target:  # a page as wide as the widest figure, so that each prints at its own width
        head.append(rf"\usepackage[textwidth={wide:g}pt,textheight=9in]{{geometry}}")
    if placed:
        head.append(r"\usepackage{graphicx}")
    # a page may hold more floats, and more of it floats, than LaTeX's defaults let it (fewer half-empty pages)
    head += [
        r"\renewcommand{\topfraction}{0.9}",
        r"\renewcommand{\bottomfraction}{0.9}",
        r"\renewcommand{\textfraction}{0.05}",
        r"\renewcommand{\floatpagefraction}{0.7}",
        r"\setcounter{topnumber}{4}",
        r"\setcounter{totalnumber}{6}",
    ]
    body = [
        rf"\title{{{latex_escape(title)}}}",
        rf"\author{{irscale {__version__}}}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        "The tables and figures of irscale's report; the notes under each table explain its columns, and the "
        "CSV and JSON files beside this file hold every row with its exact values.",
        "",
    ]
    floats = 0
    tables = list(tables)
    for t, tex in zip(tables, [latex_table(t, width=width) for t in tables] if texts is None else texts):
        number = paper_number(t)
        if number is not None:  # the paper's number, as the file's name says (table4_...: Table 4)
            body.append(rf"\setcounter{{table}}{{{number - 1}}}")
        # LaTeX holds at most 18 floats waiting for a place: a page break before the 17th, also
        # inside a long table's continued floats
        pieces = re.split(r"(?=\\begin\{table\})", tex)
        for piece in pieces:
            n = piece.count(r"\begin{table}")
            if floats and floats + n > 16:
                body.append(r"\clearpage")
                floats = 0
            body.append(piece.rstrip("\n"))
            floats += n
    for f, caption, inches in placed:
        if floats + 1 > 16:
            body.append(r"\clearpage")
            floats = 0
        size = (  # a figure drawn for print at its own width (its text is 8 pt there), else fitted
            rf"width={inches:g}in,height=0.92\textheight,keepaspectratio"
            if inches is not None
            else r"width=\linewidth,height=0.45\textheight,keepaspectratio"
        )
        body += [
            r"\begin{figure}[tbp]",
            r"\centering",
            rf"\includegraphics[{size}]{{{f}}}",
            rf"\caption{{{latex_escape(caption)}}}",
            r"\end{figure}",
            "",
        ]
        floats += 1
    return "\n".join(head + body + [r"\end{document}", ""])
