"""AP exact beyond the split engine's default limit (issue 14): the ``max_pairs`` opt-in
(API and ``irscale rankmap --max-pairs``), its refusal message, the bucket pass that
answers queries (compiled and numpy paths, threads and a Dask LocalCluster) against the
brute-force oracle, and where 64-bit keys end (N = 41). The N = 34/36 builds themselves
are in ``bench/ap_exact.py``."""

import contextlib
import re

import numpy as np
import pytest
from cli_lines import unwrap
from typer.testing import CliRunner

from irscale import kernels
from irscale.cli import app
from irscale.errors import ArgumentError, IrscaleError, MeasureError
from irscale.scales import all_runs, build, engines
from irscale.scales.spaces import space_for

runner = CliRunner()
N = 14  # 16,384 runs: the oracle is the truth


@pytest.fixture
def tiny_limit(monkeypatch):
    """A default limit below AP at N = 14, so that the opt-in is needed."""
    monkeypatch.setattr(engines, "MAX_PAIRS", 2**10)
    return 2**10


@pytest.fixture(scope="module")
def truth():
    """phi of every binary run of length N, by the naive enumeration."""
    g = all_runs(N, 1)
    return g, build("AP", N, engine="oracle", cache=False).phi_runs(g)


def test_default_limit_refuses_and_names_the_opt_in(tiny_limit):
    with pytest.raises(IrscaleError) as e:
        build("AP", N, cache=False)
    msg = str(e.value)
    assert f"more than the {tiny_limit:,}" in msg and "it accepts by default" in msg
    assert f"max_pairs={2**N}" in msg and f"CLI --max-pairs {2**N}, on rankmap, transform and compare" in msg
    with pytest.raises(IrscaleError, match="max_pairs="):  # the engine itself refuses too
        engines.split_engine(space_for("AP", N))


def test_opt_in_builds_what_the_oracle_says(tiny_limit, truth):
    g, phi = truth
    rm = build("AP", N, cache=False, max_pairs=2**N)  # exactly the pairs needed: accepted
    assert rm.engine == "split" and rm.size == phi.max()
    assert np.array_equal(rm.phi_runs(g), phi)
    with pytest.raises(IrscaleError, match=f"more than the {2**N - 1:,} allowed"):
        build("AP", N, cache=False, max_pairs=2**N - 1)


def test_the_refusal_at_n36_names_a_value_that_builds():
    """The real limit: AP at N = 36 (2^36 runs) is refused before anything is built, and
    the number the message names is the one the opt-in needs."""
    with pytest.raises(IrscaleError) as e:
        build("AP", 36, cache=False)
    named = int(re.search(r"max_pairs=(\d+)", str(e.value)).group(1))
    assert named == 2**36 > engines.MAX_PAIRS
    engines.check_split(space_for("AP", 36), max_pairs=named)  # accepted (nothing built here)


@pytest.mark.parametrize("bad", [0, -5, 2.0**36, "2**36", True])
def test_bad_max_pairs_is_refused_whichever_engine(bad):
    with pytest.raises(ArgumentError, match="max_pairs must be"):
        build("P", 10, cache=False, max_pairs=bad)  # P: closed form, the value is checked all the same


@pytest.mark.parametrize("use_numba", [True, False])
def test_bucket_pass_answers_queries_exactly(truth, use_numba):
    """The bucket summary (kept out of memory) with phi of queries answered in the build's
    pass, through the compiled distinct count or numpy; queries repeated, at the extremes
    and in every bucket."""
    if use_numba and engines._distinct_kernel() is None:
        pytest.skip("numba is not installed")
    with contextlib.nullcontext() if use_numba else kernels.disabled("scales.engines.distinct"):
        _check_bucket_pass(truth)


def _check_bucket_pass(truth):
    g, phi = truth
    sp = space_for("AP", N)
    pick = np.r_[0, len(g) - 1, np.random.default_rng(3).integers(0, len(g), 300), 0]
    vs = engines.split_engine(sp, h=7, bucket_pairs=256, keep_in_memory=0, queries=sp.keys(g[pick]))
    assert vs.kind == "buckets" and len(vs.bounds) > 20 and vs.size == phi.max()
    assert int(vs.cum_runs[-1]) == 2**N  # the runs counted from the spans: every run once
    q, answers = vs.answers
    assert np.array_equal(answers, phi[pick][np.unique(sp.keys(g[pick]), return_index=True)[1]])
    lo, hi = int(vs.bounds[3]), int(vs.bounds[4])
    n, ranks, runs = engines._bucket_rank(engines._prepare(sp, 7), lo, hi, [hi + 10, lo - 10], runs=True)
    assert n == vs.cum_distinct[4] - vs.cum_distinct[3]
    assert ranks.tolist() == [n, 0]  # beyond the bucket: all its keys; below it: none
    assert runs == int(vs.cum_runs[4]) - int(vs.cum_runs[3])


