"""The interval-scale measures of Ferrante, Ferro & Pontarollo (2017, 2019): the rank
functions of the set-based and the strong top-heaviness total orders on runs of length N."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from irscale.data import Grade
from irscale.measures.base import Measure, cut, graded_gain, ref_gain, register

__all__ = ["RBTO", "SBTO"]


@dataclass(frozen=True)
class _TotalOrderMeasure(Measure):
    """The rank function of a total order on the runs of length N = ``cutoff`` (graded;
    binary with ``rel=``)."""

    cutoff: int | None = None
    rel: Grade | None = None
    graded = True
    requires_cutoff = True
    levels_only = True  # rank functions of orders on the levels: real-valued grades serve as their codes 0..c
    value_bound = None  # ranks of runs: up to the number of runs

    @property
    def _N(self) -> int:
        """The run length N: the cutoff, never None (``requires_cutoff``: __post_init__ refuses None)."""
        assert self.cutoff is not None
        return self.cutoff


@register("SBTO")
@dataclass(frozen=True)
class SBTO(_TotalOrderMeasure):
    """Set-Based Total Order measure at N = ``cutoff`` (2019 paper, eq. 3):
    sum over j = 1..N of C(d_j + N - j, N - j + 1), where d_1 >= ... >= d_N are the
    grades of the top N documents sorted in decreasing order. With binary relevance
    (``rel=`` given, or c = 1) it is the number of relevant documents retrieved.
    Computed in float64 (exact while the values stay below 2^53)."""

    examples = ("SBTO(rel=1)@5",)  # checked by the conformance suite (irscale.testing)

    def batch(self, grades, topics):
        from scipy.special import comb  # here: scipy.special takes 0.3 s to import

        N = self._N
        d = graded_gain(cut(grades, N), topics.max_grade, self.rel)
        if d.shape[-1] < N:
            d = np.concatenate([d, np.zeros(d.shape[:-1] + (N - d.shape[-1],))], axis=-1)
        d = -np.sort(-d, axis=-1)
        j = np.arange(1, N + 1)
        return comb(d + N - j, N - j + 1).sum(axis=-1)

    def reference(self, grades, topic):
        N = self._N
        d = sorted((int(ref_gain(g, topic.max_grade, self.rel)) for g in grades[:N]), reverse=True)
        d += [0] * (N - len(d))
        return float(sum(math.comb(d[j - 1] + N - j, N - j + 1) for j in range(1, N + 1)))


@register("RBTO")
@dataclass(frozen=True)
class RBTO(_TotalOrderMeasure):
    """Rank-Based Total Order measure at N = ``cutoff`` (2019 paper, eq. 6):
    sum over i = 1..N of d_i (c + 1)^(N - i), the run's grades read as a base-(c+1)
    number. Computed in float64 (exact while (c+1)^N < 2^53)."""

    examples = ("RBTO(rel=1)@4",)  # checked by the conformance suite (irscale.testing)

    def batch(self, grades, topics):
        N = self._N
        c = 1 if self.rel is not None else topics.max_grade
        d = graded_gain(cut(grades, N), topics.max_grade, self.rel)
        w = float(c + 1) ** (N - 1 - np.arange(d.shape[-1], dtype=np.float64))
        return d @ w

    def reference(self, grades, topic):
        N = self._N
        c = 1 if self.rel is not None else topic.max_grade
        d = [int(ref_gain(g, topic.max_grade, self.rel)) for g in grades[:N]]
        return float(sum(x * (c + 1) ** (N - 1 - i) for i, x in enumerate(d)))
