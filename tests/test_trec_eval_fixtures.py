"""Agreement with trec_eval 10's own expected outputs (../shared/data/trec_eval_test).

Provenance: the out.* files were produced by trec_eval (commit f4253652) with the
commands in ../shared/data/README.md, e.g. ``trec_eval -m all_trec -q qrels.test
results.test > out.test.aq``. Values are printed with 4 decimals; every irscale value of
a measure irscale implements must print identically.
"""

import numpy as np
import pytest

import irscale
from irscale.measures import from_trec_eval


def parse_out(path):
    """{(measure, qid): value string} from trec_eval output."""
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        out[(name, qid)] = value
    return out


CORE = {
    "map",
    "P_10",
    "recall_1000",
    "ndcg",
    "ndcg_cut_10",
    "Rprec",
    "bpref",
    "recip_rank",
    "map_cut_10",
    "set_F",
    "success_10",
    "num_rel_ret",
}


def compare(expected, table):
    """Check every (measure, qid) of ``expected`` that irscale implements; return the
    set of (measure, qid) pairs checked."""
    checked = set()
    by_name = {m.trec_eval_name: i for i, m in enumerate(table.measures)}
    for (name, qid), value in expected.items():
        if name not in by_name:
            continue
        i = by_name[name]
        row = table.values[i, 0]
        if qid == "all":
            v = np.nansum(row) if name in ("num_ret", "num_rel", "num_rel_ret") else np.nanmean(row)
        else:
            v = row[table.topics.index(qid)]
        got = f"{int(round(v))}" if name.startswith("num_") else f"{v:.4f}"
        assert got == value, f"{name} {qid}: irscale {got}, trec_eval {value}"
        checked.add((name, qid))
    return checked


def measures_in(expected, rel=None):
    names = sorted({n for n, _ in expected})
    ms = []
    for n in names:
        m = from_trec_eval(n)
        if m is None:
            continue
        if rel is not None and m.params().get("rel") == 1:  # binary measures; trec_eval's ndcg ignores -l
            m = type(m)(**{**m.params(), "rel": rel})
        ms.append(m)
    return ms


@pytest.mark.parametrize(
    "out_name, results, kwargs",
    [
        ("out.test", "results.test", {}),
        ("out.test.a", "results.test", {}),
        ("out.test.aq", "results.test", {}),
    ],
)
def test_full_results(te_test, out_name, results, kwargs):
    expected = parse_out(te_test / out_name)
    ms = measures_in(expected)
    table = irscale.evaluate(te_test / "qrels.test", [te_test / results], ms, **kwargs)
    checked = compare(expected, table)
    names = {n for n, _ in checked}
    summary_only = {"map", "P_10", "Rprec", "bpref", "recip_rank", "num_rel_ret"}
    assert (summary_only if out_name == "out.test" else CORE) <= names
    if out_name == "out.test.aq":
        assert {q for _, q in checked} == {"301", "302", "303", "all"}
        assert len(checked) > 190


def test_truncated_results_with_c(te_test):
    """out.test.aqc: ``-c`` on a run lacking topics, with junk after the tag (ignored)."""
    expected = parse_out(te_test / "out.test.aqc")
    ms = measures_in(expected)
    with pytest.warns(irscale.errors.IrscaleWarning, match="no results for 1 qrels topic"):
        table = irscale.evaluate(
            te_test / "qrels.test", [te_test / "results.trunc"], ms, extra_fields="ignore", missing_topics="zero"
        )
    checked = compare(expected, table)
    assert CORE <= {n for n, _ in checked} and len(checked) > 190


def test_relevance_level_2(te_test):
    """out.test.aql: graded qrels with grade -1, relevance level 2 (``-l2``)."""
    expected = parse_out(te_test / "out.test.aql")
    ms = measures_in(expected, rel=2)
    table = irscale.evaluate(te_test / "qrels.rel_level", [te_test / "results.test"], ms)
    checked = compare(expected, table)
    assert CORE <= {n for n, _ in checked} and len(checked) > 190
