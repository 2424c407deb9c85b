"""Work done once or ahead (issue 40): gzip runs inflated in threads while the qrels are
read, the judge's hash tables built once per qrels, one large file tokenised by two
threads, and the swap check's one compiled pass. Each gives the results of the plain path,
errors included."""

from __future__ import annotations

import gzip
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale import data as D
from irscale import loading
from irscale.errors import InputFormatError
from irscale.io import trec
from irscale.io.trec import parse_qrels, parse_run, read_run
from irscale.kernels import disabled

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "bpref"]


def _collection(tmp_path, runs: int = 6, topics: int = 5, depth: int = 40):
    rng = np.random.default_rng(3)
    lines = [f"{t} 0 d{d} {int(rng.integers(0, 3))}\n" for t in range(1, topics + 1) for d in range(0, 60, 2)]
    (tmp_path / "qrels.txt").write_text("".join(lines))
    files = []
    for r in range(runs):
        docs = [rng.permutation(80)[:depth] for _ in range(topics)]
        text = "".join(
            f"{t + 1} Q0 d{d} {k + 1} {100 - k} run{r}\n" for t in range(topics) for k, d in enumerate(docs[t])
        )
        f = tmp_path / f"run{r}.gz"
        f.write_bytes(gzip.compress(text.encode()))
        files.append(f)
    return tmp_path / "qrels.txt", files


def test_runs_inflated_ahead_score_as_runs_read_in_turn(tmp_path, monkeypatch):
    qrels, files = _collection(tmp_path)
    stop = loading._Prefetch.stop

    def finish_first():  # every file inflated before the readers start (not a race)
        for thread, _ in list(loading._Prefetch._running):
            thread.join()
        stop()

    monkeypatch.setattr(loading._Prefetch, "stop", staticmethod(finish_first))
    monkeypatch.setattr(loading, "_can_fork", lambda: False)  # readers in threads: their calls are seen here
    parsed = []
    parse_runs = loading.parse_runs
    monkeypatch.setattr(
        loading, "parse_runs", lambda text, path, **kw: parsed.append(path) or parse_runs(text, path, **kw)
    )
    ahead = irscale.evaluate(qrels, files, MEASURES)
    assert sorted(parsed) == sorted(map(str, files))  # each reader took its file's text, inflated ahead
    monkeypatch.setattr(loading, "PREFETCH_BYTES", 0)  # nothing ahead: each file read by its reader
    plain = irscale.evaluate(qrels, files, MEASURES)
    assert len(parsed) == len(files)  # (none more)
    assert np.array_equal(ahead.values, plain.values, equal_nan=True) and ahead.systems == plain.systems
    assert loading._Prefetch._text == {} and loading._Prefetch._running == []  # nothing kept after the call
    assert not [t for t in threading.enumerate() if t.name.startswith("irscale-inflate")]


def test_a_directory_with_a_subdirectory_is_warned_about_once(tmp_path):
    qrels, files = _collection(tmp_path, runs=3)
    runs = tmp_path / "runs"
    runs.mkdir()
    for f in files:
        f.rename(runs / f.name)
    (runs / "old").mkdir()
    with pytest.warns(UserWarning, match="subdirectories are not read") as seen:
        irscale.evaluate(qrels, runs, ["AP"])
    assert len([w for w in seen if "subdirectories" in str(w.message)]) == 1


def test_a_file_inflated_ahead_is_taken_once_then_read_again(tmp_path):
    _, files = _collection(tmp_path, runs=3)
    ahead = loading._Prefetch([str(tmp_path / "run*.gz")])  # a pattern, as the CLI passes it
    ahead._running[0][0].join()  # (let it inflate every file)
    assert sorted(loading._Prefetch._text) == sorted(map(str, files))
    assert loading._Prefetch.take(files[1]) == gzip.decompress(files[1].read_bytes())
    assert loading._Prefetch.take(files[1]) is None  # taken: its reader reads it
    ahead.close()
    assert loading._Prefetch._text == {} and loading._Prefetch._running == []


def test_a_corrupt_file_among_them_gives_the_readers_error(tmp_path):
    qrels, files = _collection(tmp_path)
    files[2].write_bytes(files[2].read_bytes()[:-30])  # truncated gzip
    with pytest.raises(InputFormatError) as e:
        irscale.evaluate(qrels, files, ["AP"])
    assert e.value.path == str(files[2]) and "corrupt gzip data" in e.value.reason
    assert loading._Prefetch._text == {}


