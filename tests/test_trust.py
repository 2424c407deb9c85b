"""Issue 23: what the researcher reads is what was computed.

Each test here failed on the main before the issue (d8e3f17's parent): intervals that
collapsed when columns met in one study, lenient scores under graded names, no warning at a
higher relevance level, verdicts that depended on the path (and a crash for a measure added
by the recipe), a report destination that failed after the work, and "is it meaningful"
answered in several places."""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_lines import unwrap
from typer.testing import CliRunner

import irscale
from irscale import plan as planning
from irscale.cli import app
from irscale.errors import ArgumentError, IrscaleWarning
from irscale.io import Qrels, Run
from irscale.measures import Measure, register
from irscale.measures.base import REGISTRY, cut, graded_gain

TOY = Path(irscale.__file__).parent / "examples" / "toy"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TREC8 = DATA / "trec8"
needs_trec8 = pytest.mark.skipif(
    not (TREC8 / "qrels.trec8.txt").is_file(), reason=f"TREC-8 data not found at {TREC8} (../shared/data)"
)


def _toy(measures=("AP",)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(TOY / "qrels.txt", [str(TOY / "runs")], list(measures))


def _quiet_compare(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.compare(*args, **kw)


# -- 1. intervals: each column's statistics depend on that column alone ---------------------------


@needs_trec8
@pytest.mark.slow
def test_means_intervals_do_not_collapse_when_measures_meet():
    """The issue's case: P next to RBP(p=0.8) at N = 30 (ranked values up to 2^30) had every
    original P interval zero-width; with P alone they were not."""
    runs = sorted((TREC8 / "runs").glob("*.gz"))[:10]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TREC8 / "qrels.trec8.txt", runs, ["P"])
    both = _quiet_compare(table, ["P", "RBP(p=0.8)"], depth=30, tests=["sign"], measure_free=False).means
    alone = _quiet_compare(table, ["P"], depth=30, tests=["sign"], measure_free=False).means
    p_both = both[both.measure == "P@30"].reset_index(drop=True)
    p_alone = alone[alone.measure == "P@30"].reset_index(drop=True)
    pd.testing.assert_frame_equal(p_both, p_alone)
    orig = p_both[p_both.scale == "original"]
    varying = table.matrix("P").std().to_numpy() > 0  # systems whose P varies over topics
    assert (orig.ci_high - orig.ci_low).to_numpy()[varying].min() > 0.01


# -- 2. lenient scores carry the names of what was computed ---------------------------------------


def test_lenient_names_what_was_computed(tmp_path):
    table = _toy()
    st = _quiet_compare(
        table, ["nDCG", "RBP(p=0.8)", "ERR", "AP"], depth=5, relevance="lenient", tests=["sign"], baselines=["bm25"]
    )
    names = ["nDCG(rel=1)@5", "RBP(p=0.8,rel=1)@5", "ERR(rel=1)@5", "AP@5"]
    assert list(st.measures) == names
    for frame in (st.table2, st.changes, st.means, st.pairs, st.scores):
        assert set(frame["measure"]) == set(names)
    assert st.provenance["relevance"] == "lenient" and st.provenance["measures"] == names
    files = st.write(tmp_path)
    text = "\n".join(f.read_text() for f in files if f.suffix in (".csv", ".json", ".tex", ".md", ".html"))
    assert "nDCG(rel=1)@5" in text and "nDCG@5" not in text
    # the numbers are the binary measure's: the graded protocol with rel=1 gives the same
    graded = _quiet_compare(table, ["nDCG(rel=1)"], depth=5, relevance="graded", tests=["sign"])
    a = st.scores[st.scores.measure == "nDCG(rel=1)@5"].reset_index(drop=True)
    b = graded.scores.reset_index(drop=True)
    assert np.array_equal(a[["value", "ranked"]].to_numpy(), b[["value", "ranked"]].to_numpy())


def test_transform_lenient_names_in_every_format():
    for fmt in ("tsv", "json"):
        res = CliRunner().invoke(
            app,
            [
                "transform",
                str(TOY / "qrels.txt"),
                str(TOY / "runs"),
                "-m",
                "nDCG",
                "-N",
                "5",
                "--relevance",
                "lenient",
                "--format",
                fmt,
            ],
        )
        assert res.exit_code == 0, res.output
        assert "nDCG(rel=1)@5" in res.stdout and "nDCG@5" not in res.stdout.replace("nDCG(rel=1)@5", "")


def test_lenient_refuses_what_it_cannot_name():
    with pytest.raises(ArgumentError, match="gain map"):
        irscale.transform(_toy(), ["nDCG(gains=2:3)"], depth=5, relevance="lenient")
    with pytest.raises(ArgumentError, match="name P instead"):
        irscale.compare(_toy(), ["gP"], depth=5, relevance="lenient")


# -- 4. a warning at every relevance level ----------------------------------------------------------


def _graded_qrels():
    rows = [("1", "a", 3), ("1", "b", 1), ("2", "c", 1), ("2", "d", 2), ("3", "e", 1)]  # topics 2, 3: no grade 3
    return Qrels.from_records(rows)


def _messages(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]


def test_topics_without_relevant_documents_at_the_measures_own_rel():
    q = _graded_qrels()
    run = Run.from_records([(t, d, 1.0) for t, d, _ in [("1", "a", 0), ("2", "c", 0), ("3", "e", 0)]], name="r")
    said = _messages(lambda: irscale.evaluate(q, [run], ["AP(rel=3)", "P(rel=2)@5", "AP"]))
    assert any("AP(rel=3): 2 qrels topic(s) have no document of grade >= 3" in s and "2, 3" in s for s in said)
    assert any("P(rel=2)@5: 1 qrels topic(s) have no document of grade >= 2" in s for s in said)
    said = _messages(lambda: irscale.evaluate(q, [run], ["AP(rel=4)"]))
    assert any("AP(rel=4): no topic has a document of grade >= 4" in s and "scores 0 everywhere" in s for s in said)
    assert not any("grade >= 1)" in s for s in _messages(lambda: irscale.evaluate(q, [run], ["AP"])))


# -- 5 and 9. one owner of scale and meaningfulness, whatever the path ----------------------------


@pytest.fixture
def lcg():
    """A graded measure added by the recipe of docs/architecture.md, with no statement in the
    papers: linear-discount cumulated gain, sum of grade_k (N - k + 1) / N."""

    @register("LCG")
    @dataclass(frozen=True)
    class LCG(Measure):
        cutoff: int | None = None
        graded = True

        def batch(self, grades, topics):
            g = graded_gain(cut(grades, self.cutoff), topics.max_grade, None)
            n = g.shape[-1]
            return g @ (np.arange(n, 0, -1, dtype=np.float64) / n)

    yield LCG
    REGISTRY.pop("LCG")


def test_a_measure_added_by_the_recipe_gets_one_verdict_everywhere(lcg):
    from irscale.meaning import meaningful_test, scale_of

    table = _toy()
    said = scale_of("LCG", 5, 3)
    assert said.established and said.levels == 3 and said.order == "induced" and "exhaustive" in said.source
    tr = irscale.transform(table, ["LCG"], depth=5, relevance="graded")
    assert tr.measures[1].theory == said
    st = _quiet_compare(table, ["LCG"], depth=5, relevance="graded", tests=["sign", "ranksum", "ttest"])
    assert st.provenance["theory"]["LCG@5"] == said.as_dict()
    for row in st.changes.itertuples():
        test = {"Sign Test": "sign", "Wilcoxon Rank Sum Test": "ranksum", "Student's t Test": "ttest"}[row.test]
        assert row.meaningful == meaningful_test(test, said, False)
        assert row.meaningful_ranked == meaningful_test(test, True, False)


def test_compare_accepts_what_transform_accepts():
    table = _toy()
    irscale.transform(table, ["gP"], depth=5, relevance="graded")
    st = _quiet_compare(table, ["gP"], depth=5, relevance="graded", tests=["sign", "ttest"])
    assert list(st.measures) == ["gP@5"]


@pytest.mark.parametrize(
    "measures,relevance",
    [(["P", "AP", "RBP(p=0.5)", "nDCG(base=2)", "RR"], "graded"), (["nDCG", "ERR", "RBP(p=0.3)"], "lenient")],
)
def test_every_caller_asks_the_owner(monkeypatch, measures, relevance):
    from irscale.scales.permissible import meaningful_test, scale_of

    monkeypatch.setattr(planning, "_WARNED_NOT_INTERVAL", set())
    table = _toy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        st = irscale.compare(
            table,
            measures,
            depth=5,
            relevance=relevance,
            tests=["ttest", "ranksum"],
            baselines=["bm25"],
            measure_free=False,
        )
    levels = st.provenance["levels"]
    verdict = {m: scale_of(m, 5, levels) for m in st.measures}
    assert st.provenance["theory"] == {m: v.as_dict() for m, v in verdict.items()}
    warned = " ".join(str(w.message) for w in caught if "not meaningful" in str(w.message))
    bad = [m for m, v in verdict.items() if not v.interval]
    assert ("at N = 5 (not interval)" in warned) == bool(bad)
    named = [m for m in verdict if re.search(rf"(?<![\w(]){re.escape(m[:-2])}(?![\w(])", warned)]  # AP@5 -> AP
    more = re.search(r" and (\d+) more (?:is|are) not meaningful", warned)
    assert set(named) <= set(bad) and len(named) + (int(more.group(1)) if more else 0) == len(bad), (named, bad)
    rb = {m: irscale.parse_measure(m).needs_recall_base for m in st.measures}
    codes = {"Student's t Test": "ttest", "Wilcoxon Rank Sum Test": "ranksum"}
    for row in st.changes.itertuples():
        assert row.meaningful == meaningful_test(codes[row.test], verdict[row.measure], rb[row.measure])
    for row in st.pairs.itertuples():
        expect = meaningful_test(
            codes[row.test], True if row.scale == "ranked" else verdict[row.measure], rb[row.measure]
        )
        assert row.meaningful == expect


def test_the_owner_answers_every_measure_without_crashing():
    from irscale.scales.permissible import scale_of

    for name in ("Rprec", "bpref", "AP", "gP", "ERR"):
        for N in (3, 30):
            said = scale_of(name, N, 4)
            assert said.original_scale in ("interval", "ordinal", "not ordinal", "unknown") and said.reason
    long = scale_of("Rprec", 30)
    assert not long.established and not long.interval and long.original_scale == "unknown"
    assert "too many to check" in long.reason


def test_public_door_and_deprecated_names():
    import irscale.meaning as meaning
    from irscale.scales import permissible

    assert meaning.scale_of is permissible.scale_of and meaning.meaningful_test is permissible.meaningful_test
    assert callable(meaning.meaningful)  # the empirical check stays
    from irscale.study import meaningful_test

    assert meaningful_test is permissible.meaningful_test
    with pytest.warns(DeprecationWarning, match="scale_of"):
        assert permissible.interval_at("AP", 10).original_scale == "not ordinal"


# -- 7. the report's destination is checked before any work ---------------------------------------


@pytest.mark.parametrize("where", ["file", "under-file", "proc"])
def test_out_that_cannot_be_written_fails_before_reading(tmp_path, where):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    out = {"file": blocker, "under-file": blocker / "sub", "proc": Path("/proc/irscale-report")}[where]
    # runs that do not exist: the destination's error comes first, before any file is read
    res = CliRunner().invoke(
        app, ["compare", str(TOY / "qrels.txt"), str(tmp_path / "no-runs"), "-m", "P", "-N", "5", "--out", str(out)]
    )
    assert res.exit_code == 2, res.output
    assert "--out" in res.output and "Traceback" not in res.output and "no-runs" not in res.output
    assert len([line for line in unwrap(res.output).splitlines() if line.strip()]) == 1


def test_write_refuses_a_read_only_place(tmp_path, monkeypatch):
    import errno
    import tempfile

    st = _quiet_compare(_toy(), ["P"], depth=5, tests=["sign"], effects=False, measure_free=False)

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(ArgumentError, match="read-only file system"):
        st.write(tmp_path / "ro")


# -- 10. compare as named steps, validated once ---------------------------------------------------


def test_plan_is_validated_before_any_data():
    from irscale.study import plan_study

    plan = plan_study(["P", "nDCG"], 10, ["sign"], relevance="lenient", baselines="bm25")
    assert plan.names == ["P@10", "nDCG(rel=1)@10"] and plan.baselines == ("bm25",)
    for bad in (
        dict(tests=["tt"]),
        dict(correction="holmes"),
        dict(measures=["NoSuch"]),
        dict(alpha=2.0),
        dict(relevance="strict"),
        dict(n_resamples=5),
        dict(approx=3.0),
    ):
        with pytest.raises(irscale.errors.IrscaleError):
            plan_study(**bad)


def _long_functions(module: str, limit: int = 80) -> list[str]:
    """The functions of ``module`` (a path under the package) longer than ``limit`` lines,
    their docstrings not counted."""
    tree = ast.parse((Path(irscale.__file__).parent / module).read_text())
    long = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines -= first.end_lineno - first.lineno + 1  # the docstring
            if lines > limit:
                long.append(f"{module}: {node.name}: {lines} lines")
    return long


def test_study_layer_functions_are_short():
    """No function of the study layer above 80 lines (docstrings not counted)."""
    long = _long_functions("study.py")
    assert not long, long


@pytest.mark.parametrize(
    "module",
    [
        "experiment.py",
        "stats.py",
        "effects.py",
        "measurefree.py",
        "report/study.py",
        "report/html.py",
        "report/files.py",
    ],
)
def test_top_of_the_stack_functions_are_short(module):
    """No function of the pipeline, the statistics or the study report above 80 lines
    (docstrings not counted): long ones are split into named steps."""
    long = _long_functions(module)
    assert not long, long


def test_compare_addresses_columns_by_name_not_position():
    """A measure named twice (P and P@5 at N = 5) is studied once, with a warning; the rest
    of the columns keep their own numbers."""
    table = _toy()
    with pytest.warns(IrscaleWarning, match="named more than once"):
        st = irscale.compare(table, ["P", "P@5", "AP"], depth=5, tests=["sign"], measure_free=False)
    alone = _quiet_compare(table, ["AP"], depth=5, tests=["sign"], measure_free=False)
    assert list(st.measures) == ["P@5", "AP@5"]
    a = st.means[st.means.measure == "AP@5"].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, alone.means.reset_index(drop=True))
    assert dataclasses.is_dataclass(st) and len(st.scores) == 2 * len(st.systems) * len(st.topics)


