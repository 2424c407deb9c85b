"""Runs of any length through transform and compare (``approx=TOL``): bounded ranked
columns hold the midpoint of certified bounds and a half-width column, and contain the
exact normalised phi; measures with neither an engine nor bounds are refused with the
limit and the reason; compare reports the half-widths and flags decisions that could
flip, and :func:`irscale.stats.could_flip` is sound against exact scores drawn inside the
bounds (and not vacuous)."""

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from typer.testing import CliRunner

import irscale
from irscale import stats as st
from irscale.cli import app
from irscale.errors import IrscaleError, IrscaleWarning, MeasureError
from irscale.io import Qrels, Run

runner = CliRunner()


def _records(n_sys=5, n_top=6, depth=40, seed=0):
    """Synthetic qrels and runs as records: each run ranks `depth` documents, about a third
    relevant (binary)."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {}
    for t in range(n_top):
        rel = rng.random(2 * depth) < 0.35
        qrels += [(str(t), f"d{t}-{k}", int(r)) for k, r in enumerate(rel)]
    for s in range(n_sys):
        recs = []
        for t in range(n_top):
            docs = rng.permutation(2 * depth)[:depth]
            recs += [(str(t), f"d{t}-{k}", float(depth - r)) for r, k in enumerate(docs)]
        runs[f"s{s}"] = recs
    return qrels, runs


def _collection(**kw):
    qrels, runs = _records(**kw)
    return Qrels.from_records(qrels), [Run.from_records(r, name=name) for name, r in runs.items()]


@pytest.fixture
def forced_bounds(monkeypatch):
    """No exact engine at N >= 20 for RBP and DCG: transform falls back to the bounds
    where an exact engine still serves the check (here, build with the real engine)."""
    from irscale.scales import rankmap
    from irscale.scales.spaces.dcg import DCGSpace
    from irscale.scales.spaces.rbp import RBPSpace

    real = rankmap.choose_engine

    def refuse(space, **kw):
        if isinstance(space, (RBPSpace, DCGSpace)) and space.N >= 20:
            raise IrscaleError(f"(test) no engine at N = {space.N}")
        return real(space, **kw)

    monkeypatch.setattr(rankmap, "choose_engine", refuse)
    monkeypatch.setattr(rankmap, "in_cache", lambda space: False)  # maps other tests cached: not served
    return real


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["RBP(p=0.8)", "nDCG"])
def test_bounded_midpoints_contain_the_exact_normalised_phi(forced_bounds, monkeypatch, measure):
    q, runs = _collection(depth=24)
    table = irscale.evaluate(q, runs, ["P"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(table, [measure, "P"], depth=24, normalize=True, approx=1e-3)
    names = [str(c) for c in t.measures]
    assert names == [
        f"{measure}@24",
        "P@24",
        f"ranked({measure}@24, normalized, midpoint)",
        "ranked(P@24, normalized)",
        f"halfwidth(ranked({measure}@24, normalized, midpoint))",
    ]
    mid, half = t.values[2], t.values[4]
    assert (half >= 0).all() and 2 * half.max() <= 1e-3
    from irscale.scales import rankmap

    monkeypatch.setattr(rankmap, "choose_engine", forced_bounds)  # the exact map, for the check
    exact = irscale.transform(table, [measure], depth=24, normalize=True).values[1]
    assert (np.abs(exact - mid) <= half).all()
    # the exact measure keeps its exact column; the bounds are in the provenance
    bounds = t.provenance["transform"]["bounds"][f"{measure}@24"]
    assert bounds["method"] in ("grid recursion", "lattice convolution") and bounds["confidence"] == 0.0
    assert bounds["largest_half_width"] == pytest.approx(half.max())
    assert str(t.measures[2]) in t.exact_ids


def test_the_trec8_depth_1000_shape_on_a_synthetic_collection():
    """At N = 100 no engine reaches RBP(0.95) or nDCG: approx serves them; P and RR stay
    exact (closed forms); AP is refused with the limit and the reason."""
    q, runs = _collection(n_sys=3, n_top=3, depth=100, seed=1)
    table = irscale.evaluate(q, runs, ["P"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(table, ["P", "RR", "RBP(p=0.95)"], depth=100, normalize=True, approx=1e-4)
    assert [str(c) for c in t.measures][3:] == [
        "ranked(P@100, normalized)",
        "ranked(RR@100, normalized)",
        "ranked(RBP(p=0.95)@100, normalized, midpoint)",
        "halfwidth(ranked(RBP(p=0.95)@100, normalized, midpoint))",
    ]
    assert t.provenance["transform"]["bounds"]["RBP(p=0.95)@100"]["resolution"] == 80_000  # 8 / approx
    assert 0 < t.values[6].max() <= 0.5e-4
    with pytest.raises(MeasureError, match=r"AP@100: no exact engine.*exact up to N = 3\d.*no certified bounds"):
        irscale.transform(table, ["AP"], depth=100, normalize=True, approx=1e-4)


@pytest.mark.slow
def test_refusals_say_what_to_type():
    q, runs = _collection(n_sys=2, n_top=2, depth=60)
    table = irscale.evaluate(q, runs, ["P"])
    with pytest.raises(MeasureError, match=r"approx=1e-4\) \(CLI --approx 1e-4\)"):
        irscale.transform(table, ["nDCG"], depth=60)  # no engine, no approx
    with pytest.warns(IrscaleWarning, match=r"ranked nDCG@60: normalised .* --normalize"):
        t = irscale.transform(table, ["nDCG", "P"], depth=60, approx=1e-3)  # approx implies the normalised form
    assert [str(c) for c in t.measures][2:] == [
        "ranked(nDCG@60, normalized, midpoint)",
        "ranked(P@60)",
        "halfwidth(ranked(nDCG@60, normalized, midpoint))",
    ]
    assert 0 < t.values[2].max() <= 1 and t.values[3].max() > 1  # P's phi is not normalised
    with pytest.raises(IrscaleError, match=r"ties='unq' \(compare: mid=False, CLI --no-mid\)"):
        irscale.transform(table, ["nDCG"], depth=60, ties=("unq", "mid"), normalize=True, approx=1e-3)
    for bad in (0, 1.5, "1e-3", True):
        with pytest.raises(IrscaleError, match="approx must be a width strictly between 0 and 1"):
            irscale.transform(table, ["nDCG"], depth=60, normalize=True, approx=bad)
    with pytest.raises(MeasureError, match=r"wider than approx=1e-15.*ask for approx="):
        irscale.transform(table, ["RBP(p=0.6)"], depth=60, normalize=True, approx=1e-15)


def test_all_runs_distinct_rbp_takes_every_tie_strategy(forced_bounds):
    q, runs = _collection(n_sys=2, n_top=3, depth=24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(
            irscale.evaluate(q, runs, ["P"]), ["RBP(p=0.9)"], depth=24, ties=("unq", "mid"), normalize=True, approx=1e-3
        )
    assert np.array_equal(t.values[1], t.values[2])  # one value per run: phi over values = rank over runs


def test_cli_transform_approx(tmp_path):
    q, runs = _records(n_sys=2, n_top=2, depth=60)
    qf = tmp_path / "qrels"
    qf.write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in q))
    files = []
    for name, recs in runs.items():
        f = tmp_path / name
        f.write_text("".join(f"{t} Q0 {d} {k} {s} {name}\n" for k, (t, d, s) in enumerate(recs)))
        files.append(str(f))
    base = ["transform", str(qf), *files, "-N", "60", "-m", "RBP(p=0.9)", "-m", "P"]
    res = runner.invoke(app, base + ["--normalize", "--approx", "1e-4", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert "halfwidth(ranked(RBP(p=0.9)@60, normalized, midpoint))" in json.dumps(rows)
    res = runner.invoke(app, base)
    assert res.exit_code == 2 and "--approx 1e-4" in res.output
    res = runner.invoke(app, base + ["--approx", "1e-4", "--format", "json"])  # normalised with a note
    assert res.exit_code == 0 and "normalised" in res.stderr
    res = runner.invoke(app, base[:-4] + ["-m", "AP", "--normalize", "--approx", "1e-4"])
    assert res.exit_code == 2 and "no certified bounds" in res.output


def test_compare_reports_half_widths_and_flags(forced_bounds, tmp_path):
    q, runs = _collection(n_sys=5, n_top=8, depth=24, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = irscale.compare(
            irscale.evaluate(q, runs, ["P"]),
            ["P", "RBP(p=0.9)"],
            depth=24,
            tests=["sign", "ttest", "kruskal"],
            mid=False,
            approx=1e-2,
            baselines=["s0"],
            n_resamples=100,
        )
    ch = study.changes.set_index(["measure", "test"])
    assert (ch.loc["P@24", "halfwidth_max"] == 0).all() and (ch.loc["P@24", "could_flip_ranked"] == 0).all()
    assert (ch.loc["RBP(p=0.9)@24", "halfwidth_max"] > 0).all()
    assert "halfwidth_max" in study.table2 and "halfwidth_max" in study.table4
    ranked = study.means[study.means.scale == "ranked"]
    assert (ranked[ranked.measure == "RBP(p=0.9)@24"].halfwidth > 0).all()
    assert "could_flip" in study.pairs and study.provenance["approx"] == 1e-2
    pr = study.pairs[(study.pairs.measure == "RBP(p=0.9)@24") & (study.pairs.scale == "ranked")]
    assert (pr.halfwidth > 0).all() and (study.pairs[study.pairs.scale == "original"].halfwidth == 0).all()
    files = study.write(tmp_path / "report")
    md = next(f for f in files if f.suffix == ".md").read_text()
    assert "Largest half-width" in md and "Could flip (ranked)" in md and "Half-width (ranked)" in md
    assert "does not describe" not in md  # every new column is explained
    # without approx the columns are absent (the paper's tables unchanged)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = irscale.compare(irscale.evaluate(q, runs, ["P"]), ["P"], depth=10, tests=["sign"], effects=False)
    assert "could_flip_ranked" not in plain.changes and "halfwidth_max" not in plain.table2


# -- could_flip: sound against exact scores inside the bounds, and not vacuous ----------------------


@settings(max_examples=30, deadline=None)
@given(
    seed=hs.integers(0, 2**32 - 1),
    T=hs.integers(3, 12),
    S=hs.integers(2, 6),
    scale=hs.sampled_from([0.0, 1e-3, 0.05, 0.3]),
)
@pytest.mark.slow
def test_could_flip_is_sound(seed, T, S, scale):
    """Exact values (with exact ties: cells sharing an id), bounds around them whose
    midpoints are a function of the id (as transform's), and five more exact draws inside
    the bounds: wherever an exact decision differs from the reported one, the pair is
    flagged."""
    rng = np.random.default_rng(seed)
    n_ids = max(2, int(T * S * rng.uniform(0.3, 1.0)))
    ids = rng.integers(0, n_ids, (T, S))
    centre = rng.random(n_ids)
    h = scale * rng.random(n_ids) * (rng.random(n_ids) < 0.8)
    X, H = centre[ids], h[ids]
    for test in st.TESTS:
        flagged = st.could_flip(test, X, H, ids, 0.1)
        reported = st.run_test(test, X, 0.1).significant
        for _ in range(5):
            exact = centre + h * rng.uniform(-1, 1, n_ids)
            if len(np.unique(exact)) < n_ids:
                continue  # the ids promise distinct values
            truth = st.run_test(test, exact[ids], 0.1).significant
            assert not ((truth != reported) & ~flagged).any(), test


@pytest.mark.parametrize("T", [8, 24])  # exact sign vectors, and Monte Carlo ones
def test_randomised_p_values_of_exact_scores_lie_within_the_bounds(T):
    """The randomised tests' p-value ranges that could_flip decides on hold the p-value of
    every exact score matrix within the bounds: the draws (seeded) are the same, so only
    the scores move; crowded scores (many near-ties) and wide bounds both."""
    rng = np.random.default_rng(T)
    S = 5
    for width in (1e-4, 0.02):
        X = np.round(rng.random((T, S)) * 8) / 8 + np.linspace(0, 0.2, S)  # near-ties on a lattice
        H = width * rng.random((T, S))
        for test in st.RANDOMISED:
            p_lo, p_hi = st._RANDOMISED_BOUNDS[test](X, H, *st.pair_index(S), 5)
            assert (p_lo <= p_hi).all()
            for _ in range(4):
                exact = X + H * rng.uniform(-1, 1, X.shape)
                p = st.run_test(test, exact, seed=5).pvalue
                assert ((p_lo <= p) & (p <= p_hi)).all(), (test, width, p_lo, p, p_hi)
            if width == 1e-4:
                assert (p_hi - p_lo).max() < 0.2, test  # narrow bounds: narrow p ranges


def test_could_flip_is_exact_without_width_and_not_vacuous():
    rng = np.random.default_rng(0)
    X = rng.permutation(60).reshape(12, 5).astype(float)  # distinct values 1 apart
    ids = X.astype(int)
    for test in st.TESTS + st.RANDOMISED:
        assert not st.could_flip(test, X, np.zeros_like(X), ids).any()
        assert not st.could_flip(test, X, np.full_like(X, 1e-6), ids).any(), test
        assert st.could_flip(test, X, np.full_like(X, 100.0), ids).any(), test  # bounds say nothing


def test_the_sign_test_flag_is_exact():
    """Two systems, 10 topics: 8 certain wins, 2 uncertain: with alpha = 0.05, 10-0 and 9-1
    are significant (p = 0.002, 0.021), 8-2 is not (0.109): the reported decision (on the
    midpoints) can flip; with one uncertain topic (9 certain wins) it cannot."""
    X = np.column_stack([np.arange(10) + 10.0, np.arange(10) + 0.0])
    ids = np.arange(20).reshape(2, 10).T
    H = np.zeros_like(X)
    X[:2, 1] = X[:2, 0] - 0.1  # two topics whose difference is uncertain
    H[:2, 1] = 1.0
    assert st.could_flip("sign", X, H, ids)[0]
    H[1, 1] = 0.0
    assert not st.could_flip("sign", X, H, ids)[0]


@pytest.mark.slow
def test_rel_binarised_measures_are_bounded_on_the_judged_grades(forced_bounds, monkeypatch):
    """RBP and nDCG with rel=2 on 4-level qrels: the bounds binarise the judged grades
    once (at rel), and contain the exact map's phi."""
    rng = np.random.default_rng(5)
    qrels = [(str(t), f"d{t}-{k}", int(rng.integers(0, 4))) for t in range(3) for k in range(40)]
    runs = [
        Run.from_records(
            [(str(t), f"d{t}-{k}", float(40 - r)) for t in range(3) for r, k in enumerate(rng.permutation(40)[:24])],
            name=f"s{s}",
        )
        for s in range(3)
    ]
    table = irscale.evaluate(Qrels.from_records(qrels), runs, ["P"])
    measures = ["RBP(p=0.8, rel=2)", "nDCG(rel=2)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(table, measures, depth=24, normalize=True, approx=1e-3)
    from irscale.scales import rankmap

    monkeypatch.setattr(rankmap, "choose_engine", forced_bounds)
    exact = irscale.transform(table, measures, depth=24, normalize=True).values[2:4]
    mid, half = t.values[2:4], t.values[4:6]
    assert (np.abs(exact - mid) <= half).all()
    assert exact.std() > 0.01  # not every run alike (the bug this guards: all binarised to zero)


def test_a_measure_named_twice(forced_bounds):
    q, runs = _collection(n_sys=3, n_top=3, depth=24)
    table = irscale.evaluate(q, runs, ["P"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(table, ["RBP(p=0.9)", "RBP(p=0.9)@24"], depth=24, normalize=True, approx=1e-3)
        study = irscale.compare(table, ["P", "P@10"], depth=10, tests=["sign"], effects=False, measure_free=False)
    assert [str(c) for c in t.measures][-2:] == ["halfwidth(ranked(RBP(p=0.9)@24, normalized, midpoint))"] * 2
    assert np.array_equal(t.values[2], t.values[3]) and np.array_equal(t.values[4], t.values[5])
    assert list(study.measures) == ["P@10"] and len(study.changes) == 1  # the same measure, studied once


def test_corrected_pair_decisions_are_not_claimed_stable(forced_bounds):
    q, runs = _collection(n_sys=4, n_top=6, depth=24, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = irscale.compare(
            irscale.evaluate(q, runs, ["P"]),
            ["RBP(p=0.9)"],
            depth=24,
            tests=["sign"],
            mid=False,
            approx=1e-2,
            baselines=["s0"],
            correction="holm",
            n_resamples=100,
        )
    ranked = study.pairs[study.pairs.scale == "ranked"]
    assert ranked.could_flip.isna().all()  # p-values adjusted: not bounded
    assert not study.pairs[study.pairs.scale == "original"].could_flip.isna().any()


def test_no_engine_error_pickles():
    """NoEngineError crosses process boundaries (the parallel scheduler's workers): one
    measure's refusal and the merged one of several come back from pickle whole."""
    import pickle

    from irscale.measures import parse_measure
    from irscale.plan import NoEngineError, _no_engines

    one = NoEngineError(parse_measure("AP@100"), 100, "exact up to N = 35", False, "-N 35")
    two = NoEngineError(parse_measure("nDCG@100"), 100, "too many runs", True, "", c=2)
    both = _no_engines([one, two])
    for e in (one, two, both):
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is NoEngineError and str(back) == str(e)
        assert (back.m, back.N, back.limit, back.bounded, back.advice, back.c) == (
            e.m,
            e.N,
            e.limit,
            e.bounded,
            e.advice,
            e.c,
        )
        assert [str(f) for f in back.fails] == [str(f) for f in e.fails]
    assert pickle.loads(pickle.dumps(one)).fails[0].m == one.m and len(both.fails) == 2
