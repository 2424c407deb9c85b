"""irscale.parallel: a process pool is stopped where its iterator ends, never left to the
garbage collector (a pool torn down at collection once printed a traceback in CI)."""

from __future__ import annotations

import errno
import multiprocessing
import os

import pytest

from irscale.parallel import _shut_down, can_fork, parallel_imap


@pytest.fixture
def forking():
    """Skip where parallel_imap would use threads: no fork, or another thread runs beside the
    test (asked when the test runs: a worker of pytest-xdist may start one after collection)."""
    if not can_fork():
        pytest.skip("this platform or process cannot fork worker processes now (parallel_imap uses threads)")


def _square(x: int) -> int:
    return x * x


def test_a_pool_taken_whole_leaves_no_worker(forking):
    assert list(parallel_imap(_square, range(6), workers=2, processes=True)) == [0, 1, 4, 9, 16, 25]
    assert multiprocessing.active_children() == []


def test_a_pool_closed_early_is_stopped_at_once(forking):
    it = parallel_imap(_square, range(50), workers=2, processes=True)
    assert next(it) == 0
    assert multiprocessing.active_children()  # the workers run while the iterator is open
    it.close()
    assert multiprocessing.active_children() == []


def test_a_forked_child_closing_its_copy_leaves_the_parents_pool_alone(forking):
    it = parallel_imap(_square, range(8), workers=2, processes=True)
    assert next(it) == 0
    pid = os.fork()
    if pid == 0:  # the child closes its copy of the open iterator, then leaves at once
        try:
            it.close()
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    assert list(it) == [1, 4, 9, 16, 25, 36, 49]  # the parent's pool still delivers the rest


class _Pool:
    def __init__(self, err: int):
        self.err = err

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        raise OSError(self.err, os.strerror(self.err))


def test_only_a_bad_descriptor_at_teardown_is_let_go():
    _shut_down(_Pool(errno.EBADF))
    with pytest.raises(OSError, match=os.strerror(errno.EIO)):
        _shut_down(_Pool(errno.EIO))
