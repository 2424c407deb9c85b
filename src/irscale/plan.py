"""What a transform will do, decided once before any data is read: the relevance setting,
the measures as named and as computed, the engine of each (or certified bounds), the memory
each rank map takes, each measure's scale verdict, and the refusals, all in one
:class:`TransformPlan` (:func:`plan_transform`) that :func:`irscale.experiment.transform`,
:class:`irscale.study.StudyPlan` and the CLI read instead of deriving any of it again; and
the not-interval advice (:func:`warn_not_interval`), which names what would give the ranked
versions."""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from irscale.data import (
    JudgedRuns,
)
from irscale.errors import (
    GUIDE,
    ArgumentError,
    IrscaleError,
    IrscaleWarning,
    MeasureError,
    check_choice,
    count_text,
    warn,
)
from irscale.measures import Measure, at_depth, parse_measures
from irscale.table import Ranked, ScoreTable, not_interval, scale_as_named
from irscale.validate import integer

if TYPE_CHECKING:  # (annotations only: importing the plan loads no engine)
    from irscale.scales.spaces import Space
    from irscale.scales.theory import Statement

__all__ = [
    "apply_relevance",
    "check_lenient",
    "LINE",
    "MeasurePlan",
    "NoEngineError",
    "NotMeaningfulWarning",
    "plan_rank_maps",
    "plan_transform",
    "RELEVANCE",
    "relevance_measures",
    "TransformPlan",
    "warn_not_interval",
]


_WARNED_NOT_INTERVAL: set[str] = set()


LINE = 160  # a warning's line, "warning: " included, at most about this long


def _fit(names: list[str], room: int) -> str:
    """``a, b and c`` or, where that is longer than ``room``, the first names that fit and
    ``and k more``."""
    full = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    if len(full) <= room:
        return full
    for k in range(len(names) - 1, 0, -1):
        text = ", ".join(names[:k]) + f" and {len(names) - k} more"
        if len(text) <= room or k == 1:  # the first name at least
            return text
    return full


class NotMeaningfulWarning(IrscaleWarning):
    """``what`` (means, a t test, ANOVA: statements that add or subtract scores) of
    ``measures`` is not meaningful: they are not interval scales at the run lengths ``at``
    ({measure name without its cutoff: [N, ...]}); ``longest``: the measures have no
    cutoff and ``longest`` is the longest run's length (0: every measure has its cutoff).
    One line (:data:`LINE`); the CLI's ``study`` merges the warnings of its run lengths into
    one (:meth:`merged`)."""

    def __init__(self, what: str, at: dict[str, list[int]], advice: str, longest: int = 0):
        self.what, self.advice, self.longest = what, advice, longest
        self.at = {k: sorted(set(v)) for k, v in at.items()}
        super().__init__(self._text(), key=("not meaningful", what, tuple(self.at)))
        self.merge_key = ("not meaningful", what)  # the CLI's study merges these over its N

    def __reduce__(self):
        return (NotMeaningfulWarning, (self.what, self.at, self.advice, self.longest))

    def _text(self) -> str:

        Ns = sorted({n for v in self.at.values() for n in v})
        some = "some of " if any(v != Ns for v in self.at.values()) else ""  # not every measure at every N
        where = (
            f"on runs of up to {self.longest} documents" if self.longest else f"at {some}N = " + ", ".join(map(str, Ns))
        )
        plural = self.what.endswith("s") or "/" in self.what  # means, ttest/anova1 (the verb agrees with them)
        head = f"{self.what} of "
        tail = f" {'are' if plural else 'is'} not meaningful {where} (not interval); {self.advice} ({GUIDE})"
        return head + _fit(list(self.at), LINE - len("warning: ") - len(head) - len(tail)) + tail

    def merged(self, other: NotMeaningfulWarning) -> NotMeaningfulWarning:
        """One warning for ``self`` and ``other`` (the same statement at other run lengths)."""
        at = {k: self.at.get(k, []) + other.at.get(k, []) for k in dict.fromkeys([*self.at, *other.at])}
        return NotMeaningfulWarning(self.what, at, self.advice, max(self.longest, other.longest))


