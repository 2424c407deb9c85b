"""Every verb does its work once: transform builds each rank map once and computes each
run's exact keys once, whatever the tie strategies; compare calls transform once and
builds no rank map twice (the interval checks reuse what they can)."""

from __future__ import annotations

import collections
import warnings
from pathlib import Path

import pytest

import irscale
from irscale import experiment
from irscale.measures.registry import ENTRIES
from irscale.scales import rankmap, spaces

TOY = Path(irscale.__file__).parent / "examples" / "toy"
MEASURES = ["AP", "nDCG", "RBP(p=0.8)"]


@pytest.fixture
def counted(monkeypatch):
    calls = collections.Counter()
    builds = collections.Counter()
    for name in ("score", "transform"):
        real = getattr(experiment, name)

        def counting(*a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(*a, **k)

        monkeypatch.setattr(experiment, name, counting)
        if name == "transform":
            monkeypatch.setattr("irscale.study.transform", counting)
    real_build = rankmap.build

    def build(measure, N, levels=2, **k):
        builds[(str(measure), N, levels)] += 1
        calls["build"] += 1
        return real_build(measure, N, levels, **k)

    monkeypatch.setattr(rankmap, "build", build)
    monkeypatch.setattr("irscale.scales.build", build)
    for cls in {space for e in ENTRIES.values() for space, _ in e.spaces} | {spaces.GenericSpace}:
        if "keys" in cls.__dict__:
            real_keys = cls.__dict__["keys"]

            def keys(self, g, _real=real_keys):
                calls["keys"] += 1
                return _real(self, g)

            monkeypatch.setattr(cls, "keys", keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TOY / "qrels.txt", sorted((TOY / "runs").glob("*.txt")), ["AP"])
        irscale.compare(table, MEASURES, depth=5, tests=[])  # rank maps built and cached: not counted
    calls.clear()
    builds.clear()
    return table, calls, builds


def test_transform_builds_and_keys_once_for_all_strategies(counted):
    table, calls, builds = counted
    t = experiment.transform(table, MEASURES, depth=5, ties=("unq", "mid", "min"))
    assert len(t.measures) == 3 * 4
    assert calls["build"] == 3 and calls["keys"] == 3 and calls["score"] == 1
    assert set(builds.values()) == {1}


def test_compare_transforms_once(counted):
    table, calls, builds = counted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        irscale.compare(table, MEASURES, depth=5, tests=["ttest"])
    assert calls["transform"] == 1  # before the refit: twice (unq, then mid)
    assert calls["score"] <= 1  # before: 3
    assert max(builds.values()) == 1  # no rank map built (or loaded) twice; before: 6 builds
    # transform's keys (3) and one enumeration per measure for the interval check
    assert calls["keys"] <= 2 * len(MEASURES)  # before: 15
