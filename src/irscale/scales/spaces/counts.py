"""Counts: P, R, F, NumRelRet, gP, gR. Key = the number of relevant documents in the top N (or the sum of
gains): closed form."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.measures import F, NumRelRet, P, R, gP, gR
from irscale.scales.spaces.base import INT64_LIMIT, Space, serves, space_gains

__all__ = ["CountSpace"]


def _gain_sum_counts(N: int, gains: list[int]) -> dict[int, int]:
    """{total: runs}: how many of the (c+1)^N runs have each sum of N gains (sparse)."""
    out = {0: 1}
    for _ in range(N):
        nxt: dict[int, int] = {}
        for t, a in out.items():
            for w in gains:
                nxt[t + w] = nxt.get(t + w, 0) + a
        out = nxt
    return out


def _poly_counts(N: int, per_run_weights: list[int]) -> list[int]:
    """Coefficients of (sum over grades of x^w(grade))^N: how many runs have each total."""
    coeffs = [1]
    for _ in range(N):
        nxt = [0] * (len(coeffs) + max(per_run_weights))
        for i, a in enumerate(coeffs):
            if a:
                for w in per_run_weights:
                    nxt[i + w] += a
        coeffs = nxt
    return coeffs


@serves(P, R, F, NumRelRet, gP, gR)
@dataclass(frozen=True, eq=False)
class CountSpace(Space):
    """Key = number of relevant documents in the top N (binary) or sum of grades (gP, gR:
    gR's RB-free core is gP's, divided by the topic's recall base in gain units). With a
    gain map the sums of integer gains (:func:`space_gains`) do not fill 0..N G(c), so the
    key is the rank (from 0) of the run's gain sum among the attainable ones."""

    description: ClassVar[str] = "exact, by counting (its values are numbers of relevant documents or sums of grades)"

    family: str = "count"
    closed: bool = True

    @cached_property
    def _gains(self) -> tuple[list[int], Fraction]:
        return space_gains(self)

    @cached_property
    def _plain(self) -> bool:
        """Gains 0..c (or 0, 1): the key is the sum itself."""
        return self._gains[0] == list(range(len(self._gains[0])))

    @property
    def equispaced(self) -> bool:
        return self._plain  # (with a gain map the attainable sums, hence the values, are not equi-spaced)

    @cached_property
    def _sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Attainable gain sums (ascending) and the runs having each (exact ints)."""
        counts = _gain_sum_counts(self.N, self._gains[0])
        sums = sorted(counts)
        dtype = np.int64 if sums[-1] < INT64_LIMIT else object
        return np.array(sums, dtype=dtype), np.array([counts[t] for t in sums], dtype=object)

    @cached_property
    def max_key(self):
        if self._plain:
            return self.N * (1 if self.binary_measure else self.c)
        return len(self._sums[0]) - 1

    def keys(self, g):
        if self._plain:
            return g.sum(axis=-1, dtype=np.int64)
        G = self._gains[0]
        table = np.array(G, dtype=np.int64 if self.N * G[-1] < INT64_LIMIT else object)
        tot = table[np.asarray(g, dtype=np.int64)].sum(axis=-1)
        return np.searchsorted(self._sums[0], tot).astype(np.int64)

    def key_values(self, keys):
        if self._plain:
            return np.asarray(keys, dtype=np.float64)
        sums, scale = self._sums[0], self._gains[1]
        return np.array([int(sums[int(k)]) / scale for k in np.asarray(keys).reshape(-1)], dtype=np.float64).reshape(
            np.shape(keys)
        )  # Fraction -> correctly rounded float

    @cached_property
    def _cum(self):
        if self._plain:
            weights = [0, 1] if self.binary_measure else list(range(self.c + 1))
            counts = _poly_counts(self.N, weights)[: self.max_key + 1]
            return np.cumsum(np.array(counts, dtype=object))
        return np.cumsum(self._sums[1])

    def closed_runs_le(self, keys):
        return self._cum[np.asarray(keys, dtype=np.int64)]
