"""The conformance suite for measures: what every measure, built in or a user's, must do.

:func:`check_measure` runs every check on a measure class or instance and raises
``AssertionError`` (saying which check, which measure and which run) at the first
failure; :func:`parametrize_with_checks` makes one pytest test per (measure, check), the
way scikit-learn's ``parametrize_with_checks`` does for estimators. irscale's own test
suite runs it over every registered measure; run it over yours the same way::

    from irscale.testing import parametrize_with_checks

    @parametrize_with_checks([MyMeasure, "MyMeasure(rel=2)@5"])
    def test_my_measure(measure, check):
        check(measure)

The checks (each a function ``check(measure)``):

* :func:`check_batch_equals_reference`: ``batch`` (numpy over many runs) equals
  ``reference`` (plain Python over one ranking) on rankings that hypothesis generates:
  binary and graded qrels (2 to 4 levels), short and empty runs, unjudged documents;
* :func:`check_parameters`: every parameter is documented (``param_docs``), the canonical
  name parses back to an equal measure, case-insensitively, and so does its trec_eval name;
* :func:`check_space` (measures with a run space, ``@serves``): at small N, for every
  level count the measure supports, the space maps judged grades onto its runs, its exact
  keys are ordered and tied exactly like the measure's values (``reference``), the values
  derived from the keys equal ``batch``, and phi under the ``unq`` and ``mid`` tie
  strategies equals a brute force over every run (plain Python, sharing no code with the
  engines) and the ``oracle`` engine;
* :func:`check_end_to_end`: evaluate, transform and compare run on the example
  collection shipped with irscale, and the scale owner
  (:func:`irscale.scales.permissible.scale_of`) gives a verdict; a measure without a
  ranked version is refused with an irscale error, not a crash;
* :func:`check_refusals`: where the measure has limits (run lengths no exact engine
  reaches, a parameter it does not have), the refusal is an irscale error that names the
  measure, raised before anything is built.

The property checks need hypothesis (``pip install "irscale[testing]"``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from irscale.data import PAD, UNJUDGED, TopicStats
from irscale.errors import IrscaleError
from irscale.measures import Measure, at_rel_level, from_trec_eval, parse_measure
from irscale.measures.registry import ENTRIES, spaces_of

TOY = Path(__file__).parent / "examples" / "toy"
TOL = 1e-9  # relative: exact values that differ are far apart at the small N checked here
SMALL_N = {2: 6, 3: 4, 4: 4}  # the longest run checked on each number of levels (levels^N runs)

Check = Callable[[Measure], None]


# -- which measures ---------------------------------------------------------------------------------


def instances(measure: str | Measure | type) -> list[Measure]:
    """The measures a check runs on: an instance or a name as it is; a class as its
    defaults (at cutoff 5 if it needs one) and every name in its ``examples``."""
    if isinstance(measure, type):
        if not issubclass(measure, Measure):
            raise TypeError(f"{measure.__qualname__} is not a Measure class")
        base = parse_measure(measure.NAME, default_cutoff=5) if measure.requires_cutoff else parse_measure(measure.NAME)
        if type(base) is not measure:
            raise AssertionError(f"{measure.__qualname__}: its name {measure.NAME!r} parses to {type(base).__name__}")
        return list(dict.fromkeys([base] + [parse_measure(e) for e in measure.examples]))
    return [parse_measure(measure)]


def registered() -> list[type]:
    """Every registered measure class (built in and the user's), in registration order."""
    return list(ENTRIES)


# -- the checks ---------------------------------------------------------------------------------


def check_batch_equals_reference(measure: Measure, *, max_examples: int = 100) -> None:
    """``batch`` equals ``reference`` on generated rankings (hypothesis)."""
    try:
        from hypothesis import given, settings
        from hypothesis import strategies as st
    except ImportError:
        raise ImportError(
            'irscale.testing needs hypothesis for its property checks: pip install "irscale[testing]"'
        ) from None

    @st.composite
    def topic_and_run(draw):
        levels = draw(st.integers(2, 4))
        grade = st.sampled_from([*range(levels), -1, int(UNJUDGED)])  # -1: judged below 0
        run = draw(st.lists(grade, max_size=12))
        counts = [draw(st.integers(0, 6)) for _ in range(levels)]
        for g in range(levels):  # the topic judged at least what the run retrieved
            counts[g] = max(counts[g], run.count(g))
        return run, counts

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(topic_and_run())
    def run_check(case):
        run, counts = case
        topic = TopicStats.single(counts)
        grades = np.full((1, 1, max(len(run), 1)), PAD, dtype=np.int16)
        grades[0, 0, : len(run)] = run
        got = float(measure.batch(grades, topic)[0, 0])
        want = float(measure.reference(list(run), topic))
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (
            f"{measure}: batch gives {got!r}, reference {want!r} on the ranking {run} (level counts {counts})"
        )

    run_check()


def check_parameters(measure: Measure) -> None:
    """Parameters documented; the canonical and trec_eval names parse back to the measure."""
    cls = type(measure)
    undocumented = [name for name, _, doc in cls.param_info() if not doc.strip()]
    assert not undocumented, f"{cls.NAME}: parameters without a description in param_docs: {undocumented}"
    name = str(measure)
    assert parse_measure(name) == measure, f"{measure!r}: its name {name!r} parses to {parse_measure(name)!r}"
    assert parse_measure(name.lower()) == measure, f"{measure!r}: {name.lower()!r} does not parse to it"
    te = measure.trec_eval_name
    if te is not None:  # trec_eval's names carry no relevance level: it is its -l option
        back = from_trec_eval(te)
        level = getattr(measure, "rel", None) if back is not None and not measure.graded else None
        back = at_rel_level([back], level)[0] if back is not None else None
        assert back == measure, f"{measure}: its trec_eval name {te!r} (at -l {level}) reads {back!r}"


def _space_cls(measure: Measure, N: int, c: int) -> type | None:
    for cls, when in spaces_of(type(measure)):
        if when is None or when(measure, N, c):
            return cls
    return None


def _levels(measure: Measure) -> list[int]:
    """The level counts a measure's space is checked on: binary measures live on 2."""
    binary = (not measure.graded) or getattr(measure, "rel", None) is not None
    return [2] if binary else [2, 3, 4]


def check_space(measure: Measure) -> None:
    """Exact keys ordered and tied like the measure's values; phi (unq, mid) equal to a
    brute force and to the oracle engine, at every small N and level count."""
    from irscale.scales import build, space_for

    if not spaces_of(type(measure)):
        return  # no run space declared: generic enumeration, covered by check_end_to_end
    for levels in _levels(measure):
        for N in range(1, SMALL_N[levels] + 1):
            m = _at(measure, N)
            if _space_cls(m, N, levels - 1) is None:
                continue
            space = space_for(m, N, levels - 1)
            _check_keys_and_phi(m, space, N, levels, build)


def _at(measure: Measure, N: int) -> Measure:
    """The measure at run length N (its cutoff moved to N where it has one)."""
    if any(f.name == "cutoff" for f in dataclasses.fields(measure)):
        return dataclasses.replace(measure, **{"cutoff": N})  # (the base class has no cutoff field)
    return measure


def _judged(measure: Measure, run: tuple[int, ...], binary: bool) -> list[int]:
    """A run of the space as judged grades: a binary space's 1 is a document of grade rel."""
    rel = getattr(measure, "rel", None) or 1
    return [g * rel for g in run] if binary else list(run)


def _check_keys_and_phi(m: Measure, space, N: int, levels: int, build) -> None:
    c = levels - 1
    binary = space.binary_measure
    runs = list(itertools.product(range(c + 1), repeat=N))  # every run, plain Python
    judged = np.array([_judged(m, r, binary) for r in runs], dtype=np.int16)
    top = (getattr(m, "rel", None) or 1) if binary else c
    topic = TopicStats.single([N] * (max(top, 1) + 1))
    what = f"{m} at N={N} on {levels} levels ({type(space).__name__})"
    view = space.grade_view(judged)
    assert np.array_equal(view, np.array(runs)), f"{what}: grade_view does not map judged grades onto the runs"
    keys = space.keys(view)
    values = [float(m.reference(list(j), topic)) for j in judged.tolist()]
    batch = m.batch(judged[:, None, :], topic)[:, 0]
    derived = space.measure_values(np.asarray(keys)[:, None], topic)[:, 0]
    _check_ties_and_order(what, [int(k) for k in keys], values, space.ordered_keys)
    assert np.allclose(batch, values, rtol=1e-12, atol=1e-12), f"{what}: batch differs from reference"
    assert np.allclose(derived, values, rtol=1e-9, atol=1e-12), f"{what}: values derived from the keys differ"
    unq, mid = _brute_phi([int(k) for k in keys], values)
    for engine in ("auto", "oracle"):
        rm = build(m, N, levels, engine=engine, cache=False)
        got = rm.rank(np.asarray(keys), ("unq", "mid"))
        assert got["unq"].tolist() == unq, f"{what}: phi (unq) of engine {rm.engine} differs from the brute force"
        assert np.allclose(got["mid"], mid, rtol=0, atol=0), f"{what}: phi (mid) of engine {rm.engine} differs"


def _check_ties_and_order(what: str, keys: list, values: list[float], ordered: bool) -> None:
    """Equal keys have equal values; different keys different values (beyond rounding);
    where keys are ordered, a smaller key has a smaller value."""
    close = lambda a, b: abs(a - b) <= TOL * max(1.0, abs(a), abs(b))  # noqa: E731
    by_key: dict = {}
    for k, v in zip(keys, values):
        by_key.setdefault(k, []).append(v)
    for k, vs in by_key.items():
        assert all(close(v, vs[0]) for v in vs), f"{what}: key {k} holds runs of different values {sorted(set(vs))}"
    reps = sorted((vs[0], k) for k, vs in by_key.items())
    for (va, ka), (vb, kb) in zip(reps, reps[1:]):
        assert not close(va, vb), f"{what}: keys {ka} and {kb} split runs of one value {va!r}"
        if ordered:
            assert ka < kb, f"{what}: key {ka} (value {va!r}) is not below key {kb} (value {vb!r})"


def _brute_phi(keys: list[int], values: list[float]) -> tuple[list[int], list[float]]:
    """phi by its definition, from the runs' values (their keys group the ties): unq =
    1 + the distinct values below; mid = the mean of 1 + runs below and runs at or below."""
    value_of: dict[int, float] = {}
    for k, v in zip(keys, values):
        value_of.setdefault(k, v)
    order = sorted(value_of, key=value_of.__getitem__)
    dense = {k: i + 1 for i, k in enumerate(order)}
    count = {k: keys.count(k) for k in order}
    below: dict[int, int] = {}
    seen = 0
    for k in order:
        below[k] = seen
        seen += count[k]
    return [dense[k] for k in keys], [below[k] + (1 + count[k]) / 2 for k in keys]


def check_end_to_end(measure: Measure) -> None:
    """evaluate, transform and compare on the example collection; the scale owner's
    verdict exists; a measure without a ranked version is refused cleanly."""
    from irscale.experiment import evaluate, transform
    from irscale.scales.permissible import scale_of
    from irscale.scales.theory import SCALES
    from irscale.study import compare

    N = 5
    m = _at(measure, N)
    runs = sorted((TOY / "runs").glob("*.txt"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the toy's warnings (graded qrels, a topic without results)
        table = evaluate(TOY / "qrels.txt", runs, [m])
        assert table.values.shape == (1, len(runs), len(table.topics)), f"{m}: evaluate's table has the wrong shape"
        v = table.values[0]
        assert np.isfinite(v[~np.isnan(v)]).all(), f"{m}: evaluate gives values that are not finite"
        try:
            t = transform(table, [m], depth=N, ties=("unq", "mid"))
        except IrscaleError as e:
            assert str(e).strip(), f"{m}: transform refuses with an empty message"
            return  # no ranked version: refused with a message (check_refusals looks at it closer)
        assert [str(x) for x in t.measures][1:] == [f"ranked({m})", f"ranked({m}, ties=mid)"], t.measures
        assert (t.values[1] >= 1).all(), f"{m}: phi below 1 in transform"
        study = compare(table, [str(m)], depth=N, tests=["sign", "ttest"], effects=False, measure_free=False)
        assert list(study.table2["measure"]) == [str(m)], (
            f"{m}: compare's Table 2 names {list(study.table2['measure'])}"
        )
    verdict = scale_of(m, N, 3)
    assert verdict.original_scale in SCALES, f"{m}: the scale owner's verdict is {verdict.original_scale!r}"


def check_refusals(measure: Measure) -> None:
    """Limits are refused with an irscale error naming the measure, before any build."""
    from irscale.scales import choose_engine, space_for

    cls = type(measure)
    try:
        parse_measure(f"{cls.NAME}(no_such_parameter=1)")
    except IrscaleError as e:
        assert "no_such_parameter" in str(e), f"{cls.NAME}: the refusal of an unknown parameter does not name it"
    else:
        raise AssertionError(f"{cls.NAME}: an unknown parameter was accepted")
    for N in (30, 60, 400):
        m = _at(measure, N)
        for levels in _levels(measure)[-1:]:
            try:
                choose_engine(space_for(m, N, levels - 1))
            except IrscaleError as e:
                assert cls.NAME.lower() in str(e).lower(), f"{m} at N={N}: the refusal does not name it: {e}"


CHECKS: tuple[Check, ...] = (
    check_parameters,
    check_batch_equals_reference,
    check_space,
    check_end_to_end,
    check_refusals,
)


def checks(measure: str | Measure | type) -> Iterator[tuple[Measure, Check]]:
    """Every (measure instance, check) pair for a measure class, instance or name."""
    for m in instances(measure):
        for check in CHECKS:
            yield m, check


def checks_of(measures: Iterable[str | Measure | type]) -> list[tuple[Measure, Check]]:
    """Every (measure instance, check) pair of several measures."""
    return [pair for m in measures for pair in checks(m)]


def check_measure(measure: str | Measure | type) -> None:
    """Run the whole conformance suite on a measure (class, instance or name); raises
    AssertionError at the first failure.

    >>> check_measure("RR@3")
    """
    for m, check in checks(measure):
        check(m)


def parametrize_with_checks(measures: Iterable[str | Measure | type]):
    """A pytest decorator: one test per (measure, check), named ``<measure>-<check>``;
    the test function takes ``measure`` and ``check`` and calls ``check(measure)``."""
    import pytest

    pairs = checks_of(measures)
    ids = [f"{m}-{check.__name__.removeprefix('check_')}" for m, check in pairs]
    return pytest.mark.parametrize("measure, check", pairs, ids=ids)
