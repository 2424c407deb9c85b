"""ERR: key = L * 2^(cN) * ERR, an integer (stopping probabilities are multiples of 2^-c); split, with
wide keys beyond int64."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.errors import MeasureError
from irscale.measures import ERR
from irscale.scales.spaces.base import Space, all_runs, serves
from irscale.scales.wide import MASK, Wide

__all__ = ["ERRSpace"]


@serves(ERR)
@dataclass(frozen=True, eq=False)
class ERRSpace(Space):
    """Key = lcm(1..N) * 2^(cN) * ERR: with stopping probabilities R = (2^g - 1) / 2^c
    every term is an integer. Split: the prefix's continuation probability is the state
    (binary: 2^-R1). Keys beyond int64 (binary N >= 27, 3 levels N >= 19, 4 levels
    N >= 15, 5 levels N >= 12) are split as :class:`~irscale.scales.wide.Wide` arrays."""

    key_bytes_per_rank = 32  # what keys allocates per run and rank, measured (tests/test_budget.py)

    family: str = "err"
    description: ClassVar[str] = "exact, from the two halves of each run (on 3 levels up to N = 22)"

    engine_rule: ClassVar[str | None] = "err-wide"

    splittable: bool = True
    wide_split: bool = True

    @cached_property
    def L(self) -> int:
        return math.lcm(*range(1, self.N + 1))

    @cached_property
    def cc(self) -> int:
        return 1 if self.binary_measure else self.c

    @cached_property
    def max_key(self):
        return self.L * 2 ** (self.cc * self.N) * 2  # ERR <= sum 1/k ... bounded by 2^(cN) L H_N; safe

    def _terms(self, g, first_rank: int, total: int, dtype=None):
        """Sum over ranks of L/k * (2^g_k - 1) * prod_{j<k} (2^c - 2^g_j + 1) * 2^(c(total-k'))
        for a block of ranks starting at ``first_rank`` (1-based), as if the block were a
        whole run of length ``total`` ranks ending at N; and the block's continuation
        numerator prod (2^c - 2^g_j + 1). ``dtype``: int64 while every key stays below
        2^62 (then so do all partial products, whose factors are >= 1), exact Python
        integers (object) otherwise; uint64 gives the terms mod 2^64 and float64 within
        relative (2 m + 2) 2^-53 of them (m ranks; see irscale.scales.wide)."""
        c = self.cc
        dtype = dtype or (np.int64 if self.int64 else object)
        g = np.asarray(g).astype(np.int64)
        n, m = g.shape
        stop = ((1 << g) - 1).astype(dtype)  # numerator of R over 2^c
        cont = ((1 << c) - (1 << g) + 1).astype(dtype)  # numerator of 1 - R over 2^c
        reach = np.ones(n, dtype=dtype)
        out = np.zeros(n, dtype=dtype)
        for i in range(m):
            w = (self.L // (first_rank + i)) << (c * (total - 1 - i))
            f = np.uint64(w & MASK) if dtype is np.uint64 else float(w) if dtype is np.float64 else w
            out += stop[:, i] * reach * f
            reach = reach * cont[:, i]
        return out, reach

    def keys(self, g):
        return self._terms(g, 1, self.N)[0]

    def key_values(self, keys):
        if not self.int64:
            den = self.L << (self.cc * self.N)
            return np.array([int(k) / den for k in keys], dtype=np.float64)  # int / int: correctly rounded
        return np.asarray(keys, dtype=np.float64) / (self.L * 2.0 ** (self.cc * self.N))

    def split_parts(self, h):
        c = self.cc
        if c > 50:  # grade terms 2^c and continuation products in int64
            raise MeasureError(
                f"{self.measure}: the split engine serves ERR on up to 51 relevance levels, not "
                f"{c + 1}; use fewer levels (max_grade= / --max-grade)"
            )
        pre, suf = all_runs(h, c), all_runs(self.N - h, c)
        # prefix terms as if the run ended at N (they carry 2^(c(N-h)) more than alone); behind
        # a prefix with continuation numerator `reach` (over 2^(ch)) the suffix's terms are
        # E * reach / 2^(ch) * 2^(ch) = E * reach: the 2^(c(N-k)) factor counts the suffix's
        # own ranks and the prefix's 2^(ch) denominators cancel the extra ch bits
        reach = np.prod((1 << c) - (1 << pre.astype(np.int64)) + 1, axis=1)  # <= 2^(ch) < 2^50 (MAX_BITS)
        if self.int64:
            V = self._terms(pre, 1, self.N)[0]
            E = self._terms(suf, h + 1, self.N - h)[0]
            return V, reach, (lambda s: E * s)
        V = Wide(self._terms(pre, 1, self.N, np.float64)[0], self._terms(pre, 1, self.N, np.uint64)[0])
        E = Wide(self._terms(suf, h + 1, self.N - h, np.float64)[0], self._terms(suf, h + 1, self.N - h, np.uint64)[0])
        return V, reach, E.scaled
