"""docs/guide.md's "Reproducing a p-value" (issue 37, item 4): the guide's numpy recipes for
the three randomised tests, taken from the page as written, recompute the p-values a study
reports bit for bit (``==``) from what the study writes (the scores file, the provenance's
``randomised_tests``, the comparisons with baselines).

The recipes import nothing of irscale; irscale here only builds and writes the studies, and
``study.pairs`` (the API) is the second place each p-value is read from. The studies
(seed 7, baselines ICT-BERT2 and TUA1-1, so that a baseline stands before and after the
system it is compared with):

* DL 2019 passage, the first 6 runs (sorted by file name), N = 10, 43 topics: the
  permutation test draws 100,000 sign vectors; P@10 (a lattice of tenths, where the
  permutation test's margin decides ties: the guide's 0.547 against 0.428 without it),
  RR@10 (1/k: the lattice of lcm(1..10)), nDCG@10 (floats); the ranked scores integers;
* the same runs on 16 of the topics under ``approx``: the permutation test visits all 2^16
  sign vectors, and the ranked columns (normalised) are tested over a power of two;
* the toy example (8 topics, exact), which runs wherever the shared data is absent.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, need

import irscale

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
TOY = Path(irscale.__file__).parent / "examples" / "toy"
RECIPE = re.compile(r"<!-- recipe: (\w+) -->\n```python\n(.*?)```", re.S)
BLOCKS = ("matrix", "permutation", "rtukey", "bootstrap", "usage")
TESTS = ("permutation", "rtukey", "bootstrap")
PARAMETERS = "out, N, measure, scale, baseline, system = "  # how the usage block starts
BASELINES = ["ICT-BERT2", "TUA1-1"]


def _blocks() -> dict[str, str]:
    found = RECIPE.findall(GUIDE.read_text(encoding="utf-8"))
    names = [name for name, _ in found]
    assert sorted(names) == sorted(BLOCKS), f"the guide's recipe blocks are {names}, expected each of {BLOCKS} once"
    return dict(found)


def _functions(blocks: dict[str, str], change: tuple[str, str, str] | None = None) -> dict:
    """The recipe functions, run in a namespace of their own; ``change``: (block, text, new
    text), a variant with one comparison changed (to show that it decides something)."""
    names: dict = {"__name__": "guide_recipe"}
    for name in BLOCKS[:-1]:
        code = blocks[name]
        if change is not None and change[0] == name:
            assert change[1] in code, f"the {name} recipe no longer holds {change[1]!r}"
            code = code.replace(change[1], change[2])
        exec(compile(code, f"docs/guide.md (recipe: {name})", "exec"), names)
    return names


@pytest.fixture(scope="module")
def blocks():
    found = _blocks()
    code = "".join(found.values())
    assert not re.search(r"\b(import irscale|from irscale|irscale\.)", code), "a recipe must not call into irscale"
    assert found["usage"].startswith(PARAMETERS), f"the usage block must start with {PARAMETERS!r}"
    return found


@pytest.fixture(scope="module")
def recipe(blocks):
    """The guide's recipe functions and its usage block."""
    return _functions(blocks), blocks["usage"]


def _study(out: Path, qrels, runs, measures, depth: int, baselines, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = irscale.evaluate(qrels, runs, measures)
        study = irscale.compare(
            table,
            measures,
            depth,
            tests=["randomised"],
            seed=7,
            baselines=baselines,
            effects=False,
            measure_free=False,
            **options,
        )
    study.write(out)
    return study


def _replay(recipe, study, out: Path, pairs) -> list[tuple]:
    """Run the guide's usage block on each (measure, scale, baseline, system) of ``pairs``:
    every line it prints must end in True (the recipe's p-value == the written one), and the
    p-value must equal ``study.pairs``' too. Returns (measure, scale, test, p) per line."""
    names, usage = recipe
    body = usage.split("\n", 1)[1]
    api = study.pairs.set_index(["measure", "scale", "test", "system_1", "system_2"])["p_value"]
    full = {t: irscale.stats.test_name(t) for t in TESTS}
    seen = []
    for measure, scale, baseline, system in pairs:
        head = f"{PARAMETERS}{str(out)!r}, {study.provenance['N']}, {measure!r}, {scale!r}, {baseline!r}, {system!r}\n"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(head + body, "docs/guide.md (recipe: usage)", "exec"), dict(names))
        lines = printed.getvalue().splitlines()
        assert [line.split()[0] for line in lines] == list(TESTS), lines
        for line in lines:
            test, p, same = line.split()
            where = (measure, scale, test, baseline, system)
            assert same == "True", f"{where}: the recipe gives {p}, the study wrote another p-value"
            assert float(p) == api[measure, scale, full[test], baseline, system], where
            seen.append((measure, scale, test, float(p)))
    return seen


@pytest.fixture(scope="module")
def dl19_runs():
    data = need(DATA / "dl19")
    return data / "qrels.dl19-passage.txt", sorted((data / "runs").glob("*.gz"))[:6]


