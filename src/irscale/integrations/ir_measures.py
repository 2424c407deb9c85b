"""irscale's measures as ir_measures measures, through ir_measures' public extension
point (``ir_measures.define``), so ``ir_measures.calc_aggregate``, ``iter_calc``,
evaluators and PyTerrier's ``pt.Experiment`` can use them, ranked ones included.

>>> import ir_measures
>>> from irscale.integrations.ir_measures import irscale_measure, ranked
>>> qrels = {"1": {"a": 1, "b": 0, "c": 1}}
>>> run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
>>> AP, rAP = irscale_measure("AP"), ranked("AP", N=3)
>>> res = ir_measures.calc_aggregate([AP, rAP], qrels, run)
>>> res[AP], res[rAP]  # AP = (1/1 + 2/3) / 2; RB*AP = 5/3 is the 6th of 0,1/3,1/2,1,7/6,5/3,2,3
(0.8333333333333333, 6.0)

Each call hands the qrels and the run (pandas DataFrames, whatever form the caller gave)
to :func:`irscale.evaluate` (and :func:`irscale.transform` for a ranked measure), so the
per-topic values are irscale's own, to the bit, under the same options:

* the run is read like a run file: documents ordered by score, then docno, descending
  (trec_eval), scores as float64 unless ``score_precision="float32"`` (trec_eval <= 9.0.8
  and pytrec_eval); a docno twice for a topic is an error;
* run topics absent from the qrels are ignored; a qrels topic the run retrieves nothing
  for scores what irscale gives it under ``missing_topics="zero"`` (0 for a measure, the
  empty run's rank for a ranked one), without irscale's warning (ir_measures' convention);
* a ranked measure's number of relevance levels comes from the qrels handed in (top
  grade + 1, 2 under ``relevance="lenient"``) unless ``levels=`` fixes it: give it when
  the qrels of one call may lack the top grade of the collection, so that every call maps
  onto the same run space.

Measures are named ``irscale(AP@10)``, ``irscale(ranked(AP@30), relevance=lenient)``: the
``irscale(...)`` keeps them apart from ir_measures' own ``AP@10`` (ir_measures identifies
a measure by its name). The cutoff is part of irscale's measure name (``"AP@10"``), not
ir_measures' ``@`` (ir_measures refuses to evaluate ``irscale_measure("AP") @ 10``).

Importing this module also registers :class:`IrscaleProvider`, an ir_measures provider
named ``"irscale"`` that computes ir_measures' own measures (``P@10``, ``AP(rel=2)``,
``nDCG(dcg='exp-log2')@10``...) with irscale, wherever irscale computes them the way
ir_measures defines them (:data:`PEER_MEASURES`). ir_measures has no plugin discovery, so
the provider is not in ``ir_measures.DefaultPipeline`` until :func:`use_in_default_pipeline`
puts it there:

>>> from irscale.integrations.ir_measures import use_in_default_pipeline
>>> provider = use_in_default_pipeline()  # after ir_measures' own providers
>>> provider.NAME, provider.supports(ir_measures.P(rel=2)@5), provider.supports(ir_measures.ERR@5)
('irscale', True, False)
>>> run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
>>> next(iter(provider.iter_calc([ir_measures.AP], qrels, run))).value
0.8333333333333333

ir_measures is not a dependency of irscale: ``pip install ir-measures`` (0.4.3 tested).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

try:
    import ir_measures
except ImportError as e:  # pragma: no cover - ir_measures is in the test extra only
    raise ImportError("irscale.integrations.ir_measures needs ir_measures: pip install ir-measures") from e

from irscale.errors import ArgumentError, IrscaleError, IrscaleWarning, check_choice
from irscale.experiment import evaluate, transform
from irscale.io.trec import Qrels, Run, ScorePrecision, check_reader_options
from irscale.measures import Measure, at_depth, parse_measure
from irscale.measures.gains import gain_values
from irscale.plan import RELEVANCE
from irscale.table import Ranked
from irscale.validate import flag, integer
from irscale.validate import levels as check_levels

__all__ = ["irscale_measure", "ranked", "IrscaleProvider", "PEER_MEASURES", "DECLINED", "use_in_default_pipeline"]

# irscale's note on qrels topics a run retrieves nothing for: ir_measures scores them
# silently (its measures' DEFAULT), so the integration does too
_MISSING_NOTE = r"run .* has no results for \d+ qrels topic"
# ir_measures' providers score a topic without relevant documents 0 without a word: so does this one
_NO_RELEVANT_NOTE = r"\d+ qrels topic\(s\) have (no relevant document|no grade above 0)"


def irscale_measure(
    measure: str | Measure,
    *,
    score_precision: ScorePrecision = "float64",
    max_grade: int | None = None,
    judged_only: bool = False,
) -> ir_measures.Measure:
    """An irscale measure as an ir_measures measure.

    Parameters
    ----------
    measure : str or Measure
        irscale's name (``"AP"``, ``"nDCG@10"``, ``"RBP(p=0.8)@30"``) or measure object.
    score_precision : {"float64", "float32"}
        How run scores order documents (see :func:`irscale.evaluate`).
    max_grade : int, optional
        The top grade c of graded measures (default: the qrels' highest grade).
    judged_only : bool
        trec_eval's ``-J``: the run condensed to its judged documents first.

    Returns
    -------
    ir_measures.Measure
        Named ``irscale(<measure>)``; its per-topic values are
        ``irscale.evaluate(qrels, [run], [measure])``'s (``"rbp_resid(p=0.8)@10"``: RBP's
        residual beside ir_measures' ``RBP(p=0.8, rel=1)@10``).
    """
    m = parse_measure(measure)
    check_reader_options(score_precision, "error", "error")
    if max_grade is not None:
        max_grade = integer("max_grade", max_grade, minimum=1)
    judged_only = flag("judged_only", judged_only)
    opts = _options(
        score_precision=(score_precision, "float64"), max_grade=(max_grade, None), judged_only=(judged_only, False)
    )
    name = f"irscale({m}{opts})"

    def table(qrels: Qrels, run: Run):
        t = evaluate(qrels, [run], [m], score_precision=score_precision, max_grade=max_grade, judged_only=judged_only)
        return t, 0

    return _define(table, name, f"irscale's {m} (evaluated like trec_eval)", score_precision)


def ranked(
    measure: str | Measure,
    N: int = 30,
    *,
    levels: int | None = None,
    relevance: str = "graded",
    ties: str = "unq",
    normalize: bool = False,
    score_precision: ScorePrecision = "float64",
    judged_only: bool = False,
) -> ir_measures.Measure:
    """The ranked (interval-scaled) version of an irscale measure at run length N, as an
    ir_measures measure: per topic, phi of the measure's value over all runs of length N
    (:func:`irscale.transform`).

    Parameters
    ----------
    measure : str or Measure
        A measure with a ranked version (``"AP"``, ``"nDCG"``, ``"RBP(p=0.8)"``); its cutoff,
        if given, must be N.
    N : int
        The run length: runs are cut at N and padded with non-relevant documents.
    levels : int, optional
        Relevance levels of the run space (top grade + 1). Default: from the qrels of
        each call (the highest grade + 1; 2 under ``relevance="lenient"``). Given, grades
        above ``levels - 1`` count as ``levels - 1`` (with irscale's warning).
    relevance : {"graded", "lenient"}
        ``"lenient"`` binarises the qrels (grade >= 1 relevant), the 2021 paper's protocol
        for graded collections; then ``levels`` can only be 2.
    ties : {"unq", "min", "max", "mid"}
        How phi ranks a value shared by several runs (see :func:`irscale.transform`).
    normalize : bool
        Divide the ranks into (0, 1] (by the number of distinct values for ``"unq"``, of
        runs otherwise).
    score_precision : {"float64", "float32"}
        How run scores order documents.
    judged_only : bool
        trec_eval's ``-J``: the run condensed to its judged documents before it is cut at N.

    Returns
    -------
    ir_measures.Measure
        Named like ``irscale(ranked(AP@30), relevance=lenient, levels=2)``; its per-topic
        values are ``irscale.transform(irscale.evaluate(qrels, [run], [m]), [m], depth=N,
        relevance=relevance, ties=ties, normalize=normalize)``'s ranked column.

    Notes
    -----
    The rank map of a measure, N and number of levels is built once and cached on disk
    (``IRSCALE_CACHE_DIR``), so later calls, and other runs, only look it up.
    """
    from irscale.plan import plan_rank_maps
    from irscale.scales import TIES
    from irscale.scales.spaces import MAX_N

    N = integer("N", N, minimum=1, maximum=MAX_N)
    m = at_depth(measure, N)
    relevance = check_choice("relevance", relevance, RELEVANCE)
    ties = check_choice("ties", ties, TIES)
    normalize = flag("normalize", normalize)
    check_reader_options(score_precision, "error", "error")
    if levels is not None:
        levels = check_levels(levels)
        if relevance == "lenient" and levels != 2:
            raise ArgumentError(
                f"relevance='lenient' binarises the qrels, so the run space has 2 levels, not "
                f"levels={levels}; leave levels out, or use relevance='graded'"
            )
    plan_rank_maps([m], N, levels or 2)  # a measure without a ranked version fails here, not per run
    inner = str(Ranked(m, N, ties, normalize))
    judged_only = flag("judged_only", judged_only)
    opts = _options(
        relevance=(relevance, "graded"),
        levels=(levels, None),
        score_precision=(score_precision, "float64"),
        judged_only=(judged_only, False),
    )
    name = f"irscale({inner}{opts})"
    max_grade = None if levels is None or relevance == "lenient" else levels - 1

    def table(qrels: Qrels, run: Run):
        if max_grade is not None and qrels.values is not None:
            raise ArgumentError(
                f"{name}: levels={levels} fixes the integer grades 0..{max_grade}, and these qrels have "
                f"real-valued grades ({len(qrels.values)} levels: 0 and each distinct positive grade); "
                "leave levels out"
            )
        t = evaluate(
            qrels,
            [run],
            [m],
            score_precision=score_precision,
            max_grade=max_grade,
            keep_depth=max(N, 1),  # the grades transform needs, at any N
            judged_only=judged_only,
        )
        t = transform(t, [m], depth=N, ties=ties, normalize=normalize, relevance=relevance)
        return t, next(i for i, col in enumerate(t.measures) if isinstance(col, Ranked))

    return _define(table, name, f"irscale's ranked {m}: phi over all runs of length {N}", score_precision)


def _options(**pairs) -> str:
    """``", k=v"`` for each option not at its default."""
    return "".join(f", {k}={v}" for k, (v, default) in pairs.items() if v != default)


def _define(table, name: str, desc: str, score_precision: str) -> ir_measures.Measure:
    """The ir_measures measure whose per-topic values are column ``col`` of
    ``table(qrels, run) -> (ScoreTable, col)`` (the run's scores read at
    ``score_precision``, as :func:`irscale.read_run` would)."""

    def impl(qrels_df, run_df) -> Iterator[tuple[str, float]]:
        qrels, ids = _converted("qrels", qrels_df, None, _convert_qrels)
        run, _ = _converted(
            "run",
            run_df,
            (id(qrels), score_precision),  # holds qrels: its id stays its own
            lambda df: (_convert_run(df, ids, score_precision), qrels),
        )
        if run is None:
            return  # nothing retrieved for any qrels topic: ir_measures gives every topic DEFAULT
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", _MISSING_NOTE, IrscaleWarning)
            warnings.filterwarnings("ignore", _NO_RELEVANT_NOTE, IrscaleWarning)
            t, col = table(qrels, run)
        for topic, v in zip(t.topics, t.values[col, 0].tolist()):
            if v == v:  # not NaN
                yield ids[topic], v

    return ir_measures.define(impl, name, support_cutoff=False, pretty_name=name, short_desc=desc)


# The last qrels and run converted, by identity of ir_measures' DataFrames (weakly held):
# an evaluator hands the same frames to each of its measures, so several irscale measures
# convert them once per run.
_LAST: dict[str, tuple] = {}


def _converted(kind: str, df, key, convert):
    held = _LAST.get(kind)
    if held is not None and held[0]() is df and held[1] == key:
        return held[2]
    value = convert(df)
    try:
        _LAST[kind] = (weakref.ref(df), key, value)
    except TypeError:  # a frame type without weak references: convert every time
        pass
    return value


def _convert_qrels(df) -> tuple[Qrels, dict]:
    """The Qrels and ``{str(qid): qid}`` (ir_measures' own query ids, to answer with)."""
    return qrels_from_frame(df), {str(q): q for q in df["query_id"].unique().tolist()}


def _convert_run(df, ids: dict, score_precision: str) -> Run | None:
    """The run restricted to the qrels topics (irscale ignores the others anyway, with a
    warning), or None if it retrieves nothing for them."""
    df = df[df["query_id"].astype(str).isin(ids)]
    return run_from_frame(df, score_precision=score_precision) if len(df) else None


def qrels_from_frame(df) -> Qrels:
    """irscale's :class:`Qrels` from ir_measures' qrels DataFrame (query_id, doc_id,
    relevance)."""
    memory = _memory()
    if memory is not None:
        return memory.qrels_from_frame(df, path="<ir_measures qrels>")
    return Qrels.from_records(_rows(df, "relevance", int), path="<ir_measures qrels>")


def run_from_frame(df, name: str = "run", **reader) -> Run:
    """irscale's :class:`Run` from ir_measures' run DataFrame (query_id, doc_id, score);
    ``reader``: :func:`irscale.read_run`'s options (``score_precision``...)."""
    memory = _memory()
    if memory is not None:
        (run,) = memory.runs_from_frame(df, name=name, path="<ir_measures run>", **reader)
        return run
    return Run.from_records(_rows(df, "score", float), name=name, **reader)


def _memory():
    """``irscale.io.memory`` (numpy converters, no text formatted and parsed again) where
    this irscale has it, else None: the text round trip below gives the same Qrels and Run."""
    try:
        from irscale.io import memory
    except ImportError:
        return None
    return memory


def _rows(df, value: str, kind) -> Iterable[tuple]:
    missing = [c for c in ("query_id", "doc_id", value) if c not in df.columns]
    if missing:
        raise ArgumentError(f"expected columns query_id, doc_id, {value}; missing {', '.join(missing)}")
    return zip(df["query_id"].astype(str).tolist(), df["doc_id"].astype(str).tolist(), df[value].astype(kind).tolist())


# -- the ir_measures provider ----------------------------------------------------------


@dataclass(frozen=True)
class PeerMeasure:
    """How one ir_measures measure maps onto an irscale measure class.

    The parameters the provider accepts are derived from the two classes: an ir_measures
    parameter that is also a field of the irscale class (``cutoff``, ``rel``, ``p``,
    ``gains``) is passed on as it is; one listed in ``renamed`` is translated value by
    value into an irscale field (nDCG's ``dcg='exp-log2'`` is ``gains='exp'``); one in
    ``switch`` picks another irscale class when given (``NumRet(rel=1)`` is
    ``NumRelRet(rel=1)``); ``judged_only`` is served as trec_eval's ``-J`` (the run
    condensed to its judged documents: :func:`irscale.evaluate`'s ``judged_only``); any
    other (SetP's ``relative``) is accepted at its ir_measures default only, since irscale
    has no such parameter. ``required`` lists
    parameters that must be given, with the reason (the case where leaving them out means
    something irscale computes differently).
    """

    irscale: str
    renamed: Mapping[str, tuple[str, Mapping[object, object]]] = field(default_factory=dict)
    switch: Mapping[str, str] = field(default_factory=dict)
    required: Mapping[str, str] = field(default_factory=dict)


# ir_measures' measure name -> irscale's measure: the measures whose definitions agree
# (checked against pytrec_eval, gdeval, cwl_eval and msmarco by ir_measures' own test suite)
PEER_MEASURES: dict[str, PeerMeasure] = {
    "P": PeerMeasure("P"),
    "SetP": PeerMeasure("P"),  # no cutoff: trec_eval's set_P
    "R": PeerMeasure("R"),
    "SetR": PeerMeasure("R"),  # no cutoff: set_recall
    "SetF": PeerMeasure("F"),  # beta at its default 1 only (irscale's F is F1)
    "RR": PeerMeasure("RR"),
    "Rprec": PeerMeasure("Rprec"),
    "AP": PeerMeasure("AP"),
    "Bpref": PeerMeasure("bpref"),
    "Success": PeerMeasure("Success"),
    "nDCG": PeerMeasure("nDCG", renamed={"dcg": ("gains", {"log2": None, "exp-log2": "exp"})}),
    "NumRel": PeerMeasure("NumRel"),
    "NumRet": PeerMeasure("NumRet", switch={"rel": "NumRelRet"}),
    "RBP": PeerMeasure(
        "RBP",
        required={
            "rel": "graded RBP: irscale divides the grade by the top grade of the qrels (gain g/c), "
            "cwl_eval and trectools take the grade itself as gain"
        },
    ),
}

# ir_measures measures irscale computes, under the same name, differently from ir_measures'
# providers: not declared (the guide says the same)
DECLINED: dict[str, str] = {
    "ERR": "irscale's ERR stops at a document of grade g with probability (2^g - 1) / 2^c, c the "
    "top grade of the qrels (Chapelle et al.); gdeval, ir_measures' ERR provider, fixes c = 4",
    "Judged": "ir_measures' Judged@k divides by the documents retrieved where a run is shorter than "
    "k; irscale's nearest measure, P(rel=0)@k, divides by k and counts negative grades as unjudged",
    "nDCG(dcg='exp-log2', gains=...)": "irscale's gains=exp is the gain map 2^g - 1; a map on top "
    "of it has no counterpart",
}


def _irscale_class(name: str) -> type:
    from irscale.measures.registry import REGISTRY

    return REGISTRY[name]


def _fields(cls: type) -> set[str]:
    import dataclasses

    return {f.name for f in dataclasses.fields(cls)}


def _prototype(ir_name: str, peer: PeerMeasure) -> ir_measures.Measure:
    """ir_measures' measure ``ir_name`` with the parameter specs the provider supports,
    derived from the irscale class's fields (see :class:`PeerMeasure`)."""
    from ir_measures.providers.base import Any, Choices

    proto = ir_measures.measures.registry[ir_name]
    own = _fields(_irscale_class(peer.irscale)) | set(peer.switch)
    specs: dict[str, object] = {}
    for name, info in type(proto).SUPPORTED_PARAMS.items():
        if name == JUDGED_ONLY:
            specs[name] = Choices(False, True)
        elif name in peer.renamed:
            specs[name] = Choices(*peer.renamed[name][1])
        elif name in own:
            specs[name] = Any(required=name in peer.required)
        else:
            specs[name] = Choices(info.default)
    return type(proto)(**specs)


def translate(measure: ir_measures.Measure) -> Measure:
    """irscale's measure for an ir_measures measure (``P(rel=2)@5`` -> ``P(rel=2)@5``,
    ``nDCG(dcg='exp-log2')@10`` -> ``nDCG(gains=exp)@10``); ArgumentError where the
    provider does not declare it (:data:`PEER_MEASURES`, :data:`DECLINED`)."""
    from ir_measures.providers.base import NOT_PROVIDED

    peer = PEER_MEASURES.get(str(measure.NAME))
    if peer is None or not ir_measures.providers.Provider.supports(PROVIDER, measure):  # declared?
        raise ArgumentError(
            f"the irscale provider does not compute {measure}: {_why_not(measure)}; let another provider "
            "compute it (ir_measures.DefaultPipeline), or name an irscale measure with irscale_measure('...')"
        )
    name, kwargs = peer.irscale, {}
    given = {k: measure[k] for k in type(measure).SUPPORTED_PARAMS}
    for k, v in given.items():
        if v is NOT_PROVIDED:
            continue
        if k in peer.switch:
            name = peer.switch[k]
        if k in peer.renamed:
            field_name, values = peer.renamed[k]
            if values[v] is not None:
                if given.get(field_name, NOT_PROVIDED) is not NOT_PROVIDED:
                    raise ArgumentError(
                        f"the irscale provider does not compute {measure}: {DECLINED[_EXP_GAINS]}; give "
                        "dcg='exp-log2' or gains=, not both, or let another provider compute it"
                    )
                kwargs[field_name] = values[v]
        elif k in _fields(_irscale_class(name)):
            kwargs[k] = dict(v) if isinstance(v, dict) else v
    return _irscale_class(name)(**kwargs)


_EXP_GAINS = "nDCG(dcg='exp-log2', gains=...)"
JUDGED_ONLY = "judged_only"  # ir_measures' parameter for trec_eval's -J (irscale.evaluate's judged_only)


def judged_only(measure: ir_measures.Measure) -> bool:
    """Whether ``measure`` asks for trec_eval's ``-J`` (ir_measures' ``judged_only=True``)."""
    from ir_measures.providers.base import NOT_PROVIDED

    if JUDGED_ONLY not in type(measure).SUPPORTED_PARAMS:
        return False
    v = measure[JUDGED_ONLY]
    return v is not NOT_PROVIDED and bool(v)


def _why_not(measure: ir_measures.Measure) -> str:
    """Why the provider does not declare ``measure``."""
    from ir_measures.providers.base import NOT_PROVIDED

    name = str(measure.NAME)
    peer = PEER_MEASURES.get(name)
    if name in DECLINED or peer is None:
        return DECLINED.get(name, f"irscale has no measure that computes ir_measures' {name}")
    for k, reason in peer.required.items():
        if measure[k] is NOT_PROVIDED:
            return f"give {k}= ({reason})"
    own = _fields(_irscale_class(peer.irscale)) | set(peer.switch)
    for k, info in type(measure).SUPPORTED_PARAMS.items():
        if k in peer.renamed and measure[k] not in peer.renamed[k][1]:
            return f"{k} must be one of {', '.join(map(repr, peer.renamed[k][1]))}"
        if k not in own and k not in peer.renamed and k != JUDGED_ONLY and measure[k] != info.default:
            return f"irscale has no parameter {k} (only ir_measures' default {k}={info.default!r})"
    return "its parameters are not irscale's"


class IrscaleProvider(ir_measures.providers.Provider):
    """The ir_measures provider ``"irscale"``: ir_measures' measures computed by
    :func:`irscale.evaluate` (trec_eval's conventions; run scores read as float64 unless
    ``score_precision="float32"``), for the measures of :data:`PEER_MEASURES` with the
    parameters derived from irscale's measure classes. Per-topic values are yielded for
    the topics both the qrels and the run have; ir_measures gives the other qrels topics
    its default (0)."""

    NAME = "irscale"
    SUPPORTED_MEASURES = [  # those the installed ir_measures defines
        _prototype(name, peer) for name, peer in PEER_MEASURES.items() if name in ir_measures.measures.registry
    ]

    def __init__(self, score_precision: ScorePrecision = "float64"):
        super().__init__()
        check_reader_options(score_precision, "error", "error")
        self.score_precision = score_precision

    def supports(self, measure) -> bool:
        """Whether the measure is declared and irscale accepts its parameter values on any
        qrels (a gain map irscale refuses, or one a grade it leaves out would make decrease,
        as ``gains={0: 0, 1: 1, 2: 5}`` where a grade 3 gains 3; a p outside (0, 1): not
        supported, so the pipeline moves on to another provider)."""
        if not super().supports(measure):
            return False
        try:
            m = translate(measure)
            spec = getattr(m, "gains", None)
            if spec not in (None, "exp"):  # a grade the map leaves out gains its grade (trec_eval's rule):
                top = max(int(k) for k, _ in (part.split(":") for part in spec.split(",")))
                gain_values(spec, top + 1)  # refused where such a grade would break the order on some qrels
        except (IrscaleError, ValueError):
            return False
        return True

    def _evaluator(self, measures, qrels):
        return IrscaleEvaluator(list(measures), qrels, self.score_precision)


class IrscaleEvaluator(ir_measures.providers.Evaluator):
    """The evaluator of :class:`IrscaleProvider`: the qrels converted once, each run
    scored with one :func:`irscale.evaluate` call for all its measures (two where some
    measures ask for ``judged_only`` and others do not)."""

    def __init__(self, measures: list, qrels, score_precision: str):
        df = ir_measures.util.QrelsConverter(qrels).as_pd_dataframe()
        self.ids = {str(q): q for q in df["query_id"].unique().tolist()}
        super().__init__(measures, set(self.ids.values()))
        self.pairs = [(m, translate(m), judged_only(m)) for m in measures]
        self.columns = {
            j: list(dict.fromkeys(m for _, m, jm in self.pairs if jm == j)) for j in (False, True)
        }  # the measures of each evaluate call: full runs, and runs condensed to their judged documents
        self.qrels = qrels_from_frame(df) if len(df) else None
        self.score_precision = score_precision

    def _iter_calc(self, run):
        if self.qrels is None:
            return
        df = ir_measures.util.RunConverter(run).as_pd_dataframe()
        df = df[df["query_id"].astype(str).isin(self.ids)]
        if not len(df):
            return
        retrieved = set(df["query_id"].astype(str).tolist())
        r = run_from_frame(df, score_precision=self.score_precision)
        tables = {}
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", _MISSING_NOTE, IrscaleWarning)
            warnings.filterwarnings("ignore", _NO_RELEVANT_NOTE, IrscaleWarning)
            for j, columns in self.columns.items():
                if columns:
                    t = evaluate(
                        self.qrels,
                        [r],
                        columns,
                        score_precision=self.score_precision,  # type: ignore[arg-type]
                        judged_only=j,
                    )
                    tables[j] = (t, {m: i for i, m in enumerate(t.measures)})
        topics = next(iter(tables.values()))[0].topics
        for ti, topic in enumerate(topics):
            if topic in retrieved:
                for irm, m, j in self.pairs:
                    t, col = tables[j]
                    yield ir_measures.Metric(
                        query_id=self.ids[topic], measure=irm, value=float(t.values[col[m], 0, ti])
                    )


PROVIDER = ir_measures.providers.register(IrscaleProvider())


def use_in_default_pipeline(first: bool = False) -> IrscaleProvider:
    """Put the irscale provider into ``ir_measures.DefaultPipeline`` (what
    ``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator`` and PyTerrier's
    ``pt.Experiment`` use): after ir_measures' own providers (they keep computing what
    they compute, irscale the rest), or ``first=True`` before them, so that irscale
    computes every measure it declares. Calling it again moves the provider; returns it.
    """
    first = flag("first", first)
    providers = ir_measures.DefaultPipeline.providers
    providers[:] = [p for p in providers if p is not PROVIDER]
    if first:
        providers.insert(0, PROVIDER)
    else:
        providers.append(PROVIDER)
    return PROVIDER
