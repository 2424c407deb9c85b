"""Runs are read and judged in worker processes (fork) or threads; every way must give
the same matrix, and errors raised in a worker must reach the caller intact."""

import pickle
import threading

import numpy as np
import pytest

from irscale.errors import InputFormatError
from irscale.io import read_qrels
from irscale.loading import _can_fork, load_runs


def _write_runs(tmp_path, n=6):
    rng = np.random.default_rng(7)
    lines = [f"{t} 0 d{d} {rng.integers(0, 3)}" for t in range(1, 6) for d in range(30)]
    (tmp_path / "qrels").write_text("\n".join(lines) + "\n")
    paths = []
    for i in range(n):
        rows = [f"{t} Q0 d{d} 0 {rng.random():.4f} r{i}" for t in range(1, 6) for d in rng.permutation(40)[:25]]
        p = tmp_path / f"run{i}.txt"
        p.write_text("\n".join(rows) + "\n")
        paths.append(p)
    return read_qrels(tmp_path / "qrels"), paths


@pytest.mark.skipif(not _can_fork(), reason="this platform or process cannot fork worker processes")
def test_processes_threads_and_serial_agree(tmp_path, monkeypatch):
    qrels, paths = _write_runs(tmp_path)
    seen = []
    forked = load_runs(paths, qrels, workers=3, progress=lambda i, n, name: seen.append((i, n, name)))
    serial = load_runs(paths, qrels, workers=1)
    monkeypatch.setattr("irscale.loading._can_fork", lambda: False)
    threaded = load_runs(paths, qrels, workers=3)
    assert forked.systems == serial.systems == threaded.systems == tuple(f"r{i}" for i in range(6))
    assert np.array_equal(forked.grades, serial.grades)
    assert np.array_equal(threaded.grades, serial.grades)
    assert seen == [(0, 6, "")] + [(i + 1, 6, f"r{i}") for i in range(6)]  # the total first, then each run


def test_no_fork_while_other_threads_run():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not _can_fork()
    finally:
        stop.set()
        t.join()


@pytest.mark.parametrize("workers", [1, 3])
def test_error_in_a_worker_keeps_file_and_line(tmp_path, workers):
    qrels, paths = _write_runs(tmp_path)
    bad = paths[4]
    bad.write_text(bad.read_text() + "1 Q0 d1 0 notanumber r4\n")
    with pytest.raises(InputFormatError) as e:
        load_runs(paths, qrels, workers=workers)
    assert e.value.path == str(bad) and e.value.line == 126
    assert "score (5th field) must be a number" in str(e.value)


def test_input_format_error_pickles():
    e = InputFormatError("f.txt", 3, "bad", "x y")
    back = pickle.loads(pickle.dumps(e))
    assert (back.path, back.line, back.reason, back.text, str(back)) == ("f.txt", 3, "bad", "x y", str(e))
