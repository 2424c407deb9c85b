"""Scale properties of a measure on all judged runs of length N (the 2015, 2017 and
2019 papers of Ferrante, Ferro et al.): is it an ordinal or an interval
scale for an order of :mod:`irscale.scales.orders`, do swap and replacement hold, and how
far are its values from equi-spaced.

A measure given as a name is evaluated on all runs once per :class:`MeasureFn` (runs,
values and order keys are shared by every check given the same ``MeasureFn``). Its order
keys are the exact keys of its run space (:func:`irscale.scales.space_for`); where those
keys only group ties and are not in value order (DCG, nDCG), the keys' phi in the
measure's cached rank map (:func:`irscale.scales.build`). Any Python callable
``f(runs (n, N) int array, c) -> values`` works too: it is wrapped in a
:class:`~irscale.measures.FunctionMeasure`, and, like every measure without exact keys of
its own, its runs tie exactly when its float64 values are equal
(:func:`irscale.scales.spaces.float_keys`; no tolerance).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from irscale.errors import ArgumentError, IrscaleError, check_choice, count_text
from irscale.scales.orders import ORDERS, positional_weights, set_rank, strong_rank, weak_covers, weak_moves
from irscale.validate import integer

if TYPE_CHECKING:
    from irscale.scales.rankmap import RankMap

__all__ = [
    "as_measure",
    "intervalness",
    "is_interval",
    "is_ordinal",
    "MAX_RUNS",
    "MeasureFn",
    "replacement_holds",
    "swap_holds",
    "Verdict",
]


MAX_RUNS = 50_000_000  # runs a check enumerates at most


# -- measures as functions on runs ------------------------------------------------------------------


@dataclass(eq=False)
class _AllRuns:
    """A measure on all (c+1)^N runs: the runs, their order keys and values, and what the
    checks derive from them (computed once)."""

    runs: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    _distinct: tuple | None = None
    _ranks: dict = field(default_factory=dict)

    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """``(first, inverse)``: a run of each distinct value (ascending) and the value
        class of every run (0-based, the induced order's rank)."""
        if self._distinct is None:
            _, first, inverse = np.unique(self.keys, return_index=True, return_inverse=True)
            self._distinct = first, inverse.reshape(-1)
        return self._distinct

    def rank(self, order: str, c: int) -> np.ndarray:
        if order not in self._ranks:
            if order == "set":
                self._ranks[order] = set_rank(self.runs, c)
            elif order == "strong":
                self._ranks[order] = strong_rank(self.runs, c)
            elif order == "induced":
                self._ranks[order] = self.distinct()[1]
            else:
                check_choice("order", order, ORDERS)
                raise AssertionError(order)  # pragma: no cover - check_choice raised
        return self._ranks[order]


@dataclass
class MeasureFn:
    """A measure on runs of length N with grades 0..c: ``values(runs)`` (float64) and,
    when exact, ``keys(runs)`` ordered and tied exactly like the values."""

    name: str
    N: int
    c: int
    values: Callable[[np.ndarray], np.ndarray]
    keys: Callable[[np.ndarray], np.ndarray] | None = None
    rb: int | None = None
    _all: _AllRuns | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.keys is None:  # ties as for every measure without exact keys: equal float64 values
            from irscale.scales.spaces import float_keys

            values = self.values
            self.keys = lambda runs: float_keys(values(runs))

    def order_keys(self, runs):
        """Exact keys: ordered and tied exactly like the measure."""
        assert self.keys is not None  # __post_init__ sets the keys where none are given
        return self.keys(runs)

    def on_all_runs(self) -> _AllRuns:
        """The measure on all (c+1)^N runs (computed on first use, then shared)."""
        if self._all is None:
            from irscale.scales.spaces import all_runs

            runs = all_runs(self.N, self.c)
            vals = self.values(runs)
            keys = self.order_keys(runs)
            self._all = _AllRuns(runs, keys, vals)
        return self._all


def as_measure(measure, N: int, c: int = 1) -> MeasureFn:
    """A registered measure name (``"AP"``, ``"RBP(p=0.8)"``), a Measure, or a callable
    ``f(runs, c)`` (wrapped in a :class:`~irscale.measures.FunctionMeasure`: one protocol
    for user measures, ties decided as for every measure without a space of its own).
    Recall-base measures see RB = N (every run of the space can be perfect); their
    RB-free core orders runs the same way."""
    import dataclasses

    from irscale.data import TopicStats
    from irscale.measures import FunctionMeasure, at_depth, parse_measure
    from irscale.scales.spaces import GenericSpace, space_for

    if callable(measure) and not hasattr(measure, "batch"):
        measure = FunctionMeasure(fn=measure, name=getattr(measure, "__name__", "measure"))
    m = parse_measure(measure, default_cutoff=N)
    if any(f.name == "cutoff" for f in dataclasses.fields(m)):
        m = at_depth(m, N)
    topics = TopicStats.single([N] * (c + 1))

    def values(runs):
        # each run a system on the one topic (measures index per-topic statistics by topic)
        return np.asarray(m.batch(np.asarray(runs, dtype=np.int16)[:, None, :], topics)[:, 0], dtype=np.float64)

    try:
        keys = _space_keys(space_for(m, N, c))
    except IrscaleError:  # no run space (Rprec, bpref): exact float values, as a user measure's
        keys = None
    if keys is None:
        keys = _space_keys(GenericSpace(m, N, 1 if not m.graded else c))
    return MeasureFn(str(m), N, c, values, keys, rb=N)


def _space_keys(space) -> Callable[[np.ndarray], np.ndarray] | None:
    """Exact order keys of runs (grades 0..c of the check, mapped onto the space): the
    space's keys where they are in value order, else their phi in the measure's rank
    map, built (or loaded from the cache) on first use. None beyond the runs a check
    enumerates."""

    def exact(runs):
        return space.keys(space.grade_view(np.asarray(runs)))

    if space.ordered_keys:
        return exact
    if space.n_runs > MAX_RUNS:
        return None
    rank_map: list[RankMap] = []

    def phi(runs):
        if not rank_map:
            from irscale.scales.rankmap import build

            rank_map.append(build(space.measure, space.N, space.c + 1))
        return rank_map[0].phi_keys(exact(runs))

    return phi


# -- verdicts --------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    """Outcome of a check: ``holds``, and when it fails a counterexample (runs and values)."""

    check: str
    measure: str
    holds: bool
    N: int
    levels: int
    order: str | None = None
    counterexample: dict | None = None
    details: dict = field(default_factory=dict)

    def __bool__(self):
        return self.holds

    def counterexample_text(self) -> str:
        """The counterexample as one line (``name=value; ...``), empty when there is none."""
        return "; ".join(f"{k}={_show(v)}" for k, v in (self.counterexample or {}).items())

    def explain(self) -> str:
        head = (
            f"{self.check} of {self.measure} ({'order ' + self.order + ', ' if self.order else ''}N={self.N}, "
            f"{self.levels} levels): {'holds' if self.holds else 'does NOT hold'}"
        )
        if self.counterexample:
            head += f"\n  counterexample: {self.counterexample_text()}"
        return head


def _show(v):
    if isinstance(v, np.ndarray):
        return "(" + ",".join(map(str, v.tolist())) + ")"
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    return str(v)


def _prepare(measure, N, levels) -> tuple[MeasureFn, _AllRuns, int]:
    """Validate the arguments; the measure on all runs (shared when ``measure`` is a
    MeasureFn already evaluated)."""
    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    if levels**N > MAX_RUNS:
        raise IrscaleError(
            f"{levels} relevance levels at N={N} make {count_text(levels**N, levels)} runs, too many "
            "to enumerate "
            "for a check; use a smaller N"
        )
    c = levels - 1
    if isinstance(measure, MeasureFn):
        if (measure.N, measure.c) != (N, c):
            raise ArgumentError(
                f"{measure.name} was made for N={measure.N} with {measure.c + 1} levels, not "
                f"N={N} with {levels}: call as_measure(measure, N, levels - 1) again"
            )
        fn = measure
    else:
        fn = as_measure(measure, N, c)
    return fn, fn.on_all_runs(), c


def is_ordinal(measure, order: str = "strong", N: int = 6, levels: int = 2) -> Verdict:
    """Is the measure an ordinal scale for the order: for a total order, equal rank =>
    equal value and higher rank => higher value (a strictly increasing function of the
    rank); for the weak (partial) order, a homomorphism: r <= s implies M(r) <= M(s),
    checked on every cover (ties of incomparable-looking runs, like ranks 1 and 2 of
    base-2 DCG, are allowed)."""
    fn, on, c = _prepare(measure, N, levels)
    return _ordinal(fn, on, order, c, levels)


def _ordinal(fn: MeasureFn, on: _AllRuns, order: str, c: int, levels: int) -> Verdict:
    N, runs, key, vals = fn.N, on.runs, on.keys, on.values
    if order == "weak":
        lo, hi = weak_moves(N, c)  # monotone on the generators = monotone on the order
        bad = np.flatnonzero(key[hi] < key[lo])
        if len(bad):
            i, j = lo[bad[0]], hi[bad[0]]
            return Verdict(
                "ordinal",
                fn.name,
                False,
                N,
                levels,
                order,
                {"lower run": runs[i], "upper run": runs[j], "values": [vals[i], vals[j]]},
                {"generating pairs": len(lo)},
            )
        return Verdict("ordinal", fn.name, True, N, levels, order, details={"generating pairs": len(lo)})
    rank = on.rank(order, c)
    o = np.lexsort((key, rank))
    r, k = rank[o], key[o]
    same = r[1:] == r[:-1]
    bad_eq = np.flatnonzero(same & (k[1:] != k[:-1]))
    if len(bad_eq):
        i, j = o[bad_eq[0]], o[bad_eq[0] + 1]
        return Verdict(
            "ordinal",
            fn.name,
            False,
            N,
            levels,
            order,
            {"runs of equal rank": [runs[i], runs[j]], "values": [vals[i], vals[j]]},
        )
    # across ranks: the largest value of a rank must be below the smallest of the next
    first = np.flatnonzero(np.r_[True, ~same])
    last = np.r_[first[1:] - 1, len(o) - 1]
    bad = np.flatnonzero(k[last[:-1]] >= k[first[1:]])
    if len(bad):
        i, j = o[last[bad[0]]], o[first[bad[0] + 1]]
        return Verdict(
            "ordinal",
            fn.name,
            False,
            N,
            levels,
            order,
            {
                "lower run": runs[i],
                "upper run": runs[j],
                "values": [vals[i], vals[j]],
                "ranks": [int(rank[i]), int(rank[j])],
            },
        )
    return Verdict("ordinal", fn.name, True, N, levels, order, details={"classes": len(first)})


def is_interval(measure, order: str = "strong", N: int = 6, levels: int = 2, chain=None) -> Verdict:
    """Is the measure an interval scale for the order: ordinal, and its values equi-spaced
    along the rank function (total orders) or along every maximal chain of the weak order
    (equivalently, where all maximal chains have the same length, as in the binary case:
    every cover raises the value by the same amount). With ``chain`` (runs, e.g. from
    :func:`~irscale.scales.orders.maximal_chain`), only equi-spacing along that chain is
    checked."""
    fn, on, c = _prepare(measure, N, levels)
    ordv = _ordinal(fn, on, order, c, levels)
    if not ordv.holds:
        return Verdict("interval", fn.name, False, N, levels, order, ordv.counterexample, {"reason": "not ordinal"})
    runs, vals = on.runs, on.values
    tol = 1e-9 * (np.max(np.abs(vals)) or 1.0)
    if chain is not None:
        chain = np.asarray(chain)
        v = vals[strong_rank(chain, c)]
        steps = np.diff(v)
        bad = np.flatnonzero(np.abs(steps - steps[0]) > tol)
        if len(bad):
            b = bad[0]
            return Verdict(
                "interval",
                fn.name,
                False,
                N,
                levels,
                f"{order} (one chain)",
                {"chain steps": [chain[0], chain[1], chain[b], chain[b + 1]], "step 1": steps[0], "step 2": steps[b]},
            )
        return Verdict("interval", fn.name, True, N, levels, f"{order} (one chain)", details={"step": float(steps[0])})
    if order == "weak":
        lo, hi = weak_covers(N, c)
        inc = vals[hi] - vals[lo]
        bad = np.flatnonzero(np.abs(inc - inc[0]) > tol)
        if len(bad):
            a, b = 0, bad[0]
            return Verdict(
                "interval",
                fn.name,
                False,
                N,
                levels,
                order,
                {
                    "cover 1": [runs[lo[a]], runs[hi[a]]],
                    "step 1": inc[a],
                    "cover 2": [runs[lo[b]], runs[hi[b]]],
                    "step 2": inc[b],
                },
            )
        return Verdict("interval", fn.name, True, N, levels, order, details={"step": float(inc[0])})
    if order == "induced":  # the value classes, ascending
        first = on.distinct()[0]
        steps = np.diff(vals[first])
    else:
        # equi-spaced along the rank function: value affine in the rank (missing ranks
        # of the function would be gaps; the rank functions here are onto 0..size-1)
        ranks, first = np.unique(on.rank(order, c), return_index=True)
        steps = np.diff(vals[first]) / np.diff(ranks)
    bad = np.flatnonzero(np.abs(steps - steps[0]) > tol) if len(steps) else np.empty(0, dtype=np.intp)
    if len(bad):
        b = bad[0]
        return Verdict(
            "interval",
            fn.name,
            False,
            N,
            levels,
            order,
            {
                "runs": [runs[first[0]], runs[first[1]], runs[first[b]], runs[first[b + 1]]],
                "step 1": steps[0],
                "step 2": steps[b],
            },
        )
    return Verdict(
        "interval", fn.name, True, N, levels, order, details={"step": float(steps[0]) if len(steps) else 0.0}
    )


def replacement_holds(measure, N: int = 6, levels: int = 2) -> Verdict:
    """2015 paper: raising the grade at one rank never lowers the measure."""
    fn, on, c = _prepare(measure, N, levels)
    runs, key, vals = on.runs, on.keys, on.values
    w, idx = positional_weights(N, c), np.arange(len(runs))  # a change of grades as a change of run index
    for k in range(N):
        for up in range(1, c + 1):
            sel = runs[:, k] + up <= c
            bad = np.flatnonzero(key[idx[sel] + up * w[k]] < key[idx[sel]])
            if len(bad):
                i = idx[sel][bad[0]]
                j = i + up * w[k]
                return Verdict(
                    "replacement",
                    fn.name,
                    False,
                    N,
                    levels,
                    None,
                    {"run": runs[i], "replaced": runs[j], "values": [vals[i], vals[j]]},
                )
    return Verdict("replacement", fn.name, True, N, levels)


def swap_holds(measure, N: int = 6, levels: int = 2) -> Verdict:
    """2015 paper: moving a more relevant document above a less relevant one (swapping
    ranks i < j with g_i < g_j) never lowers the measure."""
    fn, on, c = _prepare(measure, N, levels)
    runs, key, vals = on.runs, on.keys, on.values
    w, idx = positional_weights(N, c), np.arange(len(runs))
    for i in range(N):
        for j in range(i + 1, N):
            a, b = runs[:, i].astype(np.int64), runs[:, j].astype(np.int64)
            sel = a < b
            src = idx[sel]
            dst = src + (b[sel] - a[sel]) * (w[i] - w[j])
            bad = np.flatnonzero(key[dst] < key[src])
            if len(bad):
                s, d = src[bad[0]], dst[bad[0]]
                return Verdict(
                    "swap",
                    fn.name,
                    False,
                    N,
                    levels,
                    None,
                    {"run": runs[s], "swapped": runs[d], "ranks": [i + 1, j + 1], "values": [vals[s], vals[d]]},
                )
    return Verdict("swap", fn.name, True, N, levels)


# -- intervalness summary ------------------------------------------------------------------------------------


def intervalness(measure, N: int = 10, levels: int = 2) -> dict:
    """How far the measure's values are from equi-spaced: the Pearson correlation between
    the measure and its ranked version (phi, the rank of its value among the distinct
    values) over all runs (1 = affine, i.e. interval), and the spread of the gaps between
    consecutive distinct values."""
    from scipy import stats as sps

    fn, on, c = _prepare(measure, N, levels)
    first, phi = on.distinct()
    vals = on.values
    gaps = np.diff(vals[first])
    return {
        "measure": fn.name,
        "N": N,
        "levels": levels,
        "runs": len(on.runs),
        "distinct": len(first),
        "pearson_r_value_vs_rank": float(sps.pearsonr(vals, phi + 1).statistic) if len(first) > 1 else 1.0,
        "gap_min": float(gaps.min()) if len(gaps) else 0.0,
        "gap_max": float(gaps.max()) if len(gaps) else 0.0,
        "gap_ratio": float(gaps.max() / gaps.min()) if len(gaps) and gaps.min() > 0 else 1.0,
    }
