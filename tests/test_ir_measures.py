"""irscale's measures inside ir_measures (``irscale.integrations.ir_measures``) and a
ScoreTable as ir_measures-style records (``irscale.report.records``).

References: irscale's own ``evaluate``/``transform`` (the integration must give its
values to the bit), and ir_measures 0.4.3's pytrec_eval provider (pytrec-eval-terrier,
trec_eval's C code) as the outside oracle for the records of AP, nDCG@10, P@10 and RR,
with ``score_precision="float32"`` since pytrec_eval orders documents by float32 scores.
"""

from __future__ import annotations

import math
import warnings

import pytest

ir_measures = pytest.importorskip("ir_measures")

from conftest import DATA, need  # noqa: E402

import irscale  # noqa: E402
from irscale.errors import ArgumentError, IrscaleError, IrscaleWarning  # noqa: E402
from irscale.integrations.ir_measures import irscale_measure, ranked  # noqa: E402
from irscale.io import Qrels, Run  # noqa: E402
from irscale.report.records import Metric, aggregate, records  # noqa: E402

PLAIN = ["AP", "nDCG@10", "P@10", "RR"]
TREC8_RUNS = ("input.CL99SD.gz", "input.READWARE.gz")
DL19_RUNS = ("input.bm25base_p.gz", "input.idst_bert_p1.gz")

# a toy collection: topic 2 graded, topic 3 not retrieved, topic 9 not judged
QRELS = {"1": {"a": 1, "b": 0, "c": 1}, "2": {"d": 2, "e": 1}, "3": {"f": 1}}
RUN = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"e": 5.0, "x": 4.0, "d": 1.0}, "9": {"z": 1.0}}


def irscale_inputs(qrels: dict, runs: dict[str, dict]):
    q = Qrels.from_records([(t, d, g) for t, ds in qrels.items() for d, g in ds.items()])
    rs = [
        Run.from_records([(t, d, s) for t, ds in run.items() for d, s in ds.items()], name=name)
        for name, run in runs.items()
    ]
    return q, rs


def quiet_evaluate(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)  # missing and unjudged topics: expected here
        return irscale.evaluate(*args, **kw)


def per_query(measure, qrels, run) -> dict[str, float]:
    out = {}
    for m in ir_measures.iter_calc([measure], qrels, run):
        assert m.query_id not in out
        out[m.query_id] = m.value
    return out


# -- item 4 on a toy collection ----------------------------------------------------------------


def test_toy_plain_measures_are_irscales_own():
    q, (r,) = irscale_inputs(QRELS, {"r": RUN})
    table = quiet_evaluate(q, [r], PLAIN + ["nDCG@3"])
    for k, name in enumerate(PLAIN + ["nDCG@3"]):
        got = per_query(irscale_measure(name), QRELS, RUN)
        assert got == dict(zip(table.topics, table.values[k, 0].tolist()))  # to the bit
    ap = (1 / 1 + 2 / 3) / 2  # topic 1: a c relevant at 1 and 3; topic 2: e d at 1 and 3
    assert per_query(irscale_measure("AP"), QRELS, RUN) == {"1": ap, "2": ap, "3": 0.0}


def test_toy_ranked_measures_are_irscales_own():
    q, (r,) = irscale_inputs(QRELS, {"r": RUN})
    table = quiet_evaluate(q, [r], ["AP"])
    for name, rel, ties, norm in [
        ("AP", "lenient", "unq", False),
        ("nDCG", "graded", "mid", True),
        ("RBP(p=0.5)", "graded", "unq", False),
    ]:
        t = irscale.transform(table, [name], depth=3, relevance=rel, ties=ties, normalize=norm)
        want = dict(zip(t.topics, t.values[1, 0].tolist()))
        got = per_query(ranked(name, N=3, relevance=rel, ties=ties, normalize=norm), QRELS, RUN)
        assert got == want, name
    # RB*AP of a b c = 5/3 is the 6th of 0, 1/3, 1/2, 1, 7/6, 5/3, 2, 3; topic 3, not
    # retrieved, is the empty run: rank 1, not ir_measures' default 0
    assert per_query(ranked("AP", N=3, relevance="lenient"), QRELS, RUN) == {"1": 6.0, "2": 6.0, "3": 1.0}


