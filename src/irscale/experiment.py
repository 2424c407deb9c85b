"""evaluate -> (transform -> compare): the user-facing pipeline as plain functions."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from irscale._version import __version__
from irscale.data import (
    PAD,
    JudgedRuns,
    MissingTopics,
    check_options,
    grade_values_record,
    stack,
    topic_stats,
    warn_no_relevant,
)
from irscale.errors import (
    ArgumentError,
    IrscaleError,
    MeasureError,
    check_choice,
    count_text,
    warn,
)
from irscale.io.trec import (
    Duplicates,
    ExtraFields,
    Metadata,
    Qrels,
    ScorePrecision,
)
from irscale.loading import (
    ReadOptions,
    _Prefetch,
    _refuse_reading_options,
    as_qrels,
    check_progress,
    expand_run_paths,
    iter_judged,
    load_runs,
    read_options,
    reader_options,
)
from irscale.measures import RBP, Measure, RBPResid, parse_measures
from irscale.plan import (
    LINE,
    RELEVANCE,
    NoEngineError,
    NotMeaningfulWarning,
    TransformPlan,
    _check_bounded,
    _measures_to_transform,
    apply_relevance,
    check_lenient,
    plan_rank_maps,
    plan_transform,
    relevance_measures,
    warn_not_interval,
)
from irscale.table import WARN_CHECK_RUNS, HalfWidth, Ranked, ResidualEnd, ScoreTable, not_interval, scale_as_named
from irscale.validate import flag, integer, wrong_type

__all__ = [  # evaluate, score and transform; the rest re-exported for one release from irscale.table
    # (the score table), irscale.plan (the transform plan) and irscale.loading (reading runs), where they live now
    "apply_relevance",
    "as_qrels",
    "BOUNDS_MEMORY",
    "check_lenient",
    "check_progress",
    "DEFAULT_MEASURES",
    "evaluate",
    "expand_run_paths",
    "HalfWidth",
    "residual_measures",
    "ResidualEnd",
    "iter_judged",
    "judged_runs",
    "KEEP_DEPTH",
    "LINE",
    "load_runs",
    "NoEngineError",
    "not_interval",
    "NotMeaningfulWarning",
    "PAPER_MEASURES",
    "plan_rank_maps",
    "plan_transform",
    "Ranked",
    "reader_options",
    "RELEVANCE",
    "ReadOptions",
    "relevance_measures",
    "scale_as_named",
    "score",
    "ScoreTable",
    "STREAM_RUNS",
    "transform",
    "TransformPlan",
    "WARN_CHECK_RUNS",
    "warn_not_interval",
]

DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "bpref")


def score(judged: JudgedRuns, measures: Iterable[str | Measure]) -> ScoreTable:
    """Compute measures on already judged runs."""
    ms = parse_measures(list(measures)) if measures else []
    for m in ms:
        judged.check_depth(getattr(m, "cutoff", None), f"measure {m}")
    values = np.empty((len(ms), len(judged.systems), len(judged.topics)), dtype=np.float64)
    for i, m in enumerate(ms):  # on real-valued grades, as computed on their level codes
        values[i] = m.for_grades(judged.topics.values).batch(judged.grades, judged.topics)
    values[:, _dropped(judged)] = np.nan
    return ScoreTable(tuple(ms), judged.systems, judged.topics.names, values, _provenance(judged, ms), judged)


def _provenance(judged: JudgedRuns, ms) -> dict:
    prov: dict = {
        "irscale_version": __version__,
        "measures": [str(m) for m in ms],
        "depth": judged.depth,
        "missing_topics": judged.missing_topics,
        "topics": list(judged.topics.names),
        "max_grade": judged.topics.max_grade,
        **grade_values_record(judged.topics),
    }
    if judged.judged_only:  # rankings condensed to their judged documents (trec_eval -J)
        prov["judged_only"] = True
    if judged.metadata:  # the runs' ir_metadata headers, by run name (only where some run has one)
        prov["ir_metadata"] = {s: judged.metadata[s] for s in judged.systems if s in judged.metadata}
    return prov


KEEP_DEPTH = 100  # ranks of each run a ScoreTable keeps for transform and compare (evaluate's keep_depth)
STREAM_RUNS = 16  # runs scored together as they are read


def _score_stream(
    stream,
    qrels: Qrels,
    ms: list,
    *,
    depth: int | None,
    missing_topics: str,
    max_grade: int | None,
    keep_depth: int | None,
    judged_only: bool = False,
) -> ScoreTable:
    """Score judged runs ``STREAM_RUNS`` at a time as they arrive, keeping of each run its
    scores, its first ``keep_depth`` grades and its number of documents retrieved: memory
    grows with one run's size (times ``STREAM_RUNS``) and the kept grades, not with every
    rank of every run."""
    stats = topic_stats(qrels, max_grade)
    seen: dict[str, str] = {}
    values, kept, retrieved, missing = [], [], [], {}
    names: list[str] = []
    headers: dict[str, dict] = {}
    deepest = 0
    chunk: list = []
    for item in _with_end(stream):
        if item is not None:
            chunk.append(item)
        if chunk and (item is None or len(chunk) == STREAM_RUNS):
            part = stack(
                chunk, qrels, stats, depth=depth, missing_topics=missing_topics, seen=seen, judged_only=judged_only
            )
            chunk = []
            values.append(score(part, ms).values)
            deepest = max(deepest, part.grades.shape[2])
            kept.append(part.grades if keep_depth is None else part.grades[:, :, :keep_depth].copy())
            retrieved.append(part.num_ret)
            names.extend(part.systems)
            missing.update(part.missing)
            headers.update(part.metadata)
    width = max(k.shape[2] for k in kept)
    grades = np.full((len(names), len(stats), width), PAD, dtype=np.int16)
    s = 0
    for k in kept:
        grades[s : s + len(k), :, : k.shape[2]] = k
        s += len(k)
    cut = keep_depth is not None and deepest > keep_depth
    judged = JudgedRuns(
        tuple(names),
        stats,
        grades,
        missing,
        missing_topics,
        depth,
        keep_depth if cut else None,
        np.concatenate(retrieved) if cut else None,
        headers,
        judged_only,
    )
    return ScoreTable(
        tuple(ms), judged.systems, stats.names, np.concatenate(values, axis=1), _provenance(judged, ms), judged
    )


def _with_end(stream):
    yield from stream
    yield None


def evaluate(
    qrels: str | os.PathLike | Qrels,
    runs,
    measures: Iterable[str | Measure] | str = DEFAULT_MEASURES,
    depth: int | None = None,
    *,
    missing_topics: MissingTopics = "zero",
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    metadata: Metadata = "error",
    split_tags: bool = False,
    skip_invalid: bool = False,
    max_grade: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    keep_depth: int | None = KEEP_DEPTH,
    read: ReadOptions | None = None,
    judged_only: bool = False,
) -> ScoreTable:
    """Score runs against qrels, per topic, exactly like trec_eval 10.

    Parameters
    ----------
    qrels : path or Qrels
    runs : path, directory, glob pattern, Run, or a sequence of them; or a JudgedRuns
    measures : a measure name (``"AP"``, ``"nDCG@10"``, ``"RBP(p=0.8)@30"``) or object,
        or a list of them (names are case-insensitive)
    depth : int, optional
        Keep only the first ``depth`` documents of each topic of each run.
    missing_topics : {"zero", "drop", "error"}
        A qrels topic that a run retrieves nothing for: the run scores 0 on it with every
        measure (``"zero"``, like ``trec_eval -c``; a warning names run and topics), the
        topic is left out of that run's mean (``"drop"``, like trec_eval without ``-c``),
        or it is an error (``"error"``).
    score_precision : {"float64", "float32"}
        ``"float32"`` orders documents like trec_eval <= 9.0.8 and pytrec_eval.
    extra_fields : {"error", "ignore"}
        Run lines with more than six fields: an error, or the rest ignored (trec_eval).
    duplicates : {"error", "first"}
        A docno retrieved twice for a topic: an error, or only the first line kept.
    metadata : {"error", "warn", "ignore"}
        A run file's ir_metadata header (YAML between ``# ir_metadata.start`` and
        ``# ir_metadata.end`` at its top) is kept in ``provenance["ir_metadata"][run]``:
        a malformed one is an error naming the file and line (``"error"``) or is left out
        with a warning (``"warn"``); ``"ignore"`` never reads it.
    split_tags : bool
        Read a file holding several run tags as one run per tag (else an error).
    skip_invalid : bool
        Skip, with a warning, files that are not runs (a README in a directory of runs).
    max_grade : int, optional
        The top grade c of the relevance scale (graded measures use gain g / c, stop
        probability (2^g - 1) / 2^c, ideal rankings...); default the qrels' highest
        grade. Higher grades count as c, with a warning.
    keep_depth : int or None
        Runs are scored as they are read (16 at a time), so memory does not grow with
        every rank of every run; the table keeps the first ``keep_depth`` grades of each
        run (default 100) for :func:`transform` and :func:`compare` at run lengths up to
        that, and refuses, with this advice, anything that needs deeper ranks. ``None``
        keeps every rank.
    judged_only : bool
        trec_eval's ``-J`` (pytrec_eval's ``judged_docs_only_flag``): every measure is
        computed on each ranking with its unjudged documents (and those judged below 0)
        removed, the judged ones moved up: the condensed list, cut at ``depth`` before it
        is condensed. ``provenance["judged_only"]`` records it, and :func:`transform` and
        :func:`irscale.compare` then work on the condensed runs.
    read : ReadOptions, optional
        The reading options above as one object (:class:`irscale.loading.ReadOptions`,
        which also reads the qrels' grades as trec_eval does: ``integer_grades=True``);
        give it or the keywords, not both.

    Returns
    -------
    ScoreTable
        ``to_frame()`` gives the tidy table (system, topic, measure, value).

    Examples
    --------
    >>> from irscale import evaluate
    >>> from irscale.io import Qrels, Run
    >>> q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1)])
    >>> r = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)], name="r")
    >>> float(evaluate(q, [r], ["AP"]).values[0, 0, 0])  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    ms = parse_measures(measures)  # a misspelt measure fails before any file is read
    read = read_options(
        read,
        missing_topics=missing_topics,
        score_precision=score_precision,
        extra_fields=extra_fields,
        duplicates=duplicates,
        metadata=metadata,
        split_tags=split_tags,
        skip_invalid=skip_invalid,
        max_grade=max_grade,
        judged_only=judged_only,
    )
    depth = check_options(depth, read.missing_topics)
    keep_depth = integer("keep_depth", keep_depth, minimum=1, none=True)
    check_progress(progress)
    # gzip runs start inflating in a thread now, while the qrels are read and numba loads
    ahead = None if isinstance(runs, JudgedRuns) else _Prefetch(runs)
    try:
        return _evaluate(qrels, runs, ms, read, depth, keep_depth, progress)
    finally:
        if ahead is not None:
            ahead.close()


