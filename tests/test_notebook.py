"""The quickstart notebook (issue 26, item 6): docs/examples/quickstart.ipynb runs on a real
Jupyter kernel (nbclient, ipykernel) against the package of this checkout, without an error,
and shows what it promises: the displays of the score table, the ranked table, the rank map,
the bounds and the study, with the toy collection's known values. nbclient, nbformat and
ipykernel come with the test extra."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "examples" / "quickstart.ipynb"


def _need(*modules: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: python3 -m pip install -e '.[test]' brings it")


def test_the_stored_notebook_is_valid_and_has_no_outputs():
    """Stored clean: outputs come from running it, never from the repository."""
    _need("nbformat")
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
def test_the_notebook_runs_on_a_kernel_and_shows_the_toy_results(tmp_path):
    _need("nbformat", "nbclient", "ipykernel")
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    # a last cell of the test's own: which irscale the kernel imported
    nb.cells.append(nbformat.v4.new_code_cell("import irscale as _i; print('IRSCALE-FROM', _i.__file__)"))
    # the kernel imports this checkout's package (src/ first), as the test process does
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env)  # raises CellExecutionError on a cell that fails

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "\n".join(o.data["text/html"] for o in outputs if "text/html" in o.get("data", {}))
    streams = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stdout")

    used = [line.split(" ", 1)[1] for line in streams.splitlines() if line.startswith("IRSCALE-FROM ")]
    assert used and Path(used[0]).resolve().is_relative_to(ROOT / "src"), f"the kernel ran another irscale: {used}"
    # evaluate: trec_eval's means on the toy (bm25: AP 0.4048, P@10 0.875; neural-rerank nDCG@10 0.9433)
    assert "ScoreTable: 3 measures × 5 systems × 8 topics" in html
    for value in ("0.4048", "0.875", "0.9433"):
        assert f"<td>{value}</td>" in html
    # transform: the ranked columns on binary relevance (bm25: ranked AP@10 mean 793)
    assert "ScoreTable: 4 measures × 5 systems × 8 topics" in html and "ranked(AP@10)" in html
    assert "<td>793</td>" in html
    # the rank map of AP at N = 10: 810 distinct values over 1,024 runs
    assert "RankMap: AP at N = 10" in html and "810" in html and "1,024" in html
    assert "PhiBounds" in html and "grid recursion" in html
    # compare: the study's display, Table 2 on each measure
    assert "Study at N = 10" in html and "nDCG(rel=1)@10" in html and "report_N10.html" in html
    assert "<script" not in html.lower()
