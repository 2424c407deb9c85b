"""Positional keys: a run read as a base-(c+1) number (RBTO; binary RBP with p <= 1/2 in
:mod:`irscale.scales.spaces.rbp`): closed form, every run its own value."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.measures import RBTO
from irscale.scales.spaces.base import Space, _plus_one, serves

__all__ = ["PositionalSpace"]


@serves(RBTO)
@dataclass(frozen=True, eq=False)
class PositionalSpace(Space):
    """Key = the run read as a base-(c+1) number (RBTO; binary RBP with p <= 1/2, see
    :class:`LexicographicRBPSpace`). Every run has its own value."""

    family: str = "positional"
    description: ClassVar[str] = "exact (every run has a value of its own)"
    closed: bool = True

    @cached_property
    def max_key(self):
        return (self.c + 1) ** self.N - 1

    def keys(self, g):
        from irscale.scales.orders import positional_weights

        w = positional_weights(self.N, self.c)  # int64, or exact Python integers beyond 2^62
        return np.asarray(g).astype(w.dtype) @ w

    def key_values(self, keys):
        return np.array([float(k) for k in keys], dtype=np.float64)

    def closed_runs_le(self, keys):
        return _plus_one(keys)
