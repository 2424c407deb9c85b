"""RBP's residual (Moffat & Zobel 2008): ``rbp_resid``, and phi at both ends of it.

* the residual of every DL 2019 run (43 topics, to 1,000 documents: pooled to depth 10,
  so most ranks are unjudged) against an implementation of its own here: the run files
  and qrels read with plain Python, ranked as trec_eval ranks them, the sum taken in
  exact fractions;
* trec_eval's ``rbp_resid`` (m_rbp_resid.c: ``p^num_ret + (1 - p) * sum of p^(i-1)`` over
  the unjudged ranks, reported where a run has one) agrees wherever a run has one;
* RBP of every completion of the unknown ranks lies within [RBP, RBP + residual];
* ``transform(..., residuals=True)``: phi at the two ends equals a brute force over every
  run of length N (fractions, sharing no code with the engines).
"""

from __future__ import annotations

import gzip
import itertools
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale.data import PAD, UNJUDGED, TopicStats
from irscale.errors import ArgumentError, IrscaleError
from irscale.io import Qrels, Run
from irscale.measures import parse_measure
from irscale.table import ResidualEnd


def _read_qrels(path):
    judged: dict = {}
    for line in path.read_text().splitlines():
        q, _, d, g = line.split()
        judged[q, d] = int(g)
    return judged


def _ranked(path):
    """{topic: [docno, ...]} in trec_eval's order: score descending, docno descending."""
    rows: dict = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        for line in fh:
            q, _, d, _, score, _ = line.split()
            rows.setdefault(q, []).append((float(score), d))
    return {q: [d for _, d in sorted(r, key=lambda x: (x[0], x[1].encode()), reverse=True)] for q, r in rows.items()}


def _resid(docs, judged, q, p: Fraction, cutoff):
    top = docs[:cutoff] if cutoff else docs
    unknown = sum((p**i for i, d in enumerate(top) if judged.get((q, d), -1) < 0), Fraction(0))
    return (1 - p) * unknown + p ** len(top)


def test_every_dl19_run_against_an_implementation_of_its_own(dl19_data):
    qrels = dl19_data / "qrels.dl19-passage.txt"
    judged = _read_qrels(qrels)
    files = sorted((dl19_data / "runs").iterdir())
    names = ["rbp_resid(p=0.8)", "rbp_resid(p=1/3)@100", "rbp_resid(p=0.95)@10"]
    table = irscale.evaluate(qrels, files, names)
    params = [(Fraction(4, 5), None), (Fraction(1, 3), 100), (Fraction(19, 20), 10)]
    some_unjudged = 0
    for s, f in enumerate(files):
        docs = _ranked(f)
        for t, q in enumerate(table.topics):
            for m, (p, cutoff) in enumerate(params):
                want = _resid(docs.get(q, []), judged, q, p, cutoff)
                assert table.values[m, s, t] == pytest.approx(float(want), rel=1e-12, abs=1e-15), (f.name, q, names[m])
            some_unjudged += any(judged.get((q, d), -1) < 0 for d in docs.get(q, []))
    assert some_unjudged > 1000  # the residual is more than p^d on most (run, topic) pairs


