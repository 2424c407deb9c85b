"""The memory budget of the rank-map engines (irscale.scales.budget): estimates made before
anything is allocated, checked against what the engine then takes; the engine choice that
keeps within the budget gives the same phi; refusals in one line; the CLI's --memory."""

from __future__ import annotations

import functools
import re
import tracemalloc

import numpy as np
import pytest
from cli_lines import unwrap
from typer.testing import CliRunner

from irscale import cli
from irscale.errors import IrscaleError
from irscale.scales import budget, space_for
from irscale.scales.engines import dcg_engine, dcg_engine_bytes
from irscale.scales.rankmap import build, pick_engine


@pytest.mark.parametrize(
    "text, size",
    [
        ("4G", 4 * 2**30),
        ("512M", 512 * 2**20),
        ("1.5GiB", 3 * 2**29),
        ("2gb", 2 * 2**30),
        ("4Gi", 4 * 2**30),
        ("2048k", 2**21),
    ],
)
def test_sizes(text, size):
    assert budget.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "abc", "-1G", "0", "0.5", "0.0001K", "77", "1.2.3G", "4X", None])
def test_bad_sizes_are_refused(text):
    with pytest.raises(budget.MemoryBudgetError, match="must be a size of at least 1M, such as 4G"):
        budget.parse_size(text)


def test_the_budget_is_the_environment_else_half_the_available_memory(monkeypatch):
    monkeypatch.setenv(budget.ENV, "3G")
    assert budget.budget() == 3 * 2**30 and "3G" in budget.where()
    monkeypatch.delenv(budget.ENV)
    monkeypatch.setattr(budget, "available", lambda: 10 * 2**30)
    assert budget.budget() == 5 * 2**30 and "half the available memory" in budget.where()
    monkeypatch.setattr(budget, "available", lambda: None)
    assert budget.budget() is None and budget.fits(2**60)


SPACES = [("nDCG", 10, 4), ("nDCG", 11, 4), ("nDCG", 12, 3), ("DCG(base=2)", 12, 3), ("nDCG(base=10)", 16, 4)]


@pytest.mark.parametrize("measure, N, levels", SPACES)
def test_dcg_engine_estimate_is_within_a_quarter_of_its_peak(measure, N, levels):
    """The estimate, made from the space alone, is within 25% of the peak the engine then
    allocates (numpy's buffers as tracemalloc sees them)."""
    space = space_for(measure, N, levels - 1)
    assert space.n_values >= 100_000
    tracemalloc.start()
    try:
        dcg_engine(space)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    estimate = dcg_engine_bytes(space)
    assert 0.75 * peak <= estimate <= 1.25 * peak, (estimate, peak)


@pytest.mark.parametrize(
    "measure, N, levels", [("nDCG", 9, 4), ("DCG(base=2)", 10, 3), ("nDCG(gains=0:0,1:1/2,2:17/10)", 9, 3)]
)
def test_dcg_engine_lists_what_the_space_says(measure, N, levels):
    """The class-by-class construction equals the space's own class-sum matrix: keys by
    its encode, runs by its runs_behind, values by its key_values."""
    space = space_for(measure, N, levels - 1)
    table = dcg_engine(space)
    tot = space.attainable_totals()
    np.testing.assert_array_equal(table.keys, space.encode(tot))
    np.testing.assert_array_equal(table.runs, space.runs_behind(tot))
    values = space.key_values(table.keys)
    assert (np.diff(values[table.value_order]) >= -1e-12 * np.abs(values).max()).all()


