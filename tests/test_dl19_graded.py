"""TREC DL 2019 passage end to end (issue 11, item 5): 37 official runs, 43 judged topics,
grades 0-3.

* ``evaluate`` equals pytrec-eval-terrier (trec_eval 9.x) per run and topic, API and CLI,
  with scores rounded to float32 as pytrec_eval does.
* ``transform`` of nDCG@10, RBP(p=0.8)@10 and ERR@10 on the graded run space (4 levels,
  N = 10) equals phi computed here from scratch: every one of the 4^10 runs is scored
  with exact integer keys (RBP, ERR; checked against Fractions on the real runs) or, for
  DCG, every vector of class sums is valued in 60-digit integer arithmetic. None of
  irscale's engines is used for the reference.
* ``compare --out`` (CLI) writes Tables 2, 4 and 5/6 under both relevance protocols;
  lenient is graded on binarised qrels, and binary measures do not notice the difference.
"""

from __future__ import annotations

import csv
import functools
import gzip
import heapq
import json
import math
from array import array
from fractions import Fraction
from itertools import combinations, pairwise

import numpy as np
import pytest
from conftest import DATA, need
from typer.testing import CliRunner

import irscale
from irscale.cli import app

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")

# end to end on a real collection: its module fixtures read and judge all 37 runs (about 20 s on 2 cores)
pytestmark = pytest.mark.slow

N = 10
C = 3  # top grade of DL 2019: 4 relevance levels
LEVELS = C + 1
QRELS_NAME = "qrels.dl19-passage.txt"
runner = CliRunner()

# trec_eval name -> irscale name, for pytrec_eval's relevance_level = 2 and the default 1
AT_LEVEL_2 = {
    "ndcg_cut_10": "nDCG@10",
    "ndcg": "nDCG",
    "map": "AP(rel=2)",
    "recip_rank": "RR(rel=2)",
    "P_10": "P(rel=2)@10",
    "bpref": "bpref(rel=2)",
}
AT_LEVEL_1 = {"map": "AP", "recip_rank": "RR", "P_10": "P@10", "bpref": "bpref"}


# -- data, read here without irscale -------------------------------------------------------------


@pytest.fixture(scope="module")
def dl19():
    return need(DATA / "dl19")


@pytest.fixture(scope="module")
def qrels(dl19):
    out: dict[str, dict[str, int]] = {}
    for line in (dl19 / QRELS_NAME).read_text().splitlines():
        q, _, d, g = line.split()
        out.setdefault(q, {})[d] = int(g)
    return out


@pytest.fixture(scope="module")
def run_files(dl19):
    files = sorted((dl19 / "runs").glob("*.gz"))
    assert len(files) == 37
    return files


@pytest.fixture(scope="module")
def runs(run_files):
    """name -> {qid: {docno: score}} (pytrec_eval's input)."""
    out = {}
    for f in run_files:
        lines = gzip.decompress(f.read_bytes()).decode().splitlines()
        fields = " ".join(lines).split()
        assert len(fields) == 6 * len(lines), f"{f.name}: not 6 fields a line"
        tags = set(fields[5::6])
        assert len(tags) == 1, f.name
        run: dict[str, dict[str, float]] = {}
        for q, d, score in zip(fields[0::6], fields[2::6], map(float, fields[4::6])):
            run.setdefault(q, {})[d] = score
        out[tags.pop()] = run
    return out


@pytest.fixture(scope="module")
def table(dl19, run_files):
    return irscale.evaluate(
        dl19 / QRELS_NAME, run_files, list(AT_LEVEL_2.values()) + list(AT_LEVEL_1.values()), score_precision="float32"
    )


def top_grades(run: dict[str, dict[str, float]], qrels, topics) -> np.ndarray:
    """(T, N) grades of the first N documents, ordered like trec_eval <= 9.0.8: score as
    float32 descending, then docno descending; padded with 0 (non-relevant)."""
    out = np.zeros((len(topics), N), dtype=np.int64)
    for t, q in enumerate(topics):
        docs = run.get(q, {})
        f32 = array("f", docs.values())  # C floats: scores rounded to float32
        for i, (_, d) in enumerate(heapq.nlargest(N, zip(f32, docs))):
            out[t, i] = min(max(qrels[q].get(d, 0), 0), C)
    return out


