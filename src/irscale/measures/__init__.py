"""Evaluation measures: registry, parser and the built-in families.

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
from irscale.measures.gains import DCG, ERR, RBP, gP, gR, nDCG
from irscale.measures.rankbased import AP, RR, Bpref, Rprec
from irscale.measures.sets import F, NumRel, NumRelRet, NumRet, P, R, Success
from irscale.measures.topheavy import RBTO, SBTO

__all__ = [
    "REGISTRY",
    "Measure",
    "FunctionMeasure",
    "at_depth",
    "register",
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
    "ERR",
    "gP",
    "gR",
    "SBTO",
    "RBTO",
]