def test_a_small_budget_takes_the_count_engine_with_the_same_phi(monkeypatch):
    space = space_for("nDCG", 10, 3)
    assert pick_engine(space) == "dcg"
    keys = space.keys(np.random.default_rng(1).integers(0, 4, size=(300, 10)))
    listed = build("nDCG", 10, 4, cache=False)
    monkeypatch.setenv(budget.ENV, "5M")  # the dcg engine needs about 19 MiB here
    assert pick_engine(space) == "count"
    counted = build("nDCG", 10, 4, cache=False)
    assert counted.engine == "count"
    for ties in ("unq", "min", "mid"):
        np.testing.assert_array_equal(counted.rank(keys, ties)[ties], listed.rank(keys, ties)[ties])
    with pytest.raises(IrscaleError) as e:
        build("nDCG", 10, 4, cache=False, engine="dcg")
    said = str(e.value)
    assert "the dcg engine needs about 19" in said and "the budget is 5 MiB" in said and "engine='count'" in said


def test_the_count_engine_refuses_halves_beyond_the_budget(monkeypatch):
    monkeypatch.setenv(budget.ENV, "1M")
    with pytest.raises(IrscaleError, match=r"the count engine needs about .* the budget is 1 MiB"):
        build("RBP(p=0.8)", 24, 3, cache=False)


def test_cli_memory_option(tmp_path, monkeypatch):
    monkeypatch.delenv(budget.ENV, raising=False)
    run = CliRunner().invoke
    res = run(cli.app, ["rankmap", "nDCG", "-N", "10", "--levels", "4", "--memory", "5M", "--no-cache"])
    assert res.exit_code == 0 and "count" in res.output, res.output
    res = run(
        cli.app, ["rankmap", "nDCG", "-N", "10", "--levels", "4", "--memory", "5M", "--engine", "dcg", "--no-cache"]
    )
    assert res.exit_code == 2 and "the budget is 5 MiB (--memory" in res.output
    assert budget.ENV not in __import__("os").environ  # the command's budget ends with the command
    res = run(cli.app, ["rankmap", "AP", "-N", "10", "--memory", "lots"])
    assert res.exit_code == 2 and "--memory must be a size of at least 1M, such as 4G" in res.output


def test_a_budget_refusal_is_never_a_reason_to_approximate(monkeypatch, tmp_path):
    """With approx=, a measure no engine fits within the budget is refused, naming the
    budget: not served by bounds instead (its result would change with the free memory)."""
    import irscale

    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    table = irscale.evaluate(*_toy(), ["P@1"])
    monkeypatch.setenv(budget.ENV, "1M")
    with pytest.raises(budget.MemoryBudgetError, match="the count engine needs about .* the budget is 1 MiB"):
        irscale.transform(table, ["RBP(p=0.8)"], depth=24, approx=1e-3)
    monkeypatch.setenv(budget.ENV, "lots")
    with pytest.raises(budget.MemoryBudgetError, match="IRSCALE_MEMORY must be a size"):
        irscale.transform(table, ["nDCG"], depth=10, approx=1e-3)


def _toy():
    from pathlib import Path

    import irscale

    toy = Path(irscale.__file__).parent / "examples" / "toy"
    return toy / "qrels.txt", toy / "runs"


def test_a_cached_map_serves_whichever_engine_the_budget_picks(monkeypatch, tmp_path):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    assert build("nDCG", 10, 4).engine == "dcg"
    monkeypatch.setenv(budget.ENV, "5M")
    assert build("nDCG", 10, 4).engine == "dcg"  # from the cache, not built again by the count engine


def test_the_dcg_engine_is_kept_where_the_count_engine_cannot_serve(monkeypatch):
    """Where the dcg engine does not fit and the count engine cannot serve the space either,
    the refusal names the dcg engine's estimate and the budget (not the count engine's limit)."""
    space = space_for("DCG(base=50)", 61, 2)
    monkeypatch.setenv(budget.ENV, "1G")
    assert dcg_engine_bytes(space) > 2**30 and pick_engine(space) == "dcg"
    with pytest.raises(budget.MemoryBudgetError, match="the dcg engine needs about .* the budget is 1 GiB"):
        build("DCG(base=50)", 61, 3, cache=False)


