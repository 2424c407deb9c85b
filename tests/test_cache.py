"""The rank-map cache: damaged files are rebuilt (with one warning), writes are atomic,
stale temp files go away, an unwritable cache is said once, and the CLI gives clear
errors instead of tracebacks or a bare "Aborted."."""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import pathlib
import signal
import struct
import subprocess
import sys
import textwrap
import time
import warnings
import zipfile

import numpy as np
import pytest
from cli_lines import unwrap
from typer.testing import CliRunner

from irscale.cli import app
from irscale.errors import IrscaleError, IrscaleWarning
from irscale.scales import all_runs, build, cache_clear, cache_info
from irscale.scales import cache as R

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


def _runs(N, step=37):
    return all_runs(N, 1)[::step]


def _the_map_file(d) -> pathlib.Path:
    files = [f for f in (d / "rankmaps").glob("*.npz") if ".answers" not in f.name]
    assert len(files) == 1, files
    return files[0]


def _no_warnings(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrscaleWarning)
        return fn()


def _check_rebuilt(d, truth, N=12, match="damaged"):
    """The next build warns once that the file was damaged, gives the true phi, and
    leaves a verified file behind that later builds load silently."""
    g = _runs(N)
    with pytest.warns(IrscaleWarning, match=match):
        rm = build("AP", N)
    assert not rm.from_cache
    assert np.array_equal(rm.phi_runs(g), truth)
    R._read_npz(_the_map_file(d))  # verifies (raises if damaged)
    again = _no_warnings(lambda: build("AP", N))
    assert again.from_cache and np.array_equal(again.phi_runs(g), truth)
    assert [e["damaged"] for e in cache_info()["entries"]] == [None]


@pytest.fixture(scope="module")
def ap12():
    return build("AP", 12, cache=False).phi_runs(_runs(12))


# -- damaged files (API) -------------------------------------------------------------------------


def test_truncated_file_is_rebuilt(cache, ap12):
    build("AP", 12)
    f = _the_map_file(cache)
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    _check_rebuilt(cache, ap12)


def test_empty_file_is_rebuilt(cache, ap12):
    build("AP", 12)
    _the_map_file(cache).write_bytes(b"")
    _check_rebuilt(cache, ap12, match="empty file")


def _member_data_offset(f: pathlib.Path, member: str) -> int:
    """Where the .npy bytes of ``member`` start inside the (stored, uncompressed) npz."""
    with zipfile.ZipFile(f) as z:
        info = z.getinfo(member)
    raw = f.read_bytes()
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    return info.header_offset + 30 + n + m


def test_bit_flip_inside_the_array_data_is_rebuilt(cache, ap12):
    build("AP", 12)
    f = _the_map_file(cache)
    raw = bytearray(f.read_bytes())
    start = _member_data_offset(f, "keys.npy")
    raw[start + 128 + 800] ^= 0x10  # past the .npy header, inside the keys: the zip CRC fails
    f.write_bytes(bytes(raw))
    _check_rebuilt(cache, ap12, match="CRC")


def test_bit_flips_anywhere_never_crash(cache, ap12):
    build("AP", 12)
    f = _the_map_file(cache)
    good = f.read_bytes()
    for pos in np.linspace(0, len(good) - 1, 25).astype(int):
        raw = bytearray(good)
        raw[pos] ^= 0x04
        f.write_bytes(bytes(raw))
        R._warned.clear()
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            rm = build("AP", 12)
        assert np.array_equal(rm.phi_runs(_runs(12)), ap12), pos
        info = cache_info()["entries"]  # never raises
        assert len(info) == 1 and info[0]["damaged"] is None  # the rebuild replaced the file