# -- from the review of this change -----------------------------------------------------


def test_a_users_measure_is_checked_again_not_read_from_disk(monkeypatch, tmp_path):
    """A user's measure may change under the same name: its verdict is never cached on disk
    (as its rank maps are not), irscale's own measures' are."""
    from irscale.measures import FunctionMeasure
    from irscale.scales import permissible

    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    permissible._exhaustive.cache_clear()
    linear = FunctionMeasure(fn=lambda runs, c: runs @ np.arange(8, 0, -1), name="uf")
    square = FunctionMeasure(fn=lambda runs, c: runs @ np.arange(8, 0, -1) ** 2, name="uf")
    assert permissible.scale_of(linear, 8).original_scale == "interval"
    assert permissible.scale_of(square, 8).original_scale == "ordinal"  # same name, other code
    permissible.scale_of("Rprec", 8)
    saved = (tmp_path / "scale-types-v2.json").read_text()
    assert "Rprec" in saved and "uf" not in saved
    permissible._exhaustive.cache_clear()


def test_no_warning_where_nothing_is_shown(monkeypatch):
    """The default measures of evaluate: Rprec and bpref (no statement, too many runs to
    check cheaply) are not claimed non-interval; AP, nDCG@10 and RR are."""
    monkeypatch.setattr(planning, "_WARNED_NOT_INTERVAL", set())
    table = _toy(irscale.experiment.DEFAULT_MEASURES)
    said = " ".join(_messages(lambda: planning.warn_not_interval(table, "means")))  # (the CLI's words over means)
    assert "AP" in said and "nDCG@10" in said and "Rprec" not in said and "bpref" not in said


