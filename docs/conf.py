"""Sphinx configuration of irscale's documentation: the guide, the architecture page and an
API reference generated from the docstrings (autodoc, numpy style read by napoleon). Build it
with warnings as errors, as tests/test_docs.py does:

    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

The build needs no network (no intersphinx) and documents the package of this checkout
(src/ comes first on sys.path), not an installed copy.
"""

import ast
import importlib
import inspect
import pkgutil
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import irscale  # noqa: E402

project = "irscale"
author = "irscale contributors"
release = version = irscale.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/examples/ holds notebooks, run by tests/test_notebook.py (nbclient) rather than rendered
# here: rendering them would need an extension (nbsphinx, myst-nb) the offline build does without.
exclude_patterns = ["_build", "examples"]

autodoc_default_options = {"show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"

# The house docstring style: numpy style (pyproject.toml [tool.ruff.lint.pydocstyle]).
napoleon_google_docstring = False
napoleon_numpy_docstring = True

# The guide's links to its own sections ([Warnings](#warnings)) resolve to heading anchors.
myst_heading_anchors = 3

html_theme = "alabaster"  # ships with Sphinx: the build needs no other package
html_title = f"irscale {release}"


# The API reference: one page per public module, docs/api/<module>.rst, written at each build
# by walking the package (no list to keep; docs/api/ is not tracked). Each object is
# documented once, in the module that defines it; a module's __all__ names that come from
# another module (irscale.evaluate, irscale.io.read_qrels, ...) are listed as links to it.
API = Path(__file__).resolve().parent / "api"


def public_modules() -> list[str]:
    """Every module of irscale whose dotted name has no part starting with ``_``."""
    names = ["irscale"] + [m.name for m in pkgutil.walk_packages(irscale.__path__, "irscale.")]
    return sorted(n for n in names if not any(part.startswith("_") for part in n.split(".")))


def _assigned(module) -> set[str]:
    """The names a module's own top-level code assigns (its constants)."""
    names = set()
    for node in ast.parse(inspect.getsource(module)).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def module_page(name: str) -> str:
    """The reST of one module's page: its docstring and members, and links to what it re-exports."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the deprecated aliases say so when imported
        module = importlib.import_module(name)
    lines = [name, "=" * len(name), "", f".. automodule:: {name}"]
    exported = getattr(module, "__all__", None)
    if exported is None:
        lines.append("   :members:")
    else:
        assigned = _assigned(module)
        own, elsewhere = [], []
        for member in exported:
            value = getattr(module, member)
            home = getattr(value, "__module__", None)
            if home == name or (home is None and member in assigned):
                own.append(member)
            elif home is not None and not inspect.ismodule(value):
                qual = getattr(value, "__qualname__", member)  # an instance (REGISTRY): its name where it is made
                elsewhere.append(f"* :py:obj:`{name}.{member} <{home}.{qual}>`")
        if own:
            lines.append(f"   :members: {', '.join(own)}")
        if elsewhere:
            lines += ["", f"Also importable from ``{name}``:", "", *elsewhere]
    return "\n".join(lines) + "\n"


def write_api_pages(app) -> None:
    API.mkdir(exist_ok=True)
    pages = {f"{name}.rst": module_page(name) for name in public_modules()}
    for stale in API.glob("*.rst"):
        if stale.name not in pages:
            stale.unlink()
    for file, text in pages.items():
        path = API / file
        if not path.is_file() or path.read_text() != text:  # unchanged pages are not rebuilt
            path.write_text(text)


def setup(app):
    app.connect("builder-inited", write_api_pages)
