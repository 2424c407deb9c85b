"""The layers of docs/architecture.md import one way, from the edge to the core: no module
imports (at module level or inside a function) from a layer above its own."""

from __future__ import annotations

import ast
from pathlib import Path

import irscale

ROOT = Path(irscale.__file__).parent

# bottom to top; equal ranks may import each other's modules only within a package
LAYERS = [
    ("_version", "errors", "validate", "examples", "kernels"),
    ("parallel",),
    ("io",),
    ("data",),
    ("measures",),
    ("scales",),
    ("stats", "effects", "measurefree"),
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
ALLOWED = {("study", "report"), ("experiment", "report")}


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
