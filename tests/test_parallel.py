"""irscale.parallel: a process pool is stopped where its iterator ends, never left to the
garbage collector (a pool torn down at collection once printed a traceback in CI), and
only by the process that started it. The pool checks run in a fresh interpreter: a worker
of pytest-xdist runs a thread of its own, and beside another thread parallel_imap uses
threads, not processes."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap

import pytest

from irscale.parallel import _shut_down

PRELUDE = """
import multiprocessing, os
from irscale.parallel import can_fork, parallel_imap
assert can_fork(), "a fresh interpreter can fork"
def square(x):
    return x * x
"""


def _fresh(code: str) -> None:
    """Run ``code`` (after PRELUDE) in a fresh interpreter; its assertions are the test's."""
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-3000:]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform cannot fork")
def test_a_pool_taken_whole_leaves_no_worker():
    _fresh("""
        assert list(parallel_imap(square, range(6), workers=2, processes=True)) == [0, 1, 4, 9, 16, 25]
        assert multiprocessing.active_children() == []
    """)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform cannot fork")
def test_a_pool_closed_early_is_stopped_at_once():
    _fresh("""
        it = parallel_imap(square, range(50), workers=2, processes=True)
        assert next(it) == 0
        assert multiprocessing.active_children()  # the workers run while the iterator is open
        it.close()
        assert multiprocessing.active_children() == []
    """)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform cannot fork")
def test_a_forked_child_closing_its_copy_leaves_the_parents_pool_alone():
    _fresh("""
        it = parallel_imap(square, range(8), workers=2, processes=True)
        assert next(it) == 0
        pid = os.fork()
        if pid == 0:  # the child closes its copy of the open iterator, then leaves at once
            try:
                it.close()
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        assert list(it) == [1, 4, 9, 16, 25, 36, 49]  # the parent's pool still delivers the rest
    """)


class _Pool:
    def __init__(self, err: int):
        self.err = err

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        raise OSError(self.err, os.strerror(self.err))


def test_only_a_bad_descriptor_at_teardown_is_let_go():
    _shut_down(_Pool(errno.EBADF))
    with pytest.raises(OSError, match=os.strerror(errno.EIO)):
        _shut_down(_Pool(errno.EIO))
