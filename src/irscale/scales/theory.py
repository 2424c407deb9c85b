"""What the theory says about each ranked measure, in one place (issue 11, item 4).

For a measure on its run space REL^N (N ranks, c + 1 relevance degrees) a
:class:`Statement` names the order on runs the papers study it under (``"strong"``: strong
top-heaviness, lexicographic on the grades; ``"set"``: the set-based order) and whether
the original measure is an ``"interval"`` scale, only ``"ordinal"``, or ``"not ordinal"``
under that order, with a one-line reason and the section it comes from:

* Ferrante, Ferro & Pontarollo, "A formal theory to determine scale properties of
  evaluation measures" (SEBD 2019, the "2019 paper"): Sec. 4.1 (binary P, R, F are
  interval scales on the set-based order), Sec. 4.2 (multi-graded gP and gR are neither
  ordinal nor interval), Sec. 5 (strong order: RBTO is its interval scale; graded RBP with
  gain proportional to the grade is an interval scale only for p = G/(G+1) = 1/(c+1),
  ordinal for smaller p, not ordinal for larger p; AP, DCG and ERR are not ordinal; the
  counterexample runs (a1,a0,a2,a0,a1) < (a1,a1,a0,a0,a0)), Sec. 6 (the summary: binary
  RBP interval only for p = 1/2, ordinal below, neither above);
* Ferrante, Ferro & Fuhr (2021): Sec. 3.2 (the same findings), Sec. 7.1 (DCG with log base
  b counts relevant documents, like P, up to N = b).

The papers' counterexamples need runs long enough (the one above has N = 5). Each
statement here is exact at the N it is made for: for measures that add a gain times a
positional weight (P, R, F, gP, gR, DCG, nDCG, RBP, RBTO) and for ERR, the order is decided
by its worst case (the lowest raise at rank k against the most the ranks below k can add),
so the statement says where a short run is still ordinal. AP and RR use their smallest
counterexamples. :func:`verify` checks any statement over every run by brute force
(:mod:`irscale.scales.checks`); ``irscale inspect MEASURE --theory`` prints that check.

phi (the ranked measure) ranks the measure's distinct values, so it is an interval scale
on the measure's own induced order. When the original is ordinal under the paper's order,
that order is the induced one and phi is an interval scale on it (the rank function,
RBTO or SBTO, plus one); when it is not ordinal, phi only equi-spaces the measure's own
order (``Statement.phi_own_order_only``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from irscale.errors import IrscaleError
from irscale.measures import AP, DCG, ERR, RBP, RBTO, RR, SBTO, F, NumRelRet, P, R, gP, gR, nDCG
from irscale.measures.registry import ENTRIES, set_theory, theory_of
from irscale.validate import integer

if TYPE_CHECKING:
    from irscale.scales.checks import Verdict

__all__ = ["about", "OWN", "PAPER_RUNS", "S2019", "S2021", "SCALES", "Statement", "statement", "TheoryCheck", "verify"]


SCALES = ("interval", "ordinal", "not ordinal", "unknown")  # unknown: not established (scale_of's fallback)

S2019 = "2019 paper"
S2021 = "2021 paper"
# gain maps other than gain proportional to the grade: the papers' argument, applied by irscale
OWN = "irscale's worst-case criterion; the 2019 paper, Sec. 5, takes gain proportional to the grade"

# the 2019 paper's runs on R(5) with c = 2 (Sec. 5): s_hat is above r_hat in the strong order
# (rank 2 decides), yet AP (lenient), DCG, ERR and graded RBP with p > 0.454 score r_hat higher
PAPER_RUNS = ((1, 0, 2, 0, 1), (1, 1, 0, 0, 0))


@dataclass(frozen=True)
class Statement:
    """What the theory says about ``measure`` on runs of length ``N`` with ``levels``
    relevance degrees (2 for binary measures, whatever the qrels).

    ``order``: the order the papers study it under (``"strong"`` or ``"set"``);
    ``original_scale``: ``"interval"``, ``"ordinal"`` (ordinal, not interval) or ``"not
    ordinal"`` under that order; ``reason``: one line; ``source``: where it is said;
    ``phi_own_order_only``: phi equi-spaces only the measure's own induced order (the
    original is not ordinal under ``order``), rather than giving an interval scale on
    ``order`` itself."""

    measure: str
    N: int
    levels: int
    order: str
    original_scale: str
    reason: str
    source: str
    phi_own_order_only: bool = field(init=False)

    def __post_init__(self):
        if self.original_scale not in SCALES:
            raise ValueError(f"original_scale must be one of {SCALES}, not {self.original_scale!r}")
        object.__setattr__(
            self,
            "phi_own_order_only",
            self.original_scale in ("not ordinal", "unknown") or self.order not in ("strong", "set"),
        )

    @property
    def established(self) -> bool:
        """Was the scale decided? False where the papers make no statement and the runs are
        too many to check (``original_scale`` "unknown": not claimed interval)."""
        return self.original_scale != "unknown"

    @property
    def ordinal(self) -> bool:
        """Is the original measure an ordinal scale under ``order``?"""
        return self.original_scale in ("interval", "ordinal")

    @property
    def interval(self) -> bool:
        """Is the original measure an interval scale under ``order``?"""
        return self.original_scale == "interval"

    def scale_text(self) -> str:
        """``interval scale under the set order``, ``ordinal (not interval) under ...``."""
        if not self.established:
            return f"not shown to be an interval scale under the {self.order} order"
        what = {"interval": "interval scale", "ordinal": "ordinal (not interval)", "not ordinal": "not ordinal"}[
            self.original_scale
        ]
        return f"{what} under the {self.order} order"

    def phi_text(self) -> str:
        """What phi is for this measure, in a few words."""
        name = self.measure.split("(")[0].split("@")[0]
        if self.phi_own_order_only:
            return f"phi equi-spaces {name}'s own order"
        rank = "RBTO" if self.order == "strong" else "SBTO"
        if self.interval:
            return f"phi is an affine image of it ({rank} + 1)"
        return f"phi is an interval scale on the {self.order} order ({rank} + 1)"

    def text(self) -> str:
        """One line: ``RBP(p=0.8)@10 (4 levels): not ordinal under the strong order
        (2019 paper, Sec. 5: p = 0.8 > 1/(c+1) = 1/4); phi equi-spaces RBP's own order``."""
        return (
            f"{self.measure} ({self.levels} levels): {self.scale_text()} ({self.source}: {self.reason}); "
            f"{self.phi_text()}"
        )

    def as_dict(self) -> dict:
        """The fields and ``text`` (plain JSON types: what provenance records)."""
        return dict(dataclasses.asdict(self), established=self.established, text=self.text())


