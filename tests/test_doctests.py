"""Every example in irscale's docstrings runs and prints what it shows (issue 25, item 4):
the doctests of every module of src/irscale, collected by walking the package, so a new
module's examples are run without a list to keep. A module with no example is fine; an
example that fails is not."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import irscale

DEPRECATED = {"irscale.measures.ranked", "irscale.measures.orders"}  # aliases that warn when imported


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(irscale.__path__, "irscale.") if m.name not in DEPRECATED]
    return sorted(n for n in names if not n.endswith("__main__"))


MODULES = _modules()


def test_the_walk_finds_the_modules_with_examples():
    assert {
        "irscale.io.memory",
        "irscale.experiment",
        "irscale.effects",
        "irscale.errors",
        "irscale.scales.permissible",
    } <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an example's notes (warnings) are not its output
        module = importlib.import_module(name)
        result = doctest.testmod(module, verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples of {name} failed (run: python3 -m "
        f"doctest -v on it, or pytest --doctest-modules src/irscale)"
    )
