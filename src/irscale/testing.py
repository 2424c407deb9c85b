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

* :func:`check_batch_equals_reference`: ``batch`` (numpy over several runs and topics)
  equals ``reference`` (plain Python over one ranking) on each, on rankings that
  hypothesis generates: binary and graded qrels (2 to 4 levels), short and empty runs,
  unjudged documents, topics with their own judged counts;
* :func:`check_value_bound`: on every run up to a few ranks (every grade, unjudged
  documents, short runs) and topics judged just what the run holds or more, every value lies
  in ``[0, value_bound]`` (a class attribute: 1 by default, None where there is no upper bound);
* :func:`check_parameters`: every parameter is documented (``param_docs``), the canonical
  name parses back to an equal measure, case-insensitively, and so does its trec_eval name;
* :func:`check_space` (measures with a ranked version): at small N, for every level count
  the measure supports, the space that serves it (its own ``@serves`` space, or the
  generic one from its ``exact_key`` or float values) maps judged grades onto its runs
  (unjudged documents and short runs included), its exact keys are ordered and tied
  exactly like the measure's values (``reference``), the values derived from the keys
  equal ``batch``, and phi under the ``unq`` and ``mid`` tie strategies equals a brute
  force over every run (plain Python, sharing no code with the engines) and the
  ``oracle`` engine; a space that declares its values ``equispaced`` (interval at any N)
  has keys that fill a range and values equally spaced along them, and the scale owner
  says interval on the measure's own order;
* :func:`check_end_to_end`: evaluate, transform and compare run on the example
  collection shipped with irscale, and the scale owner
  (:func:`irscale.scales.permissible.scale_of`) gives a verdict; transform refuses a
  measure with an irscale error only where it has no ranked version;
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
from irscale.measures.registry import ENTRIES

__all__ = [
    "Check",
    "check_batch_equals_reference",
    "check_end_to_end",
    "check_measure",
    "check_parameters",
    "check_refusals",
    "check_space",
    "check_value_bound",
    "CHECKS",
    "checks",
    "checks_of",
    "instances",
    "parametrize_with_checks",
    "registered",
    "SMALL_N",
    "TOL",
    "TOY",
]


TOY = Path(__file__).parent / "examples" / "toy"
TOL = 1e-9  # relative: exact values that differ are far apart at the small N checked here
SMALL_N = {2: 6, 3: 4, 4: 4}  # the longest run checked on each number of levels (levels^N runs)

Check = Callable[[Measure], None]


# -- which measures ---------------------------------------------------------------------------------


def instances(measure: str | Measure | type) -> list[Measure]:
    """The measures a check runs on: an instance or a name as it is; a class as its
    defaults (at cutoff 5 if it needs one) and every name in the class's own ``examples``
    (not inherited: a subclass is checked on its own instances)."""
    if not isinstance(measure, type):
        return [parse_measure(measure)]
    if not issubclass(measure, Measure):
        raise TypeError(f"{measure.__qualname__} is not a Measure class")
    try:
        base = parse_measure(measure.NAME, default_cutoff=5 if measure.requires_cutoff else None)
    except (TypeError, IrscaleError) as e:
        raise AssertionError(
            f"{measure.__qualname__}: no instance can be made from its name {measure.NAME!r} ({e}); give "
            "every parameter a default (a cutoff None with requires_cutoff = True where it needs one)"
        ) from None
    out = [base] + [parse_measure(e) for e in measure.__dict__.get("examples", ())]
    wrong = [str(m) for m in out if type(m) is not measure]
    assert not wrong, f"{measure.__qualname__}: its name or examples parse to other classes: {wrong}"
    return list(dict.fromkeys(out))


def registered() -> list[type]:
    """Every registered measure class (built in and the user's), in registration order."""
    return list(ENTRIES)


# -- the checks ---------------------------------------------------------------------------------


