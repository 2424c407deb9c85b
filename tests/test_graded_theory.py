"""What the 2019 paper (Ferrante, Ferro & Pontarollo, SEBD, Sections 5-6) says about graded
measures, checked by brute force over every run (issue 11, item 4, first part).

With c + 1 relevance degrees and gain proportional to the grade (G = 1/c): graded RBP is
an interval scale under the strong top-heaviness order only for p = G/(G+1) = 1/(c+1),
ordinal but not interval for smaller p, and not even ordinal for larger p; DCG and ERR are
not ordinal; gP and gR are neither ordinal nor interval."""

from __future__ import annotations

import math

import pytest

from irscale.inspect import is_interval, is_ordinal
from irscale.measures import parse_measure

R_HAT = (1, 0, 2, 0, 1)  # the paper's runs on R(5) with c = 2: s_hat is above r_hat in the
S_HAT = (1, 1, 0, 0, 0)  # strong order (rank 2 decides), yet these measures score r_hat higher
LEVELS = [1, 1, 1]  # judged documents per grade 0, 1, 2: fixes c = 2 (and RB = 2 for AP)


def test_the_papers_counterexample_to_ordinality():
    dcg = parse_measure("DCG(base=2)")
    assert dcg(R_HAT, LEVELS) == pytest.approx(1 + 2 / math.log2(3) + 1 / math.log2(5))
    assert dcg(S_HAT, LEVELS) == pytest.approx(2.0) and dcg(R_HAT, LEVELS) > dcg(S_HAT, LEVELS)
    err = parse_measure("ERR")
    assert err(R_HAT, LEVELS) == pytest.approx(1 / 4 + 3 / 16 + 3 / 320)
    assert err(S_HAT, LEVELS) == pytest.approx(1 / 4 + 3 / 32) and err(R_HAT, LEVELS) > err(S_HAT, LEVELS)
    # 2 gRBP_p: (1 - p)(1 + 2p^2 + p^4) against (1 - p)(1 + p): r_hat wins for p above about 0.454
    assert parse_measure("RBP(p=0.5)")(R_HAT, LEVELS) > parse_measure("RBP(p=0.5)")(S_HAT, LEVELS)
    assert parse_measure("RBP(p=0.45)")(R_HAT, LEVELS) < parse_measure("RBP(p=0.45)")(S_HAT, LEVELS)
    # AP with the lenient mapping: RB * AP = 1 + 2/3 + 3/5 against 2
    ap = parse_measure("AP")
    assert 2 * ap(R_HAT, LEVELS) == pytest.approx(1 + 2 / 3 + 3 / 5) and ap(R_HAT, LEVELS) > ap(S_HAT, LEVELS)


@pytest.mark.parametrize("levels,N", [(3, 5), (4, 4)])
def test_graded_rbp_is_interval_only_at_p_one_over_c_plus_one(levels, N):
    c = levels - 1
    critical = f"RBP(p=1/{c + 1})"
    assert is_interval(critical, "strong", N, levels)
    assert is_ordinal("RBP(p=0.2)", "strong", N, levels) and not is_interval("RBP(p=0.2)", "strong", N, levels)
    for larger in ("RBP(p=0.5)", "RBP(p=0.8)"):
        assert not is_ordinal(larger, "strong", N, levels)


@pytest.mark.parametrize("levels,N", [(3, 5), (4, 4)])
def test_dcg_err_gp_gr_are_not_ordinal(levels, N):
    for m in ("DCG", "DCG(base=2)", "nDCG", "ERR"):
        assert not is_ordinal(m, "strong", N, levels), m
    for m in ("gP", "gR"):
        for order in ("set", "strong"):
            assert not is_ordinal(m, order, N, levels) and not is_interval(m, order, N, levels), (m, order)


@pytest.mark.parametrize("levels,N", [(3, 5), (4, 4)])
def test_irscale_states_the_same_and_its_checker_confirms_it(levels, N):
    """irscale.scales.theory (what transform, compare and inspect --theory show) says what
    the assertions above check independently, and its own brute-force check agrees."""
    from irscale.scales.theory import statement, verify

    c = levels - 1
    expected = {
        f"RBP(p=1/{c + 1})": "interval",
        "RBP(p=0.2)": "ordinal",
        "RBP(p=0.5)": "not ordinal",
        "RBP(p=0.8)": "not ordinal",
        "DCG": "not ordinal",
        "DCG(base=2)": "not ordinal",
        "nDCG": "not ordinal",
        "ERR": "not ordinal",
        "gP": "not ordinal",
        "gR": "not ordinal",
    }
    for m, scale in expected.items():
        said = statement(m, N, levels)
        assert said.original_scale == scale and said.order == ("set" if m in ("gP", "gR") else "strong"), m
        assert said.phi_own_order_only == (scale == "not ordinal")
        assert verify(m, N, levels).agrees, m


def test_the_checker_shows_the_papers_runs():
    from irscale.scales.theory import verify

    check = verify("DCG(base=2)", 5, 3)
    assert (check.paper_runs["r"], check.paper_runs["s"]) == ("(a1,a0,a2,a0,a1)", "(a1,a1,a0,a0,a0)")
    assert check.paper_runs["values"] == pytest.approx([1 + 2 / math.log2(3) + 1 / math.log2(5), 2.0])
