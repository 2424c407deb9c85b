"""The README's Python example runs as printed: on a binary collection (TREC-8) as it
is, and on a 4-level one (TREC DL 2019) with what the README says to add (issue 24,
item 8). The code is read from README.md, not copied here, so the test breaks when the
README's example does."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from conftest import DATA, TREC8, need

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.DOTALL)

pytestmark = pytest.mark.xdist_group("readme_example")


def _runs_dir(tmp_path: Path, runs: list[Path]) -> Path:
    d = tmp_path / "runs"
    d.mkdir()
    for r in runs:
        (d / r.name).symlink_to(r)
    return d


def _run(code: str, qrels: Path, runs: Path) -> dict:
    code = code.replace('"qrels.txt"', repr(str(qrels))).replace('"runs/"', repr(str(runs)))
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the example's notes are said on stderr; here only what it returns
        exec(compile(code, "README.md", "exec"), scope)
    return scope


@pytest.mark.slow
def test_the_example_runs_as_printed_on_binary_qrels(tmp_path):
    assert len(BLOCKS) >= 2, "README.md lost its Python examples"
    runs = _runs_dir(tmp_path, sorted((need(TREC8) / "runs").glob("*.gz"))[:6])
    scope = _run(BLOCKS[0], TREC8 / "qrels.trec8.txt", runs)
    assert list(scope["ranked"].mean().columns) == ["AP@30", "RBP(p=0.8)@30", "ranked(AP@30)", "ranked(RBP(p=0.8)@30)"]
    assert len(scope["study"].table2) == 11


@pytest.mark.slow
def test_the_example_runs_on_a_4_level_collection_with_what_the_readme_adds(tmp_path):
    dl19 = need(DATA / "dl19")
    runs = _runs_dir(tmp_path, sorted((dl19 / "runs").glob("*.gz"))[::6])
    qrels = dl19 / "qrels.dl19-passage.txt"
    said = BLOCKS[1]
    assert 'relevance="lenient"' in said and 'relevance="graded"' in said
    from irscale.errors import IrscaleError

    with pytest.raises(IrscaleError, match="no exact engine"):  # as it is: the graded run space is too large
        _run(BLOCKS[0], qrels, runs)
    lenient = re.sub(r"(irscale\.(?:transform|compare)\(.*?)\)(\s*#|\n)", r'\1, relevance="lenient")\2', BLOCKS[0])
    assert lenient.count('relevance="lenient"') == 2  # added to transform and compare, as the README says
    scope = _run(lenient, qrels, runs)
    assert list(scope["ranked"].mean().columns) == [
        "AP@30",
        "RBP(p=0.8,rel=1)@30",
        "ranked(AP@30)",
        "ranked(RBP(p=0.8,rel=1)@30)",
    ]
    assert len(scope["study"].table2) == 11
    scope = _run(BLOCKS[0].split("ranked =")[0] + said, qrels, runs)  # the README's graded lines
    assert list(scope["graded"].mean().columns) == [
        "nDCG@10",
        "RBP(p=0.8)@10",
        "ranked(nDCG@10)",
        "ranked(RBP(p=0.8)@10)",
    ]
