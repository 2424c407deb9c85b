"""The original-vs-interval study of Ferrante, Ferro & Fuhr (2021), Section 7, on any
campaign: correlations (Tables 2-4) and significance-test changes (Tables 5-6)."""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from irscale import stats as st
from irscale._version import __version__
from irscale.data import JudgedRuns, grade_values_record
from irscale.errors import ArgumentError, check_choice, warn
from irscale.experiment import PAPER_MEASURES, judged_runs, transform
from irscale.measures import Measure, at_depth, parse_measure, parse_measures
from irscale.plan import TransformPlan, apply_relevance, plan_transform
from irscale.scales import permissible as _permissible
from irscale.table import ScoreTable
from irscale.validate import flag, integer, level, wrong_type

__all__ = [
    "compare",
    "CURVE_POINTS",
    "label",
    "meaningful_test",
    "plan_study",
    "qrels_provenance",
    "read_study",
    "Study",
    "StudyPlan",
    "WITHIN_TOPIC",
]


def __getattr__(name: str):
    """Deprecated names: LABELS and RB_DEPENDENT are declared by each measure now
    (``Measure.label``, ``Measure.needs_recall_base``)."""
    if name in ("LABELS", "RB_DEPENDENT"):
        import warnings

        warnings.warn(
            f"irscale.study.{name} is deprecated: use Measure.label / Measure.needs_recall_base",
            DeprecationWarning,
            stacklevel=2,
        )
        paper = [parse_measure(m) for m in PAPER_MEASURES]
        if name == "LABELS":
            return {str(m): m.label for m in paper}
        return [str(m) for m in paper if m.needs_recall_base]
    raise AttributeError(f"module 'irscale.study' has no attribute {name!r}")


def label(measure: str) -> str:
    """The measure's short column label (the paper's ``RBP_p03``, ``DCG_b10``)."""
    return parse_measure(measure).label


@dataclass
class Study:
    """Results of :func:`compare` at one run length N. Every frame names each measure as
    it was computed (``measures``: cutoff N included; under ``relevance="lenient"`` a graded
    measure is the binary measure it then is, e.g. ``nDCG(rel=1)@10``)."""

    N: int
    measures: tuple[str, ...]
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    table2: pd.DataFrame  # measure x {tau_unq, tau_ap_unq, tau_mid, topic_tau_min, topic_tau_max}
    table4: pd.DataFrame  # measure pairs: tau, tau_ranked, delta_pct, tau_ap, tau_ap_ranked
    changes: pd.DataFrame  # (measure, test): sig, s2ns, ns2s, delta_pct, sig_ranked
    provenance: dict = field(default_factory=dict)
    means: pd.DataFrame | None = None  # (measure, scale, system): mean, ci_low, ci_high
    pairs: pd.DataFrame | None = None  # (measure, scale, test, system_1, system_2): diff, CI, effect sizes, p
    measure_free: pd.DataFrame | None = None  # (system_1, system_2): better, worse, equal, incomparable, sign_p
    scores: pd.DataFrame | None = None  # (measure, system, topic): value, ranked[, ranked_mid][, halfwidth]
    power: pd.DataFrame | None = None  # (measure, test): discriminative power, original and ranked
    asl: pd.DataFrame | None = None  # (measure, test, scale, percent): the ASL curves, sampled

    def write(self, out: str | Path, figures=None, command: str | None = None) -> list[Path]:
        """The whole report in directory ``out``: ``report_N<N>.html`` (one self-contained
        file), Markdown, LaTeX, CSV, JSON, the per-topic scores and the provenance as YAML;
        returns every path written (:func:`irscale.report.files.write_report`).
        ``figures``: ``[(title, svg_text, caption)]`` embedded in the HTML."""
        from irscale.report.files import write_report

        return write_report(self, out, figures=figures, command=command)

    def table(
        self,
        measures=None,
        systems=None,
        top: int | None = None,
        by: str | None = None,
        scale: str = "both",
        test: str | None = None,
        correction: str | None = None,
        baseline: str | None = None,
        decimals: int = 3,
    ):
        """The compact table a paper has room for (:func:`irscale.report.paper.paper_table`):
        the chosen measures' means by system, original and ranked side by side, the best in
        bold, marks from one test and correction (against ``baseline``, or ranx-style letters),
        and where a conclusion is not meaningful. ``.to_latex()``, ``.to_markdown()``,
        ``.to_html()`` (a notebook shows it), ``.to_csv()``."""
        from irscale.report.paper import paper_table

        return paper_table(self, measures, systems, top, by, scale, test, correction, baseline, decimals)

    def markdown(self, links: dict | None = None) -> str:
        """The study as a Markdown report (:func:`irscale.report.study.study_markdown`)."""
        from irscale.report.study import study_markdown

        return study_markdown(self, links)

    def _repr_html_(self) -> str:
        """A compact display for notebooks: N, the measures, systems and topics, the head
        of Table 2 (each measure against its ranked version: Kendall's tau overall, tau_AP,
        the range of the topic-by-topic tau) and where the full report goes."""
        from irscale._display import MAX_ROWS, caption, card, names, table

        prov = self.provenance
        facts = [
            ("run length N", f"{self.N:,}"),
            (f"measures ({len(self.measures):,})", names(self.measures)),
            (f"systems ({len(self.systems):,})", names(self.systems)),
            ("topics", f"{len(self.topics):,}"),
        ]
        if prov.get("relevance"):
            facts.append(("relevance", names([prov["relevance"]])))
        if prov.get("judged_only"):
            facts.append(("unjudged documents", "removed: condensed runs (judged only, trec_eval -J)"))
        if prov.get("tests"):
            facts.append(("tests", names(list(prov["tests"]))))
        cols = [c for c in ("tau_unq", "tau_ap_unq", "tau_mid", "topic_tau_min", "topic_tau_max") if c in self.table2]
        head = self.table2.head(MAX_ROWS)
        rows = [[r["measure"], *(r[c] for c in cols)] for _, r in head.iterrows()] if "measure" in head else []
        body = caption("Table 2: each measure against its ranked version (Kendall's tau)") + table(
            cols, rows, index="measure", total=len(self.table2)
        )
        notes = [
            "the full report: .write(out) writes one self-contained HTML file (report_N"
            f"{self.N}.html), Markdown, LaTeX, CSV, JSON and the provenance; .markdown() returns the Markdown; "
            "the tables: .table2, .table4, .changes, .means, .pairs, .measure_free, .scores"
        ]
        return card(f"Study at N = {self.N:,}", facts, body, notes)


# "is this test's conclusion meaningful" has one owner: irscale.scales.permissible
meaningful_test = _permissible.meaningful_test
WITHIN_TOPIC = tuple(t for t, need in _permissible.TEST_NEEDS.items() if need == "within-topic order")


