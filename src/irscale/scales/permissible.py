"""The one owner of "on which scale is this measure" and "is this test's conclusion
meaningful" (Stevens' permissible statistics; the 2021 paper, Sections 2.4 and 4).

Every caller asks here: ``compare`` (Tables 5/6's ``meaningful`` columns and the
comparisons with baselines), the warnings over means (:func:`irscale.plan.warn_not_interval`,
said by the CLI), ``transform`` and ``compare`` (through their plan: :mod:`irscale.plan`),
``irscale measures``, the reports' theory notes (each ranked column's
``theory``) and the public door :mod:`irscale.meaning`.

* :func:`scale_of` ``(measure, N, levels, order=None) -> Statement``: the scale of the
  original measure on its runs of length N with ``levels`` relevance degrees (2 for binary
  measures, and graded ones given ``rel=``, whatever ``levels`` is). Where the papers speak
  (:func:`irscale.scales.theory.statement`: P, R, F, gP, gR, AP, RR, RBP, DCG, nDCG, ERR,
  SBTO, RBTO) it is their statement, under the order they study the measure under. Where
  they do not, and the measure's run space declares its values ``equispaced`` (an affine
  function of integer keys that fill a range), it is interval at any N on its own order.
  Otherwise (a user measure, Rprec, bpref), or where another ``order`` is asked, it is
  the exhaustive check over all ``levels ** N`` runs (:mod:`irscale.scales.checks`) under
  that order (by default the measure's own induced order: interval iff its distinct values
  are equi-spaced), with the real number of levels; beyond :data:`CHECK_RUNS` runs the
  verdict is "not shown to be an interval scale" (``Statement.established`` False), never
  an error. The verdict always carries its reason and source.
* :func:`meaningful_test` ``(test, statement, recall_base_dependent) -> bool``: sign and
  Friedman compare two systems within each topic, meaningful on any ordinal scale;
  rank-sum and Kruskal-Wallis pool the scores of all topics, so they need one ordinal scale
  across topics, which recall-base-dependent measures lack (each topic divides by its own
  recall base); signed-rank, t and the ANOVAs add or subtract scores, so they need one
  interval scale across topics (:data:`TEST_NEEDS`).
* :func:`scale_types`: the exhaustive verdicts under the set, strong and weak orders
  (what ``irscale measures`` lists), kept in the cache directory
  (``scale-types-v2.json``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from functools import cache

import numpy as np

from irscale._version import __version__
from irscale.errors import IrscaleError, check_choice
from irscale.validate import integer

__all__ = [
    "CHECK_ORDERS",
    "CHECK_RUNS",
    "interval_at",
    "meaningful_test",
    "ORDER_RUNS",
    "scale_of",
    "SCALE_ORDERS",
    "scale_types",
    "TEST_NEEDS",
]


SCALE_ORDERS = ("set", "strong", "weak")
CHECK_ORDERS = SCALE_ORDERS + ("induced",)
CHECK_RUNS = 2**24  # runs scanned at most for the distinct values of a measure without a statement
ORDER_RUNS = 2**16  # runs the exhaustive check under the set, strong or weak order enumerates at most
_FILE = "scale-types-v2.json"

# what a test needs of the scores to be meaningful (see the module's docstring)
TEST_NEEDS = {
    "sign": "within-topic order",
    "friedman": "within-topic order",
    "ranksum": "one ordinal scale across topics",
    "kruskal": "one ordinal scale across topics",
    "signrank": "one interval scale across topics",
    "ttest": "one interval scale across topics",
    "anova1": "one interval scale across topics",
    "anova2": "one interval scale across topics",
    # the randomised tests compare means of differences (permutation, bootstrap) or of
    # scores (rtukey) across topics: an interval scale, as the t test
    "permutation": "one interval scale across topics",
    "rtukey": "one interval scale across topics",
    "bootstrap": "one interval scale across topics",
}


def _at_depth(measure, N: int):
    from irscale.measures import at_depth, parse_measure

    m = parse_measure(measure, default_cutoff=N)
    if any(f.name == "cutoff" for f in dataclasses.fields(m)):
        m = at_depth(m, N)  # the measure on runs of length N: cut at N
    return m


def _own_levels(m, levels: int) -> int:
    """The relevance degrees of the measure's own run space: 2 for binary measures (and
    graded ones given ``rel=``), ``levels`` for graded ones."""
    binary = (not m.graded) or getattr(m, "rel", None) is not None
    return 2 if binary else levels


def scale_of(measure, N: int, levels: int = 2, order: str | None = None, *, max_runs: int = CHECK_RUNS):
    """The scale of ``measure`` (a name or a Measure; put at run length N) on its runs of
    length ``N`` with ``levels`` relevance degrees: a
    :class:`~irscale.scales.theory.Statement` (its ``original_scale``, ``order``,
    ``reason``, ``source``; ``interval`` and ``ordinal`` as properties; ``established``
    False where it could not be decided). ``order``: ``None`` (the papers' order where they
    speak, else the measure's induced order), or one of ``"set"``, ``"strong"``, ``"weak"``,
    ``"induced"``. ``max_runs``: the most runs the check of a measure without a statement
    scans (beyond: not established). See the module's docstring.

    Examples
    --------
    >>> scale_of("P", 10).original_scale, scale_of("P", 10).source
    ('interval', '2019 paper, Sec. 4.1')
    >>> import textwrap
    >>> print(textwrap.fill(scale_of("AP", 10).text(), 100))
    AP@10 (2 levels): not ordinal under the strong order (2019 paper, Sec. 5-6; 2021 paper, Sec. 3.2:
    (1,0,0,...) scores below (0,1,1,...) although it is above it); phi equi-spaces AP's own order
    >>> s = scale_of("Rprec", 6)
    >>> s.original_scale, s.order, s.source
    ('interval', 'induced', 'exhaustive check over all 64 runs (the papers make no statement)')
    """
    from irscale.scales.theory import statement

    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    max_runs = integer("max_runs", max_runs, minimum=1)
    if order is not None:
        order = check_choice("order", order, CHECK_ORDERS)
    m = _at_depth(measure, N)
    said = statement(m, N, levels)
    if said is not None and (order is None or order == said.order):
        return said
    if (said is None and order is None) or order == "induced":  # the space speaks of the measure's own order
        declared = _declared(m, N, _own_levels(m, levels))
        if declared is not None:
            return declared
    why = "the papers make no statement" if said is None else f"the papers' statement is under the {said.order} order"
    return _checked(m, N, _own_levels(m, levels), order or "induced", max_runs, why)


def _declared(m, N: int, levels: int):
    """What the measure's run space declares of its scale (``equispaced``: its values are an
    affine function of integer keys that fill a range, so they are equi-spaced: interval at
    any N, on its own order), as a Statement; None where it declares nothing (or has no space).
    :func:`irscale.testing.check_space` holds every space to its declaration."""
    from irscale.scales.spaces import space_for
    from irscale.scales.theory import Statement

    try:
        space = space_for(m, N, levels - 1)
    except IrscaleError:
        return None
    if not space.equispaced:
        return None
    return Statement(
        str(m),
        N,
        levels,
        "induced",
        "interval",
        "its values are an affine function of integer keys that fill a range: equi-spaced at any N",
        f"its run space ({type(space).__name__}) declares it, and irscale.testing.check_space checks it",
    )


def _checked(m, N: int, levels: int, order: str, max_runs: int = CHECK_RUNS, why: str = "the papers make no statement"):
    """The exhaustive verdict as a Statement; not established (``original_scale``
    "unknown") where there are too many runs or the measure cannot be run on them."""
    from irscale.scales.theory import Statement

    runs = levels**N
    limit = max_runs if order == "induced" else min(max_runs, ORDER_RUNS)
    if runs > limit:
        return Statement(
            str(m),
            N,
            levels,
            order,
            "unknown",
            f"{why}, and its {levels}^{N} runs are too many to check (at most {limit:,}); not claimed interval",
            "irscale: no statement and no check",
        )
    try:
        scale, reason = _exhaustive(m, N, levels, order)
    except IrscaleError as e:
        return Statement(
            str(m),
            N,
            levels,
            order,
            "unknown",
            f"{why}, and it cannot be checked over its runs ({e}); not claimed interval",
            "irscale: no statement and no check",
        )
    return Statement(str(m), N, levels, order, scale, reason, f"exhaustive check over all {runs:,} runs ({why})")


def _persistent(m) -> bool:
    """Verdicts on irscale's own measures are kept on disk; a user's measure may change
    under the same name (as its rank maps, never cached on disk)."""
    from irscale.measures import FunctionMeasure

    return type(m).__module__.startswith("irscale.measures") and not isinstance(m, FunctionMeasure)


@cache
def _exhaustive(m, N: int, levels: int, order: str) -> tuple[str, str]:
    """(scale, reason) of ``m`` under ``order`` over all runs, from the cache file when
    this irscale version checked it before (irscale's own measures only)."""
    from irscale.scales.cache import cache_dir

    key = f"{m}|N={N}|levels={levels}|order={order}|irscale {__version__}"
    path = cache_dir() / _FILE
    keep = _persistent(m)
    known = _read(path) if keep else {}
    if isinstance(known.get(key), list) and len(known[key]) == 2:
        return tuple(known[key])
    out = _equispaced(m, N, levels) if order == "induced" else _under(m, N, levels, order)
    if keep:
        known = _read(path)  # again: another process may have added answers meanwhile
        known[key] = list(out)
        _write(path, known)
    return out


def _under(m, N: int, levels: int, order: str) -> tuple[str, str]:
    """Ordinal and interval under a set, strong or weak order (:mod:`irscale.scales.checks`)."""
    from irscale.scales.checks import as_measure, is_interval, is_ordinal

    fn = as_measure(m, N, levels - 1)
    ordv = is_ordinal(fn, order, N, levels)
    if not ordv.holds:
        return "not ordinal", f"{ordv.check} fails: {ordv.counterexample_text()}"
    intv = is_interval(fn, order, N, levels)
    return (
        ("interval", "its values are equi-spaced along the order")
        if intv.holds
        else ("ordinal", f"{intv.check} fails: {intv.counterexample_text()}")
    )


_CHUNK = 2**16  # runs a chunk of the distinct-value scan


def _equispaced(m, N: int, levels: int) -> tuple[str, str]:
    """Under the measure's own induced order every measure is ordinal; it is an interval
    scale iff its distinct values are equi-spaced (up to 1e-9 of the largest |value|).
    The runs are scanned in chunks (memory grows with the distinct values, not the runs);
    ties are the measure's exact keys."""
    from irscale.scales.checks import as_measure

    fn = as_measure(m, N, levels - 1)
    keys = vals = None
    total = levels**N
    powers = levels ** np.arange(N - 1, -1, -1, dtype=np.int64)
    for start in range(0, total, _CHUNK):
        idx = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        runs = ((idx[:, None] // powers) % levels).astype(np.int16)
        k, first = np.unique(np.asarray(fn.order_keys(runs)), return_index=True)
        v = np.asarray(fn.values(runs[first]), dtype=np.float64)
        if keys is not None:
            k, v = np.concatenate([keys, k]), np.concatenate([vals, v])
            k, first = np.unique(k, return_index=True)
            v = v[first]
        keys, vals = k, v
    assert vals is not None  # levels**N >= 2 runs: the loop ran
    vals = np.sort(vals)
    n = len(vals)
    if n <= 2:
        return "interval", f"it takes {n} distinct value{'s' if n != 1 else ''}"
    steps = np.diff(vals)
    tol = 1e-9 * (float(np.max(np.abs(vals))) or 1.0)
    bad = np.flatnonzero(np.abs(steps - steps[0]) > tol)
    if not len(bad):
        return "interval", f"its {n:,} distinct values are equi-spaced (step {steps[0]:.6g})"
    b = int(bad[0])
    return "ordinal", (
        f"its {n:,} distinct values are not equi-spaced: {vals[0]:.6g} to {vals[1]:.6g} is a step of "
        f"{steps[0]:.6g}, {vals[b]:.6g} to {vals[b + 1]:.6g} one of {steps[b]:.6g}"
    )


def scale_types(measure, N: int = 10, levels: int = 2) -> dict[str, str]:
    """``{order: "interval" | "ordinal" | "not ordinal"}`` of ``measure`` over all runs of
    length ``N`` with ``levels`` relevance degrees, under the set, strong and weak orders
    ("ordinal" means ordinal and not interval): :func:`scale_of` under each order, always
    checked exhaustively (tests/test_theory.py checks that the papers' statements agree with
    these checks under their order at every small N). Measures that cannot
    be checked (too many runs, or none of their own) raise :class:`IrscaleError`."""
    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    m = _at_depth(measure, N)
    out = {}
    for order in SCALE_ORDERS:
        said = _checked(m, N, levels, order, ORDER_RUNS)  # under each order: the exhaustive check
        if not said.established:
            raise IrscaleError(f"{m} cannot be checked at N = {N} with {levels} levels: {said.reason}")
        out[order] = said.original_scale
    return out


def meaningful_test(test: str, scale, recall_base_dependent: bool) -> bool:
    """Is "systems i and j differ significantly by ``test``" a meaningful statement about
    scores on ``scale`` (a :class:`~irscale.scales.theory.Statement` from
    :func:`scale_of`, or a bool: whether the scores are on an interval scale, True for a
    ranked measure)? See :data:`TEST_NEEDS` and the module's docstring.

    >>> meaningful_test("ttest", scale_of("AP", 30), False), meaningful_test("sign", scale_of("AP", 30), True)
    (False, True)
    >>> meaningful_test("ranksum", True, True)  # a ranked AP: interval, but one recall base per topic
    False
    """
    test = check_choice("test", test, tuple(TEST_NEEDS))
    interval = scale if isinstance(scale, bool) else bool(scale.interval)
    need = TEST_NEEDS[test]
    if need == "within-topic order":
        return True
    if recall_base_dependent:
        return False
    return True if need == "one ordinal scale across topics" else interval


def interval_at(measure, N: int, levels: int = 2):
    """Deprecated: :func:`scale_of`, which also answers where the papers say nothing.
    The papers' statement about ``measure`` at run length N, or None."""
    import warnings

    from irscale.scales.theory import statement

    warnings.warn(
        "irscale.scales.permissible.interval_at is deprecated: use scale_of (irscale.meaning.scale_of)",
        DeprecationWarning,
        stacklevel=2,
    )
    try:
        return statement(measure, N, levels)
    except IrscaleError:
        return None


def _read(path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):  # absent or damaged: checked again (and rewritten)
        return {}


def _write(path, data: dict) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, indent=0, sort_keys=True))
        os.replace(tmp, path)
    except OSError:  # a read-only cache: the answers are kept for this process only
        pass