def _transform_advice(measures, N: int, table: ScoreTable) -> str:
    """What gives the ranked versions of ``measures`` at run length N, computed from what
    ran: where the table carries them already (a transform's), its ranked columns; else
    the command at that same N (never a smaller one: the researcher asked for N) where exact
    engines reach it for every one, else with certified bounds (--approx) where those
    exist, else with binary relevance where that reaches N; else that nothing reaches N
    exactly, and how far the exact engines reach (a fact: a shorter run is another measure)."""
    ranked = {str(m.measure) for m in table.measures if isinstance(m, Ranked)}
    if measures and all(str(m) in ranked for m in measures):
        return "their ranked columns (_R) are"
    levels = max(table.judged.topics.max_grade, 1) + 1 if table.judged is not None else 2
    values = table.judged.topics.values if table.judged is not None else None  # real-valued grades' levels
    at_N = [dataclasses.replace(m, cutoff=N) if hasattr(m, "cutoff") else m for m in measures]

    def reach(lv: int, approx: float | None = None) -> bool:
        try:
            plan_rank_maps(at_N, N, lv, approx, values=values if lv == levels else None)
        except (IrscaleError, TypeError, ValueError):
            return False
        return True

    if reach(levels):
        return f"ranked: irscale transform -N {N}"
    if reach(levels, 1e-4):
        return f"ranked, within certified bounds: irscale transform -N {N} --approx 1e-4"
    if levels > 2 and values is None and reach(2):
        return f"ranked: irscale transform -N {N} --relevance lenient"
    if values is not None:  # real-valued grades: a threshold binarises them
        return "ranked versions need fewer distinct grades or a threshold rel="
    from irscale.scales.rankmap import exact_reach

    try:  # how far they are exact: a fact, not advice to shorten the runs
        exact_to = min(exact_reach(m, levels - 1, N + 1) for m in at_N)
    except (IrscaleError, TypeError, ValueError):
        return f"no exact ranked version reaches N = {N}"
    return f"ranked versions are exact up to N = {exact_to}"


def warn_not_interval(table: ScoreTable, what: str, names=None, advice: str | None = None, stacklevel: int = 3) -> None:
    """Warn, once per measure and process, that ``what`` (means, t tests, ANOVA) of the
    measures of ``table`` that are not interval scales are not meaningful, in one line
    (:class:`NotMeaningfulWarning`): the measures by name without their cutoff, the N
    (the cutoff; the longest run where a measure has none) and ``advice`` (default: the
    command that gives their ranked versions). ``names``: only these measures."""
    bad = {
        k: v for k, v in not_interval(table).items() if k not in _WARNED_NOT_INTERVAL and (names is None or k in names)
    }
    if not bad:
        return
    _WARNED_NOT_INTERVAL.update(bad)
    cut = all(name.endswith(f"@{N}") for name, (N, _) in bad.items())  # every one named at its cutoff N
    at: dict[str, list[int]] = {}
    for name, (N, _said) in bad.items():  # at their cutoffs: named without it (N is said); else as they are
        at.setdefault(name[: -len(f"@{N}")] if cut else name, []).append(N)
    N = max(n for n, _ in bad.values())
    longest = 0 if cut else max(n for name, (n, _) in bad.items() if not name.endswith(f"@{n}"))
    advice = advice or _transform_advice([m for m in table.measures if str(m) in bad], N, table)
    warnings.warn(NotMeaningfulWarning(what, at, advice, longest), stacklevel=stacklevel)


RELEVANCE = ("graded", "lenient")