# -- the plan: what to compute, validated once, before any file is read ------------------------------


@dataclass(frozen=True)
class StudyPlan:
    """What :func:`compare` computes, validated (:func:`plan_study`). ``measures``: each
    measure at run length ``depth`` as it will be computed (under ``relevance="lenient"``
    graded measures binary at rel = 1)."""

    measures: tuple[Measure, ...]
    depth: int
    tests: tuple[str, ...]
    alpha: float
    mid: bool
    relevance: str | None
    correction: str
    across_measures: bool
    baselines: tuple[str, ...] | None
    effects: bool
    measure_free: bool
    n_resamples: int
    seed: int
    approx: float | None
    max_pairs: int | None
    # what the transform will do (engines, spaces, scale verdicts), once the qrels' levels are known
    transform: TransformPlan | None = None

    @property
    def names(self) -> list[str]:
        return [str(m) for m in self.measures]

    def bind(self, levels: int, values: tuple | None = None) -> StudyPlan:
        """The plan with its :class:`~irscale.plan.TransformPlan` for qrels of ``levels``
        relevance levels (whose grades are ``values`` where they are real-valued): every
        measure's engine (or certified bounds), space and scale verdict, and every refusal
        (no engine reaches N; lenient on real-valued grades), decided before any rank map is
        built or any run read. :func:`compare` reads them from it; nothing below derives
        them again."""
        tp = plan_transform(
            self.measures,
            self.depth,
            levels,
            approx=self.approx,
            max_pairs=self.max_pairs,
            relevance=self.relevance,
            values=values,
        )
        return dataclasses.replace(self, transform=tp)

    def bound_to(self, levels: int, values: tuple | None) -> bool:
        """Whether the plan is bound (:meth:`bind`) to qrels of these levels and grades."""
        if self.transform is None:
            return False
        lenient = self.relevance == "lenient"  # (the plan's levels are the binarised qrels')
        return (self.transform.levels, self.transform.values) == ((2, None) if lenient else (levels, values))

    @property
    def ties(self) -> tuple[str, ...]:
        return ("unq", "mid") if self.mid else ("unq",)

    def check_levels(self, levels: int, values: tuple | None = None) -> list:
        """The measures whose rank maps will be built on ``levels`` relevance levels (not
        those ``approx`` bounds), every refusal raised first (:meth:`bind`, which the CLI
        and :func:`compare` call: this is its list of maps, for one release)."""
        tp = self.bind(levels, values).transform
        assert tp is not None  # (bind sets it)
        return tp.built()

    def check_systems(self, systems: Sequence[str]) -> None:

        if len(systems) < 2:
            raise ArgumentError(
                f"compare needs at least two systems to rank and test, got {len(systems)} ({', '.join(systems)})"
            )
        unknown = [b for b in self.baselines or () if b not in systems]
        if unknown:
            raise ArgumentError(
                f"baseline(s) {', '.join(map(repr, unknown))} not among the systems; "
                f"known: {', '.join(systems[:20])}" + (" ..." if len(systems) > 20 else "")
            )


def plan_study(
    measures: Sequence[str] = PAPER_MEASURES,
    depth: int = 30,
    tests: Sequence[str] = st.TESTS,
    alpha: float = 0.05,
    *,
    mid: bool = True,
    relevance: str | None = None,
    correction: str = "none",
    across_measures: bool = False,
    baselines: Sequence[str] | str | None = None,
    effects: bool = True,
    measure_free: bool = True,
    n_resamples: int = 1000,
    seed: int = 0,
    approx: float | None = None,
    max_pairs: int | None = None,
    progress=None,
) -> StudyPlan:
    """Validate :func:`compare`'s options (see there) without reading any data: the
    measures at N under the relevance protocol, the tests, the correction, the bootstrap,
    the baselines' form. The CLI calls it before reading the runs."""
    from irscale.effects import CORRECTIONS
    from irscale.plan import RELEVANCE, _approx

    depth = integer("depth", depth, minimum=1)
    if isinstance(tests, str):
        tests = [tests]
    if tests is None or not hasattr(tests, "__iter__"):
        raise ArgumentError(
            f"tests must be a test name or a list of them (an empty list for correlations only), "
            f"not {tests!r}; known: {', '.join(st.ALL_TESTS + tuple(st.TEST_GROUPS))}"
        )
    if progress is not None and not callable(progress):
        raise wrong_type("progress", progress, "a function progress(what, done, total) or None")
    if relevance is not None:
        relevance = check_choice("relevance", relevance, RELEVANCE)
    if baselines is not None:
        baselines = [baselines] if isinstance(baselines, str) else list(baselines)
        if not baselines or not all(isinstance(b, str) for b in baselines):
            raise ArgumentError(f"baselines must name at least one system, not {baselines!r}")
    ms = _study_measures(measures, depth, relevance, measure_free)
    if baselines is not None and not list(tests):
        raise ArgumentError(
            "comparisons with baselines need at least one test (tests=, CLI -t): each row is a "
            "test's decision on a pair"
        )
    twice = sorted({str(m) for m in ms if ms.count(m) > 1})
    if twice:
        warn(
            f"{', '.join(twice)} named more than once (at N = {depth} the names are one measure): studied once",
            stacklevel=3,
        )
    return StudyPlan(
        tuple(dict.fromkeys(ms)),
        depth,
        st.expand_tests(tests),
        level("alpha", alpha),
        flag("mid", mid),
        relevance,
        check_choice("correction", correction, CORRECTIONS),
        flag("across_measures", across_measures),
        None if baselines is None else tuple(dict.fromkeys(baselines)),
        flag("effects", effects),
        flag("measure_free", measure_free),
        integer("n_resamples", n_resamples, minimum=100),
        integer("seed", seed, minimum=0),
        _approx(approx),
        integer("max_pairs", max_pairs, minimum=1, none=True),
    )


def _study_measures(measures, depth: int, relevance: str | None, measure_free) -> list:
    """The study's measures cut at N and named under the relevance protocol; a rel below 1
    refused where the measure-free view is asked for."""
    from irscale.plan import relevance_measures

    ms = [at_depth(m, depth) for m in parse_measures(measures, default_cutoff=depth)]
    ms = relevance_measures(ms, relevance)
    low = [str(m) for m in ms if isinstance(rel := getattr(m, "rel", None), int) and rel < 1]
    if low and flag("measure_free", measure_free):
        raise ArgumentError(
            f"{', '.join(low)}: rel below 1 counts judged non-relevant documents as relevant, and the "
            "measure-free view (the weak order on runs binarised at rel) needs rel >= 1; pass "
            "measure_free=False (CLI --no-measure-free) or rel=1 or more"
        )
    return ms


# -- the per-topic scores a study rests on, addressed by measure ---------------------------------------


