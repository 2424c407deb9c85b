"""SBTO: its own integer values, the rank of the run's grade multiset (2019 paper, eq. 3): closed form."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.errors import MeasureError
from irscale.measures import SBTO
from irscale.scales.spaces.base import INT64_LIMIT, Space, serves

__all__ = ["MULTISETS_LIMIT", "sbto_rank", "SBTOSpace"]


MULTISETS_LIMIT = 2**24  # multisets of grades SBTO's run counts list (about 0.7 GB of Python integers)


@serves(SBTO)
@dataclass(frozen=True, eq=False)
class SBTOSpace(Space):
    family: str = "sbto"
    description: ClassVar[str] = "exact, by counting"
    closed: bool = True

    @cached_property
    def max_key(self):
        return math.comb(self.N + self.c, self.c) - 1

    def keys(self, g):
        return sbto_rank(g, self.c)

    def key_values(self, keys):
        return np.asarray(keys, dtype=np.float64)

    @cached_property
    def _cum(self):
        # one value per multiset of grades; N! / prod(m_g!) runs each
        self.check_multisets()
        out = np.zeros(self.max_key + 1, dtype=object)
        for ms in _compositions(self.N, self.c + 1):
            d = [g for g in range(self.c, -1, -1) for _ in range(ms[g])]
            key = sum(math.comb(d[j - 1] + self.N - j, self.N - j + 1) for j in range(1, self.N + 1))
            out[key] = math.factorial(self.N) // math.prod(math.factorial(m) for m in ms)
        return np.cumsum(out)

    def closed_runs_le(self, keys):
        return self._cum[np.asarray(keys, dtype=np.int64)]

    def check_multisets(self):
        """The run counts (ties "min", "max", "mid"; "unq" needs none) list every multiset
        of N grades, C(N + c, c) of them: refused beyond :data:`MULTISETS_LIMIT` (each is a
        Python integer, about 40 bytes), before any is made."""
        if self.max_key + 1 > MULTISETS_LIMIT:
            raise MeasureError(
                f"{self.measure} at N={self.N} with {self.c + 1} relevance levels: ties over all runs (min, max, "
                f"mid) count the runs of every multiset of {self.N} grades, {self.max_key + 1:,} of them (more than "
                f"{MULTISETS_LIMIT:,}); use ties='unq' (compare: mid=False, CLI --no-mid), a smaller N or fewer "
                "relevance levels"
            )


def sbto_rank(runs: np.ndarray, c: int) -> np.ndarray:
    """SBTO (2019 paper, eq. 3): sum over j of C(d_j + N - j, N - j + 1), d the grades
    sorted descending; the rank (from 0) of the run's grade multiset in the set-based order."""
    N = runs.shape[1]
    d = -np.sort(-np.asarray(runs, dtype=np.int64), axis=1)
    # ranks run up to C(N + c, c) - 1: int64 below 2^62, exact Python ints beyond
    dtype = np.int64 if math.comb(N + c, c) < INT64_LIMIT else object
    out = np.zeros(len(d), dtype=dtype)
    for j in range(1, N + 1):
        table = np.array([math.comb(x + N - j, N - j + 1) for x in range(c + 1)], dtype=dtype)
        out = out + table[d[:, j - 1]]
    return out


def _compositions(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, parts - 1):
            yield (first,) + rest
