"""PyTerrier's ``pt.Experiment`` (which evaluates through ir_measures) with irscale's
measures, plain and ranked, and with ir_measures' own measures computed by the irscale
provider; a baseline and Holm's correction. Its means, per-query values, win/loss counts,
p-values and corrected p-values equal irscale's own (``irscale.evaluate``,
``irscale.transform``, ``irscale.stats.t_test``, ``irscale.effects.correct``). Needs no
Java: the runs are DataFrames (TREC DL 2019 passage runs, grades 0-3)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pt = pytest.importorskip("pyterrier", reason="PyTerrier is not installed (pip install pyterrier)")
ir_measures = pytest.importorskip("ir_measures")

from conftest import DATA, need  # noqa: E402

import irscale  # noqa: E402
from irscale.effects import correct  # noqa: E402
from irscale.errors import IrscaleWarning  # noqa: E402
from irscale.integrations.ir_measures import (  # noqa: E402
    IrscaleEvaluator,
    irscale_measure,
    ranked,
    use_in_default_pipeline,
)
from irscale.stats import t_test  # noqa: E402

RUNS = ("input.bm25base_p.gz", "input.idst_bert_p1.gz", "input.TUA1-1.gz")


@pytest.fixture
def irscale_first():
    """The irscale provider first in ir_measures' DefaultPipeline for one test."""
    providers = ir_measures.DefaultPipeline.providers
    before = list(providers)
    use_in_default_pipeline(first=True)
    yield
    providers[:] = before


def frames(root):
    import pandas as pd

    qrels = pd.read_csv(
        root / "qrels.dl19-passage.txt",
        sep=r"\s+",
        header=None,
        names=["qid", "iteration", "docno", "label"],
        dtype={"qid": str, "docno": str},
    )[["qid", "docno", "label"]]
    runs = [
        pd.read_csv(
            root / "runs" / n,
            sep=r"\s+",
            header=None,
            names=["qid", "Q0", "docno", "rank", "score", "tag"],
            dtype={"qid": str, "docno": str},
        )[["qid", "docno", "score"]]
        for n in RUNS
    ]
    topics = pd.DataFrame({"qid": sorted(qrels.qid.unique()), "query": "unused"})
    return qrels, runs, topics


@pytest.mark.slow
def test_experiment_equals_irscale(irscale_first):
    root = need(DATA / "dl19")
    qrels, runs, topics = frames(root)
    rnDCG = ranked("nDCG", N=10)  # 4 levels: the qrels' grades 0-3
    measures = [
        irscale_measure("nDCG@10"),
        rnDCG,
        irscale_measure("AP(rel=2)"),
        ir_measures.nDCG @ 10,
        ir_measures.RR(rel=2),
    ]
    kw = dict(eval_metrics=measures, names=list(RUNS))
    # ir_measures' own nDCG@10 and RR(rel=2) go to the irscale provider, first in the pipeline
    assert isinstance(ir_measures.evaluator(measures[3:], []), IrscaleEvaluator)
    res = pt.Experiment(runs, topics, qrels, baseline=0, correction="holm", **kw)
    perq = pt.Experiment(runs, topics, qrels, perquery=True, **kw)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        table = irscale.evaluate(
            root / "qrels.dl19-passage.txt", [root / "runs" / n for n in RUNS], ["nDCG@10", "AP(rel=2)", "RR(rel=2)"]
        )
    t = irscale.transform(table, ["nDCG"], depth=10, relevance="graded")
    assert t.provenance["transform"]["maps"]["nDCG@10"]["levels"] == 4
    own = {  # the Experiment's column -> irscale's per-topic values, (topics, systems)
        "irscale(nDCG@10)": table.values[0].T,
        "irscale(ranked(nDCG@10))": t.values[[str(m) for m in t.measures].index("ranked(nDCG@10)")].T,
        "irscale(AP(rel=2))": table.values[1].T,
        "nDCG@10": table.values[0].T,  # ir_measures' nDCG@10, computed by the irscale provider
        "RR(rel=2)": table.values[2].T,
    }
    assert set(own) == {str(m) for m in measures} and len(table.topics) == 43

    for col, X in own.items():
        # per query, to the bit
        for s, name in enumerate(RUNS):
            got = perq[(perq["name"] == name) & (perq["measure"] == col)].set_index("qid")["value"]
            assert got.to_dict() == dict(zip(table.topics, X[:, s].tolist())), (col, name)
        # means (PyTerrier and irscale sum the topics in other orders)
        assert res[col].tolist() == pytest.approx(X.mean(axis=0).tolist(), rel=1e-12, abs=1e-12), col
        # against the baseline: wins, losses, paired t test, Holm over the two comparisons
        p = np.array([t_test(X[:, [0, s]]).pvalue[0] for s in (1, 2)])
        adjusted, reject = correct(p, "holm")
        assert res[f"{col} +"].tolist()[1:] == [(X[:, s] > X[:, 0]).sum() for s in (1, 2)], col
        assert res[f"{col} -"].tolist()[1:] == [(X[:, s] < X[:, 0]).sum() for s in (1, 2)], col
        assert res[f"{col} p-value"].tolist()[1:] == pytest.approx(p.tolist(), rel=1e-9), col
        assert res[f"{col} p-value corrected"].tolist()[1:] == pytest.approx(adjusted.tolist(), rel=1e-9), col
        assert res[f"{col} reject"].tolist()[1:] == reject.tolist(), col