def _evaluate(qrels, runs, ms: list, read: ReadOptions, depth, keep_depth, progress) -> ScoreTable:
    """:func:`evaluate`'s work, its options checked."""
    qrels = read.qrels(qrels)
    for m in ms:  # a measure real-valued grades refuse (ERR) fails before any run is read
        m.for_grades(qrels.values)
    if isinstance(runs, JudgedRuns):
        if depth is not None or read != ReadOptions(integer_grades=read.integer_grades):
            given = ["depth"] * (depth is not None) + [  # (integer_grades: the qrels are still read)
                f.name
                for f in dataclasses.fields(read)
                if f.name != "integer_grades" and getattr(read, f.name) != getattr(ReadOptions(), f.name)
            ]
            _refuse_reading_options(given)
        table = score(runs, ms)
    else:
        stream = iter_judged(runs, qrels, depth=depth, progress=progress, read=read)
        table = _score_stream(
            stream,
            qrels,
            ms,
            depth=depth,
            missing_topics=read.missing_topics,
            max_grade=read.max_grade,
            keep_depth=keep_depth,
            judged_only=read.judged_only,
        )
    table.provenance.update({"qrels": qrels.path, "score_precision": read.score_precision})
    if table.judged is not None:
        warn_no_relevant(ms, table.judged.topics)  # each measure at its own rel
    return table


