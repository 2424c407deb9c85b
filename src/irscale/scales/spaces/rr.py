"""RR: key = N + 1 - (first relevant rank), 0 when none: closed form."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.measures import RR
from irscale.scales.spaces.base import Space, serves

__all__ = ["RRSpace"]


@serves(RR)
@dataclass(frozen=True, eq=False)
class RRSpace(Space):
    family: str = "rr"
    description: ClassVar[str] = "exact (its values are the rank of the first relevant document)"
    closed: bool = True

    @cached_property
    def max_key(self):
        return self.N

    def keys(self, g):
        r = g > 0
        first = np.argmax(r, axis=-1)
        return np.where(r.any(axis=-1), self.N - first, 0).astype(np.int64)

    def key_values(self, keys):
        keys = np.asarray(keys)
        return np.where(keys > 0, 1.0 / np.maximum(self.N + 1 - keys, 1), 0.0)

    def closed_runs_le(self, keys):
        # key 0: the one all-non-relevant run; key N+1-f: 2^(N-f) runs (first relevant at f)
        counts = [1] + [2 ** (self.N - (self.N + 1 - k)) for k in range(1, self.N + 1)]
        return np.cumsum(np.array(counts, dtype=object))[np.asarray(keys, dtype=np.int64)]