def test_the_judgements_are_hashed_once_per_qrels(monkeypatch):
    qrels = parse_qrels(b"1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    runs = [
        parse_run(f"1 Q0 a 1 3 r{k}\n1 Q0 b 2 2 r{k}\n2 Q0 c 1 1 r{k}\n1 Q0 x 3 0 r{k}\n".encode()) for k in range(4)
    ]
    kernels = D._judge_kernels()
    if kernels is None:
        pytest.skip("numba is not installed: the numpy path hashes in pandas")
    hashed = []
    counting = (lambda q: hashed.append(len(q)) or kernels[0](q), kernels[1])
    monkeypatch.setattr(D, "_judge_kernels", lambda: counting)
    grades = [D.judge_run(r, qrels)[0] for r in runs]
    assert hashed == [3]  # once, for the first run; the others find the hashes on the qrels
    assert all(g[0, :3].tolist() == [1, 0, D.UNJUDGED] and g[1, 0] == 2 for g in grades)


def _many_pieces(tmp_path, bad_line: int | None = None):
    lines = [f"{1 + k // 300} Q0 doc{k} {k % 300 + 1} {1000 - k % 300}.5 tag\n" for k in range(3000)]
    if bad_line is not None:
        lines[bad_line - 1] = "7 Q0 docX 1 notanumber tag\n"
    f = tmp_path / "big.txt"
    f.write_text("".join(lines))
    return f


@pytest.mark.parametrize("threads", [1, 2])
def test_a_file_of_many_pieces_reads_alike_in_one_thread_or_two(tmp_path, monkeypatch, threads):
    f = _many_pieces(tmp_path)
    monkeypatch.setattr(trec, "PIECE_BYTES", 2048)  # about 50 pieces
    monkeypatch.setattr(trec, "PIECE_THREADS", threads)
    r = read_run(f)
    monkeypatch.setattr(trec, "PIECE_BYTES", 1 << 24)  # one piece
    one = read_run(f)
    assert np.array_equal(r.docno, one.docno) and np.array_equal(r.score, one.score)
    assert np.array_equal(r.offsets, one.offsets) and np.array_equal(r.topics, one.topics)


@pytest.mark.parametrize("threads", [1, 2])
def test_an_error_in_a_later_piece_names_its_line_in_the_file(tmp_path, monkeypatch, threads):
    f = _many_pieces(tmp_path, bad_line=2345)
    monkeypatch.setattr(trec, "PIECE_BYTES", 2048)
    monkeypatch.setattr(trec, "PIECE_THREADS", threads)
    with pytest.raises(InputFormatError) as e:
        read_run(f)
    assert e.value.line == 2345 and "notanumber" in (e.value.text or "")
    assert not [t for t in threading.enumerate() if t.name.startswith("irscale-piece")]


@settings(max_examples=200, deadline=None)
@given(
    codes=st.lists(st.integers(0, 2), min_size=0, max_size=40),
    scores=st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, float("nan"), -1.0]), min_size=40, max_size=40),
)
def test_the_swap_checks_compiled_count_equals_numpys(codes, scores):
    if trec._kernels() is None:
        pytest.skip("numba is not installed: only the numpy count runs")
    c = np.sort(np.array(codes, dtype=np.int16))
    s = np.array(scores[: len(c)], dtype=np.float64)
    compiled = trec._steps(c, s)
    with disabled("io.trec"):
        assert trec._steps(c, s) == compiled


def test_runs_given_as_an_iterator_are_left_to_the_readers(tmp_path):
    """Only paths in a list or tuple are inflated ahead: an iterator is read once, by the
    readers."""
    qrels, files = _collection(tmp_path, runs=3)
    table = irscale.evaluate(qrels, (f for f in files), ["AP"])
    assert table.systems == ("run0", "run1", "run2")


def test_a_bad_line_before_corrupt_gzip_data_is_the_error(tmp_path, monkeypatch):
    """Reading ahead meets the corrupt data first; the bad line before it is still what is
    reported (as reading piece by piece did): a good gzip member of about four pieces
    with a bad line in its second, then a member of garbage."""
    lines = [f"1 Q0 doc{k:05d} {k + 1} {5000 - k}.5 tag\n" for k in range(400)]
    lines[150] = "1 Q0 docX 151 notanumber tag\n"
    f = tmp_path / "run.gz"
    f.write_bytes(gzip.compress("".join(lines).encode()) + b"\x1f\x8b\x08\x00" + b"\x07" * 200)
    monkeypatch.setattr(trec, "PIECE_BYTES", 4096)
    with pytest.raises(InputFormatError) as e:
        read_run(f)
    assert e.value.line == 151 and "notanumber" in (e.value.text or "")


def test_a_byte_order_mark_is_warned_about_in_the_callers_thread(tmp_path, monkeypatch):
    f = _many_pieces(tmp_path)
    f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    monkeypatch.setattr(trec, "PIECE_BYTES", 2048)
    with pytest.warns(UserWarning, match="byte-order mark") as seen:
        read_run(f)
    assert [w.filename for w in seen if "byte-order" in str(w.message)] != [] and all(
        "concurrent" not in w.filename for w in seen
    )
