"""Rank-based binary measures: AP, RR, Rprec, bpref (trec_eval map / map_cut,
recip_rank, Rprec, bpref)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irscale.data import Grade
from irscale.measures.base import Measure, cut, hits_at, rb_divisor, ref_rel, register, relevant, row_sums, safe_div

__all__ = ["AP", "Bpref", "Rprec", "RR"]


@register("AP", "MAP")
@dataclass(frozen=True)
class AP(Measure):
    """Average Precision: the sum of P@k over the ranks k <= ``cutoff`` of relevant
    documents, divided by RB (0 when RB = 0). trec_eval ``map`` / ``map_cut_k``.

    The numerator RB * AP is RB-free; it is what the interval-scale transformation maps
    (phi for AP: :class:`irscale.scales.spaces.ap.APSpace`, ``@serves(AP)``).
    """

    examples = ("AP@5", "AP(rel=2)")  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade = 1
    needs_recall_base = True

    trec_eval = ("map", "map_cut_{cutoff}")

    def normalizer(self, topics, N, c):
        return rb_divisor(topics, self.rel)

    def batch(self, grades, topics):
        r = relevant(cut(grades, self.cutoff), self.rel)
        row, k, hits = hits_at(r)
        return safe_div(row_sums(row, hits / (k + 1.0), r.shape[:-1]), topics.num_rel(self.rel))

    def reference(self, grades, topic):
        rb = int(topic.num_rel(self.rel)[0])
        total, hits = 0.0, 0
        for i, g in enumerate(grades[: self.cutoff] if self.cutoff else grades):
            if ref_rel(g, self.rel):
                hits += 1
                total += hits / (i + 1)
        return total / rb if rb else 0.0


@register("RR", "MRR")
@dataclass(frozen=True)
class RR(Measure):
    """Reciprocal rank of the first relevant document in the top ``cutoff`` (0 if none).
    trec_eval ``recip_rank``. RB-free."""

    examples = ("RR@3",)  # checked by the conformance suite (irscale.testing)

    cutoff: int | None = None
    rel: Grade = 1

    trec_eval = ("recip_rank",)

    def batch(self, grades, topics):
        r = relevant(cut(grades, self.cutoff), self.rel)
        first = np.argmax(r, axis=-1)
        return np.where(r.any(axis=-1), 1.0 / (first + 1.0), 0.0)

    def reference(self, grades, topic):
        for i, g in enumerate(grades[: self.cutoff] if self.cutoff else grades):
            if ref_rel(g, self.rel):
                return 1.0 / (i + 1)
        return 0.0


@register("Rprec")
@dataclass(frozen=True)
class Rprec(Measure):
    """R-precision: relevant documents in the top RB divided by RB (trec_eval ``Rprec``)."""

    rel: Grade = 1
    needs_recall_base = True

    trec_eval = ("Rprec",)

    def batch(self, grades, topics):
        rb = topics.num_rel(self.rel)
        row, k, _ = hits_at(relevant(grades, self.rel))
        got = row_sums(row, (k < rb[row % grades.shape[-2]]).astype(np.float64), grades.shape[:-1])
        return safe_div(got, rb)

    def reference(self, grades, topic):
        rb = int(topic.num_rel(self.rel)[0])
        return sum(ref_rel(g, self.rel) for g in grades[:rb]) / rb if rb else 0.0


@register("bpref", "Bpref")
@dataclass(frozen=True)
class Bpref(Measure):
    """Binary preference (Buckley & Voorhees 2004), exactly as trec_eval ``bpref``:
    for each retrieved relevant document, 1 - min(n, RB) / min(N, RB) where n counts the
    judged non-relevant documents ranked above it and N those of the topic; summed and
    divided by RB. Unjudged documents (and negative grades) are skipped."""

    examples = ("bpref(rel=2)",)  # checked by the conformance suite (irscale.testing)

    rel: Grade = 1
    needs_recall_base = True

    trec_eval = ("bpref",)

    def batch(self, grades, topics):
        rb = topics.num_rel(self.rel)
        nn = topics.num_nonrel(self.rel)
        r = relevant(grades, self.rel)
        D = grades.shape[-1]
        rel_at = np.flatnonzero(r)
        nonrel_at = np.flatnonzero((grades >= 0) & ~r)  # judged non-relevant
        row = rel_at // D
        # judged non-relevant documents ranked above each relevant one, in its row
        above = np.searchsorted(nonrel_at, rel_at) - np.searchsorted(nonrel_at, row * D)
        t = row % grades.shape[-2]  # topic of each relevant document
        rb_t = rb[t]
        frac = safe_div(np.minimum(above, rb_t), np.minimum(nn, rb)[t])
        contrib = np.where(above > 0, 1.0 - frac, 1.0)
        return safe_div(row_sums(row, contrib, grades.shape[:-1]), rb)

    def reference(self, grades, topic):
        rb = int(topic.num_rel(self.rel)[0])
        nn = int(topic.num_nonrel(self.rel)[0])
        total, above = 0.0, 0
        for g in grades:
            if g < 0:
                continue
            if g < self.rel:
                above += 1
            else:
                total += 1.0 - min(above, rb) / min(nn, rb) if above else 1.0
        return total / rb if rb else 0.0
