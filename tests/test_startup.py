"""Start-up of the evaluate path (issue 40): what a fresh process imports to read, judge
and score runs, and that keeping numba's BLAS probe away from its first kernel changes
nothing a kernel can do. Each check runs in a fresh interpreter: what is imported is a
property of the whole process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from irscale import kernels

TOY = Path(__file__).resolve().parents[1] / "src" / "irscale" / "examples" / "toy"

# what reading, judging and scoring never need: their import costs seconds on a small machine
# (scipy.linalg comes with numba's BLAS probe, numpy.f2py with scipy's array API layer)
NEVER = ("pandas", "matplotlib", "scipy.linalg", "scipy.stats", "scipy.special", "numpy.f2py", "statsmodels")


def _fresh(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line, returned."""
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


LOADED = """
import json, sys
def loaded(names):
    return sorted(n for n in names if n in sys.modules)
"""


def _compiled_path():
    if not kernels.have_numba():  # (the numpy judge's lookup index is pandas')
        pytest.skip("numba is not installed: the numpy path uses pandas")


def test_evaluate_imports_no_scipy_linalg_pandas_or_matplotlib():
    _compiled_path()
    got = _fresh(
        LOADED
        + """
import irscale
from pathlib import Path
toy = Path(sys.argv[1])
t = irscale.evaluate(toy / "qrels.txt", toy / "runs", ["AP", "nDCG@10", "P@10", "RR", "Rprec", "bpref"])
print(json.dumps({"loaded": loaded(json.loads(sys.argv[2])), "shape": list(t.values.shape),
                  "numba": "numba" in sys.modules}))
""",
        str(TOY),
        json.dumps(NEVER),
    )
    assert got["shape"][1] == 5 and got["loaded"] == [], got
    assert got["numba"]  # the compiled path ran


@pytest.mark.parametrize("layout", [[], ["--trec-eval"], ["-q"]])
def test_the_cli_evaluate_imports_none_of_them_either(layout):
    """The terminal table and trec_eval's layout need no pandas (--format csv/json do)."""
    _compiled_path()
    got = _fresh(
        LOADED
        + """
import contextlib, io
from irscale.cli import app
toy = sys.argv[1]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        app([ "evaluate", toy + "/qrels.txt", toy + "/runs", "-m", "AP", "-m", "P@10", *json.loads(sys.argv[3])],
            standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps({"loaded": loaded(json.loads(sys.argv[2])), "out": out.getvalue()}))
""",
        str(TOY),
        json.dumps(NEVER),
        json.dumps(layout),
    )
    assert got["loaded"] == [], got["loaded"]
    assert "bm25" in got["out"]  # it printed the table


def test_a_dot_product_in_a_kernel_works_after_an_evaluate():
    """numba's BLAS probe was answered "not yet" while irscale's first kernel loaded; a
    user's kernel with np.dot (which types through BLAS) and np.correlate (whose inner
    product asks the probe) still compiles and computes, and scipy.linalg loads then."""
    if not kernels.have_numba():
        pytest.skip("numba is not installed")
    got = _fresh(
        """
import json, sys
import numpy as np
import irscale
from pathlib import Path
toy = Path(sys.argv[1])
irscale.evaluate(toy / "qrels.txt", toy / "runs", ["AP"])
before = "scipy.linalg" in sys.modules
import numba
@numba.njit
def f(a, b):
    return np.dot(a, b), np.correlate(a, b)[0]
a = np.arange(4.0)
d, c = f(a, a[::-1].copy())
from numba.np import arraymath
probed = sys.modules[arraymath._check_blas.__module__]  # (the module behind a redirecting shim)
print(json.dumps({"before": before, "dot": float(d), "corr": float(c), "after": "scipy.linalg" in sys.modules,
                  "blas": probed._HAVE_BLAS is True or type(probed._HAVE_BLAS).__name__ == "_LazyBlas" and
                  probed._HAVE_BLAS.answer is True}))
""",
        str(TOY),
    )
    assert got == {"before": False, "dot": 4.0, "corr": 4.0, "after": True, "blas": True}


def test_the_probe_is_left_alone_where_scipy_linalg_is_already_imported():
    if not kernels.have_numba():
        pytest.skip("numba is not installed")
    got = _fresh(
        """
import json, sys
import scipy.linalg
from irscale import kernels
kernels.have_numba()
from numba.np import arraymath
probed = sys.modules[arraymath._check_blas.__module__]
hidden = sys.modules.get("scipy.linalg.cython_blas", 0) is None
print(json.dumps({"probe": type(probed._HAVE_BLAS).__name__, "hidden": hidden}))
"""
    )
    assert got == {"probe": "bool", "hidden": False}
