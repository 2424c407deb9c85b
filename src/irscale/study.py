"""The original-vs-interval study of Ferrante, Ferro & Fuhr (2021), Section 7, on any
campaign: correlations (Tables 2-4) and significance-test changes (Tables 5-6)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from irscale._version import __version__
from irscale import stats as st
from irscale.data import JudgedRuns
from irscale.experiment import PAPER_MEASURES, ScoreTable, judged_runs, transform
from irscale.measures import parse_measure

def __getattr__(name: str):
    """Deprecated names: LABELS and RB_DEPENDENT are declared by each measure now
    (``Measure.label``, ``Measure.needs_recall_base``)."""
    if name in ("LABELS", "RB_DEPENDENT"):
        import warnings

        warnings.warn(f"irscale.study.{name} is deprecated: use Measure.label / Measure.needs_recall_base",
                      DeprecationWarning, stacklevel=2)
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
    """Results of :func:`compare` at one run length N."""

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

    def write(self, out: str | Path, figures=None, command: str | None = None) -> list[Path]:
        """The whole report in directory ``out``: ``report_N<N>.html`` (one self-contained
        file), Markdown, LaTeX, CSV, JSON and the provenance as YAML; returns every path
        written (:func:`irscale.report.study.write_report`). ``figures``: ``[(title,
        svg_text, caption)]`` embedded in the HTML."""
        from irscale.report.study import write_report

        return write_report(self, out, figures=figures, command=command)

    def markdown(self, links: dict | None = None) -> str:
        """The study as a Markdown report (:func:`irscale.report.study.study_markdown`)."""
        from irscale.report.study import study_markdown

        return study_markdown(self, links)


WITHIN_TOPIC = ("sign", "friedman")  # ordinal tests comparing systems topic by topic only


def meaningful_test(test: str, interval: bool, rb_dependent: bool) -> bool:
    """Is "systems i and j differ significantly" by ``test`` a meaningful statement?

    Sign and Friedman compare the two systems within each topic: meaningful on any
    ordinal scale. Rank-sum and Kruskal-Wallis pool scores of all topics: they need one
    ordinal scale for all topics, which recall-base-dependent measures lack. Signed-rank,
    t and ANOVA add or subtract scores: they need one interval scale for all topics.
    """
    if test in WITHIN_TOPIC:
        return True
    if rb_dependent:
        return False
    return True if test in st.ORDINAL else interval


def _is_interval(measure: str, N: int, levels: int = 2) -> bool:
    """Whether the original measure is an interval scale on its runs of length N: what
    the theory says (:func:`irscale.scales.theory.statement`; P and RBP(1/2) are, and
    DCG with base b up to N = b). A measure the papers say nothing about (a user
    measure) is checked exhaustively on its runs of length min(N, 12): are its distinct
    values equi-spaced?"""
    import dataclasses

    from irscale.errors import IrscaleError
    from irscale.measures import parse_measure
    from irscale.scales.checks import is_interval
    from irscale.scales.theory import statement

    said = statement(measure, N, levels)
    if said is not None:
        return said.interval
    m = parse_measure(measure)
    if getattr(m, "cutoff", None) is not None:  # the check runs at its own (smaller) run length
        m = dataclasses.replace(m, cutoff=None)
    try:
        return bool(is_interval(m, "induced", min(N, 12), 2))
    except IrscaleError:  # a measure the check cannot enumerate: not claimed interval
        return False


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
) -> Study:
    """Run the paper's Section 7 study at run length ``depth`` = N.

    For each measure M (cut at N) and its ranked version M_R (``unq``; also ``mid`` for
    Table 3): overall and topic-by-topic Kendall's tau between M and M_R (Table 2/3),
    tau between every pair of measures and between their ranked versions (Table 4),
    and for each significance test the pairs of systems significant with M (Sig), those
    that stop (S2NS) or start (NS2S) being significant with M_R, and
    Delta% = (S2NS + NS2S) / Sig (Tables 5/6). ``relevance``: ``"graded"`` or
    ``"lenient"`` (binarised qrels, the paper's protocol for graded collections), see
    :func:`irscale.experiment.apply_relevance`; recorded in the provenance.
    """
    from irscale.errors import ArgumentError, check_choice
    from irscale.experiment import apply_relevance, plan_rank_maps
    from irscale.measures import parse_measures
    from irscale.validate import flag, integer, level, wrong_type

    judged = judged_runs(data)
    depth = integer("depth", depth, minimum=1)
    alpha = level("alpha", alpha)
    mid = flag("mid", mid)
    if isinstance(tests, str):
        tests = [tests]
    if tests is None or not hasattr(tests, "__iter__"):
        raise ArgumentError(f"tests must be a test name or a list of them (an empty list for correlations only), "
                            f"not {tests!r}; known: {', '.join(st.TESTS)}")
    if progress is not None and not callable(progress):
        raise wrong_type("progress", progress, "a function progress(what, done, total) or None")
    tests = [check_choice("test", t, st.TESTS) for t in tests]  # none: correlations only
    measures = [str(m) for m in parse_measures(measures)]
    if len(judged.systems) < 2:
        raise ArgumentError(f"compare needs at least two systems to rank and test, got {len(judged.systems)} "
                            f"({', '.join(judged.systems)})")
    judged, relevance = apply_relevance(judged, parse_measures(measures), relevance)
    plan_rank_maps(measures, depth, max(judged.topics.max_grade, 1) + 1)  # fail before any build
    t0 = time.perf_counter()
    M = len(measures)
    from irscale.measures import parse_measure

    rb_dependent = {m: parse_measure(m).needs_recall_base for m in measures}  # the measure's own declaration
    tick = (lambda what, i, n: progress(what, i, n)) if progress else (lambda *a: None)
    ties = ("unq", "mid") if mid else ("unq",)
    tick("rank maps", 0, 1)
    table = transform(judged, measures, depth, ties, scheduler=scheduler, exact_values=True,
                      relevance=relevance, steps=lambda m, i, n: tick(f"rank map {m}", i, n))  # one pass
    tick("rank maps", 1, 1)
    interval_tests = [st.TEST_NAMES[t] for t in tests if t not in st.ORDINAL]  # they add or subtract scores
    if interval_tests:
        from irscale.experiment import warn_not_interval

        warn_not_interval(table, ", ".join(interval_tests) + " (Tables 5/6: column meaningful)",
                          advice="The same tests on their ranked versions, which this study runs too, are "
                                 "(column meaningful_ranked)")
    orig, ranked = table.values[:M], table.values[M:2 * M]
    if mid:
        ranked_mid = table.values[2 * M:]

    # Table 2/3
    rows = []
    for m in range(M):
        by_topic = st.tau_by_topic(orig[m].T, ranked[m].T)
        defined = by_topic[~np.isnan(by_topic)]
        rows.append({"measure": label(measures[m]),
                     "tau_unq": st.tau_overall(orig[m].T, ranked[m].T),
                     "tau_ap_unq": st.tau_ap(np.round(np.nanmean(orig[m], axis=1), 8),
                                             np.round(np.nanmean(ranked[m], axis=1), 8)),
                     "tau_mid": st.tau_overall(orig[m].T, ranked_mid[m].T) if mid else np.nan,
                     "topic_tau_min": float(defined.min()) if len(defined) else np.nan,
                     "topic_tau_max": float(defined.max()) if len(defined) else np.nan,
                     "rb_dependent": rb_dependent[measures[m]]})
        tick("correlations with the ranked versions", m + 1, M)
    table2 = pd.DataFrame(rows)

    # Table 4
    rows = []
    pairs = M * (M - 1) // 2
    for k, (a, b) in enumerate(itertools.combinations(range(M), 2)):
        t_o = st.tau_overall(orig[a].T, orig[b].T)
        t_r = st.tau_overall(ranked[a].T, ranked[b].T)
        ma, mb = (np.round(np.nanmean(x, axis=1), 8) for x in (orig[a], orig[b]))
        ra, rb = (np.round(np.nanmean(x, axis=1), 8) for x in (ranked[a], ranked[b]))
        rows.append({"measure_1": label(measures[a]), "measure_2": label(measures[b]), "tau": t_o,
                     "tau_ranked": t_r, "delta_pct": 100 * (t_r - t_o) / t_o if t_o else np.nan,
                     "tau_ap": st.tau_ap(ma, mb), "tau_ap_ranked": st.tau_ap(ra, rb)})
        tick("correlations between measures", k + 1, pairs)
    table4 = pd.DataFrame(rows)

    # Tables 5/6, with which statements are meaningful (see meaningful_test)
    levels = max(judged.topics.max_grade, 1) + 1
    interval = {m: _is_interval(m, depth, levels) for m in measures}
    rows = []
    total = M * len(tests)
    for k, (m, test) in enumerate(itertools.product(range(M), tests)):
        a = st.run_test(test, orig[m].T, alpha)
        b = st.run_test(test, ranked[m].T, alpha)
        ch = st.change(a, b)
        rows.append({"measure": label(measures[m]), "test": st.TEST_NAMES[test], "ordinal": test in st.ORDINAL,
                     "sig": ch.sig, "s2ns": ch.s2ns, "s2ns_pct": 100 * ch.s2ns / ch.sig if ch.sig else 0.0,
                     "ns2s": ch.ns2s, "ns2s_pct": 100 * ch.ns2s / ch.sig if ch.sig else 0.0,
                     "delta_pct": 100 * ch.delta, "sig_ranked": ch.sig_ranked,
                     "meaningful": meaningful_test(test, interval[measures[m]], rb_dependent[measures[m]]),
                     "meaningful_ranked": meaningful_test(test, True, rb_dependent[measures[m]])})
        tick("significance tests", k + 1, total)
    changes = pd.DataFrame(rows)
    prov = {"irscale_version": __version__, "N": depth, "relevance": relevance, "measures": measures, "tests": list(tests),
            "alpha": alpha, "systems": len(judged.systems), "topics": list(judged.topics.names),
            "tie_strategies": ["unq", "mid"] if mid else ["unq"], "means_rounded_to": 8,
            "rank_maps": table.provenance["transform"]["maps"],
            "theory": {measures[i]: col.theory.as_dict() for i, col in enumerate(table.measures[M:2 * M])
                       if col.theory is not None},
            "seconds": time.perf_counter() - t0}
    return Study(depth, tuple(measures), judged.systems, judged.topics.names, table2, table4, changes, prov)