COUNT_SPACES = [
    ("RBP(p=0.8)", 22, 3),
    ("RBP(p=0.9,rel=1)", 40, 2),
    ("nDCG", 20, 3),
    ("nDCG", 22, 3),
    ("nDCG", 20, 4),
    ("DCG(base=2)", 24, 3),
]


@pytest.mark.parametrize("measure, N, levels", COUNT_SPACES)
def test_count_engine_estimate_is_within_a_quarter_of_its_peak(measure, N, levels):
    """The count engine's estimate, from the sizes of its halves, is within 25% of what it
    allocates building them and answering queries (its compiled merge warmed first)."""
    from irscale.scales.counting import count_engine_bytes, counter_for

    warm = counter_for(space_for("RBP(p=0.8)", 8, 2))
    warm.phi(space_for("RBP(p=0.8)", 8, 2).keys(np.zeros((1, 8), dtype=np.int64)))
    space = space_for(measure, N, levels - 1)
    keys = space.keys(np.random.default_rng(0).integers(0, levels, size=(32, N)))
    tracemalloc.start()
    try:
        counter = counter_for(space)
        counter.phi(keys)
        counter.runs_le(keys)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    estimate = count_engine_bytes(space)
    assert 0.75 * peak <= estimate <= 1.25 * peak, (estimate, peak)


def test_rankmap_shows_its_estimate_and_serves_a_cached_count_map(monkeypatch, tmp_path):
    """`irscale rankmap` prints the engine's memory estimate and the budget; a count-engine
    map loaded from the cache (which lists no values) is shown, not a traceback (it was:
    the loaded value set had no `listed`)."""
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    for _ in range(2):  # built, then from the cache
        res = CliRunner().invoke(cli.app, ["rankmap", "RBP(p=0.8)", "-N", "20", "--levels", "3"])
        assert res.exit_code == 0, res.output
        assert (
            "engine    count" in res.output
            and "memory    about 2.25 MiB to build (estimate); budget 4 GiB" in res.output
        )
    assert "from the cache" in res.output and "answers phi without listing the values" in res.output


def test_transform_and_compare_name_the_large_rank_maps_before_reading_the_runs(monkeypatch, tmp_path):
    """The plan's memory line: the rank maps estimated at 64 MiB or more, their engine and
    the budget, said before any run is read (transform, compare, study trec8-like, the
    last for all its depths in one line); nothing for small maps."""
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("irscale.parallel.os.cpu_count", lambda: 2)  # the split engine's estimate counts workers
    qrels, runs = _toy()
    bad = tmp_path / "bad-run.txt"
    bad.write_text("101 Q0 d 1 1.0 r\n101 Q0 e 2 x r\n")
    res = CliRunner().invoke(cli.app, ["transform", str(qrels), str(bad), "-m", "nDCG", "-N", "14"])
    assert "rank maps: nDCG@14 about 142 MiB (dcg engine); memory budget 4 GiB" in res.output
    assert res.exit_code == 2 and "bad-run.txt:2" in res.output  # the run is read (and refused) after the plan
    res = CliRunner().invoke(cli.app, ["compare", str(qrels), str(bad), "-m", "nDCG", "-N", "14"])
    assert "rank maps: nDCG@14 about 142 MiB (dcg engine)" in res.output and res.exit_code == 2
    res = CliRunner().invoke(cli.app, ["study", "trec8-like", str(qrels), str(bad), "--depths", "10,14"])
    line = (
        "rank maps: RBP(p=0.8)@14 about 166 MiB (split engine), DCG(base=2)@14 about 76.3 MiB (dcg engine), "
        "nDCG(base=2)@14 about 76.3 MiB (dcg engine); "
    )
    # one message for every depth, in lines of at most 160 characters
    assert line + "memory budget 4 GiB" in unwrap(res.stderr) and res.exit_code == 2
    res = CliRunner().invoke(cli.app, ["transform", str(qrels), str(runs), "-m", "AP", "-N", "5"])
    assert res.exit_code == 0 and "rank maps:" not in res.output.replace("rank maps (cached", "")


