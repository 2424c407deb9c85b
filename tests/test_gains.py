"""Gain maps and rational p (issue 11, item 2): DCG, nDCG, RBP, gP and gR with
``gains=exp`` (2^g - 1), ``gains=0:0,1:1,2:3,3:7`` or rational gains, RBP with p = 1/3
exactly.

* Rank maps against an oracle written here from the definitions, sharing no code with
  irscale: every run at small N (3 levels N = 7, 4 levels N = 6) valued in Fractions (RBP,
  gP, gR) or 60-digit mpmath (DCG, nDCG: values within 1e-40 are the same value, rational
  ties being equal to ~1e-59); size and phi (unq) of every run equal irscale's.
* Scores against trec_eval: trec_eval's ndcg takes the gain of a level from the qrels
  ("change the qrels file appropriately", or ``-m ndcg.1=3,2=9``), so nDCG with a gain
  map equals pytrec_eval's ndcg on qrels whose grades are replaced by their gains (TREC
  DL 2019), and trec_eval's own ``ndcg_1=3,2=9,4=4.5`` fixture output.
* Parsing: canonical names round-trip; exact gains and p.
"""

from __future__ import annotations

import gzip
import itertools
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import DATA, need

import irscale
from irscale.errors import IrscaleError, MeasureError
from irscale.measures import parse_measure
from irscale.scales import build

# -- the oracle: definitions only ------------------------------------------------------------

MAPS = {  # gain map -> the gains of grades 0..3 it means (written out by hand)
    "0:0,1:1,2:3,3:7": [0, 1, 3, 7],
    "exp": [0, 1, 3, 7],  # 2^g - 1 (Burges et al.)
    "0:0,1:1/2,2:3/4,3:5/2": [0, Fraction(1, 2), Fraction(3, 4), Fraction(5, 2)],
    "1:0": [0, 0, 2, 3],  # unlisted grades keep their grade (trec_eval's rule); grade 1 counts nothing
}
SIZES = [(3, 7), (4, 6)]  # (levels, N)


def every_run(N: int, levels: int) -> np.ndarray:
    return np.array(list(itertools.product(range(levels), repeat=N)), dtype=np.int8)


def exact_values(kind: str, runs: np.ndarray, gains, p: Fraction | None = None) -> list:
    """Each run's value up to a positive constant: Fractions (RBP, gP), mpf (DCG)."""
    G = [Fraction(x) for x in gains]
    N = runs.shape[1]
    if kind == "gp":
        return [sum(G[g] for g in run) for run in runs]
    if kind == "rbp":
        w = [p**k for k in range(N)]
        return [sum(G[g] * w[k] for k, g in enumerate(run)) for run in runs]
    with mpmath.workdps(60):  # DCG: gain / log2(rank + 1)
        w = [1 / mpmath.log(k + 2, 2) for k in range(N)]
        Gm = [mpmath.mpf(x.numerator) / x.denominator for x in G]
        return [mpmath.fsum(Gm[g] * w[k] for k, g in enumerate(run) if g) for run in runs]


