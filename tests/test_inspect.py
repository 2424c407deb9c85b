"""Scale inspection: the papers' findings, found by exhaustive search (nothing hard-coded),
balancing indexes against their analytic forms, meaningfulness (2021 Examples 5-8),
pictures and the CLI."""

import time

import numpy as np
import pytest
from typer.testing import CliRunner

from irscale import inspect as I
from irscale.cli import app
from irscale.meaning import meaningful


@pytest.mark.parametrize("p,ordinal,interval", [(0.3, True, False), (0.5, True, True), (0.8, False, False)])
def test_rbp_under_the_strong_order(p, ordinal, interval):
    o = I.is_ordinal(f"RBP(p={p})", "strong", 10)
    i = I.is_interval(f"RBP(p={p})", "strong", 10)
    assert o.holds is ordinal and i.holds is interval
    if not ordinal:  # a counterexample found by search: a lower run scoring higher
        ce = o.counterexample
        lo, up = ce["lower run"], ce["upper run"]
        assert I.strong_rank(lo[None], 1)[0] < I.strong_rank(up[None], 1)[0]
        assert ce["values"][0] >= ce["values"][1]
    if ordinal and not interval:
        assert i.counterexample["step 1"] != pytest.approx(i.counterexample["step 2"])


@pytest.mark.parametrize("m", ["AP", "DCG(base=2)", "ERR", "nDCG(base=2)"])
def test_not_ordinal_under_strong_but_ordinal_not_interval_under_weak(m):
    assert not I.is_ordinal(m, "strong", 10)
    assert I.is_ordinal(m, "weak", 10) and not I.is_interval(m, "weak", 10)
    assert I.is_ordinal(m, "weak", 6, levels=3)


@pytest.mark.parametrize("m", ["P", "R", "F"])
def test_set_based_order_binary(m):
    assert I.is_interval(m, "set", 10)


def test_generalized_precision_graded_not_ordinal():
    v = I.is_ordinal("gP", "set", 5, levels=3)
    assert not v.holds and v.counterexample


@pytest.mark.parametrize("m", ["AP", "RBP(p=0.8)", "nDCG(base=2)", "ERR"])
def test_swap_and_replacement_hold(m):
    assert I.swap_holds(m, 10) and I.replacement_holds(m, 10)
    assert I.swap_holds(m, 6, levels=3) and I.replacement_holds(m, 6, levels=3)


def test_a_broken_measure_fails_with_a_counterexample():
    def broken(runs, c):  # rewards relevant documents at rank 3 less than irrelevant ones
        r = (runs > 0).astype(float)
        return r.sum(1) - 2 * r[:, 2] + np.arange(runs.shape[1])[::-1] @ r.T * 0.01

    v = I.replacement_holds(broken, 5)
    assert not v.holds and v.counterexample["run"][2] < v.counterexample["replaced"][2]
    s = I.swap_holds(broken, 5)
    assert not s.holds


def test_balancing_index():
    for n in (1, 2, 5, 10, 50, 200, 1000):
        assert I.balancing_index("ERR", n) == 1 == I.balancing_analytic("ERR", n)
    for p in (0.5, 0.8, 0.9, 0.95):
        for n in (2, 5, 10, 20, 50, 100, 500, 1000):
            assert I.balancing_index(f"RBP(p={p})", n) == I.balancing_analytic("RBP", n, p=p), (p, n)
    assert I.balancing_analytic("RBP", 1000, p=0.8) == 8  # saturates at 8 (2015 paper)
    ratios = []
    for n in (5, 10, 50, 100, 200):
        ap, nd = I.balancing_index("AP", n), I.balancing_index("nDCG(base=2)", n)
        assert ap == I.balancing_analytic("AP", n)
        assert ap >= n - 2 * n**0.5 and nd >= n - 2 * n**0.5  # close to n (2015 Figure 1a)
        ratios.append(ap / n)
    assert ratios == sorted(ratios) and ratios[-1] > 0.9  # B(n)/n -> 1


@pytest.mark.slow
def test_checks_are_fast():
    t = time.perf_counter()
    for m in ("AP", "RBP(p=0.8)", "ERR", "DCG(base=2)"):
        I.is_ordinal(m, "weak", 16)
        I.is_ordinal(m, "strong", 16)
        I.is_interval(m, "weak", 16)
        I.swap_holds(m, 16)
        I.replacement_holds(m, 16)
    assert time.perf_counter() - t < 10 * 4
    t = time.perf_counter()
    for check in (I.swap_holds, I.replacement_holds):
        check("ERR", 8, levels=3)
    I.is_ordinal("ERR", "weak", 8, levels=3)
    assert time.perf_counter() - t < 10


# -- meaningfulness: the 2021 paper's Examples 5-8 -------------------------------------------------


def test_example_5_nominal():
    data = {"people": np.array([1, 1, 1, 1, 1, 4, 4, 4, 3, 2]), "spain": np.array([1])}

    def mode_is_spain(d):
        vals, counts = np.unique(d["people"], return_counts=True)
        return vals[np.argmax(counts)] == d["spain"][0]

    def lowest_quartile_is_spain(d):
        return np.quantile(d["people"], 0.25, method="lower") == d["spain"][0]

    assert meaningful(mode_is_spain, data, "nominal")
    r = meaningful(lowest_quartile_is_spain, data, "nominal")
    assert not r and r.truth and r.witness["truth"] is False


