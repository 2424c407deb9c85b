"""The layers of docs/architecture.md import one way, from the edge to the core: no module
imports (at module level or inside a function) from a layer above its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import irscale

ROOT = Path(irscale.__file__).parent

# bottom to top; equal ranks may import each other's modules only within a package
LAYERS = [
    ("_version", "_display", "errors", "validate", "examples", "kernels"),
    ("parallel",),
    ("io",),
    ("data",),
    ("loading",),
    ("measures",),
    ("scales",),
    ("stats", "effects", "measurefree"),
    ("table",),
    ("plan",),
    ("experiment",),
    ("study",),
    ("inspect", "meaning"),
    ("testing",),
    ("report",),
    ("integrations",),
    ("cli", "__main__"),
    ("__init__",),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}

# the upward calls: Study.write / Study.markdown and ScoreTable.records / .aggregate are
# conveniences that hand the study or table to its renderer (imported when called)
ALLOWED = {("study", "report"), ("table", "report")}


def _layer(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def test_imports_go_one_way():
    bad = []
    for f in sorted(ROOT.rglob("*.py")):
        rel = f.relative_to(ROOT.parent).with_suffix("")
        me = "__init__" if rel.parts == ("irscale", "__init__") else _layer(".".join(rel.parts))
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("irscale"):
                targets = [node.module] if node.module != "irscale" else [f"irscale.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("irscale")]
            else:
                continue
            for t in targets:
                other = _layer(t)
                assert me in RANK and other in RANK, f"{f}: {me} or {other} is in no layer of this test"
                if RANK[other] > RANK[me] and (me, other) not in ALLOWED:
                    bad.append(f"{rel}:{node.lineno} imports {t} (layer {other} is above {me})")
    assert not bad, "\n".join(bad)


def _runtime_imports(path: Path) -> list[str]:
    """The irscale modules a file imports when it runs (at module level or inside a
    function); imports only for the type checker (under ``if TYPE_CHECKING:``) are left out.
    ``from irscale.pkg import mod`` imports the module ``irscale.pkg.mod``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(x)
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
        for b in n.body
        for x in ast.walk(b)
    }
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("irscale"):
            subs = [f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")]
            out += subs + ([node.module] if len(subs) < len(node.names) else [])
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("irscale")]
    return out


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (ROOT.parent / rel).with_suffix(".py").is_file() or (ROOT.parent / rel / "__init__.py").is_file()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycles():
    """No module imports, at run time, a module that imports it back, directly or through
    others (a cycle makes the import order matter, and hides which module builds on which).
    Function-local imports count: they only delay the cycle. Left out: the package
    ``__init__`` Python runs before a submodule (``irscale.scales.wide`` runs
    ``irscale/scales/__init__``), which re-exports and so imports whatever it names."""
    import networkx as nx

    graph = nx.DiGraph()
    for f in sorted(ROOT.rglob("*.py")):
        me = _module_name(f)
        graph.add_node(me)
        graph.add_edges_from((me, t) for t in _runtime_imports(f) if t != me and _is_module(t))
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_check_sees_function_local_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from irscale.study import Study\n"
        "def f():\n    from irscale.scales import rankmap\n    import irscale.errors\n"
    )
    assert sorted(_runtime_imports(f)) == ["irscale.errors", "irscale.scales.rankmap"]


def test_no_code_outside_scales_asks_which_class_a_space_is():
    """Spaces declare what they can do (description, equispaced, certified_bounds,
    values_are_keys, closed, ...); the planner, the CLI and the reports read the
    declarations, never ``isinstance(space, SomeSpace)``."""
    from irscale.scales.spaces import Space

    classes, todo = set(), [Space]
    while todo:  # every space class irscale declares (each module of irscale.scales.spaces is imported with it)
        cls = todo.pop()
        classes.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    assert {"CountSpace", "RBPSpace", "DCGSpace", "GenericSpace"} <= classes
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.is_relative_to(ROOT / "scales"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass"):
                asked = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if any(re.search(rf"\b{c}\b", asked) for c in classes):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "ask the space's declarations instead:\n" + "\n".join(found)


def test_every_module_says_what_it_exports():
    """Each module of the package has ``__all__`` (or a leading underscore: private), and
    every name ``__all__`` lists exists."""
    import importlib
    import pkgutil
    import warnings

    missing, absent = [], []
    for info in pkgutil.walk_packages(irscale.__path__, "irscale."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (the old module names say where they went)
            mod = importlib.import_module(info.name)
        if not hasattr(mod, "__all__"):
            missing.append(info.name)
        absent += [f"{info.name}.{n}" for n in getattr(mod, "__all__", []) if not hasattr(mod, n)]
    assert not missing, f"modules without __all__: {missing}"
    assert not absent, f"__all__ names that do not exist: {absent}"


def test_the_scales_package_exports_one_encoding_of_the_grade_scale():
    """What irscale.scales exports counts the grade scale one way: ``levels`` (2: binary).
    The run spaces' own ``c`` (the top grade) stays with irscale.scales.spaces."""
    import inspect

    import irscale.scales as scales

    asked = {}
    for name in scales.__all__:
        obj = getattr(scales, name)
        if callable(obj) and not isinstance(obj, type):
            asked[name] = set(inspect.signature(obj).parameters)
    assert not [n for n, params in asked.items() if "c" in params], asked
    assert {"build", "statement", "run_space"} <= {n for n, params in asked.items() if "levels" in params}
    assert scales.run_space("nDCG", 10, 3) is not None and scales.run_space("nDCG", 10, 3).c == 2


def test_pick_engine_reads_what_spaces_declare():
    """pick_engine asks a space's declarations (engine_rule, closed, splittable, int64), never
    which class it is: no isinstance on a space class in it."""
    import inspect

    from irscale.scales import rankmap

    source = inspect.getsource(rankmap.pick_engine)
    assert "isinstance" not in source, source
    from irscale.scales.spaces import space_for

    declared = {
        type(space_for(m, 30, 2)).__name__: space_for(m, 30, 2).engine_rule for m in ("RBP(p=0.8)", "nDCG", "ERR")
    }
    assert declared == {"RBPSpace": "rbp-count", "DCGSpace": "dcg-budget", "ERRSpace": "err-wide"}
    assert set(declared.values()) <= set(rankmap.ENGINE_RULES)