def apply_relevance(
    judged: JudgedRuns, measures: Sequence[Measure], relevance: str | None = None
) -> tuple[JudgedRuns, str]:
    """The judged runs under a relevance protocol, and the protocol's name.

    ``"graded"``: graded measures live on the graded run space ((c+1)^N runs, c the top
    grade). ``"lenient"``: the qrels are binarised (grade >= 1 relevant), so every measure
    is binary: the 2021 paper's protocol for the graded Common Core tracks. ``None``:
    graded, with a one-line note when graded qrels meet a graded measure (saying how to
    get the other protocol)."""
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
    check_lenient(relevance, judged.topics.values)
    if relevance == "lenient":
        relevance_measures(measures, relevance)  # what lenient refuses (rel > 1, gP, gains=) is said there
        return judged.binarised(1), "lenient"
    c = judged.topics.max_grade
    graded = [str(m) for m in measures if m.graded and getattr(m, "rel", None) is None]
    if relevance is None and c > 1 and graded:
        graded = list(dict.fromkeys(re.sub(r"@\d+$", "", g) for g in graded))  # the same at every N of a study
        binarise = (
            "--relevance lenient binarises (as the 2021 paper)"
            if judged.topics.values is None
            else "rel= binarises (rel=0.5: grade >= 0.5 relevant)"
        )
        tail = f" use{'s' if len(graded) == 1 else ''} all {c + 1} grades: {binarise}, graded silences this"
        warn(f"graded qrels: {_fit(graded, LINE - 41 - len(tail))}{tail}", key="graded qrels", stacklevel=3)
    return judged, "graded"


def check_lenient(relevance: str | None, values) -> None:
    """``"lenient"`` binarises integer grades (grade >= 1 relevant: the 2021 paper's
    "whatever above not relevant"); on real-valued grades (``values``, not None) it is
    refused, with what to do instead: a threshold is a measure's ``rel=``."""
    if relevance == "lenient" and values is not None:
        raise ArgumentError(
            "relevance='lenient' (--relevance lenient) binarises integer grades at grade >= 1, and these "
            "qrels have real-valued grades; give binary measures the threshold you mean (P(rel=0.5), "
            "nDCG(rel=0.5): grade >= 0.5 relevant), or keep the grades (relevance='graded')"
        )


def relevance_measures(measures: Sequence[Measure], relevance: str | None) -> list[Measure]:
    """The measures as they are computed under ``relevance``: under ``"lenient"`` the
    qrels are binarised (grade >= 1 relevant), so a graded measure is the binary measure
    at rel = 1 and is named so (``nDCG(rel=1)@10``, ``RBP(p=0.8, rel=1)``: the same
    values as on the binarised qrels); otherwise as given. A graded measure with a gain
    map (``gains=``) has no lenient form and is refused."""
    if relevance != "lenient":
        return list(measures)
    high = [str(m) for m in measures if (getattr(m, "rel", None) or 1) > 1]
    if high:
        raise ArgumentError(
            f"relevance='lenient' binarises the qrels (grade >= 1 relevant), so no document "
            f"reaches the level asked by {', '.join(high)}; use relevance='graded' (CLI "
            "--relevance graded) to keep the grades, or drop rel= from the measure"
        )
    out = []
    for m in measures:
        if m.graded and not any(f.name == "rel" for f in dataclasses.fields(m)):  # no binary form to name
            binary = {"gP": "P", "gR": "R"}.get(type(m).NAME)
            if binary:
                raise ArgumentError(
                    f"relevance='lenient' binarises the qrels (grade >= 1 relevant), and {m} on "
                    f"binary grades is {binary}: name {binary} instead, or use relevance='graded' "
                    "(CLI --relevance graded) for the graded measure"
                )
            raise ArgumentError(
                f"relevance='lenient' binarises the qrels (grade >= 1 relevant), so every measure is "
                f"named as the binary measure it becomes (nDCG(rel=1)); {m} has no rel parameter to "
                f"name that: give its class a field 'rel: int | None = None' (binary relevance, "
                f"grade >= rel, as nDCG has), or use relevance='graded' (CLI --relevance graded)"
            )
        if m.graded and getattr(m, "rel", None) is None:
            if getattr(m, "gains", None) is not None:
                raise ArgumentError(
                    f"relevance='lenient' binarises the qrels (grade >= 1 relevant), so the gain map "
                    f"of {m} does not apply; drop gains= or use relevance='graded' (CLI --relevance "
                    "graded)"
                )
            m = dataclasses.replace(m, **{"rel": 1})  # (the base class has no rel field; m's has: checked above)
        out.append(m)
    return out


