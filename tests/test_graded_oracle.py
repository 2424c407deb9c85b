"""Graded rank maps against an independent brute-force oracle (issue 11, acceptance:
correctness). The oracle lives in ``bench/graded_oracle.py`` and imports nothing of irscale:
exact integer keys from each measure's definition (gP, RBP, ERR; checked here against
Fractions) and, for DCG/nDCG, float64 values whose near neighbours are decided in 60-digit
arithmetic. Over every run at small N: size, phi_unq and phi_mid equal for every graded
family; hypothesis at moderate N: phi strictly increasing with the exact value and equal
exactly when the values are; two irscale engines agree on sampled queries at larger N.
The full matrix (3 levels N = 12, 4 levels N = 9, 5 levels N = 8) is the bench script."""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_PATH = Path(__file__).resolve().parents[1] / "bench" / "graded_oracle.py"
_spec = importlib.util.spec_from_file_location("graded_oracle", _PATH)
go = importlib.util.module_from_spec(_spec)
sys.modules["graded_oracle"] = go  # dataclasses look their module up while the file runs
_spec.loader.exec_module(go)

FAMILIES = go.families()
FAMILY = dict(FAMILIES)
SMALL = [(3, 8), (4, 6), (5, 5)]


# -- the oracle itself, against facts that do not come from irscale --------------------------


def test_oracle_reference_sizes_from_the_spec():
    # SPEC section 3: |DCG_b2(REL^N)| = 3 * 2^(N-2) (binary); RBP with p = a/b, b > c: all runs distinct
    for N in (5, 10):
        assert go.oracle(go.Family("dcg", 2), N, 1).size == 3 * 2 ** (N - 2)
    assert go.oracle(go.Family("rbp", p=Fraction(4, 5)), 8, 2).size == 3**8
    assert go.oracle(go.Family("rbp", p=Fraction(4, 5)), 6, 3).size == 4**6
    # p = 1/2 with gains 0..2: values sum g_k 2^(N-k), every integer 0..2(2^N - 1)
    assert go.oracle(go.Family("rbp", p=Fraction(1, 2)), 8, 2).size == 2 * (2**8 - 1) + 1
    # gP: sums of grades 0..cN
    assert go.oracle(go.Family("gp"), 7, 4).size == 4 * 7 + 1


def test_oracle_decides_dcg_rational_ties_that_floats_may_miss():
    dcg = go.Family("dcg")
    N = 10
    runs = np.zeros((4, N), dtype=np.int8)
    runs[0, 0] = 1  # grade 1 at rank 1: weight 1
    runs[1, 2] = 2  # grade 2 at rank 3: 2 / log2 4 = 1
    runs[2, 1] = 1  # grade 1 at rank 2: 1 / log2 3
    runs[3, 7] = 2  # grade 2 at rank 8: 2 / log2 9 = 1 / log2 3
    assert list(go.exact_sign(dcg, runs[[0, 2]], runs[[1, 3]], 2)) == [0, 0]
    assert list(go.exact_sign(dcg, runs[[0, 1]], runs[[2, 3]], 2)) == [1, 1]
    ranks = go.oracle(dcg, 6, 2)  # (rank 1 = 1, rank 3 = 2) and (rank 1 = 2, rank 3 = 0) tie
    G = go.all_grade_runs(6, 2)
    a = np.flatnonzero((G == [1, 0, 0, 0, 0, 0]).all(axis=1))[0]
    b = np.flatnonzero((G == [0, 0, 2, 0, 0, 0]).all(axis=1))[0]
    z = np.flatnonzero((G == 0).all(axis=1))[0]
    assert ranks.unq[a] == ranks.unq[b] and ranks.unq[z] == 1 and ranks.mid2[z] == 2
    # J&K base 2: ranks 1, 2 weigh 1 and rank 4 weighs 1/2: grade 2 at rank 4 ties grade 1 at rank 1
    g = np.zeros((2, 5), dtype=np.int8)
    g[0, 0], g[1, 3] = 1, 2
    assert go.exact_sign(go.Family("dcg", 2), g[:1], g[1:], 2)[0] == 0