# -- transform ----------------------------------------------------------------------------------

PAPER_MEASURES = (
    "P",
    "R",
    "RR",
    "AP",
    "RBP(p=0.3)",
    "RBP(p=0.5)",
    "RBP(p=0.8)",
    "DCG(base=2)",
    "DCG(base=10)",
    "nDCG(base=2)",
    "nDCG(base=10)",
)


def transform(
    data: ScoreTable | JudgedRuns,
    measures: Iterable[str | Measure] | TransformPlan | None = None,
    depth: int | None = None,
    ties: str | Sequence[str] = "unq",
    normalize: bool = False,
    *,
    scheduler=None,
    cache: bool = True,
    progress: Callable[[int, int], None] | None = None,
    exact_values: bool = False,
    relevance: str | None = None,
    steps: Callable[[str, int, int], None] | None = None,
    approx: float | None = None,
    max_pairs: int | None = None,
    residuals: bool = False,
) -> ScoreTable:
    """Add the interval-scaled version of each measure at run length ``depth`` = N (30
    by default).

    ``measures``: names or Measures (by default a ScoreTable's own), or a
    :class:`~irscale.plan.TransformPlan` from :func:`irscale.plan.plan_transform`, which
    fixes N, the relevance setting, ``approx`` and ``max_pairs`` (give the plan or those
    keywords, never both) and, made before the runs were read, every measure's engine and
    scale verdict: nothing is derived again.

    ``data`` is a :class:`ScoreTable` from :func:`evaluate` (its grades are kept with
    it) or :class:`~irscale.data.JudgedRuns`. Each run is cut at N and padded with
    non-relevant documents; for every measure the table holds the measure at N (e.g.
    ``AP@30``) and ``ranked(AP@30)``: phi of the run's value, 1..size (the "unq" ranks of
    Ferrante, Ferro & Fuhr 2021; ``ties="min"|"max"|"mid"`` rank over all (c+1)^N runs
    instead; several strategies at once, ``ties=("unq", "mid")``, add one ranked column
    per measure and strategy, in that order; ``normalize`` divides "unq" ranks by the
    number of distinct values and the others by the number of runs, so all lie in
    (0, 1]). Recall-base-dependent measures
    map through their RB-free core. Each rank map is built once and each run's exact
    key computed once, whatever the number of strategies. ``exact_values=True``
    derives the measure columns from the same exact keys (equal values are then
    bitwise equal, which rank-based statistics need; they may differ from trec_eval's
    arithmetic in the last bit). ``relevance``: ``"graded"`` or ``"lenient"`` (binarised
    qrels, every measure binary, the 2021 paper's protocol for graded collections); see
    :func:`irscale.plan.apply_relevance` (the default is graded, with a note on graded qrels).
    ``progress(done, total)`` is called per measure; ``steps(measure, done, total)``
    within each rank map (buckets of a build, blocks of phi queries of the count engine).

    Runs of any length: phi is exact wherever an engine reaches N (closed forms at any N:
    P, R, F, RR, binary RBP with p <= 1/2; the others to N = 30-40). Beyond, ``approx=TOL``
    (with ``normalize=True``) gives RBP, DCG and nDCG from certified bounds on the
    normalised phi (:func:`irscale.scales.bounds.phi_bounds`): the ranked column holds
    the midpoint (``ranked(..., midpoint)``) and a :class:`HalfWidth` column after the
    ranked ones the half-width, so the exact normalised phi lies within midpoint +-
    half-width; an error is raised where a width would exceed TOL at the finest
    resolution tried. Measures with neither (AP beyond N = 35) are refused with the limit
    and the reason. ``provenance["transform"]["bounds"]`` records each bounded measure's
    method, resolution, assumptions and largest half-width. ``max_pairs`` lets the split
    engine list longer runs than it accepts by default (binary AP at N = 36:
    ``max_pairs=2**36``, about 20 minutes on 2 cores; see :func:`irscale.scales.build`).

    ``residuals=True`` (incomplete judgments; each RBP measure exact at N): after the
    columns above, ``rbp_resid(p=...)@N`` for each RBP measure (the weight of its unknown
    ranks: :class:`irscale.measures.RBPResid`) and, per tie strategy, a
    :class:`ResidualEnd` column, phi of the run with its unknown ranks within N at the top
    grade: RBP's ranked column is phi at the residual's lower end, this one at its upper
    end, from the same rank map.

    Examples
    --------
    >>> from irscale.io import Qrels, Run
    >>> q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1)])
    >>> r = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)], name="r")
    >>> t = transform(evaluate(q, [r], ["AP"]), ["AP", "P"], depth=3)
    >>> [str(m) for m in t.measures]
    ['AP@3', 'P@3', 'ranked(AP@3)', 'ranked(P@3)']
    >>> t.values[:, 0, 0].tolist()  # RB*AP = 5/3: 6th of 0,1/3,1/2,1,7/6,5/3,2,3; P@3 = 2/3: 3rd
    [0.8333333333333333, 0.6666666666666666, 6.0, 3.0]
    """
    plan = measures if isinstance(measures, TransformPlan) else None
    if plan is not None:
        _refuse_with_plan(depth=depth, relevance=relevance, approx=approx, max_pairs=max_pairs)
        depth = plan.depth
    tie_list, depth, normalize, exact_values = _transform_options(
        ties, 30 if depth is None else depth, normalize, exact_values, progress, steps
    )
    judged = judged_runs(data)
    judged.check_depth(depth, f"transform at run length N = {depth}")
    _warn_padding(judged, depth)
    asked = relevance if plan is None else plan.relevance
    named = _measures_to_transform(data, measures, depth, asked) if plan is None else [p.measure for p in plan.measures]
    as_judged = judged  # a judgement below 0 stays unknown for RBP's residual under any relevance
    judged, relevance = apply_relevance(judged, named, asked)
    levels = max(judged.topics.max_grade, 1) + 1
    warn_no_relevant(named, judged.topics)
    if plan is None:  # the plan made here, from the judged runs' levels (the CLI makes it before reading them)
        plan = plan_transform(
            named, depth, levels, approx=approx, max_pairs=max_pairs, relevance=asked, values=judged.topics.values
        )
    plan.check_data(levels, judged.topics.values)
    ms = [p.measure for p in plan.measures]  # as named (each computed as p.computed)
    bounded = [k for k, p in enumerate(plan.measures) if p.bounded]  # positions of the bounded measures
    _check_bounded([plan.measures[k] for k in bounded], tie_list, depth, normalize)
    resid = residual_measures(plan, flag("residuals", residuals))  # {position of an RBP measure: its residual}
    unique = list(dict.fromkeys(ms))  # a measure named twice (P and P@10 at depth 10) is scored once
    base = score(judged, [] if exact_values else unique)
    building = {"scheduler": scheduler, "cache": cache, "max_pairs": plan.max_pairs}
    values, maps, bounds, ids = _columns(
        plan, judged, base, tie_list, normalize, exact_values, building, steps, progress, resid, as_judged
    )
    values[:, _dropped(judged)] = np.nan  # topics dropped by missing_topics="drop"

    said = [p.statement for p in plan.measures]  # the plan's verdicts, on each measure as named
    ranked = [
        Ranked(p.measure, depth, t, normalize or p.bounded, p.statement, p.bounded)
        for t in tie_list
        for p in plan.measures
    ]
    shared = tuple(dict.fromkeys(resid.values()))  # RBP measures with one p share their residual
    cols: tuple[Measure | Ranked | HalfWidth | ResidualEnd, ...] = (
        tuple(ms) + tuple(ranked) + tuple(HalfWidth(ranked[k]) for k in bounded) + shared
    )
    cols += tuple(ResidualEnd(ranked[len(ms) * t + k]) for t in range(len(tie_list)) for k in resid)
    record = _transform_record(
        depth, relevance, ties if isinstance(ties, str) else tie_list, normalize, exact_values, maps, zip(ms, said)
    )
    if plan.approx is not None:
        record.update(approx=plan.approx, bounds=_bounds_provenance(bounds, depth, levels))
    if resid:
        record["residuals"] = [str(m) for m in shared]
    prov = _transformed_provenance(data, base.provenance, ms, record)
    return ScoreTable(
        cols, base.systems, base.topics, values, prov, judged, {str(c): ids[c.measure] for c in ranked if c.midpoint}
    )