# -- the statements -------------------------------------------------------------------------------


def about(*measures: type):
    """Declare the rule that makes the statement for the measure classes ``measures``
    (kept in their entries of :mod:`irscale.measures.registry`; a user may declare one for
    a measure of their own). ``rule(m, N, c)`` returns ``(order, scale, reason, source)``
    or None where the papers say nothing about that instance."""

    def deco(fn):
        for m in measures:
            set_theory(m, fn)
        return fn

    return deco


def statement(measure, N: int, levels: int = 2) -> Statement | None:
    """What the theory says about ``measure`` (a name like ``"RBP(p=0.8)"`` or a Measure;
    put at run length N) on runs of length ``N`` with ``levels`` relevance degrees
    (binary measures, and graded ones given ``rel=``, live on 2 levels whatever
    ``levels`` is). None for measures the papers say nothing about (user measures,
    Rprec, bpref); for gain maps not proportional to the grade the statement is irscale's
    own application of the paper's worst-case argument, and its source says so.

    Examples
    --------
    >>> import textwrap
    >>> print(textwrap.fill(statement("RBP(p=0.8)", 10, 4).text(), 100))
    RBP(p=0.8)@10 (4 levels): not ordinal under the strong order (2019 paper, Sec. 5: p = 0.8 > 1/(c+1)
    = 1/4); phi equi-spaces RBP's own order
    >>> statement("P", 10).original_scale
    'interval'
    """
    from irscale.measures import at_depth, parse_measure

    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    m = parse_measure(measure, default_cutoff=N)
    if any(f.name == "cutoff" for f in dataclasses.fields(m)):
        m = at_depth(m, N)
    binary = (not m.graded) or getattr(m, "rel", None) is not None
    c = 1 if binary else levels - 1
    rule = theory_of(type(m))  # keyed by the class: a subclass or a namesake gets no statement
    if rule is None:
        return None
    out = rule(m, N, c)
    if out is None:
        return None
    order, scale, reason, source = out
    return Statement(str(m), N, c + 1, order, scale, reason, source)


