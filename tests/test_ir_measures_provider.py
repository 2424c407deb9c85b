"""The ir_measures provider "irscale" (irscale.integrations.ir_measures): what it declares,
and ir_measures' own test suite run with it registered.

The peer suite is ir_measures' source distribution for the installed version, downloaded at
test time (``pip download --no-binary :all: --no-deps``) into a cache under the temporary
directory, never copied into this repository. Its ``tests/test_measures.py`` compares every
registered provider with every other on every measure both support, to 4 places;
``tests/test_providers.py`` checks empty and partial qrels and runs through
``ir_measures.DefaultPipeline``, where the irscale provider is put first. A plugin
injected into that run counts the comparisons that involve irscale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

ir_measures = pytest.importorskip("ir_measures")
import pandas as pd  # noqa: E402

from irscale.integrations import ir_measures as I  # noqa: E402

# Peers left out of the peer suite's run, with the reason: a provider that fails the suite on
# its own (never irscale)
LEFT_OUT: dict[str, str] = {}
if int(pd.__version__.split(".")[0]) >= 3:
    LEFT_OUT["ranx"] = (
        "ranx asserts that the query ids of its DataFrames have dtype object, which pandas 3 no "
        "longer gives strings: under pandas 3 the ranx provider fails test_measures on its own"
    )
# the peers test_providers.py calls by name, installed (no dependencies resolved) into the cache
# when the environment lacks them, with the modules they import
PEER_PACKAGES = {
    "cwl_eval": ["cwl-eval"],
    "trectools": ["trectools", "sarge", "scikit-learn", "joblib", "threadpoolctl"],
}

PLUGIN = """
import json, os, unittest
import ir_measures
from irscale.integrations.ir_measures import PROVIDER, use_in_default_pipeline

use_in_default_pipeline(first=True)
for name in filter(None, os.environ["IRSCALE_PEER_LEFT_OUT"].split(",")):
    ir_measures.providers.registry.pop(name, None)
COUNTS = {"comparisons": 0, "irscale": 0, "measures": []}
_subtest = unittest.TestCase.subTest


def subTest(self, *args, **params):
    if "p1" in params:
        COUNTS["comparisons"] += 1
        if PROVIDER in (params["p1"], params["p2"]):
            COUNTS["irscale"] += 1
            COUNTS["measures"].append(str(params["measure"]))
    return _subtest(self, *args, **params)


unittest.TestCase.subTest = subTest


def pytest_sessionfinish(session, exitstatus):
    COUNTS["providers"] = sorted(ir_measures.providers.registry)
    COUNTS["pipeline_first"] = ir_measures.DefaultPipeline.providers[0].NAME
    with open(os.environ["IRSCALE_PEER_COUNTS"], "w") as f:
        json.dump(COUNTS, f)
"""


def _cache() -> Path:
    d = Path(tempfile.gettempdir()) / "irscale-test-cache" / f"ir_measures-{ir_measures.__version__}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _pip(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=timeout)


def _peer_tests(cache: Path) -> Path:
    """ir_measures' tests/ for the installed version, from its source distribution."""
    tests = cache / "tests"
    if (tests / "test_measures.py").exists():
        return tests
    version = ir_measures.__version__
    got = _pip("download", "--no-binary", ":all:", "--no-deps", f"ir-measures=={version}", "-d", str(cache))
    sdists = sorted(cache.glob("ir*measures-*.tar.gz"))
    if got.returncode or not sdists:
        pytest.skip(f"could not download ir_measures {version}'s source distribution: {got.stderr.strip()[-300:]}")
    with tarfile.open(sdists[-1]) as tar:
        members = [m for m in tar.getmembers() if "/tests/" in m.name and m.isfile()]
        for m in members:
            m.name = "tests/" + m.name.split("/tests/", 1)[1]
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.11.4
        tar.extractall(cache, members=members, **safe)
    return tests


def _peers(cache: Path) -> Path | None:
    """A folder with the peer providers test_providers.py names that this environment lacks
    (None if it has them all)."""
    missing = [name for name in PEER_PACKAGES if not ir_measures.providers.registry[name].is_available()]
    if not missing:
        return None
    site = cache / "peers"
    packages = [p for name in missing for p in PEER_PACKAGES[name]]
    got = _pip("install", "--quiet", "--no-deps", "--target", str(site), *packages)
    if got.returncode:
        pytest.skip(
            f"could not install the peers {', '.join(missing)} that test_providers.py calls: {got.stderr[-300:]}"
        )
    return site