@dataclass
class _Scores:
    """Topics x systems matrices per measure (systems, topics arrays as transform gives
    them): the original, the ranked (unq; ``mid``), the ranked as the statistics see it
    (``stat``: scaled by a power of two under approx), the half-widths (zeros where exact)
    and the exact-value ids of bounded columns."""

    orig: dict
    ranked: dict
    mid: dict
    stat: dict
    mid_stat: dict
    half: dict
    half_stat: dict
    ids: dict
    ranked_names: dict  # measure -> str of its ranked (unq) column

    def halfwidth_max(self, m: str) -> float:
        return float(np.nanmax(self.half[m])) if self.half[m].size else 0.0


def _scores(table: ScoreTable, plan: StudyPlan) -> _Scores:
    """Transform's columns by identity (never by position): for each measure its own
    column, its ranked columns per tie strategy, its half-width column."""
    from irscale.effects import units
    from irscale.table import HalfWidth, Ranked

    def key(c) -> tuple[str, str, str]:  # (kind, the measure it is of, ties)
        if isinstance(c, Ranked):
            return "Ranked", str(c.measure), c.ties
        if isinstance(c, HalfWidth):
            return "HalfWidth", str(c.ranked.measure), ""
        return "Measure", str(c), ""

    out = _Scores({}, {}, {}, {}, {}, {}, {}, {}, {})
    cols = {key(c): k for k, c in enumerate(table.measures)}
    for m in plan.names:
        out.orig[m] = table.values[table.index(m)]
        k = cols[("Ranked", m, "unq")]
        out.ranked[m], out.ranked_names[m] = table.values[k], str(table.measures[k])
        if plan.mid:
            out.mid[m] = table.values[cols[("Ranked", m, "mid")]]
        h = cols.get(("HalfWidth", m, ""))
        out.half[m] = table.values[h] if h is not None else np.zeros_like(out.ranked[m])
        if h is not None:
            out.ids[m] = table.exact_ids[out.ranked_names[m]]
        # correlations round means to 8 decimals and tests square differences: with approx the
        # ranked columns are normalised phi, as small as 1e-300 at N = 1000, so both see each
        # column scaled by a power of two (exact) to a largest value in (1/2, 1]; neither
        # changes under a positive scaling otherwise
        unit = 1.0
        if plan.approx is not None:
            unit = float(units(np.nanmax(out.ranked[m]) if out.ranked[m].size else 0.0)[0])
        out.stat[m], out.half_stat[m] = out.ranked[m] / unit, out.half[m] / unit
        if plan.mid:
            out.mid_stat[m] = out.mid[m] / unit
    return out


# -- compare: the named steps ---------------------------------------------------------------------


def compare(
    data: ScoreTable | JudgedRuns,
    measures: Sequence[str] = PAPER_MEASURES,
    depth: int = 30,
    tests: Sequence[str] = st.TESTS,
    alpha: float = 0.05,
    *,
    mid: bool = True,
    relevance: str | None = None,
    scheduler=None,
    progress: Callable[[str, int, int], None] | None = None,
    correction: str = "none",
    across_measures: bool = False,
    baselines: Sequence[str] | str | None = None,
    effects: bool = True,
    measure_free: bool = True,
    n_resamples: int = 1000,
    seed: int = 0,
    approx: float | None = None,
    max_pairs: int | None = None,
    plan: StudyPlan | None = None,
) -> Study:
    """Run the paper's Section 7 study at run length ``depth`` = N.

    For each measure M (cut at N) and its ranked version M_R (``unq``; also ``mid`` for
    Table 3): overall and topic-by-topic Kendall's tau between M and M_R (Table 2/3),
    tau between every pair of measures and between their ranked versions (Table 4),
    and for each significance test the pairs of systems significant with M (Sig), those
    that stop (S2NS) or start (NS2S) being significant with M_R, and
    Delta% = (S2NS + NS2S) / Sig (Tables 5/6). ``relevance``: ``"graded"`` or
    ``"lenient"`` (binarised qrels, the paper's protocol for graded collections: each
    graded measure is then the binary measure ``rel=1`` and is named so, e.g.
    ``nDCG(rel=1)@10``), see :func:`irscale.plan.apply_relevance`; recorded in the
    provenance. Whether each test's conclusion is meaningful on the original and on the
    ranked scale comes from :mod:`irscale.scales.permissible` (``scale_of``,
    ``meaningful_test``), the one owner of that question.

    ``tests``: any of :data:`irscale.stats.ALL_TESTS` (or ``"paper"``, the eight, and
    ``"randomised"``, the three); the default is the paper's eight
    (:data:`irscale.stats.TESTS`). The randomised tests (``permutation``, ``rtukey``,
    ``bootstrap``: :func:`irscale.stats.permutation_test` and its neighbours) run with
    their default resamples (100,000 sign vectors; 10,000 permutations; 10,000 resamples)
    and ``seed``, the same seed on both scales; they compare means, so their conclusions
    are meaningful on an interval scale only (the ranked one), and ``rtukey`` counts as a
    Tukey-type test below.

    Beyond the paper (each part a frame of the returned :class:`Study`):

    * ``correction`` (``"holm"``, ``"bonferroni"``, ``"bh"``; default ``"none"``, as the
      paper): Tables 5/6 gain ``sig_adjusted`` and ``sig_ranked_adjusted``, the pairs still
      significant after correcting each test's p-values over all system pairs (and over
      all measures too with ``across_measures=True``); Tukey-type tests (ANOVA,
      Kruskal-Wallis, Friedman, randomised Tukey HSD) are adjusted over all pairs already
      and keep their count;
    * ``effects`` (default on): ``study.means``, each system's mean on the original and the
      ranked scale with a BCa bootstrap interval over topics (``n_resamples`` resamples,
      ``seed``;
      :func:`irscale.effects.system_means` on that column alone);
    * ``baselines`` (system names): ``study.pairs``, every other system against each
      baseline for every measure, scale and test: mean difference (system minus baseline)
      with its BCa interval, Cohen's d_z, the rank-biserial correlation, raw and
      ``correction``-adjusted p-values (over all pairs of that table), meaningfulness,
      and the measure-free share below (:func:`irscale.effects.pairwise`);
    * ``measure_free`` (default on): ``study.measure_free``, every pair of systems compared
      topic by topic in the weak top-heaviness order on the runs cut at N (better, worse,
      equal, incomparable; a sign test over the comparable topics:
      :mod:`irscale.measurefree`), and Tables 5/6 gain ``flagged_incomparable`` and
      ``flagged_incomparable_ranked``: significant pairs whose difference rests mostly
      (more than half of ``sum |d_t|``) on topics where the two runs are incomparable, which
      no measure-free argument supports;
    * ``study.scores``: the per-topic scores every table rests on (``value``, ``ranked``,
      ``ranked_mid``, ``halfwidth``), written by :meth:`Study.write`;
    * ``study.power`` and ``study.asl``: discriminative power (Sakai, SIGIR 2006) of each
      measure and its ranked version under each test with a p-value per pair (the
      pairwise and randomised tests): the share of pairs significant at ``alpha`` and the
      median p-value on each scale, and the ASL curves (the sorted p-values at each percent
      of the pairs); the report draws them.

    Runs of any length (``approx=TOL``, see :func:`irscale.experiment.transform`): measures
    no exact engine reaches at N (RBP, DCG, nDCG beyond N = 30-40) are ranked by the
    midpoints of certified bounds on their normalised phi, no wider than TOL; every ranked
    column is then normalised (phi / the number of distinct values: the correlations and
    tests are unchanged by that scaling, the means are on (0, 1]). Every table gains
    ``halfwidth_max``, the largest half-width of the ranked scores it rests on, Tables 5/6
    gain ``could_flip_ranked``, the pairs whose ranked-scale decision could differ for
    some scores within the bounds (:func:`irscale.stats.could_flip`: exact for the sign
    test, conservative for the others; the uncorrected decisions, as ``sig_ranked``; a pair
    with a topic left out counts as could flip), ``study.means`` a ``halfwidth`` (the most
    a system's mean on the ranked scale can be off) and ``study.pairs`` ``halfwidth`` (the
    same for a difference of means) and ``could_flip``
    (missing where a correction adjusts the p-values: not bounded). ``max_pairs``: the
    split engine's opt-in, as :func:`irscale.experiment.transform`. ``plan``: a
    :class:`StudyPlan` from :func:`plan_study` (bound to the qrels' levels or not:
    :meth:`StudyPlan.bind`); it holds every option but ``scheduler`` and ``progress``, so give
    the plan or the keywords: a keyword given beside it with another value is refused.
    """
    options: dict[str, Any] = dict(  # every option a StudyPlan holds: planned here, or checked against the plan given
        measures=measures,
        depth=depth,
        tests=tests,
        alpha=alpha,
        mid=mid,
        relevance=relevance,
        correction=correction,
        across_measures=across_measures,
        baselines=baselines,
        effects=effects,
        measure_free=measure_free,
        n_resamples=n_resamples,
        seed=seed,
        approx=approx,
        max_pairs=max_pairs,
    )
    if plan is None:
        plan = plan_study(**options, progress=progress)
    else:
        _check_given_plan(plan, progress)
        _refuse_beside_plan(plan, **options)
    return _run_study(data, plan, scheduler, progress)