@pytest.mark.slow
def test_bucket_pass_on_a_local_dask_cluster_equals_threads(truth):
    """The bucket pass with queries, its halves scattered once to 2 worker processes
    (tests/test_scales.py covers the in-memory table on a cluster)."""
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the test extra")
    g, phi = truth
    sp = space_for("AP", N)
    keys = sp.keys(g[::37])
    threads = engines.split_engine(sp, bucket_pairs=512, keep_in_memory=0, queries=keys)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        many = engines.split_engine(sp, bucket_pairs=512, keep_in_memory=0, queries=keys, scheduler=client)
    assert np.array_equal(many.bounds, threads.bounds) and np.array_equal(many.cum_distinct, threads.cum_distinct)
    assert list(many.cum_runs) == list(threads.cum_runs)
    assert all(np.array_equal(a, b) for a, b in zip(many.answers, threads.answers))
    assert np.array_equal(many.answers[1], phi[::37][np.unique(keys, return_index=True)[1]])


def test_where_64_bit_keys_end_no_opt_in_helps():
    """AP's keys (lcm(1..N) * N * AP) are int64 up to N = 40; at N = 41 every engine
    that adds int64 keys refuses, whatever max_pairs says."""
    assert space_for("AP", 40).int64 and not space_for("AP", 41).int64
    for kw in ({}, {"max_pairs": 2**41, "engine": "split"}):
        with pytest.raises(MeasureError, match="exact keys (reach 63 bits|exceed 64 bits)"):
            build("AP", 41, cache=False, **kw)


def test_cli_rankmap_max_pairs(tiny_limit):
    refused = runner.invoke(app, ["rankmap", "AP", "-N", str(N), "--no-cache"])
    assert refused.exit_code == 2 and f"--max-pairs {2**N}" in unwrap(refused.stderr)
    built = runner.invoke(app, ["rankmap", "AP", "-N", str(N), "--no-cache", "--max-pairs", str(2**N)])
    assert built.exit_code == 0, built.output
    assert "engine    split" in built.stdout
    size = build("AP", N, engine="oracle", cache=False).size
    assert f"size      {size:,} distinct values" in built.stdout
    bad = runner.invoke(app, ["rankmap", "AP", "-N", str(N), "--max-pairs", "0"])
    assert bad.exit_code == 2 and "--max-pairs" in unwrap(bad.stderr)
    assert "--max-pairs" in runner.invoke(app, ["rankmap", "--help"]).stdout


def test_transform_and_compare_take_the_opt_in(tiny_limit, tmp_path, monkeypatch):
    """transform and compare refuse AP beyond the (patched) limit naming max_pairs, and
    serve it with the opt-in: the same ranks as the oracle's map."""
    import irscale
    from irscale.io import Qrels, Run

    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))  # empty: a map another test cached is served

    rng = np.random.default_rng(0)
    q = Qrels.from_records([(t, f"d{k}", int(rng.random() < 0.4)) for t in "12" for k in range(20)])
    runs = [
        Run.from_records(
            [(t, f"d{k}", float(20 - r)) for t in "12" for r, k in enumerate(rng.permutation(20)[:14])], name=f"s{s}"
        )
        for s in range(3)
    ]
    table = irscale.evaluate(q, runs, ["AP"])
    with pytest.raises(IrscaleError, match="max_pairs"):
        irscale.transform(table, ["AP"], depth=14)
    t = irscale.transform(table, ["AP"], depth=14, max_pairs=2**14, cache=False)
    rm = build("AP", 14, 2, engine="oracle", cache=False)
    space = space_for("AP", 14, 1)
    g = space.grade_view(table.judged.grades).reshape(-1, 14)
    assert np.array_equal(t.values[1].reshape(-1), rm.phi_runs(g))
    study = irscale.compare(table, ["AP"], depth=14, tests=["sign"], effects=False, measure_free=False, max_pairs=2**14)
    assert len(study.changes) == 1


def test_a_map_cached_with_the_opt_in_is_served_without_it(tiny_limit, truth, tmp_path, monkeypatch):
    """Built once with max_pairs, the map is in the cache: build and transform's plan
    serve it afterwards without the opt-in (the limit guards building, not loading)."""
    from irscale.experiment import plan_rank_maps

    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))  # empty: other tests' maps not in it
    from irscale.scales.rankmap import in_cache

    space = space_for("AP", N, 1)
    assert not in_cache(space)
    with pytest.raises(IrscaleError, match="max_pairs"):
        plan_rank_maps(["AP"], N, 2)
    build("AP", N, 2, max_pairs=2**N)
    assert in_cache(space)
    g, phi = truth
    assert np.array_equal(build("AP", N, 2).phi_runs(g), phi)
    assert [str(m) for m in plan_rank_maps(["AP"], N, 2)] == [f"AP@{N}"]


@pytest.mark.parametrize("measure, n, levels", [("AP", 16, 2), ("RBP(p=0.8)", 12, 3), ("ERR", 12, 3)])
def test_listed_split_equals_the_oracle_with_and_without_the_compiled_pass(measure, n, levels):
    """The split engine's listed table (keys and runs per key, from the compiled pass over
    each bucket's pairs or numpy's), in many small buckets, equals the brute force."""
    pytest.importorskip("numba")
    sp = space_for(measure, n, levels - 1)
    truth = engines.oracle(sp)
    for ctx in (contextlib.nullcontext(), kernels.disabled("scales.engines.pair_runs")):
        with ctx:
            vs = engines.split_engine(sp, bucket_pairs=4096)
        assert vs.kind == "table"
        assert np.array_equal(vs.keys, truth.keys) and np.array_equal(vs.runs, truth.runs)
