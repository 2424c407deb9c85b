"""The verdict of ``irscale inspect``: the scale checks of one measure as a rich renderable."""

from __future__ import annotations

from collections.abc import Sequence

from irscale.errors import count_text

__all__ = ["theory_check_text", "theory_line", "verdict_table"]


def verdict_table(name: str, N: int, levels: int, verdicts: Sequence, balancing: int, summary: dict):
    """The checks as a table (check, order, verdict, counterexample), then the balancing
    index and the spacing of the values.

    Parameters
    ----------
    name : str
        The measure's name (shown as given, never read as markup).
    N, levels : int
        Run length and number of relevance levels of the checks.
    verdicts : sequence of :class:`irscale.scales.checks.Verdict`
    balancing : int
        The balancing index B(N) (:func:`irscale.scales.balancing.balancing_index`).
    summary : dict
        :func:`irscale.scales.checks.intervalness` of the measure.

    Returns
    -------
    rich.console.Group
    """
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    title = Text(f"{name}: N = {N}, {levels} relevance levels, {count_text(levels**N, levels)} runs")
    t = Table(title=title, title_justify="left", header_style="bold")
    for col in ("check", "order", "verdict", "counterexample"):
        t.add_column(col)
    for v in verdicts:
        verdict = Text("holds", style="green") if v.holds else Text("fails", style="red")
        t.add_row(v.check, v.order or "", verdict, Text(v.counterexample_text()))
    return Group(
        t,
        Text(f"balancing index B({N}) = {balancing}  (N: like a set-based measure; 1: only rank 1 counts)"),
        Text(
            f"distinct values {count_text(summary['distinct'])} of {count_text(summary['runs'])} runs; "
            f"Pearson r(value, rank) = "
            f"{summary['pearson_r_value_vs_rank']:.4f} (1 = equi-spaced); gaps {summary['gap_min']:.3g} .. "
            f"{summary['gap_max']:.3g} (ratio {summary['gap_ratio']:.3g})"
        ),
    )


def theory_check_text(check):
    """What the theory says about a measure and what the brute force over every run
    found (:class:`irscale.scales.theory.TheoryCheck`), as a rich Text: the statement,
    the verdict (green when it agrees with the theory, red when not), the counterexample
    runs, and the 2019 paper's runs where they apply."""
    from rich.text import Text

    lines = check.lines()
    out = Text(lines[0])
    out.append("\n" + lines[1], style="green" if check.agrees else "bold red")
    for line in lines[2:]:
        out.append("\n" + line)
    return out


def theory_line(statement):
    """The theory's one line about a measure (``theory: ...``), or an empty Text."""
    from rich.text import Text

    return Text(f"theory: {statement.text()}" if statement is not None else "")
