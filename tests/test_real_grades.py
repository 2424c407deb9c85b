"""Real-valued grades (LLM judges, graded pools): qrels grades such as 0.5 or 1.7.

Every number irscale writes for them is checked against a plain ``fractions.Fraction``
reference written here from the measures' definitions, sharing no code with irscale (it
reads the files itself, orders the runs itself and uses no irscale function); φ against
a count over every run of the levels; and integer files against themselves: a file
whose grades are whole numbers reads as before, and real grades equal the integer codes
given the same grades as an explicit gain map, bit for bit.
"""

from __future__ import annotations

import csv
import itertools
import math
import random
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, need
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import irscale
from irscale import cli
from irscale.errors import ArgumentError, InputFormatError, MeasureError
from irscale.io import read_qrels
from irscale.io.trec import parse_qrels

TOY = Path(irscale.__file__).parent / "examples" / "toy"

# -- the reference: plain Fractions, from the definitions ---------------------------------------


def read_grades(path: Path) -> dict[str, dict[str, Fraction]]:
    out: dict[str, dict[str, Fraction]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            out.setdefault(f[0], {})[f[2]] = Fraction(f[3])
    return out


def read_ranking(path: Path) -> dict[str, list[str]]:
    """Each topic's docnos in trec_eval's order: score descending, then docno descending."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            rows.setdefault(f[0], []).append((float(f[4]), f[2]))
    return {q: [d for _, d in sorted(r, reverse=True)] for q, r in rows.items()}


class Ref:
    """The measures of one ranked list against one topic's judgements, from their definitions."""

    def __init__(self, judged: dict[str, Fraction], ranking: list[str], top: Fraction):
        self.judged, self.top = judged, top  # top: the highest grade of the whole qrels
        self.g = [judged.get(d) for d in ranking]  # None: unjudged

    def gain(self, g, gains=None) -> Fraction:
        if g is None or g <= 0:
            return Fraction(0)
        return (gains or {}).get(g, g)

    def rel(self, g, t) -> bool:
        return g is not None and g >= 0 and g >= t

    def R(self, t):
        return sum(1 for g in self.judged.values() if g >= 0 and g >= t)

    def P_at(self, t, k):
        return Fraction(sum(self.rel(g, t) for g in self.g[:k]), k)

    def R_at(self, t, k):
        return Fraction(sum(self.rel(g, t) for g in self.g[:k]), self.R(t)) if self.R(t) else Fraction(0)

    def AP(self, t):
        hits, total = 0, Fraction(0)
        for i, g in enumerate(self.g, 1):
            if self.rel(g, t):
                hits += 1
                total += Fraction(hits, i)
        return total / self.R(t) if self.R(t) else Fraction(0)

    def RR(self, t):
        return next((Fraction(1, i) for i, g in enumerate(self.g, 1) if self.rel(g, t)), Fraction(0))

    def DCG(self, k, gains=None) -> float:
        return sum(float(self.gain(g, gains)) / math.log2(i + 1) for i, g in enumerate(self.g[:k], 1))

    def nDCG(self, k, gains=None) -> float:
        ideal = sorted((self.gain(g, gains) for g in self.judged.values()), reverse=True)[:k]
        idcg = sum(float(x) / math.log2(i + 1) for i, x in enumerate(ideal, 1))
        return self.DCG(k, gains) / idcg if idcg else 0.0

    def RBP(self, p, k=None, t=None):
        g = self.g[:k] if k else self.g
        if t is None:
            return (1 - p) * sum(self.gain(x) / self.top * p**i for i, x in enumerate(g))
        return (1 - p) * sum(p**i for i, x in enumerate(g) if self.rel(x, t))

    def gP(self, k, gains=None):
        return sum(self.gain(x, gains) for x in self.g[:k]) / (self.gain(self.top, gains) * k)

    def gR(self):
        base = sum(self.gain(x) for x in self.judged.values())
        return sum(self.gain(x) for x in self.g) / base if base else Fraction(0)


MAP = {Fraction(1, 2): Fraction(3, 5), Fraction(17, 10): Fraction(2)}  # monotone over POOL
CASES = {  # name -> the reference of one (judgements, ranking) pair
    "P(rel=0.5)@5": lambda r: r.P_at(Fraction(1, 2), 5),
    "P(rel=1/3)@3": lambda r: r.P_at(Fraction(1, 3), 3),
    "R(rel=0.75)@5": lambda r: r.R_at(Fraction(3, 4), 5),
    "AP(rel=0.25)": lambda r: r.AP(Fraction(1, 4)),
    "AP": lambda r: r.AP(Fraction(1)),
    "RR(rel=1.7)": lambda r: r.RR(Fraction(17, 10)),
    "DCG@5": lambda r: r.DCG(5),
    "nDCG@5": lambda r: r.nDCG(5),
    "nDCG": lambda r: r.nDCG(None),
    "nDCG(gains=0.5:3/5,1.7:2)@5": lambda r: r.nDCG(5, MAP),
    "RBP(p=0.5)": lambda r: r.RBP(Fraction(1, 2)),
    "RBP(p=0.8)@5": lambda r: r.RBP(Fraction(4, 5), 5),
    "RBP(p=0.5,rel=0.5)": lambda r: r.RBP(Fraction(1, 2), t=Fraction(1, 2)),
    "gP@5": lambda r: r.gP(5),
    "gP(gains=0.5:3/5,1.7:2)@5": lambda r: r.gP(5, MAP),
    "gR": lambda r: r.gR(),
}


def reference(qrels: Path, runs: list[Path], name: str) -> np.ndarray:
    judged = read_grades(qrels)
    top = max(g for t in judged.values() for g in t.values())
    out = []
    for run in runs:
        ranking = read_ranking(run)
        out.append([float(CASES[name](Ref(judged[q], ranking.get(q, []), top))) for q in sorted(judged)])
    return np.array(out)


# -- collections drawn at random: grades from a pool of decimals, runs with unjudged documents ---

POOL = ["0", "0.1", "0.25", "0.5", "0.50", "0.75", "1", "1.7", "2.35", "-0.5", "3e-1"]


def write_collection(dir: Path, rng: random.Random, systems: int, topics: int) -> tuple[Path, list[Path]]:
    """A qrels file whose grades are drawn from POOL (0.5 and 1.7 always among them) and
    ``systems`` runs of 1-8 documents per topic, some unjudged, distinct scores."""
    lines = []
    for t in range(topics):
        docs = [f"d{t}-{k}" for k in range(rng.randint(2, 7))]
        grades = ["0.5", "1.7"] + [rng.choice(POOL) for _ in docs[2:]] if t == 0 else [rng.choice(POOL) for _ in docs]
        lines += [f"q{t} 0 {d} {g}" for d, g in zip(docs, grades)]
    qrels = dir / "qrels.txt"
    qrels.write_text("\n".join(lines) + "\n")
    runs = []
    for s in range(systems):
        rows = []
        for t in range(topics):
            docs = rng.sample([f"d{t}-{k}" for k in range(9)], rng.randint(1, 8))
            rows += [f"q{t} Q0 {d} {i} {100 - i - rng.random() / 2:.6f} s{s}" for i, d in enumerate(docs)]
        runs.append(dir / f"s{s}.txt")
        runs[-1].write_text("\n".join(rows) + "\n")
    return qrels, runs


def quiet_evaluate(*a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(*a, **kw)


def column(table, name: str) -> np.ndarray:
    return table.values[[str(m) for m in table.measures].index(name)]


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), systems=st.integers(1, 4), topics=st.integers(1, 5))
def test_every_measure_equals_the_fraction_reference(tmp_path_factory, seed, systems, topics):
    d = tmp_path_factory.mktemp("real")
    qrels, runs = write_collection(d, random.Random(seed), systems, topics)
    table = quiet_evaluate(qrels, runs, list(CASES))
    assert [str(m) for m in table.measures] == list(CASES)  # named as written, never as computed
    for name in CASES:
        np.testing.assert_allclose(column(table, name), reference(qrels, runs, name), rtol=1e-12, atol=1e-15)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), N=st.integers(2, 4))