def plan_rank_maps(
    measures,
    depth: int,
    levels: int,
    approx: float | None = None,
    max_pairs: int | None = None,
    relevance: str | None = None,
    values: tuple | None = None,
    built_only: bool = False,
) -> list[Measure]:
    """The measures at run length ``depth``, each checked to have an exact engine for
    ``levels`` relevance levels, before any rank map is built (so a job fails in a
    second, not after minutes of building the others). With ``approx`` (see
    :func:`transform`), a measure no exact engine serves passes if it has certified
    bounds (RBP, DCG, nDCG); without, the error says that ``approx`` would serve it.
    ``max_pairs``: the split engine's opt-in (:func:`irscale.scales.build`). ``relevance``:
    the measures as that protocol computes and names them (:func:`relevance_measures`).
    ``values``: the grade of each level of real-valued qrels (:attr:`irscale.io.Qrels.values`;
    None for integer grades; ``"lenient"`` refuses real-valued ones, :func:`check_lenient`).
    ``built_only``: only the measures whose rank map will be built (not those ``approx``
    bounds: no map of theirs is built, so none takes memory)."""
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
        check_lenient(relevance, values)
        measures = relevance_measures(parse_measures(measures, default_cutoff=depth), relevance)
    return [
        m for m, bounded in _plan(measures, depth, levels, approx, max_pairs, values) if not (built_only and bounded)
    ]


def _plan(
    measures,
    depth: int,
    levels: int,
    approx: float | None,
    max_pairs: int | None = None,
    values: tuple | None = None,
    found: dict | None = None,
) -> list[tuple[Measure, bool]]:
    """[(measure at depth, whether it is bounded: no exact engine, approx serves it)], in
    the order given (a measure named twice, as P and P@10 at depth 10, twice). Each is
    checked as computed on grades ``values`` (:meth:`Measure.for_grades`) and returned as named.
    ``found``: filled with each measure's (run space, engine chosen; None where only the
    cache or bounds serve it), so that the plan asks neither owner again."""
    from irscale.scales import space_for
    from irscale.scales.budget import MemoryBudgetError
    from irscale.scales.rankmap import choose_engine, in_cache

    found = {} if found is None else found

    approx = _approx(approx)
    ms = []
    for m in parse_measures(measures, default_cutoff=depth):
        if not any(f.name == "cutoff" for f in dataclasses.fields(m)):
            space_for(m, depth)  # its message lists the measures that have a ranked version
        ms.append(at_depth(m, depth))
    verdict: dict[Measure, bool] = {}
    fails = []
    for m in ms:
        if m not in verdict:
            space = space_for(m.for_grades(values), depth, levels - 1)
            found[m] = (space, None)
            try:
                found[m] = (space, choose_engine(space, max_pairs=max_pairs))
                verdict[m] = False
            except MemoryBudgetError:  # the budget's own refusal: never a reason to take bounds instead
                if not in_cache(space):
                    raise
                verdict[m] = False
            except IrscaleError as e:
                try:
                    verdict[m] = False if in_cache(space) else _no_engine(m, space, e, approx, values is not None)
                except NoEngineError as no:  # every measure checked: one refusal names them all
                    fails.append(no)
                    verdict[m] = False
    if fails:
        raise _no_engines(fails)
    return [(m, verdict[m]) for m in ms]


def _approx(approx) -> float | None:
    import numbers

    if approx is None:
        return None
    if isinstance(approx, bool) or not isinstance(approx, numbers.Real) or not 0 < float(approx) < 1:
        raise ArgumentError(
            f"approx must be a width strictly between 0 and 1 of the normalised phi (for "
            f"example 1e-4), or None for exact phi only, not {approx!r}"
        )
    return float(approx)


