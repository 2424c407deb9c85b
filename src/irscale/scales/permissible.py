"""Which statistics are permissible on a measure: its scale type under each order.

The permissible statistics of a scale (Stevens; the 2021 paper, Section 4): on an
ordinal scale medians, ranks and sign/rank tests are meaningful; means, t tests and
ANOVA need an interval scale. Whether a measure is one depends on the order on runs it is
read under (``set``, ``strong``, ``weak``: :mod:`irscale.scales.orders`) and on the run
length N and the number of relevance levels.

* :func:`scale_types` checks a measure under every order over all runs of length N
  (:func:`irscale.scales.checks.is_ordinal` / :func:`~irscale.scales.checks.is_interval`,
  as ``irscale inspect`` does), and keeps the answers in the cache directory
  (``scale-types-v1.json``), so ``irscale measures`` lists them without checking again.
* :func:`interval_at` says whether the original measure is an interval scale at any N,
  from what the papers prove (:func:`irscale.scales.theory.statement`, under the order
  the papers study the measure under); None where they say nothing.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

from irscale._version import __version__
from irscale.errors import IrscaleError

SCALE_ORDERS = ("set", "strong", "weak")
_FILE = "scale-types-v1.json"


def scale_types(measure, N: int = 10, levels: int = 2) -> dict[str, str]:
    """``{order: "interval" | "ordinal" | "not ordinal"}`` of ``measure`` over all runs of
    length ``N`` with ``levels`` relevance degrees, under the set, strong and weak orders
    ("ordinal" means ordinal and not interval). Checked exhaustively once per irscale
    version and then read from the cache directory. Measures that cannot be checked
    (no runs of their own to enumerate at this size) raise :class:`IrscaleError`."""
    import dataclasses

    from irscale.measures import at_depth, parse_measure
    from irscale.validate import integer

    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    m = parse_measure(measure, default_cutoff=N)
    if any(f.name == "cutoff" for f in dataclasses.fields(m)):
        m = at_depth(m, N)  # the measure on runs of length N: cut at N
    return dict(_scale_types(str(m), N, levels))


@lru_cache(maxsize=None)
def _scale_types(name: str, N: int, levels: int) -> tuple:
    from irscale.scales.cache import cache_dir

    key = f"{name}|N={N}|levels={levels}|irscale {__version__}"
    path = cache_dir() / _FILE
    known = _read(path)
    if key in known:
        return tuple(sorted(known[key].items()))
    from irscale.scales.checks import as_measure, is_interval, is_ordinal

    fn = as_measure(name, N, levels - 1)
    out = {}
    for order in SCALE_ORDERS:
        if not is_ordinal(fn, order, N, levels):
            out[order] = "not ordinal"
        else:
            out[order] = "interval" if is_interval(fn, order, N, levels) else "ordinal"
    known = _read(path)  # again: another process may have added answers meanwhile
    known[key] = out
    _write(path, known)
    return tuple(sorted(out.items()))


def _read(path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):  # absent or damaged: checked again (and rewritten)
        return {}


def _write(path, data: dict) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, indent=0, sort_keys=True))
        os.replace(tmp, path)
    except OSError:  # a read-only cache: the answers are kept for this process only
        pass


def interval_at(measure, N: int, levels: int = 2):
    """The papers' :class:`~irscale.scales.theory.Statement` about ``measure`` at run
    length N, or None where they say nothing (a user measure, bpref, Rprec)."""
    from irscale.scales.theory import statement

    try:
        return statement(measure, N, levels)
    except IrscaleError:
        return None
