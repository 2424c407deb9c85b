"""Scale properties of a measure on all judged runs of length N (SPEC section 5; the
2015, 2017 and 2019 papers of Ferrante, Ferro et al.).

Orders on REL^N, REL = {0..c}:

* ``set``: the set-based total order (2019, eq. 1): runs compared by the multiset of
  their grades (sorted descending, compared lexicographically); rank function SBTO;
* ``strong``: strong top-heaviness, lexicographic on the grades; rank function RBTO;
* ``weak``: weak top-heaviness, the partial order of prefix counts (2015, Section 4.2):
  r <= s iff for every grade g and rank k, r has at most as many grades >= g in its top
  k as s; its covers are one grade raised by one, or two adjacent grades a < b swapped;
* ``induced``: the total preorder of the measure's own values.

A measure given as a name is evaluated on its exact keys where irscale has them; any
Python callable ``f(runs (n, N) int array, c) -> values`` works too (floats; ties are
decided with a relative tolerance of 1e-12).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from irscale.errors import IrscaleError
from irscale.scales.spaces import all_runs, sbto_rank, space_for

ORDERS = ("set", "strong", "weak", "induced")


# -- measures as functions on runs ------------------------------------------------------------------

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

    def order_keys(self, runs):
        """Exact keys when known, else the float values snapped to 12 significant digits."""
        if self.keys is not None:
            return self.keys(runs)
        v = self.values(runs)
        scale = np.max(np.abs(v)) or 1.0
        return np.round(v / scale, 12)


def as_measure(measure, N: int, c: int = 1) -> MeasureFn:
    """A registered measure name (``"AP"``, ``"RBP(p=0.8)"``), a Measure, or a callable
    ``f(runs, c)``. Recall-base measures see RB = N (every run of the space can be
    perfect); their RB-free core orders runs the same way."""
    if callable(measure) and not hasattr(measure, "batch"):
        name = getattr(measure, "__name__", "measure")
        return MeasureFn(name, N, c, lambda r: np.asarray(measure(np.asarray(r), c), dtype=np.float64))
    from irscale.data import TopicStats
    from irscale.measures import parse_measure

    from irscale.errors import MeasureError

    try:
        m = parse_measure(measure)
    except MeasureError as e:
        if "needs a cutoff" not in str(e):
            raise
        m = parse_measure(f"{measure}@{N}")
    try:
        import dataclasses

        if hasattr(m, "cutoff") and getattr(m, "cutoff") is None:
            m = dataclasses.replace(m, cutoff=N)
    except (TypeError, ValueError):
        pass
    topics = TopicStats.single([N] * (c + 1))

    def values(runs):
        return np.asarray(m.batch(np.asarray(runs, dtype=np.int16)[None], topics)[0], dtype=np.float64)

    keys = None
    try:
        sp = space_for(m, N, c)
        from irscale.scales.spaces import PositionalSpace, RBPSpace

        exact_wide = isinstance(sp, (PositionalSpace, RBPSpace))  # Python-int keys beyond 64 bits
        if (sp.int64 or exact_wide) and sp.c == c and not (getattr(sp, "family", "") == "dcg"):
            keys = sp.keys
        elif getattr(sp, "family", "") == "dcg" and sp.c == c:
            keys = _dcg_keys(sp)
    except IrscaleError:
        pass
    return MeasureFn(str(m), N, c, values, keys, rb=N)


def _dcg_keys(sp):
    """DCG keys in value order: rank of the class-total vector among all of them."""
    from irscale.scales.engines import dcg_engine

    table = dcg_engine(sp)

    def keys(runs):
        k = sp.keys(np.asarray(runs))
        return table.phi_of_key[np.searchsorted(table.keys, k)]

    return keys


# -- orders ---------------------------------------------------------------------------------------------

def set_rank(runs: np.ndarray, c: int) -> np.ndarray:
    """Rank function of the set-based order (SBTO, 2019 paper eq. 3)."""
    return sbto_rank(runs, c)


def strong_rank(runs: np.ndarray, c: int) -> np.ndarray:
    """Rank function of the strong top-heaviness order (RBTO: base-(c+1) number)."""
    w = (c + 1) ** np.arange(runs.shape[1] - 1, -1, -1, dtype=np.int64)
    return runs.astype(np.int64) @ w


def run_index(runs: np.ndarray, c: int) -> np.ndarray:
    return strong_rank(runs, c)  # all_runs(N, c)[i] has index i


def weak_moves(N: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Generators of the weak order (its transitive closure is the order): one grade raised
    by one, or two adjacent grades a < b swapped. Pairs (lower, upper) of run indices."""
    runs = all_runs(N, c).astype(np.int64)
    idx = np.arange(len(runs))
    lo, hi = [], []
    w = (c + 1) ** np.arange(N - 1, -1, -1, dtype=np.int64)
    for k in range(N):  # raise one grade
        sel = runs[:, k] < c
        lo.append(idx[sel])
        hi.append(idx[sel] + w[k])
    for k in range(N - 1):  # swap adjacent a < b (b moves up)
        a, b = runs[:, k], runs[:, k + 1]
        sel = a < b
        lo.append(idx[sel])
        hi.append(idx[sel] + (b[sel] - a[sel]) * (w[k] - w[k + 1]))
    return np.concatenate(lo), np.concatenate(hi)