@pytest.mark.parametrize("measure", [m for m, f in FAMILIES if f.kind != "dcg"])
def test_oracle_integer_keys_are_the_definition_in_fractions(measure):
    fam = FAMILY[measure]
    for levels, N in SMALL + [(3, 12), (5, 8)]:
        assert go.check_keys_against_fractions(fam, N, levels - 1, samples=60) == 0


def test_oracle_err_and_rbp_by_hand():
    # ERR, c = 2: R(2) = 3/4, R(1) = 1/4; the 2019 paper's run (1, 0, 2, 0, 1): 1/4 + 3/16 + 3/320
    err = go.Family("err")
    assert go.fraction_value(err, (2, 0), 2) == Fraction(3, 4)
    assert go.fraction_value(err, (1, 0, 2, 0, 1), 2) == Fraction(1, 4) + Fraction(3, 16) + Fraction(3, 320)
    assert go.fraction_value(err, (1, 1, 0, 0, 0), 2) == Fraction(1, 4) + Fraction(3, 32)
    rbp = go.Family("rbp", p=Fraction(1, 2))
    assert go.fraction_value(rbp, (2, 1), 2) == Fraction(1, 2) * (1 + Fraction(1, 4))
    # unq and mid ranks by hand
    r = go.oracle(go.Family("gp"), 2, 1)  # values 0, 1/2, 1/2, 1 over runs 00, 01, 10, 11
    assert list(r.unq) == [1, 2, 2, 3] and list(r.mid2) == [2, 5, 5, 8]


# -- irscale against the oracle over every run -----------------------------------------------

_ORACLE_CACHE: dict = {}


@pytest.mark.parametrize("levels,N", SMALL)
@pytest.mark.parametrize("measure", [m for m, _ in FAMILIES])
def test_rank_map_equals_the_oracle_on_every_run(measure, levels, N):
    row = go.check_case(measure, FAMILY[measure], levels, N, oracle_cache=_ORACLE_CACHE)
    assert not row.refused, row.refused
    assert row.runs == levels**N
    assert row.size_irscale == row.size_oracle
    assert row.unq_bad == 0 and row.mid_bad == 0, row


@pytest.mark.parametrize("measure,levels,N", [("RBP(p=0.8)", 3, 12), ("ERR", 4, 9), ("gP", 3, 12)])
def test_rank_map_equals_the_oracle_at_the_largest_acceptance_size(measure, levels, N):
    row = go.check_case(measure, FAMILY[measure], levels, N)
    assert not row.refused, row.refused
    assert (row.size_irscale, row.unq_bad, row.mid_bad) == (row.size_oracle, 0, 0), row


# -- two irscale engines at larger N -----------------------------------------------------------


@pytest.mark.parametrize(
    "measure,levels,N,e1,e2", [("DCG", 3, 13, "dcg", "count"), ("RBP(p=0.8)", 3, 13, "split", "enumerate")]
)
def test_two_engines_agree_on_sampled_queries(measure, levels, N, e1, e2):
    unq_bad, mid_bad, sizes, _ = go.cross_engines(measure, levels, N, e1, e2, queries=1000, seed=1)
    assert sizes[0] == sizes[1] > 0
    assert unq_bad == 0 and mid_bad == 0


def test_graded_rbp_count_engine_agrees_with_split():
    from irscale.errors import IrscaleError

    try:
        unq_bad, mid_bad, sizes, _ = go.cross_engines("RBP(p=0.8)", 3, 13, "split", "count", queries=1000, seed=2)
    except IrscaleError as e:  # the graded-RBP count engine is newer than this test: say so
        pytest.xfail(f"no graded RBP count engine: {e}")
    assert sizes == (3**13, 3**13)  # b = 5 > c = 2: every run has its own value
    assert unq_bad == 0 and mid_bad == 0


# -- hypothesis: phi strictly increasing, ties exactly when the values tie ------------------------


@cache
def _map(measure: str, N: int, levels: int):
    from irscale.scales.rankmap import build

    return build(measure, N, levels, cache=False)