def _refuse_beside_plan(plan: StudyPlan, **given) -> None:
    """compare takes a plan or keywords, never both: a keyword given beside a plan with a
    value other than its default and other than the plan's own is refused (the plan's would
    silently win). (A keyword given at its default value cannot be told from one not given.)"""
    import inspect

    defaults = {k: v.default for k, v in inspect.signature(compare).parameters.items()}
    own = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)} | {"measures": plan.names}
    clash = []
    for k, v in given.items():
        if v is defaults[k] or (not isinstance(v, (list, tuple)) and v == defaults[k]):
            continue
        mine = own[k]
        if k == "measures":  # (as the plan names them: at N, under its relevance setting, each once)
            v = list(dict.fromkeys(map(str, _study_measures(v, plan.depth, plan.relevance, False))))
        elif k == "tests":
            v = list(st.expand_tests([v] if isinstance(v, str) else v))
        elif k == "baselines" and v is not None:
            v = tuple([v] if isinstance(v, str) else v)
        if (list(v) != list(mine)) if isinstance(v, (list, tuple)) and isinstance(mine, (list, tuple)) else v != mine:
            clash.append(f"{k}={v!r} (the plan's {k}={mine!r})")
    if clash:
        raise ArgumentError(
            f"compare got a plan and {', '.join(clash)}: the plan fixes every option but scheduler and "
            "progress; give the plan or the keywords, not both (plan_study(...) takes the keywords)"
        )


def _check_given_plan(plan, progress) -> None:
    """A plan handed to :func:`compare` is a :class:`StudyPlan`, and progress a function."""
    if not isinstance(plan, StudyPlan):
        raise wrong_type("plan", plan, "a StudyPlan from irscale.study.plan_study(...) or None")
    if progress is not None and not callable(progress):
        raise wrong_type("progress", progress, "a function progress(what, done, total) or None")


def _run_study(data, plan: StudyPlan, scheduler, progress) -> Study:
    """The study's named steps, in order, on a validated plan."""
    judged = judged_runs(data)
    plan.check_systems(judged.systems)
    judged, relevance = apply_relevance(judged, plan.measures, plan.relevance)  # (its note before any refusal)
    levels, values = max(judged.topics.max_grade, 1) + 1, judged.topics.values  # (values: real-valued grades)
    if not plan.bound_to(levels, values):  # (the CLI binds its plan before reading the runs)
        plan = plan.bind(levels, values)  # every refusal, before any build
    assert plan.transform is not None  # (bind sets it)
    tp = dataclasses.replace(plan.transform, relevance=relevance)  # the setting resolved: said once, above
    if "bootstrap" in plan.tests and len(judged.topics.names) < 2:
        raise ArgumentError(
            f"the bootstrap test studentizes each pair's mean difference over topics: it needs at least 2 "
            f"topics, and these runs have {len(judged.topics.names)}; leave -t bootstrap out"
        )
    t0 = time.perf_counter()
    tick = (lambda what, i, n: progress(what, i, n)) if progress else (lambda *a: None)
    table = _transform(judged, tp, plan, scheduler, tick)
    scores = _scores(table, plan)
    scale = {p.name: p.statement for p in tp.measures}  # the one owner's verdicts, from the plan
    rb = {str(m): m.needs_recall_base for m in plan.measures}
    _warn_interval_tests(table, plan)
    table2 = _table2(scores, plan, rb, tick)
    table4 = _table4(scores, plan, tick)
    changes, results, flips = _tables5_6(scores, plan, scale, rb, tick)
    if plan.correction != "none":
        _corrected_counts(changes, results, plan.names, plan.tests, plan.correction, plan.across_measures, plan.alpha)
    power, asl = _power(results, plan)
    codes = mf_table = None
    if plan.measure_free:
        mf_table, codes = _measure_free(judged, scores, plan, results, changes, tick)
    means, pairs = _effects(judged.systems, scores, plan, scale, rb, codes, results, flips, tick)
    prov = _provenance(data, table, judged, plan, relevance, levels, scale, means is not None or pairs is not None)
    prov["seconds"] = time.perf_counter() - t0
    return Study(
        plan.depth,
        tuple(plan.names),
        judged.systems,
        judged.topics.names,
        table2,
        table4,
        changes,
        prov,
        means=means,
        pairs=pairs,
        measure_free=mf_table,
        scores=_scores_frame(scores, plan, judged.systems, judged.topics.names),
        power=power,
        asl=asl,
    )


