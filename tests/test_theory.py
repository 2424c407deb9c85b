"""What the theory says about each ranked measure (irscale.scales.theory), checked against
the brute force of irscale.scales.checks over every run, and shown by transform, compare
and inspect (issue 11, item 4)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import irscale
from irscale.errors import IrscaleError
from irscale.scales.theory import statement, verify

TOY = Path(irscale.__file__).parent / "examples" / "toy"  # grades 0..2


@pytest.fixture(scope="module")
def toy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(TOY / "qrels.txt", sorted((TOY / "runs").glob("*.txt")), ["AP"])


@pytest.fixture
def toy_files():
    return str(TOY / "qrels.txt"), str(TOY / "runs")


MEASURES = [
    "P",
    "R",
    "F",
    "NumRelRet",
    "gP",
    "gR",
    "SBTO",
    "RBTO",
    "AP",
    "RR",
    "ERR",
    "ERR(rel=1)",
    "DCG",
    "DCG(base=2)",
    "DCG(base=3)",
    "DCG(base=10)",
    "nDCG",
    "nDCG(base=2)",
    "nDCG(rel=2)",
    "RBP(p=0.2)",
    "RBP(p=0.25)",
    "RBP(p=1/3)",
    "RBP(p=0.5)",
    "RBP(p=0.6)",
    "RBP(p=0.8)",
    "RBP(p=0.95)",
]
GRID = [(levels, N) for levels in (2, 3, 4) for N in range(1, 8) if levels**N <= 5000]


@pytest.mark.parametrize("measure", MEASURES)
def test_every_statement_agrees_with_the_brute_force_at_every_small_N(measure):
    """The statements are analytic (worst cases, the papers' counterexamples); the checks
    enumerate every run. They must agree at every N, short runs included."""
    for levels, N in GRID:
        check = verify(measure, N, levels)
        assert check.agrees, (measure, levels, N, check.lines())


@pytest.mark.parametrize("levels,N", [(3, 5), (4, 4), (3, 8)])
def test_graded_rbp_as_the_2019_paper_says(levels, N):
    c = levels - 1
    assert statement(f"RBP(p=1/{c + 1})", N, levels).original_scale == "interval"
    assert statement("RBP(p=0.2)", N, levels).original_scale == "ordinal"
    for p in (0.5, 0.8):
        said = statement(f"RBP(p={p})", N, levels)
        assert said.original_scale == "not ordinal" and said.order == "strong" and said.phi_own_order_only
        assert "Sec. 5" in said.source and "1/(c+1)" in said.reason


def test_binary_measures_as_the_papers_say():
    for m in ("P", "R", "F"):  # 2019 paper, Sec. 4.1
        said = statement(m, 10)
        assert (said.order, said.original_scale, said.phi_own_order_only) == ("set", "interval", False)
    assert statement("RBP(p=0.5)", 10).original_scale == "interval"  # 2019 paper, Sec. 6
    assert statement("RBP(p=0.3)", 10).original_scale == "ordinal"
    for m in ("RBP(p=0.8)", "AP", "DCG(base=2)", "RR"):
        assert statement(m, 10).original_scale == "not ordinal", m
    assert statement("DCG(base=10)", 10).original_scale == "interval"  # 2021 paper, Sec. 7.1: counts up to N = b
    assert statement("DCG(base=10)", 20).original_scale == "not ordinal"
    assert statement("RBTO", 10, 4).original_scale == "interval" and statement("SBTO", 10, 4).order == "set"


def test_graded_measures_as_the_2019_paper_says():
    for m in ("DCG", "DCG(base=2)", "nDCG", "ERR"):  # Sec. 5
        assert statement(m, 10, 4).original_scale == "not ordinal", m
    for m in ("gP", "gR"):  # Sec. 4.2: neither ordinal nor interval
        said = statement(m, 10, 3)
        assert (said.order, said.original_scale) == ("set", "not ordinal")
    # a binary measure lives on 2 levels whatever the qrels' grades
    assert statement("AP", 10, 4).levels == 2 and statement("nDCG(rel=2)", 10, 4).levels == 2


def test_short_runs_are_stated_exactly():
    """The papers' counterexamples need long enough runs; below, the statement says so."""
    # binary RBP: rank 1 against ranks 2..N, (1 - p) > p (1 - p^(N-1)): 0.4 > 0.384 at N = 3, not 0.4 > 0.4704 at 4
    assert statement("RBP(p=0.6)", 3).original_scale == "ordinal"
    assert statement("RBP(p=0.6)", 4).original_scale == "not ordinal"
    assert statement("AP", 2).original_scale == "ordinal" and statement("AP", 3).original_scale == "not ordinal"
    assert statement("ERR(rel=1)", 4).original_scale == "ordinal"
    assert statement("ERR(rel=1)", 5).original_scale == "not ordinal"  # 1/4 < 1/(3*2) + 1/(4*4) + 1/(5*8)


def test_the_papers_counterexample_is_found_and_shown():
    for m in ("DCG(base=2)", "ERR", "RBP(p=0.5)", "AP"):
        check = verify(m, 5, 3)
        r, s = check.paper_runs["values"]
        assert check.paper_runs["r"] == "(a1,a0,a2,a0,a1)" and check.paper_runs["s"] == "(a1,a1,a0,a0,a0)"
        assert r > s and not check.ordinal.holds, m
        assert any("so not ordinal under the strong order" in line for line in check.lines())
    check = verify("RBP(p=0.45)", 5, 3)  # below the paper's 0.454 the pair keeps its order
    assert check.paper_runs["values"][0] < check.paper_runs["values"][1]


def test_user_measures_have_no_statement():
    assert statement("Rprec", 5) is None and statement("bpref", 5) is None
    with pytest.raises(IrscaleError, match="no statement"):
        verify("Rprec", 5)


def test_transform_and_compare_label_each_ranked_measure(toy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(toy, ["P", "RBP(p=0.8)", "AP"], depth=5, ties=("unq", "mid"))
    ranked = [m for m in t.measures if hasattr(m, "theory")]
    assert len(ranked) == 6
    by = {str(m.measure): m.theory for m in ranked}
    assert by["P@5"].original_scale == "interval" and by["RBP(p=0.8)@5"].phi_own_order_only
    assert by["RBP(p=0.8)@5"].levels == 3 and by["AP@5"].levels == 2  # the toy's grades 0..2; AP is binary
    assert t.provenance["transform"]["theory"]["RBP(p=0.8)@5"]["original_scale"] == "not ordinal"
    st = irscale.compare(toy, ["P", "RBP(p=0.5)"], depth=5, tests=["ttest"], relevance="lenient")
    assert st.provenance["theory"]["RBP(p=0.5,rel=1)@5"]["original_scale"] == "interval"  # binary RBP(1/2)
    assert "What the theory says" in st.markdown()


def test_cli_prints_the_labels_and_the_check(toy_files):
    from typer.testing import CliRunner

    from irscale.cli import app

    q, runs = toy_files
    res = CliRunner().invoke(app, ["transform", q, runs, "-m", "RBP(p=0.8)", "-N", "5", "--relevance", "graded"])
    assert res.exit_code == 0, res.output
    assert "RBP(p=0.8)@5 (3 levels): not ordinal under the strong order" in res.stdout
    assert "phi equi-spaces RBP's own order" in res.stdout
    res = CliRunner().invoke(app, ["transform", q, runs, "-m", "P", "-N", "5", "-f", "csv"])
    assert res.exit_code == 0 and "theory" not in res.stdout  # machine-readable output unchanged
    res = CliRunner().invoke(app, ["inspect", "RBP(p=0.8)", "-N", "5", "--levels", "3", "--theory"])
    assert res.exit_code == 0, res.output
    assert "not ordinal under the strong order: agrees with the theory" in res.stdout
    assert "(a1,a0,a2,a0,a1)" in res.stdout and "ordinal fails: lower run=" in res.stdout
    res = CliRunner().invoke(app, ["inspect", "Rprec", "-N", "4", "--theory"])
    assert res.exit_code == 2 and "no statement" in res.output
