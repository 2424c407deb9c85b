"""Value sets: a measure's distinct values M(REL^N) on one run space, behind one interface.

Every engine returns a value set; :class:`~irscale.scales.rankmap.RankMap` asks it the
same questions whatever its kind:

* ``phi(keys)``: distinct values <= each key's value (the "unq" rank, 1..size);
* ``runs_le(keys)`` / ``runs_at(keys)``: runs of length N with value <= / = each key's
  value (the "min", "max" and "mid" ranks over the multiset of all (c+1)^N runs);
* ``listed(first, last)``: the keys of the distinct values in value order (the first
  or last few), or None when the kind never lists them (pair counting);
* ``runs_le_at(keys)``: both run counts at once (one pass where a kind can share it);
* ``arrays()`` / ``from_arrays(space, arrays)``: what the disk cache stores, and the
  value set rebuilt from it (:func:`from_arrays` picks the kind by its stored name).

Kinds: :class:`ClosedForm` (P, R, F, gP, RR, RBTO, SBTO, binary RBP with p <= 1/2),
:class:`Table` (every distinct key in memory, key order = value order),
:class:`ValueTable` (DCG: keys group runs, several keys may share a value),
:class:`irscale.scales.engines.Buckets` (key ranges of a split, keys regenerated on
demand) and
:class:`irscale.scales.counting.Counter` (pair counting, nothing listed). Kinds whose
answers are expensive (``memo = True``) have them remembered, and persisted, by the
rank map.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from irscale.errors import IrscaleError

if TYPE_CHECKING:
    from irscale.scales.spaces import Space


__all__ = ["ClosedForm", "from_arrays", "kind", "KINDS", "Table", "ValueSet", "ValueTable"]


class ValueSet:
    """The interface (see the module docstring)."""

    memo = False  # answers are expensive: the rank map remembers (and persists) them
    # (keys, phi) an engine answered while building (the split engine's ``queries``); the rank
    # map takes them into its remembered answers and sets this back to None
    answers: tuple | None = None

    if TYPE_CHECKING:  # declared read-only for the type checker; no class attribute at run time

        @property
        def size(self) -> int:
            """Distinct values (a field or a property of each kind)."""
            ...

    def phi(self, keys: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def runs_le(self, keys: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def runs_at(self, keys: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def runs_le_at(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.runs_le(keys), self.runs_at(keys)

    def listed(self, first: int | None = None, last: int | None = None) -> np.ndarray | None:
        raise NotImplementedError

    kind = "?"  # the name stored with the arrays

    def arrays(self) -> dict:
        """Arrays to store (beside ``kind``); nothing for kinds rebuilt from the space."""
        return {}

    @classmethod
    def from_arrays(cls, space, z: dict) -> ValueSet:
        raise NotImplementedError


KINDS: dict[str, type[ValueSet]] = {}


def kind(name: str):
    """Class decorator: the value-set kind stored under ``name`` in the cache."""

    def deco(cls):
        cls.kind = name
        KINDS[name] = cls
        return cls

    return deco


def from_arrays(space, engine: str, z: dict) -> ValueSet:
    """The value set stored in ``z`` (a cache file's arrays). Files written before kinds
    were stored are recognised by their arrays. The kinds register themselves in the
    modules of their engines (``buckets``: engines, ``count``: counting), which the rank
    map, the one caller, imports first."""
    from irscale.scales.cache import ints_in

    z = {k: (ints_in(v) if k in ("keys", "runs") else v) for k, v in z.items()}
    if "kind" in z:
        name = str(z["kind"])
    elif engine in ("closed", "count"):
        name = engine
    else:
        name = "buckets" if "bounds" in z else "value-table" if "phi_of_key" in z else "table"
    if name not in KINDS:
        raise KeyError(f"unknown value-set kind {name!r}")
    return KINDS[name].from_arrays(space, z)


def _first_last(n: int, first: int | None, last: int | None) -> range:
    """Positions 0..n-1 of the first ``first`` or the last ``last`` (all when neither)."""
    if first is not None:
        return range(min(first, n))
    if last is not None:
        return range(max(n - last, 0), n)
    return range(n)


@kind("closed")
@dataclass
class ClosedForm(ValueSet):
    """Closed forms: every closed family's key is its rank minus one (0..size-1)."""

    space: Space  # a closed-form space (closed_size, closed_phi, closed_runs_le)

    @property
    def size(self) -> int:
        return self.space.closed_size()

    def phi(self, keys):
        return self.space.closed_phi(keys)

    def runs_le(self, keys):
        return np.asarray(self.space.closed_runs_le(keys), dtype=object)

    def runs_at(self, keys):
        le = self.runs_le(keys)
        below = np.asarray(self.space.closed_runs_le(np.maximum(keys - 1, 0)), dtype=object)
        return np.where(np.asarray(keys) > 0, le - below, le).astype(object)

    def listed(self, first=None, last=None):
        return np.array(list(_first_last(self.size, first, last)), dtype=object)

    @classmethod
    def from_arrays(cls, space, z):
        return cls(space)


@kind("table")
@dataclass
class Table(ValueSet):
    """The whole value set in memory, key order = value order: distinct keys sorted
    ascending and the number of runs having each."""

    keys: np.ndarray  # int64 sorted (object: Python ints, for the oracle on spaces beyond int64)
    runs: np.ndarray  # int64 runs per key (object: Python ints where counts may pass 2^62)

    @property
    def size(self) -> int:
        return len(self.keys)

    @cached_property
    def _cum(self) -> np.ndarray:
        if self.runs.dtype == object:  # run counts that may pass 2^62: Python ints
            return np.concatenate([[0], np.cumsum(self.runs)]).astype(object)
        return np.concatenate([[0], np.cumsum(self.runs, dtype=np.int64)])  # sums to the space's runs < 2^62

    def phi(self, keys):
        return np.searchsorted(self.keys, keys, side="right").astype(np.int64)

    def runs_le(self, keys):
        return self._cum[np.searchsorted(self.keys, keys, side="right")]

    def runs_at(self, keys):
        return (
            self._cum[np.searchsorted(self.keys, keys, side="right")]
            - self._cum[np.searchsorted(self.keys, keys, side="left")]
        )

    def listed(self, first=None, last=None):
        return self.keys[list(_first_last(len(self.keys), first, last))]

    def arrays(self):
        return {"keys": self.keys, "runs": self.runs}

    @classmethod
    def from_arrays(cls, space, z):
        return cls(z["keys"], z["runs"])


@kind("value-table")
@dataclass
class ValueTable(ValueSet):
    """The whole value set in memory where keys only group runs (DCG: the class-total
    vectors): ``phi_of_key`` is each key's rank, ``value_order`` the key indices in value
    order; several keys may share a value (rational ties, decided exactly)."""

    keys: np.ndarray  # int64 sorted
    runs: np.ndarray  # runs per key
    phi_of_key: np.ndarray  # int64, 1..size
    value_order: np.ndarray  # key indices in value order

    @property
    def size(self) -> int:
        return int(self.phi_of_key.max()) if len(self.keys) else 0

    def _pos(self, keys):
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        if not (self.keys[pos] == keys).all():
            raise IrscaleError("a key outside the run space was asked for (not a run of length N)")
        return pos

    def phi(self, keys):
        return self.phi_of_key[self._pos(keys)]

    @cached_property
    def _runs_per_phi(self) -> np.ndarray:
        wide = self.runs.dtype == object  # int64 runs sum to the space's runs, below 2^62
        out = np.zeros(self.size + 1, dtype=object if wide else np.int64)
        np.add.at(out, self.phi_of_key, self.runs)
        return out

    @cached_property
    def _cum_per_phi(self) -> np.ndarray:
        return np.cumsum(self._runs_per_phi)

    def runs_le(self, keys):
        return self._cum_per_phi[self.phi(keys)]

    def runs_at(self, keys):
        return self._runs_per_phi[self.phi(keys)]

    def listed(self, first=None, last=None):
        order = self.value_order
        _, firsts = np.unique(self.phi_of_key[order], return_index=True)  # one key per value
        order = order[firsts]
        return self.keys[order[list(_first_last(len(order), first, last))]]

    def arrays(self):
        return {"keys": self.keys, "runs": self.runs, "phi_of_key": self.phi_of_key, "value_order": self.value_order}

    @classmethod
    def from_arrays(cls, space, z):
        return cls(z["keys"], z["runs"], z["phi_of_key"], z["value_order"])