def residual_measures(plan: TransformPlan, residuals: bool) -> dict[int, RBPResid]:
    """The RBP measures of ``plan`` whose residual transform gives (``residuals=True``):
    their positions and residuals at N; refused where there is none, or where one is
    bounded (no rank map to place the residual's upper end in)."""
    if not residuals:
        return {}
    resid = [k for k, p in enumerate(plan.measures) if isinstance(p.computed, RBP)]
    if not resid:
        raise ArgumentError(
            "residuals=True (--residuals) gives RBP's residual and phi at its upper end, and no measure asked is "
            "RBP: add one, e.g. 'RBP(p=0.8)'"
        )
    bounded = [str(plan.measures[k].measure) for k in resid if plan.measures[k].bounded]
    if bounded:
        raise ArgumentError(
            f"residuals=True (--residuals) needs an exact rank map for {', '.join(bounded)}, which is bounded at "
            f"N = {plan.depth} (approx): take a run length an exact engine reaches, or leave residuals out"
        )
    return {k: RBPResid(p=plan.measures[k].computed.p, cutoff=plan.depth) for k in resid}  # type: ignore[attr-defined]


def _upper_runs(judged: JudgedRuns, read: JudgedRuns, depth: int) -> np.ndarray:
    """The judged grades cut at N with every unknown rank (unjudged, judged below 0, past
    the run's end: told from ``read``, the runs as judged, before lenient relevance made a
    judgement below 0 a 0) at the top grade: RBP's residual's upper end within N."""
    from irscale.scales.spaces import cut_and_pad

    g = cut_and_pad(judged.grades, depth, fill=int(PAD))
    unknown = cut_and_pad(read.grades, depth, fill=int(PAD)) < 0
    return np.where(unknown, judged.topics.max_grade, g).astype(np.int16)


