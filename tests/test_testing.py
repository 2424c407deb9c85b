"""irscale.testing, the conformance suite, fails where a measure is wrong: each check is
run here on a measure broken in the way that check exists to catch (a check that passes
everything would pass these too)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pytest

from irscale import testing
from irscale.measures import Measure, register, unregister
from irscale.measures.base import cut, relevant
from irscale.scales.spaces import Space, serves


def _hits(grades, cutoff, rel=1):
    """Weights N - k + 1 summed over relevant ranks (a small top-heavy core)."""
    r = relevant(cut(grades, cutoff), rel)
    n = r.shape[-1]
    return r @ np.arange(cutoff, cutoff - n, -1, dtype=np.float64)


@pytest.fixture
def declared():
    """Register measure classes (and their spaces) for one test; unregister them after."""
    made = []

    def declare(cls):
        made.append(cls)
        return cls

    yield declare
    for cls in made:
        unregister(cls)


def _measure(declare, name, batch=None, reference=None, docs=True):
    @register(name)
    @dataclass(frozen=True)
    class M(Measure):
        cutoff: int | None = None
        rel: int = 1
        requires_cutoff = True
        if not docs:
            param_docs = {"cutoff": "", "rel": ""}

        def batch(self, grades, topics):
            return (batch or (lambda s, g: _hits(g, s.cutoff, s.rel)))(self, grades)

        def reference(self, grades, topic):
            fn = reference or (lambda s, g: sum(s.cutoff - k for k, x in enumerate(g[: s.cutoff]) if x >= s.rel))
            return float(fn(self, grades))

    return declare(M)


def _space(declare_measure, keys, key_values=None):
    @serves(declare_measure)
    @dataclass(frozen=True, eq=False)
    class S(Space):
        family: str = "test-" + declare_measure.NAME.lower()

        @cached_property
        def max_key(self):
            return 4 * self.N * (self.N + 1)

        def keys(self, g):
            return keys(self, np.asarray(g, dtype=np.int64))

        def key_values(self, k):
            return (key_values or (lambda s, k: np.asarray(k, dtype=np.float64)))(self, k)

    return S


def _linear_keys(space, g):
    return g @ np.arange(space.N, 0, -1, dtype=np.int64)


def test_a_correct_measure_and_space_pass(declared):
    m = _measure(declared, "OkHits")
    _space(m, _linear_keys)
    testing.check_measure(m)


def test_batch_unlike_reference_fails(declared):
    wrong = lambda s, g: _hits(g, s.cutoff, s.rel) + 0.5 * (g[..., 0] == 2)  # a top document of grade 2 adds 0.5
    m = _measure(declared, "TopTwoBonus", batch=wrong)
    with pytest.raises(AssertionError, match="batch gives .* reference"):
        testing.check_batch_equals_reference(testing.instances(m)[0])


def test_undocumented_parameters_fail(declared):
    m = _measure(declared, "NoDocs", docs=False)
    with pytest.raises(AssertionError, match="without a description"):
        testing.check_parameters(testing.instances(m)[0])


def test_keys_that_split_a_tie_fail(declared):
    m = _measure(declared, "SplitTies")
    _space(m, lambda s, g: 2 * _linear_keys(s, g) + g[:, -1])  # runs of one value, two keys
    with pytest.raises(AssertionError, match="split runs of one value|values derived"):
        testing.check_space(testing.instances(m)[0])


def test_keys_that_merge_values_fail(declared):
    m = _measure(declared, "MergeTies")
    _space(m, lambda s, g: _linear_keys(s, g) // 2)
    with pytest.raises(AssertionError, match="holds runs of different values"):
        testing.check_space(testing.instances(m)[0])


def test_keys_in_the_wrong_order_fail(declared):
    m = _measure(declared, "Backwards")
    _space(m, lambda s, g: -_linear_keys(s, g), key_values=lambda s, k: -np.asarray(k, dtype=np.float64))
    with pytest.raises(AssertionError, match="is not below key"):
        testing.check_space(testing.instances(m)[0])


def test_a_wrong_normalizer_fails(declared):
    m = _measure(declared, "HalfWay")
    _space(m, _linear_keys, key_values=lambda s, k: np.asarray(k, dtype=np.float64) / 2)
    with pytest.raises(AssertionError, match="values derived from the keys differ"):
        testing.check_space(testing.instances(m)[0])


def test_a_crash_in_transform_fails_end_to_end(declared):
    m = _measure(declared, "Crash")

    def boom(space, g):
        raise TypeError("a bug in keys")

    _space(m, boom)
    with pytest.raises(TypeError, match="a bug in keys"):
        testing.check_end_to_end(testing.instances(m)[0])


def test_a_measure_without_a_ranked_version_is_refused_cleanly():
    testing.check_end_to_end(testing.instances("Rprec")[0])  # transform refuses with a message: passes


def test_parametrize_names_each_measure_and_check():
    mark = testing.parametrize_with_checks(["RR@3"])
    ids = mark.kwargs["ids"]
    assert ids == [f"RR@3-{c.__name__.removeprefix('check_')}" for c in testing.CHECKS]


def test_without_hypothesis_the_error_names_the_extra(monkeypatch):
    """The README's install has no hypothesis: the property check says what to install."""
    import sys

    monkeypatch.setitem(sys.modules, "hypothesis", None)  # import hypothesis now raises ImportError
    with pytest.raises(ImportError, match=r'pip install "irscale\[testing\]"'):
        testing.check_batch_equals_reference(testing.instances("RR@3")[0])
