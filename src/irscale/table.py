"""The score table: per-topic scores of systems on topics for measures (:class:`ScoreTable`),
its interval-scaled columns (:class:`Ranked`, :class:`HalfWidth`), and which of its original
measures are not interval scales (:func:`not_interval`, asking the one owner of that question,
:func:`irscale.scales.permissible.scale_of`). The table states facts; the callers that average
it (the CLI, the reports, :func:`irscale.plan.warn_not_interval`) say what is not meaningful."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field

import numpy as np

from irscale.data import (
    JudgedRuns,
)
from irscale.errors import (
    IrscaleError,
)
from irscale.measures import Measure, at_depth

__all__ = ["HalfWidth", "Ranked", "ResidualEnd", "ScoreTable", "WARN_CHECK_RUNS", "not_interval", "scale_as_named"]


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Per-topic scores of S systems on T topics for M measures.

    ``values[m, s, t]`` is the score of system s on topic t for measure m; NaN marks a
    topic left out of a system's scores (``missing_topics="drop"``).
    """

    measures: tuple[
        Measure | Ranked | HalfWidth | ResidualEnd, ...
    ]  # columns: a Measure, its Ranked version, a HalfWidth
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    provenance: dict = field(default_factory=dict)
    judged: JudgedRuns | None = field(default=None, repr=False)  # the grades behind the scores
    # bounded ranked columns (transform's approx=): str(column) -> (systems, topics) ids of the
    # exact values (equal ids: equal values), which tell certain ties from uncertain orders
    exact_ids: dict = field(default_factory=dict, repr=False)

    def to_frame(self):
        """Tidy pandas DataFrame with columns system, topic, measure, value."""
        import pandas as pd

        M, S, T = self.values.shape
        return (
            pd.DataFrame(
                {
                    "system": np.repeat(np.array(self.systems, dtype=object), T).tolist() * M,
                    "topic": list(self.topics) * (S * M),
                    "measure": np.repeat(np.array([str(m) for m in self.measures], dtype=object), S * T),
                    "value": self.values.reshape(-1),
                }
            )
            .dropna(subset=["value"])
            .reset_index(drop=True)
        )

    def mean(self):
        """Mean over topics: DataFrame indexed by system, one column per measure
        (topics left out with ``missing_topics="drop"`` are not counted).

        A mean treats differences of scores as comparable: it is meaningful on an interval
        scale. Which measures are shown not to be one at their run length (AP, RR, nDCG,
        ...) is :func:`not_interval`'s answer; the callers that show means say it
        (:func:`irscale.plan.warn_not_interval`: the CLI; the notebook display notes it), the
        table itself does not."""
        import pandas as pd

        return pd.DataFrame(
            self.mean_values().T, index=pd.Index(self.systems, name="system"), columns=[str(m) for m in self.measures]
        )

    def mean_values(self) -> np.ndarray:
        """:meth:`mean` as an array, measures x systems, without pandas (the CLI's tables)."""
        with np.errstate(invalid="ignore"):
            return np.nanmean(self.values, axis=2) if np.isnan(self.values).any() else self.values.mean(axis=2)

    def records(self, system: str | None = None):
        """Per-topic values of one system as ir_measures-style ``Metric(query_id, measure,
        value)`` records; ``system`` may be left out when the table holds one run
        (see :func:`irscale.report.records.records`)."""
        from irscale.report.records import records

        return records(self, system)

    def aggregate(self, system: str | None = None) -> dict[str, float]:
        """``{measure: mean}`` of one system, like ``ir_measures.calc_aggregate`` (the
        means of :meth:`mean`; see :func:`irscale.report.records.aggregate`)."""
        from irscale.report.records import aggregate

        return aggregate(self, system)

    def matrix(self, measure: str | Measure):
        """Topics x systems DataFrame of one measure (the input of the statistics)."""
        import pandas as pd

        m = self.index(measure)
        return pd.DataFrame(
            self.values[m].T, index=pd.Index(self.topics, name="topic"), columns=pd.Index(self.systems, name="system")
        )

    def index(self, measure: str | Measure) -> int:
        from irscale.measures import parse_measure

        names = [str(x) for x in self.measures]
        if str(measure) in names:
            return names.index(str(measure))
        m = parse_measure(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            raise IrscaleError(f"measure {m} was not evaluated (have: {', '.join(map(str, self.measures))})") from None

    def _repr_html_(self) -> str:
        """A compact display for notebooks: the shape, each system's mean per measure (at
        most ``irscale._display.MAX_ROWS`` systems and ``MAX_COLS`` measures shown, the rest
        counted) and notes on the ranked columns and on means that are not meaningful.
        The means are :meth:`mean`'s; a note says which are not meaningful (:func:`not_interval`)."""
        from html import escape

        from irscale._display import MAX_COLS, MAX_ROWS, caption, card, table

        M, S, T = self.values.shape
        cols = self.values[:MAX_COLS, :MAX_ROWS]  # only what is shown is averaged
        with warnings.catch_warnings(), np.errstate(invalid="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # a row of NaN: no mean (shown as a dash)
            means = np.nanmean(cols, axis=2) if np.isnan(cols).any() else cols.mean(axis=2)
        rows = [[s, *means[:, i]] for i, s in enumerate(self.systems[:MAX_ROWS])]
        notes = []
        ranked = [str(m) for m in self.measures if isinstance(m, Ranked)]
        if ranked:
            notes.append(
                f"{len(ranked)} ranked column{'s' * (len(ranked) > 1)} (interval scales: phi, the rank of the "
                "measure's value among the distinct values of all runs of length N)"
            )
        if any(isinstance(m, HalfWidth) for m in self.measures):
            notes.append("halfwidth columns: the exact normalised phi lies within the midpoint &plusmn; half-width")
        try:
            bad = list(not_interval(self))
        except IrscaleError:  # a measure the checks cannot settle: no note
            bad = []
        if bad:
            notes.append(
                "means of " + escape(", ".join(bad)) + " are not meaningful (not interval scales at their run "
                "length): irscale.transform gives their ranked versions"
            )
        if np.isnan(self.values).any():
            notes.append("topics left out of a system's scores are not counted in its means")
        notes.append("per topic: .matrix(measure), .to_frame(); means: .mean()")
        title = (
            f"ScoreTable: {M:,} measure{'s' * (M != 1)} × {S:,} system{'s' * (S != 1)} × {T:,} topic{'s' * (T != 1)}"
        )
        body = caption("mean over topics") + table([str(m) for m in self.measures], rows, index="system", total=S)
        return card(title, [], body, notes)


WARN_CHECK_RUNS = 2**12  # runs the warnings check a measure without a statement on at most (cheap)


def not_interval(table: ScoreTable) -> dict[str, tuple[int, object]]:
    """The original (not ranked) measures of ``table`` that are shown not to be interval
    scales on runs of their length, as :func:`irscale.scales.permissible.scale_of` (the one
    owner of that question) says: ``{name: (N, Statement)}``. N is the measure's cutoff,
    else the longest run judged; levels are the qrels' (binary measures live on 2 whatever
    they are). A measure the papers say nothing about is checked over at most
    :data:`WARN_CHECK_RUNS` runs; where that does not decide, no claim is made."""
    judged = table.judged
    out = {}
    for m in table.measures:
        if isinstance(m, Ranked) or not isinstance(m, Measure):
            continue
        N = getattr(m, "cutoff", None)
        if N is None:
            if judged is None:
                continue
            N = int(np.max(judged.num_ret, initial=1))
        levels = max(judged.topics.max_grade, 1) + 1 if judged is not None else 2
        values = judged.topics.values if judged is not None else None
        said = scale_as_named(m, values, max(int(N), 1), levels, max_runs=WARN_CHECK_RUNS)
        if said.established and not said.interval:
            out[str(m)] = (int(N), said)
    return out


def scale_as_named(m: Measure, values, N: int, levels: int, **kw):
    """The scale owner's verdict (:func:`irscale.scales.permissible.scale_of`) on ``m`` as
    computed on grades ``values`` (:meth:`Measure.for_grades`; None: integer grades), its
    statement naming ``m`` as written (real-valued grades compute nDCG with their gain map)."""
    from irscale.scales.permissible import scale_of

    computed = m.for_grades(values)
    said = scale_of(computed, N, levels, **kw)
    if computed is m:
        return said
    return dataclasses.replace(said, measure=str(at_depth(m, N)))


@dataclass(frozen=True)
class Ranked:
    """The interval-scaled ("ranked") version of ``measure`` at run length ``N``: phi of
    the measure's value: the number of distinct values of the measure over all judged runs
    of length N that are at most it (Ferrante, Ferro & Fuhr 2021). A column of a
    :class:`ScoreTable` like a :class:`~irscale.measures.Measure`: renderers read ``str``,
    ``label``, ``trec_eval_name`` and ``is_count`` of either. ``theory``: what the theory
    says about the original measure on its run space
    (:class:`irscale.scales.theory.Statement`: the order under which it is an interval or
    ordinal scale, or not ordinal, and whether phi only equi-spaces the measure's own
    order); None for measures the papers say nothing about."""

    measure: Measure
    N: int
    ties: str = "unq"
    normalized: bool = False
    theory: object = field(default=None, compare=False)  # scales.theory.Statement | None
    midpoint: bool = False  # the midpoint of certified bounds (transform's approx=), not exact
    trec_eval_name = None  # trec_eval has no ranked measures
    is_count = False

    def __str__(self):
        opts = "".join(
            [
                f", ties={self.ties}" if self.ties != "unq" else "",
                ", normalized" if self.normalized else "",
                ", midpoint" if self.midpoint else "",
            ]
        )
        return f"ranked({self.measure}{opts})"

    @property
    def label(self) -> str:
        return f"{self.measure.label}_R"


@dataclass(frozen=True)
class HalfWidth:
    """The half-width of a bounded ranked column (``transform(..., approx=TOL)``): where no
    exact engine reaches N, ``ranked`` holds the midpoint of certified bounds on the
    normalised phi (:func:`irscale.scales.bounds.phi_bounds`), and this column the half of
    their width, so the exact normalised phi lies within midpoint +- half-width (0 where
    the value is exact). The mean of a system's half-widths bounds the error of its mean."""

    ranked: Ranked
    trec_eval_name = None
    is_count = False

    def __str__(self):
        return f"halfwidth({self.ranked})"

    @property
    def label(self) -> str:
        return f"{self.ranked.label}_hw"


@dataclass(frozen=True)
class ResidualEnd:
    """phi at the upper end of RBP's residual (``transform(..., residuals=True)``): the
    ranked value, under ``ranked``'s tie strategy, of the run whose unknown ranks within N
    (unjudged documents, those judged below 0, and the ranks past the run's end) all hold
    the top grade. RBP's ranked column is phi at the lower end (the unknown ranks gain
    nothing), so the two bracket phi of every way the unknown documents could be judged;
    the weight below rank N (p^N, part of ``rbp_resid``) lies outside the runs of length N."""

    ranked: Ranked
    trec_eval_name = None
    is_count = False

    def __str__(self):
        return f"{str(self.ranked)[:-1]}, residual end)"

    @property
    def label(self) -> str:
        return f"{self.ranked.label}_hi"
