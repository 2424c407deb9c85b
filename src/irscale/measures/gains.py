"""Gain-based measures: DCG, nDCG, RBP, ERR, generalized precision and recall.

Graded gains are the grade itself, clipped to [0, c] where c is the highest grade of
the relevance scale (the qrels' maximum); with ``rel=`` given, relevance is binary
(gain 1 for grade >= rel). RBP and ERR normalise by c (gain g/c, stop probability
(2^g - 1) / 2^c).

DCG, nDCG, RBP, gP and gR take a gain map ``gains=`` (:func:`parse_gains`): ``exp`` for
Burges et al.'s 2^g - 1, or ``grade:gain`` pairs such as ``0:0,1:1,2:3,3:7`` (gains
non-negative integers, decimals or fractions like ``1/2``, kept exact as Fractions,
non-decreasing in the grade, grade 0 gaining 0). A grade the map does not list keeps its
own grade as gain, trec_eval's rule for ``-m ndcg.1=3,2=9``; the map must then still be
non-decreasing over the grades 0..c of the qrels (:meth:`_GainMeasure.gain_values`).
RBP and gP divide by the top grade's gain (gain(g) / gain(c) replaces g / c), gR by the
topic's recall base in gain units, nDCG by the ideal DCG under the same gains.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from irscale.data import PAD, Grade
from irscale.errors import MeasureError
from irscale.measures.base import Measure, cut, exact_grade, graded_gain, ranks, ref_gain, register, safe_div
from irscale.validate import decimal_text

__all__ = [
    "DCG",
    "discounts",
    "ERR",
    "exact_p",
    "gain_values",
    "gP",
    "gR",
    "grade_gains",
    "MAX_GAIN_GRADE",
    "nDCG",
    "parse_gains",
    "RBP",
    "RBPResid",
]


MAX_GAIN_GRADE = 32000  # qrels grades lie in [-32000, 32000] (irscale.io)
_GAIN_HELP = (
    "write gains=exp (2^g - 1) or grade:gain pairs such as gains=0:0,1:1,2:3,3:7 (gains are "
    "integers, decimals or fractions like 1/2, non-decreasing in the grade)"
)


def _gain_number(v, name: str, grade) -> Fraction:
    """One gain, exactly: an int, a Fraction, a float as the decimal it is written as
    (0.1 is 1/10), or a string of one of those."""
    try:
        if isinstance(v, bool):
            raise TypeError
        if isinstance(v, float) or isinstance(v, np.floating):
            if not math.isfinite(v):
                raise ValueError
            f = Fraction(repr(float(v)))
        elif isinstance(v, str):
            f = Fraction(v.strip())
        else:
            f = Fraction(v)
    except (TypeError, ValueError, ZeroDivisionError):
        raise MeasureError(
            f"{name}: the gain of grade {grade} must be a number (an integer, a decimal like 0.5 "
            f"or a fraction like 1/2), not {v!r}; {_GAIN_HELP}"
        ) from None
    if f < 0:
        raise MeasureError(
            f"{name}: the gain of grade {grade} is negative ({_show_gain(f)}); gains must be >= 0; {_GAIN_HELP}"
        )
    return f


def _show_gain(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def parse_gains(value, name: str = "gains") -> str | None:
    """The canonical form of a gain map: None (the grade), ``"exp"`` (2^g - 1), or
    ``"g:gain,..."`` sorted by grade with gains as integers or ``a/b`` (``0.5`` and
    ``1/2`` are one gain). Accepts that string (spaces allowed), a dict {grade: gain}
    or a list of the gains of grades 0, 1, 2...; raises MeasureError naming what is wrong."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("exp", "exponential"):
        return "exp"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise MeasureError(f"{name}: empty gain map; {_GAIN_HELP}")
        pairs: list[tuple[Any, Any]] = []
        for item in text.split(","):
            g, sep, v = item.partition(":")
            if not sep:
                raise MeasureError(f"{name}: {item.strip()!r} is not a grade:gain pair (in {text!r}); {_GAIN_HELP}")
            pairs.append((g.strip(), v.strip()))
    elif isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)):
        pairs = list(enumerate(value))
    else:
        raise MeasureError(
            f"{name}: a gain map must be 'exp', a string of grade:gain pairs, a dict or a list, "
            f"not {type(value).__name__} {value!r}; {_GAIN_HELP}"
        )
    if not pairs:
        raise MeasureError(f"{name}: empty gain map; {_GAIN_HELP}")
    out: dict[Fraction, Fraction] = {}
    for g, v in pairs:
        grade = _gain_grade(g, name)
        if grade in out:
            raise MeasureError(f"{name}: grade {decimal_text(grade)} is given two gains; give each grade once")
        out[grade] = _gain_number(v, name, decimal_text(grade))
    if out.get(Fraction(0), Fraction(0)) != 0:
        raise MeasureError(
            f"{name}: grade 0 must gain 0 (non-relevant and unjudged documents gain nothing), "
            f"not {_show_gain(out[Fraction(0)])}"
        )
    grades = sorted(out)
    for lo, hi in zip(grades, grades[1:]):
        if out[hi] < out[lo]:
            raise MeasureError(
                f"{name} must not decrease with the grade: grade {decimal_text(hi)} gains {_show_gain(out[hi])} "
                f"< {_show_gain(out[lo])} of grade {decimal_text(lo)}; a gain map is monotone (equal gains are "
                "allowed, e.g. 1:0 to count grade 1 as non-relevant)"
            )
    return ",".join(f"{decimal_text(g)}:{_show_gain(out[g])}" for g in grades)