def test_toy_levels_come_from_the_qrels_unless_given():
    binary = {t: {d: min(g, 1) for d, g in ds.items()} for t, ds in QRELS.items()}
    nDCG3 = ranked("nDCG", N=3)  # 3 levels on QRELS (grades 0..2), 2 on binary qrels
    assert per_query(nDCG3, binary, RUN) == per_query(ranked("nDCG", N=3, levels=2), binary, RUN)
    three = per_query(ranked("nDCG", N=3, levels=3), binary, RUN)  # the graded space, asked for
    assert three != per_query(nDCG3, binary, RUN)
    q, (r,) = irscale_inputs(binary, {"r": RUN})
    t = irscale.transform(quiet_evaluate(q, [r], ["AP"], max_grade=2), ["nDCG"], depth=3, relevance="graded")
    assert three == dict(zip(t.topics, t.values[1, 0].tolist()))


def test_toy_inputs_in_any_form_ir_measures_takes():
    qrels_nt = [ir_measures.Qrel(t, d, g) for t, ds in QRELS.items() for d, g in ds.items()]
    run_nt = [ir_measures.ScoredDoc(t, d, s) for t, ds in RUN.items() for d, s in ds.items()]
    import pandas as pd

    m = irscale_measure("nDCG@3")
    want = per_query(m, QRELS, RUN)
    assert per_query(m, qrels_nt, run_nt) == want
    assert per_query(m, pd.DataFrame(qrels_nt), pd.DataFrame(run_nt)) == want
    ev = ir_measures.evaluator([m, irscale_measure("AP")], QRELS)  # one evaluator, several runs
    assert ev.calc_aggregate(RUN)[m] == pytest.approx(sum(want.values()) / 3, abs=1e-15)
    ndcg = 1 / (1 + 1 / math.log2(3))  # topic 1: c at rank 1 of an ideal a c
    assert ev.calc_aggregate({"1": {"c": 1.0}})[m] == pytest.approx(ndcg / 3, abs=1e-15)


def test_toy_same_values_without_the_in_memory_converters(monkeypatch):
    """Without irscale.io.memory the frames go through text (Qrels/Run.from_records)."""
    from irscale.integrations import ir_measures as integration

    ms = [irscale_measure("nDCG@3"), ranked("AP", N=3, relevance="lenient")]
    want = {m: per_query(m, QRELS, RUN) for m in ms}
    monkeypatch.setattr(integration, "_memory", lambda: None)
    integration._LAST.clear()
    assert {m: per_query(m, QRELS, RUN) for m in ms} == want


def test_toy_run_with_no_qrels_topic_scores_the_default():
    assert per_query(irscale_measure("AP"), QRELS, {"9": {"z": 1.0}}) == {"1": 0.0, "2": 0.0, "3": 0.0}


def test_names_are_distinct_and_canonical():
    assert str(irscale_measure("ndcg@10")) == "irscale(nDCG@10)"
    assert str(irscale_measure("AP", score_precision="float32")) == "irscale(AP, score_precision=float32)"
    assert (
        str(ranked("AP", N=30, levels=2, relevance="lenient", ties="mid", normalize=True))
        == "irscale(ranked(AP@30, ties=mid, normalized), relevance=lenient, levels=2)"
    )
    assert irscale_measure("AP") == irscale_measure("AP") and irscale_measure("AP") != ir_measures.AP
    res = ir_measures.calc_aggregate([ir_measures.AP, irscale_measure("AP")], QRELS, RUN)
    assert len(res) == 2 and res[ir_measures.AP] == pytest.approx(res[irscale_measure("AP")], abs=1e-12)


def test_bad_arguments_fail_when_the_measure_is_made():
    with pytest.raises(IrscaleError, match="cutoff 10"):
        ranked("AP@10", N=30)
    with pytest.raises(ArgumentError, match="levels=3"):
        ranked("AP", N=30, levels=3, relevance="lenient")
    with pytest.raises(IrscaleError, match="did you mean 'lenient'"):
        ranked("AP", relevance="lenent")
    with pytest.raises(IrscaleError, match="unknown measure|did you mean"):
        irscale_measure("APP")
    with pytest.raises(IrscaleError, match="no ranked version"):
        ranked("Rprec", N=10)
    with pytest.raises(AssertionError, match="unsupported params"):  # the cutoff is irscale's: AP@10
        ir_measures.calc_aggregate([irscale_measure("AP") @ 10], QRELS, RUN)


# -- item 3: records and aggregate -------------------------------------------------------------


def test_records_and_aggregate_of_one_system():
    q, (r,) = irscale_inputs(QRELS, {"r": RUN})
    table = quiet_evaluate(q, [r], ["AP", "P@2"])
    recs = records(table)
    ap = (1 / 1 + 2 / 3) / 2
    assert recs[:2] == [Metric("1", "AP", ap), Metric("1", "P@2", 0.5)]
    assert [(m.query_id, m.measure) for m in recs] == [(t, m) for t in "123" for m in ("AP", "P@2")]
    assert all(type(m.value) is float for m in recs)
    assert aggregate(table) == table.mean().iloc[0].to_dict()
    assert aggregate(table) == pytest.approx({"AP": 2 * ap / 3, "P@2": 1 / 3}, abs=1e-15)
    for m, (qid, measure, value) in zip(recs, recs):  # unpacks like ir_measures.Metric
        assert (m.query_id, m.measure, m.value) == (qid, measure, value)


