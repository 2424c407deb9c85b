"""Extension points (docs/architecture.md): a measure written in one place (its class) and
its run space in a second (a Space declaring ``@serves``) get evaluate, transform and
compare, with the engine chosen by lookup; a user measure without a space goes through
generic enumeration. The truth here is a brute force written in this file."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pytest

import irscale
from irscale.measures import Measure, parse_measure, register
from irscale.measures.base import REGISTRY, cut, relevant
from irscale.scales import build, space_for
from irscale.scales.spaces import Space, serves

TOY = Path(irscale.__file__).parent / "examples" / "toy"


@pytest.fixture
def linear_hits():
    """LinHits@N: sum over relevant ranks k of (N - k + 1), divided by the best value
    N (N + 1) / 2 (a made-up top-heavy measure; its core is an integer)."""

    @register("LinHits")
    @dataclass(frozen=True)
    class LinHits(Measure):
        cutoff: int | None = None
        rel: int = 1
        param_docs = {"rel": "minimum grade counted relevant"}

        def batch(self, grades, topics):
            r = relevant(cut(grades, self.cutoff), self.rel)
            n = r.shape[-1]
            return (r @ np.arange(n, 0, -1, dtype=np.float64)) / (n * (n + 1) / 2)

        def normalizer(self, topics, N, c):
            return np.full(len(topics.names), N * (N + 1) / 2)

    @serves(LinHits)
    @dataclass(frozen=True, eq=False)
    class LinHitsSpace(Space):
        family: str = "linhits"

        @cached_property
        def max_key(self):
            return self.N * (self.N + 1) // 2

        def keys(self, g):
            return np.asarray(g, dtype=np.int64) @ np.arange(self.N, 0, -1, dtype=np.int64)

        def key_values(self, keys):
            return np.asarray(keys, dtype=np.float64)

    yield LinHits, LinHitsSpace
    REGISTRY.pop("LinHits")  # its space goes with it (one registry entry)


def _brute_phi(N: int) -> dict[tuple, int]:
    """phi of every binary run of length N by the definition (distinct values <= its own)."""
    runs = list(itertools.product((0, 1), repeat=N))
    value = {r: sum((N - k) * x for k, x in enumerate(r)) for r in runs}
    distinct = sorted(set(value.values()))
    return {r: 1 + distinct.index(v) for r, v in value.items()}


def test_a_measure_and_its_space_get_evaluate_transform_and_compare(linear_hits):
    LinHits, LinHitsSpace = linear_hits
    assert isinstance(space_for("LinHits", 6), LinHitsSpace)  # lookup, no switch to edit
    rm = build("LinHits", 6, cache=False)
    assert rm.engine == "enumerate" and rm.size == 6 * 7 // 2 + 1  # every total 0..21 is reachable
    brute = _brute_phi(6)
    runs = np.array(list(brute), dtype=np.int8)
    assert rm.phi_runs(runs).tolist() == [brute[tuple(r)] for r in runs.tolist()]

    table = irscale.evaluate(TOY / "qrels.txt", sorted((TOY / "runs").glob("*.txt")), ["LinHits@5", "P@5"])
    assert table.values.shape[0] == 2 and (table.values[0] >= 0).all() and (table.values[0] <= 1).all()
    t = irscale.transform(table, ["LinHits"], depth=5, ties=("unq", "mid"))
    assert [str(m) for m in t.measures] == ["LinHits@5", "ranked(LinHits@5)", "ranked(LinHits@5, ties=mid)"]
    assert t.provenance["transform"]["maps"]["LinHits@5"]["engine"] == "enumerate"
    brute5 = _brute_phi(5)
    g = (table.judged.grades[..., :5] >= 1).astype(int)
    expect = [[brute5[tuple(row.tolist() + [0] * (5 - len(row)))] for row in sys_g] for sys_g in g]
    assert t.values[1].tolist() == np.array(expect, dtype=float).tolist()
    # the measure column equals the measure itself, and exact_values derives it from the keys
    assert np.allclose(t.values[0], table.values[0])
    exact = irscale.transform(table, ["LinHits"], depth=5, exact_values=True)
    assert np.allclose(exact.values[0], table.values[0])

    study = irscale.compare(table, ["LinHits", "P"], depth=5, tests=["sign", "ttest"])
    assert list(study.table2["measure"]) == ["LinHits@5", "P@5"]
    assert study.table2.loc[0, "tau_unq"] == pytest.approx(1.0)  # phi preserves the order
    assert study.provenance["rank_maps"]["LinHits@5"]["engine"] == "enumerate"


def test_a_user_measure_without_a_space_enumerates():
    """One protocol for user measures: a Measure subclass; without a space (and without
    ``exact_key``) runs tie exactly when the measure's float64 values are equal."""

    @register("TopTwo")
    @dataclass(frozen=True)
    class TopTwo(Measure):
        cutoff: int | None = None

        def batch(self, grades, topics):
            return (cut(grades, 2) > 0).sum(axis=-1) / 2.0

    try:
        rm = build("TopTwo", 5, cache=False)
        assert rm.engine == "enumerate" and rm.size == 3
        assert type(space_for("TopTwo", 5)).__name__ == "GenericSpace"
    finally:
        REGISTRY.pop("TopTwo")


def test_declarations_replace_switches():
    """What the scale layer and reports need is on the measure class."""
    assert parse_measure("map_cut_10") == parse_measure("AP@10")  # from the class's trec_eval names
    assert parse_measure("AP@10").trec_eval_name == "map_cut_10"
    assert parse_measure("nDCG(base=2)@10").trec_eval_name is None
    assert parse_measure("RBP(p=0.8)").label == "RBP_p08" and parse_measure("DCG(base=10)").label == "DCG_b10"
    assert parse_measure("NumRel").is_count and not parse_measure("AP").is_count
    docs = dict((n, d) for n, _, d in type(parse_measure("RBP")).param_info())
    assert "persistence" in docs["p"] and "cutoff" in docs["cutoff"]
    from irscale.data import TopicStats

    topics = TopicStats.single([3, 2])  # 2 relevant documents
    assert parse_measure("AP").normalizer(topics, 10, 1).tolist() == [2.0]
    assert parse_measure("P").normalizer(topics, 10, 1).tolist() == [10.0]
    with pytest.raises(irscale.errors.MeasureError, match="Success takes two values"):
        space_for("Success", 10)