def _gain_grade(g, name: str) -> Fraction:
    """A grade of a gain map: an integer 0..MAX_GAIN_GRADE, or a decimal such as 0.5 (a
    real-valued grade), exactly (:func:`irscale.measures.base.exact_grade`)."""
    grade = exact_grade(g)
    if grade is None or not 0 <= grade <= MAX_GAIN_GRADE:
        raise MeasureError(
            f"{name}: grades must be integers 0..{MAX_GAIN_GRADE} or decimals like 0.5, found {g!r}; {_GAIN_HELP}"
        )
    return grade


def grade_gains(spec: str | None, values: tuple[Fraction, ...], name: str = "gains") -> tuple[Fraction, ...]:
    """Exact gains of the level codes 0..k of real-valued grades ``values``: the grade
    itself by default, else the map's gain of that grade (a grade the map does not list
    gains its grade, as with integer grades). ``exp`` is refused (2^g - 1 is irrational
    at a grade like 0.5). MeasureError where the gains decrease with the grade."""
    if spec == "exp":
        raise MeasureError(
            f"{name}=exp: 2^g - 1 is not a rational number at a real-valued grade such as "
            f"{decimal_text(next((v for v in values if v.denominator != 1), values[-1]))}, so irscale cannot "
            "keep it exact; give the gains as a map of the grades (gains=0.5:1,1:3,...) or leave gains= out "
            "(the grade is the gain)"
        )
    listed = {} if spec is None else {Fraction(g): Fraction(v) for g, v in (x.split(":") for x in spec.split(","))}
    out = tuple(listed.get(v, v) for v in values)
    for k in range(1, len(out)):
        if out[k] < out[k - 1]:
            raise MeasureError(
                f"{name}={spec}: grade {decimal_text(values[k])} gains {_show_gain(out[k])}, less than "
                f"{_show_gain(out[k - 1])} of grade {decimal_text(values[k - 1])}; gains must not decrease with "
                "the grade: list both grades in the map"
            )
    return out


@lru_cache(maxsize=256)
def gain_values(spec: str | None, c: int, name: str = "gains") -> tuple[Fraction, ...]:
    """Exact gains of grades 0..c under the canonical map ``spec``; a grade it does not
    list gains its grade (trec_eval's rule). MeasureError where the gains decrease over
    0..c (a listed gain above the grade of an unlisted higher grade)."""
    if spec is None:
        return tuple(Fraction(g) for g in range(c + 1))
    if spec == "exp":
        return tuple(Fraction(2**g - 1) for g in range(c + 1))
    listed = {Fraction(g): Fraction(v) for g, v in (x.split(":") for x in spec.split(","))}
    out = tuple(listed.get(Fraction(g), Fraction(g)) for g in range(c + 1))
    for g in range(1, c + 1):
        if out[g] < out[g - 1]:
            raise MeasureError(
                f"{name}={spec}: the qrels have grades up to {c}, and grade {g}, not in the map, "
                f"keeps its own grade as gain ({_show_gain(out[g])}), below "
                f"{_show_gain(out[g - 1])} of grade {g - 1}: list every grade 0..{c} in the map, or "
                f"cap the grades (max_grade= / --max-grade)"
            )
    return out