def test_records_of_several_systems_need_system():
    other = {"1": {"c": 1.0}, "2": {"d": 1.0}}
    q, rs = irscale_inputs(QRELS, {"r": RUN, "s": other})
    table = quiet_evaluate(q, rs, ["RR"])
    with pytest.raises(ArgumentError, match="2 systems.*system="):
        records(table)
    with pytest.raises(ArgumentError, match="system=NAME"):
        aggregate(table)
    with pytest.raises(ArgumentError, match="no system 't'.*'r', 's'"):
        records(table, system="t")
    assert records(table, system="s") == [Metric("1", "RR", 1.0), Metric("2", "RR", 1.0), Metric("3", "RR", 0.0)]
    assert aggregate(table, "s") == {"RR": 2 / 3}
    assert aggregate(table, "r") == table.mean().loc["r"].to_dict()


def test_records_leave_out_dropped_topics_and_carry_ranked_columns():
    q, (r,) = irscale_inputs(QRELS, {"r": RUN})
    table = quiet_evaluate(q, [r], ["AP"], missing_topics="drop")
    assert [m.query_id for m in records(table)] == ["1", "2"]
    ap = (1 / 1 + 2 / 3) / 2
    assert aggregate(table) == {"AP": ap}  # the mean of the two topics left
    t = irscale.transform(table, ["AP"], depth=3, relevance="lenient")
    assert records(t)[:2] == [Metric("1", "AP@3", ap), Metric("1", "ranked(AP@3)", 6.0)]
    assert aggregate(t) == t.mean().iloc[0].to_dict()


# -- real data: TREC-8 and TREC DL 2019 passages -----------------------------------------------


@pytest.fixture(scope="module")
def trec8_data():
    root = need(DATA / "trec8")
    qrels = list(ir_measures.read_trec_qrels(str(root / "qrels.trec8.txt")))
    runs = {name: list(ir_measures.read_trec_run(str(root / "runs" / name))) for name in TREC8_RUNS}
    return root, qrels, runs


@pytest.fixture(scope="module")
def dl19_data():
    root = need(DATA / "dl19")
    qrels = list(ir_measures.read_trec_qrels(str(root / "qrels.dl19-passage.txt")))
    runs = {name: list(ir_measures.read_trec_run(str(root / "runs" / name))) for name in DL19_RUNS}
    return root, qrels, runs


def check_against_table(measures, table, cols, qrels, runs: dict):
    """Per query to the bit, and the means to 1e-12 (ir_measures adds topics one by one,
    ``table.mean()`` pairwise)."""
    for s, name in enumerate(runs):
        res = ir_measures.calc_aggregate(measures, qrels, runs[name])
        for m, k in zip(measures, cols):
            assert res[m] == pytest.approx(table.mean().iloc[s, k], rel=1e-12, abs=1e-12), (name, m)
            assert per_query(m, qrels, runs[name]) == dict(zip(table.topics, table.values[k, s].tolist())), (name, m)


@pytest.mark.slow
def test_trec8_plain_measures(trec8_data):
    root, qrels, runs = trec8_data
    table = quiet_evaluate(root / "qrels.trec8.txt", [root / "runs" / n for n in runs], PLAIN)
    check_against_table([irscale_measure(m) for m in PLAIN], table, range(len(PLAIN)), qrels, runs)


@pytest.mark.slow  # builds the rank map of AP@30 on 2 levels (about 30 s on 2 cores)
def test_trec8_ranked_ap30_binary(trec8_data):
    root, qrels, runs = trec8_data
    table = quiet_evaluate(root / "qrels.trec8.txt", [root / "runs" / n for n in runs], ["AP"])
    t = irscale.transform(table, ["AP"], depth=30, relevance="lenient")
    assert str(t.measures[1]) == "ranked(AP@30)"
    check_against_table([ranked("AP", N=30, relevance="lenient")], t, [1], qrels, runs)