def test_transform_values_and_phi_on_the_levels_present(tmp_path_factory, seed, N):
    """transform's exact values equal the reference, and φ ("unq" and "mid") equals a count
    over every run of N documents on the grades present: RBP and gP (exact fractions),
    P at a real threshold."""
    d = tmp_path_factory.mktemp("phi")
    qrels, runs = write_collection(d, random.Random(seed), 3, 3)
    names = ["RBP(p=0.5)", "gP", "P(rel=0.5)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(
            quiet_evaluate(qrels, runs, ["P@1"]), names, depth=N, ties=("unq", "mid"), exact_values=True
        )
    levels = sorted({g for t_ in read_grades(qrels).values() for g in t_.values() if g > 0})
    top = levels[-1]
    grades = [Fraction(0), *levels]
    value = {
        "RBP(p=0.5)": lambda run: sum(g / top * Fraction(1, 2) ** i for i, g in enumerate(run)) / 2,
        "gP": lambda run: sum(run) / (top * N),
        "P(rel=0.5)": lambda run: Fraction(sum(g >= Fraction(1, 2) for g in run), N),
    }
    judged, rankings = read_grades(qrels), [read_ranking(r) for r in runs]
    for name in names:  # a binary measure ranks over the 2^N binary runs (relevant at grade >= 0.5, or not)
        space = [Fraction(0), Fraction(1, 2)] if name.startswith("P(") else grades
        every = sorted(value[name](run) for run in itertools.product(space, repeat=N))
        distinct = sorted(set(every))
        for s, ranking in enumerate(rankings):
            for k, q in enumerate(sorted(judged)):
                run = [max(judged[q].get(doc, Fraction(0)), Fraction(0)) for doc in ranking.get(q, [])[:N]]
                v = value[name](run + [Fraction(0)] * (N - len(run)))
                assert column(t, f"{name}@{N}")[s, k] == pytest.approx(float(v), rel=1e-12)
                assert column(t, f"ranked({name}@{N})")[s, k] == distinct.index(v) + 1
                below, upto = sum(x < v for x in every), sum(x <= v for x in every)
                assert column(t, f"ranked({name}@{N}, ties=mid)")[s, k] == (below + 1 + upto) / 2


