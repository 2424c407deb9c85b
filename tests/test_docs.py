"""The documentation gates (issue 25, item 4): the Sphinx site in docs/ (the guide, the
architecture page and the API reference built from the docstrings) builds with warnings as
errors, has a page for every public module, and the docs stand alone: no page, docstring,
README or CONTRIBUTING sends a reader to a file outside the repository. Sphinx and
myst-parser come with the test extra, so CI runs the build."""

from __future__ import annotations

import importlib.util
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "irscale"


def _public_modules() -> list[str]:
    """Every module of src/irscale whose dotted name has no part starting with ``_``."""
    names = ["irscale"] + [m.name for m in pkgutil.walk_packages([str(SRC)], "irscale.")]
    return sorted(n for n in names if not any(part.startswith("_") for part in n.split(".")))


@pytest.mark.slow
def test_the_site_builds_without_warnings(tmp_path):
    for module in ("sphinx", "myst_parser"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: python3 -m pip install -e '.[docs]' (or '.[test]') brings it")
    out = tmp_path / "html"
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, "the docs build warns (warnings are errors):\n" + res.stderr[-6000:]
    assert (out / "guide.html").is_file() and (out / "architecture.html").is_file()
    missing = [m for m in _public_modules() if not (out / "api" / f"{m}.html").is_file()]
    assert not missing, f"modules without an API page: {missing}"


# A citation of the product specification, a path into the folder of shared data and papers
# beside the checkout, or a relative path that climbs out of the repository.
OUTSIDE = re.compile(r"\bSPEC\b|\bSTYLE\.md\b|(?<![\w.])shared/(?:data|papers)\b|\.\./[\w.~-]*")


def _documents() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    files += sorted(p for p in (ROOT / "docs").rglob("*") if p.suffix in {".md", ".rst", ".py", ".txt"})
    files += sorted(SRC.rglob("*.py"))
    return [f for f in files if "_build" not in f.parts and f.parent != ROOT / "docs" / "api"]


def _leaves_the_repository(path: Path, hit: str) -> bool:
    if not hit.startswith("../"):
        return True  # SPEC, STYLE.md, shared/data, shared/papers: never in the repository
    if path.suffix == ".py":
        return True  # a docstring has no folder a relative path could start from
    return not (path.parent / hit).resolve().is_relative_to(ROOT)


def test_the_docs_cite_nothing_outside_the_repository():
    assert len(_documents()) > 50
    found = []
    for path in _documents():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in OUTSIDE.finditer(line):
                if _leaves_the_repository(path, m.group()):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "the docs must stand alone (cite the paper or a section of docs/guide.md):\n" + "\n".join(found)


def test_the_citation_check_sees_what_it_must():
    """The pattern catches the citations it exists for and spares ``_SPECIAL``-like names."""
    for text in ("SPEC section 3", "(SPEC: the paper's surrogate)", "../shared/data/dl19/runs", "shared/papers/x.txt"):
        assert OUTSIDE.search(text), text
    for text in ("_SPECIAL = set()", "SPECIAL", "spec", "a shared argument", "dl19/runs"):
        assert not OUTSIDE.search(text), text
