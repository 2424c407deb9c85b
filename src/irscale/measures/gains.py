"""Gain-based measures: DCG, nDCG, RBP, ERR, generalized precision and recall.

Graded gains are the grade itself, clipped to [0, c] where c is the highest grade of
the relevance scale (the qrels' maximum); with ``rel=`` given, relevance is binary
(gain 1 for grade >= rel). RBP and ERR normalise by c (gain g/c, stop probability
(2^g - 1) / 2^c).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from irscale.errors import MeasureError
from irscale.measures.base import Measure, cut, graded_gain, ranks, ref_gain, register, safe_div


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


class _DCGFamily(Measure):
    graded = True
    param_docs = {"base": "log base b of Järvelin & Kekäläinen's discount max(1, log_b i); default "
                          "trec_eval's log2(i + 1)",
                  "rel": "binary gains (1 for grade >= rel) instead of the grade"}

    @property
    def label(self):  # the paper's column labels: DCG_b02, nDCG_b10
        if self.base is not None and self.rel is None and self.cutoff is None:
            return f"{self.NAME}_b{self.base:02g}"
        return str(self)

    def validate(self):
        if self.base is not None and not (isinstance(self.base, (int, float)) and self.base > 1):
            raise MeasureError(f"{self.NAME}: base must be a number > 1, not {self.base!r}")

    def _dcg(self, grades, topics):
        g = graded_gain(cut(grades, self.cutoff), topics.max_grade, self.rel)
        return g @ discounts(g.shape[-1], self.base)

    def _ref_dcg(self, grades, c):
        top = grades[: self.cutoff] if self.cutoff else grades
        return sum(ref_gain(g, c, self.rel) * _ref_discount(i + 1, self.base) for i, g in enumerate(top))


@register("DCG")
@dataclass(frozen=True)
class DCG(_DCGFamily):
    """Discounted Cumulative Gain (Järvelin & Kekäläinen 2002): sum of gain / discount
    over the top ``cutoff`` ranks. ``base=None`` uses trec_eval's discount log2(i+1);
    ``base=b`` the original max(1, log_b i). RB-free."""

    cutoff: int | None = None
    base: float | None = None
    rel: int | None = None

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

    cutoff: int | None = None
    base: float | None = None
    rel: int | None = None
    needs_recall_base = True

    trec_eval = ("ndcg", "ndcg_cut_{cutoff}")
    trec_eval_defaults = ("base", "rel")

    def normalizer(self, topics, N, c):
        ideal = self.ideal(topics)
        return np.where(ideal > 0, ideal, np.inf)

    def ideal(self, topics) -> np.ndarray:
        ideal = cut(topics.ideal_grades(self.rel), self.cutoff)
        return ideal @ discounts(ideal.shape[-1], self.base)

    def batch(self, grades, topics):
        return safe_div(self._dcg(grades, topics), self.ideal(topics))

    def reference(self, grades, topic):
        c = topic.max_grade
        ideal = sorted((ref_gain(g, c, self.rel) for g in range(c + 1)
                        for _ in range(int(topic.level_counts[0, g]))), reverse=True)
        ideal = [x for x in ideal if x > 0]
        top = ideal[: self.cutoff] if self.cutoff else ideal
        idcg = sum(x * _ref_discount(i + 1, self.base) for i, x in enumerate(top))
        return self._ref_dcg(grades, c) / idcg if idcg else 0.0


@register("RBP")
@dataclass(frozen=True)
class RBP(Measure):
    """Rank-Biased Precision (Moffat & Zobel 2008): (1 - p) * sum of gain_i p^(i-1) over
    the top ``cutoff`` ranks, gain = grade / c (graded) or 0/1 with ``rel=``. RB-free.
    trec_eval's ``rbp`` normalises gains with uninitialised variables, so irscale does
    not claim agreement with it."""

    p: float = 0.8
    cutoff: int | None = None
    rel: int | None = None
    graded = True
    always_shown = ("p",)
    param_docs = {"p": "persistence: the probability that the user goes on to the next rank, in (0, 1)",
                  "rel": "binary gains (1 for grade >= rel) instead of grade / c"}

    @property
    def label(self):  # the paper's column labels: RBP_p03, RBP_p08
        return f"RBP_p{self.p:g}".replace(".", "") if self.rel is None and self.cutoff is None else str(self)

    def validate(self):
        if not (isinstance(self.p, (int, float)) and 0 < self.p < 1):
            raise MeasureError(f"RBP: p must be in (0, 1), not {self.p!r}")

    def batch(self, grades, topics):
        c = 1 if self.rel is not None else topics.max_grade
        g = graded_gain(cut(grades, self.cutoff), topics.max_grade, self.rel) / c
        return (1.0 - self.p) * (g @ (self.p ** np.arange(g.shape[-1], dtype=np.float64)))

    def reference(self, grades, topic):
        c = 1 if self.rel is not None else topic.max_grade
        top = grades[: self.cutoff] if self.cutoff else grades
        return (1 - self.p) * sum(ref_gain(g, topic.max_grade, self.rel) / c * self.p ** i
                                  for i, g in enumerate(top))


@register("ERR")
@dataclass(frozen=True)
class ERR(Measure):
    """Expected Reciprocal Rank (Chapelle et al. 2009): sum over ranks i of
    (1/i) R_i prod_{j<i} (1 - R_j), with stop probability R = (2^g - 1) / 2^c
    (binary with ``rel=``: R = 1/2 for a relevant document). RB-free."""

    cutoff: int | None = None
    rel: int | None = None
    graded = True
    param_docs = {"rel": "binary relevance (stop probability 1/2 for grade >= rel) instead of (2^g - 1) / 2^c"}

    @staticmethod
    def _stop(g, c):
        """(2^g - 1) / 2^c written as 2^(g-c) - 2^(-c): no overflow for any grade scale
        (2^1100 overflows a float; 2^(g-c) <= 1), and bitwise the same value where the
        first form is finite (both are exact while g < 53)."""
        g = np.asarray(g, dtype=np.float64)
        return np.exp2(g - c) - np.exp2(-float(c))

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
            r = 2.0 ** (ref_gain(g, topic.max_grade, self.rel) - c) - 2.0 ** -c
            total += reach * r / (i + 1)
            reach *= 1.0 - r
        return total


@register("gP")
@dataclass(frozen=True)
class gP(Measure):
    """Generalized precision at N = ``cutoff``: sum of gain / c over the top N, divided
    by N (gain = grade). Equals P@N with binary relevance. RB-free."""

    cutoff: int | None = None
    graded = True
    requires_cutoff = True

    def normalizer(self, topics, N, c):
        return np.full(len(topics.names), float(c * N))

    def batch(self, grades, topics):
        g = graded_gain(cut(grades, self.cutoff), topics.max_grade, None)
        return g.sum(axis=-1) / (topics.max_grade * self.cutoff)

    def reference(self, grades, topic):
        c = topic.max_grade
        return sum(ref_gain(g, c, None) for g in grades[: self.cutoff]) / (c * self.cutoff)


@register("gR")
@dataclass(frozen=True)
class gR(Measure):
    """Generalized recall: sum of gains over the top ``cutoff`` divided by the recall
    base in gain units (the sum of the grades of the topic's judged documents)."""

    cutoff: int | None = None
    graded = True
    needs_recall_base = True

    def batch(self, grades, topics):
        g = graded_gain(cut(grades, self.cutoff), topics.max_grade, None)
        return safe_div(g.sum(axis=-1), topics.gain_base())

    def reference(self, grades, topic):
        base = float(topic.gain_base()[0])
        top = grades[: self.cutoff] if self.cutoff else grades
        return sum(ref_gain(g, topic.max_grade, None) for g in top) / base if base else 0.0
