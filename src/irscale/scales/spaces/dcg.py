"""DCG and nDCG (any log base): no rational key; keys are sums over commensurable classes of
logarithms (see :class:`DCGSpace`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from irscale.errors import MeasureError
from irscale.measures import DCG, nDCG
from irscale.scales.spaces.base import INT64_LIMIT, Space, _owner, serves, space_gains

__all__ = ["dcg_weight_classes", "DCGSpace"]


def _primitive_power(n: int) -> tuple[int, int]:
    """``(r, a)`` with n = r^a and r not itself a perfect power (n >= 2)."""
    for a in range(n.bit_length(), 1, -1):
        r = round(n ** (1.0 / a))
        for cand in (r - 1, r, r + 1):
            if cand >= 2 and cand**a == n:
                return _primitive_power(cand)[0], a * _primitive_power(cand)[1]
    return n, 1


def dcg_weight_classes(N: int, base) -> list[tuple[object, list[tuple[int, Fraction]]]]:
    """The ranks 1..N of a DCG discount grouped into classes of commensurable weights:
    ``[(theta, [(rank0, q), ...]), ...]`` with weight(rank) = q * theta, q rational and
    theta the class's common irrational factor (a label: ``("log", r)`` for 1/log2 r,
    ``("jk", r)`` for ln b / ln r, ``1`` for the rational class).

    trec_eval's discount 1/log2(k+1): with k + 1 = r^a (r not a perfect power) the weight
    is (1/a) * 1/log2(r), so ranks 1, 3, 7, 15 (r = 2) weigh 1, 1/2, 1/3, 1/4 and ranks 2,
    8, 26 (r = 3) 1, 1/2, 1/3 times 1/log2(3). Järvelin & Kekäläinen's base b: ranks up to
    b weigh 1; beyond, k = r^a weighs ln b / (a ln r), rational when r is b's own root
    (base 2: ranks 4, 8, 16 weigh 1/2, 1/3, 1/4 and join ranks 1, 2).
    """
    classes: dict = {}
    theta: object  # the class label: ("log", r), ("jk", r) or 1
    b_int = int(base) if base is not None and float(base).is_integer() else None
    rb, kb = _primitive_power(b_int) if b_int is not None and b_int >= 2 else (None, None)
    for k in range(1, N + 1):
        if base is None:
            r, a = _primitive_power(k + 1)
            theta, q = ("log", r), Fraction(1, a)
        elif k <= base:
            theta, q = 1, Fraction(1)
        else:
            r, a = _primitive_power(k)
            # (kb is None only with rb, which no r equals)
            theta, q = (1, Fraction(kb, a)) if r == rb and kb is not None else (("jk", r), Fraction(1, a))
        classes.setdefault(theta, []).append((k - 1, q))
    return list(classes.items())


@serves(DCG, nDCG)
@dataclass(frozen=True, eq=False)
class DCGSpace(Space):
    """DCG / nDCG (nDCG maps like DCG). Ranks whose discount weights are rational
    multiples of each other form a class (:func:`dcg_weight_classes`); a run's value is
    sum over classes of theta_c * S_c with S_c = sum of q_k * gain_k over the class, a
    rational. Gains are the integers G of :func:`space_gains` (the grade by default; a
    gain map scaled by the lcm of its denominators, the class weights divided by the same
    scale). Keys are the integer class sums L_c * S_c (L_c the lcm of the class's
    denominators) as a mixed-radix integer: equal keys, equal values, and every rational
    tie (a grade-2 document at rank 3 against a grade-1 one at rank 1) is an equal key.
    Distinct keys are assumed to have distinct values (no rational relation among the
    theta_c of different classes at these N); the engines check every pair of values
    closer than a relative 1e-12 in 60-digit arithmetic and stop with an error if two
    different keys ever agree there."""

    measure: DCG | nDCG  # (Space.measure, narrowed: the field keeps its place and behaviour)
    family: str = "dcg-q"  # keys are commensurable-class sums (the cache never meets older keys)
    description: ClassVar[str] = "exact, from classes of ranks with the same discount"
    certified_bounds: ClassVar[bool] = True

    engine_rule: ClassVar[str | None] = "dcg-budget"

    ordered_keys: bool = False

    @property
    def identity(self) -> str:  # nDCG maps like DCG: one rank map (and cache entry) for both
        gains = getattr(self.measure, "gains", None)
        core = f"DCG(base={self.base}, rel={getattr(self.measure, 'rel', None)}" + (
            f", gains={gains})" if gains is not None else ")"
        )
        return f"{core}|N={self.N}|c={self.c}|{self.family}{_owner(type(self))}"

    @cached_property
    def base(self):
        return self.measure.base

    @cached_property
    def gmax(self) -> int:
        """The top grade (1 for binary runs)."""
        return 1 if self.binary_measure else self.c

    @cached_property
    def _gains(self) -> tuple[list[int], Fraction]:
        return space_gains(self)

    @cached_property
    def gain_ints(self) -> list[int]:
        """Integer gains of grades 0..gmax (the grade by default)."""
        return self._gains[0]

    @cached_property
    def gain_top(self) -> int:
        return self.gain_ints[-1]

    @cached_property
    def _structure(self):
        return dcg_weight_classes(self.N, self.base)

    @cached_property
    def classes(self) -> list[list[int]]:
        """Ranks (0-based) of each class of commensurable weights."""
        return [[k for k, _ in members] for _, members in self._structure]

    @cached_property
    def multipliers(self) -> list[list[int]]:
        """Per class, the integer multiplier L_c * q_k of each rank's gain in the class sum."""
        out = []
        for _, members in self._structure:
            L = math.lcm(*(q.denominator for _, q in members))
            out.append([int(q * L) for _, q in members])
        return out

    @cached_property
    def _lcms(self) -> list[int]:
        return [math.lcm(*(q.denominator for _, q in members)) for _, members in self._structure]

    @cached_property
    def radix(self) -> list[int]:
        return [self.gain_top * sum(m) + 1 for m in self.multipliers]

    @cached_property
    def max_key(self):
        return math.prod(self.radix) - 1

    @cached_property
    def n_values(self) -> int:
        """Attainable class-sum vectors: the size of the value set (under the assumption)."""
        return math.prod(len(a) for a in self.attainable)

    @cached_property
    def class_weights(self) -> np.ndarray:
        """The value of one unit of each integer class sum: theta_c / L_c."""
        from irscale.measures.gains import discounts

        w = discounts(self.N, self.base)
        scale = float(self._gains[1])
        return np.array(
            [
                w[members[0][0]] / float(members[0][1]) / L / scale
                for (_, members), L in zip(self._structure, self._lcms)
            ]
        )

    def class_totals(self, g):
        g = np.array(self.gain_ints, dtype=np.int64)[np.asarray(g, dtype=np.int64)]
        return np.stack(
            [g[:, cl] @ np.array(m, dtype=np.int64) for cl, m in zip(self.classes, self.multipliers)], axis=1
        )

    def encode(self, tot, first: int = 0) -> np.ndarray:
        """Mixed-radix codes of class-sum vectors (classes first.. of ``tot``'s columns)."""
        tot = np.asarray(tot)
        if not self.int64:  # exact Python integers (codes beyond 2^62)
            tot = tot.astype(object)
        key = np.zeros(len(tot), dtype=tot.dtype if tot.dtype == object else np.int64)
        for j in range(tot.shape[1]):
            key = key * self.radix[first + j] + tot[:, j]
        return key

    def keys(self, g):
        return self.encode(self.class_totals(g))

    def decode(self, keys, first: int = 0, stop: int | None = None):
        """Class sums (n, classes) of mixed-radix codes; with ``first``/``stop``, codes
        over the classes first..stop-1 only (a half of the counting engine)."""
        radix = self.radix[first:stop]
        keys = np.asarray(keys)
        keys = keys.astype(object if keys.dtype == object or not self.int64 else np.int64, copy=True)
        tot = np.empty((len(keys), len(radix)), dtype=np.int64)  # sums are small
        for j in range(len(radix) - 1, -1, -1):
            tot[:, j] = keys % radix[j]
            keys //= radix[j]
        return tot

    @cached_property
    def _ways(self) -> list[list[int]]:
        """Per class: how many grade assignments of its ranks reach each integer class sum
        (grade g adds its integer gain G[g] times the rank's multiplier)."""
        if max(self.radix) > 2**22:  # the sums of a class are listed: one entry per integer up to the top
            raise MeasureError(
                f"{self.measure}: its gains scale to integers up to {self.gain_top:,} (exact sums "
                f"of a class reach {max(self.radix) - 1:,}, listed one by one); give gains with "
                "fewer decimal digits or a smaller ratio between them, e.g. gains=0:0,1:1,2:3"
            )
        out = []
        for m in self.multipliers:
            coeffs = [1]
            for mk in m:
                nxt = [0] * (len(coeffs) + mk * self.gain_top)
                for i, a in enumerate(coeffs):
                    if a:
                        for G in self.gain_ints:
                            nxt[i + mk * G] += a
                coeffs = nxt
            out.append(coeffs)
        return out

    @cached_property
    def attainable(self) -> list[np.ndarray]:
        """Per class, the class sums some gain assignment reaches (sorted)."""
        return [np.flatnonzero(np.array(w, dtype=object) > 0).astype(np.int64) for w in self._ways]

    def attainable_totals(self, first: int = 0, stop: int | None = None) -> np.ndarray:
        """Every attainable vector of class sums over classes first..stop-1, (n, classes)."""
        parts = self.attainable[first:stop]
        if not parts:
            return np.zeros((1, 0), dtype=np.int64)
        grids = np.meshgrid(*parts, indexing="ij")
        return np.stack([gr.reshape(-1) for gr in grids], axis=1)

    def runs_behind(self, tot, first: int = 0) -> np.ndarray:
        """Runs having each vector of class sums (classes first.. of ``tot``'s columns),
        exact: int64 below 2^62 runs in all (no product can exceed that), Python ints beyond."""
        tot = np.asarray(tot)
        dtype = np.int64 if self.n_runs < INT64_LIMIT else object
        out = np.ones(len(tot), dtype=dtype)
        for j in range(tot.shape[1]):
            out = out * np.array(self._ways[first + j], dtype=dtype)[tot[:, j]]
        return out

    def key_values(self, keys):
        return self.decode(keys) @ self.class_weights

    @cached_property
    def _exact_class_weights(self) -> list:
        """theta_c / L_c of each class in 60-digit arithmetic (mpmath), computed once."""
        import mpmath

        out = []
        with mpmath.workdps(60):
            b = self.base
            scale = mpmath.mpf(self._gains[1].numerator) / self._gains[1].denominator
            for (_, members), L in zip(self._structure, self._lcms):
                k, q = members[0][0] + 1, members[0][1]
                if b is None:
                    w = 1 / mpmath.log(k + 1, 2)
                else:
                    w = mpmath.mpf(1) if k <= b else 1 / mpmath.log(k, b)
                out.append(w / (mpmath.mpf(q.numerator) / q.denominator) / L / scale)
        return out

    def exact_value(self, totals) -> Any:
        """The value of class sums in 60-digit arithmetic (an mpmath.mpf; mpmath is untyped)."""
        import mpmath

        with mpmath.workdps(60):
            return mpmath.fsum(int(t) * w for t, w in zip(totals, self._exact_class_weights) if t)