def test_valid_file_with_altered_keys_is_rebuilt(cache, ap12):
    """The "valid but wrong" case: a structurally valid npz, same identity, keys shifted
    and the old checksum kept. Without the checksum it loads and phi is off by one."""
    build("AP", 12)
    f = _the_map_file(cache)
    with np.load(f) as z:
        arrays = {k: z[k] for k in z.files}
    keys = arrays["keys"].copy()
    keys[len(keys) // 2 :] += 1  # still sorted and distinct: a plausible table, but wrong
    arrays["keys"] = keys
    with open(f, "wb") as fh:
        np.savez(fh, **arrays)
    R._warned.clear()
    _check_rebuilt(cache, ap12, match="checksum mismatch")


def test_file_without_checksum_is_rebuilt(cache, ap12):
    build("AP", 12)
    f = _the_map_file(cache)
    with np.load(f) as z:
        arrays = {k: z[k] for k in z.files if k != "checksum"}
    with open(f, "wb") as fh:
        np.savez(fh, **arrays)
    _check_rebuilt(cache, ap12, match="no checksum")


def test_altered_answers_are_recomputed(cache):
    """Answers persisted beside a count-engine map are checked too."""
    g = np.random.default_rng(5).integers(0, 2, size=(40, 30)).astype(np.int8)
    truth = build("RBP(p=0.95)", 30, cache=False).phi_runs(g)
    assert np.array_equal(build("RBP(p=0.95)", 30).phi_runs(g), truth)
    ans = next((cache / "rankmaps").glob("*.answers-unq.npz"))
    with np.load(ans) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["phi"] = arrays["phi"] + 1
    with open(ans, "wb") as fh:
        np.savez(fh, **arrays)
    rm = build("RBP(p=0.95)", 30)
    assert rm.from_cache
    with pytest.warns(IrscaleWarning, match="answers cache file .* damaged"):
        assert np.array_equal(rm.phi_runs(g), truth)


def test_damage_is_warned_once_per_file(cache, ap12):
    build("AP", 12)
    f = _the_map_file(cache)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(2):
            f.write_bytes(b"garbage")
            assert np.array_equal(build("AP", 12).phi_runs(_runs(12)), ap12)
    assert sum("damaged" in str(w.message) for w in seen) == 1


# -- temp files ----------------------------------------------------------------------------------


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temp_files_are_ignored_and_removed(cache):
    build("AP", 12)
    d = cache / "rankmaps"
    target = _the_map_file(cache).name
    dead = d / f"{target}.{R._HOST}.{_dead_pid()}.0a1b2c.tmp"
    live = d / f"{target}.{R._HOST}.{os.getpid()}.0a1b2c.tmp"  # a writer still at work: kept
    old_style = d / "0123456789abcdef0123.tmp.npz"  # older irscale's name, left by a killed writer
    aged = d / "fedcba9876543210fedc.tmp.npz"
    for p in (dead, live, old_style, aged):
        p.write_bytes(b"PK\x03\x04 half a zip")
    os.utime(aged, (time.time() - 2 * 3600,) * 2)
    cli = CliRunner()
    res = cli.invoke(app, ["cache", "info"])
    assert res.exit_code == 0, res.output
    listing = res.stdout.split("\n", 1)[1]
    assert "AP|N=12" in listing and ".tmp" not in listing and len(listing.strip().splitlines()) == 1
    assert not dead.exists() and not aged.exists() and live.exists() and old_style.exists()
    res = cli.invoke(app, ["cache", "clear"])
    assert res.exit_code == 0 and "removed 1 cache entry" in res.stdout
    assert live.exists()  # in-flight temp files are left to their writers
    live.unlink()
    old_style.unlink()
    assert sorted(d.iterdir()) == []


def test_write_failure_leaves_no_temp_file(cache, monkeypatch):
    def boom(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(R.os, "replace", boom)
    with pytest.warns(IrscaleWarning, match="cannot write the rank-map cache .*input/output error"):
        rm = build("AP", 12)
    assert not rm.cached
    assert list((cache / "rankmaps").iterdir()) == []


# -- unwritable and unreadable caches ------------------------------------------------------------


def test_cache_under_a_regular_file_is_said_once(tmp_path, monkeypatch, ap12):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(R, "_warned", set(), raising=False)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            assert np.array_equal(build("AP", 12).phi_runs(_runs(12)), ap12)
    msgs = [str(w.message) for w in seen if issubclass(w.category, IrscaleWarning)]
    assert len(msgs) == 1, msgs
    assert msgs[0].startswith(
        f"cannot write the rank-map cache at {blocker / 'cache'} (not a directory); "
        "rank maps are rebuilt every time: set IRSCALE_CACHE_DIR to a writable directory"
    )
    cli = CliRunner()
    res = cli.invoke(app, ["cache", "info"])
    assert res.exit_code == 0 and "0.0 MB" in res.stdout
    res = cli.invoke(app, ["cache", "clear"])
    assert res.exit_code == 0 and "removed 0" in res.stdout
    res = cli.invoke(app, ["rankmap", "AP", "-N", "12"])
    assert res.exit_code == 0 and "distinct values" in res.stdout


def _read_only(path: pathlib.Path) -> bool:
    path.chmod(0o555)
    return not os.access(path, os.W_OK)


def test_read_only_cache_dir(cache, ap12):
    build("AP", 12)
    d = cache / "rankmaps"
    try:
        if not _read_only(d):
            pytest.skip("running as root: chmod does not stop writes (test_clear_cannot_remove simulates it)")
        # an existing map still loads; a new one is built, and the cache says once it cannot keep it
        assert _no_warnings(lambda: build("AP", 12)).from_cache
        with pytest.warns(IrscaleWarning, match="cannot write the rank-map cache .*permission denied"):
            build("AP", 13)
        res = CliRunner().invoke(app, ["cache", "clear"])
        assert res.exit_code == 2
        assert "error:" in res.stderr and "(permission denied); remove it by hand or fix the permissions" in unwrap(
            res.stderr
        )
    finally:
        d.chmod(0o755)


def test_empty_read_only_cache_is_said_once(cache, ap12):
    """It rebuilt on every run without a word before."""
    cache.mkdir()
    try:
        if not _read_only(cache):
            pytest.skip("running as root: chmod does not stop writes (see the regular-file test)")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for _ in range(2):
                assert np.array_equal(build("AP", 12).phi_runs(_runs(12)), ap12)
        msgs = [str(w.message) for w in seen if issubclass(w.category, IrscaleWarning)]
        assert msgs == [
            f"cannot write the rank-map cache at {cache} (permission denied); rank maps are rebuilt "
            "every time: set IRSCALE_CACHE_DIR to a writable directory"
        ]
    finally:
        cache.chmod(0o755)


def test_clear_cannot_remove(cache, monkeypatch):
    """What root cannot simulate with chmod: unlink refused."""
    build("AP", 12)

    def refuse(self, missing_ok=False):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(pathlib.Path, "unlink", refuse)
    with pytest.raises(IrscaleError, match=r"cannot remove .*\.npz \(permission denied\); remove it by hand"):
        cache_clear()
    res = CliRunner().invoke(app, ["cache", "clear"])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: cannot remove ") and "Traceback" not in res.output
    assert len(unwrap(res.stderr).strip().splitlines()) == 1  # one message (lines of at most 160 characters)


def test_unreadable_cache_dir_is_a_clear_error(cache, monkeypatch):
    build("AP", 12)

    def refuse(self):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(pathlib.Path, "iterdir", refuse)
    for args in (["cache", "info"], ["cache", "clear"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and "cannot read the rank-map cache" in res.stderr, res.output


# -- the CLI on damaged files --------------------------------------------------------------------


def test_cli_on_damaged_files(cache):
    cli = CliRunner()
    res = cli.invoke(app, ["rankmap", "AP", "-N", "12"])
    assert res.exit_code == 0
    f = _the_map_file(cache)
    f.write_bytes(b"")
    res = cli.invoke(app, ["cache", "info"])
    assert res.exit_code == 0 and "(damaged: empty file)" in res.stdout, res.output
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = cli.invoke(app, ["rankmap", "AP", "-N", "12"])
    assert res.exit_code == 0, res.output  # not a bare "Aborted."
    # the warning is recorded, or shown on stderr where the CLI installs its own display
    shown = [str(w.message) for w in seen] + unwrap(res.stderr).splitlines()
    assert any("was damaged (empty file)" in m for m in shown), shown
    assert "Aborted" not in res.output and "distinct values" in res.stdout
    f.write_bytes(f.read_bytes()[:200])  # truncated
    res = cli.invoke(app, ["cache", "info"])
    assert res.exit_code == 0 and "(damaged: " in res.stdout
    res = cli.invoke(app, ["cache", "clear"])
    assert res.exit_code == 0 and "removed 1 cache entry" in res.stdout


# -- concurrency and killed writers ----------------------------------------------------------------

CONCURRENT = [("AP", 16), ("RBP(p=0.8)", 20)]


def _build_in_child(cache_dir, barrier, queue):
    os.environ["IRSCALE_CACHE_DIR"] = cache_dir
    from irscale.scales import all_runs, build

    barrier.wait()
    out = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for name, N in CONCURRENT:
            rm = build(name, N)
            out.append((rm.size, rm.phi_runs(all_runs(N, 1)[::911]).tolist()))
    queue.put((out, [str(w.message) for w in seen]))


@pytest.mark.slow
def test_concurrent_writers(cache):
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_build_in_child, args=(str(cache), barrier, queue)) for _ in range(4)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(msgs == [] for _, msgs in results), results
    truth = []
    for name, N in CONCURRENT:
        rm = build(name, N, cache=False)
        truth.append((rm.size, rm.phi_runs(all_runs(N, 1)[::911]).tolist()))
    assert all(out == truth for out, _ in results)
    d = cache / "rankmaps"
    assert not [p for p in d.iterdir() if R._is_temp(p.name)]
    for f in d.glob("*.npz"):
        R._read_npz(f)  # every file verifies
    for (name, N), (size, phi) in zip(CONCURRENT, truth):
        rm = _no_warnings(lambda: build(name, N))  # noqa: B023 (called at once)
        assert rm.from_cache and rm.size == size and rm.phi_runs(all_runs(N, 1)[::911]).tolist() == phi


_CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from irscale.scales import cache as R
    from irscale.scales import all_runs, build
    mode = sys.argv[1]
    if mode == "before-rename":  # the temp file is complete; killed before os.replace
        real = os.replace
        def slow_replace(src, dst):
            print("WRITTEN", flush=True)
            time.sleep(120)
            real(src, dst)
        R.os.replace = slow_replace
    elif mode == "mid-write":  # killed with half a zip in the temp file
        def slow_savez(fh, **arrays):
            fh.write(b"PK\\x03\\x04" + b"x" * 1000)
            fh.flush()
            print("WRITTEN", flush=True)
            time.sleep(120)
        R.np.savez = slow_savez
    rm = build(sys.argv[2], int(sys.argv[3]))
    print("PHI", rm.phi_runs(all_runs(int(sys.argv[3]), 1)[::37]).tolist(), flush=True)
""")


def _child(args, cache_dir, **kw):
    env = dict(os.environ, IRSCALE_CACHE_DIR=str(cache_dir), PYTHONPATH=str(SRC))
    return subprocess.Popen(
        [sys.executable, "-W", "error::irscale.errors.IrscaleWarning", "-c", _CHILD, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["before-rename", "mid-write", pytest.param("timer", marks=pytest.mark.slow)])
def test_killed_writer(cache, mode):
    """SIGKILL a process while it writes the map (or at some moment of its build); the
    next build, in a fresh process, rebuilds or loads correctly, and the stale temp
    file goes away."""
    truth = build("AP", 14, cache=False).phi_runs(all_runs(14, 1)[::37]).tolist()
    d = cache / "rankmaps"
    if mode == "timer":  # anywhere: starting up, building, writing or done
        delays = [0.5, 1.5, 3.0]
    else:
        delays = [None]
    for delay in delays:
        p = _child([mode, "AP", "14"], cache)
        if delay is None:
            assert p.stdout.readline().strip() == "WRITTEN"
            assert [q for q in d.iterdir() if R._is_temp(q.name)]  # the temp file is there
        else:
            time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.communicate()  # reaps it: its pid is dead
        q = _child(["plain", "AP", "14"], cache)
        out, err = q.communicate(timeout=300)
        assert q.returncode == 0, err
        assert f"PHI {truth}" in out
        assert not [x for x in d.iterdir() if R._is_temp(x.name)]
        R._read_npz(_the_map_file(cache))
        if delay is not None:
            cache_clear()
