"""Judged only (trec_eval -J, pytrec_eval's judged_docs_only_flag): condensed runs.

Per topic, irscale's scores of condensed runs equal pytrec_eval's with
``judged_docs_only_flag=True`` on TREC DL 2019 (every run) and TREC-8 (every run, slow) for
every measure both have; the condensing itself is checked against a list oracle, and the
CLI's ``-J`` against the API."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale.data import PAD, UNJUDGED, condense
from irscale.errors import ArgumentError, IrscaleError
from irscale.io import Qrels, Run
from irscale.loading import ReadOptions, load_runs

# pytrec_eval's name -> irscale's: every trec_eval measure irscale computes
BOTH = {
    "map": "AP",
    "map_cut_10": "AP@10",
    "map_cut_100": "AP@100",
    "P_10": "P@10",
    "P_100": "P@100",
    "set_P": "P",
    "recall_100": "R@100",
    "set_recall": "R",
    "set_F": "F",
    "success_10": "Success@10",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "bpref",
    "ndcg": "nDCG",
    "ndcg_cut_10": "nDCG@10",
    "ndcg_cut_100": "nDCG@100",
}
FAMILIES = {"map", "map_cut", "P", "set_P", "recall", "set_recall", "set_F", "success", "num_ret", "num_rel"}
FAMILIES |= {"num_rel_ret", "recip_rank", "Rprec", "bpref", "ndcg", "ndcg_cut"}  # pytrec_eval's names of BOTH


def _oracle(row: list[int]) -> list[int]:
    return [g for g in row if g >= 0]  # judged 0 or above kept, in order (form_res_rels.c)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([0, 1, 2, 3, -1, int(UNJUDGED)]), min_size=0, max_size=9), min_size=1, max_size=5)
)
def test_condense_is_the_judged_documents_in_order(rows):
    D = max([len(r) for r in rows] + [1])
    g = np.full((len(rows), D), PAD, dtype=np.int16)
    for i, r in enumerate(rows):
        g[i, : len(r)] = r
    out = condense(g)
    want = [_oracle(r) for r in rows]
    assert out.shape == (len(rows), max([len(w) for w in want] + [1]))
    for i, w in enumerate(want):
        assert out[i, : len(w)].tolist() == w
        assert (out[i, len(w) :] == PAD).all()


def _toy():
    q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("1", "n", -1), ("2", "x", 1)])
    r = Run.from_records(
        [("1", "z", 9.0), ("1", "a", 3.0), ("1", "n", 2.8), ("1", "y", 2.5), ("1", "b", 2.0), ("1", "c", 1.0)]
        + [("2", "u", 1.0)],  # topic 2: only unjudged documents
        name="r",
    )
    return q, r


def test_condensed_scores_and_topics():
    q, r = _toy()
    full = irscale.evaluate(q, [r], ["AP", "P@2", "NumRet", "RR", "bpref"])
    cond = irscale.evaluate(q, [r], ["AP", "P@2", "NumRet", "RR", "bpref"], judged_only=True)
    # topic 1 condensed: a b c (z, y unjudged and n judged -1 removed): AP (1 + 2/3) / 2, P@2 1/2, RR 1
    assert cond.values[:, 0, 0].tolist() == pytest.approx([5 / 6, 0.5, 3.0, 1.0, 0.5])
    assert full.values[:, 0, 0].tolist() == pytest.approx([(1 / 2 + 2 / 6) / 2, 0.5, 6.0, 0.5, 0.5])
    # topic 2: retrieved, every document unjudged: present (not a missing topic), scored 0
    assert cond.values[:, 0, 1].tolist() == [0.0] * 5
    assert cond.judged.missing == {"r": []} and cond.judged.judged_only and not full.judged.judged_only
    assert cond.provenance["judged_only"] is True and "judged_only" not in full.provenance
    dropped = irscale.evaluate(q, [r], ["AP"], judged_only=True, missing_topics="drop")
    assert dropped.values[0, 0].tolist() == pytest.approx([5 / 6, 0.0])  # topic 2 counts in the mean


def test_depth_cuts_before_condensing():
    """trec_eval cuts at -M before it removes unjudged documents: depth=3 keeps z a n, of
    which only a is judged 0 or above."""
    q, r = _toy()
    t = irscale.evaluate(q, [r], ["NumRet", "P@5"], depth=3, judged_only=True)
    assert t.values[:, 0, 0].tolist() == pytest.approx([1.0, 0.2])


def test_transform_and_compare_take_the_condensed_runs():
    q, r = _toy()
    s = Run.from_records([("1", "b", 3.0), ("1", "q", 2.0), ("1", "a", 1.0), ("2", "x", 1.0)], name="s")
    t = irscale.evaluate(q, [r, s], ["P"], judged_only=True)
    ranked = irscale.transform(t, ["P"], depth=2)
    # condensed: r = a b (P@2 = 1/2), s = b a (1/2); full runs cut at 2 would give r z a (1/2), s b q (0)
    assert ranked.values[0, :, 0].tolist() == [0.5, 0.5]
    assert ranked.provenance["judged_only"] is True


def test_read_options_and_refusals():
    assert ReadOptions(judged_only=True).judged_only
    with pytest.raises(IrscaleError, match="judged_only"):
        ReadOptions(judged_only="yes")  # type: ignore[arg-type]
    q, r = _toy()
    judged = load_runs([r], q)
    with pytest.raises(ArgumentError, match="judged_only"):
        irscale.evaluate(q, judged, ["AP"], judged_only=True)  # already judged: read the runs with it instead
    assert load_runs([r], q, judged_only=True).judged_only


def _pytrec_runs(files):
    for f in files:
        run: dict = {}
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rt") as fh:
            for line in fh:
                qid, _, d, _, score, _ = line.split()
                run.setdefault(qid, {})[d] = float(score)
        yield f, run


def _agree(qrels_path, files):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")
    qrels: dict = {}
    for line in qrels_path.read_text().splitlines():
        qid, _, d, g = line.split()
        qrels.setdefault(qid, {})[d] = int(g)
    table = irscale.evaluate(qrels_path, files, list(BOTH.values()), score_precision="float32", judged_only=True)
    full = irscale.evaluate(qrels_path, files, ["AP"], score_precision="float32")
    ev = pytrec_eval.RelevanceEvaluator(qrels, FAMILIES, judged_docs_only_flag=True)
    rows = [table.index(m) for m in BOTH.values()]
    changed = 0
    for s, (f, run) in enumerate(_pytrec_runs(files)):
        res = ev.evaluate(run)
        ref = np.array([[res.get(t, {}).get(te, 0.0) for t in table.topics] for te in BOTH])
        np.testing.assert_allclose(table.values[rows, s], ref, rtol=0, atol=1e-12, err_msg=f.name)
        changed += int((full.values[0, s] != table.values[table.index("AP"), s]).sum())
    return changed


def test_dl19_every_run_every_measure_matches_pytrec_eval(dl19_data):
    files = sorted((dl19_data / "runs").iterdir())
    assert len(files) == 37
    assert _agree(dl19_data / "qrels.dl19-passage.txt", files) > 100  # -J changes AP on many (run, topic) pairs


@pytest.mark.slow
def test_trec8_every_run_every_measure_matches_pytrec_eval(trec8):
    files = sorted((trec8 / "runs").glob("*.gz"))
    assert len(files) == 129
    assert _agree(trec8 / "qrels.trec8.txt", files) > 1000


def test_cli_judged_only_is_the_apis(dl19_data, tmp_path):
    qrels = dl19_data / "qrels.dl19-passage.txt"
    files = sorted((dl19_data / "runs").iterdir())[:3]
    args = [sys.executable, "-m", "irscale", "evaluate", str(qrels), *map(str, files), "-m", "AP", "-m", "nDCG@10"]
    out = subprocess.run([*args, "-J", "--format", "json", "--per-topic"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert doc["provenance"]["judged_only"] is True
    rows = doc["scores"]
    api = irscale.evaluate(qrels, files, ["AP", "nDCG@10"], judged_only=True)
    frame = api.to_frame()
    want = {(r.system, r.topic, r.measure): r.value for r in frame.itertuples()}
    got = {(r["system"], r["topic"], r["measure"]): r["value"] for r in rows if r.get("topic") not in (None, "all")}
    assert got and all(got[k] == pytest.approx(v, abs=1e-12) for k, v in want.items() if k in got)
    assert len(got) == len(want)
    plain = subprocess.run([*args, "--format", "json", "--per-topic"], capture_output=True, text=True, check=True)
    assert plain.stdout != out.stdout
    for verb in ("evaluate", "transform", "compare"):
        shown = subprocess.run(
            [sys.executable, "-m", "irscale", verb, "--help"],
            capture_output=True,
            text=True,
            check=True,
            env={"COLUMNS": "200", "PATH": ""},
        ).stdout
        assert "--judged-only" in shown and "-J" in shown, verb


def test_grades_below_0_are_removed_like_pytrec_eval(dl19_data, tmp_path):
    """Judgements below 0 (trec_eval: in the pool, unjudged) leave the condensed run too:
    DL 2019's qrels with every 5th judgement of grade 0 rewritten as -1, against
    pytrec_eval's judged_docs_only_flag on 6 runs."""
    lines = (dl19_data / "qrels.dl19-passage.txt").read_text().splitlines()
    out = []
    for k, line in enumerate(lines):
        q, it, d, g = line.split()
        out.append(f"{q} {it} {d} {-1 if g == '0' and k % 5 == 0 else g}")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("\n".join(out) + "\n")
    files = sorted((dl19_data / "runs").iterdir())[:6]
    _agree(qrels, files)
    full = irscale.evaluate(qrels, files, ["NumRet"], judged_only=True).values
    plain = irscale.evaluate(dl19_data / "qrels.dl19-passage.txt", files, ["NumRet"], judged_only=True).values
    assert (full <= plain).all() and (full < plain).any()  # the -1 documents are gone