# -- real grades are their level codes with the grades as gains -----------------------------------


def test_real_grades_equal_integer_codes_with_the_grades_as_gain_map(tmp_path):
    """The same judgements written with grades 0, 0.3, 1.7 and with 0, 1, 2: every measure,
    ranked column and φ equal the integer file's measure given those grades as a gain map
    (rel=0.3 as rel=1), bit for bit."""
    real = (TOY / "qrels.txt").read_text().replace(" 1\n", " 0.3\n").replace(" 2\n", " 1.7\n")
    (tmp_path / "real.txt").write_text(real)
    pairs = {
        "nDCG@10": "nDCG(gains=0:0,1:0.3,2:1.7)@10",
        "DCG@10": "DCG(gains=0:0,1:0.3,2:1.7)@10",
        "RBP(p=0.5)@10": "RBP(p=0.5,gains=1:0.3,2:1.7)@10",
        "gP@10": "gP(gains=1:0.3,2:1.7)@10",
        "P(rel=0.3)@10": "P@10",
        "AP(rel=1.7)@10": "AP(rel=2)@10",
        "SBTO@5": "SBTO@5",
    }
    a = quiet_evaluate(tmp_path / "real.txt", TOY / "runs", list(pairs))
    b = quiet_evaluate(TOY / "qrels.txt", TOY / "runs", list(pairs.values()))
    np.testing.assert_array_equal(a.values, b.values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ta = irscale.transform(a, ["nDCG", "RBP(p=0.5)", "P(rel=0.3)"], depth=5, ties=("unq", "mid"))
        tb = irscale.transform(
            b, [pairs["nDCG@10"].replace("@10", ""), "RBP(p=0.5,gains=1:0.3,2:1.7)", "P"], depth=5, ties=("unq", "mid")
        )
    np.testing.assert_array_equal(ta.values, tb.values)
    assert ta.provenance["grade_values"] == ["0", "0.3", "1.7"] and "grade_values" not in tb.provenance


def test_scaled_grades_give_the_integer_files_interval_scale(tmp_path):
    """Grades 0, 0.5, 1, 1.5, 2 are DL 2019's 0-3 halved... here the toy's 0-2 halved:
    nDCG and RBP (gain over the top gain) and every φ equal the integer file's, bit for bit."""
    halved = (TOY / "qrels.txt").read_text().replace(" 1\n", " 0.5\n").replace(" 2\n", " 1\n")
    (tmp_path / "half.txt").write_text(halved)
    a = quiet_evaluate(tmp_path / "half.txt", TOY / "runs", ["P(rel=0.5)@10", "RBP(p=0.8)@10", "gP@10"])
    b = quiet_evaluate(TOY / "qrels.txt", TOY / "runs", ["P@10", "RBP(p=0.8)@10", "gP@10"])
    np.testing.assert_array_equal(a.values, b.values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ta = irscale.transform(a, ["nDCG", "P(rel=0.5)", "RBP(p=0.8)"], depth=6, ties=("unq", "min", "mid"))
        tb = irscale.transform(b, ["nDCG", "P", "RBP(p=0.8)"], depth=6, ties=("unq", "min", "mid"))
    M = 3  # nDCG differs from the integer file's only by the scale of its core (DCG): the ranked columns agree
    np.testing.assert_array_equal(ta.values[M:], tb.values[M:])
    np.testing.assert_allclose(ta.values[:M], tb.values[:M], rtol=1e-15)


def test_integer_files_read_and_score_as_before():
    """An integer qrels file is read to the same arrays as before (no level table) and every
    measure is computed by itself: for_grades returns the very same object."""
    q = read_qrels(TOY / "qrels.txt")
    assert q.values is None and q.grade.dtype == np.int16
    for name in ["AP", "P(rel=2)@10", "nDCG@10", "RBP(p=0.8)", "ERR@10", "gP(gains=0:0,1:1,2:3)@5", "SBTO@5"]:
        m = irscale.measures.parse_measure(name)
        assert m.for_grades(None) is m
    decimal = (TOY / "qrels.txt").read_text().replace(" 1\n", " 1.0\n").replace(" 2\n", " 2.00\n")
    q2 = parse_qrels(decimal.encode(), "q")
    assert q2.values is None and np.array_equal(q2.grade, q.grade)


def test_reader_reads_each_grade_exactly():
    q = parse_qrels(b"1 0 a 0.1\n1 0 b 0.50\n1 0 c 2.5e-1\n1 0 d 0.5\n2 0 a -0.5\n2 0 b 0\n2 0 c 1.70\n", "q")
    assert q.values == (0, Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(17, 10))
    assert q.grade.tolist() == [1, 3, 2, 3, -1, 0, 4]  # topic 1: a 0.1, b 0.50, c 0.25, d 0.5; topic 2
    assert q.to_frame().grade.tolist() == [0.1, 0.5, 0.25, 0.5, -1.0, 0.0, 1.7]
    assert [q.grade_text(k) for k in range(5)] == ["0", "0.1", "0.25", "0.5", "1.7"]


@pytest.mark.parametrize(
    "grade, said",
    [
        ("nan", "must be a finite number"),
        ("-inf", "must be a finite number"),
        ("1e400", "exponent is out of range"),
        ("0.5e-40", "exponent is out of range"),
        ("32000.5", "out of the supported range"),
        ("0,5", "must be a number, found '0,5'"),
        ("½", "must be a number"),
    ],
)
def test_bad_real_grades_name_the_line(grade, said):
    with pytest.raises(InputFormatError) as e:
        parse_qrels(f"1 0 a 0.5\n1 0 b 1\n1 0 c {grade}\n".encode(), "q.txt")
    assert e.value.line == 3 and said in str(e.value) and str(e.value).startswith("q.txt:3: ")


def test_in_memory_qrels_take_real_grades():
    import pandas as pd

    frame = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"], "relevance": [0.5, 1.7, 0.0]})
    run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["c", "b", "a"], "score": [3.0, 2.0, 1.0]})
    t = quiet_evaluate(frame, run, ["P(rel=0.5)@3", "nDCG@3"])
    assert t.values[0, 0, 0] == pytest.approx(2 / 3)
    ideal = 1.7 + 0.5 / math.log2(3)
    assert t.values[1, 0, 0] == pytest.approx((1.7 / math.log2(3) + 0.5 / 2) / ideal, rel=1e-14)