class NoEngineError(MeasureError):
    """Measures that no exact engine serves at N (and that ``approx`` does not serve). One
    measure: ``m``, ``limit`` how far it is exact (the engine's words), ``bounded`` whether
    certified bounds exist (then ``--approx`` would), ``advice`` the run length to use
    instead, ``c`` its top grade. Several (:func:`_no_engines`): ``fails``, one each."""

    def __init__(
        self, m, N: int, limit: str, bounded: bool, advice: str, c: int = 1, text: str | None = None, fails: tuple = ()
    ):
        self.m, self.N, self.limit, self.bounded, self.advice, self.c = m, N, limit, bounded, advice, c
        self.fails = tuple(fails) or (self,)
        if text is None and bounded:
            text = (
                f"{m}: no exact engine reaches run length N = {N} ({limit}); certified bounds on its normalised "
                f"phi do: transform(..., approx=1e-4) (CLI --approx 1e-4) gives the midpoint and a half-width "
                f"column, or use a smaller N"
            )
        elif text is None:
            text = (
                f"{m}: no exact engine reaches run length N = {N} ({limit}), and {str(m).split('@')[0]} has no "
                f"certified bounds (guide: Long runs)" + (f"; use {advice}" if advice else "")
            )
        super().__init__(text)

    def __reduce__(self):
        return (
            _no_engine_error,
            (
                self.m,
                self.N,
                self.limit,
                self.bounded,
                self.advice,
                self.c,
                str(self),
                self.fails if self.fails != (self,) else (),
            ),
        )


def _no_engine_error(
    m, N: int, limit: str, bounded: bool, advice: str, c: int, text: str, fails: tuple
) -> NoEngineError:
    """A NoEngineError back from pickle (:meth:`NoEngineError.__reduce__`'s arguments)."""
    return NoEngineError(m, N, limit, bounded, advice, c, text=text, fails=fails)


def _no_engines(fails: list) -> IrscaleError:
    """One refusal for every measure no engine serves (:class:`NoEngineError`), in one line of
    at most about three lines' length: the measures without bounds (each with how far it
    is exact), then those that --approx serves."""
    from irscale.scales.rankmap import exact_reach

    if len(fails) == 1:
        return fails[0]
    N = fails[0].N
    parts = []
    hard = [f for f in fails if not f.bounded]
    soft = [f for f in fails if f.bounded]
    if len(hard) == 1:
        parts.append(str(hard[0]))
    elif hard:
        reach = "; ".join(
            f"{f.m} exact up to N = {exact_reach(f.m, f.c, N)}" + (f" on {f.c + 1} levels" if f.c > 1 else "")
            for f in hard
        )
        parts.append(
            f"{', '.join(str(f.m) for f in hard)}: no exact engine at N = {N} and no certified bounds "
            f"({reach}); use a smaller run length -N (guide: Long runs)"
        )
    if soft:
        parts.append(
            f"{', '.join(str(f.m) for f in soft)}: no exact engine reaches N = {N}; certified bounds do "
            f"(CLI --approx 1e-4, approx=1e-4), or use a smaller N"
        )
    return NoEngineError(None, N, "", not hard, "", text=". Also ".join(parts), fails=tuple(fails))


def _no_engine(m: Measure, space, engine_error: IrscaleError, approx: float | None, real: bool = False) -> bool:
    """No exact engine serves ``space``: True where certified bounds will (and ``approx``
    asks for them); else :class:`NoEngineError`: the engine's limit, and either how to ask for
    bounds or why there are none. ``real``: the grades are real-valued (``space`` serves ``m``
    as computed on their levels): the limit names ``m`` as written, and its advice on fewer
    levels is for real grades (``--max-grade`` caps integer grades only)."""
    from irscale.scales.rankmap import exact_reach

    limit = _short(str(engine_error))
    if real:
        limit = re.sub(r"\s*\([^()]*max.grade[^()]*\)", "", limit.replace(str(space.measure), str(m)))
        limit += (
            f"; the {space.c + 1} levels are the distinct real-valued grades: fewer levels means fewer distinct "
            "grades (round them, for example to steps of 0.25), or binary relevance (a threshold such as rel=0.5)"
        )
    if space.certified_bounds:
        if approx is not None:
            return True
        raise NoEngineError(m, space.N, limit, True, "a smaller N", space.c)
    advice = ""  # the engine's limit says what to type
    if "no engine for this case is built yet" in limit:  # beyond 64-bit keys: the reach in N says more
        top = exact_reach(space.measure, space.c, space.N)
        longest = exact_reach(space.measure, space.c, space.N, max_pairs=2**62)
        limit = f"exact up to N = {top}" + (f", {longest} with --max-pairs" if longest > top else "")
        advice = f"-N {top} or less (the 2021 paper stopped at 30), or RBP, DCG or nDCG with --approx"
    raise NoEngineError(m, space.N, limit, False, advice, space.c)


