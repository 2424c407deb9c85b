"""Run spaces REL^N and the exact value of a measure on them: one module per family of
measures, each declaring its spaces with ``@serves`` (the registry of :mod:`irscale.measures.registry`
keeps the declarations). Every module of this package is imported with it, so a new
family module needs no import list.

The families and their keys (g_k is the grade at rank k, r_k = [g_k >= rel]):

* counts (P, R, F, gP, NumRelRet, Success): sum of r_k (or g_k for gP) — closed form;
* RR: N + 1 - (first relevant rank), 0 when none — closed form;
* AP: L * sum over relevant k of hits_k / k with L = lcm(1..N) (RB * AP times L);
* RBP with p = a/b: sum of g_k a^(k-1) b^(N-k) (c * b^(N-1) * RBP / (1 - p));
  with p <= 1/(c+1) (binary: p <= 1/2) the runs are ordered as base-(c+1) numbers —
  closed form; graded with b > c every run has its own value — counted;
* ERR: L * 2^(cN) * ERR, an integer (stopping probabilities are multiples of 2^-c);
* RBTO, SBTO: their own integer values — closed form (they are interval scales);
* DCG, nDCG (any log base): no rational key; see :class:`DCGSpace`.
"""

import importlib
import pkgutil

from irscale.scales.spaces.base import (
    INT64_LIMIT,
    MAX_N,
    GenericSpace,
    Space,
    all_runs,
    cut_and_pad,
    float_keys,
    serves,
    space_for,
    space_gains,
)

__all__ = [
    "INT64_LIMIT",
    "MAX_N",
    "GenericSpace",
    "Space",
    "all_runs",
    "cut_and_pad",
    "float_keys",
    "serves",
    "space_for",
    "space_gains",
]

for _family in pkgutil.iter_modules(__path__):  # each family module declares its spaces on import
    importlib.import_module(f"{__name__}.{_family.name}")