# -- refusals: what cannot be exact is refused with the reason, before any run is read ------------


@pytest.fixture
def real_qrels(tmp_path):
    p = tmp_path / "real.txt"
    p.write_text((TOY / "qrels.txt").read_text().replace(" 1\n", " 0.5\n"))
    return p


@pytest.mark.parametrize(
    "measure, said",
    [
        ("ERR@10", ["irrational at a real-valued grade", "ERR(rel=0.5)"]),
        ("nDCG(gains=exp)@10", ["2^g - 1 is not a rational number", "gains=0.5:1"]),
        ("nDCG(gains=0.5:3,2:1)@10", ["gains must not decrease", "grade 2"]),
        ("RBTO@5", None),  # the order of the levels only: served
        ("ERR(rel=0.5)@10", None),
    ],
)
def test_what_real_grades_refuse(real_qrels, measure, said):
    if said is None:
        quiet_evaluate(real_qrels, TOY / "runs", [measure])
        return
    with pytest.raises(MeasureError) as e:
        quiet_evaluate(real_qrels, TOY / "runs", [measure])
    assert all(s in str(e.value) for s in said), str(e.value)


def test_max_grade_and_function_measures_refuse_real_grades(real_qrels):
    with pytest.raises(ArgumentError, match="caps integer grades, and these grades are real-valued"):
        quiet_evaluate(real_qrels, TOY / "runs", ["AP"], max_grade=1)
    f = irscale.measures.FunctionMeasure(fn=lambda runs, c: runs.sum(axis=1), name="mine", cutoff=5)
    with pytest.raises(MeasureError, match="mine: its values use the grades as integers"):
        quiet_evaluate(real_qrels, TOY / "runs", [f])