def _columns(
    plan: TransformPlan,
    judged: JudgedRuns,
    base,
    tie_list,
    normalize,
    exact_values,
    building,
    steps,
    progress,
    resid: dict[int, RBPResid] | None = None,
    read: JudgedRuns | None = None,
):
    """transform's columns, measure by measure as the plan says: each measure's values (from
    ``base``, the scored table, or with ``exact_values`` from its exact keys), its phi per tie
    strategy from its rank map (the plan's space and engine), or from certified bounds the
    midpoint and half-width; for the measures at ``resid`` (RBP, ``residuals=True``) their
    residual (each distinct one once) and phi of their upper runs (:func:`_upper_runs`; ``read``:
    the runs as judged, before the relevance setting), queried from the same map.
    Returns (values, the maps' records, the bounds, the exact-value ids of bounded measures)."""
    from irscale.scales import build

    depth, levels = plan.depth, plan.levels
    ms = [p.measure for p in plan.measures]
    unique = list(dict.fromkeys(ms))
    bounded = [k for k, p in enumerate(plan.measures) if p.bounded]
    shape = (len(judged.systems), len(judged.topics))
    resid = resid or {}
    at = list(resid)  # the positions of the RBP measures, in column order
    residuals = list(dict.fromkeys(resid.values()))  # RBP measures with one p share their residual
    first = len(ms) * (1 + len(tie_list)) + len(bounded)  # the residual columns start here
    ends = first + len(residuals)  # and the columns of phi at their upper ends here
    values = np.empty((ends + len(resid) * len(tie_list),) + shape, dtype=np.float64)
    maps, bounds, ids = [], {}, {}
    read = judged if read is None else read
    upper = _upper_runs(judged, read, depth) if resid else None
    if resid:
        values[first:ends] = score(read, residuals).values
    for i, p in enumerate(plan.measures):
        m, space = p.measure, p.space
        step = (lambda done, total, lab=str(m): steps(lab, done, total)) if steps else None
        keys = space.keys(space.grade_view(judged.grades).reshape(-1, depth))
        values[i] = (
            space.measure_values(keys.reshape(shape), judged.topics) if exact_values else base.values[unique.index(m)]
        )
        if p.bounded:
            if m not in bounds:  # a measure named twice is bounded once
                bounds[m], ids[m] = _bounds_and_ids(
                    p.computed, judged, depth, levels, plan.approx, space, step, building["cache"], keys
                )
                _warn_uncertain(m, bounds[m], ids[m].reshape(-1))
            mid, half = _midpoint_and_half_width(bounds[m])
            for k in range(len(tie_list)):  # the runs' values are distinct (checked): one phi for every strategy
                values[len(ms) * (1 + k) + i] = mid.reshape(shape)
            values[len(ms) * (1 + len(tie_list)) + bounded.index(i)] = half.reshape(shape)
        else:
            hi = space.keys(space.grade_view(upper).reshape(-1, depth)) if upper is not None and i in resid else None
            asked = keys if hi is None else np.concatenate([keys, hi])  # one map answers both ends
            rm = build(p.computed, depth, levels, progress=step, queries=asked, planned=(space, p.engine), **building)
            maps.append((m, _map_record(m, rm)))  # what the provenance says of it: the map itself is let go
            for k, phi in enumerate(_phi_columns(rm, keys, tie_list, normalize)):  # in the order asked
                values[len(ms) * (1 + k) + i] = phi.reshape(shape)
            if hi is not None:
                for k, phi in enumerate(_phi_columns(rm, hi, tie_list, normalize)):
                    values[ends + len(resid) * k + at.index(i)] = phi.reshape(shape)
            del rm  # (a large one, 1.5 GiB at DCG(base=10)@20 on 4 levels, is freed before the next is built)
        if progress:
            progress(i + 1, len(ms))
    return values, maps, bounds, ids


