"""Permissible statistics: each measure's scale type under the set, strong and weak
orders (checked over all runs, cached), shown by `irscale measures`; a warning, once,
when a mean or an interval-scale test is taken on a measure that is not interval."""

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import irscale
from irscale import plan as planning
from irscale.cli import app
from irscale.errors import IrscaleWarning
from irscale.scales import permissible
from irscale.scales.theory import statement

TOY = Path(irscale.__file__).parent / "examples" / "toy"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    permissible._exhaustive.cache_clear()
    monkeypatch.setattr(planning, "_WARNED_NOT_INTERVAL", set())
    yield tmp_path
    permissible._exhaustive.cache_clear()


@pytest.mark.parametrize(
    "measure,N,levels",
    [
        ("P", 10, 2),
        ("RBP(p=0.5)", 10, 2),
        ("RBP(p=0.5)", 5, 3),
        ("AP", 10, 2),
        ("RR", 8, 2),
        ("DCG(base=2)", 2, 2),
        ("DCG(base=2)", 6, 2),
        ("nDCG", 5, 3),
        ("SBTO", 6, 3),
        ("RBTO", 6, 3),
        ("gP", 5, 3),
    ],
)
def test_checks_agree_with_the_papers_under_their_order(fresh, measure, N, levels):
    said = statement(measure, N, levels)
    assert permissible.scale_types(measure, N, levels)[said.order] == said.original_scale


def test_answers_are_cached_on_disk(fresh, monkeypatch):
    first = permissible.scale_types("AP", 8)
    assert first == {"set": "not ordinal", "strong": "not ordinal", "weak": "ordinal"}
    data = json.loads((fresh / "scale-types-v2.json").read_text())
    assert {k.split("|")[3]: v[0] for k, v in data.items() if k.startswith("AP@8|N=8|levels=2")} == {
        f"order={o}": s for o, s in first.items()
    }
    permissible._exhaustive.cache_clear()

    def no_check(*a, **k):
        raise AssertionError("checked again")

    monkeypatch.setattr("irscale.scales.checks.is_ordinal", no_check)
    assert permissible.scale_types("AP", 8) == first  # read from the file
    (fresh / "scale-types-v2.json").write_text("{damaged")
    permissible._exhaustive.cache_clear()
    monkeypatch.undo()
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(fresh))
    assert permissible.scale_types("AP", 8) == first  # a damaged file is checked again and rewritten
    assert json.loads((fresh / "scale-types-v2.json").read_text())


def test_measures_without_run_space_are_checked_too(fresh):
    # Rprec and bpref crashed the checks (IndexError) before: each run is now a system on one topic
    assert permissible.scale_types("Rprec", 8)["set"] == "interval"  # RB = N: Rprec@N = P@N
    assert permissible.scale_types("bpref", 8)["weak"] == "ordinal"
    res = CliRunner().invoke(app, ["inspect", "Rprec", "-N", "6"])
    assert res.exit_code == 0, res.output


@pytest.mark.slow
def test_measures_listing_shows_the_scale_types(fresh):
    res = CliRunner().invoke(app, ["measures"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "scale type of the original" in res.stdout
    row = next(line for line in res.stdout.splitlines() if line.startswith("│ P "))
    assert "N=10: interval / not ord. / ordinal" in row


def _means_warnings(table, say: bool = True):
    """What showing the table's means says (the table itself says nothing; the caller that
    shows means warns, as the CLI does)."""
    from irscale.plan import warn_not_interval

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if say:
            warn_not_interval(table, "means")
        table.mean()
    return [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]


def test_the_means_caller_warns_once_and_names_the_ranked_version(fresh):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP", "P@10", "RR"])
    assert _means_warnings(table, say=False) == []  # a table states facts: ScoreTable.mean never warns
    (msg,) = _means_warnings(table)
    assert msg.startswith("means of AP and RR are not meaningful") and "P@10" not in msg
    assert msg.split("(not interval); ")[1].startswith("ranked versions are exact up to N = ")  # a fact, no smaller N
    assert "on runs of up to 50 documents" in msg and len(msg) <= 160 - len("warning: ")
    assert _means_warnings(table) == []  # once per measure and process
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = irscale.transform(table, ["P"], depth=5)
    assert _means_warnings(ranked) == []  # P is interval; ranked columns are


def test_compare_warns_once_about_interval_tests(fresh):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(TOY / "qrels.txt", TOY / "runs", ["AP"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irscale.compare(table, ["AP", "P"], depth=5, tests=["ttest", "sign"])
    msgs = [str(w.message) for w in caught if "not meaningful" in str(w.message)]
    assert len(msgs) == 1 and msgs[0].startswith("ttest of AP is not meaningful at N = 5 (not interval)")
    assert "on ranked versions they are (guide: Warnings)" in msgs[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irscale.compare(table, ["AP"], depth=5, tests=["sign"])  # ordinal tests only: nothing to say
    assert not [w for w in caught if "not meaningful" in str(w.message)]