class _GainMeasure(Measure):
    """The gain map of DCG, nDCG, RBP, gP and gR (a ``gains`` field, canonical string)."""

    param_aliases = {"gain": "gains"}

    if TYPE_CHECKING:  # the field of each subclass (a dataclass field there, not here)
        gains: str | None

    def show_param(self, name, value):
        if name == "gains" and isinstance(value, str):
            return value  # unquoted: nDCG(gains=0:0,1:1,2:3,3:7), nDCG(gains=exp)
        return super().show_param(name, value)

    def _check_gains(self):
        spec = parse_gains(self.gains, f"{self.NAME}: gains")
        object.__setattr__(self, "gains", spec)
        if spec is not None and getattr(self, "rel", None) is not None:
            raise MeasureError(f"{self.NAME}: give gains= (graded gains) or rel= (binary relevance), not both")

    def for_grades(self, values):
        """On real-valued grades (``values``) a graded gain measure takes each grade's
        gain (the grade itself, or the map's, :func:`grade_gains`) as an explicit gain map
        of the codes 0..k: ``nDCG`` on grades 0, 0.5, 1.7 is ``nDCG(gains=0:0,1:1/2,2:17/10)``
        on codes, so RBP and gP divide by the top grade's gain and nDCG's ideal ranking
        uses the same gains. With ``rel=``, or on integer grades, as every measure."""
        if values is None or getattr(self, "rel", None) is not None:
            return super().for_grades(values)
        gains = grade_gains(self.gains, tuple(values), f"{self.NAME}: gains")
        return dataclasses.replace(self, **{"gains": ",".join(f"{k}:{_show_gain(g)}" for k, g in enumerate(gains))})

    def gain_values(self, c: int) -> tuple[Fraction, ...]:
        """Exact gains of grades 0..c (binary with ``rel=``: 0, 1)."""
        if getattr(self, "rel", None) is not None:
            return (Fraction(0), Fraction(1))
        return gain_values(self.gains, int(c), f"{self.NAME}: gains")

    def gain_table(self, c: int) -> np.ndarray:
        """float64 gains of grades 0..c (index = grade)."""
        vals = self.gain_values(c)
        out = np.array([float(v) for v in vals], dtype=np.float64)
        if not np.isfinite(out).all():
            raise MeasureError(
                f"{self.NAME}: gains={self.gains} overflow a float at grade {c}; cap the grades "
                "(max_grade= / --max-grade)"
            )
        return out

    def integer_gains(self, c: int) -> tuple[list[int], Fraction]:
        """``(G, s)``: the gains of grades 0..c as integers with no common factor, G[g] =
        s * gain(g) (exact keys add these; s > 0 scales every key alike)."""
        vals = self.gain_values(c)
        L = math.lcm(*(v.denominator for v in vals))
        ints = [int(v * L) for v in vals]
        d = math.gcd(*ints) or 1
        return [x // d for x in ints], Fraction(L, d)

    def top_gain(self, c: int) -> Fraction:
        """gain(c), the divisor of RBP and gP (MeasureError where every grade gains 0)."""
        top = self.gain_values(c)[-1]
        if top == 0:
            raise MeasureError(
                f"{self.NAME}: gains={self.gains} give every grade 0..{c} gain 0; "
                f"{self.NAME} divides by the top grade's gain"
            )
        return top

    def _gains_of(self, grades, c: int) -> np.ndarray:
        """Gains of grades (sentinels and negative grades gain 0, grades above c gain as c)."""
        if getattr(self, "rel", None) is not None or self.gains is None:
            return graded_gain(grades, c, getattr(self, "rel", None))
        return self.gain_table(c)[np.clip(grades, 0, c)]

    def _ref_gain(self, g: int, c: int) -> float:
        if getattr(self, "rel", None) is not None or self.gains is None:
            return ref_gain(g, c, getattr(self, "rel", None))
        return float(self.gain_values(c)[min(max(g, 0), c)])


def discounts(n: int, base: float | None) -> np.ndarray:
    """Weights 1 / discount of ranks 1..n: trec_eval's 1/log2(i+1) when ``base`` is None,
    else Järvelin & Kekäläinen's 1/max(1, log_base(i)) (no discount up to rank ``base``)."""
    i = ranks(n)
    if base is None:
        return 1.0 / np.log2(i + 1.0)
    return 1.0 / np.maximum(1.0, np.log(i) / np.log(base))


def _ref_discount(i: int, base: float | None) -> float:
    if base is None:
        return 1.0 / math.log2(i + 1.0)
    return 1.0 / max(1.0, math.log(i) / math.log(base))


_GAINS_DOC = (
    "gain map: exp (2^g - 1) or grade:gain pairs like 0:0,1:1,2:3,3:7 (exact; unlisted grades "
    "gain their grade); default: the grade"
)


class _DCGFamily(_GainMeasure):
    graded = True
    param_docs = {
        "base": "log base b of Järvelin & Kekäläinen's discount max(1, log_b i); default trec_eval's log2(i + 1)",
        "rel": "binary gains (1 for grade >= rel) instead of the grade",
        "gains": _GAINS_DOC,
    }

    if TYPE_CHECKING:  # the fields of DCG and nDCG (dataclass fields there, not here)
        cutoff: int | None
        base: float | None
        rel: Grade | None

    @property
    def label(self):  # the paper's column labels: DCG_b02, nDCG_b10
        if self.base is not None and self.rel is None and self.cutoff is None and self.gains is None:
            return f"{self.NAME}_b{self.base:02g}"
        return str(self)

    def validate(self):
        if self.base is not None and not (isinstance(self.base, (int, float)) and self.base > 1):
            raise MeasureError(f"{self.NAME}: base must be a number > 1, not {self.base!r}")
        self._check_gains()

    def _dcg(self, grades, topics):
        g = self._gains_of(cut(grades, self.cutoff), topics.max_grade)
        return g @ discounts(g.shape[-1], self.base)

    def _ref_dcg(self, grades, c):
        top = grades[: self.cutoff] if self.cutoff else grades
        return sum(self._ref_gain(g, c) * _ref_discount(i + 1, self.base) for i, g in enumerate(top))


@register("DCG")
@dataclass(frozen=True)
class DCG(_DCGFamily):
    """Discounted Cumulative Gain (Järvelin & Kekäläinen 2002): sum of gain / discount
    over the top ``cutoff`` ranks. ``base=None`` uses trec_eval's discount log2(i+1);
    ``base=b`` the original max(1, log_b i). RB-free."""

    value_bound = None  # a sum of gains over discounts: grows with N

    examples = (
        "DCG@5",
        "DCG(base=2)@6",
        "DCG(base=10)@6",
        "DCG(gains=exp)",
    )  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    base: float | None = None
    rel: Grade | None = None
    gains: str | None = None

    def batch(self, grades, topics):
        return self._dcg(grades, topics)

    def reference(self, grades, topic):
        return self._ref_dcg(grades, topic.max_grade)


@register("nDCG", "NDCG")
@dataclass(frozen=True)
class nDCG(_DCGFamily):
    """Normalised DCG: DCG divided by the DCG of the ideal ranking of the topic's judged
    documents at the same cutoff (0 when that is 0). With ``base=None`` and graded gains
    this is trec_eval ``ndcg`` / ``ndcg_cut_k``."""

    examples = (
        "nDCG@5",
        "nDCG(base=2)@5",
        "nDCG(rel=2)@5",
        "nDCG(gains=exp)@5",
    )  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    base: float | None = None
    rel: Grade | None = None
    gains: str | None = None
    needs_recall_base = True

    trec_eval = ("ndcg", "ndcg_cut_{cutoff}")
    trec_eval_defaults = ("base", "rel", "gains")

    def normalizer(self, topics, N, c):
        ideal = self.ideal(topics)
        return np.where(ideal > 0, ideal, np.inf)

    def ideal(self, topics) -> np.ndarray:
        ideal = cut(topics.ideal_grades(self.rel), self.cutoff)
        if self.gains is not None:  # the same gains (monotone: the ideal order is the grades')
            ideal = self.gain_table(topics.max_grade)[ideal.astype(np.int64)]
        return ideal @ discounts(ideal.shape[-1], self.base)

    def batch(self, grades, topics):
        return safe_div(self._dcg(grades, topics), self.ideal(topics))

    def reference(self, grades, topic):
        c = topic.max_grade
        ideal = sorted(
            (self._ref_gain(g, c) for g in range(c + 1) for _ in range(int(topic.level_counts[0, g]))), reverse=True
        )
        ideal = [x for x in ideal if x > 0]
        top = ideal[: self.cutoff] if self.cutoff else ideal
        idcg = sum(x * _ref_discount(i + 1, self.base) for i, x in enumerate(top))
        return self._ref_dcg(grades, c) / idcg if idcg else 0.0


def exact_p(p) -> Fraction:
    """The exact value of an RBP persistence: a Fraction as it is, a float as the
    decimal it is written as (0.8 is 4/5; 0.3333333333333333 is that decimal, not 1/3)."""
    return p if isinstance(p, Fraction) else Fraction(repr(float(p)))


def _check_p(p, name: str = "RBP"):
    """p as stored: a float where the exact value is the decimal its float is written as
    (so p=4/5, p="0.8" and p=0.8 are one measure, RBP(p=0.8)), else a Fraction (1/3)."""
    hint = "type a number strictly between 0 and 1, for example p=0.8 or p=1/3"
    try:
        if isinstance(p, bool) or p is None:
            raise TypeError
        if isinstance(p, str):
            f = Fraction(p.strip())
        elif isinstance(p, (float, np.floating)):
            if not math.isfinite(p):
                raise ValueError
            f = Fraction(repr(float(p)))
        elif isinstance(p, Fraction):
            f = p
        elif isinstance(p, (int, np.integer)):
            f = Fraction(int(p))
        else:
            raise TypeError
    except (TypeError, ValueError, ZeroDivisionError):
        raise MeasureError(f"{name}: p must be a number in (0, 1), not {p!r}; {hint}") from None
    if not 0 < f < 1:
        raise MeasureError(
            f"{name}: p must be in (0, 1) (the probability of going on to the next rank), not {p!r}; {hint}"
        )
    as_float = float(f)
    return as_float if Fraction(repr(as_float)) == f else f


@register("RBP")
@dataclass(frozen=True)
class RBP(_GainMeasure):
    """Rank-Biased Precision (Moffat & Zobel 2008): (1 - p) * sum of gain_i p^(i-1) over
    the top ``cutoff`` ranks, gain = grade / c (graded), gain(grade) / gain(c) with
    ``gains=``, or 0/1 with ``rel=``. p is exact: a decimal (0.8 is 4/5) or a fraction
    (``p=1/3``, ``p="1/3"``, ``p=Fraction(1, 3)``); scores are computed in float64 from it,
    exact keys from the fraction. RB-free. trec_eval's ``rbp`` normalises gains with
    uninitialised variables, so irscale does not claim agreement with it."""

    examples = (
        "RBP(p=0.5)",
        "RBP(p=0.8,rel=1)@6",
        "RBP(p=1/3)",
        "RBP(p=0.5,gains=exp)",
    )  # checked by the conformance suite (irscale.testing)

    p: float = 0.8
    cutoff: int | None = None
    rel: Grade | None = None
    gains: str | None = None
    graded = True
    always_shown = ("p",)
    param_docs = {
        "p": "persistence: the probability that the user goes on to the next rank, in (0, 1); a "
        "decimal (0.8) or a fraction (1/3), exact",
        "rel": "binary gains (1 for grade >= rel) instead of grade / c",
        "gains": "gain map (see DCG); gain(g) / gain(c) replaces g / c",
    }

    @property
    def label(self):  # the paper's column labels: RBP_p03, RBP_p08
        if self.rel is None and self.cutoff is None and self.gains is None:
            if isinstance(self.p, Fraction):
                return f"RBP_p{self.p.numerator}/{self.p.denominator}"
            return f"RBP_p{self.p:g}".replace(".", "")
        return str(self)

    @property
    def p_exact(self) -> Fraction:
        """p as an exact fraction (what the rank map's keys and the theory use)."""
        return exact_p(self.p)

    def validate(self):
        object.__setattr__(self, "p", _check_p(self.p))
        self._check_gains()

    def _unit(self, c: int) -> float:
        """The divisor of a gain: 1 (binary), c, or gain(c) with a gain map."""
        if self.rel is not None:
            return 1.0
        return float(self.top_gain(c)) if self.gains is not None else float(c)

    def batch(self, grades, topics):
        p = float(self.p)
        g = self._gains_of(cut(grades, self.cutoff), topics.max_grade) / self._unit(topics.max_grade)
        return (1.0 - p) * (g @ (p ** np.arange(g.shape[-1], dtype=np.float64)))

    def reference(self, grades, topic):
        p, c = float(self.p), topic.max_grade
        top = grades[: self.cutoff] if self.cutoff else grades
        return (1 - p) * sum(self._ref_gain(g, c) / self._unit(c) * p**i for i, g in enumerate(top))


@register("rbp_resid", "RBPresid")
@dataclass(frozen=True)
class RBPResid(Measure):
    """RBP's residual (Moffat & Zobel 2008, Sec. 4): the weight of the ranks whose gain is
    not known, (1 - p) * sum of p^(i-1) over the unjudged documents among the first d
    ranks (those absent from the qrels or judged below 0) plus p^d, the weight of
    everything below rank d, where d is the number of documents retrieved within the top
    ``cutoff``. RBP (any gains, each at most 1) lies between its value and value plus
    residual, whatever the unknown documents turn out to be. trec_eval's ``rbp_resid``
    (no cutoff) is the same where a run has an unjudged document and 0 where it has none
    (it leaves out the p^d below the run then); irscale keeps p^d, so an empty ranking (a
    missing topic, or one whose documents are all unjudged under judged_only) has residual
    1. p defaults to 0.8, as RBP's here (trec_eval's to 0.9). Reads only which ranks are
    judged, so it serves any grades. RB-free."""

    examples = ("rbp_resid(p=0.8)@10", "rbp_resid(p=1/3)")  # checked by the conformance suite (irscale.testing)

    p: float = 0.8
    cutoff: int | None = None
    always_shown = ("p",)
    levels_only = True  # which ranks are judged, not their grades: real-valued grades serve as they are
    param_docs = {
        "p": "persistence of the RBP whose residual this is, in (0, 1); a decimal (0.8) or a fraction (1/3), exact",
    }
    no_scale = (
        "rbp_resid is the weight of RBP's unknown ranks, not an effectiveness measure; transform RBP with "
        "residuals=True (CLI --residuals) for phi at both ends of RBP's residual"
    )

    def validate(self):
        object.__setattr__(self, "p", _check_p(self.p))

    def batch(self, grades, topics):
        p = float(self.p)
        g = cut(grades, self.cutoff)
        unknown = ((g < 0) & (g != PAD)).astype(np.float64)  # unjudged, or judged below 0
        d = (g != PAD).sum(axis=-1)
        return (1.0 - p) * (unknown @ (p ** np.arange(g.shape[-1], dtype=np.float64))) + p**d

    def reference(self, grades, topic):
        p = float(self.p)
        top = [g for g in (grades[: self.cutoff] if self.cutoff else grades) if g != PAD]
        return (1 - p) * sum(p**i for i, g in enumerate(top) if g < 0) + p ** len(top)


@register("ERR")
@dataclass(frozen=True)
class ERR(Measure):
    """Expected Reciprocal Rank (Chapelle et al. 2009): sum over ranks i of
    (1/i) R_i prod_{j<i} (1 - R_j), with stop probability R = (2^g - 1) / 2^c
    (binary with ``rel=``: R = 1/2 for a relevant document). RB-free."""

    examples = ("ERR@6", "ERR(rel=2)")  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade | None = None
    graded = True
    param_docs = {"rel": "binary relevance (stop probability 1/2 for grade >= rel) instead of (2^g - 1) / 2^c"}
    _NO_GAINS = (
        "ERR takes no gain map: its stop probability (2^g - 1) / 2^c is Chapelle et al.'s, already "
        "the exponential gain 2^g - 1 over 2^c, and another map has no stop probability that follows "
        "from it; write ERR (or ERR(rel=2) for binary relevance), or put the gain map on nDCG or RBP"
    )
    param_refusals = {"gains": _NO_GAINS, "gain": _NO_GAINS}

    @staticmethod
    def _stop(g, c):
        """(2^g - 1) / 2^c written as 2^(g-c) - 2^(-c): no overflow for any grade scale
        (2^1100 overflows a float; 2^(g-c) <= 1), and bitwise the same value where the
        first form is finite (both are exact while g < 53)."""
        g = np.asarray(g, dtype=np.float64)
        return np.exp2(g - c) - np.exp2(-float(c))

    def real_grades_refusal(self) -> str:
        return (
            f"{self}: its stop probability (2^g - 1) / 2^c is irrational at a real-valued grade such as 0.5, "
            "so irscale cannot compute it exactly; give a threshold (ERR(rel=0.5): stop probability 1/2 for "
            "grade >= 0.5), or use nDCG or RBP, which take real grades as gains"
        )

    def batch(self, grades, topics):
        c = 1 if self.rel is not None else topics.max_grade
        R = self._stop(graded_gain(cut(grades, self.cutoff), topics.max_grade, self.rel), c)
        reach = np.cumprod(1.0 - R, axis=-1)
        reach = np.concatenate([np.ones(reach.shape[:-1] + (1,)), reach[..., :-1]], axis=-1)
        return (R * reach) @ (1.0 / ranks(R.shape[-1]))

    def reference(self, grades, topic):
        c = 1 if self.rel is not None else topic.max_grade
        top = grades[: self.cutoff] if self.cutoff else grades
        total, reach = 0.0, 1.0
        for i, g in enumerate(top):
            r = 2.0 ** (ref_gain(g, topic.max_grade, self.rel) - c) - 2.0**-c
            total += reach * r / (i + 1)
            reach *= 1.0 - r
        return total


@register("gP")
@dataclass(frozen=True)
class gP(_GainMeasure):
    """Generalized precision at N = ``cutoff``: sum of gain / c over the top N, divided
    by N (gain = grade; with ``gains=``, gain(grade) / gain(c)). Equals P@N with binary
    relevance. RB-free."""

    examples = ("gP(gains=0:0,1:1,2:3)@5",)  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    gains: str | None = None
    graded = True
    requires_cutoff = True
    param_docs = {"gains": "gain map (see DCG); gain(g) / gain(c) replaces g / c"}

    def validate(self):
        self._check_gains()

    def _top(self, c: int) -> float:
        return float(self.top_gain(c)) if self.gains is not None else float(c)

    @property
    def _N(self) -> int:
        """N, the cutoff: never None (``requires_cutoff``: __post_init__ refuses None)."""
        assert self.cutoff is not None
        return self.cutoff

    def normalizer(self, topics, N, c):
        return np.full(len(topics.names), self._top(c) * N)

    def batch(self, grades, topics):
        g = self._gains_of(cut(grades, self.cutoff), topics.max_grade)
        return g.sum(axis=-1) / (self._top(topics.max_grade) * self._N)

    def reference(self, grades, topic):
        c = topic.max_grade
        return sum(self._ref_gain(g, c) for g in grades[: self.cutoff]) / (self._top(c) * self._N)


@register("gR")
@dataclass(frozen=True)
class gR(_GainMeasure):
    """Generalized recall: sum of gains over the top ``cutoff`` divided by the recall
    base in gain units (the sum of the gains of the topic's judged documents; with
    ``gains=``, of their mapped gains). Its RB-free core is gP's, the sum of gains."""

    examples = ("gR@5",)  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    gains: str | None = None
    graded = True
    needs_recall_base = True
    param_docs = {"gains": "gain map (see DCG): gains and the recall base in gain units use it"}

    def validate(self):
        self._check_gains()

    def gain_base(self, topics) -> np.ndarray:
        """Each topic's recall base in gain units (sum of the judged documents' gains)."""
        if self.gains is None:
            return topics.gain_base()
        return topics.level_counts @ self.gain_table(topics.max_grade)

    def normalizer(self, topics, N, c):
        base = self.gain_base(topics).astype(np.float64)
        return np.where(base > 0, base, np.inf)

    def batch(self, grades, topics):
        g = self._gains_of(cut(grades, self.cutoff), topics.max_grade)
        return safe_div(g.sum(axis=-1), self.gain_base(topics))

    def reference(self, grades, topic):
        base = float(self.gain_base(topic)[0])
        top = grades[: self.cutoff] if self.cutoff else grades
        return sum(self._ref_gain(g, topic.max_grade) for g in top) / base if base else 0.0
