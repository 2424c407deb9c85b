"""Issue 9 (reliability), the API and CLI side: policies validated, an outlier grade
named, ERR at any grade scale, work checked before it starts and kept when it stops,
arguments validated, advice that works when typed, case-insensitive measure names.

Reader defects (BOM, tags, number syntax, fuzzing) are in test_reader_*.py, rank-map
exactness and the cache in test_rbp_exact.py and test_cache.py."""

import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from cli_lines import unwrap
from typer.testing import CliRunner

import irscale
from irscale import stats
from irscale.cli import app
from irscale.errors import ArgumentError, InputFormatError, IrscaleError, IrscaleWarning, MeasureError, PolicyError
from irscale.measures import parse_measure

runner = CliRunner()

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 c 1\n2 0 d 2\n2 0 e 0\n"
RUN = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 c 1 3 r\n2 Q0 d 2 2 r\n"
RUN2 = "1 Q0 c 1 3 s\n1 Q0 a 2 2 s\n2 Q0 e 1 3 s\n2 Q0 d 2 2 s\n"


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text(QRELS)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r.txt").write_text(RUN)
    (runs / "s.txt").write_text(RUN2)
    return q, runs


def cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res


def one_error_line(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, res.stderr
    return unwrap(res.stderr).replace("\n", " ")


# -- 3. every policy keyword is validated ---------------------------------------------------------


@pytest.mark.parametrize(
    "kw, bad, allowed",
    [
        ("duplicates", "last", "'error', 'first'"),
        ("duplicates", "frist", "did you mean 'first'"),
        ("missing_topics", "zeros", "did you mean 'zero'"),
        ("extra_fields", "skip", "'error', 'ignore'"),
        ("score_precision", "float16", "'float64', 'float32'"),
    ],
)
def test_evaluate_policies_are_validated(files, kw, bad, allowed):
    q, runs = files
    with pytest.raises(PolicyError, match=kw) as ei:
        irscale.evaluate(q, runs, "AP", **{kw: bad})
    assert allowed in str(ei.value)


def test_other_policies_are_validated(files):
    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    with pytest.raises(PolicyError, match="ties must be one of 'unq', 'min', 'max', 'mid'"):
        irscale.transform(t, "AP", depth=5, ties="average")
    with pytest.raises(PolicyError, match="test must be one of"):
        irscale.compare(t, ["P"], depth=5, tests=["t-test"])
    with pytest.raises(PolicyError, match="scale must be one of"):
        irscale.meaningful(lambda d: True, {"a": [1.0]}, "absolute")
    with pytest.raises(PolicyError, match="did you mean 'ttest'"):
        stats.run_test("ttests", t.matrix("AP"))


# -- 4. one outlier grade rescales every topic: warned, and settable ------------------------------


def test_outlier_grade_is_named_and_max_grade_fixes_the_scale(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text(QRELS + "3 0 z 1000\n")
    r = tmp_path / "r.txt"
    r.write_text(RUN)
    ms = ["RBP(p=0.8)@3", "gP@3", "ERR@3", "nDCG@3"]
    with pytest.warns(IrscaleWarning, match=r"qrels.txt:7: top grade 1000 .* --max-grade 2 caps it"):
        bad = irscale.evaluate(q, r, ms)
    assert bad.values[:3, 0, 0].max() < 0.01  # every topic rescaled by 1000: what the warning is for
    with pytest.warns(IrscaleWarning, match=r"qrels.txt:7: 1 judgement\(s\) have a grade above --max-grade 2"):
        fixed = irscale.evaluate(q, r, ms, max_grade=2)
    (tmp_path / "clean.txt").write_text(QRELS + "3 0 z 2\n")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", ".*grade", IrscaleWarning)
        ref = irscale.evaluate(tmp_path / "clean.txt", r, ms)
    np.testing.assert_array_equal(fixed.values, ref.values)
    # the CLI: the advice, typed, silences the warning and gives the clean numbers
    res = cli("evaluate", q, r, *sum([["-m", m] for m in ms], []), "--max-grade", "2", "-f", "tsv")
    assert res.exit_code == 0 and "highest grade" not in res.stderr and "above --max-grade 2" in res.stderr


def test_no_outlier_warning_on_real_graded_scales(te_test):
    """Contiguous grades are a real scale even when the top one is rare (trec_eval's
    qrels.rel_level: grade 4 on 6 of 3,381 judgements)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrscaleWarning)
        q = irscale.read_qrels(te_test / "qrels.rel_level")
        from irscale.data import grade_scale

        assert grade_scale(q) == 4


def test_outlier_rule_gap_above_10(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(
        "".join(f"1 0 d{i} {i % 3}\n" for i in range(300))
        + "1 0 x 14\n" * 1
        + "".join(f"2 0 e{i} 14\n" for i in range(10))
    )
    from irscale.data import grade_scale

    with pytest.warns(IrscaleWarning, match=r"12 above the next \(2\)"):  # 3.6% use it, but 14 vs 2
        assert grade_scale(irscale.read_qrels(q)) == 14


# -- 8. ERR at any grade scale -------------------------------------------------------------------


def _err_exact(grades, c):
    total, reach = Fraction(0), Fraction(1)
    for i, g in enumerate(grades):
        r = Fraction(2**g - 1, 2**c)
        total += reach * r / (i + 1)
        reach *= 1 - r
    return float(total)


@pytest.mark.slow
@pytest.mark.parametrize("c", [3, 60, 1100, 32000])
def test_err_with_a_high_maximum_grade(tmp_path, c):
    q = tmp_path / "q.txt"
    q.write_text(f"1 0 a {c}\n1 0 b {c - 1}\n1 0 c 1\n1 0 d 0\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 c 1 4 r\n1 Q0 b 2 3 r\n1 Q0 a 3 2 r\n1 Q0 d 4 1 r\n")
    t = irscale.evaluate(q, r, ["ERR", "ERR@2", "nDCG", "RBP(p=0.5)"])
    assert np.isfinite(t.values).all()
    assert t.values[0, 0, 0] == pytest.approx(_err_exact([1, c - 1, c, 0], c), rel=1e-12, abs=1e-300)
    assert t.values[1, 0, 0] == pytest.approx(_err_exact([1, c - 1], c), rel=1e-12, abs=1e-300)
    m = parse_measure("ERR")
    assert m.reference([1, c - 1, c, 0], m_topic(c)) == pytest.approx(t.values[0, 0, 0], rel=1e-12)
    assert cli("evaluate", q, r, "-m", "ERR").exit_code == 0


def m_topic(c):
    from irscale.data import TopicStats

    counts = [0] * (c + 1)
    for g in (c, c - 1, 1, 0):
        counts[g] += 1
    return TopicStats.single(counts)


def test_err_stop_probability_is_unchanged_for_small_scales():
    from irscale.measures.gains import ERR

    g = np.arange(0, 5)
    for c in range(1, 5):
        np.testing.assert_array_equal(ERR._stop(g[: c + 1], c), (2.0 ** g[: c + 1] - 1) / 2.0**c)


# -- 10. feasibility before heavy work; finished parts kept --------------------------------------


def test_infeasible_rank_map_fails_before_the_runs_are_read(tmp_path):
    """A graded rank map beyond the engines (graded ERR at N=23 on 3 levels, more pairs
    than the split engine lists; graded RBP(p=0.8) at N=40, whose halves are too large to
    count, among the study's measures) is reported before reading (a broken run file would
    otherwise be the error). Graded DCG at N=20, RBP(p=0.8) at N=30, ERR at N=20 and
    RBP(p=0.5) at N=30 were the examples until they got an engine."""
    q = tmp_path / "q.txt"
    q.write_text(QRELS)
    broken = tmp_path / "broken.txt"
    broken.write_text("not a run\n")
    for verb, N in (
        (["compare", q, broken, "-m", "P", "-m", "ERR", "-N", "23"], 23),
        (["transform", q, broken, "-m", "ERR", "-N", "23"], 23),
        (["study", "trec8-like", q, broken, "--depths", "5,40"], 40),
    ):
        msg = one_error_line(cli(*verb))
        assert re.search(rf"N ?= ?{N}\b", msg) and "broken.txt" not in msg, msg


def test_misspelt_measure_fails_before_the_runs_are_read(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(QRELS)
    broken = tmp_path / "broken.txt"
    broken.write_text("not a run\n")
    for verb in (
        ["evaluate", q, broken, "-m", "nDGC@10"],
        ["transform", q, broken, "-m", "nDGC"],
        ["compare", q, broken, "-m", "nDGC"],
    ):
        msg = one_error_line(cli(*verb))
        assert "unknown measure 'nDGC" in msg and "broken.txt" not in msg
    with pytest.raises(MeasureError, match="unknown measure"):
        irscale.evaluate(q, broken, ["nDGC@10"])


@pytest.mark.slow
def test_study_keeps_each_finished_N(files, tmp_path, monkeypatch):
    import irscale.cli as cli_mod

    q, runs = files
    real = cli_mod._run_study

    def failing(judged, measures, N, *a, **k):
        if N == 6:
            raise IrscaleError("simulated failure at N=6")
        return real(judged, measures, N, *a, **k)

    monkeypatch.setattr(cli_mod, "_run_study", failing)
    out = tmp_path / "out"
    res = cli("study", "trec8-like", q, runs, "--depths", "3,6", "--no-figures", "--out", out)
    assert res.exit_code == 2 and "simulated failure at N=6" in res.stderr
    assert "finished N = 3" in res.stderr
    assert (out / "report_N3.md").exists() and (out / "table2_tau_measure_vs_ranked_N3.csv").exists()
    assert [line.split(",")[0] for line in (out / "table2_tau_unq.csv").read_text().splitlines()] == ["N", "3"]


def test_transform_checks_every_measure_before_building(files, monkeypatch):
    """A measure without an engine fails before the others' rank maps are built."""
    import irscale.scales as sc

    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    built = []
    real = sc.build
    monkeypatch.setattr(sc, "build", lambda *a, **k: built.append(a) or real(*a, **k))
    with pytest.raises(MeasureError, match="N=23"):
        irscale.transform(t, ["AP", "ERR"], depth=23)  # graded ERR at N=23 on 3 levels: beyond the split engine
    assert built == []


# -- 11. arguments validated ---------------------------------------------------------------------


def test_api_misuse_gives_clear_errors(files):
    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    cases = [
        (lambda: irscale.evaluate(123, runs), "qrels must be a qrels file path"),
        (lambda: irscale.evaluate(q, None), "runs must be a run file"),
        (lambda: irscale.evaluate(q, runs, [42]), "a measure must be a name"),
        (lambda: irscale.evaluate(q, runs, []), "no measure given"),
        (lambda: irscale.evaluate(q, [3.5]), "each run must be a path"),
        (lambda: irscale.transform(str(q), ["AP"], depth=3), "evaluate the runs first"),
        (lambda: irscale.transform(t.values, ["AP"]), "evaluate the runs first"),
        (
            lambda: irscale.transform(irscale.ScoreTable(t.measures, t.systems, t.topics, t.values), ["AP"]),
            "carries no grades",
        ),
        (lambda: irscale.transform(t.judged, None, depth=3), "name the measures to transform"),
        (lambda: irscale.meaningful("bogus", {"a": [1.0]}), "statement must be a function"),
        (lambda: irscale.meaningful(lambda d: True, [1, 2]), "data must be a non-empty dict"),
        (lambda: irscale.compare(t, ["P"], depth=3, alpha=2), "alpha must be a number strictly between 0 and 1"),
        (lambda: irscale.compare(t, ["P"], depth=3, alpha=True), "alpha must be"),
        (lambda: stats.run_test("ttest", [[1.0], [2.0]]), "at least one topic and two systems"),
        (lambda: stats.run_test("ttest", t.matrix("AP"), alpha=0), "alpha must be"),
    ]
    for depth in (0, -1, 2.5, True, "3"):
        cases.append((lambda d=depth: irscale.evaluate(q, runs, "AP", depth=d), "depth must be"))
        cases.append((lambda d=depth: irscale.transform(t, "AP", depth=d), "depth must be"))
    for call, fragment in cases:
        with pytest.raises(ArgumentError) as ei:
            call()
        assert fragment in str(ei.value), (fragment, str(ei.value))
        assert isinstance(ei.value, IrscaleError)


def test_single_measure_string_is_one_measure(files):
    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    assert [str(m) for m in t.measures] == ["AP"]
    assert [str(m) for m in irscale.transform(t, "AP", depth=3).measures] == ["AP@3", "ranked(AP@3)"]


def test_compare_needs_two_systems(files):
    q, runs = files
    t = irscale.evaluate(q, runs / "r.txt", "AP")
    with pytest.raises(ArgumentError, match="at least two systems"):
        irscale.compare(t, ["P"], depth=3)
    with pytest.raises(ArgumentError, match="two systems"):
        stats.tau_overall(t.matrix("AP").to_numpy(), t.matrix("AP").to_numpy())


# -- 12. every piece of advice works when typed ---------------------------------------------------


def test_advice_missing_topics(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(QRELS)
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 3 r\n")
    msg = one_error_line(cli("evaluate", q, r, "--missing-topics", "error"))
    assert "--missing-topics zero" in msg
    assert cli("evaluate", q, r, "--missing-topics", "zero").exit_code == 0


def test_advice_extra_fields_and_duplicates(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(QRELS)
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 3 r x\n")
    msg = one_error_line(cli("evaluate", q, r))
    assert "--ignore-extra-fields" in msg
    assert cli("evaluate", q, r, "--ignore-extra-fields").exit_code == 0
    r.write_text("1 Q0 a 1 3 r\n1 Q0 a 2 2 r\n")
    msg = one_error_line(cli("evaluate", q, r))
    assert "--duplicates first" in msg
    assert cli("evaluate", q, r, "--duplicates", "first").exit_code == 0


def test_advice_two_tags(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(QRELS)
    r = tmp_path / "both.txt"
    r.write_text(RUN + RUN2)
    msg = one_error_line(cli("evaluate", q, r))
    assert "--split-tags" in msg and "--name" not in msg
    res = cli("evaluate", q, r, "--split-tags", "-m", "AP", "-f", "tsv")
    assert res.exit_code == 0
    sep = irscale.evaluate(q, [_write(tmp_path, "r1.txt", RUN), _write(tmp_path, "s1.txt", RUN2)], "AP")
    both = irscale.evaluate(q, r, "AP", split_tags=True)
    assert both.systems == ("r", "s")
    np.testing.assert_array_equal(both.values, sep.values)


def _write(d, name, text):
    p = d / name
    p.write_text(text)
    return p


def test_advice_skip_invalid(files):
    q, runs = files
    (runs / "README").write_text("These are the runs of our lab.\n")
    msg = one_error_line(cli("evaluate", q, runs))
    assert "README" in msg and "--skip-invalid" in msg
    with pytest.raises(IrscaleError, match="skip_invalid=True"):
        irscale.evaluate(q, runs, "AP")
    res = cli("evaluate", q, runs, "--skip-invalid", "-f", "tsv")
    assert res.exit_code == 0 and "skipping" in res.stderr and "README" in res.stderr
    with pytest.warns(IrscaleWarning, match="skipping .*README"):
        t = irscale.evaluate(q, runs, "AP", skip_invalid=True)
    assert t.systems == ("r", "s")
    # a file named explicitly gets no directory advice
    msg = one_error_line(cli("evaluate", q, runs / "README"))
    assert "--skip-invalid" not in msg


def test_advice_unknown_measure_and_cutoff(files):
    q, runs = files
    msg = one_error_line(cli("evaluate", q, runs, "-m", "nDGC@10"))
    assert "did you mean 'nDCG@10'" in msg
    assert cli("evaluate", q, runs, "-m", "nDCG@10").exit_code == 0
    msg = one_error_line(cli("transform", q, runs, "-m", "AP@10", "-N", "5"))
    assert "AP instead of AP@10" in msg
    assert cli("transform", q, runs, "-m", "AP", "-N", "5").exit_code == 0


def test_transform_measures_given_without_cutoff(files):
    """gP, SBTO and RBTO need a cutoff when evaluated, but transform supplies N."""
    q, runs = files
    res = cli("transform", q, runs, "-m", "gP", "-m", "SBTO", "-m", "RBTO", "-N", "4", "-f", "tsv")
    assert res.exit_code == 0, res.output
    assert "ranked(gP@4)" in res.stdout and "ranked(SBTO@4)" in res.stdout


@pytest.mark.parametrize("m", ["Rprec", "bpref"])
def test_measures_without_ranked_version_say_so(files, m):
    q, runs = files
    msg = one_error_line(cli("transform", q, runs, "-m", m, "-N", "4"))
    assert "has no ranked version" in msg and "cutoff None" not in msg


# -- 13. measure names are case-insensitive --------------------------------------------------------


@pytest.mark.parametrize(
    "name, canonical",
    [
        ("ap", "AP"),
        ("AP", "AP"),
        ("Ap@10", "AP@10"),
        ("MAP", "AP"),
        ("map", "AP"),
        ("ndcg@10", "nDCG@10"),
        ("NDCG@10", "nDCG@10"),
        ("nDCG@10", "nDCG@10"),
        ("rbp(p=0.8)@10", "RBP(p=0.8)@10"),
        ("err@20", "ERR@20"),
        ("p_10", "P@10"),
        ("P_10", "P@10"),
        ("NDCG_CUT_10", "nDCG@10"),
        ("rr", "RR"),
        ("mrr", "RR"),
        ("rprec", "Rprec"),
        ("BPREF", "bpref"),
        ("gp@5", "gP@5"),
        ("sbto@5", "SBTO@5"),
        ("recip_rank", "RR"),
    ],
)
def test_measure_names_are_case_insensitive(name, canonical):
    assert str(parse_measure(name)) == canonical


def test_case_insensitive_on_the_cli(files):
    q, runs = files
    res = cli("evaluate", q, runs, "-m", "ap", "-m", "ndcg@10", "-f", "tsv")
    assert res.exit_code == 0 and "\tAP\t" in res.stdout and "\tnDCG@10\t" in res.stdout


def test_inspect_arguments_are_validated():
    from irscale import inspect as ins

    for call, fragment in [
        (lambda: ins.is_ordinal("AP", "strong", 0, 2), "N must be at least 1"),
        (lambda: ins.is_ordinal("AP", "strong", 4, 1), "levels must be at least 2"),
        (lambda: ins.is_interval("AP", "strong", True, 2), "N must be an integer"),
        (lambda: ins.balancing_index("AP", 2.5), "n must be an integer"),
        (lambda: ins.is_ordinal("AP", "strong", 40, 2), "too many to enumerate"),
    ]:
        with pytest.raises(IrscaleError, match=fragment):
            call()
    with pytest.raises(PolicyError, match="order must be one of 'set', 'strong', 'weak', 'induced'"):
        ins.is_ordinal("AP", "bogus", 4, 2)


def test_cli_messages_show_invisible_characters_and_brackets_literally(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(QRELS)
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 [bold]a 1 3 r\n1 Q0 [bold]a 2 3 r\n")
    msg = one_error_line(cli("evaluate", q, r))
    assert "duplicate docno '[bold]a'" in msg
    msg = one_error_line(cli("evaluate", q, r, "-m", "AP\u200b"))
    assert "AP\\u200b" in msg and "\u200b" not in msg


# -- reader items through the CLI (the API side is in test_trec_reliability.py) ------------------


def test_cli_bom_is_stripped_with_one_warning(tmp_path):
    q = _write(tmp_path, "q.txt", "\ufeff" + QRELS)
    r = _write(tmp_path, "r.txt", "\ufeff" + RUN)
    res = cli("evaluate", q, r, "-m", "AP", "-q", "-f", "tsv")
    clean = cli(
        "evaluate", _write(tmp_path, "q2.txt", QRELS), _write(tmp_path, "r2.txt", RUN), "-m", "AP", "-q", "-f", "tsv"
    )
    assert res.exit_code == 0 and res.stdout == clean.stdout
    assert res.stderr.count("byte-order mark") == 2 and "\ufeff" not in res.stderr


@pytest.mark.parametrize(
    "which, text, line, fragment",
    [
        ("run", RUN.replace("1 Q0 b 2 2 r", "1 Q0 b 2 1_000 r"), 2, "found '1_000'"),
        ("qrels", QRELS.replace("1 0 c 2", "1 0 c 12345678901234567890"), 3, "out of the supported range"),
        ("run", RUN.replace("1 Q0 b 2 2 r", "1 Q0 b 2 \u0662 r"), 2, "score (5th field)"),
    ],
)
def test_cli_python_syntax_numbers_are_errors(tmp_path, which, text, line, fragment):
    q = _write(tmp_path, "q.txt", text if which == "qrels" else QRELS)
    r = _write(tmp_path, "r.txt", text if which == "run" else RUN)
    msg = one_error_line(cli("evaluate", q, r))
    target = q if which == "qrels" else r
    assert f"{target}:{line}:" in msg and fragment in msg


def test_every_verb_prints_warnings_as_one_line(tmp_path, monkeypatch):
    """rankmap and cache read no runs, yet their warnings (a damaged cache file) are one
    'warning:' line too, not Python's two-line format with a source line."""
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    assert cli("rankmap", "AP", "-N", "8").exit_code == 0
    f = next(p for p in (tmp_path / "rankmaps").glob("*.npz") if ".answers" not in p.name)
    f.write_bytes(f.read_bytes()[:50])
    res = cli("rankmap", "AP", "-N", "8")
    assert res.exit_code == 0
    lines = [x for x in unwrap(res.stderr).splitlines() if x.strip()]  # one message, in lines of 160 at most
    assert len(lines) == 1 and lines[0].startswith("warning:") and "damaged" in lines[0], res.stderr


def test_qrels_field_count_error_gives_no_run_only_advice(tmp_path):
    q = _write(tmp_path, "q.txt", "1 0 a 1 extra\n")
    r = _write(tmp_path, "r.txt", RUN)
    msg = one_error_line(cli("evaluate", q, r, "--ignore-extra-fields"))
    assert "q.txt:1: expected 4 fields" in msg and "ignore-extra-fields" not in msg


def test_hidden_characters_are_allowed_in_comment_lines(tmp_path):
    q = _write(tmp_path, "q.txt", QRELS)
    r = _write(tmp_path, "r.txt", "# generated by Lab\u00a0X \u200b\n" + RUN)
    t = irscale.evaluate(q, r, "AP")
    ref = irscale.evaluate(q, _write(tmp_path, "r2.txt", RUN), "AP")
    np.testing.assert_array_equal(t.values, ref.values)
    with pytest.raises(InputFormatError, match=r"r3.txt:2: non-breaking space"):
        irscale.evaluate(q, _write(tmp_path, "r3.txt", "# ok\u00a0\n1 Q0 a\u00a0 1 3 r\n"), "AP")


def test_api_messages_show_invisible_characters_escaped(tmp_path):
    q = _write(tmp_path, "q.txt", QRELS)
    r = _write(tmp_path, "r.txt", RUN + "9\u200e Q0 a 1 3 r\n")
    with pytest.warns(IrscaleWarning) as rec:
        irscale.evaluate(q, r, "AP")
    shown = " | ".join(str(w.message) for w in rec)
    assert "9\\u200e" in shown and "\u200e" not in shown
    assert str(IrscaleError("nope\u200b.txt")) == "nope\\u200b.txt"


# -- found in review: engine limits up front, remaining raw errors, advice ----------------------------


def test_count_engine_limits_fail_before_the_runs_are_read(tmp_path):
    from irscale.experiment import plan_rank_maps

    for m in ("RBP(p=0.9)", "DCG(base=2)"):
        with pytest.raises(IrscaleError, match="a half of the pair count would hold"):
            plan_rank_maps([m], 60, 2)
    q = _write(tmp_path, "q.txt", QRELS.replace(" 2\n", " 1\n"))  # binary
    broken = _write(tmp_path, "broken.txt", "not a run\n")
    msg = one_error_line(cli("transform", q, broken, "-m", "RBP(p=0.9)", "-N", "60"))
    assert "pair count" in msg and "broken.txt" not in msg


def test_run_length_is_bounded(files):
    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    with pytest.raises(ArgumentError, match="depth must be at most 10000"):
        irscale.transform(t, "P", depth=10**9)
    with pytest.raises(ArgumentError, match="run length N must be at most 10000"):
        irscale.scales.build("AP", 10**7)
    msg = one_error_line(cli("transform", q, runs, "-m", "P", "-N", "1000000000"))
    assert "at most 10000" in msg


@pytest.mark.slow
def test_graded_no_engine_message_says_what_to_type(files):
    q, runs = files
    msg = one_error_line(cli("transform", q, runs, "-m", "ERR", "-N", "23"))  # graded ERR beyond the split engine
    assert "3 relevance levels" in msg and "-N 22 or less" in msg and "--max-grade 1" in msg
    assert cli("transform", q, runs, "-m", "ERR", "-N", "23", "--max-grade", "1").exit_code == 0


def test_more_api_misuse_gives_clear_errors(files, tmp_path):
    from irscale import scales
    from irscale.io import read_runs

    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    two = _write(tmp_path, "two.txt", RUN + RUN2)
    rm = scales.build("ERR", 3, 3, cache=False)
    cases = [
        (lambda: irscale.compare(t, ["AP"], 3, tests=None), ArgumentError, "tests must be a test name"),
        (lambda: irscale.read_qrels(123), ArgumentError, "a file path"),
        (lambda: irscale.read_run(None), ArgumentError, "a file path"),
        (lambda: irscale.read_qrels(str(q).encode()), ArgumentError, "a file path"),
        (lambda: irscale.meaningful(lambda d: True, {"a": [1.0]}, seed="x"), ArgumentError, "seed must be"),
        (lambda: irscale.evaluate(q, runs, "AP", progress=5), ArgumentError, "progress must be a function"),
        (lambda: irscale.evaluate(q, runs, "AP", max_grade=10**12), ArgumentError, "max_grade must be at most"),
        (lambda: irscale.evaluate(q, t.judged, "AP", max_grade=2), ArgumentError, "judged already"),
        (lambda: read_runs(two, split_tags="no"), ArgumentError, "split_tags must be True or False"),
        (lambda: scales.build("AP", 5, engine="bogus"), PolicyError, "engine must be one of"),
        (lambda: scales.build("AP", True), ArgumentError, "must be an integer"),
        (lambda: scales.build("AP", 5, levels=1), ArgumentError, "levels must be at least 2"),
        (lambda: scales.build("AP", 5, levels=2.5), ArgumentError, "levels must be an integer"),
        (lambda: rm.phi_runs(np.zeros((1, 3), dtype=int), ties="avg"), PolicyError, "ties must be one of"),
        (lambda: rm.phi_runs(np.zeros((1, 4), dtype=int)), ArgumentError, "(n, 3) integer array"),
        (lambda: rm.phi_runs(np.full((1, 3), 5)), ArgumentError, "grades must be in 0..2"),
        (lambda: irscale.evaluate(q, runs, b"AP"), ArgumentError, "measures must be"),
    ]
    for call, kind, fragment in cases:
        with pytest.raises(kind) as ei:
            call()
        assert fragment in str(ei.value), (fragment, str(ei.value))
    assert cli("rankmap", "AP", "--levels", "0").exit_code == 2
    assert cli("rankmap", "AP", "-N", "5", "--show", "-3").exit_code == 2


def test_rankmap_takes_measures_without_cutoff(tmp_path, monkeypatch):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    res = cli("rankmap", "gP", "-N", "6", "--levels", "3")
    assert res.exit_code == 0 and "13 distinct values" in res.stdout
    msg = one_error_line(cli("rankmap", "AP", "-N", "41", "--engine", "split"))
    assert "--engine auto" in msg


def test_same_file_twice_is_named(files):
    q, runs = files
    msg = one_error_line(cli("evaluate", q, runs / "r.txt", runs / "r.txt"))
    assert "r.txt is given more than once" in msg


def test_max_grade_warning_names_the_first_line_in_file_order(tmp_path):
    q = _write(tmp_path, "q.txt", "2 0 a 9\n1 0 b 7\n1 0 c 1\n")
    r = _write(tmp_path, "r.txt", "1 Q0 b 1 2 r\n2 Q0 a 1 2 r\n")
    with pytest.warns(
        IrscaleWarning, match=r"q.txt:1: 2 judgement\(s\) have a grade above --max-grade 3 \(the first: 9\)"
    ):
        irscale.evaluate(q, r, "ERR", max_grade=3)
    qb = _write(tmp_path, "qb.txt", "\ufeff1 0 z 1000\n" + QRELS)
    with pytest.warns(IrscaleWarning, match=r"qb.txt:1: top grade 1000"):
        irscale.evaluate(qb, r, "ERR")


# -- issue 10's first two bugs (found while testing this one) --------------------------------------


def test_compare_takes_recall_base_dependence_from_the_measure(files):
    q, runs = files
    t = irscale.evaluate(q, runs, "AP")
    st = irscale.compare(
        t,
        ["nDCG", "nDCG(base=2,rel=1)", "AP(rel=2)", "P", "RBP(p=0.8)"],
        depth=3,
        tests=["ranksum", "ttest"],
        mid=False,
    )
    rb = dict(zip(st.table2["measure"], st.table2["rb_dependent"]))
    assert rb == {
        "nDCG@3": True,
        "nDCG(base=2,rel=1)@3": True,
        "AP(rel=2)@3": True,
        "P@3": False,
        "RBP(p=0.8)@3": False,
    }
    ch = st.changes.set_index("measure")
    for m in ("nDCG@3", "nDCG(base=2,rel=1)@3", "AP(rel=2)@3"):  # pooled or summed across topics: not meaningful
        assert not ch.loc[m, "meaningful"].any() and not ch.loc[m, "meaningful_ranked"].any()


def test_transformed_table_prints_in_trec_eval_layout(files):
    from irscale.report import tables

    q, runs = files
    t = irscale.transform(irscale.evaluate(q, runs, "AP"), ["AP", "P"], depth=3)
    text = tables.trec_eval_text(t, per_topic=True)
    assert "ranked(AP@3)" in text and "\nmap_cut_3 " in "\n" + text
    res = cli("transform", q, runs, "-m", "AP", "-N", "3", "--trec-eval", "-q")
    assert res.exit_code == 0 and "ranked(AP@3)" in res.stdout and "runid" in res.stdout