def weak_covers(N: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """The cover pairs (lower, upper) of the weak order, as run indices into all_runs.

    Binary: a relevant document added at rank N, or moved up by one rank (01 -> 10); the
    order is then graded by sum_k r_k (N - k + 1) and every maximal chain has N(N+1)/2
    steps. Graded: the generators' transitive reduction (up to 729 runs)."""
    runs = all_runs(N, c).astype(np.int64)
    idx = np.arange(len(runs))
    if c == 1:
        last = runs[:, N - 1] == 0
        lo, hi = [idx[last]], [idx[last] + 1]
        w = 2 ** np.arange(N - 1, -1, -1, dtype=np.int64)
        for k in range(N - 1):
            sel = (runs[:, k] == 0) & (runs[:, k + 1] == 1)
            lo.append(idx[sel])
            hi.append(idx[sel] + w[k] - w[k + 1])
        return np.concatenate(lo), np.concatenate(hi)
    if len(runs) > 729:
        raise IrscaleError(f"the graded weak order's covers are computed up to 729 runs ({c + 1} levels, N={N} "
                           f"has {len(runs)}); ordinality checks use its generators at any size")
    lo, hi = weak_moves(N, c)
    return _transitive_reduction(lo, hi, len(runs))


def maximal_chain(N: int, c: int = 1, pick: str = "first") -> np.ndarray:
    """One maximal chain of the weak order, bottom (all 0) to top (all c), as runs.

    ``pick="first"`` takes, at every step, the cover to the run with the smallest
    index (grades raised from the bottom rank up: a "bottom-up" chain); ``"last"`` the
    largest (relevance moved to the top first)."""
    runs = all_runs(N, c)
    lo, hi = weak_covers(N, c)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    starts = np.searchsorted(lo, np.arange(len(runs) + 1))
    chain, node = [0], 0
    while node != len(runs) - 1:
        ups = hi[starts[node]:starts[node + 1]]
        node = int(ups.min() if pick == "first" else ups.max())
        chain.append(node)
    return runs[chain]


def _transitive_reduction(lo, hi, n):
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(lo.tolist(), hi.tolist()))
    red = nx.transitive_reduction(g)
    e = np.array(list(red.edges()), dtype=np.int64).reshape(-1, 2)
    return e[:, 0], e[:, 1]


def weak_level(runs: np.ndarray) -> np.ndarray:
    """Height in the weak order's Hasse diagram: sum over ranks of g_k * (N - k + 1)."""
    N = runs.shape[1]
    return runs.astype(np.int64) @ np.arange(N, 0, -1)


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

    def explain(self) -> str:
        head = f"{self.check} of {self.measure} ({'order ' + self.order + ', ' if self.order else ''}N={self.N}, " \
               f"{self.levels} levels): {'holds' if self.holds else 'does NOT hold'}"
        if self.counterexample:
            ce = "; ".join(f"{k}={_show(v)}" for k, v in self.counterexample.items())
            head += f"\n  counterexample: {ce}"
        return head