# -- the split and enumerate engines -----------------------------------------------------------


def _traced_peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def one_worker(monkeypatch):
    """One worker for the engines (and their estimates): the traced peak then does not
    depend on whether two workers' peaks happen to meet."""
    monkeypatch.setattr("irscale.parallel.os.cpu_count", lambda: 1)


@functools.cache
def _warm_listing_kernels() -> None:
    """The compiled kernels loaded before a peak is traced (their first use allocates apart from the data)."""
    from irscale.scales.engines import enumerate_engine, split_engine

    split_engine(space_for("AP", 14, 1))
    split_engine(space_for("AP", 16, 1), bucket_pairs=4096, keep_in_memory=0)  # streamed: its own kernels
    enumerate_engine(space_for("AP", 8, 1))


@pytest.mark.slow
@pytest.mark.parametrize(
    "measure, N, levels",
    [("RBP(p=0.8)", 10, 4), ("RBP(p=0.8)", 11, 4), ("ERR", 9, 4), ("ERR", 8, 5), ("RBP(p=0.8)", 8, 4)],
)
def test_enumerate_engine_estimate_is_within_a_quarter_of_its_peak(measure, N, levels, one_worker):
    """Where every run has its own value (graded RBP and ERR), the enumerate engine's
    estimate, made from the space alone, is within 25% of the peak it then allocates
    (one chunk, and four chunks in turn, on one worker)."""
    from irscale.scales.engines import enumerate_engine, enumerate_engine_bytes

    _warm_listing_kernels()
    space = space_for(measure, N, levels - 1)
    estimate = enumerate_engine_bytes(space)
    table = []
    peak = _traced_peak(lambda: table.append(enumerate_engine(space)))
    assert table[0].size >= 0.9 * space.n_runs  # (nearly) every run its own value
    assert 0.75 * peak <= estimate <= 1.25 * peak, (estimate, peak)


@pytest.mark.slow
@pytest.mark.parametrize(
    "measure, N, levels, engine",
    [
        ("RBP(p=0.8)", 13, 3, "split"),  # keys listed: one bucket
        ("RBP(p=0.8)", 14, 3, "split"),  # two buckets, one per worker
        ("ERR", 13, 3, "split"),
        ("ERR", 14, 3, "split"),
        ("AP", 22, 2, "split"),  # one bucket
        ("AP", 24, 2, "split"),  # four buckets; runs share values: about 0.56 distinct keys per pair
        ("AP", 26, 2, "streamed"),  # counted bucket by bucket (Buckets)
        ("ERR", 16, 3, "streamed"),
    ],
)
def test_split_engine_estimate_is_within_a_quarter_of_its_peak(measure, N, levels, engine, one_worker):
    """The split engine's estimate (its halves prepared, the rest sized from them) is
    within 25% of the peak it then allocates, where it lists every key (graded RBP and
    ERR, whose runs have their own values, and binary AP, whose runs share values: its
    distinct keys estimated from a sample of pairs) and where it streams the buckets."""
    from irscale.scales import engines

    _warm_listing_kernels()
    space = space_for(measure, N, levels - 1)
    estimate = engines.split_engine_bytes(space)
    built = []
    peak = _traced_peak(lambda: built.append(engines.split_engine(space)))
    assert isinstance(built[0], engines.Buckets) == (engine == "streamed")
    assert 0.75 * peak <= estimate <= 1.25 * peak, (estimate, peak)


@pytest.mark.slow
@pytest.mark.parametrize("measure, N, levels", [("AP", 11, 2), ("RBP(p=0.8)", 11, 4)])
def test_enumerate_estimates_bound_the_peak(measure, N, levels, monkeypatch):
    """The enumerate engine counts one key per run: binary AP's runs share values, so
    its estimate bounds the peak from above, within 2.5x; and with two workers, whose
    peaks may or may not meet, it bounds the peak too."""
    from irscale.scales import engines

    monkeypatch.setattr("irscale.parallel.os.cpu_count", lambda: 2)
    _warm_listing_kernels()
    space = space_for(measure, N, levels - 1)
    estimate = engines.enumerate_engine_bytes(space)
    peak = _traced_peak(lambda: engines.enumerate_engine(space))
    assert peak <= estimate <= 2.5 * peak, (estimate, peak)