def test_cli_transform_and_compare_on_condensed_runs(dl19_data, tmp_path):
    qrels = dl19_data / "qrels.dl19-passage.txt"
    files = sorted((dl19_data / "runs").iterdir())[:5]
    base = [sys.executable, "-m", "irscale"]
    out = subprocess.run(
        [*base, "transform", str(qrels), *map(str, files), "-m", "P", "-N", "30", "-J", "-f", "json", "-q"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["provenance"]["judged_only"] is True
    api = irscale.transform(irscale.evaluate(qrels, files, ["P@30"], judged_only=True), ["P"], depth=30)
    want = {(r.system, r.topic, r.measure): r.value for r in api.to_frame().itertuples()}
    got = {(r["system"], r["topic"], r["measure"]): r["value"] for r in doc["scores"] if r.get("topic") != "all"}
    assert got.keys() == want.keys() and all(got[k] == pytest.approx(v, abs=1e-12) for k, v in want.items())
    study = tmp_path / "study"
    subprocess.run(
        [*base, "compare", str(qrels), *map(str, files), "-m", "P", "-N", "30", "-t", "sign", "--no-figures"]
        + ["--no-effects", "--no-measure-free", "-J", "--out", str(study)],
        capture_output=True,
        text=True,
        check=True,
    )
    first = (study / "report_N30.md").read_text(encoding="utf-8").splitlines()[2]
    assert "condensed runs: unjudged documents removed before the cut at N" in first
    assert "judged_only: true" in (study / "provenance_N30.yaml").read_text(encoding="utf-8")
    scores = (study / "scores_N30.csv").read_text(encoding="utf-8").splitlines()
    header = scores[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in scores[1:]]
    frame = api.to_frame()
    p30 = {(r.system, r.topic): r.value for r in frame[frame.measure == "P@30"].itertuples()}
    assert rows and all(float(r["value"]) == pytest.approx(p30[r["system"], r["topic"]]) for r in rows)
