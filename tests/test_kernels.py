"""irscale.kernels: one way to build a compiled kernel and to turn it off (issue 25, item 3)."""

import pytest

from irscale import kernels


def test_a_kernel_is_built_once_and_can_be_turned_off():
    built = []

    def build(numba):
        built.append(numba)
        return "kernel"

    if not kernels.have_numba():
        assert kernels.compiled("test.none", build) is None and built == []
        pytest.skip("numba is not installed: every kernel is None")
    assert kernels.compiled("test.k", build) == "kernel"
    assert kernels.compiled("test.k", build) == "kernel" and len(built) == 1  # cached
    with kernels.disabled("test.k"):
        assert kernels.compiled("test.k", build) is None
        with kernels.disabled("test.k"):  # nested: the inner exit leaves it off
            pass
        assert kernels.compiled("test.k", build) is None
    assert kernels.compiled("test.k", build) == "kernel"
    with kernels.disabled():  # every kernel
        assert kernels.compiled("test.k", build) is None
    assert kernels.compiled("test.k", build) == "kernel" and len(built) == 1


def test_every_compiled_loop_of_the_package_goes_through_it():
    """No module keeps its own lazy numba factory (the six copies this replaced)."""
    from pathlib import Path

    import irscale

    root = Path(irscale.__file__).parent
    own = [
        str(f.relative_to(root))
        for f in root.rglob("*.py")
        if f.name != "kernels.py" and ("_KERNELS" in f.read_text() or "import numba\n" in f.read_text())
    ]
    assert own == [], own
