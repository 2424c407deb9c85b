"""The pair-counting kernel of the ``count`` engine: for sorted partial values P and S of
two halves and a query x, count the pairs with P[i] + S[j] surely below x (by more
than a tolerance) and those surely not above it, and sum the runs behind the first.

For each P[i], the pairs surely below are S[:lo_i] with lo_i = #{S < x - P[i] - tol},
the undecided ones S[lo_i:hi_i] with hi_i = #{S <= x - P[i] + tol}. Only the P[i] in a
window need a look: below it every pair is surely below (``lo_i = hi_i = |S|``: counted
at once, with the runs from the cumulative runs of P), above it none is (``lo_i = hi_i = 0``).
Both ends are found by bisection. Inside the window lo_i and hi_i only fall as P[i]
grows, so a query is a merge of its window with S: ``O(w + |S|)`` steps for a window of
w values of P, pointer moves cheap (a galloping search, tried, was slower). The window
is what makes the split of the units matter: RBP puts the ranks of small weight in S,
whose values then span a narrow range, and a query's window holds a few percent of P;
DCG, whose weights decay slowly, puts the smaller half in P
(:mod:`irscale.scales.counting`).

Two implementations give the same integers:

* numba (a dependency): compiled, and releasing the GIL, so queries run in parallel
  threads (``python bench/rankmap.py --kernels`` times both, answers compared);
* numpy: two binary searches per P[i] of the window (``np.searchsorted``).

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

__all__ = ["BAND", "band", "exact_sum", "have_numba", "scan", "spread", "SPREAD_K"]


def _numba_kernels():
    """(scan, band) compiled with numba, or None where numba is not installed."""
    return compiled("scales.merge", _build_numba_kernels)


def _build_numba_kernels(numba):
    @numba.njit(nogil=True)
    def window(P, S, x, t_):  # pragma: no cover - compiled
        # [i0, i1): the P[i] whose pairs are not all surely below x (i >= i0) and not
        # all surely above it (i < i1); the same float expressions as the scan, which
        # are monotone in P[i], so both ends are found by bisection
        last, first = S[len(S) - 1], S[0]
        a, b = 0, len(P)
        while a < b:
            m = (a + b) // 2
            if last < (x - P[m]) - t_:
                a = m + 1
            else:
                b = m
        i0 = a
        b = len(P)
        while a < b:
            m = (a + b) // 2
            if first > (x - P[m]) + t_:
                b = m
            else:
                a = m + 1
        return i0, a

    @numba.njit(nogil=True, cache=True)
    def scan(P, S, Pn, Pc, Sc, xs, tol, weighted, lo_out, hi_out, wmod_out, wflt_out, bi, bj):  # pragma: no cover
        # per query: the P[i] below the window pair with all of S (counted at once from
        # the cumulative runs Pc); inside it, the pointer into S only falls as P[i] grows
        nS = len(S)
        K = bi.shape[1]
        for q in range(len(xs)):
            x = xs[q]
            t_ = tol[q]
            i0, i1 = window(P, S, x, t_)
            lo = np.int64(i0) * nS
            hi = lo
            if weighted > 0:
                wmod_out[q] = Pc[i0] * Sc[nS]
                if weighted > 1:
                    wflt_out[q] = float(Pc[i0]) * float(Sc[nS])
            nb = 0
            jl = nS
            for i in range(i0, i1):
                t = x - P[i]
                v = t - t_
                while jl > 0 and S[jl - 1] >= v:  # pairs surely below: S[:jl]
                    jl -= 1
                jh = jl  # pairs not surely above: S[:jh]; the band between is nearly always empty
                u = t + t_
                while jh < nS and S[jh] <= u:
                    if nb < K:
                        bi[q, nb] = i
                        bj[q, nb] = jh
                    nb += 1
                    jh += 1
                lo += jl
                hi += jh
                if weighted > 0:
                    wmod_out[q] += Pn[i] * Sc[jl]
                    if weighted > 1:
                        wflt_out[q] += float(Pn[i]) * float(Sc[jl])
            lo_out[q] = lo
            hi_out[q] = hi

    @numba.njit(nogil=True, cache=True)
    def band(P, S, x, t_, out_i, out_j):  # pragma: no cover - compiled
        i0, i1 = window(P, S, x, t_)
        jl = len(S)
        k = 0
        for i in range(i0, i1):
            t = x - P[i]
            v = t - t_
            while jl > 0 and S[jl - 1] >= v:
                jl -= 1
            jh = jl
            u = t + t_
            while jh < len(S) and S[jh] <= u:
                out_i[k] = i
                out_j[k] = jh
                k += 1
                jh += 1
        return k

    return (scan, band)


def have_numba() -> bool:
    return _numba_kernels() is not None


def _np_window(P, S, x, t_) -> tuple[int, int]:
    """The window [i0, i1) of P (see the module doc), by the kernel's float expressions."""
    i0 = int(np.searchsorted(-((x - P) - t_), -S[-1], side="left"))  # S[-1] < (x - P) - t_
    i1 = i0 + int(np.searchsorted(-((x - P[i0:]) + t_), -S[0], side="right"))  # S[0] <= (x - P) + t_
    return i0, i1


def _np_bounds(P, S, x, t_):
    u = x - P
    return np.searchsorted(S, u - t_, side="left"), np.searchsorted(S, u + t_, side="right")


BAND = 64  # undecided pairs kept per query by the scan (more: a second pass, band())