@pytest.mark.parametrize("measure, levels", [("AP", 2), ("RBP(p=0.8)", 4), ("ERR", 4)])
def test_each_space_says_what_its_keys_allocate(measure, levels):
    """``key_bytes_per_rank``, which the enumerate engine's estimate reads, is within 25%
    of what the space's ``keys`` allocates per run and rank (2^16 runs, N = 10)."""
    from irscale.scales.spaces import all_runs

    space = space_for(measure, 10, levels - 1)
    runs = all_runs(10, space.c, 0, 2**16)
    per = _traced_peak(lambda: space.keys(runs)) / (len(runs) * 10)
    assert 0.75 * per <= space.key_bytes_per_rank <= 1.25 * per, (type(space).__name__, per)


def test_the_split_engine_streams_where_listing_would_pass_the_budget(monkeypatch):
    """A budget too small for every key listed: the split engine counts its buckets
    instead (a Buckets summary), with the same phi and run counts."""
    from irscale.scales import engines

    space = space_for("RBP(p=0.8)", 14, 2)
    keys = space.keys(np.random.default_rng(1).integers(0, 3, size=(200, 14)))
    listed = engines.split_engine(space)
    assert isinstance(listed, engines.Table)
    monkeypatch.setenv(budget.ENV, "100M")  # the listing needs about 165 MiB, the buckets about 70
    streamed = engines.split_engine(space)
    assert isinstance(streamed, engines.Buckets)
    assert np.array_equal(listed.phi(keys), streamed.phi(keys))
    assert np.array_equal(listed.runs_le(keys), streamed.runs_le(keys))
    assert engines.split_engine_bytes(space) < 100 * 2**20


def test_split_and_enumerate_beyond_the_budget_are_refused_in_one_line(monkeypatch):
    """Over the budget the two engines are refused before they build, naming the estimate
    and the budget (the enumerate engine of RBP on 6 levels at N = 11 would keep one key
    per run: about 22 GiB)."""
    from irscale.scales.budget import MemoryBudgetError
    from irscale.scales.engines import check_enumerate

    monkeypatch.setenv(budget.ENV, "4G")
    with pytest.raises(MemoryBudgetError, match=r"enumerate engine .* needs about 21.6 GiB .* budget is 4 GiB"):
        check_enumerate(space_for("RBP(p=0.8)", 11, 5))
    assert pick_engine(space_for("RBP(p=0.8)", 11, 5)) == "split"  # what serves it instead
    monkeypatch.setenv(budget.ENV, "20M")
    with pytest.raises(MemoryBudgetError, match=r"the split engine needs about .* MiB .* budget is 20 MiB"):
        build("AP", 26, 2, cache=False)


def test_splittable_spaces_below_n12_split_where_listing_every_run_would_not_fit(monkeypatch):
    """Below N = 12 the enumerate engine lists every run; where that would pass the budget
    the split engine serves instead, with the same phi (and exact_reach is not cut short)."""
    from irscale.measures import parse_measure
    from irscale.scales.rankmap import exact_reach

    space = space_for("RBP(p=0.8)", 9, 3)
    keys = space.keys(np.random.default_rng(2).integers(0, 4, size=(300, 9)))
    assert pick_engine(space) == "enumerate"
    listed = build("RBP(p=0.8)", 9, 4, cache=False)
    monkeypatch.setenv(budget.ENV, "20M")  # enumerate: about 45 MiB; split: a few
    assert pick_engine(space) == "split"
    split = build("RBP(p=0.8)", 9, 4, cache=False)
    assert split.engine == "split" and np.array_equal(listed.phi_keys(keys), split.phi_keys(keys))
    assert exact_reach(parse_measure("RBP(p=0.8)"), 3, 13) == 12


