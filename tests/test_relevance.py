"""The relevance protocol of transform, compare and study (issue 11, item 3): graded or
lenient (binarised qrels, the 2021 paper's protocol for graded collections), explicit in
provenance and reports, with a one-line note when graded qrels meet graded measures."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import irscale
from irscale.cli import app
from irscale.errors import IrscaleWarning, PolicyError

TOY = Path(irscale.__file__).parent / "examples" / "toy"  # grades 0, 1, 2
RUNS = sorted((TOY / "runs").glob("*.txt"))


def _notes(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    return out, [
        str(w.message) for w in seen if issubclass(w.category, IrscaleWarning) and "graded qrels" in str(w.message)
    ]


@pytest.fixture(scope="module")
def table():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irscale.evaluate(TOY / "qrels.txt", RUNS, ["AP"])


def test_lenient_equals_the_paper_protocol_on_binarised_qrels(table, tmp_path):
    """lenient = evaluate and transform against qrels whose grades >= 1 are 1."""
    binary = tmp_path / "qrels.binary.txt"
    lines = [line.split() for line in (TOY / "qrels.txt").read_text().splitlines() if line.strip()]
    binary.write_text("".join(f"{t} {i} {d} {int(int(g) >= 1)}\n" for t, i, d, g in lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = irscale.transform(irscale.evaluate(binary, RUNS, ["AP"]), ["nDCG", "RBP(p=0.8)", "AP"], depth=5)
    got, notes = _notes(lambda: irscale.transform(table, ["nDCG", "RBP(p=0.8)", "AP"], depth=5, relevance="lenient"))
    assert not notes
    assert np.array_equal(got.values, ref.values)
    assert got.provenance["transform"]["relevance"] == "lenient"
    assert {v["levels"] for v in got.provenance["transform"]["maps"].values()} == {2}


def test_graded_qrels_and_graded_measures_get_one_note_unless_the_protocol_is_named(table):
    graded, notes = _notes(lambda: irscale.transform(table, ["nDCG", "AP"], depth=5))
    assert len(notes) == 1 and "nDCG" in notes[0] and "--relevance lenient" in notes[0]
    assert graded.provenance["transform"]["relevance"] == "graded"
    assert graded.provenance["transform"]["maps"]["nDCG@5"]["levels"] == 3
    explicit, notes = _notes(lambda: irscale.transform(table, ["nDCG", "AP"], depth=5, relevance="graded"))
    assert not notes and np.array_equal(explicit.values, graded.values)
    _, notes = _notes(lambda: irscale.transform(table, ["AP", "P"], depth=5))  # binary measures: nothing to say
    assert not notes


def test_compare_records_the_protocol_and_the_report_prints_it(table, tmp_path):
    study, notes = _notes(lambda: irscale.compare(table, ["nDCG", "P"], depth=5, tests=["sign"], relevance="lenient"))
    assert not notes and study.provenance["relevance"] == "lenient"
    assert "relevance lenient" in study.markdown()
    with pytest.raises(PolicyError, match="relevance must be one of 'graded', 'lenient'"):
        irscale.compare(table, ["nDCG"], depth=5, relevance="binary")


def test_cli_relevance_option():
    res = CliRunner().invoke(
        app,
        [
            "transform",
            str(TOY / "qrels.txt"),
            str(TOY / "runs"),
            "-m",
            "nDCG",
            "-N",
            "5",
            "--relevance",
            "lenient",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert '"relevance": "lenient"' in res.stdout and "graded qrels" not in res.stderr
    res = CliRunner().invoke(
        app, ["transform", str(TOY / "qrels.txt"), str(TOY / "runs"), "-m", "nDCG", "-N", "5", "-f", "tsv"]
    )
    assert res.exit_code == 0 and "--relevance lenient" in res.stderr
    res = CliRunner().invoke(
        app, ["transform", str(TOY / "qrels.txt"), str(TOY / "runs"), "-m", "nDCG", "--relevance", "loose"]
    )
    assert res.exit_code == 2