def _show(v):
    if isinstance(v, np.ndarray):
        return "(" + ",".join(map(str, v.tolist())) + ")"
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    return str(v)


def _space(measure, N, levels):
    from irscale.validate import integer

    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    if levels ** N > 50_000_000:
        raise IrscaleError(f"{levels} relevance levels at N={N} make {levels ** N:,} runs, too many to enumerate "
                           "for a check; use a smaller N")
    c = levels - 1
    fn = measure if isinstance(measure, MeasureFn) else as_measure(measure, N, c)
    runs = all_runs(N, c)
    return fn, runs, c


def _rank(order: str, runs, c, fn):
    if order == "set":
        return set_rank(runs, c)
    if order == "strong":
        return strong_rank(runs, c)
    if order == "induced":
        return np.unique(fn.order_keys(runs), return_inverse=True)[1].reshape(-1)
    from irscale.errors import check_choice

    check_choice("order", order, ORDERS)
    raise AssertionError(order)  # pragma: no cover - check_choice raised


def is_ordinal(measure, order: str = "strong", N: int = 6, levels: int = 2) -> Verdict:
    """Is the measure an ordinal scale for the order: for a total order, equal rank =>
    equal value and higher rank => higher value (a strictly increasing function of the
    rank); for the weak (partial) order, a homomorphism: r <= s implies M(r) <= M(s),
    checked on every cover (ties of incomparable-looking runs, like ranks 1 and 2 of
    base-2 DCG, are allowed)."""
    fn, runs, c = _space(measure, N, levels)
    key = fn.order_keys(runs)
    vals = fn.values(runs)
    if order == "weak":
        lo, hi = weak_moves(N, c)  # monotone on the generators = monotone on the order
        bad = np.flatnonzero(key[hi] < key[lo])
        if len(bad):
            i, j = lo[bad[0]], hi[bad[0]]
            return Verdict("ordinal", fn.name, False, N, levels, order,
                           {"lower run": runs[i], "upper run": runs[j], "values": [vals[i], vals[j]]},
                           {"generating pairs": len(lo)})
        return Verdict("ordinal", fn.name, True, N, levels, order, details={"generating pairs": len(lo)})
    rank = _rank(order, runs, c, fn)
    o = np.lexsort((key, rank))
    r, k = rank[o], key[o]
    same = r[1:] == r[:-1]
    bad_eq = np.flatnonzero(same & (k[1:] != k[:-1]))
    if len(bad_eq):
        i, j = o[bad_eq[0]], o[bad_eq[0] + 1]
        return Verdict("ordinal", fn.name, False, N, levels, order,
                       {"runs of equal rank": [runs[i], runs[j]], "values": [vals[i], vals[j]]})
    # across ranks: the largest value of a rank must be below the smallest of the next
    first = np.flatnonzero(np.r_[True, ~same])
    last = np.r_[first[1:] - 1, len(o) - 1]
    bad = np.flatnonzero(k[last[:-1]] >= k[first[1:]])
    if len(bad):
        i, j = o[last[bad[0]]], o[first[bad[0] + 1]]
        return Verdict("ordinal", fn.name, False, N, levels, order,
                       {"lower run": runs[i], "upper run": runs[j], "values": [vals[i], vals[j]],
                        "ranks": [int(rank[i]), int(rank[j])]})
    return Verdict("ordinal", fn.name, True, N, levels, order, details={"classes": len(first)})