# -- evaluate == pytrec_eval -----------------------------------------------------------------------


def reference(qrels, runs, names, level: int, measures, topics) -> np.ndarray:
    """(measures, systems, topics) from pytrec_eval at ``relevance_level``."""
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level)
    out = np.empty((len(measures), len(names), len(topics)))
    for s, name in enumerate(names):
        res = ev.evaluate(runs[name])
        for m, te in enumerate(measures):
            out[m, s] = [res.get(t, {}).get(te, 0.0) for t in topics]
    return out


@pytest.mark.slow
def test_evaluate_matches_pytrec_eval_per_run_and_topic(table, qrels, runs):
    assert len(table.systems) == 37 and len(table.topics) == 43 == len(qrels)
    assert table.provenance["max_grade"] == C
    for level, mapping in ((2, AT_LEVEL_2), (1, AT_LEVEL_1)):
        ref = reference(qrels, runs, table.systems, level, list(mapping), table.topics)
        got = table.values[[table.index(m) for m in mapping.values()]]
        for k, (te, ours) in enumerate(mapping.items()):
            np.testing.assert_allclose(got[k], ref[k], rtol=0, atol=1e-9, err_msg=f"{ours} vs {te} at level {level}")
            assert ref[k].max() > 0, te  # the measure is not trivially 0 on these runs
    # relevance level 2 changes the binary measures: the check above would not see a lost rel=2
    assert not np.array_equal(table.values[table.index("AP(rel=2)")], table.values[table.index("AP")])


