"""Render a :class:`~irscale.table.ScoreTable` as text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from irscale._display import float_text
from irscale.plan import warn_not_interval
from irscale.scales.theory import Statement
from irscale.table import ScoreTable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["as_json", "delimited", "long_frame", "number_cell", "rich_table", "theory_texts", "trec_eval_text"]


def _means(table: ScoreTable) -> np.ndarray:
    """The table's means, measures x systems, with the warning where a measure's mean is not
    meaningful (once per measure and process: :func:`irscale.plan.warn_not_interval`)."""
    warn_not_interval(table, "means", stacklevel=4)
    return table.mean_values()


def long_frame(table: ScoreTable, per_topic: bool) -> pd.DataFrame:
    """The means as tidy rows (system, topic 'all', measure, value); with ``per_topic``,
    each system's per-topic rows first and its 'all' rows after them, as trec_eval -q."""
    import pandas as pd  # (the text and terminal tables need no pandas: evaluate's default path)

    means = pd.DataFrame(
        _means(table).T, index=pd.Index(table.systems, name="system"), columns=[str(m) for m in table.measures]
    )
    df = means.reset_index().melt(id_vars="system", var_name="measure", value_name="value")
    df.insert(1, "topic", "all")
    if not per_topic:
        return df
    both = pd.concat([table.to_frame(), df], ignore_index=True)
    system = {name: k for k, name in enumerate(table.systems)}
    measure = {str(m): k for k, m in enumerate(table.measures)}
    topic = {name: k for k, name in enumerate(table.topics)}
    keys = (both["system"].map(system), both["topic"].map(topic).fillna(len(topic)), both["measure"].map(measure))
    order = np.lexsort(tuple(k.to_numpy() for k in reversed(keys)))
    return both.iloc[order].reset_index(drop=True)


def delimited(table: ScoreTable, per_topic: bool, sep: str) -> str:
    return long_frame(table, per_topic).to_csv(sep=sep, index=False, lineterminator="\n")


def as_json(table: ScoreTable, per_topic: bool) -> str:
    df = long_frame(table, per_topic)
    return json.dumps({"provenance": table.provenance, "scores": df.to_dict(orient="records")}, indent=1)


def trec_eval_text(table: ScoreTable, per_topic: bool) -> str:
    """trec_eval's layout: ``measure<TAB>qid|all<TAB>value`` (names padded to 22,
    4 decimals; counts as integers and summed over topics in the 'all' lines), one block
    per run, each 'all' block opened by runid and num_q."""
    lines: list[str] = []
    names = [m.trec_eval_name or str(m) for m in table.measures]  # ranked columns have no trec_eval name
    counts = [m.is_count for m in table.measures]

    def fmt(name, qid, v, is_count):
        val = f"{int(round(v))}" if is_count else f"{v:.4f}"
        return f"{name:<22}\t{qid}\t{val}"

    for s, system in enumerate(table.systems):
        vals = table.values[:, s, :]
        present = ~np.isnan(vals[0]) if len(table.measures) else np.ones(len(table.topics), bool)
        if per_topic:
            for t, topic in enumerate(table.topics):
                if not present[t]:
                    continue
                for i, name in enumerate(names):
                    lines.append(fmt(name, topic, vals[i, t], counts[i]))
        lines.append(f"{'runid':<22}\tall\t{system}")
        lines.append(f"{'num_q':<22}\tall\t{int(present.sum())}")
        for i, name in enumerate(names):
            v = vals[i, present]
            lines.append(fmt(name, "all", v.sum() if counts[i] else v.mean(), counts[i]))
    return "\n".join(lines) + "\n"


def number_cell(v: float) -> str:
    """4 decimals; a nonzero value that would read 0.0000 (a half-width, ``phi / |M|`` at
    N = 1000) with three significant digits instead: the reports' :func:`float_text`."""
    return float_text(v)


def rich_table(table: ScoreTable, per_topic: bool):
    """A rich Table: one row per system (and topic with ``per_topic``), one column per measure."""
    from rich.table import Table

    t = Table(show_header=True, header_style="bold")
    t.add_column("system", style="cyan", no_wrap=True, min_width=max(map(len, table.systems), default=6))
    if per_topic:
        t.add_column("topic")
    for m in table.measures:
        t.add_column(str(m), justify="right", no_wrap=True, min_width=max(len(str(m)), 6))
    means = _means(table)
    if per_topic:
        for s, system in enumerate(table.systems):
            for k, topic in enumerate(table.topics):
                row = table.values[:, s, k]
                if np.isnan(row).all():
                    continue
                t.add_row(system, topic, *(number_cell(v) for v in row))
            t.add_row(
                system,
                "all",
                *(number_cell(v) for v in means[:, s]),
                style="bold",
                end_section=s < len(table.systems) - 1,
            )  # the mean, as trec_eval -q ends each run
    else:
        for s, system in enumerate(table.systems):
            t.add_row(str(system), *(number_cell(v) for v in means[:, s]))
    return t


def theory_texts(table: ScoreTable) -> list[str]:
    """One line per ranked measure of ``table`` saying what the theory says about the
    original (:meth:`irscale.scales.theory.Statement.text`), in column order, each measure
    once; measures the papers say nothing about are named as such. On condensed runs
    (``provenance["judged_only"]``) a last line says the verdicts hold for them."""
    out: dict[str, str] = {}
    for col in table.measures:
        inner = getattr(col, "measure", None)
        if inner is None or not hasattr(col, "theory") or str(inner) in out:
            continue
        theory = col.theory  # a Statement or None
        out[str(inner)] = (
            theory.text()
            if isinstance(theory, Statement)
            else f"{inner}: the papers make no statement about it; phi equi-spaces its own order"
        )
    if out and table.provenance.get("judged_only"):
        out[""] = CONDENSED_SCALE
    return list(out.values())


CONDENSED_SCALE = (
    "condensed runs (judged only, -J): each run's unjudged documents were removed before it was cut at N "
    "and padded; every condensed run at N is a run of length N of judged grades and every such run is one, "
    "so phi and each verdict above are the measure's at N"
)