def scan(P, S, Pn, Pc, Sc, xs, tol, weighted: int = 2):
    """Per query x (float64 array ``xs``, tolerances ``tol``): pairs surely below
    (``lo``), pairs not surely above (``hi``; hi - lo undecided), the runs behind the
    pairs surely below as (sum mod 2^64, float sum): see :func:`exact_sum`, and the
    undecided pairs (i, j) as two (n, BAND) arrays (None from the numpy kernel; when
    hi - lo > BAND, :func:`band` lists them). ``Pn``, ``Pc`` and ``Sc`` are uint64: runs
    behind each P value, and cumulative runs (a leading 0) behind P and S; ``weighted``:
    0 leaves the run sums 0, 1 sums modulo 2^64 only (exact where all runs together are
    fewer than 2^64; the float sums stay 0), 2 both.
    A query's cost grows with its window of P (the module doc)."""
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
            Pc,
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
    nS = len(S)
    with np.errstate(over="ignore"):
        for q in range(n):
            i0, i1 = _np_window(P, S, xs[q], tol[q])
            a, z = _np_bounds(P[i0:i1], S, xs[q], tol[q])
            lo[q] = i0 * nS + int(a.sum())
            hi[q] = i0 * nS + int(z.sum())
            if not weighted:
                continue
            wmod[q] = Pc[i0] * Sc[nS] + (Pn[i0:i1] * Sc[a]).sum(dtype=np.uint64)  # wraps modulo 2^64
            if weighted > 1:
                wflt[q] = float(Pc[i0]) * float(Sc[nS]) + float((Pn[i0:i1].astype(np.float64) * Sc[a]).sum())
    return lo, hi, wmod, wflt, None, None


def band(P, S, x: float, t_: float, size: int):
    """The ``size`` undecided pairs (i, j) of one query (``size`` = its hi - lo)."""
    kernels = _numba_kernels()
    if kernels is not None:
        out_i = np.empty(size, dtype=np.int64)
        out_j = np.empty(size, dtype=np.int64)
        k = kernels[1](P, S, float(x), float(t_), out_i, out_j)
        return out_i[:k], out_j[:k]
    i0, i1 = _np_window(P, S, x, t_)
    a, z = _np_bounds(P[i0:i1], S, x, t_)
    n = z - a
    i = np.repeat(np.arange(i0, i1), n)
    j = a[i - i0] + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
    return i, j


def _build_spread_kernel(numba):
    @numba.njit(nogil=True, cache=True)
    def spread(vals, codes, runs, shifts, mult, ways, out_v, out_c, out_r):  # pragma: no cover - compiled
        # the k-way merge of vals + shifts[g] (g = 0..k-1), each sorted as vals is: output
        # codes codes * mult + g, runs runs * ways[g] (runs empty: none kept); equal
        # values in the order of their index in vals, then of g (a stable sort's order)
        n, k = len(vals), len(shifts)
        ptr = np.zeros(k, dtype=np.int64)
        head = np.empty(k)  # the next value of each shifted copy (inf: used up)
        for g in range(k):
            head[g] = vals[0] + shifts[g]
        keep = len(runs) > 0
        for o in range(n * k):
            best = 0
            for g in range(1, k):
                if head[g] < head[best] or (head[g] == head[best] and ptr[g] < ptr[best]):
                    best = g
            p = ptr[best]
            out_v[o] = head[best]
            out_c[o] = codes[p] * mult + best
            if keep:
                out_r[o] = runs[p] * ways[best]
            p += 1
            ptr[best] = p
            head[best] = vals[p] + shifts[best] if p < n else np.inf

    return spread


SPREAD_K = 8  # shifted copies up to which spread merges (numba) instead of sorting


def spread(vals, codes, runs, shifts, mult: int, ways):
    """Sorted partial values of one more unit: every ``vals[i] + shifts[g]`` in
    increasing order (``vals`` sorted), with codes ``codes[i] * mult + g`` and (``runs``
    not None) runs ``runs[i] * ways[g]``. The floats are those of ``vals[:, None] +
    shifts[None, :]``, in the order a stable sort of that sum gives them: for k up to
    :data:`SPREAD_K` shifts a k-way merge compiled with numba (``O(n k^2)``: it looks at
    every head for each value, cheaper than the sort's ``O(n k log(n k))`` while k is
    small), else the sort."""
    kernel = compiled("scales.merge.spread", _build_spread_kernel)
    shifts = np.asarray(shifts, dtype=np.float64)
    if kernel is not None and len(shifts) <= SPREAD_K:
        n, k = len(vals), len(shifts)
        out_v = np.empty(n * k)
        out_c = np.empty(n * k, dtype=np.int64)
        out_r = np.empty(n * k if runs is not None else 0, dtype=np.uint64)
        empty = np.zeros(0, dtype=np.uint64)
        kernel(
            vals,
            codes,
            empty if runs is None else runs,
            shifts,
            int(mult),
            empty if runs is None else np.asarray(ways, dtype=np.uint64),
            out_v,
            out_c,
            out_r,
        )
        return out_v, out_c, (out_r if runs is not None else None)
    v = (vals[:, None] + shifts[None, :]).reshape(-1)
    order = np.argsort(v, kind="stable")
    c = (codes[:, None] * mult + np.arange(len(shifts))[None, :]).reshape(-1)
    r = None if runs is None else (runs[:, None] * np.asarray(ways, dtype=np.uint64)[None, :]).reshape(-1)
    return v[order], c[order], (None if r is None else r[order])


def exact_sum(mod: int, approx: float) -> int:
    """The integer congruent to ``mod`` modulo 2^64 nearest to ``approx`` (exact while
    ``|approx - true| < 2^63``; with approx 0, ``mod`` itself: sums known below 2^63)."""
    m = int(mod)
    k = round((approx - m) / 2.0**64)
    return m + k * 2**64
