"""Orders on the runs REL^N, REL = {0..c} (SPEC section 5; Ferrante, Ferro et al. 2015,
2019), as rank functions and cover relations over run indices (run i of
:func:`irscale.scales.all_runs` is i written in base c+1):

* ``set``: the set-based total order (2019, eq. 1): runs compared by the multiset of
  their grades (sorted descending, compared lexicographically); rank function SBTO;
* ``strong``: strong top-heaviness, lexicographic on the grades; rank function RBTO
  (the run read as a base-(c+1) number, :func:`positional_weights`);
* ``weak``: weak top-heaviness, the partial order of prefix counts (2015, Section 4.2):
  r <= s iff for every grade g and rank k, r has at most as many grades >= g in its top
  k as s; its covers are one grade raised by one, or two adjacent grades a < b swapped;
* ``induced``: the total preorder of the measure's own values (see
  :mod:`irscale.scales.checks`).

The order names "strong"/"weak" are the papers'; the measures SBTO and RBTO that rank
runs by the first two live in :mod:`irscale.measures`.
"""

from __future__ import annotations

import numpy as np

from irscale.errors import IrscaleError
from irscale.scales.spaces import INT64_LIMIT  # spaces imports this module only inside functions

ORDERS = ("set", "strong", "weak", "induced")


def positional_weights(N: int, c: int) -> np.ndarray:
    """Weights that read a run as a base-(c+1) number, most significant digit at rank 1:
    ``runs @ positional_weights(N, c)`` is the run's index in :func:`all_runs` and the
    rank function (key) of the strong order (RBTO).

    Parameters
    ----------
    N : int
        Run length.
    c : int
        Top grade (grades 0..c).

    Returns
    -------
    numpy.ndarray
        ``(c+1)**(N-1), ..., c+1, 1``: int64 when ``(c+1)**N < 2**62`` (every index and
        every sum of two fits), else an object array of Python ints (exact at any N).

    Examples
    --------
    >>> positional_weights(3, 1).tolist()
    [4, 2, 1]
    >>> (np.array([[1, 0, 1]]) @ positional_weights(3, 1)).tolist()
    [5]
    >>> positional_weights(64, 1).dtype
    dtype('O')
    """
    base = c + 1
    if base ** N < INT64_LIMIT:
        return base ** np.arange(N - 1, -1, -1, dtype=np.int64)
    return np.array([base ** k for k in range(N - 1, -1, -1)], dtype=object)


def set_rank(runs: np.ndarray, c: int) -> np.ndarray:
    """Rank function of the set-based order (SBTO, 2019 paper eq. 3)."""
    from irscale.scales.spaces import sbto_rank

    return sbto_rank(runs, c)


def strong_rank(runs: np.ndarray, c: int) -> np.ndarray:
    """Rank function of the strong top-heaviness order (RBTO: the run as a base-(c+1)
    number); also the index of each run in :func:`irscale.scales.all_runs`."""
    w = positional_weights(runs.shape[1], c)
    return runs.astype(w.dtype) @ w


def weak_moves(N: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Generators of the weak order (its transitive closure is the order): one grade raised
    by one, or two adjacent grades a < b swapped. Pairs (lower, upper) of run indices."""
    from irscale.scales.spaces import all_runs

    runs = all_runs(N, c).astype(np.int64)
    idx = np.arange(len(runs))
    lo, hi = [], []
    w = positional_weights(N, c)
    for k in range(N):  # raise one grade
        sel = runs[:, k] < c
        lo.append(idx[sel])
        hi.append(idx[sel] + w[k])
    for k in range(N - 1):  # swap adjacent a < b (b moves up)
        a, b = runs[:, k], runs[:, k + 1]
        sel = a < b
        lo.append(idx[sel])
        hi.append(idx[sel] + (b[sel] - a[sel]) * (w[k] - w[k + 1]))
    return np.concatenate(lo), np.concatenate(hi)


def weak_covers(N: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """The cover pairs (lower, upper) of the weak order, as run indices into all_runs.

    Binary: a relevant document added at rank N, or moved up by one rank (01 -> 10); the
    order is then graded by sum_k r_k (N - k + 1) and every maximal chain has N(N+1)/2
    steps. Graded: the generators' transitive reduction (up to 729 runs)."""
    from irscale.scales.spaces import all_runs

    runs = all_runs(N, c).astype(np.int64)
    idx = np.arange(len(runs))
    if c == 1:
        last = runs[:, N - 1] == 0
        lo, hi = [idx[last]], [idx[last] + 1]
        w = positional_weights(N, 1)
        for k in range(N - 1):
            sel = (runs[:, k] == 0) & (runs[:, k + 1] == 1)
            lo.append(idx[sel])
            hi.append(idx[sel] + w[k] - w[k + 1])
        return np.concatenate(lo), np.concatenate(hi)
    if len(runs) > 729:
        raise IrscaleError(f"the graded weak order's covers are computed up to 729 runs ({c + 1} levels, N={N} "
                           f"has {len(runs)}); ordinality checks use its generators at any size")
    lo, hi = weak_moves(N, c)
    return _transitive_reduction(lo, hi, len(runs))


def maximal_chain(N: int, c: int = 1, pick: str = "first") -> np.ndarray:
    """One maximal chain of the weak order, bottom (all 0) to top (all c), as runs.

    ``pick="first"`` takes, at every step, the cover to the run with the smallest
    index (grades raised from the bottom rank up: a "bottom-up" chain); ``"last"`` the
    largest (relevance moved to the top first)."""
    from irscale.scales.spaces import all_runs

    runs = all_runs(N, c)
    lo, hi = weak_covers(N, c)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    starts = np.searchsorted(lo, np.arange(len(runs) + 1))
    chain, node = [0], 0
    while node != len(runs) - 1:
        ups = hi[starts[node]:starts[node + 1]]
        node = int(ups.min() if pick == "first" else ups.max())
        chain.append(node)
    return runs[chain]


def _transitive_reduction(lo, hi, n):
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(lo.tolist(), hi.tolist()))
    red = nx.transitive_reduction(g)
    e = np.array(list(red.edges()), dtype=np.int64).reshape(-1, 2)
    return e[:, 0], e[:, 1]


def weak_level(runs: np.ndarray) -> np.ndarray:
    """Height in the weak order's Hasse diagram: sum over ranks of g_k * (N - k + 1)."""
    N = runs.shape[1]
    return runs.astype(np.int64) @ np.arange(N, 0, -1)