def check_batch_equals_reference(measure: Measure, *, max_examples: int = 100) -> None:
    """``batch`` over several runs and topics equals ``reference`` on each (run, topic),
    on rankings hypothesis generates: 2 to 4 levels, short and empty runs, unjudged
    documents, grades below 0, topics with their own judged counts."""
    try:
        from hypothesis import given, settings
        from hypothesis import strategies as st
    except ImportError:
        raise ImportError(
            'irscale.testing needs hypothesis for its property checks: pip install "irscale[testing]"'
        ) from None

    @st.composite
    def runs_and_topics(draw):
        levels, S, T = draw(st.integers(2, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
        grade = st.sampled_from([*range(levels), -1, int(UNJUDGED)])  # -1: judged below 0
        runs = [[draw(st.lists(grade, max_size=12)) for _ in range(T)] for _ in range(S)]
        counts = []
        for t in range(T):  # each topic judged at least what its runs retrieved
            row = [draw(st.integers(0, 6)) for _ in range(levels)]
            counts.append([max([row[g]] + [r[t].count(g) for r in runs]) for g in range(levels)])
        return runs, counts

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(runs_and_topics())
    def run_check(case):
        runs, counts = case
        S, T = len(runs), len(counts)
        topics = TopicStats(tuple(map(str, range(T))), np.array(counts, dtype=np.int64), len(counts[0]) - 1)
        grades = np.full((S, T, max([len(x) for r in runs for x in r] + [1])), PAD, dtype=np.int16)
        for s, t in itertools.product(range(S), range(T)):
            grades[s, t, : len(runs[s][t])] = runs[s][t]
        got = measure.batch(grades, topics)
        assert np.shape(got) == (S, T), f"{measure}: batch gives shape {np.shape(got)} for {S} runs, {T} topics"
        for s, t in itertools.product(range(S), range(T)):
            want = float(measure.reference(list(runs[s][t]), TopicStats.single(counts[t])))
            assert math.isclose(float(got[s, t]), want, rel_tol=1e-12, abs_tol=1e-12), (
                f"{measure}: batch gives {float(got[s, t])!r} for run {s} on topic {t}, reference {want!r} "
                f"(the ranking {runs[s][t]}, level counts {counts[t]}; all topics {counts})"
            )

    run_check()


def check_value_bound(measure: Measure) -> None:
    """Every value lies in ``[0, value_bound]`` (``value_bound`` None: no upper bound), on
    every run of up to 4 ranks over the measure's grades and unjudged documents, each run on
    a topic judged just what it holds (the highest values of recall-based measures) and on a
    topic judged more at every grade."""
    bound = type(measure).value_bound
    top = max(_levels(measure)) - 1
    grades = [*range(top + 1), int(UNJUDGED)]
    runs = [list(r) for n in range(5) for r in itertools.product(grades, repeat=n)]
    for extra in (0, 3):
        counts = [[sum(g == k for g in r) + extra for k in range(top + 1)] for r in runs]
        topics = TopicStats(tuple(map(str, range(len(runs)))), np.array(counts, dtype=np.int64), top)
        g = np.full((1, len(runs), 4), PAD, dtype=np.int16)
        for t, r in enumerate(runs):
            g[0, t, : len(r)] = r
        values = np.asarray(measure.batch(g, topics), dtype=np.float64)[0]
        outside = np.flatnonzero(~((values >= -1e-12) & (values <= (np.inf if bound is None else bound + 1e-12))))
        if len(outside):
            k = int(outside[0])
            raise AssertionError(
                f"{measure}: {float(values[k])!r} on the ranking {runs[k]} (level counts {counts[k]}) lies outside "
                f"[0, {bound}]; declare the measure's range on its class (value_bound = its largest value, "
                "or None where it has none)"
            )


def check_parameters(measure: Measure) -> None:
    """Parameters documented; the canonical and trec_eval names parse back to the measure."""
    cls = type(measure)
    undocumented = [name for name, _, doc in cls.param_info() if not doc.strip()]
    assert not undocumented, f"{cls.NAME}: parameters without a description in param_docs: {undocumented}"
    name = str(measure)
    assert parse_measure(name) == measure, f"{measure}: its name parses to {parse_measure(name)}"
    folded = cls.NAME.swapcase() + name[len(cls.NAME) :]  # names are case-insensitive, values are not
    assert parse_measure(folded) == measure, f"{measure}: {folded!r} does not parse to it"
    te = measure.trec_eval_name
    rel = getattr(measure, "rel", None)
    if te is not None and (measure.graded or rel is None or rel >= 1):  # trec_eval's -l is at least 1
        back = from_trec_eval(te)  # trec_eval's names carry no relevance level: it is its -l option
        level = rel if back is not None and not measure.graded else None
        back = at_rel_level([back], level)[0] if back is not None else None
        assert back == measure, f"{measure}: its trec_eval name {te!r} (at -l {level}) reads {back}"


def _levels(measure: Measure) -> list[int]:
    """The level counts a measure's space is checked on: binary measures live on 2."""
    binary = (not measure.graded) or getattr(measure, "rel", None) is not None
    return [2] if binary else [2, 3, 4]


def _refusal(measure: Measure) -> str | None:
    """Why the measure has no ranked version (irscale refuses it), or None where it has one."""
    from irscale.scales import space_for

    if not any(f.name == "cutoff" for f in dataclasses.fields(measure)):
        return "it takes no cutoff, so it cannot be put at a run length N"
    try:
        space_for(_at(measure, 5), 5, 1)
    except IrscaleError as e:
        return str(e)
    return None


def check_space(measure: Measure) -> None:
    """The space that serves the measure at small N (its own, or the generic one of a
    user's measure: ``exact_key`` or its float values): grades mapped onto its runs, exact
    keys ordered and tied like the measure's values, phi (unq, mid) equal to a brute force
    and to the oracle engine, at every N up to a few and every level count it supports."""
    from irscale.scales import build, space_for

    if _refusal(measure) is not None:
        return  # no ranked version: check_end_to_end checks the refusal
    for levels in _levels(measure):
        for N in range(1, SMALL_N[levels] + 1):
            m = _at(measure, N)
            _check_keys_and_phi(m, space_for(m, N, levels - 1), N, levels, build)


def _at(measure: Measure, N: int) -> Measure:
    """The measure at run length N (its cutoff moved to N where it has one)."""
    if any(f.name == "cutoff" for f in dataclasses.fields(measure)):
        return dataclasses.replace(measure, **{"cutoff": N})  # (the base class has no cutoff field)
    return measure


def _judged(measure: Measure, runs: list[tuple[int, ...]], binary: bool) -> np.ndarray:
    """Runs of the space as judged grades: on a binary space, 1 is a document of grade
    ``rel`` and 0 one of grade 0 (-1, judged below 0, where rel is 0)."""
    g = np.array(runs, dtype=np.int16).reshape(len(runs), -1)
    if not binary:
        return g
    rel = getattr(measure, "rel", None)
    rel = 1 if rel is None else rel
    return np.where(g == 1, rel, 0 if rel > 0 else -1).astype(np.int16)


def _check_grade_view(what: str, space, judged: np.ndarray, runs: np.ndarray) -> None:
    """The space maps judged grades onto its runs, sentinels and short runs included:
    unjudged documents and missing ranks count as non-relevant (grade 0)."""
    assert np.array_equal(space.grade_view(judged), runs), f"{what}: grade_view does not map judged grades"
    zero = runs == 0
    if zero.any() and judged[zero].max() >= 0:  # (where rel is 0, grade -1 stands for non-relevant)
        unjudged = np.where(zero, UNJUDGED, judged)
        assert np.array_equal(space.grade_view(unjudged), runs), f"{what}: unjudged documents are not grade 0"
    short = judged[np.all(zero[:, -1:], axis=1), :-1]  # runs whose last rank is non-relevant, cut short
    if len(short) and short.shape[1]:
        assert np.array_equal(space.grade_view(short), runs[np.all(zero[:, -1:], axis=1)]), (
            f"{what}: a run shorter than N is not padded with non-relevant documents"
        )


def _check_keys_and_phi(m: Measure, space, N: int, levels: int, build) -> None:
    c = levels - 1
    binary = space.binary_measure
    runs = list(itertools.product(range(c + 1), repeat=N))  # every run, plain Python
    judged = _judged(m, runs, binary)
    rel = getattr(m, "rel", None)
    top = (1 if rel is None else max(rel, 1)) if binary else c
    topic = TopicStats.single([N] * (top + 1))
    what = f"{m} at N={N} on {levels} levels ({type(space).__name__})"
    _check_grade_view(what, space, judged, np.array(runs, dtype=np.int8).reshape(len(runs), N))
    keys = space.keys(space.grade_view(judged))
    values = [float(m.reference(list(j), topic)) for j in judged.tolist()]
    float_keyed = getattr(space, "family", "") == "generic" and getattr(m, "exact_key", None) is None
    _check_ties_and_order(what, [int(k) for k in keys], values, space.ordered_keys, split_ok=float_keyed)
    batch = m.batch(judged[:, None, :], topic)[:, 0]
    derived = space.measure_values(np.asarray(keys)[:, None], topic)[:, 0]
    assert np.allclose(batch, values, rtol=1e-12, atol=1e-12), f"{what}: batch differs from reference"
    assert np.allclose(derived, values, rtol=1e-9, atol=1e-12), f"{what}: values derived from the keys differ"
    if space.equispaced:
        _check_equispaced(what, m, N, levels, [int(k) for k in keys], values)
    unq, mid = _brute_phi([int(k) for k in keys], values)
    for engine in ("auto", "oracle"):
        rm = build(m, N, levels, engine=engine, cache=False)
        got = rm.rank(np.asarray(keys), ("unq", "mid"))
        assert got["unq"].tolist() == unq, f"{what}: phi (unq) of engine {rm.engine} differs from the brute force"
        assert np.array_equal(got["mid"], mid), f"{what}: phi (mid) of engine {rm.engine} differs"


def _check_equispaced(what: str, m: Measure, N: int, levels: int, keys: list, values: list[float]) -> None:
    """A space declaring ``equispaced``: the runs' keys fill a range of integers, the values
    step by the same amount from each key to the next, and the scale owner says interval."""
    from irscale.scales.permissible import scale_of

    value_of = dict(zip(keys, values))
    ks = sorted(value_of)
    assert ks == list(range(ks[0], ks[-1] + 1)), f"{what}: declared equispaced, but its keys do not fill a range"
    steps = [value_of[b] - value_of[a] for a, b in zip(ks, ks[1:])]
    assert all(math.isclose(d, steps[0], rel_tol=1e-9, abs_tol=1e-12) for d in steps), (
        f"{what}: declared equispaced, but its values step by {min(steps)!r} to {max(steps)!r}"
    )
    said = scale_of(m, N, levels, order="induced")
    assert said.original_scale == "interval", f"{what}: declared equispaced, but scale_of says {said.text()}"


def _check_ties_and_order(what: str, keys: list, values: list[float], ordered: bool, split_ok: bool = False) -> None:
    """Equal keys have equal values; different keys different values (beyond rounding;
    ``split_ok``: keys that are the measure's own float values may split values that
    differ by rounding only); where keys are ordered, a smaller key has a smaller value."""
    close = lambda a, b: abs(a - b) <= TOL * max(1.0, abs(a), abs(b))  # noqa: E731
    by_key: dict = {}
    for k, v in zip(keys, values):
        by_key.setdefault(k, []).append(v)
    for k, vs in by_key.items():
        assert all(close(v, vs[0]) for v in vs), f"{what}: key {k} holds runs of different values {sorted(set(vs))}"
    reps = sorted((vs[0], k) for k, vs in by_key.items())
    for (va, ka), (vb, kb) in zip(reps, reps[1:]):
        assert split_ok or not close(va, vb), f"{what}: keys {ka} and {kb} split runs of one value {va!r}"
        if ordered and not close(va, vb):
            assert ka < kb, f"{what}: key {ka} (value {va!r}) is not below key {kb} (value {vb!r})"


def _brute_phi(keys: list[int], values: list[float]) -> tuple[list[int], list[float]]:
    """phi by its definition, from the runs' values (their keys group the ties): unq =
    1 + the distinct values below; mid = the mean of 1 + runs below and runs at or below."""
    value_of: dict[int, float] = {}
    for k, v in zip(keys, values):
        value_of.setdefault(k, v)
    order = sorted(value_of, key=lambda k: (value_of[k], k))
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
    verdict exists; a measure without a ranked version is refused with an irscale error
    by transform, and only such a measure."""
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
        assert np.isfinite(table.values[0]).all(), f"{m}: evaluate gives values that are not finite numbers"
        if _refusal(measure) is not None:
            try:
                transform(table, [m], depth=N)
            except IrscaleError as e:
                assert str(e).strip(), f"{m}: transform refuses with an empty message"
                return
            raise AssertionError(f"{m}: transform gives a ranked version though the measure has none")
        t = transform(table, [m], depth=N, ties=("unq", "mid"))
        assert [str(x) for x in t.measures][1:] == [f"ranked({m})", f"ranked({m}, ties=mid)"], t.measures
        assert (t.values[1:] >= 1).all(), f"{m}: phi below 1 in transform"
        study = compare(table, [str(m)], depth=N, tests=["sign", "ttest"], effects=False, measure_free=False)
        assert list(study.table2["measure"]) == [str(m)], (
            f"{m}: compare's Table 2 names {list(study.table2['measure'])}"
        )
    verdict = scale_of(m, N, 3)
    assert verdict.original_scale in SCALES, f"{m}: the scale owner's verdict is {verdict.original_scale!r}"


def check_refusals(measure: Measure) -> None:
    """Limits are refused with an irscale error naming the measure, when the engine is
    chosen (before anything is built): an unknown parameter, and run lengths (30, 60, 400)
    beyond what an exact engine reaches."""
    from irscale.scales import choose_engine, space_for

    cls = type(measure)
    try:
        parse_measure(f"{cls.NAME}(no_such_parameter=1)")
    except IrscaleError as e:
        assert "no_such_parameter" in str(e), f"{cls.NAME}: the refusal of an unknown parameter does not name it"
    else:
        raise AssertionError(f"{cls.NAME}: an unknown parameter was accepted")
    if _refusal(measure) is not None:
        return
    for N in (30, 60, 400):
        m = _at(measure, N)
        for levels in _levels(measure)[-1:]:
            try:
                choose_engine(space_for(m, N, levels - 1))
            except IrscaleError as e:
                assert cls.NAME.lower() in str(e).lower(), f"{m} at N={N}: the refusal does not name it: {e}"


CHECKS: tuple[Check, ...] = (
    check_value_bound,
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
