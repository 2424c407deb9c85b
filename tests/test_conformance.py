"""The conformance suite (irscale.testing) over every registered measure: each class's
defaults and the instances its ``examples`` name, one test per (measure, check). A new
measure is checked here by registering it; there is no list to extend."""

from __future__ import annotations

from irscale import testing


@testing.parametrize_with_checks(testing.registered())
def test_measure(measure, check):
    check(measure)


def test_the_suite_covers_every_registered_class():
    checked = {type(m) for m, _ in testing.checks_of(testing.registered())}
    assert checked == set(testing.registered()) and len(checked) >= 19
