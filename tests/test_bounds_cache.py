"""The on-disk cache of the bounds tables (scales/bounds.py through scales/cache.py): a
second call, in this process or a new one, loads the tables instead of building them and
gives the same bounds to the bit; a damaged file is warned about and rebuilt; cache=False
reads and writes nothing; tables over CACHE_MAX_BYTES are not stored; an unwritable
cache is warned about and the bounds still come; ``cache info`` / ``cache clear`` list
and remove the tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from irscale.errors import IrscaleWarning
from irscale.scales import bounds, cache_clear, cache_info
from irscale.scales import cache as R
from irscale.scales.bounds import dcg_bounds, phi_bounds, rbp_bounds


def _runs(N: int, levels: int = 4) -> np.ndarray:
    rng = np.random.default_rng(N)
    return np.vstack([np.zeros((1, N), int), np.full((1, N), levels - 1), rng.integers(0, levels, (20, N))])


def _tables(d):
    return sorted((d / "bounds").glob("*.npz")) if (d / "bounds").is_dir() else []


def _same(a, b) -> bool:
    return np.array_equal(a.lo, b.lo) and np.array_equal(a.hi, b.hi) and a.max_width == b.max_width


def _no_warnings(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrscaleWarning)
        return fn()


@pytest.mark.parametrize(
    "call",
    [
        lambda: rbp_bounds("RBP(p=0.9)", 60, _runs(60), resolution=3000, levels=4),
        lambda: rbp_bounds("RBP(p=0.8)", 60, _runs(60, 2), resolution=3000),
        lambda: dcg_bounds("nDCG", 40, _runs(40), levels=4, grid=20_000),
    ],
    ids=["graded RBP", "binary RBP", "nDCG"],
)
def test_the_second_call_loads_the_tables_and_gives_the_same_bounds(cache, call):
    first = _no_warnings(call)
    assert first.details["cache"].startswith("built and stored")
    assert len(_tables(cache)) == 1
    second = _no_warnings(call)
    assert second.details["cache"].startswith("loaded from the cache")
    assert _same(first, second) and second.size == first.size
    assert cache_info()["entries"][0]["kind"] == "bounds table"


def test_a_new_process_loads_them_too(cache):
    """phi_bounds in a fresh interpreter: the tables come from the file the first call
    wrote (seconds: the load, details: where from)."""
    first = phi_bounds("RBP(p=0.95)", 100, _runs(100), levels=4, resolution=4000)
    assert first.details["cache"].startswith("built and stored")
    code = textwrap.dedent("""
        import json, numpy as np
        from irscale.scales.bounds import phi_bounds
        rng = np.random.default_rng(100)
        runs = np.vstack([np.zeros((1, 100), int), np.full((1, 100), 3), rng.integers(0, 4, (20, 100))])
        b = phi_bounds("RBP(p=0.95)", 100, runs, levels=4, resolution=4000)
        print(json.dumps({"cache": b.details["cache"], "seconds": b.seconds, "lo": b.lo.tolist(),
                          "hi": b.hi.tolist()}))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "IRSCALE_CACHE_DIR": str(cache)},
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["cache"].startswith("loaded from the cache"), got["cache"]
    assert got["lo"] == first.lo.tolist() and got["hi"] == first.hi.tolist()  # floats through JSON: exact
    assert f"built in {first.seconds:.2f} s" in got["cache"]  # the first call's build, recorded in the file


