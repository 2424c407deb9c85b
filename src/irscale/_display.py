"""Compact HTML displays for notebooks: the ``_repr_html_`` of :class:`~irscale.experiment.ScoreTable`,
:class:`~irscale.study.Study`, :class:`~irscale.scales.rankmap.RankMap` and
:class:`~irscale.scales.bounds.PhiBounds` are built from :func:`card` and :func:`table`.

A bottom-layer helper (it imports nothing of irscale), so that every layer may use it. The
HTML is a fragment a notebook embeds: inline styles, no script, every name escaped
(``html.escape``), and bounded in size: a table shows at most ``max_rows`` rows and
``max_cols`` value columns, then says how many more there are.

>>> print(table(["mean"], [["a<b", 0.123456]], index="system"))  # doctest: +ELLIPSIS
<table class="dataframe"><thead>...<tbody><tr><th>a&lt;b</th><td>0.1235</td></tr></tbody></table>
>>> fmt(1234567), fmt(float("nan")), fmt("<i>"), fmt(123456.75), fmt(0.5)
('1,234,567', '&ndash;', '&lt;i&gt;', '123,456.8', '0.5')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from numbers import Integral, Real

MAX_ROWS = 20  # rows a display shows; the rest are counted in a "... more" line
MAX_COLS = 12  # value columns a display shows; the rest are counted in a last header cell

# few inline styles: the notebook's own style for tables (pandas' class "dataframe") does the rest
_MUTED = "color:#666;margin:0.2em 0"


def float_text(x: float) -> str:
    """A float as every report shows it (tables, ``*_display`` columns, the console): 4
    decimals, except a nonzero value that would read 0.0000 (a ranked mean ``phi / |M|`` at
    N = 1000 is 1e-98 .. 1e-25, a half-width smaller still), which shows three significant
    digits (``1.61e-42``), so that distinct tiny values never all read 0.0000."""
    return f"{x:.3g}" if x != 0 and abs(x) < 5e-5 else f"{x:.4f}"


def fmt(value: object) -> str:
    """A value as a table shows it: floats to 4 significant digits (from 10^4 on, with
    thousands separators and one decimal: ranked means are that large), integers with
    thousands separators, NaN as an en dash, anything else as ``str``; escaped."""
    if isinstance(value, bool) or value is None:
        return escape(str(value))
    if isinstance(value, Integral):
        return f"{int(value):,}"
    if isinstance(value, Real):
        v = float(value)
        if math.isnan(v):
            return "&ndash;"
        return escape(f"{v:,.1f}" if math.isfinite(v) and abs(v) >= 1e4 else f"{v:.4g}")  # ranked means: 123,456.7
    return escape(str(value))


def table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    index: str | None = None,
    max_rows: int = MAX_ROWS,
    max_cols: int = MAX_COLS,
    total: int | None = None,
) -> str:
    """An HTML table: ``columns`` names the value columns; each row is its label (a header
    cell, when ``index`` names that column) then its values. At most ``max_rows`` rows and
    ``max_cols`` value columns are shown; a last row (``... k more rows``) and a last header
    cell (``... k more columns``) count the rest. ``total``: the number of rows in all, where
    ``rows`` holds only those shown (default ``len(rows)``)."""
    first = 1 if index is not None else 0
    shown = list(columns[:max_cols])
    more_cols = len(columns) - len(shown)
    head = [f"<th>{escape(index)}</th>"] if index is not None else []
    head += [f"<th>{escape(str(c))}</th>" for c in shown]
    if more_cols:
        head.append(f"<th>&hellip; {more_cols:,} more column{'s' * (more_cols > 1)}</th>")
    body = []
    for row in rows[:max_rows]:
        cells = [f"<th>{escape(str(row[0]))}</th>"] if first else []
        cells += [f"<td>{fmt(v)}</td>" for v in row[first : first + len(shown)]]
        cells += ["<td></td>"] if more_cols else []
        body.append("<tr>" + "".join(cells) + "</tr>")
    more_rows = (len(rows) if total is None else total) - min(len(rows), max_rows)
    if more_rows:
        span = first + len(shown) + (1 if more_cols else 0)
        body.append(
            f'<tr><td colspan="{span}" style="text-align:left">&hellip; {more_rows:,} more '
            f"row{'s' * (more_rows > 1)}</td></tr>"
        )
    return f'<table class="dataframe"><thead><tr>{"".join(head)}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def names(items: Sequence[object], most: int = 8) -> str:
    """``a, b, c`` of the first ``most`` items and ``... and k more``; escaped."""
    shown = ", ".join(escape(str(x)) for x in items[:most])
    return shown + (f" &hellip; and {len(items) - most:,} more" if len(items) > most else "")


def caption(text: str) -> str:
    """A grey line of text above or below a table (escaped)."""
    return f'<p style="{_MUTED}">{escape(text)}</p>'


def card(title: str, facts: Sequence[tuple[str, str]], body: str = "", notes: Sequence[str] = ()) -> str:
    """A titled box: ``facts`` as ``name: value`` lines (values already HTML: escape names
    with :func:`names` or ``html.escape``), then ``body`` (a :func:`table`), then ``notes``
    (already HTML) in grey. ``title`` is escaped."""
    lines = "".join(f"<li><b>{escape(k)}</b>: {v}</li>" for k, v in facts)
    out = [f'<div><p style="margin:0.2em 0"><b>{escape(title)}</b></p>']
    if lines:
        out.append(f'<ul style="margin:0.2em 0;padding-left:1.2em">{lines}</ul>')
    out.append(body)
    out += [f'<p style="{_MUTED}">{n}</p>' for n in notes]
    return "".join(out) + "</div>"
