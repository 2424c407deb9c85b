"""Meaningfulness (2021 paper, Section 2.4): a statement about scores is meaningful on a
scale when its truth does not change under the scale's permissible transformations.

``meaningful(statement, data, scale)`` applies many permissible transformations to every
sample in ``data`` (random ones, and adversarial ones chosen to stress means, medians,
products and ratios) and reports the first that changes the statement's truth:

* nominal: any one-to-one map of the values (here: permutations and injective maps of
  the distinct values);
* ordinal: strictly increasing maps (powers, exponentials, logarithms, random
  piecewise-linear monotone maps of the distinct values);
* interval: x -> a x + b with a > 0;
* ratio: x -> a x with a > 0.

A failure is a proof (the witness); passing is evidence over the transformations tried
(``trials`` random ones plus the adversarial family), which for the affine families with
statements built from order, sums and means is also exact (Example 7's argument).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irscale.errors import ArgumentError, check_choice
from irscale.validate import integer

__all__ = ["meaningful", "Meaningfulness", "SCALES"]


SCALES = ("nominal", "ordinal", "interval", "ratio")


@dataclass
class Meaningfulness:
    statement: str
    scale: str
    meaningful: bool
    truth: bool  # the statement's truth on the data as given
    tried: int
    witness: dict | None = None  # the transformation that changed the truth, and the data it gave
    details: dict = field(default_factory=dict)

    def __bool__(self):
        return self.meaningful

    def explain(self) -> str:
        s = (
            f"'{self.statement}' on a{'n' if self.scale[0] in 'aeiou' else ''} {self.scale} scale: "
            f"{'meaningful' if self.meaningful else 'NOT meaningful'} (true on the data: {self.truth}; "
            f"{self.tried} permissible transformations tried)"
        )
        if self.witness:
            s += f"\n  witness: {self.witness['transformation']} makes it {self.witness['truth']}"
        return s


def _monotone_maps(values: np.ndarray, rng, trials: int):
    """Strictly increasing maps, as (description, function) pairs."""
    lo, hi = float(values.min()), float(values.max())
    span = hi - lo or 1.0
    shifted = lambda x: (x - lo) / span + 1.0  # noqa: E731  -> [1, 2], positive
    maps: list[tuple[str, Callable[..., Any]]] = [
        ("x^2 (after moving to [1, 2])", lambda x: shifted(x) ** 2),
        ("x^10 (after moving to [1, 2])", lambda x: shifted(x) ** 10),
        ("sqrt (after moving to [1, 2])", lambda x: np.sqrt(shifted(x))),
        ("log (after moving to [1, 2])", lambda x: np.log(shifted(x))),
        ("exp(5 x) (after moving to [1, 2])", lambda x: np.exp(5 * shifted(x))),
        ("-1/x (after moving to [1, 2])", lambda x: -1 / shifted(x)),
    ]
    distinct = np.unique(values)
    for t in range(trials):
        steps = rng.exponential(size=len(distinct)) ** (3 if t % 2 else 1)
        image = np.cumsum(steps)
        table = dict(zip(distinct.tolist(), image.tolist()))
        maps.append(
            (
                f"random increasing map #{t} of the {len(distinct)} distinct values",
                lambda x, table=table: np.vectorize(table.__getitem__, otypes=[float])(x),
            )
        )
    return maps


def _injective_maps(values, rng, trials):
    distinct = np.unique(values)
    maps = []
    for t in range(trials):
        image = rng.permutation(len(distinct)) * rng.uniform(0.5, 3) + rng.normal() * 10
        if t % 3 == 1:
            image = -image
        table = dict(zip(distinct.tolist(), image.tolist()))
        maps.append(
            (
                f"random one-to-one map #{t} of the {len(distinct)} distinct values",
                lambda x, table=table: np.vectorize(table.__getitem__, otypes=[float])(x),
            )
        )
    return maps


def _affine_maps(rng, trials, with_shift: bool):
    pairs = [(1.8, 32.0), (1.0, 1000.0), (1.0, -1000.0), (0.001, 0.0), (1000.0, 0.0), (2.0, 0.5), (1.0, 273.15)]
    pairs += [(float(np.exp(rng.normal(0, 2))), float(rng.normal(0, 100))) for _ in range(trials)]
    out = []
    for a, b in pairs:
        b = b if with_shift else 0.0
        out.append((f"x -> {a:g} x + {b:g}" if with_shift else f"x -> {a:g} x", lambda x, a=a, b=b: a * x + b))
    return out


def meaningful(
    statement: Callable[[Mapping[str, np.ndarray]], bool],
    data: Mapping[str, np.ndarray],
    scale: str = "interval",
    *,
    trials: int = 200,
    seed: int = 0,
    name: str | None = None,
) -> Meaningfulness:
    """Is ``statement(data)`` invariant under the permissible transformations of ``scale``?

    ``data`` maps names to samples (all on the same scale; constants the statement
    compares with, like the value of "Spain", go in as samples too, so they are
    transformed alike); ``statement`` returns a bool.

    >>> import numpy as np
    >>> paris, rome = np.array([2, 2, 4, 8, 36.]), np.array([1, 2, 4, 15, 34.])
    >>> mean_less = lambda d: d["paris"].mean() < d["rome"].mean()
    >>> meaningful(mean_less, {"paris": paris, "rome": rome}, "interval").meaningful
    True
    >>> gmean_greater = lambda d: np.exp(np.log(d["paris"]).mean()) > np.exp(np.log(d["rome"]).mean())
    >>> meaningful(gmean_greater, {"paris": paris, "rome": rome}, "interval").meaningful
    False
    """
    if not callable(statement):
        raise ArgumentError(
            f"statement must be a function of the data returning True or False (for example "
            f"lambda d: d['A'].mean() > d['B'].mean()), not {type(statement).__name__} {statement!r}"
        )
    if not isinstance(data, Mapping) or not data:
        raise ArgumentError(
            "data must be a non-empty dict of named samples, for example {'A': scores_a, "
            f"'B': scores_b}}, not {type(data).__name__}"
        )
    check_choice("scale", scale, SCALES)
    trials = integer("trials", trials, minimum=0)
    seed = integer("seed", seed)
    try:
        data = {k: np.asarray(v, dtype=np.float64) for k, v in data.items()}
    except (TypeError, ValueError):
        raise ArgumentError("every sample in data must be numbers (a list or array of floats)") from None
    label: str = name if name else getattr(statement, "__name__", "statement")
    truth = bool(statement(data))
    rng = np.random.default_rng(seed)
    allv = np.concatenate([v.reshape(-1) for v in data.values()])
    if scale == "nominal":
        maps = _injective_maps(allv, rng, trials)
    elif scale == "ordinal":
        maps = _monotone_maps(allv, rng, trials)
    else:
        maps = _affine_maps(rng, trials, with_shift=(scale == "interval"))
    tried = 0
    for desc, f in maps:
        new = {k: np.asarray(f(v), dtype=np.float64) for k, v in data.items()}
        tried += 1
        with np.errstate(all="ignore"):
            t = statement(new)
        if bool(t) != truth:
            return Meaningfulness(
                label,
                scale,
                False,
                truth,
                tried,
                {"transformation": desc, "truth": bool(t), "data": {k: v.tolist() for k, v in new.items()}},
            )
    return Meaningfulness(label, scale, True, truth, tried)