def test_a_users_measure_with_few_values_is_not_refused_for_its_run_count(monkeypatch):
    """A user's measure (no space of its own: its keys from its float values) with few
    values enumerates 2^22 runs under a budget that one key per run would pass; where
    its keys do pass the budget, the build stops with the keys listed so far."""
    from irscale.measures import Measure
    from irscale.scales.budget import MemoryBudgetError
    from irscale.scales.engines import enumerate_engine, enumerate_engine_bytes

    class Hits(Measure):  # relevant documents in the run: N + 1 values
        name = "Hits"

        def batch(self, grades, topics):
            return (np.asarray(grades) > 0).sum(axis=-1).astype(np.float64)

    space = space_for(Hits(), 22, 1)
    monkeypatch.setenv(budget.ENV, "100M")
    assert enumerate_engine_bytes(space, chunk=2**14) > 200 * 2**20  # one key per run would not fit ...
    assert enumerate_engine(space, chunk=2**14).size == 23  # ... but the 23 values do

    class Decayed(Measure):  # grades weighted by 0.8^rank: (nearly) every run its own value
        name = "Decayed"
        graded = True

        def batch(self, grades, topics):
            g = np.asarray(grades, dtype=np.float64)
            return (g * 0.8 ** np.arange(g.shape[-1])).sum(axis=-1)

    monkeypatch.setenv(budget.ENV, "40M")
    with pytest.raises(MemoryBudgetError, match="keys kept so far"):
        enumerate_engine(space_for(Decayed(), 11, 3), chunk=2**14)


@pytest.mark.slow
def test_the_plan_names_a_split_map_allowed_by_max_pairs(monkeypatch, tmp_path):
    """With --max-pairs, the plan's memory line names the split engine's map it allows
    (binary AP at N = 36: 2^36 pairs, beyond the default limit), before any run is read."""
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    qrels, _ = _toy()
    bad = tmp_path / "bad-run.txt"
    bad.write_text("101 Q0 d 1 1.0 r\n101 Q0 e 2 x r\n")
    args = ["transform", str(qrels), str(bad), "-m", "AP", "-N", "36", "--max-pairs", str(2**36)]
    res = CliRunner().invoke(cli.app, args)
    assert re.search(r"rank maps: AP@36 about \d+ MiB \(split engine\)", res.output), res.output
    assert res.exit_code == 2 and "bad-run.txt:2" in res.output


def test_a_cached_map_below_n12_serves_whichever_of_split_and_enumerate_the_budget_picks(monkeypatch, tmp_path):
    """Below N = 12 the budget picks between the enumerate and the split engines; a map
    either built is served from the cache whichever is picked (both give the same phi)."""
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    first = build("RBP(p=0.8)", 9, 4)
    assert first.engine == "enumerate" and not first.from_cache
    monkeypatch.setenv(budget.ENV, "20M")  # the split engine is picked now
    again = build("RBP(p=0.8)", 9, 4)
    assert again.from_cache and again.engine == "enumerate"


def test_an_enumeration_its_estimate_admits_is_never_stopped_by_its_guard(monkeypatch):
    """The guard over the kept keys uses the up-front estimate's form: a built-in space
    whose estimate fits the budget (RBP@10 on 4 levels, every run its own value, under a
    budget just above it) is built to the end, not refused after listing every run."""
    from irscale.scales.engines import enumerate_engine_bytes

    space = space_for("RBP(p=0.8)", 10, 3)
    monkeypatch.setenv(budget.ENV, str(enumerate_engine_bytes(space) + 2**20))
    assert pick_engine(space) == "enumerate"
    assert build("RBP(p=0.8)", 10, 4, cache=False).size == 4**10