@pytest.mark.slow  # about 8 s on two cores
def test_the_recipes_give_a_drawn_studys_pvalues(recipe, blocks, dl19_runs, tmp_path_factory):
    """43 topics: the permutation test's 100,000 drawn sign vectors, rtukey's permutations and
    the bootstrap's resamples; lattice scores (P@10, RR@10), floats (nDCG@10) and integers
    (the ranked scores), each baseline before and after its other system."""
    qrels, runs = dl19_runs
    out = tmp_path_factory.mktemp("drawn")
    measures = ["P@10", "RR@10", "nDCG@10"]
    study = _study(out, qrels, runs, ["P", "RR", "nDCG"], 10, BASELINES)
    assert len(study.topics) == 43
    assert study.provenance["randomised_tests"]["permutation"] == {
        "resamples": 100_000,
        "seed": 7,
        "plus_one_correction": True,
    }
    pairs = [
        (m, scale, *pair)
        for m in measures
        for scale, pair in (("original", ("ICT-BERT2", "ICT-CKNRM_B")), ("ranked", ("TUA1-1", "ICT-CKNRM_B50")))
    ]
    seen = _replay(recipe, study, out, pairs)
    assert len(seen) == 3 * len(pairs)
    assert len({p for *_, p in seen}) > 12  # distinct p-values, not a few constants

    # the guide's example: on P@10's tenths the margin decides the ties; the same sign
    # vectors compared without it give another p-value
    names, _ = recipe
    X, systems = names["study_matrix"](out, 10, "P@10", "value")
    assert names["lattice"](X)[1] == 10 and names["lattice"](names["study_matrix"](out, 10, "RR@10", "value")[0])
    a, b = systems.index("ICT-BERT2"), systems.index("ICT-CKNRM_B")
    reported = names["permutation_p"](X, a, b, 7, 100_000)
    assert reported == next(p for m, s, t, p in seen if (m, s, t) == ("P@10", "original", "permutation"))
    signs = 1.0 - 2.0 * np.random.default_rng(7).integers(0, 2, size=(100_000, len(X)))
    d = X[:, a] - X[:, b]
    naive = (int((np.abs(signs @ d) >= abs(d.sum())).sum()) + 1) / 100_001
    assert (round(reported, 3), round(naive, 3)) == (0.547, 0.428)
    # rtukey's margin decides this pair too: ranges equal to its difference of means
    rtukey = next(p for m, s, t, p in seen if (m, s, t) == ("P@10", "original", "rtukey"))
    bare = _functions(blocks, ("rtukey", "- tol).sum()", ").sum()"))["rtukey_p"](X, a, b, 7, 10_000)
    assert bare != rtukey


@pytest.mark.slow  # about 3 s
def test_the_recipes_give_an_exact_approx_studys_pvalues(recipe, blocks, dl19_runs, tmp_path_factory):
    """16 topics: all 2^16 sign vectors (no draw), and under approx the ranked columns the
    tests saw divided by a power of two (the usage block does so from the provenance); one
    pair whose bootstrap p-value the (1 - 1e-12) margin decides."""
    qrels, runs = dl19_runs
    out = tmp_path_factory.mktemp("exact")
    lines = qrels.read_text(encoding="utf-8").splitlines()
    keep = sorted({line.split()[0] for line in lines})[:16]
    small = out / "qrels16.txt"
    small.write_text("".join(line + "\n" for line in lines if line.split()[0] in keep), encoding="utf-8")
    study = _study(out, small, runs, ["P", "RR", "nDCG"], 10, BASELINES, approx=1e-3)
    assert len(study.topics) == 16 and study.provenance["approx"] == 1e-3
    assert study.provenance["randomised_tests"]["permutation"] == {"exact": True, "sign_vectors": 2**16}
    pairs = [
        (m, scale, baseline, system)
        for m in ("P@10", "RR@10", "nDCG@10")
        for scale in ("original", "ranked")
        for baseline, system in (("ICT-BERT2", "TUW19-p1-re"), ("TUA1-1", "TUW19-p1-f"))
    ]
    seen = _replay(recipe, study, out, pairs)
    exact = [p for m, s, t, p in seen if t == "permutation"]
    assert all((p * 2**16).is_integer() for p in exact)  # count / 2^16: no +1 correction
    names, _ = recipe
    X, systems = names["study_matrix"](out, 10, "P@10", "value")
    a, b = systems.index("TUA1-1"), systems.index("TUW19-p1-f")
    boot = next(p for m, s, t, p in seen if (m, s, t) == ("P@10", "original", "bootstrap"))
    bare = _functions(blocks, ("bootstrap", " * (1 - 1e-12)", ""))["bootstrap_p"](X, a, b, 7, 10_000)
    assert bare != boot


def test_the_recipes_give_the_toy_studys_pvalues(recipe, tmp_path):
    """The toy example (8 topics: exact permutation test), every comparison with its baseline."""
    out = tmp_path / "toy"
    study = _study(out, TOY / "qrels.txt", TOY / "runs", ["P", "AP"], 5, ["lm-dirichlet"])
    rows = study.pairs[study.pairs["test"] == irscale.stats.test_name("permutation")]
    pairs = list(rows[["measure", "scale", "system_1", "system_2"]].itertuples(index=False, name=None))
    assert len(pairs) == 2 * 2 * 4
    _replay(recipe, study, out, pairs)
