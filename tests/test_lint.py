"""The lint and format gates (issue 25, item 4): `ruff check` with the rules of pyproject.toml's
[tool.ruff] finds nothing in src, tests, bench and scripts. ruff comes with the test
extra, so CI (which runs the README's test command) runs this gate."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    try:
        import ruff  # noqa: F401
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed: python3 -m pip install -e '.[test]' brings it")
    res = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "src", "tests", "bench", "scripts", "docs/conf.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_ruff_format_changes_nothing():
    """The formatting gate: `ruff format --check` (the house style after the formatting
    commit listed in .git-blame-ignore-revs) would reformat no file."""
    try:
        import ruff  # noqa: F401
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed: python3 -m pip install -e '.[test]' brings it")
    res = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "src", "tests", "bench", "scripts", "docs/conf.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, "run `python3 -m ruff format src tests bench scripts`:\n" + res.stdout[-4000:]