def _refuse_with_plan(**given) -> None:
    """A transform plan fixes N, the relevance setting, approx and max_pairs: the keywords
    given beside it are refused, not silently overridden."""
    named = [k for k, v in given.items() if v is not None]
    if named:
        raise ArgumentError(
            f"transform got a TransformPlan and {', '.join(named)}: the plan fixes "
            "depth, relevance, approx and max_pairs; give the plan or those keywords, not both"
        )


def _transformed_provenance(data, scored: dict, ms: list, record: dict) -> dict:
    """A transformed table's provenance: the scoring's (``scored``) with the measures at N,
    what evaluate recorded of the qrels and the reading, and the transform's ``record``."""
    prov = dict(scored, measures=[str(m) for m in ms])
    if isinstance(data, ScoreTable):
        prov.update(
            {k: data.provenance[k] for k in ("qrels", "qrels_sha256", "score_precision") if k in data.provenance}
        )
    prov["transform"] = record
    return prov


def _transform_options(ties, depth, normalize, exact_values, progress, steps) -> tuple[list[str], int, bool, bool]:
    """transform's options checked: (the tie strategies, N, normalize, exact_values)."""
    from irscale.scales.spaces import MAX_N

    tie_list = _tie_list(ties)
    depth = integer("depth", depth, minimum=1, maximum=MAX_N)
    normalize = flag("normalize", normalize)
    exact_values = flag("exact_values", exact_values)
    check_progress(progress)
    check_progress(steps)
    return tie_list, depth, normalize, exact_values