def _check_monotone(measure: str, fam, G: np.ndarray, levels: int) -> None:
    rm = _map(measure, G.shape[1], levels)
    got = rm.rank(rm.space.keys(G), ("unq", "mid"))
    i, j = np.triu_indices(len(G), 1)
    exact = go.exact_sign(fam, G[i], G[j], levels - 1)
    for ties in ("unq", "mid"):
        phi = np.asarray(got[ties], dtype=np.float64)
        assert (np.sign(phi[i] - phi[j]) == exact).all(), (ties, G[i][np.sign(phi[i] - phi[j]) != exact])
    assert (np.asarray(got["unq"]) >= 1).all() and (np.asarray(got["unq"]) <= rm.size).all()


# DCG (trec_eval discount) at N = 20: moves that keep the value (ranks 1, 3, 15 weigh 1, 1/2,
# 1/4; ranks 2, 8 weigh 1 and 1/2 times 1/log2 3), as {0-based rank: grade change}
DCG_TIES = [{0: 1, 2: -2}, {2: 1, 14: -2}, {1: 1, 7: -2}, {0: 1, 2: -1, 14: -2}]


@st.composite
def _dcg_runs(draw, N=20, levels=3):
    base = np.array(draw(st.lists(st.integers(0, levels - 1), min_size=N, max_size=N)), dtype=np.int8)
    out = [base]
    for _ in range(draw(st.integers(1, 8))):
        r = out[draw(st.integers(0, len(out) - 1))].copy()
        if draw(st.booleans()):  # a value-keeping move (when the grades allow it), either way round
            move, sign = DCG_TIES[draw(st.integers(0, len(DCG_TIES) - 1))], draw(st.sampled_from([1, -1]))
            moved = r.astype(np.int64)
            for k, d in move.items():
                moved[k] += sign * d
            if moved.min() >= 0 and moved.max() <= levels - 1:
                r = moved.astype(np.int8)
        else:  # a random edit of one or two ranks
            for _ in range(draw(st.integers(1, 2))):
                r[draw(st.integers(0, N - 1))] = draw(st.integers(0, levels - 1))
        out.append(r)
    return np.stack(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dcg_runs())
def test_dcg_phi_strictly_increasing_and_ties_exact(G):
    _check_monotone("DCG", go.Family("dcg"), G, 3)


@st.composite
def _near_runs(draw, N, levels):
    """A run and neighbours: one or two ranks changed, adjacent ranks swapped, or a copy."""
    base = np.array(draw(st.lists(st.integers(0, levels - 1), min_size=N, max_size=N)), dtype=np.int8)
    out = [base]
    for _ in range(draw(st.integers(1, 8))):
        r = out[draw(st.integers(0, len(out) - 1))].copy()
        how = draw(st.sampled_from(["edit", "swap", "copy"]))
        if how == "edit":
            for _ in range(draw(st.integers(1, 2))):
                r[draw(st.integers(0, N - 1))] = draw(st.integers(0, levels - 1))
        elif how == "swap":
            k = draw(st.integers(0, N - 2))
            r[k], r[k + 1] = r[k + 1], r[k]
        out.append(r)
    return np.stack(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_runs(16, 3))
def test_graded_rbp_phi_strictly_increasing_and_ties_exact(G):
    _check_monotone("RBP(p=0.8)", go.Family("rbp", p=Fraction(4, 5)), G, 3)


@cache
def _err_tie_pairs(N: int = 10, levels: int = 4) -> np.ndarray:
    """Pairs of different runs with exactly equal ERR (from the oracle's integer keys)."""
    G = go.all_grade_runs(N, levels - 1)
    keys, _ = go.integer_keys(go.Family("err"), G, levels - 1)
    order = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    pairs = np.stack([order[same], order[same + 1]], axis=1)
    rng = np.random.default_rng(0)
    return G[pairs[rng.choice(len(pairs), size=min(2000, len(pairs)), replace=False)]]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_runs(10, 4), st.integers(0, 10**6))
def test_err_phi_strictly_increasing_and_ties_exact(G, pick):
    pairs = _err_tie_pairs()
    assert len(pairs) > 0  # graded ERR has ties at N = 10 (not all 4^10 values are distinct)
    tie = pairs[pick % len(pairs)]
    _check_monotone("ERR", go.Family("err"), np.concatenate([G, tie]), 4)


def test_err_ties_are_real_ties():
    a, b = _err_tie_pairs()[0]
    assert not (a == b).all()
    assert go.fraction_value(go.Family("err"), a, 3) == go.fraction_value(go.Family("err"), b, 3)