def test_declares_from_irscale_classes():
    """Each declared parameter is an irscale field, a translated one, or pinned at
    ir_measures' default; the declined measures are not declared."""
    p = I.PROVIDER
    assert ir_measures.providers.registry["irscale"] is p
    assert {m.NAME for m in p.SUPPORTED_MEASURES} == set(I.PEER_MEASURES)
    assert str(I.translate(ir_measures.nDCG(dcg="exp-log2") @ 10)) == "nDCG(gains=exp)@10"
    assert str(I.translate(ir_measures.NumRet(rel=2))) == "NumRelRet(rel=2)"
    assert str(I.translate(ir_measures.SetP(rel=2))) == "P(rel=2)"
    assert p.supports(ir_measures.RBP(rel=1)) and not p.supports(ir_measures.RBP)
    for declined in (ir_measures.ERR @ 5, ir_measures.Judged @ 5):
        assert not p.supports(declined)
    assert p.supports(ir_measures.P(judged_only=True) @ 5)  # trec_eval -J
    assert not p.supports(ir_measures.nDCG(dcg="exp-log2", gains={0: 0, 1: 1}))
    assert not p.supports(ir_measures.nDCG(gains={0: 0, 1: 3, 2: 1}))  # irscale's gain maps are monotone
    from irscale.errors import ArgumentError

    with pytest.raises(ArgumentError, match="gdeval"):
        I.translate(ir_measures.ERR @ 5)
    with pytest.raises(ArgumentError, match="give rel="):
        I.translate(ir_measures.RBP(p=0.5))
    assert str(I.translate(ir_measures.AP(judged_only=True))) == "AP"
    assert I.judged_only(ir_measures.AP(judged_only=True)) and not I.judged_only(ir_measures.AP)


def test_judged_only_is_pytrec_evals_flag(dl19_data):
    """judged_only=True: per topic, what ir_measures' pytrec_eval provider gives with
    judged_docs_only_flag (float32 scores, as pytrec_eval stores them), beside the same
    measures on the full runs in one evaluator."""
    pytest.importorskip("pytrec_eval")
    dl19 = dl19_data
    qrels = list(ir_measures.read_trec_qrels(str(dl19 / "qrels.dl19-passage.txt")))
    J = dict(judged_only=True)
    ms = [
        ir_measures.AP(**J),
        ir_measures.AP(**J) @ 10,
        ir_measures.nDCG(**J) @ 10,
        ir_measures.nDCG(**J),
        ir_measures.P(**J) @ 10,
        ir_measures.R(**J) @ 100,
        ir_measures.RR(**J),
        ir_measures.Rprec(**J),
        ir_measures.SetP(**J),
        ir_measures.SetF(**J),
        ir_measures.Success(**J) @ 5,
        ir_measures.AP,
        ir_measures.nDCG @ 10,
    ]
    mine_p = I.IrscaleProvider(score_precision="float32")
    compared = 0
    for f in sorted((dl19 / "runs").iterdir())[:6]:
        run = list(ir_measures.read_trec_run(str(f)))
        ref = {(m.query_id, m.measure): m.value for m in ir_measures.pytrec_eval.iter_calc(ms, qrels, run)}
        got = {(m.query_id, m.measure): m.value for m in mine_p.iter_calc(ms, qrels, run)}
        assert got.keys() == ref.keys(), f.name
        for k, v in ref.items():
            assert got[k] == pytest.approx(v, abs=1e-9), (f.name, k)
        compared += len(ref)
        differ = [q for q, m in got if m == ir_measures.AP and got[q, m] != got[q, ir_measures.AP(**J)]]
        assert differ, f"{f.name}: judged_only changed no topic's AP (the test would not see it ignored)"
    assert compared > 6 * 43 * len(ms) // 2


def test_pipeline_placement():
    pipeline = ir_measures.DefaultPipeline.providers
    before = list(pipeline)
    try:
        assert I.use_in_default_pipeline(first=True) is I.PROVIDER and pipeline[0] is I.PROVIDER
        I.use_in_default_pipeline()
        assert pipeline[-1] is I.PROVIDER and pipeline.count(I.PROVIDER) == 1
    finally:
        pipeline[:] = before


