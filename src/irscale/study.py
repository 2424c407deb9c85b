"""The original-vs-interval study of Ferrante, Ferro & Fuhr (2021), Section 7, on any
campaign: correlations (Tables 2-4) and significance-test changes (Tables 5-6)."""

from __future__ import annotations

import itertools
import math
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
    correction: str = "none",
    across_measures: bool = False,
    baselines: Sequence[str] | str | None = None,
    effects: bool = True,
    measure_free: bool = True,
    n_resamples: int = 1000,
    seed: int = 0,
    approx: float | None = None,
    max_pairs: int | None = None,
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

    Beyond the paper (each part a frame of the returned :class:`Study`):

    * ``correction`` (``"holm"``, ``"bonferroni"``, ``"bh"``; default ``"none"``, as the
      paper): Tables 5/6 gain ``sig_adjusted`` and ``sig_ranked_adjusted``, the pairs still
      significant after correcting each test's p-values over all system pairs (and over
      all measures too with ``across_measures=True``); Tukey-type tests (ANOVA,
      Kruskal-Wallis, Friedman) are adjusted over all pairs already and keep their count;
    * ``effects`` (default on): ``study.means``, each system's mean on the original and the
      ranked scale with a BCa bootstrap interval over topics (``n_resamples``, ``seed``;
      :func:`irscale.effects.system_means`);
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
      (more than half of sum |d_t|) on topics where the two runs are incomparable, which
      no measure-free argument supports.

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
    split engine's opt-in, as :func:`irscale.experiment.transform`.
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
    from irscale.effects import CORRECTIONS

    correction = check_choice("correction", correction, CORRECTIONS)
    across_measures, effects, measure_free = (flag("across_measures", across_measures), flag("effects", effects),
                                              flag("measure_free", measure_free))
    n_resamples = integer("n_resamples", n_resamples, minimum=100)
    if baselines is not None:
        baselines = [baselines] if isinstance(baselines, str) else list(baselines)
        unknown = [b for b in baselines if b not in judged.systems]
        if unknown or not baselines:
            raise ArgumentError(f"baseline(s) {', '.join(map(repr, unknown)) or '(none)'} not among the systems; "
                                f"known: {', '.join(judged.systems[:20])}" + (" ..." if len(judged.systems) > 20 else ""))
    measures = [str(m) for m in parse_measures(measures)]
    if len(judged.systems) < 2:
        raise ArgumentError(f"compare needs at least two systems to rank and test, got {len(judged.systems)} "
                            f"({', '.join(judged.systems)})")
    judged, relevance = apply_relevance(judged, parse_measures(measures), relevance)
    plan_rank_maps(measures, depth, max(judged.topics.max_grade, 1) + 1, approx, max_pairs)  # fail before any build
    t0 = time.perf_counter()
    M = len(measures)
    from irscale.measures import parse_measure

    rb_dependent = {m: parse_measure(m).needs_recall_base for m in measures}  # the measure's own declaration
    tick = (lambda what, i, n: progress(what, i, n)) if progress else (lambda *a: None)
    ties = ("unq", "mid") if mid else ("unq",)
    tick("rank maps", 0, 1)
    table = transform(judged, measures, depth, ties, approx is not None, scheduler=scheduler, exact_values=True,
                      relevance=relevance, steps=lambda m, i, n: tick(f"rank map {m}", i, n),
                      approx=approx, max_pairs=max_pairs)  # one pass
    tick("rank maps", 1, 1)
    interval_tests = [st.TEST_NAMES[t] for t in tests if t not in st.ORDINAL]  # they add or subtract scores
    if interval_tests:
        from irscale.experiment import warn_not_interval

        warn_not_interval(table, ", ".join(interval_tests) + " (Tables 5/6: column meaningful)",
                          advice="The same tests on their ranked versions, which this study runs too, are "
                                 "(column meaningful_ranked)")
    orig, ranked = table.values[:M], table.values[M:2 * M]
    if mid:
        ranked_mid = table.values[2 * M:3 * M]
    # bounded ranked columns (approx=): half-widths and exact-value ids, zeros where exact
    half = np.zeros_like(ranked)
    ids = {}
    for k, col in enumerate(table.measures[M:2 * M]):
        if col.midpoint:
            half[k] = table.values[table.index(f"halfwidth({col})")]
            ids[k] = table.exact_ids[str(col)]
    hw_max = [float(np.nanmax(half[m])) if half[m].size else 0.0 for m in range(M)]
    # correlations round means to 8 decimals and tests square differences: with approx the
    # ranked columns are normalised phi, as small as 1e-300 at N = 1000, so both see each
    # column scaled by a power of two (exact) to a largest value in (1/2, 1]; neither
    # changes under a positive scaling otherwise
    unit = np.ones(M)
    if approx is not None:
        for m in range(M):
            top = float(np.nanmax(ranked[m])) if ranked[m].size else 0.0
            unit[m] = 2.0 ** math.ceil(math.log2(top)) if top > 0 else 1.0
    r_stat, h_stat = ranked / unit[:, None, None], half / unit[:, None, None]
    if mid:
        mid_stat = ranked_mid / unit[:, None, None]

    # Table 2/3
    rows = []
    for m in range(M):
        by_topic = st.tau_by_topic(orig[m].T, r_stat[m].T)
        defined = by_topic[~np.isnan(by_topic)]
        rows.append({"measure": label(measures[m]),
                     "tau_unq": st.tau_overall(orig[m].T, r_stat[m].T),
                     "tau_ap_unq": st.tau_ap(np.round(np.nanmean(orig[m], axis=1), 8),
                                             np.round(np.nanmean(r_stat[m], axis=1), 8)),
                     "tau_mid": st.tau_overall(orig[m].T, mid_stat[m].T) if mid else np.nan,
                     "topic_tau_min": float(defined.min()) if len(defined) else np.nan,
                     "topic_tau_max": float(defined.max()) if len(defined) else np.nan,
                     "rb_dependent": rb_dependent[measures[m]],
                     **({"halfwidth_max": hw_max[m]} if approx is not None else {})})
        tick("correlations with the ranked versions", m + 1, M)
    table2 = pd.DataFrame(rows)

    # Table 4
    rows = []
    pairs = M * (M - 1) // 2
    for k, (a, b) in enumerate(itertools.combinations(range(M), 2)):
        t_o = st.tau_overall(orig[a].T, orig[b].T)
        t_r = st.tau_overall(r_stat[a].T, r_stat[b].T)
        ma, mb = (np.round(np.nanmean(x, axis=1), 8) for x in (orig[a], orig[b]))
        ra, rb = (np.round(np.nanmean(x, axis=1), 8) for x in (r_stat[a], r_stat[b]))
        rows.append({"measure_1": label(measures[a]), "measure_2": label(measures[b]), "tau": t_o,
                     "tau_ranked": t_r, "delta_pct": 100 * (t_r - t_o) / t_o if t_o else np.nan,
                     "tau_ap": st.tau_ap(ma, mb), "tau_ap_ranked": st.tau_ap(ra, rb),
                     "halfwidth_max": max(hw_max[a], hw_max[b])})
        tick("correlations between measures", k + 1, pairs)
    table4 = pd.DataFrame(rows, columns=["measure_1", "measure_2", "tau", "tau_ranked", "delta_pct", "tau_ap",
                                         "tau_ap_ranked", "halfwidth_max"])  # the columns even for one measure
    if approx is None:
        table4 = table4.drop(columns="halfwidth_max")

    # Tables 5/6, with which statements are meaningful (see meaningful_test)
    levels = max(judged.topics.max_grade, 1) + 1
    interval = {m: _is_interval(m, depth, levels) for m in measures}
    rows = []
    results, flips = {}, {}
    total = M * len(tests)
    for k, (m, test) in enumerate(itertools.product(range(M), tests)):
        a = st.run_test(test, orig[m].T, alpha)
        b = st.run_test(test, r_stat[m].T, alpha)
        results[m, test] = (a, b)
        if m in ids:
            flips[m, test] = st.could_flip(test, r_stat[m].T, h_stat[m].T, ids[m].T, alpha, b.significant)
        ch = st.change(a, b)
        rows.append({"measure": label(measures[m]), "test": st.TEST_NAMES[test], "ordinal": test in st.ORDINAL,
                     "sig": ch.sig, "s2ns": ch.s2ns, "s2ns_pct": 100 * ch.s2ns / ch.sig if ch.sig else 0.0,
                     "ns2s": ch.ns2s, "ns2s_pct": 100 * ch.ns2s / ch.sig if ch.sig else 0.0,
                     "delta_pct": 100 * ch.delta, "sig_ranked": ch.sig_ranked,
                     "meaningful": meaningful_test(test, interval[measures[m]], rb_dependent[measures[m]]),
                     "meaningful_ranked": meaningful_test(test, True, rb_dependent[measures[m]]),
                     **({"halfwidth_max": hw_max[m],
                         "could_flip_ranked": int(flips[m, test].sum()) if m in ids else 0}
                        if approx is not None else {})})
        tick("significance tests", k + 1, total)
    changes = pd.DataFrame(rows, columns=["measure", "test", "ordinal", "sig", "s2ns", "s2ns_pct", "ns2s", "ns2s_pct",
                                          "delta_pct", "sig_ranked", "meaningful", "meaningful_ranked"]
                           + (["halfwidth_max", "could_flip_ranked"] if approx is not None else []))
    if correction != "none":
        _corrected_counts(changes, results, M, tests, correction, across_measures, alpha)
    codes = None
    mf_table = None
    if measure_free:
        from irscale import measurefree as mf

        tick("measure-free view", 0, 1)
        codes = mf.topic_comparisons(judged, depth=depth)  # (pairs, topics): the runs cut at N, graded
        mf_table = mf.pair_summary(codes, judged.systems, alpha)
        # each measure is judged against the order on the runs it sees: a binary measure's
        # runs are the qrels binarised at its rel (P and AP on graded qrels), a graded one's
        # the grades themselves
        by_rel = {None: codes}

        def codes_of(m):
            pm = parse_measure(measures[m])
            rel = None if pm.graded or judged.topics.max_grade <= 1 else getattr(pm, "rel", 1)
            if rel not in by_rel:
                by_rel[rel] = mf.topic_comparisons(judged, depth=depth, rel=rel)
            return by_rel[rel]

        measure_codes = {m: codes_of(m) for m in range(M)}
        for scale, values, k in (("", orig, 0), ("_ranked", ranked, 1)):
            # each pair's share of sum |d_t| from incomparable topics, once per measure; a
            # significant pair is flagged where it exceeds 1/2 (mf.rests_on_incomparable)
            mass = {m: np.nan_to_num(mf.incomparable_share(measure_codes[m], mf.pair_differences(values[m].T)))
                    > 0.5 for m in range(M)}
            changes["flagged_incomparable" + scale] = [int((mass[m] & results[m, t][k].significant).sum())
                                                       for m, t in itertools.product(range(M), tests)]
        tick("measure-free view", 1, 1)
    means = pairs = None
    complete = not (np.isnan(orig).any() or np.isnan(ranked).any())
    if (effects or baselines is not None) and not complete:
        import warnings

        from irscale.errors import IrscaleWarning

        warnings.warn("means with confidence intervals and comparisons with baselines need a score on every topic; "
                      "some topics were left out (missing_topics='drop'): evaluate with missing_topics='zero' "
                      "(CLI --missing-topics zero) for them", IrscaleWarning, stacklevel=2)
    elif effects:
        means = _means(measures, orig, ranked, judged.systems, n_resamples, seed, tick)
        if approx is not None:  # the most each mean on the ranked scale can be off
            means["halfwidth"] = np.concatenate([np.concatenate([np.zeros(len(judged.systems)),
                                                                 half[m].mean(axis=1)]) for m in range(M)])
    if baselines is not None and complete:
        pairs = _baseline_pairs(measures, orig, ranked, judged.systems, baselines, tests, alpha, correction,
                                interval, rb_dependent, measure_codes if measure_free else None, n_resamples, seed,
                                tick, flips if approx is not None else None, half if approx is not None else None)
    prov = {"irscale_version": __version__, "N": depth, "relevance": relevance, "measures": measures, "tests": list(tests),
            "alpha": alpha, "systems": len(judged.systems), "topics": list(judged.topics.names),
            "tie_strategies": ["unq", "mid"] if mid else ["unq"], "means_rounded_to": 8,
            "rank_maps": table.provenance["transform"]["maps"],
            "theory": {measures[i]: col.theory.as_dict() for i, col in enumerate(table.measures[M:2 * M])
                       if col.theory is not None},
            "runs": list(judged.systems), "levels": levels,
            **_qrels_provenance(data),
            "correction": correction, "correction_across_measures": across_measures,
            "baselines": None if baselines is None else list(baselines),
            "bootstrap": {"method": "BCa", "n_resamples": n_resamples, "seed": seed, "confidence": 0.95}
            if (means is not None or pairs is not None) else None,
            "seconds": time.perf_counter() - t0}
    if approx is not None:
        prov["approx"] = approx
        prov["bounds"] = table.provenance["transform"].get("bounds", {})
    return Study(depth, tuple(measures), judged.systems, judged.topics.names, table2, table4, changes, prov,
                 means=means, pairs=pairs, measure_free=mf_table)


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


