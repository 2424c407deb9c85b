"""Set-based measures: P, R, F, Success and the counts (trec_eval P, recall, set_F,
success, num_ret, num_rel, num_rel_ret)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irscale.data import PAD, Grade
from irscale.measures.base import Measure, cut, rb_divisor, ref_rel, register, relevant, safe_div

__all__ = ["F", "NumRel", "NumRelRet", "NumRet", "P", "R", "Success"]


def _rel_ret(grades, cutoff, rel):
    return relevant(cut(grades, cutoff), rel).sum(axis=-1)


def _num_ret(grades, cutoff):
    return (cut(grades, cutoff) != PAD).sum(axis=-1)


@register("P")
@dataclass(frozen=True)
class P(Measure):
    """Precision: relevant documents in the top ``cutoff`` divided by ``cutoff``.

    Without a cutoff, divided by the number retrieved (trec_eval ``set_P``). With a
    cutoff, a run shorter than the cutoff counts the missing ranks as non-relevant
    (trec_eval ``P_k``). RB-free.
    """

    examples = ("P@5", "P(rel=2)@5", "P(rel=0)@5")  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade = 1

    trec_eval = ("set_P", "P_{cutoff}")

    def normalizer(self, topics, N, c):
        return np.full(len(topics.names), float(N))

    def batch(self, grades, topics):
        den = np.asarray(self.cutoff if self.cutoff else _num_ret(grades, None))
        return safe_div(_rel_ret(grades, self.cutoff, self.rel), den)

    def reference(self, grades, topic):
        top = grades[: self.cutoff] if self.cutoff else grades
        den = self.cutoff if self.cutoff else len(grades)
        return sum(ref_rel(g, self.rel) for g in top) / den if den else 0.0


@register("R", "Recall")
@dataclass(frozen=True)
class R(Measure):
    """Recall: relevant documents in the top ``cutoff`` divided by the recall base RB
    (0 when RB = 0). trec_eval ``recall_k`` / ``set_recall``."""

    examples = ("R@5",)  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade = 1
    needs_recall_base = True

    trec_eval = ("set_recall", "recall_{cutoff}")

    def normalizer(self, topics, N, c):
        return rb_divisor(topics, self.rel)

    def batch(self, grades, topics):
        return safe_div(_rel_ret(grades, self.cutoff, self.rel), topics.num_rel(self.rel))

    def reference(self, grades, topic):
        rb = int(topic.num_rel(self.rel)[0])
        top = grades[: self.cutoff] if self.cutoff else grades
        return sum(ref_rel(g, self.rel) for g in top) / rb if rb else 0.0


@register("F", "SetF")
@dataclass(frozen=True)
class F(Measure):
    """F1, the harmonic mean of P and R: ``2 r / (k + RB)`` with r relevant documents in
    the top k = ``cutoff``. Without a cutoff k is the number retrieved (trec_eval
    ``set_F`` with beta 1). 0 when r = 0."""

    examples = ("F@5",)  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade = 1
    needs_recall_base = True

    trec_eval = ("set_F",)

    def normalizer(self, topics, N, c):
        return (N + topics.num_rel(self.rel)) / 2.0

    def batch(self, grades, topics):
        r = _rel_ret(grades, self.cutoff, self.rel)
        k = self.cutoff if self.cutoff else _num_ret(grades, None)
        return safe_div(2.0 * r, k + topics.num_rel(self.rel))

    def reference(self, grades, topic):
        top = grades[: self.cutoff] if self.cutoff else grades
        r = sum(ref_rel(g, self.rel) for g in top)
        k = self.cutoff if self.cutoff else len(grades)
        return 2 * r / (k + int(topic.num_rel(self.rel)[0])) if r else 0.0


@register("Success")
@dataclass(frozen=True)
class Success(Measure):
    """1 if a relevant document is in the top ``cutoff``, else 0 (trec_eval ``success_k``)."""

    examples = ("Success@3",)  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade = 1

    trec_eval = ("success_{cutoff}",)
    no_scale = "Success takes two values; its ranked version is itself"

    def batch(self, grades, topics):
        return (_rel_ret(grades, self.cutoff, self.rel) > 0).astype(np.float64)

    def reference(self, grades, topic):
        top = grades[: self.cutoff] if self.cutoff else grades
        return float(any(ref_rel(g, self.rel) for g in top))


@register("NumRet")
@dataclass(frozen=True)
class NumRet(Measure):
    """Number of documents retrieved (in the top ``cutoff``); trec_eval ``num_ret``."""

    cutoff: int | None = None

    trec_eval = ("num_ret",)
    value_bound = None  # a count of documents
    is_count = True
    uses_grades = False  # counts documents, judged or not

    def batch(self, grades, topics):
        return _num_ret(grades, self.cutoff).astype(np.float64)

    def reference(self, grades, topic):
        return float(len(grades[: self.cutoff] if self.cutoff else grades))


@register("NumRel")
@dataclass(frozen=True)
class NumRel(Measure):
    """Number of relevant documents of the topic, RB (trec_eval ``num_rel``)."""

    rel: Grade = 1
    needs_recall_base = True

    trec_eval = ("num_rel",)
    value_bound = None  # a count of documents
    is_count = True

    def batch(self, grades, topics):
        return np.broadcast_to(topics.num_rel(self.rel).astype(np.float64), grades.shape[:2]).copy()

    def reference(self, grades, topic):
        return float(topic.num_rel(self.rel)[0])


@register("NumRelRet")
@dataclass(frozen=True)
class NumRelRet(Measure):
    """Number of relevant documents retrieved (in the top ``cutoff``); trec_eval ``num_rel_ret``."""

    cutoff: int | None = None
    rel: Grade = 1

    trec_eval = ("num_rel_ret",)
    value_bound = None  # a count of documents
    is_count = True

    def batch(self, grades, topics):
        return _rel_ret(grades, self.cutoff, self.rel).astype(np.float64)

    def reference(self, grades, topic):
        top = grades[: self.cutoff] if self.cutoff else grades
        return float(sum(ref_rel(g, self.rel) for g in top))