def is_interval(measure, order: str = "strong", N: int = 6, levels: int = 2, chain=None) -> Verdict:
    """Is the measure an interval scale for the order: ordinal, and its values equi-spaced
    along the rank function (total orders) or along every maximal chain of the weak order
    (equivalently, where all maximal chains have the same length, as in the binary case:
    every cover raises the value by the same amount). With ``chain`` (runs, e.g. from
    :func:`maximal_chain`), only equi-spacing along that chain is checked."""
    ordv = is_ordinal(measure, order, N, levels)
    fn, runs, c = _space(measure, N, levels)
    if not ordv.holds:
        return Verdict("interval", fn.name, False, N, levels, order, ordv.counterexample,
                       {"reason": "not ordinal"})
    vals = fn.values(runs)
    tol = 1e-9 * (np.max(np.abs(vals)) or 1.0)
    if chain is not None:
        chain = np.asarray(chain)
        v = vals[strong_rank(chain, c)]
        steps = np.diff(v)
        bad = np.flatnonzero(np.abs(steps - steps[0]) > tol)
        if len(bad):
            b = bad[0]
            return Verdict("interval", fn.name, False, N, levels, f"{order} (one chain)",
                           {"chain steps": [chain[0], chain[1], chain[b], chain[b + 1]],
                            "step 1": steps[0], "step 2": steps[b]})
        return Verdict("interval", fn.name, True, N, levels, f"{order} (one chain)",
                       details={"step": float(steps[0])})
    if order == "weak":
        lo, hi = weak_covers(N, c)
        inc = vals[hi] - vals[lo]
        bad = np.flatnonzero(np.abs(inc - inc[0]) > tol)
        if len(bad):
            a, b = 0, bad[0]
            return Verdict("interval", fn.name, False, N, levels, order,
                           {"cover 1": [runs[lo[a]], runs[hi[a]]], "step 1": inc[a],
                            "cover 2": [runs[lo[b]], runs[hi[b]]], "step 2": inc[b]})
        return Verdict("interval", fn.name, True, N, levels, order, details={"step": float(inc[0])})
    rank = _rank(order, runs, c, fn)
    ranks, first = np.unique(rank, return_index=True)
    v = vals[first]
    if order in ("set", "strong"):
        # equi-spaced along the rank function: value affine in the rank (missing ranks
        # of the function would be gaps; the rank functions here are onto 0..size-1)
        steps = np.diff(v) / np.diff(ranks)
    else:
        steps = np.diff(v)
    bad = np.flatnonzero(np.abs(steps - steps[0]) > tol) if len(steps) else []
    if len(bad):
        b = bad[0]
        return Verdict("interval", fn.name, False, N, levels, order,
                       {"runs": [runs[first[0]], runs[first[1]], runs[first[b]], runs[first[b + 1]]],
                        "step 1": steps[0], "step 2": steps[b]})
    return Verdict("interval", fn.name, True, N, levels, order,
                   details={"step": float(steps[0]) if len(steps) else 0.0})


def _moves_setup(measure, N, levels):
    """What swap and replacement checks share: the measure on all runs, and the
    positional weights that turn a change of grades into a change of run index."""
    fn, runs, c = _space(measure, N, levels)
    w = (c + 1) ** np.arange(N - 1, -1, -1, dtype=np.int64)
    return fn, runs, c, fn.order_keys(runs), fn.values(runs), w, np.arange(len(runs))


def replacement_holds(measure, N: int = 6, levels: int = 2) -> Verdict:
    """2015 paper: raising the grade at one rank never lowers the measure."""
    fn, runs, c, key, vals, w, idx = _moves_setup(measure, N, levels)
    for k in range(N):
        for up in range(1, c + 1):
            sel = runs[:, k] + up <= c
            bad = np.flatnonzero(key[idx[sel] + up * w[k]] < key[idx[sel]])
            if len(bad):
                i = idx[sel][bad[0]]
                j = i + up * w[k]
                return Verdict("replacement", fn.name, False, N, levels, None,
                               {"run": runs[i], "replaced": runs[j], "values": [vals[i], vals[j]]})
    return Verdict("replacement", fn.name, True, N, levels)


def swap_holds(measure, N: int = 6, levels: int = 2) -> Verdict:
    """2015 paper: moving a more relevant document above a less relevant one (swapping
    ranks i < j with g_i < g_j) never lowers the measure."""
    fn, runs, c, key, vals, w, idx = _moves_setup(measure, N, levels)
    for i in range(N):
        for j in range(i + 1, N):
            a, b = runs[:, i].astype(np.int64), runs[:, j].astype(np.int64)
            sel = a < b
            src = idx[sel]
            dst = src + (b[sel] - a[sel]) * (w[i] - w[j])
            bad = np.flatnonzero(key[dst] < key[src])
            if len(bad):
                s, d = src[bad[0]], dst[bad[0]]
                return Verdict("swap", fn.name, False, N, levels, None,
                               {"run": runs[s], "swapped": runs[d], "ranks": [i + 1, j + 1],
                                "values": [vals[s], vals[d]]})
    return Verdict("swap", fn.name, True, N, levels)