def _short(text: str) -> str:
    """An engine's refusal with its huge integers written as powers of ten."""
    return re.sub(
        r"\d{1,3}(?:,\d{3}){5,}|\d{16,}", lambda x: count_text(int(x.group().replace(",", ""))), text.rstrip(".")
    )


def _measures_to_transform(data, measures, depth: int, relevance: str | None) -> list[Measure]:
    """The measures transform was asked for (by default a ScoreTable's own), parsed at ``depth``
    and named as they will be computed under ``relevance``."""
    if measures is None and isinstance(data, ScoreTable):
        measures = [m for m in data.measures]
    if measures is None:
        raise ArgumentError("name the measures to transform, for example ['AP', 'nDCG']")
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
    return relevance_measures(parse_measures(measures, default_cutoff=depth), relevance)  # named as computed


def _check_bounded(bounded: list, tie_list: list[str], depth: int, normalize: bool) -> None:
    """Refuse ties over all runs for bounded measures whose runs tie; warn (at transform's
    caller) that bounded columns are normalised when ``normalize`` is off. ``bounded``: the
    :class:`MeasurePlan` of each bounded measure."""
    from irscale.scales.bounds import runs_distinct

    bounded_ms = [p.measure for p in bounded]
    tied = [p.measure for p in bounded if not runs_distinct(p.space)]
    if tie_list != ["unq"] and tied:
        raise ArgumentError(
            f"{', '.join(map(str, tied))}: ties={tie_list} rank over all runs, but at N = {depth} "
            f"only bounds on phi over distinct values exist, and its runs tie (several runs share "
            f"a value); use ties='unq' (compare: mid=False, CLI --no-mid)"
        )
    if bounded_ms and not normalize:  # approx implies the normalised form for the columns it bounds
        tail = (
            f": normalised (phi / number of values), as --approx bounds {'it' if len(bounded_ms) == 1 else 'them'}"
            "; --normalize does the rest too"
        )
        warn(f"ranked {_fit([str(m) for m in bounded_ms], LINE - 34 - len(tail))}{tail}", stacklevel=3)


@dataclass(frozen=True)
class MeasurePlan:
    """One measure of a transform, decided before any run is read (:func:`plan_transform`).

    ``measure``: as named (at N; under ``relevance="lenient"`` the binary measure it
    becomes); ``computed``: as computed (on real-valued grades, on their level codes:
    :meth:`~irscale.measures.Measure.for_grades`); ``space``: its run space at N on the
    plan's levels; ``engine``: the exact engine that builds its rank map
    (:func:`irscale.scales.rankmap.pick_engine`), or ``"bounds"`` where certified bounds
    serve it (``approx``); ``statement``: the scale owner's verdict on it as named
    (:func:`irscale.table.scale_as_named`); :attr:`memory`: the bytes its build takes."""

    measure: Measure
    computed: Measure
    space: Space
    engine: str
    statement: Statement
    max_pairs: int | None = None

    @property
    def bounded(self) -> bool:
        return self.engine == "bounds"

    @property
    def name(self) -> str:
        return str(self.measure)

    @cached_property
    def memory(self) -> int | None:
        """Bytes the engine's estimate says building the rank map takes
        (:func:`irscale.scales.rankmap.memory_estimate`); None where nothing is built (a
        closed form, a map the disk cache holds, certified bounds) or the engine gives no
        estimate. Asked for (by the CLI's memory line) only, never for a plain transform."""
        from irscale.scales.rankmap import memory_estimate, on_disk

        if self.bounded or on_disk(self.space, self.engine):
            return None
        try:
            return memory_estimate(self.space, self.engine, max_pairs=self.max_pairs)
        except (IrscaleError, MemoryError):  # the engine's own refusal comes with the build
            return None


