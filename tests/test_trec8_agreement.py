"""Agreement with pytrec-eval-terrier (trec_eval 9.x inside) on all 129 TREC-8 runs x 50
topics, to 1e-9. pytrec_eval stores scores as float32, so irscale reads the runs with
``score_precision="float32"`` here (see docs/guide.md)."""

import gzip

import numpy as np
import pytest

import irscale

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")

MEASURES = {
    "map": "AP",
    "P_5": "P@5",
    "P_10": "P@10",
    "P_30": "P@30",
    "recall_100": "R@100",
    "recall_1000": "R@1000",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "bpref",
    "ndcg_cut_10": "nDCG@10",
    "ndcg_cut_30": "nDCG@30",
}


@pytest.mark.slow
def test_all_trec8_runs_match_pytrec_eval(trec8):
    qrels = {}
    for line in (trec8 / "qrels.trec8.txt").read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    files = sorted((trec8 / "runs").glob("*.gz"))
    assert len(files) == 129
    table = irscale.evaluate(trec8 / "qrels.trec8.txt", files, list(MEASURES.values()), score_precision="float32")
    assert len(table.topics) == 50
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P", "recall", "recip_rank", "Rprec", "bpref", "ndcg_cut"})
    worst = 0.0
    for s, f in enumerate(files):
        run = {}
        with gzip.open(f, "rt") as fh:
            for line in fh:
                q, _, d, _, score, _ = line.split()
                run.setdefault(q, {})[d] = float(score)
        res = ev.evaluate(run)
        ref = np.array([[res.get(t, {}).get(te, 0.0) for t in table.topics] for te in MEASURES])
        got = table.values[[table.index(m) for m in MEASURES.values()], s]
        worst = max(worst, float(np.abs(ref - got).max()))
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9, err_msg=f.name)
    assert worst < 1e-9


@pytest.mark.slow
def test_float64_ordering_differs_only_on_float32_ties(trec8):
    """Scores that differ only beyond float32 precision tie in float32 and are reordered by
    docno. Measured with irscale 0.1.0 (full rankings, all depths): 132 run-topic pairs of
    TREC-8 order differently. SPEC section 2 quotes 158; the difference is unexplained
    (see the issue note) but the float32 order is the one pytrec_eval agrees with to 1e-9
    (test above), and the float64 order is trec_eval 10's."""
    files = sorted((trec8 / "runs").glob("*.gz"))
    changed = 0
    for f in files:
        a = irscale.read_run(f)
        b = irscale.read_run(f, score_precision="float32")
        for t in range(len(a.topics)):
            lo, hi = a.offsets[t], a.offsets[t + 1]
            if not np.array_equal(a.docno[lo:hi], b.docno[lo:hi]):
                changed += 1
    assert changed == 132