def _corrected_counts(changes: pd.DataFrame, results: dict, M: int, tests, correction: str, across: bool,
                      alpha: float) -> None:
    """Tables 5/6's pairs significant after ``correction`` of each test's p-values over
    the system pairs (and the measures, ``across``); Tukey-type tests as they are."""
    from irscale.effects import correct, correct_families

    out = {}
    for t in tests:
        for k in (0, 1):
            if t in st.MULTI:
                for m in range(M):
                    out[m, t, k] = results[m, t][k].n_significant
            elif across:
                _, rejects = correct_families([results[m, t][k].pvalue for m in range(M)], correction, alpha)
                for m in range(M):
                    out[m, t, k] = int(rejects[m].sum())
            else:
                for m in range(M):
                    out[m, t, k] = int(correct(results[m, t][k].pvalue, correction, alpha)[1].sum())
    order = list(itertools.product(range(M), tests))
    changes["correction"] = correction + (" across measures" if across else "")
    changes["sig_adjusted"] = [out[m, t, 0] for m, t in order]
    changes["sig_ranked_adjusted"] = [out[m, t, 1] for m, t in order]


def _means(measures, orig, ranked, systems, n_resamples: int, seed: int, tick) -> pd.DataFrame:
    """Each system's mean with its BCa interval, per measure, on both scales: one call of
    :func:`irscale.effects.system_means` per (measure, scale) column, so that a column's
    intervals depend on that column alone (its own score scale decides what is constant
    and how bootstrap means are snapped)."""
    from irscale.effects import system_means

    frames = []
    total = 2 * len(measures)
    for m, name in enumerate(measures):
        for scale, values in (("original", orig), ("ranked", ranked)):
            df = system_means(values[m].T, names=list(systems), n_resamples=n_resamples, seed=seed)
            df.insert(0, "scale", scale)
            df.insert(0, "measure", name)
            frames.append(df[["measure", "scale", "system", "mean", "ci_low", "ci_high"]])
            tick("means with confidence intervals", len(frames), total)
    return pd.concat(frames, ignore_index=True)


