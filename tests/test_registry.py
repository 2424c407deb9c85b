"""irscale.measures.registry: one entry per measure class (its name, its spaces, its
theory rule). Names are case-insensitive and owned by one class; a definition run again
replaces itself; spaces a function makes stay apart; a class has one unconditional space."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pytest

from irscale.errors import MeasureError
from irscale.measures import AP, REGISTRY, Measure, parse_measure, register, unregister
from irscale.measures.registry import ENTRIES, spaces_of
from irscale.scales.spaces import Space, serves, space_for


def _measure_class():
    @dataclass(frozen=True)
    class Foo(Measure):
        cutoff: int | None = None

        def batch(self, grades, topics):
            return (grades[..., : self.cutoff] >= 1).sum(-1).astype(float)

    return Foo


def _space(family: str, when=None, measure=None):
    @dataclass(frozen=True, eq=False)
    class S(Space):
        @cached_property
        def max_key(self):
            return self.N

        def keys(self, g):
            return np.asarray(g, dtype=np.int64).sum(-1)

        def key_values(self, k):
            return np.asarray(k, dtype=float)

    S.__dataclass_fields__["family"].default = family  # (read by the instances below)
    return serves(measure, when=when)(S) if measure is not None else S


@pytest.fixture
def foo():
    cls = register("Foo")(_measure_class())
    yield cls
    unregister(cls)


def test_pop_is_a_mapping_pop_and_case_insensitive(foo):
    with pytest.raises(KeyError):
        REGISTRY.pop("NoSuchMeasure")
    assert REGISTRY.pop("NoSuchMeasure", None) is None
    assert REGISTRY.pop("foo") is foo and foo not in ENTRIES


def test_a_taken_name_is_refused_and_the_builtin_kept():
    with pytest.raises(MeasureError, match="taken by irscale.measures.rankbased.AP"):
        register("ap")(_measure_class())
    assert type(parse_measure("AP")) is AP and spaces_of(AP) and ENTRIES[AP].theory is not None


def test_spaces_a_function_makes_stay_apart(foo):
    small = _space("small", when=lambda m, N, c: N < 10, measure=foo)
    large = _space("large", when=lambda m, N, c: N >= 10, measure=foo)
    assert [s for s, _ in spaces_of(foo)] == [small, large]  # same qualified name, both kept
    assert isinstance(space_for("Foo", 5), small) and isinstance(space_for("Foo", 20), large)


def test_one_unconditional_space_per_class(foo):
    _space("first", measure=foo)
    with pytest.raises(MeasureError, match="is served by .* already"):
        _space("second", measure=foo)


def test_registering_a_class_again_keeps_its_spaces(foo):
    S = _space("kept", measure=foo)
    register("Foo2")(foo)
    assert [s for s, _ in spaces_of(foo)] == [S] and "Foo2" in REGISTRY and "Foo" not in REGISTRY
