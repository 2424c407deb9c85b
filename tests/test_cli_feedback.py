"""Feedback on long work: on a terminal a bar with percentage and ETA; elsewhere plain
lines now and then (never blank); a misspelt measure fails before any file is read; a
large single file reports its reading progress as it is read."""

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

import irscale
from irscale import cli
from irscale.errors import UnknownMeasureError
from irscale.io import read_run

TOY = Path(irscale.__file__).parent / "examples" / "toy"


def test_plain_lines_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(cli, "PLAIN_EVERY", 0.0)  # a line at every step
    res = CliRunner().invoke(cli.app, ["evaluate", str(TOY / "qrels.txt"), str(TOY / "runs"), "-m", "AP"])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if line.startswith("reading runs:")]
    runs = len(list((TOY / "runs").iterdir()))
    assert lines[-1].startswith(f"reading runs: {runs}/{runs} (100%), ")
    assert any("%), " in line and "ETA ..." in line for line in lines[:-1])  # too soon to know the rate
    assert "" not in res.stderr.splitlines()


def test_no_plain_line_for_short_steps():
    res = CliRunner().invoke(cli.app, ["evaluate", str(TOY / "qrels.txt"), str(TOY / "runs"), "-m", "AP"])
    assert res.exit_code == 0 and "reading runs" not in res.stderr


def test_bar_with_percentage_and_eta_on_a_terminal(monkeypatch):
    from rich.console import Console

    out = io.StringIO()
    monkeypatch.setattr(cli._Stderr, "_console", Console(file=out, force_terminal=True, width=150))
    clock = _FakeClock(monkeypatch)
    with cli._Feedback("reading runs") as tick:
        tick(0, 4, "")
        clock.now += 1
        tick(1, 4, "run_a")
        first = out.getvalue()
        clock.now += 9  # 10 s for 2 of 4 since the first tick: 10 s left
        tick(2, 4, "run_b")
    shown = out.getvalue()
    assert "reading runs" in first and "25%" in first and "1/4" in first and "ETA ..." in first and "run_a" in first
    assert "ETA 10 s" in shown[len(first) :]


class _FakeClock:
    """time.monotonic under the test's control."""

    def __init__(self, monkeypatch, start: float = 1000.0):
        import time

        self.now = start
        monkeypatch.setattr(time, "monotonic", lambda: self.now)


def test_no_eta_until_the_rate_is_known(monkeypatch):
    """A rank map's first bucket after a long setup made the first ETA read 498 min for a
    2-minute job: the rate is measured from the first tick, and shown only after 5 s and 5%
    of the work since it."""
    out = io.StringIO()
    from rich.console import Console

    monkeypatch.setattr(cli._Stderr, "_console", Console(file=out, force_terminal=False, width=200))
    monkeypatch.setattr(cli, "PLAIN_EVERY", 0.0)
    clock = _FakeClock(monkeypatch)
    with cli._Feedback("rank map") as tick:
        clock.now += 60  # setup: a minute before the first tick
        tick(0, 1000)
        clock.now += 1
        tick(1, 1000)  # 0.1% after 1 s: an ETA would read 17 minutes from here
        clock.now += 2
        tick(40, 1000)  # 4% after 3 s: not yet
        clock.now += 3
        tick(100, 1000)  # 10% after 6 s since the first tick: 54 s left at that rate
        clock.now += 54
        tick(1000, 1000)
    lines = out.getvalue().splitlines()
    assert [line.split(", ETA ")[-1] if "ETA" in line else None for line in lines] == [
        "...",
        "...",
        "...",
        "54 s",
        None,
    ]
    assert cli._eta((0.0, 0), 10.0, 50, 100) == 10.0 and cli._eta((0.0, 0), 4.0, 50, 100) is None
    assert cli._eta((0.0, 0), 10.0, 4, 100) is None and cli._eta((0.0, 0), 10.0, 100, 100) is None