def test_trec_evals_rbp_resid_where_a_run_has_an_unjudged_document():
    """m_rbp_resid.c, transcribed: p^num_ret + (1 - p) * sum over unjudged ranks, set only
    where some rank is unjudged (else trec_eval reports 0; irscale keeps p^num_ret)."""
    p = 0.9
    q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("2", "x", 1)])
    r = Run.from_records([("1", "a", 3.0), ("1", "z", 2.0), ("1", "b", 1.0), ("2", "x", 1.0)], name="r")
    got = irscale.evaluate(q, [r], ["rbp_resid(p=0.9)"]).values[0, 0]
    rels = {"1": [1, -1, 0], "2": [1]}
    for t, topic in enumerate(("1", "2")):
        unj, total, cur = 0, 0.0, 1.0
        for g in rels[topic]:
            if g < 0:
                unj += 1
                total += cur
            cur *= p
        trec_eval = cur + (1 - p) * total if unj else 0.0
        if unj:
            assert got[t] == pytest.approx(trec_eval, rel=1e-15)
        else:
            assert trec_eval == 0.0 and got[t] == pytest.approx(p ** len(rels[topic]))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 2, -1, int(UNJUDGED)]), min_size=0, max_size=8),
    st.integers(0, 10**6),
    st.sampled_from(["0.8", "1/2", "0.3"]),
    st.sampled_from([None, 3, 6]),
)
def test_rbp_of_every_completion_lies_within_the_residual(ranking, seed, p, cutoff):
    m = parse_measure(f"RBP(p={p})" + (f"@{cutoff}" if cutoff else ""))
    res = parse_measure(f"rbp_resid(p={p})" + (f"@{cutoff}" if cutoff else ""))
    topics = TopicStats.single([3, 2, 2])
    g = np.array(ranking or [PAD], dtype=np.int16)[None, None, :]
    lo, width = m.batch(g, topics)[0, 0], res.batch(g, topics)[0, 0]
    rng = np.random.default_rng(seed)
    for _ in range(5):  # the unknown ranks judged at random, the run extended by judged documents
        done = [int(rng.integers(0, 3)) if x < 0 else x for x in ranking] + list(rng.integers(0, 3, size=12))
        full = parse_measure(f"RBP(p={p})").batch(np.array(done, dtype=np.int16)[None, None, :], topics)[0, 0]
        assert lo - 1e-12 <= full <= lo + width + 1e-12


def test_judged_only_leaves_only_the_weight_past_the_run():
    q = Qrels.from_records([("1", "a", 1), ("1", "b", 0)])
    r = Run.from_records([("1", "z", 3.0), ("1", "a", 2.0), ("1", "y", 1.5), ("1", "b", 1.0)], name="r")
    full = irscale.evaluate(q, [r], ["rbp_resid(p=0.5)"]).values[0, 0, 0]
    cond = irscale.evaluate(q, [r], ["rbp_resid(p=0.5)"], judged_only=True).values[0, 0, 0]
    assert full == pytest.approx(0.5 * (1 + 0.25) + 0.5**4) and cond == pytest.approx(0.25)


def _phi_oracle(p: Fraction, c: int, N: int):
    """unq: 1 + the number of distinct RBP values below; mid: (runs below) + (runs tied + 1) / 2."""
    vals = [
        sum((Fraction(g, c) * p**i for i, g in enumerate(run)), Fraction(0)) * (1 - p)
        for run in itertools.product(range(c + 1), repeat=N)
    ]
    distinct = sorted(set(vals))
    unq = {v: k + 1 for k, v in enumerate(distinct)}
    below = {v: sum(1 for w in vals if w < v) for v in distinct}
    ties = {v: sum(1 for w in vals if w == v) for v in distinct}
    return lambda run: (
        unq[_value(run, p, c)],
        below[_value(run, p, c)] + Fraction(ties[_value(run, p, c)] + 1, 2),
    )


def _value(run, p, c):
    return sum((Fraction(g, c) * p**i for i, g in enumerate(run)), Fraction(0)) * (1 - p)


