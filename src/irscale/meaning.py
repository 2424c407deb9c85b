"""Meaningfulness, the public door (``irscale.meaning``).

Two questions, one owner each:

* **Is this conclusion meaningful?** :func:`scale_of` (the scale of a measure at run length
  N) and :func:`meaningful_test` (is "i and j differ significantly by this test" meaningful
  on that scale): the verdicts ``compare`` writes in its ``meaningful`` columns, the
  warnings of ``evaluate``/``transform``/``compare`` and ``irscale measures`` all come from
  :mod:`irscale.scales.permissible`.
* **Is this statement invariant?** :func:`meaningful` checks a statement of your own about
  scores empirically: it applies the permissible transformations of a scale and looks for
  one that changes the statement's truth (:mod:`irscale.scales.meaning`). For the tests
  ``compare`` runs, both agree: a mean or t test on an interval scale survives every affine
  map, and a sign test survives every increasing map of each topic.
"""

from irscale.scales.meaning import SCALES, Meaningfulness, meaningful
from irscale.scales.permissible import TEST_NEEDS, meaningful_test, scale_of
from irscale.scales.theory import Statement

__all__ = ["SCALES", "Meaningfulness", "meaningful", "TEST_NEEDS", "meaningful_test", "scale_of", "Statement"]