def _gains(m, c: int) -> list[Fraction] | None:
    """Exact gains of grades 0..c (binary: 0, 1): the measure's own gain map
    (:meth:`irscale.measures.gains._GainMeasure.gain_values`), the grade by default."""
    if c == 1 or getattr(m, "rel", None) is not None:
        return [Fraction(0), Fraction(1)]
    if hasattr(m, "gain_values"):
        return list(m.gain_values(c))
    if getattr(m, "gains", None) is None:
        return [Fraction(k) for k in range(c + 1)]
    return None


def _linear(gains) -> bool:
    return all(g == k * gains[1] for k, g in enumerate(gains))


def _frac(x: float) -> str:
    f = Fraction(x).limit_denominator(1000)
    return f"{f.numerator}/{f.denominator}" if f.denominator != 1 else str(f.numerator)


def _positional(gains, weights, N: int, c: int) -> tuple[bool, bool, int | None]:
    """Sum of gain(g_k) w_k under the strong order: (ordinal, interval, the first rank k
    whose lowest raise the ranks below it can match, or None). Ordinal iff at every rank k
    the smallest gain step times w_k exceeds the top gain times the weights below k (the
    worst case: (.., a, top, ..., top) against (.., a+1, 0, ..., 0)); interval iff moreover
    the gains are linear and w_k = (c+1) w_(k+1) (the value is then affine in RBTO)."""
    step = min(gains[k + 1] - gains[k] for k in range(c))
    top = gains[c]
    tail = 0
    bad = None
    for k in range(N - 1, 0, -1):  # rank k (1-based) = index k - 1; tail = sum of the weights below it
        tail = tail + weights[k]
        if not step * weights[k - 1] > top * tail:
            bad = k
    ordinal = bad is None
    interval = ordinal and _linear(gains) and all(weights[k] == (c + 1) * weights[k + 1] for k in range(N - 1))
    return ordinal, interval, bad


def _set_order(gains, N: int, c: int) -> tuple[bool, bool]:
    """A sum of gains with equal weights under the set-based order (lexicographic on the
    counts of the top grade, then the next...): binary, the count of relevant documents
    (interval); graded, ordinal iff gain(k) > N gain(k-1) for k = 2..c (one document of
    grade k against N of grade k-1), never interval for N >= 2."""
    if c == 1:
        return True, True
    ordinal = all(gains[k] > N * gains[k - 1] for k in range(2, c + 1))
    if N == 1:
        return ordinal, ordinal and _linear(gains)
    return ordinal, False


def _scale(ordinal: bool, interval: bool) -> str:
    return "interval" if interval else "ordinal" if ordinal else "not ordinal"


@about(P, R, F, NumRelRet)
def _set_measures(m, N, c):
    why = (
        "the number of relevant documents retrieved, affinely"
        if type(m).__name__ != "R"
        else "the number of relevant documents retrieved over the topic's recall base"
    )
    return "set", "interval", why, f"{S2019}, Sec. 4.1"


@about(gP, gR)
def _generalized(m, N, c):
    gains = _gains(m, c)
    if gains is None:
        return None
    if c == 1:
        return "set", "interval", "binary: the number of relevant documents retrieved, like P", f"{S2019}, Sec. 4.1"
    ordinal, interval = _set_order(gains, N, c)
    if ordinal:
        why = "N = 1: one document, its gain" if N == 1 else f"each grade's gain above N = {N} times the one below"
        return "set", _scale(ordinal, interval), why, f"{S2019}, Sec. 4.2 (its argument at this N)"
    return (
        "set",
        "not ordinal",
        (
            f"N documents of grade {c - 1} score at least one of grade {c} and none "
            "other, which the set order puts above them"
        ),
        f"{S2019}, Sec. 4.2",
    )


@about(SBTO)
def _sbto(m, N, c):
    return "set", "interval", "the rank function of the set-based order", f"{S2019}, Sec. 4, Def. 2"


@about(RBTO)
def _rbto(m, N, c):
    return "strong", "interval", "the rank function of the strong order", f"{S2019}, Sec. 5, Def. 3"


