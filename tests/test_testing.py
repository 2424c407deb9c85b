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


def _measure(declare, name, batch=None, reference=None, docs=True, bound=None):
    @register(name)
    @dataclass(frozen=True)
    class M(Measure):
        cutoff: int | None = None
        rel: int = 1
        requires_cutoff = True
        value_bound = bound  # (the hits grow with N: no upper bound, unless a test says one)
        if not docs:
            param_docs = {"cutoff": "", "rel": ""}

        def batch(self, grades, topics):
            return (batch or (lambda s, g: _hits(g, s.cutoff, s.rel)))(self, grades)

        def reference(self, grades, topic):
            fn = reference or (lambda s, g: sum(s.cutoff - k for k, x in enumerate(g[: s.cutoff]) if x >= s.rel))
            return float(fn(self, grades))

    return declare(M)


def _space(declare_measure, keys, key_values=None, equispaced=False):
    @serves(declare_measure)
    @dataclass(frozen=True, eq=False)
    class S(Space):
        family: str = "test-" + declare_measure.NAME.lower()

        @property
        def equispaced(self):
            return equispaced

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


def test_a_value_beyond_the_declared_bound_fails(declared):
    m = _measure(declared, "Unbounded", bound=1.0)  # says [0, 1], gives up to N (N + 1) / 2
    with pytest.raises(AssertionError, match=r"lies outside \[0, 1.0\]; declare .* \(value_bound = "):
        testing.check_value_bound(testing.instances(m)[0])
    testing.check_value_bound(testing.instances(_measure(declared, "Declared", bound=None))[0])


def test_an_equispaced_space_is_interval_at_any_n(declared):
    from irscale.scales.permissible import scale_of

    m = _measure(declared, "EvenHits")
    _space(m, _linear_keys, equispaced=True)  # true: the sums of distinct 1..N fill 0..N (N + 1) / 2
    testing.check_space(testing.instances(m)[0])
    said = scale_of("EvenHits", 40)  # 2^40 runs: beyond any exhaustive check, the space's declaration answers
    assert said.original_scale == "interval" and said.order == "induced" and "declares it" in said.source
    plain = _measure(declared, "PlainHits")
    _space(plain, _linear_keys)
    assert scale_of("PlainHits", 40).original_scale == "unknown"  # no declaration: not claimed


def test_a_false_equispaced_declaration_fails(declared):
    square = lambda s, g: _hits(g, s.cutoff, s.rel) ** 2
    ref = lambda s, g: sum(s.cutoff - k for k, x in enumerate(g[: s.cutoff]) if x >= s.rel) ** 2
    m = _measure(declared, "SquareHits", batch=square, reference=ref)
    _space(m, _linear_keys, key_values=lambda s, k: np.asarray(k, dtype=np.float64) ** 2, equispaced=True)
    with pytest.raises(AssertionError, match="declared equispaced, but its values step by"):
        testing.check_space(testing.instances(m)[0])


@pytest.mark.slow
def test_batch_unlike_reference_fails(declared):
    wrong = lambda s, g: _hits(g, s.cutoff, s.rel) + 0.5  # off on every ranking: the first example shows it
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


def test_a_wrong_exact_key_of_a_user_measure_fails(declared):
    """A measure without a space of its own is served by the generic space from its
    exact_key: keys in the wrong order are caught as a space's are."""

    @register("BadKey")
    @dataclass(frozen=True)
    class BadKey(Measure):
        cutoff: int | None = None

        def batch(self, grades, topics):
            g = (cut(grades, self.cutoff) >= 1).astype(float)
            return g @ (1.0 / np.arange(1, g.shape[-1] + 1))

        def reference(self, grades, topic):
            return float(sum(1.0 / (k + 1) for k, x in enumerate(grades[: self.cutoff]) if x >= 1))

        def exact_key(self, g, c):
            return -g.sum(axis=-1)  # reversed, and merges runs of different values

    declared(BadKey)
    with pytest.raises(AssertionError, match="is not below key|holds runs of different values"):
        testing.check_space(testing.instances(BadKey)[0])


