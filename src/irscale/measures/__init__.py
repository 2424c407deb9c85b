"""Evaluation measures: registry, parser and the built-in families (one module each; every
module of this package is imported with it, so a new family registers its measures without
an import list).

>>> from irscale.measures import parse_measure
>>> parse_measure("AP@30").trec_eval_name
'map_cut_30'
"""

from irscale.measures.base import (
    REGISTRY,
    FunctionMeasure,
    Measure,
    at_depth,
    at_rel_level,
    from_trec_eval,
    parse_measure,
    parse_measures,
    register,
    trec_eval_names,
)
from irscale.measures.gains import DCG, ERR, RBP, RBPResid, gP, gR, nDCG
from irscale.measures.rankbased import AP, RR, Bpref, Rprec
from irscale.measures.registry import unregister
from irscale.measures.sets import F, NumRel, NumRelRet, NumRet, P, R, Success
from irscale.measures.topheavy import RBTO, SBTO


def _load_families() -> None:
    """Import every module of this package: each registers its measures on import."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if info.name not in _DEPRECATED_MODULES:
            importlib.import_module(f"{__name__}.{info.name}")


_DEPRECATED_MODULES = {"ranked", "orders"}  # old aliases of irscale.scales modules: they warn when imported
_load_families()

__all__ = [
    "REGISTRY",
    "Measure",
    "FunctionMeasure",
    "at_depth",
    "register",
    "unregister",
    "parse_measure",
    "parse_measures",
    "from_trec_eval",
    "trec_eval_names",
    "at_rel_level",
    "P",
    "R",
    "F",
    "Success",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "AP",
    "RR",
    "Rprec",
    "Bpref",
    "DCG",
    "nDCG",
    "RBP",
    "RBPResid",
    "ERR",
    "gP",
    "gR",
    "SBTO",
    "RBTO",
]