def _baseline_pairs(measures, orig, ranked, systems, baselines, tests, alpha, correction, interval, rb_dependent,
                    codes, n_resamples, seed, tick, flips=None, half=None) -> pd.DataFrame:
    """Every other system against each baseline, per measure, scale and test (see
    :func:`compare`): differences read system minus baseline."""
    from irscale.effects import pairwise

    if isinstance(baselines, str):
        baselines = [baselines]
    position = {name: k for k, name in enumerate(systems)}
    S = len(systems)
    frames = []
    done, total = 0, len(measures) * 2 * len(tests)
    for m, name in enumerate(measures):
        for scale, values in (("original", orig), ("ranked", ranked)):
            ci = None
            for test in tests:
                corr = "none" if test in st.MULTI else correction  # Tukey-type: adjusted already
                df = pairwise(values[m].T, test, alpha, corr, baselines=list(baselines), names=systems,
                              n_resamples=n_resamples, seed=seed, ci=ci is None)
                if ci is None:  # the intervals do not depend on the test: computed once
                    ci = df[["ci_low", "ci_high"]].to_numpy()
                df["ci_low"], df["ci_high"] = ci[:, 0], ci[:, 1]
                out = pd.DataFrame({
                    "measure": name, "scale": scale, "test": st.TEST_NAMES[test],
                    "system_1": df["system_1"], "system_2": df["system_2"],
                    "mean_1": df["mean_1"], "mean_2": df["mean_2"],
                    "diff": -df["diff"], "ci_low": -df["ci_high"], "ci_high": -df["ci_low"],
                    "d_z": -df["d_z"], "rank_biserial": -df["rank_biserial"],
                    "p_value": df["p_value"], "p_adjusted": df["p_adjusted"], "significant": df["significant"],
                    "correction": corr,
                    "meaningful": meaningful_test(test, True if scale == "ranked" else interval[name],
                                                  rb_dependent[name])})
                i = np.array([position[x] for x in df["system_1"]], dtype=np.int64)
                j = np.array([position[x] for x in df["system_2"]], dtype=np.int64)
                lo, hi = np.minimum(i, j), np.maximum(i, j)
                row = lo * S - lo * (lo + 1) // 2 + (hi - lo - 1)  # the pair's row in triu order
                if half is not None:  # the most the difference of means can be off (0: exact scores)
                    out["halfwidth"] = ((half[m][i] + half[m][j]).mean(axis=1) if scale == "ranked"
                                        else np.zeros(len(out)))
                if flips is not None:  # the decision could differ within the bounds (ranked, bounded only)
                    f = flips.get((m, test))
                    if corr != "none" and scale == "ranked" and f is not None:
                        out["could_flip"] = pd.array([pd.NA] * len(out), dtype="boolean")  # not bounded: see doc
                    else:
                        out["could_flip"] = pd.array(f[row] if scale == "ranked" and f is not None
                                                     else np.zeros(len(out), bool), dtype="boolean")
                if codes is not None:
                    from irscale import measurefree as mf

                    d = (values[m].T[:, i] - values[m].T[:, j]).T
                    mine = codes[m][row]  # the order on the runs this measure sees
                    mass = mf.incomparable_share(mine, d)  # share of sum |d_t| from incomparable topics
                    out["incomparable_share"] = (mine == mf.INCOMPARABLE).mean(axis=1)
                    out["incomparable_mass"] = mass
                    out["rests_on_incomparable"] = out["significant"].to_numpy() & (np.nan_to_num(mass) > 0.5)
                frames.append(out)
                done += 1
                tick("comparisons with baselines", done, total)
    return pd.concat(frames, ignore_index=True)
