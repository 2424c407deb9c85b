"""The balancing index (the 2015 paper of Ferrante, Ferro et al., Section 6): how deep a measure's
top-heaviness reaches. B(n) is the largest b such that one document of grade q_max at
rank 1 scores at most documents of grade q_min at ranks b..n; n for a measure that
ignores ranks (set-based), 1 for one where only rank 1 counts."""

from __future__ import annotations

import numpy as np

from irscale.errors import IrscaleError
from irscale.scales.checks import MeasureFn, as_measure
from irscale.validate import integer

__all__ = ["balancing_analytic", "balancing_index"]


def balancing_index(measure, n: int, q_min: int = 1, q_max: int = 1, levels: int | None = None) -> int:
    """Algorithm 1 of the 2015 paper: the largest b such that the run with q_max at rank 1
    (and nothing else) scores at most the run with q_min at ranks b..n."""
    n = integer("n", n, minimum=1)
    q_min = integer("q_min", q_min, minimum=1)
    q_max = integer("q_max", q_max, minimum=1)
    levels = integer("levels", levels, minimum=max(q_min, q_max) + 1, none=True) or q_max + 1
    fn = measure if isinstance(measure, MeasureFn) else as_measure(measure, n, levels - 1)
    top = np.zeros((1, n), dtype=np.int64)
    top[0, 0] = q_max
    tails = np.zeros((n, n), dtype=np.int64)
    for b in range(1, n + 1):
        tails[b - 1, b - 1 :] = q_min
    ref, cmp = fn.values(top)[0], fn.values(tails)
    scale = max(abs(ref), 1.0)
    above = ref > cmp + 1e-12 * scale  # the top run scores more than the tail from b
    if fn.keys is not None:  # near ties decided on the measure's exact keys
        near = np.flatnonzero(np.abs(cmp - ref) <= 1e-9 * scale)
        if len(near):
            above[near] = fn.keys(top)[0] > fn.keys(tails[near])
    b = n
    while b > 0 and above[b - 1]:
        b -= 1
    return b


def balancing_analytic(family: str, n: int, **params) -> int:
    """The closed forms of the 2015 paper (binary relevance: q_min = q_max = 1)."""
    if family == "AP":
        best = 0
        for b in range(1, n + 1):
            if sum(k / (k + b - 1) for k in range(1, n - b + 2)) >= 1 - 1e-12:
                best = b
        return best
    if family == "RBP":
        # RBP(top) = 1 - p <= RBP(tail from b) = p^(b-1) - p^n  <=>  b <= log_p(1 - p + p^n) + 1
        # (the paper prints ">=", which has no maximum; this is the bound its Figure 1a shows)
        from fractions import Fraction

        p = Fraction(str(params["p"]))
        rhs = 1 - p + p**n
        best, power = 0, Fraction(1)  # power = p^(b-1)
        for b in range(1, n + 1):
            if power >= rhs:
                best = b
            else:
                break
            power *= p
        return best
    if family == "ERR":
        # the continuation probability restarts at b: exponent k - b (the paper prints k - 1)
        x_min, x_max = params.get("x_min", 0.5), params.get("x_max", 0.5)
        best = 0
        for b in range(1, n + 1):
            if x_min * sum((1 - x_min) ** (k - b) / k for k in range(b, n + 1)) >= x_max - 1e-12:
                best = b
        return best
    raise IrscaleError(f"no analytic balancing index for {family}")
