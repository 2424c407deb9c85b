"""Regressions found in review of the refit (issue 10): each failed on its first version."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pytest

import irscale
from irscale.measures import AP, FunctionMeasure, Measure, register
from irscale.measures.base import REGISTRY, cut
from irscale.scales import build, engines, space_for
from irscale.scales.spaces import Space, all_runs, serves

TOY = Path(irscale.__file__).parent / "examples" / "toy"


@pytest.fixture(scope="module")
def toy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(TOY / "qrels.txt", sorted((TOY / "runs").glob("*.txt")), ["AP"])


def test_columns_follow_the_order_of_the_strategies(toy):
    both = irscale.transform(toy, ["AP"], depth=10, ties=("mid", "unq"))
    mid = irscale.transform(toy, ["AP"], depth=10, ties="mid")
    unq = irscale.transform(toy, ["AP"], depth=10, ties="unq")
    assert [str(m) for m in both.measures] == ["AP@10", "ranked(AP@10, ties=mid)", "ranked(AP@10)"]
    assert np.array_equal(both.values[1], mid.values[1]) and np.array_equal(both.values[2], unq.values[1])


def test_normalized_ranks_stay_in_the_unit_interval(toy):
    t = irscale.transform(toy, ["AP", "RR"], depth=5, ties=("unq", "mid", "max"), normalize=True)
    ranked = t.values[2:]
    assert (ranked > 0).all() and (ranked <= 1).all()


def test_a_measure_given_with_its_cutoff_is_still_checked_for_intervalness(toy):
    study = irscale.compare(toy, ["P@20", "RBP(p=0.5)@20"], depth=20, tests=["ttest"], relevance="lenient")
    assert study.changes["meaningful"].tolist() == [True, True]  # binary P and RBP(1/2) are interval scales
    # on the toy's 3 grades RBP(1/2) is not even ordinal (2019 paper, Sec. 5: p > 1/(c+1) = 1/3)
    study = irscale.compare(toy, ["P@20", "RBP(p=0.5)@20"], depth=20, tests=["ttest"], relevance="graded")
    assert study.changes["meaningful"].tolist() == [True, False]


def test_two_user_functions_are_two_measures_and_never_share_a_cached_map():
    f, g = (lambda r, c: r.sum(1)), (lambda r, c: r[:, 0])  # both named "<lambda>"
    a, b = FunctionMeasure(fn=f, name="x"), FunctionMeasure(fn=g, name="x")
    assert a != b and len(irscale.measures.parse_measures([a, b])) == 2
    assert (build(a, 6).size, build(b, 6).size) == (7, 2)


def test_a_users_space_never_meets_the_generic_map_of_its_measure():
    @register("Lin")
    @dataclass(frozen=True)
    class Lin(Measure):
        cutoff: int | None = None

        def batch(self, grades, topics):
            r = cut(grades, self.cutoff) > 0
            return r @ np.arange(r.shape[-1], 0, -1, dtype=np.float64)

    try:
        generic = build("Lin", 4)  # generic enumeration (not cached)

        @serves(Lin)
        @dataclass(frozen=True, eq=False)
        class LinSpace(Space):  # no family of its own: the identity still names the class
            @cached_property
            def max_key(self):
                return self.N * (self.N + 1) // 2

            def keys(self, g):
                return np.asarray(g, dtype=np.int64) @ np.arange(self.N, 0, -1, dtype=np.int64)

            def key_values(self, keys):
                return np.asarray(keys, dtype=np.float64)

        own = build("Lin", 4)
        assert not own.from_cache and "LinSpace" in own.space.identity
        runs = all_runs(4, 1)
        assert np.array_equal(own.phi_runs(runs), generic.phi_runs(runs))
        assert np.array_equal(build("Lin", 4).phi_runs(runs), generic.phi_runs(runs))  # now from the cache
    finally:
        REGISTRY.pop("Lin")  # its space goes with it (one registry entry)


def test_a_subclass_that_changes_the_measure_is_not_served_by_its_parents_space():
    @dataclass(frozen=True)
    class TopAP(AP):  # a user's variant: AP of the top 2 only
        def batch(self, grades, topics):
            return super().batch(cut(grades, 2), topics)

    assert type(space_for(TopAP(), 6)).__name__ == "GenericSpace"
    assert type(space_for(AP(), 6)).__name__ == "APSpace"


def test_mid_ranks_on_buckets_count_the_pairs_once(monkeypatch):
    from irscale.scales.rankmap import RankMap

    sp = space_for("AP", 14)
    summary = engines.split_engine(sp, h=7, bucket_pairs=256, keep_in_memory=0)
    rm = RankMap(sp, "split", summary.size, sp.n_runs, 0.0, summary)
    calls = []
    real = engines._count_pairs
    monkeypatch.setattr(engines, "_count_pairs", lambda half, q: calls.append(len(q)) or real(half, q))
    g = all_runs(14, 1)[::97]
    got = rm.rank(sp.keys(g), ("mid", "min", "max"))
    assert len(calls) == 1
    oracle = build("AP", 14, engine="oracle", cache=False)
    for t in ("mid", "min", "max"):
        assert np.array_equal(got[t], oracle.phi_runs(g, t))


def test_cli_transform_takes_several_strategies():
    from typer.testing import CliRunner

    from irscale.cli import app

    res = CliRunner().invoke(
        app,
        [
            "transform",
            str(TOY / "qrels.txt"),
            str(TOY / "runs"),
            "-m",
            "AP",
            "-N",
            "5",
            "--ties",
            "unq",
            "--ties",
            "mid",
            "-f",
            "tsv",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "ranked(AP@5)\t" in res.stdout and "ranked(AP@5, ties=mid)\t" in res.stdout