def test_misspelt_measure_fails_before_reading(monkeypatch):
    def no_reading(*a, **k):
        raise AssertionError("a run was read")

    monkeypatch.setattr("irscale.loading.read_runs", no_reading)
    with pytest.raises(UnknownMeasureError, match="nDCG@10"):
        irscale.evaluate(TOY / "qrels.txt", [TOY / "runs"], ["nDGC@10"])
    res = CliRunner().invoke(cli.app, ["evaluate", str(TOY / "qrels.txt"), str(TOY / "runs"), "-m", "nDGC@10"])
    assert res.exit_code == 2 and "error:" in res.stderr


def test_reading_progress_of_one_file(tmp_path, monkeypatch):
    from irscale.io import trec

    monkeypatch.setattr(trec, "PIECE_BYTES", 4096)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{t} Q0 d{d} 1 {1000 - d} r\n" for t in range(20) for d in range(100)))
    seen = []
    read_run(path, progress=seen.append)
    assert len(seen) > 5 and seen == sorted(seen) and seen[-1] == 1.0
    ticks = []
    irscale.evaluate(
        TOY / "qrels.txt",
        [next((TOY / "runs").iterdir())],
        ["AP"],
        progress=lambda done, total, name: ticks.append(done),
    )
    assert ticks[0] == 0 and ticks[-1] == 1 and all(0 <= t <= 1 for t in ticks)


def test_a_step_that_stops_ticking_is_never_silent_for_long(monkeypatch):
    """The count engine's query phase once went 94 s without a word: the heartbeat says the
    step's last state, "still working", whenever PLAIN_EVERY seconds pass in silence."""
    out = io.StringIO()
    from rich.console import Console

    monkeypatch.setattr(cli._Stderr, "_console", Console(file=out, force_terminal=False, width=200))
    monkeypatch.setattr(cli, "HEARTBEAT", 1.0)  # the test beats by hand, on its clock, once a second
    monkeypatch.setattr(cli._Feedback, "_heartbeat", lambda self: None)  # (no thread beating beside it)
    clock = _FakeClock(monkeypatch)
    with cli._Feedback("rank maps") as tick:
        fb = tick.__self__
        tick(0, 82, "nDCG@24")
        clock.now += 11
        tick(1, 82, "nDCG@24")  # a line: 10 s since the step began
        said = out.getvalue().count("\n")
        for _ in range(8):  # eight seconds of silence: nothing yet
            clock.now += 1
            fb.beat(clock.now)
        assert out.getvalue().count("\n") == said
        clock.now += 1
        fb.beat(clock.now)  # nine: the heartbeat (which looks every HEARTBEAT = 1 s) speaks, so no gap passes 10 s
        lines = out.getvalue().splitlines()
        assert len(lines) == said + 1 and lines[-1].startswith("rank maps: 1/82 (1%), 20 s elapsed")
        assert lines[-1].endswith("still working (nDCG@24)")
        for _ in range(54):  # 54 s more without a tick: a line every 9 s
            clock.now += 1
            fb.beat(clock.now)
    lines = out.getvalue().splitlines()
    assert len(lines) == said + 1 + 6 and all("still working" in x for x in lines[said:])


def test_the_heartbeat_thread_speaks_and_leaves_forking_allowed(monkeypatch):
    import threading
    import time

    from irscale.parallel import can_fork

    out = io.StringIO()
    from rich.console import Console

    monkeypatch.setattr(cli._Stderr, "_console", Console(file=out, force_terminal=False, width=200))
    monkeypatch.setattr(cli, "HEARTBEAT", 0.02)
    monkeypatch.setattr(cli, "PLAIN_EVERY", 0.1)
    before, forks = threading.active_count(), can_fork()
    with cli._Feedback("reading runs"):
        assert threading.active_count() == before + 1
        assert can_fork() == forks  # the runs are still read in forked processes where they were
        time.sleep(0.6)
    assert threading.active_count() == before  # stopped with the step
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(x.startswith("reading runs: ") and "still working" in x for x in lines)
