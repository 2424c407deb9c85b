"""One plan from the command line to the engines (irscale.plan): a transform's facts (each
measure as named and computed, its space, its engine or bounds, its scale verdict, every
refusal) are decided once by plan_transform, and transform, compare and the CLI read them
from the plan without deriving any of them again."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import irscale
from irscale.errors import ArgumentError, IrscaleError
from irscale.plan import TransformPlan, plan_transform
from irscale.study import plan_study

TOY = Path(irscale.__file__).parent / "examples" / "toy"


@pytest.fixture(scope="module")
def table():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the toy's warnings (graded qrels, a topic without results)
        return irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP"])


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def test_the_plan_holds_each_measures_facts():
    p = plan_transform(["AP", "P", "P@10", "nDCG", "RBP(p=0.8)"], 10, levels=3)
    assert p.names == ["AP@10", "P@10", "P@10", "nDCG@10", "RBP(p=0.8)@10"]  # P and P@10 at N = 10: twice
    from irscale.scales.rankmap import pick_engine

    assert [m.engine for m in p.measures] == [pick_engine(m.space) for m in p.measures]  # the one chooser's answer
    assert [m.engine for m in p.measures][1:4] == ["closed", "closed", "dcg"]
    assert [m.statement.original_scale for m in p.measures] == [
        "not ordinal",
        "interval",
        "interval",
        "not ordinal",
        "not ordinal",
    ]
    assert [str(m) for m in p.built()] == ["AP@10", "P@10", "nDCG@10", "RBP(p=0.8)@10"]  # each measure once
    bounded = plan_transform(["nDCG", "RBP(p=0.8)"], 100, levels=4, approx=1e-4)
    assert [m.engine for m in bounded.measures] == ["bounds", "bounds"] and bounded.built() == []
    assert all(m.memory is None for m in bounded.measures)  # nothing is built: no memory line


def test_lenient_plans_the_binarised_qrels():
    p = plan_transform(["nDCG"], 10, levels=4, relevance="lenient")
    assert (p.levels, p.values, p.names) == (2, None, ["nDCG(rel=1)@10"])
    with pytest.raises(ArgumentError, match="real-valued grades"):
        plan_transform(["nDCG"], 10, levels=3, relevance="lenient", values=(0.0, 0.5, 1.0))


def test_every_refusal_comes_from_the_plan_at_once():
    with pytest.raises(IrscaleError, match=r"AP@100, ERR@100: no exact engine at N = 100"):
        plan_transform(["AP", "ERR", "P"], 100, levels=3)


def test_transform_on_a_plan_equals_transform_on_names(table):
    by_names = _quiet(irscale.transform, table, ["AP", "P", "nDCG"], depth=5, ties=("unq", "mid"))
    plan = plan_transform(["AP", "P", "nDCG"], 5, levels=3)
    by_plan = _quiet(irscale.transform, table, plan, ties=("unq", "mid"))
    assert [str(c) for c in by_plan.measures] == [str(c) for c in by_names.measures]
    assert np.array_equal(by_plan.values, by_names.values, equal_nan=True)
    assert by_plan.provenance["transform"] == by_names.provenance["transform"]


def test_transform_takes_a_plan_or_keywords_never_both(table):
    plan = plan_transform(["AP"], 5, levels=3)
    for given in ({"depth": 5}, {"relevance": "graded"}, {"approx": 1e-4}, {"max_pairs": 10}):
        with pytest.raises(ArgumentError, match="give the plan or those keywords, not both"):
            _quiet(irscale.transform, table, plan, **given)


def test_a_plan_for_other_qrels_is_refused(table):
    binary = plan_transform(["AP"], 5, levels=2)  # the toy's qrels have 3 levels
    with pytest.raises(ArgumentError, match="made for 2 levels, and the judged runs have 3 levels"):
        _quiet(irscale.transform, table, binary)


def test_transform_on_a_plan_derives_nothing_again(table, monkeypatch):
    """The engine, the scale verdict and the refusals are the plan's: transform asks none of
    their owners again."""
    import irscale.plan as planning
    import irscale.scales.rankmap as rankmap

    plan = plan_transform(["AP", "P", "nDCG"], 5, levels=3)
    calls = []
    for owner, name in ((rankmap, "pick_engine"), (planning, "scale_as_named"), (planning, "_plan")):
        real = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, _real=real, _n=name, **k: calls.append(_n) or _real(*a, **k))
    _quiet(irscale.transform, table, plan)
    assert calls == []
    _quiet(irscale.transform, table, ["AP"], depth=5)  # (the check sees a plan made inside transform)
    assert {"pick_engine", "scale_as_named", "_plan"} <= set(calls)


def test_compare_reads_the_bound_plan(table, monkeypatch):
    import irscale.study as study

    plan = plan_study(["AP", "P"], 5, ["sign", "ttest"], effects=False, measure_free=False)
    bound = plan.bind(3, None)
    assert isinstance(bound.transform, TransformPlan) and bound.bound_to(3, None) and not plan.bound_to(3, None)
    made = []
    real = study.plan_transform
    monkeypatch.setattr(study, "plan_transform", lambda *a, **k: made.append(a) or real(*a, **k))
    by_bound = _quiet(irscale.compare, table, plan=bound)
    assert made == []  # bound before the runs were read (as the CLI does): not planned again
    by_unbound = _quiet(irscale.compare, table, plan=plan)
    assert len(made) == 1
    assert by_bound.changes.equals(by_unbound.changes) and by_bound.table2.equals(by_unbound.table2)
    theory = by_bound.provenance["theory"]
    assert theory == {m.name: m.statement.as_dict() for m in bound.transform.measures}


def test_compare_takes_a_plan_or_keywords_never_both(table):
    plan = plan_study(["AP", "P"], 5, ["sign"], effects=False, measure_free=False)
    with pytest.raises(ArgumentError, match=r"depth=10.*the plan's depth=5"):
        _quiet(irscale.compare, table, depth=10, plan=plan)
    with pytest.raises(ArgumentError, match=r"tests=\['ttest'\]"):
        _quiet(irscale.compare, table, tests=["ttest"], plan=plan)
    _quiet(irscale.compare, table, depth=5, plan=plan)  # the plan's own value: no conflict


def test_the_keywords_the_plan_was_made_from_are_no_clash(table):
    """The CLI passes its options beside the plan it made from them: names as typed (nDCG,
    P twice) match the plan's as computed (nDCG(rel=1)@5 under lenient, P@5 once)."""
    plan = plan_study(["nDCG", "P", "P@5"], 5, ["sign"], relevance="lenient", effects=False, measure_free=False)
    st = _quiet(
        irscale.compare, table, ["nDCG", "P", "P@5"], 5, ["sign"], relevance="lenient", measure_free=False, plan=plan
    )
    assert list(st.measures) == ["nDCG(rel=1)@5", "P@5"]


