"""The type-check gate (issue 25, item 4): `python3 -m mypy`, with pyproject.toml's [tool.mypy]
(every file of src/irscale, check_untyped_defs), finds nothing. mypy comes with the test
extra, so CI (which runs the README's test command) runs this gate.

The gate covers the whole package: [tool.mypy] checks src/irscale, and no override silences
a module of irscale (``ignore_errors``), so a module cannot leave the gate unnoticed."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def _covers_irscale(pattern: str) -> bool:
    """Whether an override's module pattern (a module, or "pkg.*") reaches a module of irscale."""
    return pattern == "irscale" or pattern.startswith("irscale.")


def test_gate_covers_the_whole_package():
    """mypy checks every file of src/irscale, and no override exempts a module of it."""
    config = _mypy_config()
    assert config["files"] == ["src/irscale"], config["files"]
    exempt: list[str] = []
    for override in config.get("overrides", []):
        if override.get("ignore_errors"):
            mods = override["module"]
            exempt += [m for m in ([mods] if isinstance(mods, str) else mods) if _covers_irscale(m)]
    assert not exempt, f"modules of irscale exempt from the type gate (ignore_errors) in pyproject.toml: {exempt}"


@pytest.mark.slow
def test_mypy_finds_nothing():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed: python3 -m pip install -e '.[test]' brings it")
    res = subprocess.run(
        [sys.executable, "-m", "mypy"],  # files and options: pyproject.toml [tool.mypy]; cache: .mypy_cache
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, "mypy found errors:\n" + res.stdout[-6000:] + res.stderr[-2000:]
