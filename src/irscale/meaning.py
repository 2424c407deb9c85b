"""Meaningfulness of statements about scores; the implementation is
:mod:`irscale.scales.meaning` (this module keeps the public path ``irscale.meaning``)."""

from irscale.scales.meaning import SCALES, Meaningfulness, meaningful

__all__ = ["SCALES", "Meaningfulness", "meaningful"]