def test_trec8_records_match_pytrec_eval(trec8_data):
    """records() of irscale's table against ir_measures' own measures (pytrec_eval)."""
    root, qrels, runs = trec8_data
    name = TREC8_RUNS[0]
    table = quiet_evaluate(root / "qrels.trec8.txt", [root / "runs" / name], PLAIN, score_precision="float32")
    theirs = {m: ir_measures.parse_measure(m) for m in PLAIN}
    ref = {
        (x.query_id, str(x.measure)): x.value for x in ir_measures.iter_calc(list(theirs.values()), qrels, runs[name])
    }
    recs = records(table)
    assert len(recs) == len(ref) == 50 * len(PLAIN)
    for q, m, v in recs:
        assert v == pytest.approx(ref[q, str(theirs[m])], abs=1e-9), (q, m)
    agg = aggregate(table)
    theirs_agg = ir_measures.calc_aggregate(list(theirs.values()), qrels, runs[name])
    for m in PLAIN:
        assert agg[m] == table.mean().iloc[0][m]
        assert agg[m] == pytest.approx(theirs_agg[theirs[m]], abs=1e-9), m


def test_dl19_ranked_ndcg10_four_levels(dl19_data):
    root, qrels, runs = dl19_data
    table = quiet_evaluate(root / "qrels.dl19-passage.txt", [root / "runs" / n for n in runs], ["nDCG@10"])
    assert table.judged.topics.max_grade == 3
    t = irscale.transform(table, ["nDCG"], depth=10, relevance="graded")
    assert t.provenance["transform"]["maps"]["nDCG@10"]["levels"] == 4
    check_against_table([ranked("nDCG@10", N=10), ranked("nDCG", N=10, levels=4)], t, [1, 1], qrels, runs)
    check_against_table([irscale_measure("nDCG@10")], table, [0], qrels, runs)


def test_dl19_records_match_pytrec_eval(dl19_data):
    root, qrels, runs = dl19_data
    name = DL19_RUNS[0]
    table = quiet_evaluate(
        root / "qrels.dl19-passage.txt", [root / "runs" / name], ["nDCG@10"], score_precision="float32"
    )
    ref = per_query(ir_measures.nDCG @ 10, qrels, runs[name])
    got = {q: v for q, _, v in records(table)}
    assert got.keys() == ref.keys() and len(got) == 43
    assert max(abs(got[q] - ref[q]) for q in ref) <= 1e-9
    assert not any(math.isnan(v) for v in got.values())


@pytest.mark.slow
def test_pyterrier_experiment_reports_irscale_measures(dl19_data):
    """pt.Experiment (PyTerrier evaluates through ir_measures) takes irscale's measures,
    ranked ones included, beside its own; its means equal irscale's. Result frames need
    no Java."""
    pt = pytest.importorskip("pyterrier", reason="PyTerrier is not installed (pip install pyterrier)")
    import pandas as pd

    root, qrels, runs = dl19_data
    qrels_frame = pd.DataFrame([(q.query_id, q.doc_id, q.relevance) for q in qrels], columns=["qid", "docno", "label"])
    frames = [
        pd.DataFrame([(d.query_id, d.doc_id, d.score) for d in runs[n]], columns=["qid", "docno", "score"])
        for n in runs
    ]
    topics = pd.DataFrame({"qid": sorted(qrels_frame.qid.unique()), "query": "unused"})
    measures = [irscale_measure("nDCG@10"), ranked("nDCG", N=10), irscale_measure("AP"), ir_measures.nDCG @ 10]
    res = pt.Experiment(frames, topics, qrels_frame, eval_metrics=measures, names=list(runs))
    table = quiet_evaluate(root / "qrels.dl19-passage.txt", [root / "runs" / n for n in runs], ["nDCG@10", "AP"])
    t = irscale.transform(table, ["nDCG"], depth=10, relevance="graded")
    for s in range(len(runs)):
        row = res.iloc[s]
        assert row["irscale(nDCG@10)"] == pytest.approx(table.mean().iloc[s]["nDCG@10"], rel=1e-12)
        assert row["irscale(AP)"] == pytest.approx(table.mean().iloc[s]["AP"], rel=1e-12)
        assert row["irscale(ranked(nDCG@10))"] == pytest.approx(t.mean().iloc[s]["ranked(nDCG@10)"], rel=1e-12)
        assert row["nDCG@10"] == pytest.approx(row["irscale(nDCG@10)"], abs=1e-9)  # pytrec_eval's, float32 scores


def test_ranked_measure_beyond_the_kept_depth():
    # evaluate keeps 100 ranks by default; a ranked measure at N = 200 keeps what it needs
    qrels = [ir_measures.Qrel("1", f"d{i}", int(i % 3 == 0)) for i in range(300)]
    run = [ir_measures.ScoredDoc("1", f"d{i}", 300.0 - i) for i in range(300)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        res = ir_measures.calc_aggregate([ranked("P", N=200)], qrels, run)
    assert list(res.values()) == [68.0]  # 67 relevant in the top 200: phi = 67 + 1