def test_cli_refuses_before_reading_the_runs(real_qrels):
    res = CliRunner().invoke(cli.app, ["transform", str(real_qrels), str(TOY / "runs"), "-m", "ERR", "-N", "5"])
    assert res.exit_code != 0 and "irrational" in res.output
    assert "rank maps" not in res.output  # refused by the plan, not after the work


def test_rel_level_takes_a_decimal(real_qrels):
    res = CliRunner().invoke(
        cli.app, ["evaluate", str(real_qrels), str(TOY / "runs"), "-m", "P@5", "-l", "0.5", "-f", "csv"]
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(res.stdout.strip().splitlines()))
    assert {r["measure"] for r in rows} == {"P(rel=0.5)@5"}
    runs = sorted((TOY / "runs").iterdir())
    ref = reference(real_qrels, runs, "P(rel=0.5)@5").mean(axis=1)
    assert [float(r["value"]) for r in rows] == pytest.approx(ref.tolist(), abs=5e-5)
    assert [r["system"] for r in rows] == [r.stem for r in runs]
    bad = CliRunner().invoke(cli.app, ["evaluate", str(real_qrels), str(TOY / "runs"), "-l", "0"])
    assert bad.exit_code != 0 and "must be a grade above 0" in bad.output


# -- end to end: the files compare writes, re-derived here ----------------------------------------


