"""A score table written as TREC run files with an ir_metadata header that says how it
was made (:func:`write_runs`; CLI ``irscale transform ... --run-out DIR``).

Each column of the table becomes one run file: per topic, the systems are the
"documents" (docno field), ranked by their value of the column (ties: name descending,
trec_eval's order), so any TREC tool reads the per-topic scores. The header follows the
ir_metadata format (Breuer et al., SIGIR 2022) with its PRIMAD sections: platform
(Python, irscale, numpy, operating system), research goal, implementation (irscale and
the command), method (the column's measure, run length N, relevance protocol, ties,
normalisation), actor, and data (the qrels file and its SHA-256, and the ir_metadata
header of each input run that had one). Actor and research goal come from the input
runs' headers where they all agree, else a minimal entry.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from irscale._version import __version__
from irscale.errors import ArgumentError
from irscale.io.trec import ordered_run, write_run
from irscale.table import HalfWidth, Ranked, ResidualEnd, ScoreTable

__all__ = ["run_metadata", "RUN_SUFFIX", "write_runs"]


RUN_SUFFIX = ".run"


def write_runs(
    table: ScoreTable,
    directory: str | os.PathLike,
    *,
    columns: Sequence[str] | None = None,
    command: str | None = None,
) -> list[Path]:
    """Write the columns of ``table`` as TREC run files in ``directory`` (made if missing),
    one per column, each with an ir_metadata header (see the module docstring); returns
    the paths. ``columns``: the column names to write (``str`` of a column, as in
    :meth:`ScoreTable.to_frame`); default the ranked columns of a table from
    :func:`irscale.transform`, else every measure column. A file is named after its
    column (``ranked(AP@30)`` -> ``ranked_AP@30.run``), its tag is the column's name
    without spaces. ``command``: the command line recorded in the implementation section.

    Examples
    --------
    >>> import tempfile
    >>> from irscale import evaluate, transform
    >>> from irscale.io import Qrels, Run, read_run
    >>> q = Qrels.from_records([("1", "a", 1), ("1", "b", 0)])
    >>> runs = [Run.from_records([("1", "a", 2.0), ("1", "b", 1.0)], name="r1"),
    ...         Run.from_records([("1", "b", 2.0), ("1", "a", 1.0)], name="r2")]
    >>> t = transform(evaluate(q, runs, ["AP"]), ["AP"], depth=2)
    >>> (path,) = write_runs(t, tempfile.mkdtemp())
    >>> run = read_run(path)
    >>> run.name, [d.decode() for d in run.docno], run.score.tolist()
    ('ranked(AP@2)', ['r1', 'r2'], [3.0, 2.0])
    >>> run.metadata["method"]["evaluation"]["N"], sorted(run.metadata)[:3]
    (2, ['actor', 'data', 'implementation'])
    """
    if not isinstance(table, ScoreTable):
        raise ArgumentError(f"table must be an irscale ScoreTable (from evaluate or transform), not {type(table)}")
    names = [str(c) for c in table.measures]
    if columns is None:
        chosen = [k for k, c in enumerate(table.measures) if isinstance(c, Ranked)] or [
            k for k, c in enumerate(table.measures) if not isinstance(c, (Ranked, HalfWidth))
        ]
    else:
        if isinstance(columns, str):
            columns = [columns]
        unknown = [c for c in columns if c not in names]
        if unknown:
            raise ArgumentError(f"no column {unknown[0]!r} in the table; its columns are {', '.join(names)}")
        chosen = [names.index(c) for c in columns]
    spaced = [s for s in table.systems if not s or any(ch.isspace() for ch in s)]
    if spaced:
        raise ArgumentError(
            f"system {spaced[0]!r}: the systems are the documents (docno field) of the run files written, "
            "so their names must be non-empty without spaces; rename the run"
        )
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ArgumentError(f"{out}: cannot make the directory for the run files ({e.strerror})") from None
    paths, used = [], set()
    for k in chosen:
        column = table.measures[k]
        stem = re.sub(r"[^A-Za-z0-9@=.,_+-]+", "_", str(column)).strip("_") or f"column{k}"
        while stem in used:
            stem += "_"
        used.add(stem)
        tag = re.sub(r"\s+", "", str(column))
        run = _column_run(table, k, tag)
        paths.append(write_run(out / (stem + RUN_SUFFIX), run, run_metadata(table, column, tag, command)))
    return paths


def _column_run(table: ScoreTable, k: int, tag: str):
    """The run of column ``k``: per topic, the systems with a value (NaN: topic dropped),
    by value descending, names descending."""
    values = table.values[k]  # (systems, topics)
    S, T = values.shape
    keep = ~np.isnan(values.T.reshape(-1))  # topic-major
    topics = np.array([t.encode() for t in table.topics])
    order = np.argsort(topics, kind="stable")  # trec_eval order of topics: byte-wise
    rank_of = np.empty(T, dtype=np.int64)
    rank_of[order] = np.arange(T)
    codes = np.repeat(rank_of, S)[keep]
    docno = np.tile(np.array([s.encode() for s in table.systems]), T)[keep]
    score = values.T.reshape(-1)[keep].astype(np.float64)
    return ordered_run(tag, docno, score, topics[order], codes, np.empty(0, dtype=np.int64), "<memory>")


def _common(headers: dict, section: str, runs) -> object:
    """The input runs' ``section`` where every run has a header giving the same one, else
    None (one team's actor is not the whole evaluation's)."""
    seen = [headers[r].get(section) if isinstance(headers.get(r), dict) else None for r in runs]
    if seen and all(s == seen[0] for s in seen) and seen[0] is not None:
        return seen[0]
    return None


def run_metadata(table: ScoreTable, column, tag: str, command: str | None = None) -> dict:
    """The ir_metadata (PRIMAD sections) of the run file of ``column`` of ``table``."""
    from irscale.study import qrels_provenance

    prov = table.provenance if isinstance(table.provenance, dict) else {}
    record = prov.get("transform") or {}
    headers = prov.get("ir_metadata") or {}
    end = isinstance(column, ResidualEnd)  # phi at the upper end of RBP's residual
    ranked = column.ranked if end else column if isinstance(column, Ranked) else None
    measure = ranked.measure if ranked is not None else column
    N = ranked.N if ranked is not None else getattr(measure, "cutoff", None)
    evaluation = {
        "column": str(column),
        "measure": str(measure),
        "measures": list(prov.get("measures", [])),
        "N": N,
        "relevance": record.get("relevance") or "graded",
        "ties": ranked.ties if ranked is not None else None,
        "normalized": bool(ranked.normalized) if ranked is not None else None,
        "interval scale": "phi: ranks of the measure's distinct values over all runs of length N"
        if ranked is not None
        else None,
        "missing_topics": prov.get("missing_topics"),
        "score_precision": prov.get("score_precision"),
        "max_grade": prov.get("max_grade"),
        "judged_only": bool(prov.get("judged_only", False)),  # condensed runs (trec_eval -J)
    }
    if end:
        evaluation["residual end"] = "phi of the run with its unknown ranks within N at the top grade"
    if prov.get("grade_values"):  # real-valued grades: the grade of each level 0..max_grade
        evaluation["grade_values"] = list(prov["grade_values"])
    if ranked is not None and ranked.midpoint:  # transform's approx=: the midpoint of certified bounds
        evaluation["approx"] = {
            "tolerance": record.get("approx"),
            "bounds": (record.get("bounds") or {}).get(str(measure)),
            "note": "the value is the midpoint of certified bounds on the normalised phi",
        }
    rank_map = (record.get("maps") or {}).get(str(measure))
    if rank_map:
        evaluation["rank map"] = dict(rank_map)
    qrels = prov.get("qrels")
    if qrels and prov.get("qrels_sha256"):
        checked = {"qrels": qrels, "qrels_sha256": prov["qrels_sha256"]}
    else:
        checked = qrels_provenance(qrels) if qrels and Path(str(qrels)).is_file() else {"qrels": qrels}
    goal = _common(headers, "research goal", table.systems)
    goal = dict(goal) if isinstance(goal, dict) else {}
    goal.setdefault("evaluation", {"reported measures": [str(column)]})
    return {
        "tag": tag,
        "platform": {
            "software": {
                "libraries": {"python": platform.python_version(), "irscale": __version__, "numpy": np.__version__}
            },
            "operating system": {"system": platform.system(), "kernel": platform.release()},
            "hardware": {"architecture": platform.machine()},
        },
        "research goal": goal,
        "implementation": {
            "executable": {"cmd": command or "irscale.report.runs.write_runs (Python API)"},
            "source": {"lang": "python", "software": f"irscale {__version__}"},
        },
        "method": {
            "automatic": True,
            "evaluation": evaluation,
            "ranking": "per topic, the systems (docno field) by the column's value descending, ties by name "
            "descending (trec_eval's order)",
        },
        "actor": _common(headers, "actor", table.systems) or {"role": "evaluator (not recorded)"},
        "data": {
            "test collection": {
                "qrels": Path(str(checked.get("qrels"))).name if checked.get("qrels") else None,
                "qrels sha256": checked.get("qrels_sha256"),
                "topics": len(table.topics),
            },
            "systems": list(table.systems),
            "runs": {name: headers[name] for name in table.systems if name in headers},
        },
    }