CURVE_POINTS = 101  # the ASL curve at 0, 1, ..., 100 percent of the pairs


def _power(results: dict, plan: StudyPlan) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Discriminative power (Sakai, SIGIR 2006) of each measure and its ranked version under
    each test with a p-value per pair (the pairwise and randomised tests; the paper's
    Tukey-type tests decide by the studentized range, whose p-values cost 10-40 ms a pair):
    the pairs with a p-value, the share significant at alpha and the median achieved
    significance level on each scale (``power``), and the ASL curve, the sorted p-values
    sampled at k percent of the pairs, k = 0..100: the p-value at position
    floor(k (n - 1) / 100) of the n sorted ones (``asl``)."""
    tests = [t for t in plan.tests if t in st.PAIRWISE + st.RANDOMISED]
    if not tests:
        return None, None
    rows, curves = [], []
    for m in plan.names:
        for test in tests:
            row: dict = {"measure": m, "test": st.test_name(test)}
            for res, suffix, scale in zip(results[m, test], ("", "_ranked"), ("original", "ranked")):
                p = np.asarray(res.pvalue, dtype=np.float64)
                asl = np.sort(p[~np.isnan(p)])
                n = len(asl)
                row["pairs"] = n  # the same on both scales: a pair has a p-value where it has every score
                row["significant" + suffix] = int((asl < plan.alpha).sum())
                row["share" + suffix] = float((asl < plan.alpha).mean()) if n else np.nan
                row["asl_median" + suffix] = float(np.median(asl)) if n else np.nan
                k = np.arange(CURVE_POINTS)
                at = asl[k * (n - 1) // (CURVE_POINTS - 1)] if n else np.full(CURVE_POINTS, np.nan)
                curves.append(
                    pd.DataFrame({"measure": m, "test": row["test"], "scale": scale, "percent": k, "asl": at})
                )
            rows.append(row)
    power = pd.DataFrame(rows)[
        [
            "measure",
            "test",
            "pairs",
            "significant",
            "share",
            "significant_ranked",
            "share_ranked",
            "asl_median",
            "asl_median_ranked",
        ]
    ]
    return power, pd.concat(curves, ignore_index=True)


def _transform(judged, tp: TransformPlan, plan: StudyPlan, scheduler, tick) -> ScoreTable:
    """One transform for every measure and tie strategy, as the bound plan ``tp`` says (exact
    values: equal values are bitwise equal, which the rank-based statistics need)."""
    tick("rank maps", 0, 1)
    table = transform(
        judged,
        tp,
        ties=plan.ties,
        normalize=plan.approx is not None,
        scheduler=scheduler,
        exact_values=True,
        steps=lambda m, i, n: tick(f"rank map {m}", i, n),
    )
    tick("rank maps", 1, 1)
    return table


def _warn_interval_tests(table: ScoreTable, plan: StudyPlan) -> None:
    interval_tests = [t for t in plan.tests if t not in st.ORDINAL]  # they add or subtract scores
    if interval_tests:
        from irscale.plan import warn_not_interval

        warn_not_interval(
            table, "/".join(interval_tests), advice="on ranked versions they are", stacklevel=4
        )  # the caller of compare


def _table2(s: _Scores, plan: StudyPlan, rb: dict, tick) -> pd.DataFrame:
    """Tables 2/3: each measure against its ranked version."""
    rows = []
    for k, m in enumerate(plan.names):
        orig, ranked = s.orig[m], s.stat[m]
        by_topic = st.tau_by_topic(orig.T, ranked.T)
        defined = by_topic[~np.isnan(by_topic)]
        rows.append(
            {
                "measure": m,
                "ranked": s.ranked_names[m],
                "tau_unq": st.tau_overall(orig.T, ranked.T),
                "tau_ap_unq": st.tau_ap(_means8(orig), _means8(ranked)),
                "tau_mid": st.tau_overall(orig.T, s.mid_stat[m].T) if plan.mid else np.nan,
                "topic_tau_min": float(defined.min()) if len(defined) else np.nan,
                "topic_tau_max": float(defined.max()) if len(defined) else np.nan,
                "rb_dependent": rb[m],
                **({"halfwidth_max": s.halfwidth_max(m)} if plan.approx is not None else {}),
            }
        )
        tick("correlations with the ranked versions", k + 1, len(plan.names))
    return pd.DataFrame(rows)


def _means8(x: np.ndarray) -> np.ndarray:
    """Each system's mean over topics, rounded to 8 decimals (ties of means for tau)."""
    return np.round(np.nanmean(x, axis=1), 8)  # type: ignore[return-value]  # numpy's stubs type nanmean(axis=) a scalar; of 2-D it is an array


def _table4(s: _Scores, plan: StudyPlan, tick) -> pd.DataFrame:
    """Table 4: every pair of measures, and of their ranked versions."""
    rows = []
    pairs = list(itertools.combinations(plan.names, 2))
    for k, (a, b) in enumerate(pairs):
        t_o = st.tau_overall(s.orig[a].T, s.orig[b].T)
        t_r = st.tau_overall(s.stat[a].T, s.stat[b].T)
        rows.append(
            {
                "measure_1": a,
                "measure_2": b,
                "tau": t_o,
                "tau_ranked": t_r,
                "delta_pct": 100 * (t_r - t_o) / t_o if t_o else np.nan,
                "tau_ap": st.tau_ap(_means8(s.orig[a]), _means8(s.orig[b])),
                "tau_ap_ranked": st.tau_ap(_means8(s.stat[a]), _means8(s.stat[b])),
                "halfwidth_max": max(s.halfwidth_max(a), s.halfwidth_max(b)),
            }
        )
        tick("correlations between measures", k + 1, len(pairs))
    table4 = pd.DataFrame(
        rows,
        columns=[
            "measure_1",
            "measure_2",
            "tau",
            "tau_ranked",
            "delta_pct",
            "tau_ap",
            "tau_ap_ranked",
            "halfwidth_max",
        ],
    )  # the columns even for one measure
    return table4 if plan.approx is not None else table4.drop(columns="halfwidth_max")


