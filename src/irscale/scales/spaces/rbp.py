"""RBP with p = a/b: key = sum of G(g_k) a^(k-1) b^(N-k). With p <= d / (d + G_c) the runs are ordered as
base-(c+1) numbers (closed form); with p = 1/b, b <= c, the keys fill 0..max_key (closed form); otherwise
split, or counted where every run has its own value."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import ClassVar

import numpy as np

from irscale.measures import RBP
from irscale.scales.spaces.base import Space, all_runs, serves, space_gains
from irscale.scales.spaces.positional import PositionalSpace

__all__ = ["ContiguousRBPSpace", "LexicographicRBPSpace", "RBPSpace"]


def _rbp_lexicographic(m, N: int, c: int) -> bool:
    """RBP whose runs are ordered lexicographically, as base-(c+1) numbers: with gains
    G_0 < ... < G_c (the grade by default, 0, 1 for binary runs), smallest step
    d = min(G_(g+1) - G_g) and top gain G_c, when p <= d / (d + G_c) (exactly: p as
    ``m.p_exact``). Then rank k weighs p^(k-1) d >= G_c (p^k + p^(k+1) + ...) >
    G_c (p^k + ... + p^(N-1)) at any finite N, so a step at rank k outweighs every later
    rank. For gains 0..c: p <= 1/(c+1), the 2019 paper's interval case and every smaller
    p; equal gains for two grades (d = 0) never."""
    gains = m.gain_values(1 if (getattr(m, "rel", None) is not None or c == 1) else c)
    step = min(b - a for a, b in zip(gains, gains[1:]))
    if step <= 0:
        return False
    return m.p_exact <= step / (step + gains[-1])


@serves(RBP, when=_rbp_lexicographic)
@dataclass(frozen=True, eq=False)
class LexicographicRBPSpace(PositionalSpace):
    """RBP with p <= d / (d + G_c) (:func:`_rbp_lexicographic`; gains 0..c: p <= 1/(c+1),
    binary: p <= 1/2): the weight of a rank is at least the top gain times the sum of all
    later ones over the smallest gain step, so runs are ordered as base-(c+1) numbers and
    every run has its own value (closed form)."""

    measure: RBP  # (Space.measure, narrowed: the field keeps its place and behaviour)

    @property
    def equispaced(self) -> bool:  # p = 1/(c+1) on gains 0..c: the keys fill 0..(c+1)^N - 1, the value is key / b^N
        G, _ = space_gains(self)
        return self.measure.p_exact == Fraction(1, self.c + 1) and list(G) == list(range(self.c + 1))

    def key_values(self, keys):  # RBP = (1 - p) sum p^(k-1) gain(g_k) / gain(c)
        G, _ = space_gains(self)
        p, c, out = float(self.measure.p), self.c, []
        for key in keys:
            key, digits = int(key), []
            for _ in range(self.N):
                key, g = divmod(key, c + 1)
                digits.append(g)
            out.append((1 - p) * sum(G[g] / G[-1] * p**k for k, g in enumerate(reversed(digits))))
        return np.array(out, dtype=np.float64)


def _rbp_contiguous(m, N: int, c: int) -> bool:
    """Graded RBP with p = 1/b, 2 <= b <= c, gains proportional to the grade: a run's key
    sum g_k b^(N-k) is a base-b number with digits 0..c >= b - 1, so its values are every
    integer from 0 to c (b^N - 1) / (b - 1) (by induction: the digit-d blocks
    [d b^n, d b^n + c (b^n - 1) / (b - 1)] touch because c >= b - 1): closed form.
    RBP(p=0.5) on 3-5 levels, (1/3) on 4-5, (1/4) on 5."""
    if c == 1 or getattr(m, "rel", None) is not None:
        return False
    gains = m.gain_values(c)
    p = m.p_exact
    return (
        gains[1] > 0
        and all(gains[g] == g * gains[1] for g in range(c + 1))
        and p.numerator == 1
        and 2 <= p.denominator <= c
    )


@serves(RBP, when=_rbp_contiguous)
@dataclass(frozen=True, eq=False)
class ContiguousRBPSpace(Space):
    """RBP with p = 1/b, b <= c (:func:`_rbp_contiguous`): key = sum g_k b^(N-k), the
    values are the integers 0..max_key, so phi = key + 1; runs tie (b < c + 1) and the
    runs at or below a key are counted digit by digit (:meth:`closed_runs_le`)."""

    measure: RBP  # (Space.measure, narrowed: the field keeps its place and behaviour)
    family: str = "rbp-contiguous"
    description: ClassVar[str] = "exact (its values are consecutive integers)"
    closed: bool = True

    @property
    def equispaced(self) -> bool:
        return True  # the keys fill 0..max_key, the value is key / b^N

    @cached_property
    def b(self) -> int:
        return self.measure.p_exact.denominator

    @cached_property
    def max_key(self):
        return self.c * (self.b**self.N - 1) // (self.b - 1)

    def keys(self, g):
        w = [self.b ** (self.N - k) for k in range(1, self.N + 1)]
        dtype = np.int64 if self.int64 else object
        return np.asarray(g).astype(dtype) @ np.array(w, dtype=dtype)

    def key_values(self, keys):  # RBP = (1 - p) sum p^(k-1) g_k / c = key (b - 1) / (c b^N)
        den = self.c * self.b**self.N
        return np.array([int(k) * (self.b - 1) / den for k in keys], dtype=np.float64)  # int / int: exact

    def closed_runs_le(self, keys):
        """Runs with key <= each key, digit by digit from the top rank: budgets that every
        completion fits (or none does) are counted at once; the undecided ones at a rank
        are at most c / (b - 1) + 1 (they differ by multiples of that rank's weight and
        lie below the most the later ranks can add)."""
        N, c, b = self.N, self.c, self.b
        top = [c * (b**i - 1) // (b - 1) for i in range(N + 1)]  # most that ranks with weights b^0..b^(i-1) add
        uniq, inv = np.unique(np.asarray(keys).reshape(-1), return_inverse=True)
        out = []
        for k in uniq:
            total, open_ = 0, {int(k): 1}  # undecided budgets over weights b^0..b^(i-1), with multiplicity
            for i in range(N, 0, -1):
                w = b ** (i - 1)
                nxt: dict[int, int] = {}
                for r, n in open_.items():
                    for d in range(c + 1):
                        rest = r - d * w
                        if rest < 0:
                            break
                        if rest >= top[i - 1]:
                            total += n * (c + 1) ** (i - 1)
                        else:
                            nxt[rest] = nxt.get(rest, 0) + n
                open_ = nxt
            out.append(total)
        return np.array(out, dtype=object)[inv.reshape(-1)]


@serves(RBP)
@dataclass(frozen=True, eq=False)
class RBPSpace(Space):
    """RBP with p = a/b rational (``measure.p_exact``: a fraction as given, a float as the
    decimal it is written as): key = sum of G(g_k) a^(k-1) b^(N-k), G the integer gains of
    :func:`space_gains` (the grade by default; a gain map scaled to integers).
    State-free split. For binary runs every one of the 2^N runs has its own value (see
    the guide)."""

    key_bytes_per_rank = 16  # what keys allocates per run and rank, measured (tests/test_budget.py)

    measure: RBP  # (Space.measure, narrowed: the field keeps its place and behaviour)
    family: str = "rbp"
    description: ClassVar[str] = "exact, from integer keys of its p"
    certified_bounds: ClassVar[bool] = True

    engine_rule: ClassVar[str | None] = "rbp-count"

    splittable: bool = True

    @cached_property
    def ab(self) -> tuple[int, int]:
        f = self.measure.p_exact
        return f.numerator, f.denominator

    @cached_property
    def gain_ints(self) -> list[int]:
        """Integer gains of grades 0..c (0, 1 binary)."""
        G = space_gains(self)[0]
        if G[-1] == 0:
            self.measure.top_gain(self.c)  # raises: RBP divides by the top grade's gain
        return G

    @cached_property
    def gain_top(self) -> int:
        return self.gain_ints[-1]

    @cached_property
    def weights(self) -> list[int]:
        a, b = self.ab
        return [a ** (k - 1) * b ** (self.N - k) for k in range(1, self.N + 1)]

    @cached_property
    def gmax(self) -> int:
        return 1 if self.binary_measure else self.c

    @cached_property
    def max_key(self):
        return self.gain_top * sum(self.weights)

    def _gained(self, g, dtype):
        """Runs' grades replaced by their integer gains."""
        return np.array(self.gain_ints, dtype=dtype)[np.asarray(g, dtype=np.int64)]

    def keys(self, g):
        if not self.int64:  # exact Python integers
            return self._gained(g, object) @ np.array(self.weights, dtype=object)
        return self._gained(g, np.int64) @ np.array(self.weights, dtype=np.int64)

    def key_values(self, keys):
        a, b = self.ab
        top = self.gain_top
        if not self.int64:  # RBP = key (1 - p) / (G_c b^(N-1)) = key (b - a) / (G_c b^N): int / int, exact
            den = top * b**self.N
            return np.array([int(k) * (b - a) / den for k in keys], dtype=np.float64)
        return np.asarray(keys, dtype=np.float64) * (1 - a / b) / (top * float(b) ** (self.N - 1))

    def split_parts(self, h):
        self.require_int64("split")
        c = self.gmax
        w = np.array(self.weights, dtype=np.int64)
        V = self._gained(all_runs(h, c), np.int64) @ w[:h]
        S = self._gained(all_runs(self.N - h, c), np.int64) @ w[h:]
        return V, np.zeros(len(V), dtype=np.int64), (lambda s: S)