# -- balancing index (2015 paper, Section 6) ------------------------------------------------------------

def balancing_index(measure, n: int, q_min: int = 1, q_max: int = 1, levels: int | None = None) -> int:
    """Algorithm 1 of the 2015 paper: the largest b such that the run with q_max at rank 1
    (and nothing else) scores at most the run with q_min at ranks b..n."""
    from irscale.validate import integer

    n = integer("n", n, minimum=1)
    q_min = integer("q_min", q_min, minimum=1)
    q_max = integer("q_max", q_max, minimum=1)
    levels = integer("levels", levels, minimum=max(q_min, q_max) + 1, none=True) or q_max + 1
    fn = measure if isinstance(measure, MeasureFn) else as_measure(measure, n, levels - 1)
    top = np.zeros((1, n), dtype=np.int64)
    top[0, 0] = q_max
    tails = np.zeros((n, n), dtype=np.int64)
    for b in range(1, n + 1):
        tails[b - 1, b - 1:] = q_min
    if fn.keys is not None:  # exact comparison on the measure's exact keys
        ref, cmp, tol = fn.keys(top)[0], fn.keys(tails), 0
    else:
        ref = fn.values(top)[0]
        cmp = fn.values(tails)
        tol = 1e-12 * max(abs(ref), 1.0)
    b = n
    while b > 0 and ref > cmp[b - 1] + tol:
        b -= 1
    return b


def balancing_analytic(family: str, n: int, **params) -> int:
    """The closed forms of the 2015 paper (binary relevance: q_min = q_max = 1)."""
    if family == "AP":
        best = 0
        for b in range(1, n + 1):
            if sum(k / (k + b - 1) for k in range(1, n - b + 2)) >= 1 - 1e-12:
                best = b
        return best
    if family == "RBP":
        # RBP(top) = 1 - p <= RBP(tail from b) = p^(b-1) - p^n  <=>  b <= log_p(1 - p + p^n) + 1
        # (the paper prints ">=", which has no maximum; this is the bound its Figure 1a shows)
        from fractions import Fraction

        p = Fraction(str(params["p"]))
        rhs = 1 - p + p ** n
        best, power = 0, Fraction(1)  # power = p^(b-1)
        for b in range(1, n + 1):
            if power >= rhs:
                best = b
            else:
                break
            power *= p
        return best
    if family == "ERR":
        # the continuation probability restarts at b: exponent k - b (the paper prints k - 1)
        x_min, x_max = params.get("x_min", 0.5), params.get("x_max", 0.5)
        best = 0
        for b in range(1, n + 1):
            if x_min * sum((1 - x_min) ** (k - b) / k for k in range(b, n + 1)) >= x_max - 1e-12:
                best = b
        return best
    raise IrscaleError(f"no analytic balancing index for {family}")


# -- intervalness summary ------------------------------------------------------------------------------------

def intervalness(measure, N: int = 10, levels: int = 2) -> dict:
    """How far the measure's values are from equi-spaced: Kendall's tau between the
    measure and its ranked version over all runs (1 = same order, by construction), the
    Pearson correlation between them (1 = affine, i.e. interval), and the spread of the
    gaps between consecutive distinct values."""
    from scipy import stats as sps

    fn, runs, c = _space(measure, N, levels)
    key = fn.order_keys(runs)
    vals = fn.values(runs)
    uk, first, phi = np.unique(key, return_index=True, return_inverse=True)
    v = vals[first]
    gaps = np.diff(v)
    return {"measure": fn.name, "N": N, "levels": levels, "runs": len(runs), "distinct": len(uk),
            "pearson_r_value_vs_rank": float(sps.pearsonr(vals, phi.reshape(-1) + 1).statistic) if len(uk) > 1 else 1.0,
            "gap_min": float(gaps.min()) if len(gaps) else 0.0, "gap_max": float(gaps.max()) if len(gaps) else 0.0,
            "gap_ratio": float(gaps.max() / gaps.min()) if len(gaps) and gaps.min() > 0 else 1.0}