@about(RBP)
def _rbp(m, N, c):
    gains = _gains(m, c)
    if gains is None:
        return None
    if gains[c] == 0:
        return None
    # p exactly as the measure's run space reads it (m.p_exact: a fraction as given, a float as
    # the decimal it is written as), so the statement and the rank map never disagree:
    # RBP(p=1/3) is the 2019 paper's interval case at c = 2, RBP(p=0.3333333333333333) a smaller p
    exact_p = m.p_exact
    p = m.show_param("p", m.p)  # as written: 0.8, 1/3, 0.3333333333333333
    G = min(gains[k + 1] - gains[k] for k in range(c)) / gains[c]
    crit = G / (G + 1)
    ordinal, interval, _ = _positional(gains, [exact_p**k for k in range(N)], N, c)
    lin = _linear(gains)
    name = "1/(c+1)" if lin else "G/(G+1)"
    src = f"{S2019}, Sec. 5" if c > 1 else f"{S2019}, Sec. 6; {S2021}, Sec. 3.2"
    if not lin:
        src = OWN
    crit_s = _frac(float(crit))
    if interval:
        why = (
            f"p = {crit_s} = {name} with gain proportional to the grade"
            if N > 1
            else "N = 1: its values are equi-spaced"
        )
    elif exact_p == crit:
        why = f"p = {crit_s} = G/(G+1), but the gains are not proportional to the grade"
    elif exact_p < crit:
        why = f"p = {p} < {name} = {crit_s}"
    elif ordinal:
        why = (
            f"p = {p} > {name} = {crit_s}, yet at N = {N} a step at rank k still outweighs every rank "
            "below it (the paper's counterexamples need longer runs)"
        )
    else:
        why = f"p = {p} > {name} = {crit_s}"
    return "strong", _scale(ordinal, interval), why, src


@about(DCG, nDCG)
def _dcg(m, N, c):
    from irscale.measures.gains import discounts

    gains = _gains(m, c)
    if gains is None:
        return None
    w = [float(x) for x in discounts(N, m.base)]
    norm = " (nDCG: DCG over the topic's ideal DCG)" if type(m).__name__ == "nDCG" else ""
    if all(x == w[0] for x in w):  # no discount up to rank N: a sum of gains
        ordinal, interval = _set_order(gains, N, c)
        if c == 1:
            why = (
                f"no discount up to rank {N} <= b = {m.base:g}: it counts relevant documents, like P{norm}"
                if m.base is not None
                else "N = 1: one document"
            )
            return "set", "interval", why, f"{S2021}, Sec. 7.1" if m.base is not None else "N = 1"
        why = "no discount up to rank N: a sum of gains, like gP" if N > 1 else "N = 1: one document, its gain"
        return "set", _scale(ordinal, interval), why, f"{S2019}, Sec. 4.2 (gP's argument)"
    ordinal, interval, bad = _positional(gains, w, N, c)
    src = f"{S2019}, Sec. 5" if _linear(gains) else OWN
    if bad is None:  # ordinal
        return (
            "strong",
            _scale(ordinal, interval),
            (
                f"at N = {N} a step at rank k still outweighs every rank "
                "below it (the paper's counterexample needs a longer run)"
            ),
            src,
        )
    return (
        "strong",
        "not ordinal",
        (f"a grade step at rank {bad} is matched by the top grade at ranks {bad + 1}..{N}"),
        src,
    )


@about(ERR)
def _err(m, N, c):
    R = [Fraction(2**g - 1, 2**c) for g in range(c + 1)]
    bad = None
    for k in range(1, N):  # rank k against the top grade at every rank below it (reach 1 from rank k + 1)
        tail, reach = Fraction(0), Fraction(1)
        for i in range(k + 1, N + 1):
            tail += reach * R[c] / i
            reach *= 1 - R[c]
        if any(not (R[a + 1] - R[a]) / k > (1 - R[a]) * tail for a in range(c)):
            bad = k
            break
    src = f"{S2019}, Sec. 5"
    if bad is not None:
        return (
            "strong",
            "not ordinal",
            (f"a grade step at rank {bad} is outweighed by the top grade at ranks {bad + 1}..{N}"),
            src,
        )
    steps = {R[a + 1] - R[a] for a in range(c)}
    if N == 1:
        return (
            "strong",
            "interval" if len(steps) == 1 else "ordinal",
            "N = 1: its values are the stop probabilities (2^g - 1)/2^c",
            src,
        )
    return (
        "strong",
        "ordinal",
        (
            f"at N = {N} a step at rank k still outweighs every rank below it, but its "
            "values are not equi-spaced (the paper's counterexample needs a longer run)"
        ),
        src,
    )


@about(AP)
def _ap(m, N, c):
    src = f"{S2019}, Sec. 5-6; {S2021}, Sec. 3.2"
    if N == 1:
        return "strong", "interval", "N = 1: two runs", src
    if N == 2:
        return "strong", "ordinal", "N = 2: ordered like the strong order, values 0, 1/2, 1, 2 over RB", src
    return "strong", "not ordinal", "(1,0,0,...) scores below (0,1,1,...) although it is above it", src


