"""Walk compare's measures through the code: how often each fact about a measure is derived
during one `irscale compare` (the measures parsed and named, their run space found, their
engine chosen, their scale decided), counted by wrapping the functions that derive them.
Run it on two checkouts to see what a refactoring changed:

    PYTHONPATH=src python scripts/plan_walk.py [-- compare options]

It runs `irscale compare` on the example collection shipped with irscale (in this process,
with typer's test runner) with -N 5, four measures and two tests unless options are given.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

# the functions that derive a fact about a measure, wherever they live in a checkout
FACTS = {
    "parse_measures": "measures parsed (the list)",
    "relevance_measures": "named under the relevance setting",
    "space_for": "run space found",
    "pick_engine": "engine chosen",
    "choose_engine": "engine chosen and its limits checked",
    "scale_of": "scale decided (the owner)",
    "scale_as_named": "scale asked for a measure as named",
    "plan_rank_maps": "rank maps planned (old)",
    "_plan": "engines planned (refusals)",
    "plan_transform": "transform planned",
}


def _wrap_all(counts: Counter) -> None:
    import irscale

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mods = [
            importlib.import_module(m.name)
            for m in pkgutil.walk_packages(irscale.__path__, "irscale.")
            if not m.name.endswith("__main__")
        ]
    wrapped: dict[int, object] = {}
    for mod in mods:
        for name in FACTS:
            fn = getattr(mod, name, None)
            if not callable(fn) or getattr(fn, "__name__", None) != name:
                continue
            if id(fn) not in wrapped:

                @functools.wraps(fn)
                def counted(*a, _fn=fn, _name=name, **k):
                    counts[_name] += 1
                    return _fn(*a, **k)

                wrapped[id(fn)] = counted
            setattr(mod, name, wrapped[id(fn)])


def main() -> None:
    from typer.testing import CliRunner

    import irscale
    from irscale.cli import app

    toy = Path(irscale.__file__).parent / "examples" / "toy"
    extra = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    options = extra or ["-N", "5", "-m", "AP", "-m", "nDCG", "-m", "P", "-m", "RBP(p=0.8)", "-t", "sign", "-t", "ttest"]
    counts: Counter = Counter()
    _wrap_all(counts)
    with tempfile.TemporaryDirectory() as out:
        res = CliRunner().invoke(
            app, ["compare", str(toy / "qrels.txt"), str(toy / "runs"), *options, "--no-figures", "-o", out]
        )
    if res.exit_code:
        sys.exit(f"compare failed ({res.exit_code}): {res.output[-2000:]}")
    print(f"irscale compare {' '.join(options)} (the example collection), irscale from {Path(irscale.__file__).parent}")
    for name, what in FACTS.items():
        print(f"  {counts[name]:5}  {name:20} {what}")


if __name__ == "__main__":
    main()