def test_compare_report_on_real_grades_equals_the_reference(tmp_path):
    """`irscale compare` on a real-valued qrels file: the scores file it writes holds, for
    every measure, system and topic, the reference's value and its rank ("unq" and "mid")
    over every run of N documents on the five grades; the provenance names the grades;
    the measures are named as written."""
    qrels = tmp_path / "llm.txt"
    rng = random.Random(7)
    grades = ["0", "0.2", "0.5", "0.9", "1.3"]
    lines = [f.rsplit(" ", 1)[0] + f" {rng.choice(grades)}" for f in (TOY / "qrels.txt").read_text().splitlines()]
    qrels.write_text("\n".join(lines) + "\n")
    out, N = tmp_path / "study", 5
    names = ["P(rel=0.5)", "nDCG", "RBP(p=0.5)"]
    args = ["compare", str(qrels), str(TOY / "runs"), "-N", str(N), "--out", str(out), "--test", "ttest"]
    res = CliRunner().invoke(cli.app, [*args, "--no-figures", *(a for n in names for a in ("-m", n))])
    assert res.exit_code == 0, res.output
    import yaml

    prov = yaml.safe_load((out / "provenance_N5.yaml").read_text())
    assert prov["grade_values"] == grades and prov["levels"] == 5 and prov["measures"] == [f"{n}@5" for n in names]
    with open(out / "scores_N5.csv") as f:
        rows = list(csv.DictReader(f))
    runs = sorted((TOY / "runs").iterdir())
    judged, top = read_grades(qrels), Fraction(13, 10)
    topics = sorted(judged)
    ref = {n: reference(qrels, runs, n) for n in ("P(rel=0.5)@5", "nDCG@5")}
    ref["RBP(p=0.5)@5"] = np.array(
        [[float(Ref(judged[q], read_ranking(r).get(q, []), top).RBP(Fraction(1, 2), N)) for q in topics] for r in runs]
    )
    levels = [Fraction(g) for g in grades]
    value = {  # the measures whose values are exact fractions: their rank over every run
        "P(rel=0.5)@5": lambda run: sum(g >= Fraction(1, 2) for g in run),
        "RBP(p=0.5)@5": lambda run: sum(g * Fraction(1, 2) ** i for i, g in enumerate(run)),
    }
    spaces = {"P(rel=0.5)@5": [Fraction(0), Fraction(1)], "RBP(p=0.5)@5": levels}  # a binary measure: 2^N runs
    every = {m: sorted(f(run) for run in itertools.product(spaces[m], repeat=N)) for m, f in value.items()}
    seen = set()
    for row in rows:
        m = row["measure"]
        s, k = [r.stem for r in runs].index(row["system"]), topics.index(row["topic"])
        assert float(row["value"]) == pytest.approx(ref[m][s, k], rel=1e-12, abs=1e-12)
        if m in value:
            ranking = read_ranking(runs[s]).get(row["topic"], [])[:N]
            run = [max(judged[row["topic"]].get(d, Fraction(0)), Fraction(0)) for d in ranking]
            v = value[m](run + [Fraction(0)] * (N - len(run)))
            assert float(row["ranked"]) == sorted(set(every[m])).index(v) + 1
            below, upto = sum(x < v for x in every[m]), sum(x <= v for x in every[m])
            assert float(row["ranked_mid"]) == (below + 1 + upto) / 2
        seen.add(m)
    assert seen == set(ref) and len(rows) == 3 * len(runs) * len(topics)


# -- real data: DL 2019's grades 0-3 as an LLM judge's probabilities --------------------------------


