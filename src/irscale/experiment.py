"""evaluate -> (transform -> compare): the user-facing pipeline as plain functions."""

from __future__ import annotations

import glob
import os
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from irscale import __version__
from irscale.data import JudgedRuns, MissingTopics, _index, assemble, check_options, judge_run
from irscale.errors import IrscaleError
from irscale.io.trec import Duplicates, ExtraFields, Qrels, Run, ScorePrecision, read_qrels, read_run
from irscale.measures import Measure, parse_measures

DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "bpref")


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Per-topic scores of S systems on T topics for M measures.

    ``values[m, s, t]`` is the score of system s on topic t for measure m; NaN marks a
    topic left out of a system's scores (``missing_topics="drop"``).
    """

    measures: tuple[Measure, ...]
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    provenance: dict = field(default_factory=dict)
    judged: JudgedRuns | None = field(default=None, repr=False)  # the grades behind the scores

    def to_frame(self):
        """Tidy pandas DataFrame with columns system, topic, measure, value."""
        import pandas as pd

        M, S, T = self.values.shape
        return pd.DataFrame({
            "system": np.repeat(np.array(self.systems, dtype=object), T).tolist() * M,
            "topic": list(self.topics) * (S * M),
            "measure": np.repeat(np.array([str(m) for m in self.measures], dtype=object), S * T),
            "value": self.values.reshape(-1),
        }).dropna(subset=["value"]).reset_index(drop=True)

    def mean(self):
        """Mean over topics: DataFrame indexed by system, one column per measure
        (topics left out with ``missing_topics="drop"`` are not counted)."""
        import pandas as pd

        with np.errstate(invalid="ignore"):
            means = np.nanmean(self.values, axis=2) if np.isnan(self.values).any() else self.values.mean(axis=2)
        return pd.DataFrame(means.T, index=pd.Index(self.systems, name="system"),
                            columns=[str(m) for m in self.measures])

    def matrix(self, measure: str | Measure):
        """Topics x systems DataFrame of one measure (the input of the statistics)."""
        import pandas as pd

        m = self.index(measure)
        return pd.DataFrame(self.values[m].T, index=pd.Index(self.topics, name="topic"),
                            columns=pd.Index(self.systems, name="system"))

    def index(self, measure: str | Measure) -> int:
        from irscale.measures import parse_measure

        names = [str(x) for x in self.measures]
        if str(measure) in names:
            return names.index(str(measure))
        m = parse_measure(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            raise IrscaleError(f"measure {m} was not evaluated (have: {', '.join(map(str, self.measures))})") from None


def score(judged: JudgedRuns, measures: Iterable[str | Measure]) -> ScoreTable:
    """Compute measures on already judged runs."""
    ms = parse_measures(list(measures))
    values = np.empty((len(ms), len(judged.systems), len(judged.topics)), dtype=np.float64)
    for i, m in enumerate(ms):
        values[i] = m.batch(judged.grades, judged.topics)
    if judged.missing_topics == "drop":
        pos = {t: k for k, t in enumerate(judged.topics.names)}
        for s, name in enumerate(judged.systems):
            for t in judged.missing.get(name, []):
                values[:, s, pos[t]] = np.nan
    prov = {
        "irscale_version": __version__,
        "measures": [str(m) for m in ms],
        "depth": judged.depth,
        "missing_topics": judged.missing_topics,
        "topics": list(judged.topics.names),
        "max_grade": judged.topics.max_grade,
    }
    return ScoreTable(tuple(ms), judged.systems, judged.topics.names, values, prov, judged)


def expand_run_paths(items: Sequence[str | os.PathLike]) -> list[Path]:
    """Files named by ``items``: files as they are, directories (their files, sorted,
    hidden files skipped) and glob patterns."""
    out: list[Path] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise IrscaleError(f"{p}: directory holds no run files")
            out.extend(files)
        elif p.exists():
            out.append(p)
        elif any(ch in str(it) for ch in "*?["):
            hits = sorted(Path(h) for h in glob.glob(str(it)) if Path(h).is_file())
            if not hits:
                raise IrscaleError(f"{it}: the pattern matches no file")
            out.extend(hits)
        else:
            raise IrscaleError(f"{p}: no such file or directory")
    return out


def load_runs(
    runs: Sequence[str | os.PathLike | Run] | str | os.PathLike,
    qrels: Qrels,
    *,
    depth: int | None = None,
    missing_topics: MissingTopics = "zero",
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
) -> JudgedRuns:
    """Read and judge runs (files, directories, globs or :class:`Run` objects).

    Files are read and judged in parallel: in ``workers`` processes (default: one per
    CPU, at most 8) where the platform can fork and the calling process has no other
    thread, else in as many threads (decompression and numpy release the GIL, so
    threads still overlap). Only each run's small grade matrix travels back.
    ``workers=1`` reads in the calling thread.
    """
    check_options(depth, missing_topics)
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    items: list = []
    for r in runs:
        items.extend([r] if isinstance(r, Run) else expand_run_paths([r]))
    _index(qrels)  # build the lookup index once, before workers share it
    total = len(items)
    opts = dict(score_precision=score_precision, extra_fields=extra_fields, duplicates=duplicates)
    task = partial(_read_and_judge, qrels=qrels, depth=depth, opts=opts)
    n = min(workers or min(8, os.cpu_count() or 1), total)
    judged: list = []

    def collect(results):
        for i, res in enumerate(results):
            judged.append(res)
            if progress:
                progress(i + 1, total, res[0])

    if n <= 1:
        collect(map(task, items))
    elif _can_fork():
        global _SHARED_TASK
        _SHARED_TASK = task  # inherited by the forked workers: the qrels are not pickled
        try:
            ctx = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(n, mp_context=ctx) as ex:
                collect(ex.map(_run_shared_task, items, chunksize=2))
        finally:
            _SHARED_TASK = None
    else:
        with ThreadPoolExecutor(n) as ex:
            collect(ex.map(task, items))
    return assemble(judged, qrels, depth=depth, missing_topics=missing_topics)


_SHARED_TASK: Callable | None = None


def _run_shared_task(item):
    return _SHARED_TASK(item)


def _can_fork() -> bool:
    """Forking is safe only where it exists and no other thread could hold a lock."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _read_and_judge(item, *, qrels: Qrels, depth: int | None, opts: dict):
    run = item if isinstance(item, Run) else read_run(item, **opts)
    return (run.name, run.path, *judge_run(run, qrels, depth))