def test_example_6_ordinal():
    data = {"x": np.array([6, 6, 12, 17, 32]), "y": np.array([3, 3, 3, 12, 50])}
    assert meaningful(lambda d: np.median(d["x"]) > np.median(d["y"]), data, "ordinal")
    r = meaningful(lambda d: d["x"].mean() > d["y"].mean(), data, "ordinal")
    assert not r and r.truth  # 14.6 > 14.2, but squaring (the paper's phi') reverses it
    sq = {k: v.astype(float) ** 2 for k, v in data.items()}
    assert sq["x"].mean() < sq["y"].mean()


def test_example_7_interval():
    paris, rome = np.array([2, 2, 4, 8, 36.0]), np.array([1, 2, 4, 15, 34.0])
    d = {"paris": paris, "rome": rome}
    assert meaningful(lambda d: np.median(d["paris"]) == np.median(d["rome"]), d, "interval")
    assert meaningful(lambda d: d["paris"].mean() < d["rome"].mean(), d, "interval")
    gm = lambda a: np.exp(np.log(a).mean())  # noqa: E731
    r = meaningful(lambda d: gm(d["paris"]) > gm(d["rome"]), d, "interval")
    assert not r and r.truth
    diffs = {"today": np.array([20.0, 10.0]), "month_ago": np.array([12.0, 7.0])}
    twice = lambda d: np.isclose(d["today"][0] - d["today"][1], 2 * (d["month_ago"][0] - d["month_ago"][1]))  # noqa: E731
    assert meaningful(twice, diffs, "interval")


def test_example_8_ratio():
    d = {"rome_padua": np.array([400.0]), "rome_oslo": np.array([2000.0])}
    assert meaningful(lambda d: np.isclose(d["rome_oslo"][0], 5 * d["rome_padua"][0]), d, "ratio")
    x, y = np.array([2, 2, 4, 8, 36.0]), np.array([1, 2, 4, 15, 34.0])
    gm = lambda a: np.exp(np.log(a).mean())  # noqa: E731
    assert meaningful(lambda d: gm(d["x"]) > gm(d["y"]), {"x": x, "y": y}, "ratio")
    kelvin = {"a": np.array([273.0]), "b": np.array([546.0])}
    twice_as_hot = lambda d: np.isclose(d["b"][0], 2 * d["a"][0])  # noqa: E731
    assert meaningful(twice_as_hot, kelvin, "ratio")
    assert not meaningful(twice_as_hot, kelvin, "interval")  # Celsius/Fahrenheit break it


# -- pictures and the CLI ------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_inspect_with_plots(tmp_path):
    cli = CliRunner()
    for m in ("RBP", "AP"):
        res = cli.invoke(app, ["inspect", m, "-N", "4", "--plot", str(tmp_path)])
        assert res.exit_code == 0, res.output
        assert "swap" in res.stdout and "balancing index" in res.stdout
    names = {f.name for f in tmp_path.iterdir()}
    assert {"hasse_N4_AP.png", "hasse_N4_RBP.svg", "spacing_AP.png", "balancing_RBP.png"} <= names
    for f in tmp_path.glob("*.png"):
        assert f.stat().st_size > 5000 and f.read_bytes()[:4] == b"\x89PNG"


def test_cli_inspect_user_measure(tmp_path, monkeypatch):
    (tmp_path / "mymeasures.py").write_text(
        "import numpy as np\ndef hits_top3(runs, c):\n    return (np.asarray(runs)[:, :3] > 0).sum(axis=1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    res = CliRunner().invoke(app, ["inspect", "mymeasures:hits_top3", "-N", "5", "--order", "weak"])
    assert res.exit_code == 0, res.output
    assert "hits_top3" in res.stdout
    res = CliRunner().invoke(app, ["inspect", "nosuchmodule:f", "-N", "5"])
    assert res.exit_code == 2 and "cannot load user measure" in res.stderr


def test_maximal_chains_of_the_weak_order():
    for pick in ("first", "last"):
        ch = I.maximal_chain(5, 1, pick)
        assert len(ch) == 5 * 6 // 2 + 1  # binary: N(N+1)/2 covers bottom to top
        assert (ch[0] == 0).all() and (ch[-1] == 1).all()
        lo, hi = I.weak_covers(5, 1)
        pairs = set(zip(lo.tolist(), hi.tolist()))
        idx = I.strong_rank(ch, 1)
        assert all((int(a), int(b)) in pairs for a, b in zip(idx[:-1], idx[1:]))
    assert not I.is_interval("AP", "weak", 5, chain=I.maximal_chain(5))
    # a measure linear in the weak order's height is interval along any chain
    height = lambda runs, c: I.weak_level(np.asarray(runs)).astype(float)  # noqa: E731
    assert I.is_interval(height, "weak", 5) and I.is_interval(height, "weak", 5, chain=I.maximal_chain(5, 1, "last"))


def test_a_test_decision_as_a_statement():
    """'x and y differ significantly' by a t-test is not meaningful on an ordinal scale,
    by the sign test it is (it only compares within pairs)."""
    from irscale import stats

    rng = np.random.default_rng(3)
    x = rng.beta(2, 5, 30)
    y = np.clip(x + rng.normal(0.04, 0.08, 30), 0, 1)
    data = {"x": x, "y": y}
    t_decision = lambda d: stats.t_test(np.c_[d["x"], d["y"]]).significant[0]  # noqa: E731
    sign_decision = lambda d: stats.sign_test(np.c_[d["x"], d["y"]]).significant[0]  # noqa: E731
    assert meaningful(sign_decision, data, "ordinal")
    assert meaningful(t_decision, data, "interval")
    assert not meaningful(t_decision, data, "ordinal")