@pytest.mark.parametrize(
    "damage,family",
    [("flip", "rbp"), ("truncate", "rbp"), ("wrong shape", "rbp"), ("flip", "dcg"), ("wrong shape", "dcg")],
)
def test_a_damaged_table_is_warned_about_and_rebuilt(cache, damage, family):
    def call():
        if family == "dcg":
            return dcg_bounds("DCG", 30, _runs(30), levels=4, grid=20_000)
        return rbp_bounds("RBP(p=0.9)", 50, _runs(50), resolution=2000, levels=4)

    truth = call()
    (f,) = _tables(cache)
    if damage == "flip":
        data = bytearray(f.read_bytes())
        data[len(data) // 2] ^= 0xFF
        f.write_bytes(bytes(data))
    elif damage == "truncate":
        f.write_bytes(f.read_bytes()[:1000])
    else:  # a checksum-valid file whose tables are not this grid's (or lattice's)
        z = R._read_npz(f)
        ident, size = str(z["identity"]), int(z["size"])
        arrays = {k: v for k, v in z.items() if k not in ("identity", "size", "checksum")}
        if family == "dcg":
            arrays["classes"] = arrays["classes"] + 1
        else:
            arrays["lo"], arrays["hi"] = arrays["lo"][:-5], arrays["hi"][:-5]
        R.save_table(ident, size, arrays)
    with pytest.warns(IrscaleWarning, match="bounds-table cache file .* damaged.*rebuilt"):
        again = call()
    assert again.details["cache"].startswith("built and stored") and _same(truth, again)
    R._warned.clear()
    third = _no_warnings(call)  # the rebuilt file is sound
    assert third.details["cache"].startswith("loaded") and _same(truth, third)


def test_cache_false_reads_and_writes_nothing(cache):
    runs = _runs(60)
    b = phi_bounds("RBP(p=0.9)", 60, runs, levels=4, resolution=2000, cache=False)
    assert b.details["cache"] == "not used (cache=False)"
    dcg_bounds("DCG", 40, _runs(40), levels=4, grid=10_000, cache=False)
    phi_bounds("AP", 10, np.zeros((1, 10), int), cache=False)  # the exact path: no rank map stored either
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))
    stored = phi_bounds("RBP(p=0.9)", 60, runs, levels=4, resolution=2000)
    assert stored.details["cache"].startswith("built and stored") and _same(b, stored)
    again = phi_bounds("RBP(p=0.9)", 60, runs, levels=4, resolution=2000, cache=False)
    assert again.details["cache"] == "not used (cache=False)"  # not read either


def test_tables_over_the_limit_are_not_stored(cache, monkeypatch):
    monkeypatch.setattr(bounds, "CACHE_MAX_BYTES", 10_000)
    b = rbp_bounds("RBP(p=0.9)", 40, _runs(40), resolution=2000, levels=4)
    assert "not stored" in b.details["cache"] and "CACHE_MAX_BYTES" in b.details["cache"]
    assert _tables(cache) == []


def test_an_unwritable_cache_is_warned_about_once_and_the_bounds_still_come(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(R, "_warned", set(), raising=False)
    monkeypatch.setattr(R, "_swept", set(), raising=False)
    with pytest.warns(IrscaleWarning, match="cannot write the rank-map cache.*bounds tables are rebuilt"):
        b = rbp_bounds("RBP(p=0.9)", 40, _runs(40), resolution=1000, levels=4)
    assert "could not be written" in b.details["cache"]
    c = _no_warnings(lambda: rbp_bounds("RBP(p=0.9)", 40, _runs(40), resolution=1000, levels=4))
    assert _same(b, c)


def test_cache_info_lists_the_tables_and_clear_removes_them(cache):
    from typer.testing import CliRunner

    from irscale.cli import app
    from irscale.scales import build

    build("AP", 8)
    rbp_bounds("RBP(p=0.9)", 40, _runs(40), resolution=1000, levels=4)
    dcg_bounds("DCG", 30, _runs(30, 2), grid=5000)
    entries = cache_info()["entries"]
    kinds = sorted(e["kind"] for e in entries)
    assert kinds == ["bounds table", "bounds table", "rank map"]
    rbp = next(e for e in entries if e["identity"].startswith("RBP bounds table"))
    assert rbp["size"] == 4**40 and rbp["file"].startswith("bounds/") and rbp["damaged"] is None
    assert "gains=0,1,2,3|N=40|resolution=1000" in rbp["identity"]
    out = CliRunner().invoke(app, ["cache", "info"])
    assert out.exit_code == 0 and "RBP bounds table" in out.output and "DCG bounds table" in out.output
    assert cache_clear() == 3
    assert cache_info()["entries"] == [] and _tables(cache) == []