def test_measure_free_flags_use_the_runs_the_measure_sees():
    """nDCG(rel=2) sees the runs binarised at grade 2: its incomparable shares are those of
    that weak order, not of the graded one."""
    from irscale import measurefree as mf

    table = _toy()
    st = _quiet_compare(table, ["nDCG(rel=2)", "nDCG"], depth=5, relevance="graded", tests=["sign"], baselines=["bm25"])
    judged = table.judged
    for name, rel in (("nDCG(rel=2)@5", 2), ("nDCG@5", None)):
        want = mf.pair_summary(mf.topic_comparisons(judged, depth=5, rel=rel), judged.systems)
        rows = st.pairs[(st.pairs.measure == name) & (st.pairs.scale == "original")]
        for r in rows.itertuples():
            hit = want[
                ((want.system_1 == "bm25") & (want.system_2 == r.system_2))
                | ((want.system_2 == "bm25") & (want.system_1 == r.system_2))
            ]
            assert r.incomparable_share == pytest.approx(float(hit.incomparable_share.iloc[0])), (name, r.system_2)


def test_plan_refuses_what_would_fail_late():
    from irscale.study import plan_study

    with pytest.raises(ArgumentError, match="rel >= 1"):
        plan_study(["P(rel=0)"], 5)
    plan_study(["P(rel=0)"], 5, measure_free=False)
    with pytest.raises(ArgumentError, match="at least one test"):
        plan_study(["P"], 5, tests=[], baselines=["bm25"])
    res = CliRunner().invoke(
        app,
        [
            "compare",
            str(TOY / "qrels.txt"),
            "/nonexistent/runs",
            "-m",
            "nDCG(rel=2)",
            "-N",
            "5",
            "--relevance",
            "lenient",
        ],
    )
    assert res.exit_code == 2 and "rel=2" in res.output and "nonexistent" not in res.output
    res = CliRunner().invoke(
        app, ["transform", str(TOY / "qrels.txt"), "/nonexistent/runs", "-m", "gP", "-N", "5", "--relevance", "lenient"]
    )
    assert res.exit_code == 2 and "name P instead" in res.output


