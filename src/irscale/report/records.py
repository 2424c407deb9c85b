"""A :class:`~irscale.experiment.ScoreTable` as the records ir_measures hands out.

``records(table)`` gives per-topic :class:`Metric` records ``(query_id, measure, value)``,
the shape of ``ir_measures.iter_calc``; ``aggregate(table)`` gives ``{measure: mean}``,
the shape of ``ir_measures.calc_aggregate``. Both describe one system (ir_measures
evaluates one run at a time): a table of several systems needs ``system=``, so the
record type never depends on the table. irscale does not need ir_measures for this:
:class:`Metric` has ir_measures' field names, so code written against
``ir_measures.Metric`` (``m.query_id``, ``m.measure``, ``m.value``, unpacking) reads it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from irscale.errors import ArgumentError

if TYPE_CHECKING:
    from irscale.table import ScoreTable


__all__ = ["aggregate", "Metric", "records", "system_index"]


class Metric(NamedTuple):
    """One per-topic value, field for field ``ir_measures.Metric``: ``query_id`` the
    topic, ``measure`` irscale's canonical name of the column (``"AP"``, ``"nDCG@10"``,
    ``"ranked(AP@30)"``; a string where ir_measures has a measure object), ``value`` a
    float."""

    query_id: str
    measure: str
    value: float


def system_index(table: ScoreTable, system: str | None) -> int:
    """The row of ``system`` in ``table``; ``None`` for the only system of a one-system table."""
    if system is None:
        if len(table.systems) == 1:
            return 0
        raise ArgumentError(
            f"this table holds {len(table.systems)} systems ({_names(table.systems)}); records and "
            "aggregates describe one run, like ir_measures: pass system=NAME"
        )
    if not isinstance(system, str):
        raise ArgumentError(f"system must be a run name (str), not {type(system).__name__} {system!r}")
    try:
        return table.systems.index(system)
    except ValueError:
        raise ArgumentError(f"no system {system!r} in this table (have: {_names(table.systems)})") from None


def records(table: ScoreTable, system: str | None = None) -> list[Metric]:
    """Per-topic values of one system as ``(query_id, measure, value)`` records.

    Parameters
    ----------
    table : ScoreTable
        From :func:`irscale.evaluate` or :func:`irscale.transform`.
    system : str, optional
        The run to report; may be left out when the table holds one run, else an
        :class:`~irscale.errors.ArgumentError` names the runs.

    Returns
    -------
    list of Metric
        Topic by topic in the table's order, and within a topic the measures in the
        table's column order (the order of ``ir_measures.iter_calc`` over pytrec_eval).
        Topics left out with ``missing_topics="drop"`` have no record (as in
        ``table.to_frame()``).

    Examples
    --------
    >>> from irscale import evaluate
    >>> from irscale.io import Qrels, Run
    >>> q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1)])
    >>> r = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)], name="r")
    >>> records(evaluate(q, [r], ["AP", "P@2"]))  # AP = (1/1 + 2/3) / 2, P@2 = 1/2
    [Metric(query_id='1', measure='AP', value=0.8333333333333333), Metric(query_id='1', measure='P@2', value=0.5)]
    """
    s = system_index(table, system)
    names = [str(m) for m in table.measures]
    values = table.values[:, s, :]
    return [
        Metric(topic, names[m], float(values[m, t]))
        for t, topic in enumerate(table.topics)
        for m in range(len(names))
        if not math.isnan(values[m, t])
    ]


def aggregate(table: ScoreTable, system: str | None = None) -> dict[str, float]:
    """Mean of each measure over topics for one system, ``{measure name: mean}``, like
    ``ir_measures.calc_aggregate`` (keys are irscale's canonical names).

    The means are ``table.mean()``'s row for the system, to the bit (topics left out with
    ``missing_topics="drop"`` are not counted). ``system`` as in :func:`records`.

    Examples
    --------
    >>> from irscale import evaluate
    >>> from irscale.io import Qrels, Run
    >>> q = Qrels.from_records([("1", "a", 1), ("2", "b", 1)])
    >>> r = Run.from_records([("1", "a", 2.0), ("2", "c", 2.0), ("2", "b", 1.0)], name="r")
    >>> aggregate(evaluate(q, [r], ["RR", "P@1"]))  # RR: (1 + 1/2) / 2; P@1: (1 + 0) / 2
    {'RR': 0.75, 'P@1': 0.5}
    """
    s = system_index(table, system)
    row = table.mean().iloc[s]
    return {str(name): float(v) for name, v in row.items()}


def _names(items, n: int = 5) -> str:
    shown = ", ".join(map(repr, items[:n]))
    return shown + (f" and {len(items) - n} more" if len(items) > n else "")