def test_transform_residuals_against_a_brute_force():
    N, c, p = 4, 2, Fraction(3, 5)
    q = Qrels.from_records([("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("1", "n", -1), ("2", "x", 1)])
    runs = [
        Run.from_records([("1", "a", 3.0), ("1", "z", 2.5), ("1", "b", 2.0)] + [("2", "y", 1.0)], name="r"),
        Run.from_records([("1", "c", 3.0), ("1", "n", 2.0), ("1", "a", 1.0), ("1", "b", 0.5), ("2", "x", 1)], name="s"),
    ]
    t = irscale.transform(
        irscale.evaluate(q, runs, ["RBP(p=0.6)"]),
        ["RBP(p=0.6)", "AP"],
        depth=N,
        ties=("unq", "mid"),
        residuals=True,
        relevance="graded",
    )
    names = [str(m) for m in t.measures]
    assert names[-3:] == [
        "rbp_resid(p=0.6)@4",
        "ranked(RBP(p=0.6)@4, residual end)",
        "ranked(RBP(p=0.6)@4, ties=mid, residual end)",
    ]
    assert isinstance(t.measures[-1], ResidualEnd) and t.measures[-1].label.endswith("_R_hi")
    phi = _phi_oracle(p, c, N)
    lows = {"r": [[2, 0, 0, 0], [0, 0, 0, 0]], "s": [[1, 0, 2, 0], [1, 0, 0, 0]]}  # unknown ranks at 0
    highs = {"r": [[2, 2, 0, 2], [2, 2, 2, 2]], "s": [[1, 2, 2, 0], [1, 2, 2, 2]]}  # at the top grade
    resid = {"r": [(1 - p) * p + p**3, (1 - p) + p], "s": [(1 - p) * p + p**4, p]}
    for si, s in enumerate(("r", "s")):
        for ti in range(2):
            lo, hi = phi(lows[s][ti]), phi(highs[s][ti])
            col = {n: t.values[k, si, ti] for k, n in enumerate(names)}
            assert col["ranked(RBP(p=0.6)@4)"] == lo[0] and col["ranked(RBP(p=0.6)@4, ties=mid)"] == float(lo[1])
            assert col["ranked(RBP(p=0.6)@4, residual end)"] == hi[0], (s, ti)
            assert col["ranked(RBP(p=0.6)@4, ties=mid, residual end)"] == float(hi[1]), (s, ti)
            assert col["rbp_resid(p=0.6)@4"] == pytest.approx(float(resid[s][ti]), rel=1e-12)


def test_residuals_refusals_and_cli(tmp_path):
    q = Qrels.from_records([("1", "a", 1), ("1", "b", 0)])
    r = Run.from_records([("1", "a", 3.0), ("1", "z", 2.0)], name="r")
    table = irscale.evaluate(q, [r], ["AP"])
    with pytest.raises(ArgumentError, match="no measure asked is RBP"):
        irscale.transform(table, ["AP"], depth=3, residuals=True)
    with pytest.raises(IrscaleError, match="residuals"):
        irscale.transform(table, ["RBP(p=0.8)"], depth=3, residuals="yes")  # type: ignore[arg-type]
    with pytest.raises(IrscaleError, match="not an effectiveness measure"):
        irscale.transform(table, ["rbp_resid(p=0.8)"], depth=3)
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 3.0 r\n1 Q0 z 2 2.0 r\n")
    args = [sys.executable, "-m", "irscale", "transform", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-N", "3"]
    ok = subprocess.run([*args, "-m", "RBP(p=0.5)", "--residuals", "-f", "csv"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    import csv
    import io

    rows = {(r["system"], r["measure"]): float(r["value"]) for r in csv.DictReader(io.StringIO(ok.stdout))}
    assert rows["r", "rbp_resid(p=0.5)@3"] == pytest.approx(0.5 * 0.5 + 0.5**2)  # z unjudged, 2 ranks
    assert rows["r", "ranked(RBP(p=0.5)@3, residual end)"] > rows["r", "ranked(RBP(p=0.5)@3)"]
    bad = subprocess.run([*args, "-m", "AP", "--residuals"], capture_output=True, text=True)
    assert bad.returncode != 0 and "no measure asked is RBP" in bad.stderr and "Traceback" not in bad.stderr


def test_ir_measures_gets_the_residual(dl19_data):
    ir_measures = pytest.importorskip("ir_measures")
    from irscale.integrations.ir_measures import irscale_measure

    qrels = dl19_data / "qrels.dl19-passage.txt"
    f = sorted((dl19_data / "runs").iterdir())[0]
    m = irscale_measure("rbp_resid(p=0.8)")
    got = {
        x.query_id: x.value
        for x in ir_measures.iter_calc([m], ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(f)))
    }
    want = irscale.evaluate(qrels, [f], ["rbp_resid(p=0.8)"])
    assert got == {t: pytest.approx(v) for t, v in zip(want.topics, want.values[0, 0].tolist())}
    assert str(irscale_measure("rbp_resid(p=0.8)", judged_only=True)) == "irscale(rbp_resid(p=0.8), judged_only=True)"


def test_dl19_phi_interval_brackets_the_point_value(dl19_data):
    """On DL 2019 at N = 20 (pooled to 10: ranks 11-20 mostly unjudged), phi at the upper end
    is at least the point value everywhere, above it where a rank within N is unknown, and
    the point value's phi is the same as without residuals."""
    qrels = dl19_data / "qrels.dl19-passage.txt"
    files = sorted((dl19_data / "runs").iterdir())[:8]
    table = irscale.evaluate(qrels, files, ["RBP(p=0.8)@20"])
    plain = irscale.transform(table, ["RBP(p=0.8)"], depth=20, relevance="graded")
    t = irscale.transform(table, ["RBP(p=0.8)"], depth=20, relevance="graded", residuals=True)
    names = [str(m) for m in t.measures]
    lo = t.values[names.index("ranked(RBP(p=0.8)@20)")]
    hi = t.values[names.index("ranked(RBP(p=0.8)@20, residual end)")]
    res = t.values[names.index("rbp_resid(p=0.8)@20")]
    assert np.array_equal(lo, plain.values[[str(m) for m in plain.measures].index("ranked(RBP(p=0.8)@20)")])
    assert (hi >= lo).all()
    unknown = res > 0.8**20 * (1 + 1e-9)  # some rank within 20 unjudged (or the run shorter than 20)
    assert unknown.sum() > 50 and (hi[unknown] > lo[unknown]).all() and (hi[~unknown] == lo[~unknown]).all()


def test_the_guides_worked_example(dl19_data):
    """The table of docs/guide.md's "Incomplete judgments" example is what transform gives."""
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text(encoding="utf-8")
    part = guide.split("**Worked example** (DL 2019 passage", 1)[1]
    rows = [line.strip("|").split("|") for line in part.splitlines() if line.startswith("| ") and "---" not in line]
    shown = {r[0].strip(): [float(x) for x in r[1:]] for r in rows[1:4]}
    files = [dl19_data / "runs" / f"input.{n}.gz" for n in shown]
    t = irscale.transform(
        irscale.evaluate(dl19_data / "qrels.dl19-passage.txt", files, ["RBP(p=0.8)@20"]),
        ["RBP(p=0.8)"],
        depth=20,
        normalize=True,
        residuals=True,
        relevance="graded",
    )
    means = t.mean()
    for s, (name, want) in enumerate(shown.items()):
        got = [round(float(means[m].iloc[s]), 4) for m in means.columns]
        assert got == want, name


def test_the_guides_judged_only_figures(dl19_data):
    """The example's figures for condensed runs: RBP(p=0.8)@20 and its residual."""
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text(encoding="utf-8")
    said = " ".join(guide.split("With `-J`, the same runs condensed score", 1)[1].split()[:20])
    files = [dl19_data / "runs" / f"input.{n}.gz" for n in ("bm25base_p", "idst_bert_p1", "p_bert")]
    t = irscale.evaluate(
        dl19_data / "qrels.dl19-passage.txt", files, ["RBP(p=0.8)@20", "rbp_resid(p=0.8)@20"], judged_only=True
    )
    means = t.mean()
    shown = [f"{v:.4f}" for col in means.columns for v in means[col]]
    assert len(shown) == 6 and all(x in said for x in shown), (shown, said)


def test_residual_on_lenient_relevance_and_real_grades():
    """The residual and phi's upper end see a judgement below 0 as unknown under lenient
    relevance too (binarising would make it a judged 0), and rbp_resid serves real-valued
    grades (it reads only which ranks are judged)."""
    q = Qrels.from_records([("1", "a", 2), ("1", "n", -1), ("1", "b", 0), ("2", "x", 1)])
    r = Run.from_records(
        [("1", "a", 4.0), ("1", "z", 3.0), ("1", "n", 2.0), ("1", "b", 1.0), ("2", "x", 1.0)], name="r"
    )
    table = irscale.evaluate(q, [r], ["RBP(p=0.5)"])
    cols = {}
    for relevance in ("graded", "lenient"):
        t = irscale.transform(table, ["RBP(p=0.5)"], depth=4, relevance=relevance, residuals=True)
        cols[relevance] = {str(m).replace(",rel=1", ""): v for m, v in zip(t.measures, t.values)}
    want = 0.5 * (0.5 + 0.25) + 0.5**4  # z and n unknown, 4 documents
    for relevance, c in cols.items():
        assert c["rbp_resid(p=0.5)@4"][0, 0] == pytest.approx(want), relevance
    hi = cols["lenient"]["ranked(RBP(p=0.5)@4, residual end)"][0, 0]
    lo = cols["lenient"]["ranked(RBP(p=0.5)@4)"][0, 0]
    assert hi > lo
    real = Qrels.from_records([("1", "a", 0.5), ("1", "b", 0.0), ("2", "x", 1.25)])
    got = irscale.evaluate(real, [r], ["rbp_resid(p=0.5)", "RBP(p=0.5)"]).values
    assert got[0, 0].tolist() == pytest.approx([0.5 * (0.5 + 0.25) + 0.5**4, 0.5])  # topic 2: x judged, 1 rank


def test_one_residual_per_p_and_its_provenance():
    q = Qrels.from_records([("1", "a", 2), ("1", "b", 0), ("2", "x", 1)])
    r = Run.from_records([("1", "a", 3.0), ("1", "z", 2.0), ("2", "x", 1.0)], name="r")
    t = irscale.transform(
        irscale.evaluate(q, [r], ["AP"]),
        ["RBP(p=0.5)", "RBP(p=0.5,gains=exp)", "RBP(p=0.8)"],
        depth=3,
        residuals=True,
        relevance="graded",
    )
    names = [str(m) for m in t.measures]
    assert names.count("rbp_resid(p=0.5)@3") == 1 and names.count("rbp_resid(p=0.8)@3") == 1
    assert sum("residual end" in n for n in names) == 3
    assert t.provenance["transform"]["residuals"] == ["rbp_resid(p=0.5)@3", "rbp_resid(p=0.8)@3"]
    ends = {n: t.values[k, 0] for k, n in enumerate(names)}
    assert ends["rbp_resid(p=0.5)@3"].tolist() == pytest.approx([0.5 * 0.5 + 0.25, 0.5])
    for m in ("RBP(p=0.5)@3", "RBP(p=0.5,gains=exp)@3", "RBP(p=0.8)@3"):
        assert (ends[f"ranked({m}, residual end)"] >= ends[f"ranked({m})"]).all()


@pytest.mark.slow
def test_the_guides_study_counts(dl19_data):
    """The example's significant pairs (t test, original and ranked scale), on condensed
    and on full runs, as the guide quotes them."""
    from pathlib import Path

    guide = " ".join((Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text(encoding="utf-8").split())
    said = guide.split("The study on condensed runs,", 1)[1].split("## ", 1)[0]
    counts = {}
    for judged_only in (True, False):
        table = irscale.evaluate(
            dl19_data / "qrels.dl19-passage.txt", dl19_data / "runs", ["P@20"], judged_only=judged_only
        )
        study = irscale.compare(
            table,
            ["nDCG", "RBP(p=0.8)", "P"],
            depth=20,
            tests=["ttest"],
            relevance="graded",
            effects=False,
            measure_free=False,
        )
        ch = study.changes
        counts[judged_only] = (ch["sig"].tolist(), ch["sig_ranked"].tolist())
    (jo, jr), (fo, fr) = counts[True], counts[False]
    assert f"{jo[0]}, {jo[1]} and {jo[2]} significant pairs" in said, (counts, said)
    assert f"({fo[0]}, {fo[1]} and {fo[2]} on the full runs)" in said, (counts, said)
    assert f"{jr[0]}, {jr[1]} and {jr[2]} on the ranked scale ({fr[0]}, {fr[1]} and {fr[2]})" in said, (counts, said)