def test_lenient_asks_a_users_graded_measure_for_a_rel(lcg):
    with pytest.raises(ArgumentError, match="rel: int | None = None"):
        irscale.compare(_toy(), ["LCG"], depth=5, relevance="lenient")


def test_out_check_creates_nothing_before_the_work(tmp_path):
    out = tmp_path / "a" / "b" / "c"
    res = CliRunner().invoke(
        app, ["compare", str(TOY / "qrels.txt"), str(TOY / "runs"), "-m", "Success", "-N", "5", "--out", str(out)]
    )
    assert res.exit_code == 2 and not (tmp_path / "a").exists()


def test_the_owners_examples():
    import doctest

    from irscale.scales import permissible

    result = doctest.testmod(permissible, verbose=False)
    assert result.attempted >= 5 and result.failed == 0


def test_a_measure_that_cannot_be_run_gets_an_unknown_verdict(monkeypatch):
    from irscale.errors import IrscaleError
    from irscale.scales import permissible

    def cannot(*a):
        raise IrscaleError("its batch fails on these runs")

    monkeypatch.setattr(permissible, "_exhaustive", cannot)
    said = permissible.scale_of("bpref", 5)
    assert said.original_scale == "unknown" and not said.established and not said.interval
    assert "cannot be checked" in said.reason and said.as_dict()["established"] is False
