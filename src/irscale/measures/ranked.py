"""Rank-based binary measures: AP, RR, Rprec, bpref (trec_eval map / map_cut,
recip_rank, Rprec, bpref)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irscale.measures.base import Measure, cut, ranks, ref_rel, register, relevant, safe_div


@register("AP", "MAP")
@dataclass(frozen=True)
class AP(Measure):
    """Average Precision: the sum of P@k over the ranks k <= ``cutoff`` of relevant
    documents, divided by RB (0 when RB = 0). trec_eval ``map`` / ``map_cut_k``.

    The numerator RB * AP is RB-free; it is what the interval-scale transformation maps.
    """

    cutoff: int | None = None
    rel: int = 1
    needs_recall_base = True

    @property
    def trec_eval_name(self):
        return f"map_cut_{self.cutoff}" if self.cutoff else "map"

    def batch(self, grades, topics):
        r = relevant(cut(grades, self.cutoff), self.rel)
        hits = np.cumsum(r, axis=-1, dtype=np.int32)
        hits[~r] = 0
        return safe_div(hits @ (1.0 / ranks(r.shape[-1])), topics.num_rel(self.rel))

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

    cutoff: int | None = None
    rel: int = 1

    @property
    def trec_eval_name(self):
        return None if self.cutoff else "recip_rank"

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

    rel: int = 1
    needs_recall_base = True

    @property
    def trec_eval_name(self):
        return "Rprec"

    def batch(self, grades, topics):
        rb = topics.num_rel(self.rel)
        hits = np.cumsum(relevant(grades, self.rel), axis=-1, dtype=np.int32)
        at = np.clip(rb, 1, grades.shape[-1]) - 1
        idx = np.broadcast_to(at[None, :, None], grades.shape[:2] + (1,))
        got = np.take_along_axis(hits, idx, axis=-1)[..., 0]
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

    rel: int = 1
    needs_recall_base = True

    @property
    def trec_eval_name(self):
        return "bpref"

    def batch(self, grades, topics):
        rb = topics.num_rel(self.rel)
        nn = topics.num_nonrel(self.rel)
        r = grades >= self.rel
        nonrel = (grades >= 0) & ~r
        above = np.cumsum(nonrel, axis=-1, dtype=np.int32)
        lim = np.minimum(nn, rb)[None, :, None]
        frac = safe_div(np.minimum(above, rb[None, :, None]), lim)
        contrib = np.where(above > 0, 1.0 - frac, 1.0)
        return safe_div(np.where(r, contrib, 0.0).sum(axis=-1), rb)

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
