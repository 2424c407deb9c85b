"""Shared fixtures. Tests that need ../shared/data skip with a reason when it is absent."""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TREC8 = DATA / "trec8"
TE_TEST = DATA / "trec_eval_test"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(
            f"{path} is absent: the shared data folder (../shared/data beside the checkout) "
            "holds the reference data for this test"
        )
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts) runs named tests (``tests/test_x.py::test_y``) in this
    process: starting workers would cost more than it saves. Otherwise xdist's default."""
    args = config.invocation_params.args
    named = [a for a in args if not str(a).startswith("-") and "::" in str(a)]
    paths = [a for a in args if not str(a).startswith("-") and Path(str(a)).exists()]
    if named and not paths:
        return 0
    return None


@pytest.fixture(scope="session")
def trec8():
    return need(TREC8)


@pytest.fixture(scope="session")
def dl19_data():
    """TREC 2019 Deep Learning passage: qrels.dl19-passage.txt (grades 0-3) and runs/ (37)."""
    return need(DATA / "dl19")


@pytest.fixture(scope="session")
def te_test():
    return need(TE_TEST)


@pytest.fixture(autouse=True, scope="session")
def _fixed_memory_budget():
    """The engines' memory budget is half the available memory by default, which the tests
    running beside each other change: the suite runs under a fixed 4 GiB, so an engine is
    chosen alike whatever else runs (tests/test_budget.py varies it)."""
    import os

    old = os.environ.get("IRSCALE_MEMORY")
    os.environ["IRSCALE_MEMORY"] = "4G"
    yield
    if old is None:
        os.environ.pop("IRSCALE_MEMORY", None)
    else:
        os.environ["IRSCALE_MEMORY"] = old


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Rank maps built by the tests go to a private cache, never the user's."""
    import os

    old = os.environ.get("IRSCALE_CACHE_DIR")
    os.environ["IRSCALE_CACHE_DIR"] = str(tmp_path_factory.mktemp("irscale-cache"))
    yield
    if old is None:
        os.environ.pop("IRSCALE_CACHE_DIR", None)
    else:
        os.environ["IRSCALE_CACHE_DIR"] = old


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory of the test's own (IRSCALE_CACHE_DIR), with the cache
    module's once-per-process warnings and sweeps started afresh."""
    from irscale.scales import cache as R

    d = tmp_path / "cache"
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(d))
    monkeypatch.setattr(R, "_warned", set(), raising=False)
    monkeypatch.setattr(R, "_swept", set(), raising=False)
    return d


def paper_label(name) -> str:
    """A study's measure name at N (``RBP(p=0.5)@30``: compare names each measure as it was
    computed) as the paper's short label (``RBP_p05``)."""
    import re

    from irscale.study import label

    return label(re.sub(r"@\d+$", "", str(name)))


def by_label(frame, *columns):
    """``frame`` with its measure columns (``measure`` by default) as paper labels."""
    columns = columns or ("measure",)
    return frame.assign(**{c: frame[c].map(paper_label) for c in columns})