# -- the reading options: one shape from the command line to the readers ----------------------------


def test_read_options_are_one_shape_from_the_cli_to_the_reader(tmp_path):
    from irscale.loading import ReadOptions

    opts = ReadOptions(score_precision="float32", missing_topics="drop", integer_grades=True)
    by_options = _quiet(irscale.evaluate, TOY / "qrels.txt", TOY / "runs", ["AP", "P@5"], read=opts)
    by_keywords = _quiet(
        irscale.evaluate,
        TOY / "qrels.txt",
        TOY / "runs",
        ["AP", "P@5"],
        score_precision="float32",
        missing_topics="drop",
    )
    assert np.array_equal(by_options.values, by_keywords.values, equal_nan=True)
    assert by_options.provenance["score_precision"] == "float32"
    with pytest.raises(ArgumentError, match="give the reading options in one of the two shapes"):
        _quiet(irscale.evaluate, TOY / "qrels.txt", TOY / "runs", ["AP"], read=opts, duplicates="first")
    for bad in ({"missing_topics": "skip"}, {"score_precision": "float16"}, {"max_grade": 0}):
        with pytest.raises(IrscaleError):
            ReadOptions(**bad)  # checked when made, before any file is read


def test_integer_grades_read_the_qrels_as_trec_eval_does(tmp_path):
    from irscale.loading import ReadOptions

    q = tmp_path / "q.txt"
    q.write_text("1 0 a 1.5\n1 0 b 0\n")
    assert ReadOptions(integer_grades=True).qrels(q).max_grade == 1
    with pytest.raises(ArgumentError, match="is Parquet"):
        ReadOptions(integer_grades=True).qrels(tmp_path / "q.parquet")


def test_the_cli_plans_each_run_length_once(monkeypatch, tmp_path):
    """compare and study plan before reading the runs, and the studies read that plan."""
    from typer.testing import CliRunner

    import irscale.plan as planning
    import irscale.study as study
    from irscale.cli import app

    made = []
    real = planning.plan_transform
    counted = lambda *a, **k: made.append(a[1]) or real(*a, **k)  # noqa: E731
    monkeypatch.setattr(planning, "plan_transform", counted)
    monkeypatch.setattr(study, "plan_transform", counted)
    q, runs = str(TOY / "qrels.txt"), str(TOY / "runs")
    quick = ["-t", "sign", "--no-figures", "--no-effects", "--no-measure-free"]
    res = CliRunner().invoke(app, ["compare", q, runs, "-N", "5", "-m", "AP", *quick, "-o", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert made == [5]
    made.clear()
    res = CliRunner().invoke(
        app, ["study", "trec8-like", q, runs, "--depths", "3,5", *quick, "-o", str(tmp_path / "s")]
    )
    assert res.exit_code == 0, res.output
    assert made == [3, 5]