def _tie_list(ties) -> list[str]:
    """The tie strategies asked for (one name or a list), checked, each once, in the order given."""
    from irscale.scales import TIES

    tie_list = [ties] if isinstance(ties, str) else list(ties) if isinstance(ties, (list, tuple)) else None
    if not tie_list:
        raise ArgumentError(f"ties must be one of {', '.join(map(repr, TIES))} or a list of them, not {ties!r}")
    return list(dict.fromkeys(check_choice("ties", t, TIES) for t in tie_list))


def _warn_padding(judged: JudgedRuns, depth: int) -> None:
    """Warn (at transform's caller) where N is longer than every run: all are padded to N."""
    longest = int(np.max(judged.num_ret, initial=0))
    if depth > longest:
        warn(
            f"N = {depth} is longer than every run (the longest has {longest} documents): runs are padded with "
            "non-relevant documents to N",
            stacklevel=3,
        )


def _bounds_and_ids(m: Measure, judged: JudgedRuns, depth, levels, approx, space, step, cache, keys) -> tuple:
    """Certified bounds on the phi of every run of ``judged`` (:func:`_bounded`) and the
    identities of the runs' exact values (one per system and topic)."""
    b = _bounded(m, depth, levels, _judged_view(judged.grades, depth, levels), approx, space, step, cache, keys)
    return b, np.unique(keys, return_inverse=True)[1].reshape(len(judged.systems), len(judged.topics))


def _midpoint_and_half_width(b) -> tuple[np.ndarray, np.ndarray]:
    """The midpoint of each run's bounds [lo, hi] and the half-width rounded up, so that
    [lo, hi] lies within midpoint +- half-width exactly."""
    mid = (b.lo + b.hi) / 2
    return mid, np.nextafter(np.maximum(b.hi - mid, mid - b.lo), np.inf)


def _phi_columns(rm, keys: np.ndarray, tie_list: list[str], normalize: bool) -> list[np.ndarray]:
    """phi of the runs' ``keys`` under each tie strategy, in the order of ``tie_list``
    (normalised where asked)."""
    ranks = rm.rank(keys, tie_list)
    return [rm.normalized(ranks[tie], tie) if normalize else ranks[tie] for tie in tie_list]


def _transform_record(N: int, relevance, ties, normalize: bool, exact_values: bool, maps: list, theory) -> dict:
    """What ``provenance["transform"]`` records: the options, each rank map's size, engine and
    levels by the measure's name (``maps``: pairs of a measure and :func:`_map_record` of its
    rank map; on real-valued grades ``computed_as`` is the measure on the level codes), and each measure's scale
    (``theory``: pairs of a measure and its statement or None)."""
    return {
        "N": N,
        "relevance": relevance,
        "ties": ties,
        "normalized": normalize,
        "exact_values": exact_values,
        "maps": {str(m): record for m, record in maps},
        "theory": {str(m): st.as_dict() for m, st in theory if st is not None},
    }


def _map_record(m, rm) -> dict:
    record = {"size": rm.size, "engine": rm.engine, "levels": rm.space.c + 1}
    if str(rm.measure) != str(m):
        record["computed_as"] = str(rm.measure)
    return record


def _bounds_provenance(bounds: dict, depth: int, levels: int) -> dict:
    """What transform's provenance records of each bounded measure's certified bounds."""
    from irscale.scales import space_for

    return {
        str(m): {
            "method": b.method,
            "resolution": b.resolution,  # the size exactly, never through a float (4^1000)
            "size": count_text(b.size, space_for(m, depth, levels - 1).c + 1, exact=True, sep=""),
            "confidence": b.confidence,
            "assumptions": b.assumptions,
            "largest_half_width": b.width / 2,
            "table_max_width": b.max_width,
            "seconds": round(b.seconds, 3),
            **{k: str(v) for k, v in b.details.items()},
        }
        for m, b in bounds.items()
    }


