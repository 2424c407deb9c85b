"""Renderables for the terminal: rich tables of data frames and studies, and the cache
listing. Pure functions: they build what the CLI prints and print nothing themselves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from irscale.errors import IrscaleError, MeasureError, count_text

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

    from irscale.study import Study


__all__ = [
    "cache_listing",
    "df_table",
    "measures_table",
    "study_tables",
    "study_theory",
    "summary",
    "tau_tables",
    "theory_text",
]


def df_table(df: pd.DataFrame, title: str) -> Table:
    """A rich Table of ``df`` titled ``title``: numeric columns right-aligned, floats with
    4 decimals (three significant digits where that would read 0.0000), nothing wrapped."""
    from rich.table import Table

    from irscale.report.tables import number_cell

    t = Table(title=title, title_justify="left", header_style="bold")
    for c in df.columns:
        t.add_column(str(c), justify="right" if df[c].dtype.kind in "fiu" else "left", no_wrap=True)
    for row in df.itertuples(index=False):
        t.add_row(*(number_cell(v) if isinstance(v, float) else str(v) for v in row))
    return t


def study_tables(study: Study) -> list[Table]:
    """The tables of one study at run length N: Table 2/3 (tau, measure vs ranked),
    Table 4 (tau between measures) and Tables 5/6 (significant pairs, original -> ranked)."""
    N = study.N
    t2 = study.table2.drop(columns=["rb_dependent"])
    ch = study.changes[
        ["measure", "test", "sig", "s2ns", "ns2s", "delta_pct", "sig_ranked"]
        + [c for c in ("halfwidth_max", "could_flip_ranked") if c in study.changes]
    ]
    return [
        df_table(t2, f"Table 2/3 (N={N}): Kendall's tau, measure vs ranked (unq, mid); topic-by-topic tau range"),
        df_table(study.table4, f"Table 4 (N={N}): tau between measures (tau) and ranked versions (tau_ranked)"),
        df_table(ch, f"Tables 5/6 (N={N}): significant pairs, original -> ranked"),
    ]


def theory_text(lines: Sequence[str]):
    """What the theory says about each original measure (lines of
    :func:`irscale.report.tables.theory_texts` or a study's provenance) under a heading,
    as a rich Text (measure names are never read as markup); empty when there is none."""
    from rich.text import Text

    if not lines:
        return Text("")
    return Text(
        "\n".join(
            [
                "What the theory says about each original measure (the papers where they speak: irscale "
                "inspect MEASURE --theory checks it; else irscale's exhaustive check):"
            ]
            + [f"  {line}" for line in lines]
        )
    )


def study_theory(study: Study) -> list[str]:
    """The theory's line for each measure of ``study`` (recorded in its provenance)."""
    said = study.provenance.get("theory", {})
    out = [
        said[m]["text"] if m in said else f"{m}: the papers make no statement about it; phi equi-spaces its own order"
        for m in study.measures
    ]
    if study.provenance.get("judged_only"):
        from irscale.report.tables import CONDENSED_SCALE

        out.append(CONDENSED_SCALE)
    return out


def tau_tables(studies: Sequence[Study]) -> list[Table]:
    """The paper's Tables 2 (unq) and 3 (mid) over several run lengths, one row per study
    (see :func:`irscale.report.study.tau_tables`)."""
    from irscale.report.study import tau_tables as frames

    return [df_table(df, f"{title}: Kendall's tau, measure vs ranked") for title, _, df in frames(studies)]


def cache_listing(info: dict) -> str:
    """The cache as text lines (rank maps and bounds tables): its directory and size,
    then one line per entry (identity, number of values, size; or the file and why it is
    damaged). ``info`` is what :func:`irscale.scales.cache_info` returns."""
    lines = [f"cache directory {info['dir']} ({info['bytes'] / 1e6:.1f} MB)"]
    for e in info["entries"]:
        if e.get("damaged"):  # rebuilt (and replaced) when next needed
            lines.append(f"  {e['file']}: (damaged: {e['damaged']}), {e['bytes'] / 1e6:.1f} MB")
        else:
            size = count_text(e["size"])  # |M| at N = 1000 has hundreds of digits, beyond a float
            lines.append(f"  {e['identity']}: {size} values, {e['bytes'] / 1e6:.1f} MB")
    return "\n".join(lines)


def measures_table():
    """The registered measures: name, parameters (default: meaning), graded, RB-dependent,
    the run space that computes their interval scale (or why there is none), summary."""
    from rich.markup import escape
    from rich.table import Table

    from irscale.measures import REGISTRY
    from irscale.scales import space_for

    t = Table(
        "name",
        "parameters (default): meaning",
        "graded",
        "RB",
        "interval scale (phi)",
        "scale type of the original: set / strong / weak order",
        "summary",
    )
    for name, cls in sorted(REGISTRY.items(), key=lambda kv: kv[0].lower()):
        params = "\n".join(f"{p}={default!r}" + (f": {doc}" if doc else "") for p, default, doc in cls.param_info())
        try:
            scale = "yes: " + space_for(name + ("@10" if cls.requires_cutoff else ""), 10).description
        except MeasureError as e:
            scale = f"none: {e}" if cls.no_scale else "none"
        doc = summary(cls.__doc__ or "")
        types = [_scale_types(name, 10, 2)] + ([_scale_types(name, 6, 3)] if cls.graded else [])
        t.add_row(  # the texts as written: a docstring's "[grade_i >= rel]" is not rich markup
            escape(name),
            escape(params),
            "yes" if cls.graded else "",
            "yes" if cls.needs_recall_base else "",
            escape(scale),
            "\n".join(types),
            escape(doc),
        )
    t.caption = (
        "Scale type: what the original measure is over all runs of the stated length under the set, "
        "strong and weak orders (interval: means and t tests are meaningful; ordinal: only order "
        "statistics, e.g. sign and rank tests; not ordinal: not even those, use its ranked version). "
        "Checked exhaustively and cached; irscale inspect MEASURE shows the checks."
    )
    return t


def summary(doc: str, limit: int = 240) -> str:
    """A docstring's first paragraph as plain text (reST ````code```` and roles removed),
    whole sentences only: as many as fit ``limit`` characters, at least the first."""
    import re

    para = " ".join(doc.strip().split("\n\n")[0].split())
    para = re.sub(r":\w+:`~?([^`]+)`", r"\1", para).replace("``", "")
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z(])", para)
    out = sentences[0]
    for s in sentences[1:]:
        if len(out) + 1 + len(s) > limit:
            break
        out += " " + s
    return out


def _scale_types(name: str, N: int, levels: int) -> str:
    from irscale.scales.permissible import SCALE_ORDERS, scale_types

    short = {"interval": "interval", "ordinal": "ordinal", "not ordinal": "not ord."}
    try:
        types = scale_types(name, N, levels)
    except IrscaleError as e:
        return f"N={N}: not checked ({e})"
    where = f"N={N}" if levels == 2 else f"N={N}, {levels} levels"
    return f"{where}: " + " / ".join(short[types[o]] for o in SCALE_ORDERS)