def _tables5_6(s: _Scores, plan: StudyPlan, scale: dict, rb: dict, tick):
    """Tables 5/6: each test on the original and the ranked scores, the changes, and
    whether each conclusion is meaningful (:func:`irscale.scales.permissible.meaningful_test`).
    Returns the frame, the test results per (measure, test) and, under approx, the pairs
    whose ranked decision could flip."""
    rows, results, flips = [], {}, {}
    todo = list(itertools.product(plan.names, plan.tests))
    for k, (m, test) in enumerate(todo):
        a = st.run_test(test, s.orig[m].T, plan.alpha, seed=plan.seed)
        b = st.run_test(test, s.stat[m].T, plan.alpha, seed=plan.seed)
        results[m, test] = (a, b)
        if s.ids.get(m) is not None:
            flips[m, test] = st.could_flip(
                test, s.stat[m].T, s.half_stat[m].T, s.ids[m].T, plan.alpha, b.significant, seed=plan.seed
            )
        ch = st.change(a, b)
        rows.append(
            {
                "measure": m,
                "test": st.test_name(test),
                "ordinal": test in st.ORDINAL,
                "sig": ch.sig,
                "s2ns": ch.s2ns,
                "s2ns_pct": 100 * ch.s2ns / ch.sig if ch.sig else 0.0,
                "ns2s": ch.ns2s,
                "ns2s_pct": 100 * ch.ns2s / ch.sig if ch.sig else 0.0,
                "delta_pct": 100 * ch.delta,
                "sig_ranked": ch.sig_ranked,
                "meaningful": meaningful_test(test, scale[m], rb[m]),
                "meaningful_ranked": meaningful_test(test, True, rb[m]),
                **(
                    {
                        "halfwidth_max": s.halfwidth_max(m),
                        "could_flip_ranked": int(flips[m, test].sum()) if (m, test) in flips else 0,
                    }
                    if plan.approx is not None
                    else {}
                ),
            }
        )
        tick("significance tests", k + 1, len(todo))
    changes = pd.DataFrame(
        rows,
        columns=[
            "measure",
            "test",
            "ordinal",
            "sig",
            "s2ns",
            "s2ns_pct",
            "ns2s",
            "ns2s_pct",
            "delta_pct",
            "sig_ranked",
            "meaningful",
            "meaningful_ranked",
        ]
        + (["halfwidth_max", "could_flip_ranked"] if plan.approx is not None else []),
    )
    return changes, results, flips


def _measure_free(judged, s: _Scores, plan: StudyPlan, results: dict, changes: pd.DataFrame, tick):
    """The measure-free view: every pair's weak-order comparisons, and Tables 5/6's
    significant pairs resting on incomparable topics. Each measure is judged against the
    order on the runs it sees: a binary measure's runs, and a graded measure's given
    ``rel=``, are the qrels binarised at its rel (P and AP on graded qrels, nDCG(rel=2)),
    a graded one's the grades themselves. The ranked columns enter as the statistics see
    them (under approx scaled by a power of two to a largest value in (1/2, 1], so that
    the float-noise tolerance of :func:`irscale.measurefree.incomparable_share` does not
    zero them). Returns the pair summary and each measure's comparison codes."""
    from irscale import measurefree as mf

    tick("measure-free view", 0, 1)
    # (pairs, topics) by the rel that binarises the grades; None: the runs cut at N as they are
    by_rel: dict[int | None, np.ndarray] = {None: mf.topic_comparisons(judged, depth=plan.depth)}
    codes = {}
    for m in plan.measures:
        rel = _binary_rel(m.for_grades(judged.topics.values)) if judged.topics.max_grade > 1 else None
        if rel not in by_rel:
            by_rel[rel] = mf.topic_comparisons(judged, depth=plan.depth, rel=rel)
        codes[str(m)] = by_rel[rel]
    for scale, values, k in (("", s.orig, 0), ("_ranked", s.stat, 1)):
        # each pair's share of sum |d_t| from incomparable topics, once per measure; a
        # significant pair is flagged where it exceeds 1/2 (mf.rests_on_incomparable)
        mass = {
            m: np.nan_to_num(mf.incomparable_share(codes[m], mf.pair_differences(values[m].T))) > 0.5
            for m in plan.names
        }
        changes["flagged_incomparable" + scale] = [
            int((mass[m] & results[m, t][k].significant).sum()) for m, t in itertools.product(plan.names, plan.tests)
        ]
    tick("measure-free view", 1, 1)
    return mf.pair_summary(by_rel[None], judged.systems, plan.alpha), codes


def _binary_rel(m: Measure) -> int | None:
    """The level at which the measure binarises the grades: its ``rel`` (1 by default for a
    binary measure), None for a graded measure on the grades themselves."""
    rel = getattr(m, "rel", None)
    if m.graded and rel is None:
        return None
    return 1 if rel is None else rel


def _effects(systems, s: _Scores, plan: StudyPlan, scale: dict, rb: dict, codes, results, flips, tick):
    """The means with their intervals and the comparisons with baselines (both need a
    score on every topic)."""
    if not (plan.effects or plan.baselines is not None):
        return None, None
    if any(np.isnan(s.orig[m]).any() or np.isnan(s.ranked[m]).any() for m in plan.names):
        warn(
            "no means with intervals or baseline comparisons: --missing-topics drop left out some topics' scores; "
            "--missing-topics zero keeps them",
            stacklevel=3,
        )
        return None, None
    means = pairs = None
    if plan.effects:
        means = _means(plan.names, s, systems, plan.n_resamples, plan.seed, tick)
        if plan.approx is not None:  # the most each mean on the ranked scale can be off
            means["halfwidth"] = np.concatenate(
                [np.concatenate([np.zeros(len(systems)), s.half[m].mean(axis=1)]) for m in plan.names]
            )
    if plan.baselines is not None:
        pairs = _baseline_pairs(
            plan, s, systems, scale, rb, codes, results, tick, flips if plan.approx is not None else None
        )
    return means, pairs


def _provenance(
    data, table: ScoreTable, judged, plan: StudyPlan, relevance: str, levels: int, scale: dict, resampled: bool
) -> dict:
    prov = {
        "irscale_version": __version__,
        "N": plan.depth,
        "relevance": relevance,
        "judged_only": bool(getattr(judged, "judged_only", False)),  # condensed runs (trec_eval -J)
        "measures": plan.names,
        "ranked": [str(c) for c in table.measures if type(c).__name__ == "Ranked"],
        "tests": list(plan.tests),
        "alpha": plan.alpha,
        "systems": len(judged.systems),
        "topics": list(judged.topics.names),
        "tie_strategies": list(plan.ties),
        "means_rounded_to": 8,
        "rank_maps": table.provenance["transform"]["maps"],
        "theory": {m: said.as_dict() for m, said in scale.items()},
        "runs": list(judged.systems),
        "levels": levels,
        **grade_values_record(judged.topics),
        **_qrels_provenance(data),
        "correction": plan.correction,
        "correction_across_measures": plan.across_measures,
        "baselines": None if plan.baselines is None else list(plan.baselines),
        "seed": plan.seed,  # of the bootstrap intervals and the randomised tests' draws
        "numpy_version": np.__version__,  # numpy promises its random streams within one version
        "bootstrap": {"method": "BCa", "n_resamples": plan.n_resamples, "seed": plan.seed, "confidence": 0.95}
        if resampled
        else None,
    }
    drawn = [t for t in plan.tests if t in st.RANDOMISED]
    T = len(judged.topics.names)
    if drawn:  # what a reader needs to redraw the randomised tests' resamples
        prov["randomised_tests"] = {
            t: {"exact": True, "sign_vectors": 2**T}
            if t == "permutation" and T <= st.EXACT_LIMIT
            else {"resamples": st.RESAMPLES[t], "seed": plan.seed}
            | ({"plus_one_correction": True} if t == "permutation" else {})
            for t in drawn
        }
    if plan.approx is not None:
        prov["approx"] = plan.approx
        prov["bounds"] = table.provenance["transform"].get("bounds", {})
    headers = getattr(judged, "metadata", None)
    if headers:  # the runs' ir_metadata headers, by run name
        prov["ir_metadata"] = {name: headers[name] for name in judged.systems if name in headers}
    return prov


