"""Deprecated alias of :mod:`irscale.measures.topheavy` (renamed in the refit: "orders" meant two
things). Import from :mod:`irscale.measures` instead."""

import warnings

from irscale.measures.topheavy import RBTO, SBTO  # noqa: F401

__all__ = []


warnings.warn(
    "irscale.measures.orders is now irscale.measures.topheavy; import the measures from irscale.measures",
    DeprecationWarning,
    stacklevel=2,
)
