"""transform(): ranked columns on real runs, the API and the CLI."""

import json
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import irscale
from irscale.cli import app
from irscale.experiment import PAPER_MEASURES
from irscale.io import Qrels, Run
from irscale.scales import build


def _toy():
    q = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("2", "a", 2), ("2", "d", 1)])
    r1 = Run.from_records([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0), ("2", "d", 1.0)], name="r1")
    r2 = Run.from_records([("1", "c", 3.0), ("1", "a", 2.0), ("2", "x", 2.0), ("2", "a", 1.0)], name="r2")
    return q, [r1, r2]


def test_transform_columns_and_values():
    q, runs = _toy()
    t = irscale.transform(irscale.evaluate(q, runs, ["AP"]), ["AP", "P", "nDCG(base=2)"], depth=4)
    assert [str(m) for m in t.measures] == [
        "AP@4",
        "P@4",
        "nDCG(base=2)@4",
        "ranked(AP@4)",
        "ranked(P@4)",
        "ranked(nDCG(base=2)@4)",
    ]
    # P@4 ranks like the number of relevant retrieved, plus one
    assert np.array_equal(t.values[4], t.values[1] * 4 + 1)
    # phi of each run equals the rank map applied to its padded binary vector
    rm = build("AP", 4, cache=False)
    vec = {("r1", "1"): [1, 0, 1, 0], ("r1", "2"): [1, 0, 0, 0], ("r2", "1"): [1, 1, 0, 0], ("r2", "2"): [0, 1, 0, 0]}
    for (s, topic), g in vec.items():
        assert t.values[3, t.systems.index(s), t.topics.index(topic)] == rm.phi_runs(np.array([g]))[0]
    # graded qrels: nDCG lives on 3 levels (grade 2 of topic 2 counts)
    assert t.provenance["transform"]["maps"]["nDCG(base=2)@4"]["levels"] == 3
    normalized = irscale.transform(t, ["AP"], depth=4, normalize=True)
    assert np.allclose(normalized.values[1], t.values[3] / rm.size)


def test_transform_rejects_a_conflicting_cutoff_and_tableless_input():
    q, runs = _toy()
    table = irscale.evaluate(q, runs, ["AP"])
    with pytest.raises(irscale.errors.IrscaleError, match="cutoff 10"):
        irscale.transform(table, ["P@10"], depth=30)
    with pytest.raises(irscale.errors.IrscaleError, match="ties"):
        irscale.transform(table, ["AP"], depth=3, ties="average")


@pytest.mark.slow
@pytest.mark.xdist_group("trec8_n30")  # with tests/test_stats.py's N = 30 tests: their rank maps, built once
def test_trec8_at_30_ranked_order_agrees_with_the_measure(trec8):
    """All 129 runs x 50 topics at N = 30, the eleven paper measures: on each topic the
    ranked version orders systems as the measure does (phi is strictly increasing; RB is
    constant within a topic), and equal ranks mean equal values."""
    files = sorted((trec8 / "runs").glob("*.gz"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(trec8 / "qrels.trec8.txt", files, ["AP"])
    t = irscale.transform(table, PAPER_MEASURES, depth=30)
    M = len(PAPER_MEASURES)
    for m in range(M):
        base, ranked = t.values[m], t.values[M + m]
        for k in range(base.shape[1]):
            b, r = base[:, k], ranked[:, k]
            for i in range(0, len(b), 7):  # each system against all others
                # float64 cannot tell values apart below ~1e-15 (RBP(0.3) at rank 30
                # weighs 0.3^29): compare orders where the floats are clearly apart
                far = np.abs(b - b[i]) > 1e-9
                assert np.array_equal(np.sign(b[far] - b[i]), np.sign(r[far] - r[i])), (t.measures[m], k)
                assert (np.abs(b[r == r[i]] - b[i]) <= 1e-9).all(), (t.measures[m], k)
    sizes = {k: v["size"] for k, v in t.provenance["transform"]["maps"].items()}
    assert sizes["AP@30"] == 426_591_837 and sizes["RBP(p=0.8)@30"] == 2**30
    assert sizes["DCG(base=2)@30"] == 3 * 2**28 and sizes["RR@30"] == 31


def test_cli_transform_rankmap_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path / "cache"))
    q, runs = _toy()
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 a 2\n2 0 d 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n1 Q0 c 3 1 r1\n2 Q0 d 1 1 r1\n")
    cli = CliRunner()
    res = cli.invoke(
        app,
        ["transform", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "AP", "-N", "4", "--format", "json", "-q"],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["scores"]
    got = {(r["measure"], r["topic"]): r["value"] for r in rows}
    assert got[("ranked(AP@4)", "1")] == 9.0  # RB*AP of (1,0,1,0) = 5/3, the 9th of 15 values
    res = cli.invoke(app, ["rankmap", "AP", "-N", "10"])
    assert res.exit_code == 0 and "810 distinct values" in res.stdout and "engine    enumerate" in res.stdout
    res = cli.invoke(app, ["rankmap", "AP", "-N", "10"])
    assert "from the cache" in res.stdout
    res = cli.invoke(app, ["cache", "info"])
    assert "AP|N=10" in res.stdout
    res = cli.invoke(app, ["cache", "clear"])
    assert "removed 2" in res.stdout  # AP at N=4 (transform) and N=10
    res = cli.invoke(app, ["rankmap", "Success", "-N", "10"])
    assert res.exit_code == 2 and "Success" in res.stderr


def test_midpoint_and_half_width_cover_the_bounds_exactly():
    """transform's bounded columns: [lo, hi] lies within midpoint +- half-width in floating point,
    the half-width rounded up (bounds spanning many orders of magnitude included)."""
    from types import SimpleNamespace

    from irscale.experiment import _midpoint_and_half_width

    rng = np.random.default_rng(0)
    lo = 10.0 ** rng.uniform(-70, 0, 1000)
    hi = lo * (1 + rng.uniform(0, 1e-3, 1000))
    mid, half = _midpoint_and_half_width(SimpleNamespace(lo=lo, hi=hi))
    assert np.all(mid - half <= lo) and np.all(hi <= mid + half) and np.all(half >= (hi - lo) / 2)


def test_tie_strategies_are_checked_and_each_kept_once_in_order():
    from irscale.errors import ArgumentError, PolicyError
    from irscale.experiment import _tie_list

    assert _tie_list("mid") == ["mid"] and _tie_list(("mid", "unq", "mid")) == ["mid", "unq"]
    for bad in ([], None, "median", ["unq", "best"]):
        with pytest.raises((ArgumentError, PolicyError), match="ties"):
            _tie_list(bad)
