"""The pair-counting kernel of the ``count`` engine: for sorted partial values P and S of
two halves and a query x, count the pairs with P[i] + S[j] surely below x (by more
than a tolerance) and those surely not above it, and sum the runs behind the first.

For each P[i], the pairs surely below are S[:lo_i] with lo_i = #{S < x - P[i] - tol},
the undecided ones S[lo_i:hi_i] with hi_i = #{S <= x - P[i] + tol}. As P[i] grows,
lo_i and hi_i only fall, so one query is a merge of P and S: ``O(|P| + |S|)`` steps.

Two implementations give the same integers:

* numba (a dependency): the merge compiled, 8x faster than numpy at DCG 3 levels N = 20
  and 14x at N = 26 (``python bench/rankmap.py --kernels`` prints both, answers compared),
  and releasing the GIL, so queries run in parallel threads;
* numpy: two binary searches per P[i] (``np.searchsorted`` of the whole array).

Runs behind the pairs (sum over i of Pn[i] * Sc[lo_i]) may pass 2^64 (5 levels,
N = 30: 5^30 ~ 2^70 runs). Both kernels accumulate the sum twice: modulo 2^64 in
uint64 (wrapping arithmetic is exact modulo 2^64) and in float64 (relative error below
``|P| * 2^-52``). The exact sum is the one integer congruent to the first within 2^63 of
the second, which is unique while the float error stays below 2^63
(``|P| * 2^-52 * runs < 2^63`` for every space the engine accepts: :func:`exact_sum`).
"""

from __future__ import annotations

import numpy as np

from irscale.kernels import compiled


def _numba_kernels():
    """(scan, band) compiled with numba, or None where numba is not installed."""
    return compiled("scales.merge", _build_numba_kernels)


def _build_numba_kernels(numba):
    @numba.njit(nogil=True, cache=True)
    def scan(P, S, Pn, Sc, xs, tol, weighted, lo_out, hi_out, wmod_out, wflt_out, bi, bj):  # pragma: no cover
        # one pass over P for the whole block of queries (P and Pn are read once per
        # block, not once per query: the merge is bound by memory traffic)
        nq = len(xs)
        K = bi.shape[1]
        jh = np.full(nq, len(S), dtype=np.int64)
        nb = np.zeros(nq, dtype=np.int64)
        for i in range(len(P)):
            p = P[i]
            pn = Pn[i]
            alive = False
            for q in range(nq):
                h = jh[q]
                if h == 0:
                    continue  # larger P[i]: no pair left for this query
                t = xs[q] - p
                t_ = tol[q]
                while h > 0 and S[h - 1] > t + t_:
                    h -= 1
                jh[q] = h
                if h == 0:
                    continue
                alive = True
                j = h  # lo <= hi, and the band between them is nearly always empty
                while j > 0 and S[j - 1] >= t - t_:
                    j -= 1
                for jj in range(j, h):  # undecided pairs: the first K kept
                    if nb[q] < K:
                        bi[q, nb[q]] = i
                        bj[q, nb[q]] = jj
                    nb[q] += 1
                lo_out[q] += j
                hi_out[q] += h
                if weighted > 0:
                    wmod_out[q] += pn * Sc[j]
                    if weighted > 1:
                        wflt_out[q] += float(pn) * float(Sc[j])
            if not alive:
                break

    @numba.njit(nogil=True, cache=True)
    def band(P, S, x, t_, out_i, out_j):  # pragma: no cover - compiled
        nS = len(S)
        jl = nS
        jh = nS
        k = 0
        for i in range(len(P)):
            t = x - P[i]
            while jl > 0 and S[jl - 1] >= t - t_:
                jl -= 1
            while jh > 0 and S[jh - 1] > t + t_:
                jh -= 1
            if jh == 0:
                break
            for j in range(jl, jh):
                out_i[k] = i
                out_j[k] = j
                k += 1
        return k

    return (scan, band)


def have_numba() -> bool:
    return _numba_kernels() is not None


def _np_bounds(P, S, x, t_):
    u = x - P
    return np.searchsorted(S, u - t_, side="left"), np.searchsorted(S, u + t_, side="right")


BAND = 64  # undecided pairs kept per query by the scan (more: a second pass, band())


def scan(P, S, Pn, Sc, xs, tol, weighted: int = 2):
    """Per query x (float64 array ``xs``, tolerances ``tol``): pairs surely below
    (``lo``), pairs not surely above (``hi``; hi - lo undecided), the runs behind the
    pairs surely below as (sum mod 2^64, float sum): see :func:`exact_sum`, and the
    undecided pairs (i, j) as two (n, BAND) arrays (None from the numpy kernel; when
    hi - lo > BAND, :func:`band` lists them). ``Pn`` and ``Sc`` are uint64 (runs behind
    each P value; cumulative runs behind S); ``weighted``: 0 leaves the run sums 0, 1
    sums modulo 2^64 only (exact where all runs together are fewer than 2^64; the float
    sums stay 0), 2 both.
    The merge's cost is ``|P|`` full steps and up to ``|S|`` pointer moves: pass the smaller
    half as P."""
    n = len(xs)
    lo = np.zeros(n, dtype=np.int64)
    hi = np.zeros(n, dtype=np.int64)
    wmod = np.zeros(n, dtype=np.uint64)
    wflt = np.zeros(n, dtype=np.float64)
    kernels = _numba_kernels()  # None without numba, or within irscale.kernels.disabled()
    if kernels is not None:
        bi = np.zeros((n, BAND), dtype=np.int64)
        bj = np.zeros((n, BAND), dtype=np.int64)
        kernels[0](
            P,
            S,
            Pn,
            Sc,
            np.ascontiguousarray(xs, dtype=np.float64),
            np.ascontiguousarray(tol, dtype=np.float64),
            int(weighted),
            lo,
            hi,
            wmod,
            wflt,
            bi,
            bj,
        )
        return lo, hi, wmod, wflt, bi, bj
    Pf = Pn.astype(np.float64)
    Scf = Sc.astype(np.float64)
    with np.errstate(over="ignore"):
        for q in range(n):
            a, z = _np_bounds(P, S, xs[q], tol[q])
            lo[q] = int(a.sum())
            hi[q] = int(z.sum())
            if not weighted:
                continue
            wmod[q] = (Pn * Sc[a]).sum(dtype=np.uint64)  # wraps modulo 2^64: exact there
            if weighted > 1:
                wflt[q] = float((Pf * Scf[a]).sum())
    return lo, hi, wmod, wflt, None, None


def band(P, S, x: float, t_: float, size: int):
    """The ``size`` undecided pairs (i, j) of one query (``size`` = its hi - lo)."""
    kernels = _numba_kernels()
    if kernels is not None:
        out_i = np.empty(size, dtype=np.int64)
        out_j = np.empty(size, dtype=np.int64)
        k = kernels[1](P, S, float(x), float(t_), out_i, out_j)
        return out_i[:k], out_j[:k]
    a, z = _np_bounds(P, S, x, t_)
    n = z - a
    i = np.repeat(np.arange(len(P)), n)
    j = a[i] + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
    return i, j


def exact_sum(mod: int, approx: float) -> int:
    """The integer congruent to ``mod`` modulo 2^64 nearest to ``approx`` (exact while
    ``|approx - true| < 2^63``; with approx 0, ``mod`` itself: sums known below 2^63)."""
    m = int(mod)
    k = round((approx - m) / 2.0**64)
    return m + k * 2**64