def _scores_frame(s: _Scores, plan: StudyPlan, systems, topics) -> pd.DataFrame:
    """The per-topic scores every table rests on, tidy: measure, system, topic, value,
    ranked (unq; normalised midpoint under approx), ranked_mid, halfwidth (approx)."""
    S, T = len(systems), len(topics)
    frames = []
    for m in plan.names:
        cols = {
            "measure": m,
            "system": np.repeat(np.asarray(systems, dtype=object), T),
            "topic": np.tile(np.asarray(topics, dtype=object), S),
            "value": s.orig[m].reshape(-1),
            "ranked": s.ranked[m].reshape(-1),
        }
        if plan.mid:
            cols["ranked_mid"] = s.mid[m].reshape(-1)
        if plan.approx is not None:
            cols["halfwidth"] = s.half[m].reshape(-1)
        frames.append(pd.DataFrame(cols))
    return pd.concat(frames, ignore_index=True)


def _qrels_provenance(data) -> dict:
    """The qrels file behind ``data`` (a ScoreTable from evaluate) and its SHA-256."""
    path = getattr(data, "provenance", {}).get("qrels") if isinstance(data, ScoreTable) else None
    return qrels_provenance(path) if path and Path(path).is_file() else {}


def qrels_provenance(path) -> dict:
    """``{"qrels": path, "qrels_sha256": ...}`` of a qrels file (the path alone where it
    cannot be read)."""
    import hashlib

    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return {"qrels": str(path)}
    return {"qrels": str(path), "qrels_sha256": h.hexdigest()}


def _corrected_counts(
    changes: pd.DataFrame, results: dict, names, tests, correction: str, across: bool, alpha: float
) -> None:
    """Tables 5/6's pairs significant after ``correction`` of each test's p-values over
    the system pairs (and the measures, ``across``); Tukey-type tests as they are."""
    from irscale.effects import correct, correct_families

    out = {}
    for t in tests:
        for k in (0, 1):
            if t in st.FAMILYWISE:
                for m in names:
                    out[m, t, k] = results[m, t][k].n_significant
            elif across:
                _, rejects = correct_families([results[m, t][k].pvalue for m in names], correction, alpha)
                for m, rej in zip(names, rejects):
                    out[m, t, k] = int(rej.sum())
            else:
                for m in names:
                    out[m, t, k] = int(correct(results[m, t][k].pvalue, correction, alpha)[1].sum())
    order = list(itertools.product(names, tests))
    changes["correction"] = correction + (" across measures" if across else "")
    changes["sig_adjusted"] = [out[m, t, 0] for m, t in order]
    changes["sig_ranked_adjusted"] = [out[m, t, 1] for m, t in order]


def _means(names, s: _Scores, systems, n_resamples: int, seed: int, tick) -> pd.DataFrame:
    """Each system's mean with its BCa interval, per measure, on both scales: one call of
    :func:`irscale.effects.system_means` per (measure, scale) column, so that a column's
    intervals depend on that column alone (its own score scale decides what is constant
    and how bootstrap means are snapped)."""
    from irscale.effects import system_means

    frames = []
    for m in names:
        for scale, values in (("original", s.orig[m]), ("ranked", s.ranked[m])):
            df = system_means(values.T, names=list(systems), n_resamples=n_resamples, seed=seed)
            df.insert(0, "scale", scale)
            df.insert(0, "measure", m)
            frames.append(df[["measure", "scale", "system", "mean", "ci_low", "ci_high"]])
            tick("means with confidence intervals", len(frames), 2 * len(names))
    return pd.concat(frames, ignore_index=True)


def _baseline_pairs(
    plan: StudyPlan, s: _Scores, systems, scale: dict, rb: dict, codes, results: dict, tick, flips=None
) -> pd.DataFrame:
    """Every other system against each baseline, per measure, scale and test (see
    :func:`compare`): differences read system minus baseline. What does not depend on the
    test (means, difference, interval, effect sizes, incomparable topics) is computed once
    per (measure, scale); each test's p-values are its Tables 5/6 result's for these pairs
    (``results``: the same test on the same scores), corrected over the baseline pairs."""
    from irscale.effects import comparisons, correct, pair_effects, pair_pvalues

    assert plan.baselines is not None  # (_baseline_pairs runs only with baselines)
    a, b = comparisons(tuple(systems), list(plan.baselines))  # baseline a[k] vs system b[k]
    frames = []
    total = len(plan.names) * 2
    for n, m in enumerate(plan.names):
        for k, (which, values) in enumerate((("original", s.orig[m]), ("ranked", s.ranked[m]))):
            eff = pair_effects(values.T, a, b, 0.95, plan.n_resamples, plan.seed, True)
            common = pd.DataFrame(
                {
                    "measure": m,
                    "scale": which,
                    "system_1": [systems[x] for x in a],
                    "system_2": [systems[x] for x in b],
                    "mean_1": eff["mean_1"],
                    "mean_2": eff["mean_2"],
                    "diff": -eff["diff"],
                    "ci_low": -eff["ci_high"],
                    "ci_high": -eff["ci_low"],
                    "d_z": -eff["d_z"],
                    "rank_biserial": -eff["rank_biserial"],
                }
            )
            mass = None
            if codes is not None:  # the ranked scores as the statistics see them (see _measure_free)
                mass = _incomparable_columns(
                    common, codes[m], s.stat[m] if which == "ranked" else values, a, b, len(systems)
                )
            for test in plan.tests:
                corr = "none" if test in st.FAMILYWISE else plan.correction  # Tukey-type: adjusted already
                p = pair_pvalues(results[m, test][k], a, b)
                p_adj, sig = correct(p, corr, plan.alpha)
                out = common.copy()
                out.insert(2, "test", st.test_name(test))
                out["p_value"], out["p_adjusted"], out["significant"] = p, p_adj, sig
                out["correction"] = corr
                out["meaningful"] = meaningful_test(test, True if which == "ranked" else scale[m], rb[m])
                if mass is not None:
                    out["rests_on_incomparable"] = sig & (np.nan_to_num(mass) > 0.5)
                _bounded_columns(out, plan, s, m, which, test, a, b, len(systems), flips)
                frames.append(out)
            tick("comparisons with baselines", 2 * n + k + 1, total)
    return pd.concat(frames, ignore_index=True)


