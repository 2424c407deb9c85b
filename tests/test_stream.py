"""evaluate() scores runs as they are read, STREAM_RUNS at a time, and keeps only the
first keep_depth grades of each run: the same scores as judging every run at once, and
a clear refusal for anything that needs the ranks it let go."""

import warnings

import numpy as np
import pytest

from irscale import evaluate, transform
from irscale.data import PAD
from irscale.errors import ArgumentError, PolicyError
from irscale.experiment import STREAM_RUNS, load_runs, score
from irscale.io import read_qrels

MEASURES = ["AP", "P@10", "nDCG@10", "RR", "Rprec", "bpref", "NumRet", "P"]


def _files(tmp_path, n, depth=150, topics=4, seed=3):
    rng = np.random.default_rng(seed)
    q = [f"{t} 0 d{d} {rng.integers(0, 3)}" for t in range(1, topics + 1) for d in range(0, 300, 3)]
    (tmp_path / "qrels").write_text("\n".join(q) + "\n")
    paths = []
    for i in range(n):
        size = int(rng.integers(depth // 2, depth + 1))  # runs of different lengths
        rows = [
            f"{t} Q0 d{d} {k} {1000 - k} r{i}"
            for t in range(1, topics + 1)
            for k, d in enumerate(rng.permutation(400)[:size])
        ]
        if i == 5:  # one run lacks topic 2
            rows = [r for r in rows if not r.startswith("2 ")]
        p = tmp_path / f"r{i}.txt"
        p.write_text("\n".join(rows) + "\n")
        paths.append(p)
    return tmp_path / "qrels", paths


def test_streamed_scores_equal_all_runs_at_once(tmp_path):
    qrels, paths = _files(tmp_path, 2 * STREAM_RUNS + 3)  # three chunks, the last one short
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = evaluate(qrels, paths, MEASURES, keep_depth=40)
    whole = score(load_runs(paths, read_qrels(qrels)), MEASURES)
    assert table.systems == whole.systems == tuple(f"r{i}" for i in range(len(paths)))
    assert np.array_equal(table.values, whole.values)
    # the missing topic is warned about once, for its run
    assert sum("has no results for 1 qrels topic" in str(w.message) for w in caught) == 1
    # what is kept: the first 40 ranks, and the documents retrieved counted on the whole run
    j = table.judged
    assert j.kept == 40 and j.grades.shape == (len(paths), 4, 40)
    full = load_runs(paths, read_qrels(qrels)).grades
    assert np.array_equal(j.grades, full[:, :, :40])
    assert np.array_equal(j.num_ret, (full != PAD).sum(axis=-1))


def test_kept_grades_serve_transform_and_refuse_deeper(tmp_path):
    qrels, paths = _files(tmp_path, 5)
    table = evaluate(qrels, paths, ["AP"], keep_depth=30)
    full = evaluate(qrels, paths, ["AP"], keep_depth=None)
    assert full.judged.kept is None
    got = transform(table, ["P", "RR"], depth=30)
    want = transform(full, ["P", "RR"], depth=30)
    assert np.array_equal(got.values, want.values)
    with pytest.raises(
        ArgumentError,
        match=r"transform at run length N = 31 needs the first 31 ranks.*"
        r"keep_depth=31",
    ):
        transform(table, ["P"], depth=31)
    with pytest.raises(ArgumentError, match=r"measure AP needs every rank.*keep_depth=None"):
        score(table.judged, ["AP"])
    assert np.array_equal(score(table.judged, ["P@30"]).values, score(full.judged, ["P@30"]).values)


def test_short_runs_are_kept_whole(tmp_path):
    qrels, paths = _files(tmp_path, 3, depth=20)
    table = evaluate(qrels, paths, ["AP"])  # default keep_depth=100: nothing was cut
    assert table.judged.kept is None
    assert np.array_equal(score(table.judged, ["AP"]).values, table.values)


def test_names_stay_unique_across_chunks(tmp_path):
    qrels, paths = _files(tmp_path, STREAM_RUNS + 2)
    last = paths[-1]
    last.write_text(last.read_text().replace(f" r{len(paths) - 1}\n", " r0\n"))
    with pytest.raises(PolicyError, match=r"two runs are named 'r0'"):
        evaluate(qrels, paths, ["AP"])


def test_keep_depth_is_checked(tmp_path):
    qrels, paths = _files(tmp_path, 1)
    with pytest.raises(ArgumentError, match="keep_depth"):
        evaluate(qrels, paths, ["AP"], keep_depth=0)