def test_a_gain_map_a_grade_it_leaves_out_would_break_is_declined():
    """gains={0: 0, 1: 1, 2: 5}: a grade 3 in the qrels gains 3 < 5, which irscale refuses;
    declared unsupported, the pipeline computes it with another provider instead of failing."""
    broken = ir_measures.parse_measure("nDCG(gains={0:0,1:1,2:5})")
    assert not I.PROVIDER.supports(broken)
    assert I.PROVIDER.supports(ir_measures.parse_measure("nDCG(gains={0:0,1:1,2:3})"))
    pipeline = ir_measures.DefaultPipeline.providers
    before = list(pipeline)
    try:
        I.use_in_default_pipeline(first=True)
        qrels = {"1": {"a": 1, "b": 0, "c": 3}}
        run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
        assert ir_measures.calc_aggregate([broken], qrels, run)[broken] > 0
    finally:
        pipeline[:] = before


def test_values_equal_irscale_evaluate():
    """Per topic, the provider's values are irscale.evaluate's, and pytrec_eval's to 1e-12."""
    import irscale

    toy = Path(irscale.__file__).parent / "examples" / "toy"
    qrels_path, run_paths = toy / "qrels.txt", [toy / "runs" / "bm25.txt", toy / "runs" / "neural-rerank.txt"]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    measures = [ir_measures.AP, ir_measures.P(rel=2) @ 5, ir_measures.nDCG @ 10, ir_measures.Bpref, ir_measures.RR]
    for path in run_paths:
        run = list(ir_measures.read_trec_run(str(path)))
        got = {(m.query_id, str(m.measure)): m.value for m in I.PROVIDER.iter_calc(measures, qrels, run)}
        ref = {(m.query_id, str(m.measure)): m.value for m in ir_measures.pytrec_eval.iter_calc(measures, qrels, run)}
        own = irscale.evaluate(str(qrels_path), [str(path)], [I.translate(m) for m in measures])
        assert got.keys() == ref.keys()
        for (q, name), v in got.items():
            assert v == pytest.approx(ref[q, name], abs=1e-12)
        for i, m in enumerate(measures):
            for t, topic in enumerate(own.topics):
                if (topic, str(m)) in got:
                    assert got[topic, str(m)] == own.values[i, 0, t]


@pytest.mark.slow
def test_peer_suite_passes_with_irscale(tmp_path):
    cache = _cache()
    tests = _peer_tests(cache)
    site = _peers(cache)
    (tests / "conftest.py").write_text(PLUGIN)
    counts = tmp_path / "counts.json"
    import irscale

    path = [str(Path(irscale.__file__).resolve().parents[1])] + ([str(site)] if site else [])
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(path + [os.environ.get("PYTHONPATH", "")]),
        IRSCALE_PEER_LEFT_OUT=",".join(LEFT_OUT),
        IRSCALE_PEER_COUNTS=str(counts),
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tests)]
        + [str(tests / "test_measures.py"), str(tests / "test_providers.py")],
        cwd=tests,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout.splitlines()[-1] and "failed" not in run.stdout.splitlines()[-1]
    c = json.loads(counts.read_text())
    assert "irscale" in c["providers"] and c["pipeline_first"] == "irscale"
    assert c["irscale"] > 0, c
    if ir_measures.__version__ == "0.4.3" and list(LEFT_OUT) == ["ranx"]:  # the run the guide quotes
        assert c["irscale"] >= 87, c  # a provider that declined most measures would still pass > 0
    print(
        f"peer suite: {run.stdout.splitlines()[-1]}; {c['irscale']} of {c['comparisons']} comparisons involve irscale"
    )


def test_a_topic_without_relevant_documents_is_scored_silently_as_the_peers_do():
    import warnings

    qrels = {"1": {"a": 1, "b": 0}, "2": {"x": 0}}
    run = {"1": {"a": 3.0, "b": 2.0}, "2": {"x": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = {m.query_id: m.value for m in I.PROVIDER.evaluator([ir_measures.AP], qrels).iter_calc(run)}
        assert values == {"1": 1.0, "2": 0.0}
        assert ir_measures.calc_aggregate([I.irscale_measure("AP")], qrels, run)[I.irscale_measure("AP")] == 0.5