def _pair_rows(i: np.ndarray, j: np.ndarray, S: int) -> np.ndarray:
    """Each pair's row in stats.pair_index (upper-triangle) order."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return lo * S - lo * (lo + 1) // 2 + (hi - lo - 1)


def _bounded_columns(
    out: pd.DataFrame, plan: StudyPlan, s: _Scores, m: str, which: str, test: str, i, j, S: int, flips
) -> None:
    """Under approx: the most the difference of means can be off (0: exact scores) and
    whether the decision could differ within the bounds (ranked, bounded only)."""
    if plan.approx is None:
        return
    out["halfwidth"] = (s.half[m][i] + s.half[m][j]).mean(axis=1) if which == "ranked" else np.zeros(len(out))
    if flips is None:
        return
    f = flips.get((m, test))
    corr = out["correction"].iloc[0] if len(out) else "none"
    if corr != "none" and which == "ranked" and f is not None:
        out["could_flip"] = pd.array([pd.NA] * len(out), dtype="boolean")  # not bounded: see compare
    else:
        out["could_flip"] = pd.array(
            f[_pair_rows(i, j, S)] if which == "ranked" and f is not None else np.zeros(len(out), bool), dtype="boolean"
        )


def _incomparable_columns(out: pd.DataFrame, codes, values, i, j, S: int) -> np.ndarray:
    """The share of topics, and of ``sum |d_t|``, where the two runs are incomparable in the
    weak order on the runs this measure sees (columns of ``out``); returns the latter (a
    significant pair rests on incomparable topics where it exceeds 1/2)."""
    from irscale import measurefree as mf

    d = (values.T[:, i] - values.T[:, j]).T
    mine = codes[_pair_rows(i, j, S)]
    mass = mf.incomparable_share(mine, d)  # share of sum |d_t| from incomparable topics
    out["incomparable_share"] = (mine == mf.INCOMPARABLE).mean(axis=1)
    out["incomparable_mass"] = mass
    return mass


# -- reading a written study back -----------------------------------------------------------------


def read_study(path: str | Path, N: int | None = None) -> Study:
    """The study that ``irscale compare --out DIR`` (or ``Study.write``) wrote into ``path``,
    read back from its files without recomputing anything: provenance (from the JSON
    files), Tables 2-6, the means, the comparisons with baselines (``Study.pairs``' form),
    the measure-free pairs, discriminative power, ASL curves and per-topic scores. ``N``:
    which run length, where the directory holds several (``irscale study`` writes one
    report per N)."""
    import json

    from irscale.report.study import pairs_long
    from irscale.stats import FAMILYWISE

    d = Path(path)
    if not d.is_dir():
        raise ArgumentError(f"{d}: not a directory; give the --out directory of irscale compare or irscale study")
    found = sorted(
        int(p.stem.rsplit("_N", 1)[1])
        for p in d.glob("table2_tau_measure_vs_ranked_N*.json")
        if p.stem.rsplit("_N", 1)[1].isdigit()
    )
    if not found:
        raise ArgumentError(
            f"{d}: no study here (no table2_tau_measure_vs_ranked_N<N>.json); "
            "write one with: irscale compare QRELS RUNS --out DIR"
        )
    if N is None:
        if len(found) > 1:
            raise ArgumentError(f"{d} holds studies at N = {', '.join(map(str, found))}: choose one with -N")
        N = found[0]
    elif N not in found:
        raise ArgumentError(f"{d} has no study at N = {N}: it has N = {', '.join(map(str, found))}")
    tag = f"N{N}"
    prov = json.loads((d / f"table2_tau_measure_vs_ranked_{tag}.json").read_text(encoding="utf-8"))["provenance"]
    names = {"system": str, "system_1": str, "system_2": str, "topic": str, "measure": str}

    def frame(stem: str) -> pd.DataFrame | None:
        p = d / f"{stem}_{tag}.csv"
        if not p.is_file():
            return None
        df = pd.read_csv(p, dtype=names, keep_default_na=True)
        return df[[c for c in df.columns if not c.endswith("_display")]]

    def required(stem: str) -> pd.DataFrame:
        got = frame(stem)
        if got is None:
            raise ArgumentError(f"{d}: {stem}_{tag}.csv is missing: the study was not written whole")
        return got

    means = _long_means(frame("means_original_vs_ranked"))
    wide = frame("comparisons_with_baselines")
    pairs = None
    if wide is not None:
        corr = str(prov.get("correction", "none"))
        pairs = pairs_long(wide, {t: "none" if t in FAMILYWISE else corr for t in prov.get("tests", [])})
    return Study(
        N,
        tuple(prov["measures"]),
        tuple(str(s) for s in prov.get("runs", ())),
        tuple(str(t) for t in prov.get("topics", ())),
        required("table2_tau_measure_vs_ranked"),
        required("table4_tau_between_measures"),
        required("tables5_6_significance_changes"),
        prov,
        means=means,
        pairs=pairs,
        measure_free=frame("measure_free_pairs"),
        scores=frame("scores"),
        power=frame("discriminative_power"),
        asl=frame("asl_curves"),
    )


def _long_means(wide: pd.DataFrame | None) -> pd.DataFrame | None:
    """The means file (one row per measure and system, each scale's columns side by side)
    in ``Study.means``' form: measure, scale, system, mean, ci_low, ci_high[, halfwidth]."""
    if wide is None:
        return None
    frames = []
    for sc in ("original", "ranked"):
        cols = {v: f"{v}_{sc}" for v in ("mean", "ci_low", "ci_high", "halfwidth") if f"{v}_{sc}" in wide}
        if "mean" not in cols:
            continue
        part = pd.DataFrame({"measure": wide["measure"], "scale": sc, "system": wide["system"]})
        for v, c in cols.items():
            part[v] = wide[c].to_numpy()
        frames.append(part)
    if not frames:
        return None
    out = pd.concat(frames, ignore_index=True)
    order = {m: k for k, m in enumerate(dict.fromkeys(out["measure"]))}
    return out.sort_values(
        ["measure", "scale"], key=lambda c: c.map(order) if c.name == "measure" else c, kind="stable"
    ).reset_index(drop=True)
