"""Deprecated alias of :mod:`irscale.measures.rankbased` (renamed in the refit: "ranked" meant two
things). Import from :mod:`irscale.measures` instead."""

import warnings

from irscale.measures.rankbased import AP, RR, Bpref, Rprec  # noqa: F401

__all__ = []


warnings.warn(
    "irscale.measures.ranked is now irscale.measures.rankbased; import the measures from irscale.measures",
    DeprecationWarning,
    stacklevel=2,
)
