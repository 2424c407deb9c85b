"""irscale: measurement-theoretic evaluation of information retrieval systems.

Scores TREC runs exactly like trec_eval, maps measures onto interval scales, and says
which conclusions are meaningful.

The public names below are imported on first use (PEP 562), so ``import irscale`` and
the command line start without loading pandas, scipy and the study.
"""

from irscale._version import __version__

_LAZY = {
    "evaluate": "irscale.experiment",
    "transform": "irscale.experiment",
    "ScoreTable": "irscale.table",
    "ReadOptions": "irscale.loading",
    "plan_transform": "irscale.plan",
    "TransformPlan": "irscale.plan",
    "read_qrels": "irscale.io",
    "read_run": "irscale.io",
    "read_runs": "irscale.io",
    "Qrels": "irscale.io",
    "Run": "irscale.io",
    "parse_measure": "irscale.measures",
    "compare": "irscale.study",
    "Study": "irscale.study",
    "read_study": "irscale.study",
    "meaningful": "irscale.meaning",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'irscale' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