def evaluate(
    qrels: str | os.PathLike | Qrels,
    runs,
    measures: Iterable[str | Measure] = DEFAULT_MEASURES,
    depth: int | None = None,
    *,
    missing_topics: MissingTopics = "zero",
    score_precision: ScorePrecision = "float64",
    extra_fields: ExtraFields = "error",
    duplicates: Duplicates = "error",
    progress: Callable[[int, int, str], None] | None = None,
) -> ScoreTable:
    """Score runs against qrels, per topic, exactly like trec_eval 10.

    Parameters
    ----------
    qrels : path or Qrels
    runs : path, directory, glob pattern, Run, or a sequence of them; or a JudgedRuns
    measures : measure names (``"AP"``, ``"nDCG@10"``, ``"RBP(p=0.8)@30"``) or objects
    depth : int, optional
        Keep only the first ``depth`` documents of each topic of each run.
    missing_topics : {"zero", "drop", "error"}
        See :func:`irscale.data.judge`.
    score_precision : {"float64", "float32"}
        ``"float32"`` orders documents like trec_eval <= 9.0.8 and pytrec_eval.

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
    if not isinstance(qrels, Qrels):
        qrels = read_qrels(qrels)
    if isinstance(runs, JudgedRuns):
        judged = runs
    else:
        judged = load_runs(runs, qrels, depth=depth, missing_topics=missing_topics,
                           score_precision=score_precision, extra_fields=extra_fields,
                           duplicates=duplicates, progress=progress)
    table = score(judged, measures)
    table.provenance.update({"qrels": qrels.path, "score_precision": score_precision})
    return table


# -- transform ----------------------------------------------------------------------------------

PAPER_MEASURES = ("P", "R", "RR", "AP", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(base=2)",
                  "DCG(base=10)", "nDCG(base=2)", "nDCG(base=10)")


@dataclass(frozen=True)
class Ranked:
    """The interval-scaled ("ranked") version of ``measure`` at run length ``N``."""

    measure: Measure
    N: int
    ties: str = "unq"
    normalized: bool = False

    def __str__(self):
        opts = "".join([f", ties={self.ties}" if self.ties != "unq" else "",
                        ", normalized" if self.normalized else ""])
        return f"ranked({self.measure}{opts})"


def at_depth(measure: str | Measure, N: int) -> Measure:
    """``measure`` evaluated on runs cut at N (its cutoff set to N)."""
    import dataclasses

    from irscale.measures import parse_measure

    m = parse_measure(measure)
    if hasattr(m, "cutoff") and getattr(m, "cutoff") in (None, N):
        return dataclasses.replace(m, cutoff=N)
    raise IrscaleError(f"{m} has cutoff {getattr(m, 'cutoff', None)}, but the transform is at depth N={N}; "
                       f"give the measure without a cutoff")


def transform(
    data: "ScoreTable | JudgedRuns",
    measures: Iterable[str | Measure] | None = None,
    depth: int = 30,
    ties: str = "unq",
    normalize: bool = False,
    *,
    scheduler=None,
    cache: bool = True,
    progress: Callable[[int, int], None] | None = None,
    exact_values: bool = False,
) -> ScoreTable:
    """Add the interval-scaled version of each measure at run length ``depth`` = N.

    ``data`` is a :class:`ScoreTable` from :func:`evaluate` (its grades are kept with
    it) or :class:`~irscale.data.JudgedRuns`. Each run is cut at N and padded with
    non-relevant documents; for every measure the table holds the measure at N (e.g.
    ``AP@30``) and ``ranked(AP@30)``: phi of the run's value, 1..size (SPEC section 3;
    ``ties="min"|"max"|"mid"`` rank over all (c+1)^N runs instead; ``normalize``
    divides by the size). Recall-base-dependent measures map through their RB-free core.
    ``exact_values=True`` computes the measure columns from the same exact keys (equal
    values are then bitwise equal, which rank-based statistics need; they may differ
    from trec_eval's arithmetic in the last bit).

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
    from irscale.scales import TIES, build

    if ties not in TIES:
        raise IrscaleError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    if isinstance(data, ScoreTable):
        if data.judged is None:
            raise IrscaleError("this score table carries no grades (it was not made by evaluate); "
                               "pass the JudgedRuns or evaluate the runs first")
        judged = data.judged
        if measures is None:
            measures = [m for m in data.measures]
    else:
        judged = data
    if measures is None:
        raise IrscaleError("name the measures to transform")
    ms = [at_depth(m, depth) for m in measures]
    levels = max(judged.topics.max_grade, 1) + 1
    base = score(judged, ms)
    maps = []
    for i, m in enumerate(ms):
        maps.append(build(m, depth, levels, scheduler=scheduler, cache=cache))
        if progress:
            progress(i + 1, len(ms))
    ranked = np.empty((len(ms),) + base.values.shape[1:], dtype=np.float64)
    for i, rm in enumerate(maps):
        g = rm.space.grade_view(judged.grades).reshape(-1, depth)
        keys = rm.space.keys(g)
        phi = rm.phi_keys(keys, ties).reshape(ranked.shape[1:])
        ranked[i] = rm.normalized(phi) if normalize else phi
        if exact_values:
            nan = np.isnan(base.values[i])
            base.values[i] = rm.space.measure_values(keys.reshape(ranked.shape[1:]), judged.topics)
            base.values[i][nan] = np.nan
    ranked[np.isnan(base.values)] = np.nan  # topics dropped by missing_topics="drop"
    values = np.concatenate([base.values, ranked])
    cols = tuple(ms) + tuple(Ranked(m, depth, ties, normalize) for m in ms)
    prov = dict(base.provenance)
    prov.update({"transform": {"N": depth, "ties": ties, "normalized": normalize,
                               "maps": {str(rm.measure): {"size": rm.size, "engine": rm.engine,
                                                          "levels": rm.space.c + 1} for rm in maps}}})
    return ScoreTable(cols, base.systems, base.topics, values, prov, judged)