@pytest.mark.slow
def test_batch_wrong_on_a_second_topic_fails(declared):
    """batch is compared with reference on several runs and topics, not one cell."""

    def first_topics_rb(s, g, topics):
        rb = topics.num_rel(1).astype(float)
        return _hits(g, s.cutoff, s.rel) / (rb[0] if rb[0] > 0 else np.inf)  # topic 0's recall base for all

    @register("FirstRB")
    @dataclass(frozen=True)
    class FirstRB(Measure):
        cutoff: int | None = None
        rel: int = 1
        requires_cutoff = True

        def batch(self, grades, topics):
            return first_topics_rb(self, grades, topics)

        def reference(self, grades, topic):
            rb = topic.num_rel(1)[0]
            return (
                float(sum(self.cutoff - k for k, x in enumerate(grades[: self.cutoff]) if x >= 1)) / rb if rb else 0.0
            )

    declared(FirstRB)
    with pytest.raises(AssertionError, match="on topic [12]"):
        testing.check_batch_equals_reference(testing.instances(FirstRB)[0])


def test_a_wrong_closed_form_fails_the_phi_check(declared):
    """phi under mid is compared with the brute force: a closed form that miscounts the
    runs at or below a key is caught."""
    m = _measure(declared, "BadClosed")

    @serves(m)
    @dataclass(frozen=True, eq=False)
    class S(Space):
        family: str = "test-badclosed"
        closed: bool = True

        @cached_property
        def max_key(self):
            return self.N * (self.N + 1) // 2

        def keys(self, g):
            return _linear_keys(self, np.asarray(g, dtype=np.int64))

        def key_values(self, k):
            return np.asarray(k, dtype=np.float64)

        def closed_runs_le(self, k):
            return np.asarray(k, dtype=object) * 0 + 1  # wrong: one run at or below every key

    with pytest.raises(AssertionError, match=r"phi \(mid\) of engine closed differs"):
        testing.check_space(testing.instances(m)[0])


def test_a_name_that_does_not_parse_back_fails(declared):
    @register("Renamed")
    @dataclass(frozen=True)
    class Renamed(Measure):
        cutoff: int | None = None

        def __str__(self):
            return "Renamed(x=1)"  # a parameter the class does not have

    declared(Renamed)
    with pytest.raises(Exception, match="no parameter 'x'|does not parse"):
        testing.check_parameters(Renamed())


def test_a_refusal_that_does_not_name_the_measure_fails(declared):
    from irscale.errors import MeasureError

    m = _measure(declared, "Quiet")

    @serves(m)
    @dataclass(frozen=True, eq=False)
    class S(Space):
        family: str = "test-quiet"

        @cached_property
        def max_key(self):
            if self.N > 20:
                raise MeasureError("too long")  # says neither which measure nor what to do
            return 4 * self.N * (self.N + 1)

        def keys(self, g):
            return _linear_keys(self, np.asarray(g, dtype=np.int64))

        def key_values(self, k):
            return np.asarray(k, dtype=np.float64)

    with pytest.raises(AssertionError, match="the refusal does not name it"):
        testing.check_refusals(testing.instances(m)[0])


def test_a_subclass_is_checked_on_its_own_instances(declared):
    """examples are not inherited: a subclass of nDCG is not checked on nDCG's examples."""
    from irscale.measures import nDCG

    @register("MyNDCG")
    @dataclass(frozen=True)
    class MyNDCG(nDCG):
        pass

    declared(MyNDCG)
    assert [str(m) for m in testing.instances(MyNDCG)] == ["MyNDCG"]


def test_rel_0_is_checked_and_a_missing_rank_is_never_relevant():
    """P(rel=0) counts every judged document relevant, never a rank a short run lacks: the
    suite found the space padding short runs with grade 0, which rel=0 counted."""
    testing.check_parameters(testing.instances("P(rel=0)@5")[0])
    testing.check_space(testing.instances("P(rel=0)@5")[0])
    from irscale.scales import space_for

    assert space_for("P(rel=0)@5", 5).grade_view(np.array([[0, 2]], dtype=np.int16)).tolist() == [[1, 1, 0, 0, 0]]


def test_the_measures_listing_shows_a_docstring_as_written(declared):
    """`irscale measures` prints a measure's docstring and parameter texts as written: rich
    markup in them (``[grade_i >= rel]``) is not eaten."""
    from typer.testing import CliRunner

    from irscale.cli import app

    m = _measure(declared, "Bracketed")
    m.__doc__ = "Sum of [grade_i >= rel] over the top k ranks, weighted [bold]by rank[/bold]."
    res = CliRunner().invoke(app, ["measures"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    row = " ".join(line for line in res.stdout.splitlines() if "Bracketed" in line or "grade_i" in line)
    assert "[grade_i >= rel]" in row and "[bold]by rank[/bold]" in row
