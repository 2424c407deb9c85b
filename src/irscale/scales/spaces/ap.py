"""AP: key = lcm(1..N) * RB * AP; split after rank h by the prefix's number of relevant documents."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.measures import AP
from irscale.scales.spaces.base import Space, all_runs, serves

__all__ = ["APSpace"]


@serves(AP)
@dataclass(frozen=True, eq=False)
class APSpace(Space):
    """Key = lcm(1..N) * RB * AP. Split after rank h: with R1 relevant documents in the
    prefix, key = V(prefix) + R1 * A(suffix) + B(suffix)."""

    key_bytes_per_rank = 24  # what keys allocates per run and rank, measured (tests/test_budget.py)

    family: str = "ap"
    description: ClassVar[str] = "exact, from the two halves of each run"
    splittable: bool = True

    @cached_property
    def L(self) -> int:
        return math.lcm(*range(1, self.N + 1))

    @cached_property
    def max_key(self):
        return self.L * self.N

    def keys(self, g):
        r = (np.asarray(g) > 0).astype(np.int64)
        hits = np.cumsum(r, axis=-1) * r
        if not self.int64:  # exact Python integers (N >= 41: L * N passes 2^62)
            return hits.astype(object) @ np.array([self.L // k for k in range(1, self.N + 1)], dtype=object)
        w = self.L // np.arange(1, self.N + 1, dtype=np.int64)
        return hits @ w

    def key_values(self, keys):
        if not self.int64:
            return np.array([int(k) / self.L for k in keys], dtype=np.float64)  # int / int: correctly rounded
        return np.asarray(keys, dtype=np.float64) / self.L

    def split_parts(self, h):
        self.require_int64("split")
        L = self.L
        pre = all_runs(h, 1).astype(np.int64)
        hits = np.cumsum(pre, axis=1) * pre
        V = hits @ (L // np.arange(1, h + 1, dtype=np.int64))
        state = pre.sum(axis=1)
        suf = all_runs(self.N - h, 1).astype(np.int64)
        w = L // np.arange(h + 1, self.N + 1, dtype=np.int64)
        A = suf @ w
        B = (np.cumsum(suf, axis=1) * suf) @ w
        return V, state, (lambda s: s * A + B)