@pytest.mark.slow
def test_dl19_with_real_valued_grades(tmp_path):
    """DL 2019's qrels with grades 0, 1, 2, 3 written as 0, 0.25, 0.5, 1.0 (how a judge giving
    probabilities would write them): all 37 runs score, transform and rank at N = 10 on the
    four levels exactly as the integer file does with those grades as gains, bit for bit."""
    dl19 = need(DATA / "dl19")
    as_real = {"0": "0", "1": "0.25", "2": "0.5", "3": "1.0"}
    lines = (dl19 / "qrels.dl19-passage.txt").read_text().splitlines()
    (tmp_path / "real.txt").write_text(
        "\n".join(f"{x.rsplit(' ', 1)[0]} {as_real[x.rsplit(' ', 1)[1]]}" for x in lines) + "\n"
    )
    runs = sorted((dl19 / "runs").glob("*.gz"))
    gains = "gains=1:1/4,2:1/2,3:1"
    pairs = {
        "nDCG@10": f"nDCG({gains})@10",
        "RBP(p=0.8)": f"RBP(p=0.8,{gains})",
        "P(rel=0.5)@10": "P(rel=2)@10",
        "AP(rel=0.25)": "AP",
        "gR": f"gR({gains})",
    }
    a = quiet_evaluate(tmp_path / "real.txt", runs, list(pairs), score_precision="float32")
    b = quiet_evaluate(dl19 / "qrels.dl19-passage.txt", runs, list(pairs.values()), score_precision="float32")
    assert len(a.systems) == 37 and [str(m) for m in a.measures] == list(pairs)
    np.testing.assert_array_equal(a.values, b.values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ta = irscale.transform(a, ["nDCG", "P(rel=0.5)"], depth=10, ties=("unq", "mid"))
        tb = irscale.transform(b, [f"nDCG({gains})", "P(rel=2)"], depth=10, ties=("unq", "mid"))
    np.testing.assert_array_equal(ta.values, tb.values)
    assert ta.provenance["grade_values"] == ["0", "0.25", "0.5", "1"]
    nd = ta.provenance["transform"]["maps"]["nDCG@10"]  # named as written, with what it was computed as
    assert nd["levels"] == 4 and nd["computed_as"] == "nDCG(gains=0:0,1:1/4,2:1/2,3:1)@10"


def test_written_runs_say_the_grades(real_qrels, tmp_path):
    """A transformed table written as run files (transform --run-out) says in its ir_metadata
    header which grades the levels were, and what the measure was computed as."""
    from irscale.io import read_run
    from irscale.report.runs import write_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = irscale.transform(quiet_evaluate(real_qrels, TOY / "runs", ["P@1"]), ["nDCG"], depth=5)
    paths = write_runs(t, tmp_path / "out")
    header = read_run(next(p for p in paths if "ranked" in p.name)).metadata
    evaluation = header["method"]["evaluation"]
    assert evaluation["grade_values"] == ["0", "0.5", "2"]
    assert evaluation["rank map"]["computed_as"] == "nDCG(gains=0:0,1:1/2,2:2)@5"


# -- from the review: lenient, names in figures, the ir_measures integration, edge cases ------------


def test_lenient_is_refused_on_real_grades_before_any_run_is_read(real_qrels):
    """Lenient binarises integer grades at 1; on real grades a threshold is the user's to give:
    refused in the API and on the command line, where the runs are not read."""
    table = quiet_evaluate(real_qrels, TOY / "runs", ["P@5"])
    for call in (
        lambda: irscale.transform(table, ["P(rel=0.5)"], depth=5, relevance="lenient"),
        lambda: irscale.compare(table, ["nDCG"], depth=5, relevance="lenient", tests=["ttest"]),
    ):
        with pytest.raises(ArgumentError, match="binarises integer grades at grade >= 1, and these qrels have real"):
            call()
    res = CliRunner().invoke(
        cli.app, ["transform", str(real_qrels), "no-such-run.txt", "-m", "P", "-N", "5", "--relevance", "lenient"]
    )
    assert res.exit_code != 0 and "binarises integer grades" in res.output and "no-such-run" not in res.output


def test_notes_and_advice_on_real_grades_never_suggest_lenient(real_qrels):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        t = irscale.evaluate(real_qrels, TOY / "runs", ["nDCG@5"])
        t.mean()
        irscale.transform(t, ["nDCG"], depth=5)
    said = " ".join(str(w.message) for w in seen)
    assert "graded qrels" in said and "rel= binarises (rel=0.5" in said and "lenient" not in said


def test_evaluate_refuses_before_reading_the_runs(real_qrels):
    with pytest.raises(MeasureError, match="irrational"):
        irscale.evaluate(real_qrels, ["no-such-run.txt"], ["ERR@10"])


def test_a_users_binary_measure_without_rel_is_refused(real_qrels):
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Hits(irscale.measures.Measure):
        NAME = "Hits"
        cutoff: int | None = None

        def batch(self, grades, topics):
            return (grades[..., : self.cutoff] >= 1).sum(axis=-1).astype(float)

    with pytest.raises(MeasureError, match="Hits@5: its values use the grades as integers"):
        quiet_evaluate(real_qrels, TOY / "runs", [Hits(cutoff=5)])
    assert quiet_evaluate(real_qrels, TOY / "runs", ["NumRet"]).values.sum() > 0  # never looks at a grade


def test_negative_non_integer_grades_make_no_file_real_valued():
    q = parse_qrels(b"1 0 a -0.5\n1 0 b 0\n1 0 c 2\n", "q")
    assert q.values is None and q.grade.tolist() == [-1, 0, 2]


def test_rel_level_takes_a_fraction(real_qrels):
    res = CliRunner().invoke(cli.app, ["evaluate", str(real_qrels), str(TOY / "runs"), "-m", "P@5", "-l", "1/3"])
    assert res.exit_code == 0 and "P(rel=1/3)@5" in res.output, res.output


@pytest.mark.slow
def test_spacing_figure_names_the_measures_as_written(real_qrels, tmp_path):
    out = tmp_path / "sp"
    args = ["compare", str(real_qrels), str(TOY / "runs"), "-m", "P(rel=0.5)", "-m", "nDCG", "-N", "4"]
    res = CliRunner().invoke(cli.app, [*args, "--test", "ttest", "--spacing", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (line,) = [x for x in (out / "report_N4.md").read_text().splitlines() if "Values of" in x]
    assert "Values of P(rel=0.5), nDCG over all runs" in line and "gains=" not in line
    svg = (out / "figure6_spacing_N4.svg").read_text()
    assert "gains=" not in svg and "nDCG" in svg


def test_ir_measures_integration_on_real_grades():
    ir_measures = pytest.importorskip("ir_measures")
    from irscale.integrations.ir_measures import PROVIDER, ranked

    qrels = {"1": {"a": 0.5, "c": 1.7, "b": 0.0}, "2": {"a": 0.0, "b": -0.5}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"a": 1.0}}
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")  # topic 2 has no grade above 0: scored 0 without a word, as the peers do
        (value,) = [m.value for m in PROVIDER.iter_calc([ir_measures.nDCG @ 3], qrels, run) if m.query_id == "1"]
    # the one word said: the grades are real values, where the peers (pytrec_eval) read integers
    assert [str(w.message).split(": ", 1)[1].split(";")[0] for w in said] == [
        "grade 0.5 is not a whole number, so grades are real values"
    ]
    assert value == pytest.approx((0.5 + 1.7 / 2) / (1.7 + 0.5 / math.log2(3)), rel=1e-14)
    with pytest.raises(ArgumentError, match="levels=3 fixes the integer grades 0..2, and these qrels have real"):
        list(ir_measures.iter_calc([ranked("nDCG", N=3, levels=3)], qrels, run))
    with pytest.raises(ArgumentError, match="binarises integer grades"):
        list(ir_measures.iter_calc([ranked("P(rel=0.5)", N=3, relevance="lenient")], qrels, run))


def test_many_distinct_grades_are_refused_with_advice(tmp_path):
    """A judge writing two decimals gives dozens of levels: what no engine reaches is refused
    with advice for real grades (never --max-grade), SBTO's run counts before they are made."""
    rng = random.Random(3)
    lines = (TOY / "qrels.txt").read_text().splitlines()
    (tmp_path / "many.txt").write_text(
        "\n".join(f"{x.rsplit(' ', 1)[0]} 0.{rng.randint(1, 40):02d}" for x in lines) + "\n"
    )
    table = quiet_evaluate(tmp_path / "many.txt", TOY / "runs", ["P@1"])
    assert table.judged.topics.max_grade >= 30
    with pytest.raises(MeasureError) as e:
        irscale.transform(table, ["nDCG"], depth=10)
    assert "nDCG@10: no exact engine" in str(e.value) and "fewer distinct grades" in str(e.value)
    assert "max-grade" not in str(e.value) and "gains=" not in str(e.value)
    with pytest.raises(MeasureError, match="ties over all runs .* count the runs of every multiset"):
        irscale.transform(table, ["SBTO"], depth=10, ties="mid")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert irscale.transform(table, ["SBTO"], depth=10).values.shape[0] == 2  # "unq" needs no run counts


def test_qrels_from_records_take_fractions_and_floats():
    from irscale.io import Qrels

    q = Qrels.from_records([("1", "a", Fraction(1, 4)), ("1", "b", 0.5), ("1", "c", 2)])
    assert q.values == (0, Fraction(1, 4), Fraction(1, 2), 2) and q.grade.tolist() == [1, 2, 3]
