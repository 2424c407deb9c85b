"""Scale properties of a measure on all judged runs of length N: the public path
``irscale.inspect`` over the scale theory in :mod:`irscale.scales`:

* :mod:`irscale.scales.orders`: the orders on runs (set, strong, weak) and their rank
  functions, covers and chains;
* :mod:`irscale.scales.checks`: measures as functions on runs, ordinal and interval
  checks, swap and replacement, intervalness;
* :mod:`irscale.scales.balancing`: the balancing index;
* :mod:`irscale.scales.theory`: what the 2019 and 2021 papers say about each measure
  (``theory_statement``), checked over every run (``verify_theory``).
"""

from irscale.scales.balancing import balancing_analytic, balancing_index
from irscale.scales.checks import (
    MeasureFn,
    Verdict,
    as_measure,
    intervalness,
    is_interval,
    is_ordinal,
    replacement_holds,
    swap_holds,
)
from irscale.scales.orders import (
    ORDERS,
    maximal_chain,
    positional_weights,
    set_rank,
    strong_rank,
    weak_covers,
    weak_level,
    weak_moves,
)
from irscale.scales.spaces import all_runs, space_for  # noqa: F401  (names this module always had)
from irscale.scales.theory import Statement, TheoryCheck
from irscale.scales.theory import statement as theory_statement
from irscale.scales.theory import verify as verify_theory

__all__ = [
    "ORDERS",
    "MeasureFn",
    "Verdict",
    "as_measure",
    "balancing_analytic",
    "balancing_index",
    "intervalness",
    "is_interval",
    "is_ordinal",
    "maximal_chain",
    "positional_weights",
    "replacement_holds",
    "set_rank",
    "strong_rank",
    "swap_holds",
    "theory_statement",
    "verify_theory",
    "weak_covers",
    "weak_level",
    "weak_moves",
    "Statement",
    "TheoryCheck",
]