@about(RR)
def _rr(m, N, c):
    if N == 1:
        return "strong", "interval", "N = 1: two runs", "N = 1"
    return (
        "strong",
        "not ordinal",
        ("it ties runs that differ only below the first relevant document (Fuhr: RR is ordinal on its own order only)"),
        f"{S2021}, Sec. 3.1 and 7.1",
    )


# -- checked by brute force ------------------------------------------------------------------------


@dataclass
class TheoryCheck:
    """A statement checked over every run: the ordinal and interval verdicts under the
    statement's order (:mod:`irscale.scales.checks`), whether they agree with it, and the
    2019 paper's runs (a1,a0,a2,a0,a1) and (a1,a1,a0,a0,a0) (padded with a0 to N) with
    the measure's values on them, for 3 levels and N >= 5."""

    statement: Statement
    ordinal: Verdict
    interval: Verdict
    paper_runs: dict | None = None

    @property
    def agrees(self) -> bool:
        return self.ordinal.holds == self.statement.ordinal and self.interval.holds == self.statement.interval

    @property
    def found_scale(self) -> str:
        """The scale the brute force finds under the statement's order."""
        return _scale(self.ordinal.holds, self.interval.holds)

    def lines(self) -> list[str]:
        """The check as lines of plain text."""
        s = self.statement
        runs = s.levels**s.N
        out = [
            f"theory: {s.text()}",
            (
                f"checked over all {runs:,} runs ({s.levels} levels, N = {s.N}): {self.found_scale} under the "
                f"{s.order} order: {'agrees' if self.agrees else 'DISAGREES'} with the theory"
            ),
        ]
        for v in (self.ordinal, self.interval):
            if not v.holds and v.counterexample and not (v is self.interval and not self.ordinal.holds):
                out.append(f"  {v.check} fails: {v.counterexample_text()}")
        if self.paper_runs:
            p = self.paper_runs
            rel = (
                "above"
                if p["values"][0] > p["values"][1]
                else "equal to"
                if p["values"][0] == p["values"][1]
                else "below"
            )
            out.append(
                f"  the 2019 paper's runs (Sec. 5): r = {p['r']} < s = {p['s']} in the strong order; "
                f"{s.measure.split('@')[0]}(r) = {p['values'][0]:.6g} is {rel} {s.measure.split('@')[0]}(s) = "
                f"{p['values'][1]:.6g}"
                + (" (so not ordinal under the strong order)" if p["values"][0] >= p["values"][1] else "")
            )
        return out


def verify(measure, N: int, levels: int = 2) -> TheoryCheck:
    """Check :func:`statement` over every run of length N (``levels`` ** N of them; a
    binary measure on its 2 levels) under the statement's order: is the measure ordinal,
    is it an interval scale? An :class:`~irscale.errors.IrscaleError` when the papers say
    nothing about the measure or there are too many runs to enumerate."""
    from irscale.scales.checks import as_measure, is_interval, is_ordinal

    st = statement(measure, N, levels)
    if st is None:
        raise IrscaleError(
            f"the papers make no statement about {measure} that irscale knows (it has statements "
            f"for {', '.join(sorted(e.name for e in ENTRIES.values() if e.theory))} with linear or exponential gains); "
            "the other checks of irscale inspect still apply"
        )
    from irscale.measures import parse_measure

    m = parse_measure(measure, default_cutoff=N)
    if (getattr(m, "rel", None) or 1) > 1:  # its binary space: grade 1 stands for "grade >= rel"
        m = dataclasses.replace(m, **{"rel": 1})  # (the base class has no rel field)
    fn = as_measure(m, N, st.levels - 1)
    ordv = is_ordinal(fn, st.order, N, st.levels)
    intv = is_interval(fn, st.order, N, st.levels)
    paper = None
    if levels == 3 and N >= 5 and (getattr(m, "rel", None) or 1) == 1:
        r, s = (np.array(x + (0,) * (N - 5)) for x in PAPER_RUNS)
        on3 = fn if st.levels == 3 else as_measure(m, N, 2)  # binary measures: lenient (rel = 1), as the paper
        vals = on3.values(np.stack([r, s]))
        paper = {"r": _show_run(r), "s": _show_run(s), "values": [float(vals[0]), float(vals[1])]}
    return TheoryCheck(st, ordv, intv, paper)


def _show_run(run) -> str:
    return "(" + ",".join(f"a{int(g)}" for g in run) + ")"