def test_cli_evaluate_matches_pytrec_eval(dl19, run_files, qrels, runs):
    files = run_files[::9]  # 5 runs keep the CLI read short
    res = runner.invoke(
        app,
        [
            "evaluate",
            str(dl19 / QRELS_NAME),
            *map(str, files),
            "-m",
            "AP(rel=2)",
            "-m",
            "nDCG@10",
            "--float32-scores",
            "-q",
            "-f",
            "csv",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(res.stdout.splitlines()))
    names = sorted({r["system"] for r in rows})
    topics = sorted(qrels)
    assert len(names) == len(files)
    got = {(r["measure"], r["system"], r["topic"]): float(r["value"]) for r in rows}
    ref = reference(qrels, runs, names, 2, ["map", "ndcg_cut_10"], topics)
    for m, ours in enumerate(["AP(rel=2)", "nDCG@10"]):
        for s, name in enumerate(names):
            ours_row = [got[(ours, name, t)] for t in topics]
            np.testing.assert_allclose(ours_row, ref[m, s], rtol=0, atol=1e-9, err_msg=f"{ours} {name}")


# -- phi from scratch over all 4^10 runs ----------------------------------------------------------


@functools.cache
def all_runs() -> np.ndarray:
    """(4^10, N) grades of every run."""
    r = np.arange(LEVELS**N, dtype=np.int64)
    return np.stack([(r // LEVELS**i) % LEVELS for i in range(N)], axis=1)


def rbp_key(g: np.ndarray) -> np.ndarray:
    """RBP(p=4/5) = (1/5) sum_i (g_i/3) (4/5)^(i-1) = key / (3 * 5^N): key = sum g_i 4^(i-1) 5^(N-i)."""
    w = np.array([4**i * 5 ** (N - 1 - i) for i in range(N)], dtype=np.int64)
    return g @ w


def rbp_fraction(g) -> Fraction:
    p = Fraction(4, 5)
    return (1 - p) * sum(Fraction(int(x), C) * p**i for i, x in enumerate(g))


LCM = math.lcm(*range(1, N + 1))  # 2520
ERR_SCALE = LCM * 2 ** (C * N)  # 2520 * 8^10 < 2^42


def err_key(g: np.ndarray) -> np.ndarray:
    """ERR * 2520 * 8^10 as an integer: R_i = (2^g - 1)/8, so term i is
    (2520/i) * r_i * prod_{j<i} (8 - r_j) * 8^(N-i) with r = 2^g - 1."""
    r = (1 << g) - 1
    key = np.zeros(len(g), dtype=np.int64)
    stay = np.ones(len(g), dtype=np.int64)  # prod_{j<i} (8 - r_j)
    for i in range(N):
        key += (LCM // (i + 1)) * r[:, i] * stay * 8 ** (N - 1 - i)
        stay *= 2**C - r[:, i]
    return key


def err_fraction(g) -> Fraction:
    out, stay = Fraction(0), Fraction(1)
    for i, x in enumerate(g):
        r = Fraction(2 ** int(x) - 1, 2**C)
        out += stay * r / (i + 1)
        stay *= 1 - r
    return out


@functools.cache
def distinct_keys(measure: str) -> np.ndarray:
    """The sorted distinct exact keys of all 4^10 runs."""
    return np.unique({"rbp": rbp_key, "err": err_key}[measure](all_runs()))


def phi_from_keys(measure: str, keys: np.ndarray) -> tuple[np.ndarray, int]:
    """phi = 1 + number of distinct values below; and the number of distinct values."""
    distinct = distinct_keys(measure)
    return np.searchsorted(distinct, keys, side="left") + 1, len(distinct)


def dcg_classes(g: np.ndarray) -> np.ndarray:
    """trec_eval's DCG@10 = sum g_i / log2(i+1) grouped into classes of commensurable weights:
    ranks 1, 3, 7 weigh 1, 1/2, 1/3 (log2 2, 4, 8); ranks 2, 8 weigh 1, 1/2 times 1/log2 3;
    ranks 4, 5, 6, 9, 10 stand alone (log2 5, 6, 7, 10, 11). Integer class sums:
    u = 6 (g1 + g3/2 + g7/3), v = 2 (g2 + g8/2), then g4, g5, g6, g9, g10."""
    return np.stack(
        [6 * g[:, 0] + 3 * g[:, 2] + 2 * g[:, 6], 2 * g[:, 1] + g[:, 7], g[:, 3], g[:, 4], g[:, 5], g[:, 8], g[:, 9]],
        axis=1,
    )


DCG_LOGS = (3, 5, 6, 7, 10, 11)  # the irrational class weights 1/log2 k


@functools.cache
def dcg_order(levels: int):
    """(class-sum vector -> phi, number of distinct values) of DCG@10, grades 0..levels-1.

    The classes hold disjoint ranks, so the class-sum vectors are the product of each
    class's sums. Their float64 values (error below 1e-13) are sorted; the smallest gap
    between neighbours must be far above that error, so the float order is the exact
    order and distinct vectors have distinct values; the 50 closest neighbours are
    re-checked with 60-digit weights in integer arithmetic."""
    import mpmath

    g = np.arange(levels)
    u = np.unique((6 * g[:, None, None] + 3 * g[None, :, None] + 2 * g[None, None, :]).ravel())
    v = np.unique((2 * g[:, None] + g[None, :]).ravel())
    axes = np.meshgrid(u, v, *[g] * len(DCG_LOGS[1:]), indexing="ij")
    vecs = np.stack([a.ravel() for a in axes], axis=1)
    w = np.array([1 / math.log2(k) for k in DCG_LOGS])
    value = vecs[:, 0] / 6 + vecs[:, 1] / 2 * w[0] + vecs[:, 2:] @ w[1:]
    order = np.argsort(value, kind="stable")
    gaps = np.diff(value[order])
    assert gaps.min() > 1e-9, "two class-sum vectors have values closer than float64 can order"
    mpmath.mp.dps = 80
    scale = 10**60
    wi = [int(mpmath.floor(mpmath.mpf(scale) / mpmath.log(k, 2))) for k in DCG_LOGS]

    def exact(x):  # 6 * DCG * 10^60, error below 10^3
        x = [int(y) for y in x]
        return x[0] * scale + 3 * x[1] * wi[0] + 6 * sum(a * b for a, b in zip(x[2:], wi[1:]))

    for k in np.argsort(gaps)[:50]:
        assert exact(vecs[order[k + 1]]) - exact(vecs[order[k]]) > 10**40
    phi = {tuple(vecs[i].tolist()): k + 1 for k, i in enumerate(order)}
    return phi, len(vecs)


def assert_phi_is_the_exact_order(phi: np.ndarray, exact: list, what: str):
    """phi's defining property on all pairs of cells (checked along the exact order): phi
    increases strictly where the exact value does, and equal values get equal phi."""
    order = sorted(range(len(exact)), key=exact.__getitem__)
    for a, b in pairwise(order):
        if exact[a] == exact[b]:
            assert phi[a] == phi[b], what
        else:
            assert phi[a] < phi[b], what


@pytest.fixture(scope="module")
def graded_transform(table):
    return irscale.transform(table, ["nDCG", "RBP(p=0.8)", "ERR"], depth=N, relevance="graded")


@pytest.fixture(scope="module")
def cells(runs, qrels, table):
    """(S*T, N) grades of the real runs' top 10, in the table's (system, topic) order."""
    return np.concatenate([top_grades(runs[name], qrels, table.topics) for name in table.systems])


@pytest.mark.slow
def test_transform_rbp_phi_counts_all_4_to_10_runs(graded_transform, cells):
    t = graded_transform
    phi, size = phi_from_keys("rbp", rbp_key(cells))
    assert size == LEVELS**N  # b = 5 > c = 3: all runs have distinct values
    assert t.provenance["transform"]["maps"]["RBP(p=0.8)@10"]["size"] == size
    got = t.values[t.index("ranked(RBP(p=0.8)@10)")].reshape(-1)
    np.testing.assert_array_equal(got, phi)
    exact = [rbp_fraction(g) for g in cells]
    assert all(Fraction(int(k), C * 5**N) == v for k, v in zip(rbp_key(cells), exact))
    np.testing.assert_allclose(
        t.values[t.index("RBP(p=0.8)@10")].reshape(-1), [float(v) for v in exact], rtol=0, atol=1e-12
    )
    assert_phi_is_the_exact_order(got, exact, "RBP(p=0.8)@10")


@pytest.mark.slow
def test_transform_err_phi_against_exact_keys(graded_transform, cells):
    t = graded_transform
    phi, size = phi_from_keys("err", err_key(cells))
    assert size < LEVELS**N  # some ERR values tie across runs
    assert t.provenance["transform"]["maps"]["ERR@10"]["size"] == size
    got = t.values[t.index("ranked(ERR@10)")].reshape(-1)
    np.testing.assert_array_equal(got, phi)
    exact = [err_fraction(g) for g in cells]
    assert all(Fraction(int(k), ERR_SCALE) == v for k, v in zip(err_key(cells), exact))
    np.testing.assert_allclose(t.values[t.index("ERR@10")].reshape(-1), [float(v) for v in exact], rtol=0, atol=1e-12)
    assert_phi_is_the_exact_order(got, exact, "ERR@10")


def test_transform_ndcg_phi_is_dcg_rank_among_all_class_sum_vectors(graded_transform, cells):
    """ranked(nDCG@N) is phi of DCG@N (the recall-base-free core, SPEC section 3)."""
    t = graded_transform
    phi_of, size = dcg_order(LEVELS)
    assert size == 32 * 10 * LEVELS**5  # 6g1+3g3+2g7: 32 sums; 2g2+g8: 10; five singletons
    assert t.provenance["transform"]["maps"]["nDCG@10"]["size"] == size
    phi = np.array([phi_of[tuple(v)] for v in dcg_classes(cells).tolist()])
    got = t.values[t.index("ranked(nDCG@10)")].reshape(-1)
    np.testing.assert_array_equal(got, phi)
    assert len(np.unique(got)) > 100  # the real runs spread over the scale


def test_extreme_runs_get_phi_1_and_the_size():
    """The empty run is at 1 and the ideal run (ten grade-3 documents) at the size."""
    docs = [f"d{i}" for i in range(12)]
    q = irscale.Qrels.from_records([("1", d, 3) for d in docs[:10]] + [("1", "d10", 1), ("1", "d11", 0)])
    best = irscale.Run.from_records([("1", d, 20.0 - i) for i, d in enumerate(docs[:10])], name="best")
    worst = irscale.Run.from_records([("1", "x", 1.0), ("1", "d11", 0.5)], name="worst")
    ms = ["nDCG", "RBP(p=0.8)", "ERR"]
    t = irscale.transform(irscale.evaluate(q, [best, worst], ["P@10"]), ms, depth=N, relevance="graded")
    sizes = {"nDCG@10": dcg_order(LEVELS)[1], "RBP(p=0.8)@10": LEVELS**N, "ERR@10": len(distinct_keys("err"))}
    for m, size in sizes.items():
        assert t.values[t.index(f"ranked({m})"), :, 0].tolist() == [size, 1], m


# -- compare: graded vs lenient --------------------------------------------------------------------

COMPARE_MEASURES = ["P", "AP", "RBP(p=0.8)", "nDCG"]
LABELS = ["P@10", "AP@10", "RBP(p=0.8)@10", "nDCG@10"]  # the written tables name measures as computed
LENIENT = {"RBP(p=0.8)@10": "RBP(p=0.8,rel=1)@10", "nDCG@10": "nDCG(rel=1)@10"}  # binary under lenient


def as_graded(tables):
    """The written rows with lenient's names (``nDCG(rel=1)@10``) as the graded names."""
    back = {v: k for k, v in LENIENT.items()}
    if isinstance(tables, dict) and all(isinstance(v, dict) and "size" in v for v in tables.values()):  # rank maps
        return {back.get(k, k): v for k, v in tables.items()}

    def name(v):
        for a, b in back.items():
            v = v.replace(a, b) if isinstance(v, str) else v  # measure columns and ranked(...) names
        return v

    return {stem: [{k: name(v) for k, v in r.items()} for r in rows] for stem, rows in tables.items()}


TESTS = ["sign", "ttest"]
COMPARED = range(0, 37, 3)  # 13 runs
OUT_FILES = [
    "table2_tau_measure_vs_ranked_N10",
    "table4_tau_between_measures_N10",
    "tables5_6_significance_changes_N10",
]


def run_compare(qrels_path, files, out, relevance):
    args = [
        "compare",
        str(qrels_path),
        *map(str, files),
        "-N",
        str(N),
        "--float32-scores",
        "--relevance",
        relevance,
        "--out",
        str(out),
        "--no-mid",
        "--no-figures",  # the tables are what is checked here (figures: tests/test_report_figures.py)
    ]
    for m in COMPARE_MEASURES:
        args += ["-m", m]
    for t in TESTS:
        args += ["-t", t]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    tables = {}
    for stem in OUT_FILES:
        for ext in ("csv", "json", "tex"):
            assert (out / f"{stem}.{ext}").stat().st_size > 0, (stem, ext)
        tables[stem] = list(csv.DictReader((out / f"{stem}.csv").read_text().splitlines()))
        js = json.loads((out / f"{stem}.json").read_text())
        assert js["provenance"]["relevance"] == relevance and js["provenance"]["systems"] == len(files)
        assert len(js["provenance"]["topics"]) == 43 and js["provenance"]["N"] == N
        assert len(js["rows"]) == len(tables[stem])
    report = (out / "report_N10.md").read_text()
    assert f"relevance {relevance}" in report and f"{len(files)} systems × 43 topics" in report
    return tables, js["provenance"]


def check_tables(tables, labels=LABELS):
    t2, t4, t56 = (tables[s] for s in OUT_FILES)
    assert [r["measure"] for r in t2] == labels
    assert [(r["measure_1"], r["measure_2"]) for r in t4] == list(combinations(labels, 2))
    assert [(r["measure"], r["test"]) for r in t56] == [
        (m, t) for m in labels for t in ("Sign Test", "Student's t Test")
    ]
    for r in t2:  # topic by topic, phi is a strictly increasing function of the measure
        assert float(r["topic_tau_min"]) == pytest.approx(1.0) and float(r["topic_tau_max"]) == pytest.approx(1.0)
    pairs = len(COMPARED) * (len(COMPARED) - 1) // 2
    for r in t56:
        sig, s2ns, ns2s, ranked = (int(r[k]) for k in ("sig", "s2ns", "ns2s", "sig_ranked"))
        assert 0 <= sig <= pairs and 0 <= ranked <= pairs and ranked == sig - s2ns + ns2s
        assert float(r["delta_pct"]) == pytest.approx(100 * (s2ns + ns2s) / sig)
        if r["test"] == "Sign Test":  # within topics, a strictly increasing map changes no sign
            assert s2ns == ns2s == 0


@pytest.fixture(scope="module")
def compared(dl19, run_files, qrels, tmp_path_factory):
    """compare on 13 of the 37 runs (each CLI call reads its runs), under both protocols,
    and graded on qrels binarised here (grade >= 1 -> 1)."""
    out = tmp_path_factory.mktemp("compare")
    files = [run_files[i] for i in COMPARED]
    binary = out / "qrels.binary.txt"
    binary.write_text("".join(f"{q} 0 {d} {int(g >= 1)}\n" for q, docs in qrels.items() for d, g in docs.items()))
    res = {rel: run_compare(dl19 / QRELS_NAME, files, out / rel, rel) for rel in ("graded", "lenient")}
    res["binarised"] = run_compare(binary, files, out / "binarised", "graded")
    return res


@pytest.mark.slow
def test_compare_writes_tables_2_4_5_6_under_both_protocols(compared):
    for protocol, (tables, _) in compared.items():
        check_tables(tables, [LENIENT.get(m, m) for m in LABELS] if protocol == "lenient" else LABELS)


def test_lenient_is_graded_on_binarised_qrels(compared):
    """lenient = rel 1 for every measure: the same tables as qrels binarised by hand."""
    (l_tables, l_prov), (b_tables, b_prov) = compared["lenient"], compared["binarised"]
    assert as_graded(l_tables) == b_tables  # the same numbers; lenient names the binary measures it computed
    assert as_graded(l_prov["rank_maps"]) == b_prov["rank_maps"]


@pytest.mark.slow
def test_graded_and_lenient_differ_only_for_graded_measures(compared):
    (g_tables, g_prov), (l_tables, l_prov) = compared["graded"], compared["lenient"]
    g_maps, l_maps = g_prov["rank_maps"], as_graded(l_prov["rank_maps"])
    l_tables = as_graded(l_tables)
    # binary measures: the same rank maps and the same rows under both protocols
    for m in ("P@10", "AP@10"):
        assert g_maps[m] == l_maps[m] and g_maps[m]["levels"] == 2
    for stem in OUT_FILES:
        assert len(g_tables[stem]) == len(l_tables[stem])
        for g, lt in zip(g_tables[stem], l_tables[stem]):
            if not {g.get("measure"), g.get("measure_1"), g.get("measure_2")} & {"RBP(p=0.8)@10", "nDCG@10"}:
                assert g == lt, stem
    # graded measures: 4 levels against 2, with the sizes counted here
    assert g_maps["RBP(p=0.8)@10"]["size"] == 4**N and g_maps["RBP(p=0.8)@10"]["levels"] == 4
    assert l_maps["RBP(p=0.8)@10"]["size"] == 2**N and l_maps["RBP(p=0.8)@10"]["levels"] == 2
    assert g_maps["nDCG@10"]["size"] == dcg_order(4)[1] and g_maps["nDCG@10"]["levels"] == 4
    assert l_maps["nDCG@10"]["size"] == dcg_order(2)[1] == 2**N and l_maps["nDCG@10"]["levels"] == 2
    # and the graded measures' scores differ, so their tables do
    g56 = {(r["measure"], r["test"]): r for r in g_tables[OUT_FILES[2]]}
    l56 = {(r["measure"], r["test"]): r for r in l_tables[OUT_FILES[2]]}
    assert any(g56[k]["sig"] != l56[k]["sig"] for k in g56 if k[0] in ("RBP(p=0.8)@10", "nDCG@10"))
    g2 = {r["measure"]: r for r in g_tables[OUT_FILES[0]]}
    l2 = {r["measure"]: r for r in l_tables[OUT_FILES[0]]}
    assert all(g2[m]["tau_unq"] != l2[m]["tau_unq"] for m in ("RBP(p=0.8)@10", "nDCG@10"))


# -- N = 20 on 4 levels (item 5): the count engine on real runs -------------------------------------

N20 = 20


def top_grades_at(run: dict[str, dict[str, float]], qrels, topics, n: int) -> np.ndarray:
    """Like top_grades, at depth n."""
    out = np.zeros((len(topics), n), dtype=np.int64)
    for t, q in enumerate(topics):
        docs = run.get(q, {})
        f32 = array("f", docs.values())
        for i, (_, d) in enumerate(heapq.nlargest(n, zip(f32, docs))):
            out[t, i] = min(max(qrels[q].get(d, 0), 0), C)
    return out


@pytest.mark.slow
def test_rbp_and_ndcg_at_N20_on_4_levels(dl19, run_files, qrels, runs):
    """RBP(p=0.8)@20: every one of the 4^20 runs has its own value, so phi = the number of
    runs with key <= the cell's, counted here over two halves of 4^10 keys (int64); nDCG@20:
    phi orders the cells exactly like their DCG values in 60-digit arithmetic; ERR@20 on 4
    levels is refused with its reason (keys beyond 64 bits)."""
    import mpmath

    t = irscale.evaluate(dl19 / QRELS_NAME, run_files[:2], ["AP"], score_precision="float32")
    out = irscale.transform(t, ["RBP(p=0.8)", "nDCG"], depth=N20, relevance="graded")
    maps = out.provenance["transform"]["maps"]
    assert maps["RBP(p=0.8)@20"] == {"size": 4**N20, "engine": "count", "levels": 4}
    assert maps["nDCG@20"]["engine"] == "count"
    topics = list(t.topics)
    grades = np.stack([top_grades_at(runs[name], qrels, topics, N20) for name in t.systems])  # (S, T, N)
    cells = grades.reshape(-1, N20)

    w = np.array([4**i * 5 ** (N20 - 1 - i) for i in range(N20)], dtype=np.int64)
    half = np.stack(np.meshgrid(*[np.arange(LEVELS)] * 10, indexing="ij"), -1).reshape(-1, 10)
    pre = np.sort(half @ w[:10])[::-1]  # descending: sorted needles below
    suf = np.sort(half @ w[10:])
    keys = cells @ w
    expected = {int(k): int(np.searchsorted(suf, k - pre, side="right").sum()) for k in np.unique(keys)}
    phi = out.values[2].reshape(-1)
    assert [expected[int(k)] for k in keys] == phi.astype(np.int64).tolist()

    with mpmath.workdps(60):
        disc = [1 / mpmath.log(i + 2, 2) for i in range(N20)]
        dcg = [mpmath.fsum(int(g) * d for g, d in zip(cell, disc)) for cell in cells]
    phi = out.values[3].reshape(-1)
    order = sorted(range(len(dcg)), key=dcg.__getitem__)
    for a, b in pairwise(order):  # rational ties (grade 2 at rank 3 = grade 1 at rank 1) agree to 1e-50
        assert (phi[a] == phi[b]) if abs(dcg[a] - dcg[b]) < mpmath.mpf(10) ** -50 else (phi[a] < phi[b])
    with pytest.raises(irscale.errors.MeasureError, match="ERR is exact up to N=17 on 4 levels"):
        irscale.transform(t, ["ERR"], depth=N20, relevance="graded")