def oracle_phi(values: list, tol=None) -> tuple[int, np.ndarray]:
    """(number of distinct values, phi_unq of each run: 1 + distinct values below it)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    phi = np.empty(len(values), dtype=np.int64)
    rank, prev = 0, None
    for i in order:
        v = values[i]
        if prev is None or (v != prev if tol is None else v - prev > tol):
            rank += 1
            prev = v
        phi[i] = rank
    return rank, phi


CASES = [  # (measure template, oracle kind, p)
    ("DCG(gains={g})", "dcg", None),
    ("nDCG(gains={g})", "dcg", None),
    ("RBP(p=0.8,gains={g})", "rbp", Fraction(4, 5)),
    ("RBP(p=1/3,gains={g})", "rbp", Fraction(1, 3)),
    ("RBP(p=1/9,gains={g})", "rbp", Fraction(1, 9)),  # lexicographic where 1/9 <= step / (step + top)
    ("gP(gains={g})", "gp", None),
    ("gR(gains={g})", "gp", None),
]


@pytest.fixture(scope="module")
def runs():
    return {(levels, N): every_run(N, levels) for levels, N in SIZES}


@pytest.mark.parametrize(
    "spec,levels,N",
    [  # the written-out map means exp's gains: once, at 3 levels
        (spec, levels, N) for spec in MAPS for levels, N in SIZES if spec != "0:0,1:1,2:3,3:7" or levels == 3
    ],
)
@pytest.mark.slow
def test_rank_maps_with_gains_equal_the_oracle_on_every_run(runs, levels, N, spec):
    G = runs[(levels, N)]
    gains = MAPS[spec][:levels]
    memo = {}
    for template, kind, p in CASES:
        measure = template.format(g=spec)
        if (kind, p) not in memo:
            vals = exact_values(kind, G, gains, p)
            memo[(kind, p)] = oracle_phi(vals, mpmath.mpf(10) ** -40 if kind == "dcg" else None)
        size, phi = memo[(kind, p)]
        rm = build(measure, N, levels, cache=False)
        got = np.asarray(rm.rank(rm.space.keys(G), ("unq",))["unq"], dtype=np.int64)
        assert rm.size == size, (measure, levels, N, rm.engine)
        assert np.array_equal(got, phi), (measure, levels, N, rm.engine)


@pytest.mark.parametrize(
    "measure,levels,N,spec",
    [
        ("RBP(p=0.8,gains={g})", 4, 6, "exp"),  # gains 0, 1, 3, 7: no difference divisible by 5
        ("RBP(p=0.8,gains={g})", 3, 7, "0:0,1:1/2,2:3/4,3:5/2"),  # 0, 2, 3 (times 4): likewise
        ("DCG(gains={g})", 4, 6, "0:0,1:1/2,2:3/4,3:5/2"),
        ("nDCG(gains={g})", 3, 7, "1:0"),
    ],
)
def test_count_engine_with_gains_equals_the_oracle(runs, measure, levels, N, spec):
    G = runs[(levels, N)]
    kind = "rbp" if measure.startswith("RBP") else "dcg"
    vals = exact_values(kind, G, MAPS[spec][:levels], Fraction(4, 5))
    size, phi = oracle_phi(vals, mpmath.mpf(10) ** -40 if kind == "dcg" else None)
    rm = build(measure.format(g=spec), N, levels, engine="count", cache=False)
    sample = np.arange(0, len(G), 7)
    got = np.asarray(rm.rank(rm.space.keys(G[sample]), ("unq",))["unq"], dtype=np.int64)
    assert rm.size == size and np.array_equal(got, phi[sample])
    if kind == "rbp":
        assert size == levels**N  # the engine counts runs: every run its own value, as proven


def test_count_engine_refuses_rbp_whose_gains_can_tie(runs):
    # gains 0, 1, 3 with p = 1/3: 3 - 0 is divisible by b = 3, and runs do tie:
    # (1, 0, 0, ...) and (0, 3, 0, ...) are both worth 1
    vals = exact_values("rbp", runs[(3, 7)], [0, 1, 3], Fraction(1, 3))
    assert len(set(vals)) < 3**7
    assert exact_values("rbp", np.array([[1, 0, 0], [0, 2, 0]]), [0, 1, 3], Fraction(1, 3)) == [1, 1]
    with pytest.raises(IrscaleError, match="multiple of b = 3"):
        build("RBP(p=1/3,gains=exp)", 7, 3, engine="count", cache=False)
    # the default gains 0, 1, 2 with p = 2/5 (b = 5 > c = 2) are counted: every run its own value
    assert len(set(exact_values("rbp", runs[(3, 7)], [0, 1, 2], Fraction(2, 5)))) == 3**7
    assert build("RBP(p=2/5)", 7, 3, engine="count", cache=False).size == 3**7


# -- rational p ---------------------------------------------------------------------------------


def test_rational_p_is_exact_and_distinct_from_its_float():
    third = parse_measure("RBP(p=1/3)")
    assert third == parse_measure('RBP(p="1/3")') == irscale.measures.RBP(p=Fraction(1, 3))
    assert str(third) == "RBP(p=1/3)" and parse_measure(str(third)) == third
    assert third.p_exact == Fraction(1, 3)
    decimal = parse_measure(f"RBP(p={1 / 3!r})")
    assert decimal != third and decimal.p_exact == Fraction("0.3333333333333333")
    assert str(parse_measure("RBP(p=4/5)")) == "RBP(p=0.8)"  # a terminating decimal keeps its name
    # float scores as before: (1 - p) * sum gain/c p^(k-1), here gains 2, 0, 1 of c = 2
    assert third([2, 0, 1], [1, 1, 1]) == pytest.approx(float((1 - Fraction(1, 3)) * (1 + Fraction(1, 18))), rel=1e-15)
    # both read p exactly: 1/3 is the 2019 paper's interval case at c = 2 (gains 0, 1, 2), the float below it
    from irscale.scales.theory import statement

    assert statement("RBP(p=1/3)", 6, 3).original_scale == "interval"
    assert statement(f"RBP(p={1 / 3!r})", 6, 3).original_scale == "ordinal"
    # and the rank maps: at p = 1/3 the runs are equi-spaced (one value per run, keys the base-3 number)
    vals = exact_values("rbp", every_run(6, 3), [0, 1, 2], Fraction(1, 3))
    assert len(set(vals)) == 3**6 == build("RBP(p=1/3)", 6, 3, cache=False).size


# -- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,canonical",
    [
        ("nDCG(gains=0:0,1:1,2:3,3:7)@10", "nDCG(gains=0:0,1:1,2:3,3:7)@10"),
        ("nDCG(gain=exp)", "nDCG(gains=exp)"),
        ("ndcg(gains = 2:3, 1:1)@5", "nDCG(gains=1:1,2:3)@5"),
        ("DCG(base=2, gains=1:0.5,2:1)", "DCG(base=2,gains=1:1/2,2:1)"),
        ("RBP(gains=0:0,1:1/2,2:1, p=1/3)@10", "RBP(p=1/3,gains=0:0,1:1/2,2:1)@10"),
        ("gP(gains={1: 2, 2: 5})@10", "gP(gains=1:2,2:5)@10"),
        ("gR(gains=[0, 1, 3])", "gR(gains=0:0,1:1,2:3)"),
    ],
)
def test_names_round_trip(text, canonical):
    m = parse_measure(text)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m and hash(parse_measure(str(m))) == hash(m)


def test_gain_values_are_exact_and_follow_trec_evals_rule():
    m = parse_measure("nDCG(gains=1:1/3,2:0.5)")
    assert m.gain_values(3) == (0, Fraction(1, 3), Fraction(1, 2), 3)  # grade 3 unlisted: gain 3
    assert m.integer_gains(3) == ([0, 2, 3, 18], Fraction(6))
    with pytest.raises(MeasureError, match="grade 4, not in the map"):
        parse_measure("nDCG(gains=0:0,1:1,2:3,3:7)").gain_values(4)  # 4 < 7
    with pytest.raises(MeasureError, match="ERR takes no gain map"):
        parse_measure("ERR(gain=exp)@10")


def test_scores_with_gains_by_hand():
    # gains 0, 1, 3, 7; run grades 3, 0, 2, 1; topic: one document of each grade 1..3
    run, counts = [3, 0, 2, 1], [5, 1, 1, 1]
    dcg = 7 + 3 / np.log2(4) + 1 / np.log2(5)
    ideal = 7 + 3 / np.log2(3) + 1 / np.log2(4)
    assert parse_measure("DCG(gains=exp)")(run, counts) == pytest.approx(dcg, rel=1e-15)
    assert parse_measure("nDCG(gains=exp)")(run, counts) == pytest.approx(dcg / ideal, rel=1e-15)
    assert parse_measure("RBP(p=1/2,gains=exp)")(run, counts) == pytest.approx(0.5 * (1 + 3 / 28 + 1 / 56), rel=1e-15)
    assert parse_measure("gP(gains=exp)@4")(run, counts) == pytest.approx(11 / 28, rel=1e-15)
    assert parse_measure("gR(gains=exp)")(run, counts) == pytest.approx(11 / 11, rel=1e-15)
    assert parse_measure("gR(gains=1:0)")(run, counts) == pytest.approx(5 / 5, rel=1e-15)
    assert parse_measure("gR(gains=1:0)")([1, 2], counts) == pytest.approx(2 / 5, rel=1e-15)


# -- against trec_eval ---------------------------------------------------------------------------


def test_trec_eval_fixture_ndcg_with_gain_parameters(te_test):
    """trec_eval -m ndcg.1=3,2=9,4=4.5 on qrels.test (grades 0 and 1 only, so only 1=3
    applies: grade 1 gains 3)."""
    expected = {}
    for line in (te_test / "out.test.meas_params").read_text().splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        if name == "ndcg_1=3,2=9,4=4.5":
            expected[qid] = value
    table = irscale.evaluate(te_test / "qrels.test", [te_test / "results.test"], ["nDCG(gains=1:3)"])
    assert len(expected) == 4  # topics 301, 302, 303 and all
    for qid, value in expected.items():
        row = table.values[0, 0]
        got = np.mean(row) if qid == "all" else row[table.topics.index(qid)]
        assert f"{got:.4f}" == value, qid


@pytest.fixture(scope="module")
def dl19():
    return need(DATA / "dl19")


def test_ndcg_with_gains_equals_pytrec_eval_on_regraded_qrels(dl19):
    """nDCG(gains=...) equals trec_eval's ndcg on qrels whose grades are the gains (how
    trec_eval takes gains): Burges' exponential gains, and grade 1 counting nothing (the
    TREC DL 2020 convention the issue names)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_path = dl19 / "qrels.dl19-passage.txt"
    files = sorted((dl19 / "runs").glob("*.gz"))[::12]  # 4 of the 37 runs
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    runs = {}
    for f in files:
        run: dict[str, dict[str, float]] = {}
        for line in gzip.decompress(f.read_bytes()).decode().splitlines():
            q, _, d, _, s, tag = line.split()
            run.setdefault(q, {})[d] = float(s)
        runs[tag] = run
    for spec, as_qrels in (("exp", {0: 0, 1: 1, 2: 3, 3: 7}), ("1:0", {0: 0, 1: 0, 2: 2, 3: 3})):
        regraded = {q: {d: as_qrels[g] for d, g in docs.items()} for q, docs in qrels.items()}
        ev = pytrec_eval.RelevanceEvaluator(regraded, {"ndcg_cut_10", "ndcg"})
        ours = [f"nDCG(gains={spec})@10", f"nDCG(gains={spec})"]
        table = irscale.evaluate(qrels_path, files, ours, score_precision="float32")
        for s, name in enumerate(table.systems):
            res = ev.evaluate(runs[name])
            for m, te in enumerate(["ndcg_cut_10", "ndcg"]):
                ref = [res.get(t, {}).get(te, 0.0) for t in table.topics]
                np.testing.assert_allclose(table.values[m, s], ref, rtol=0, atol=1e-9, err_msg=f"{spec} {name} {te}")
        plain = irscale.evaluate(qrels_path, files, ["nDCG@10"], score_precision="float32")
        assert not np.allclose(plain.values[0], table.values[0])  # the gains change the scores


def test_gr_transform_on_dl19(dl19):
    """gR@10 has a rank map (gP's: the sum of gains): phi_unq = 1 + the sum of the top 10
    grades (every sum 0..30 is attained), and its exact value is that sum over the topic's
    sum of judged grades."""
    files = sorted((dl19 / "runs").glob("*.gz"))[::12]
    table = irscale.evaluate(dl19 / "qrels.dl19-passage.txt", files, ["gR@10"])
    tr = irscale.transform(table, depth=10, ties=("unq",), exact_values=True, relevance="graded")
    ranked = [i for i, m in enumerate(tr.measures) if str(m) == "ranked(gR@10)"][0]
    grades = np.clip(table.judged.grades[..., :10], 0, 3).sum(axis=-1)
    assert np.array_equal(tr.values[ranked], grades + 1)
    assert tr.provenance["transform"]["maps"]["gR@10"]["size"] == 31
    np.testing.assert_allclose(tr.values[tr.index("gR@10")], table.values[0], rtol=1e-12, atol=0)
