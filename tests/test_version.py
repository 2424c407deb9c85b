"""The version is written once (src/irscale/_version.py): the package, the installed
metadata, `irscale --version`, `irscale version` and the changelog agree (issue 25, item 5)."""

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from typer.testing import CliRunner

import irscale
from irscale.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_written_once():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "irscale._version.__version__"}
    assert importlib.metadata.version("irscale") == irscale.__version__


def test_version_option_and_verb():
    for args in (["--version"], ["version"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0 and res.stdout.strip() == irscale.__version__
    out = subprocess.run([sys.executable, "-m", "irscale", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == irscale.__version__


def test_the_changelog_has_the_version_and_an_unreleased_part():
    text = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.MULTILINE)
    assert "## [Unreleased]" in text and released and released[0] == irscale.__version__