@dataclass(frozen=True)
class TransformPlan:
    """What :func:`irscale.experiment.transform` will compute, decided once
    (:func:`plan_transform`): run length ``depth``, the ``levels`` (and real-valued grade
    ``values``, None for integer grades) the rank maps are for, as the relevance setting
    leaves them (``"lenient"``: 2 levels, integer grades), ``relevance`` as asked (None:
    graded, with a note on graded qrels), ``approx`` and ``max_pairs``, and a
    :class:`MeasurePlan` per measure named (in order; a measure named twice, as P and P@10
    at N = 10, twice). transform, :class:`irscale.study.StudyPlan` and the CLI read it; none
    derives its facts again."""

    depth: int
    levels: int
    values: tuple | None
    relevance: str | None
    approx: float | None
    max_pairs: int | None
    measures: tuple[MeasurePlan, ...]

    @property
    def names(self) -> list[str]:
        return [str(p.measure) for p in self.measures]

    def built(self) -> list[Measure]:
        """The measures whose rank maps will be built (not those certified bounds serve), each once."""
        return list(dict.fromkeys(p.measure for p in self.measures if not p.bounded))

    def check_data(self, levels: int, values) -> None:
        """The judged runs (under the plan's relevance setting) have the levels and grades
        the plan was made for; else an error saying what to plan instead."""
        if (levels, values) != (self.levels, self.values):
            have = f"{levels} levels" + ("" if values is None else f" (real-valued grades {list(values)})")
            made = f"{self.levels} levels" + (
                "" if self.values is None else f" (real-valued grades {list(self.values)})"
            )
            raise ArgumentError(
                f"this transform plan was made for {made}, and the judged runs have {have}; make the plan "
                f"from these qrels: plan_transform(measures, {self.depth}, levels={levels}, values=...)"
            )


def plan_transform(
    measures,
    depth: int,
    levels: int = 2,
    *,
    approx: float | None = None,
    max_pairs: int | None = None,
    relevance: str | None = None,
    values: tuple | None = None,
) -> TransformPlan:
    """The plan of a transform at run length ``depth`` = N on qrels with ``levels``
    relevance levels (whose grades are ``values`` where they are real-valued:
    :attr:`irscale.io.Qrels.values`): each measure as named under ``relevance`` and as
    computed, its run space, its engine (or certified bounds, with ``approx``), its scale
    verdict; every refusal (no engine reaches N, a relevance setting the measures or
    grades cannot take) raised here, for every measure at once, before any rank map is
    built or any run read. ``max_pairs``: the split engine's opt-in (:func:`irscale.scales.build`).

    >>> p = plan_transform(["AP", "P", "nDCG"], 30, levels=3)
    >>> [(str(m.measure), m.engine) for m in p.measures]
    [('AP@30', 'split'), ('P@30', 'closed'), ('nDCG@30', 'count')]
    """
    from irscale.scales.rankmap import pick_engine

    depth = integer("depth", depth, minimum=1)
    levels = integer("levels", levels, minimum=2)
    if relevance is not None:
        check_choice("relevance", relevance, RELEVANCE)
    check_lenient(relevance, values)
    if relevance == "lenient":  # the qrels binarised: every measure binary, integer grades
        levels, values = 2, None
    ms = relevance_measures(parse_measures(measures, default_cutoff=depth), relevance)
    approx = _approx(approx)
    plans: list[MeasurePlan] = []
    found: dict = {}
    for m, bounded in _plan(ms, depth, levels, approx, max_pairs, values, found):
        computed = m.for_grades(values)
        space, engine = found[m]  # (engine None: only the cache serves it, past a new build's limits)
        engine = "bounds" if bounded else engine or pick_engine(space)
        said = scale_as_named(m, values, depth, levels)
        plans.append(MeasurePlan(m, computed, space, engine, said, max_pairs))
    return TransformPlan(depth, levels, values, relevance, approx, max_pairs, tuple(plans))