def _warn_uncertain(m: Measure, b, ids: np.ndarray) -> None:
    """Warn where the bounds leave the order of more than 1% of the pairs of distinct
    values of the runs uncertain (their intervals overlap): the ranked column then cannot
    tell those runs apart (typically runs far below the run space's typical run, where
    phi / |M| is tinier than any absolute width)."""
    from irscale.stats import unordered_share

    share, n = unordered_share(b.lo, b.hi, ids), len(np.unique(ids))
    if share > 0.01:
        warn(
            f"ranked({m}): the --approx bounds leave the order of {share:.0%} of the pairs of the runs' {n:,} "
            "values uncertain; compare flags decisions that could flip (could_flip_ranked)",
            stacklevel=4,
        )


def _judged_view(grades: np.ndarray, depth: int, levels: int) -> np.ndarray:
    """The judged grades cut at ``depth``, padded with non-relevant documents and clipped
    to 0..levels-1 (sentinels: 0), one row per run and topic: what the bounds take (they
    binarise for binary measures themselves)."""
    from irscale.scales.spaces import cut_and_pad

    return np.clip(cut_and_pad(grades, depth), 0, levels - 1).astype(np.int8).reshape(-1, depth)


BOUNDS_MEMORY = 4 * 2**30  # bytes the bounds tables of one measure may take (a retry beyond is refused)


def _bounded(m: Measure, depth: int, levels: int, grades: np.ndarray, approx: float, space, step, cache: bool, keys):
    """Certified bounds on the normalised phi of every run (``grades``: judged grades
    0..levels-1, one row per run; ``keys``: their exact keys) no wider than ``approx``: at a first resolution, then
    once at the resolution that should reach ``approx`` (widths shrink about as 1 /
    resolution), unless its tables would pass BOUNDS_MEMORY."""
    from irscale.scales.bounds import bounds_resolution, phi_bounds

    if step:
        step(0, 1)
    first, per_unit = bounds_resolution(space, approx)
    b = phi_bounds(m, depth, grades, levels, resolution=first, cache=cache, keys=keys)
    if b.width > approx:
        resolution = int(b.resolution * b.width / approx * 1.25) + 1
        largest = int(BOUNDS_MEMORY / per_unit)  # the tables' memory
        if resolution > largest:
            reach = b.width * b.resolution / largest
            raise MeasureError(
                f"{m} at N = {depth}: the certified bounds are {b.width:.3g} wide at resolution "
                f"{b.resolution:,}, wider than approx={approx:g}; reaching it needs a resolution of "
                f"{resolution:,}, whose tables would take more than {BOUNDS_MEMORY / 2**30:.0f} GiB; "
                f"ask for approx={reach * 1.3:.2g} or more"
            ) from None
        try:
            b = phi_bounds(m, depth, grades, levels, resolution=resolution, cache=cache, keys=keys)
        except IrscaleError as e:
            raise MeasureError(
                f"{m} at N = {depth}: the certified bounds are {b.width:.3g} wide at resolution "
                f"{b.resolution:,}, wider than approx={approx:g}, and a resolution of {resolution:,} "
                f"is refused ({e}); ask for approx={b.width * 1.01:.2g} or more"
            ) from None
        if b.width > approx:
            raise MeasureError(
                f"{m} at N = {depth}: the certified bounds are {b.width:.3g} wide even at resolution "
                f"{b.resolution:,}, wider than approx={approx:g}; ask for approx={b.width * 1.01:.2g} "
                f"or more"
            )
    if step:
        step(1, 1)
    return b


def judged_runs(data: ScoreTable | JudgedRuns) -> JudgedRuns:
    """The judged runs behind ``data`` (a ScoreTable from :func:`evaluate`, or JudgedRuns):
    what transform and compare work on."""
    if isinstance(data, ScoreTable):
        if data.judged is None:
            raise ArgumentError(
                "this score table carries no grades (it was not made by irscale.evaluate); "
                "pass the JudgedRuns or evaluate the runs first"
            )
        return data.judged
    if isinstance(data, JudgedRuns):
        return data
    raise wrong_type(
        "data",
        data,
        "the ScoreTable returned by irscale.evaluate(qrels, runs) (or JudgedRuns); evaluate the runs first",
    )


def _dropped(judged: JudgedRuns) -> np.ndarray:
    """(systems, topics) mask of the topics left out of a system's scores
    (``missing_topics="drop"``)."""
    out = np.zeros((len(judged.systems), len(judged.topics)), dtype=bool)
    if judged.missing_topics == "drop":
        pos = {t: k for k, t in enumerate(judged.topics.names)}
        for s, name in enumerate(judged.systems):
            for t in judged.missing.get(name, []):
                out[s, pos[t]] = True
    return out
