"""Shared fixtures. Tests that need ../shared/data skip with a reason when it is absent."""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TREC8 = DATA / "trec8"
TE_TEST = DATA / "trec_eval_test"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared data folder (../shared/data beside the checkout) "
                    "holds the reference data for this test")
    return path


@pytest.fixture(scope="session")
def trec8():
    return need(TREC8)


@pytest.fixture(scope="session")
def te_test():
    return need(TE_TEST)
