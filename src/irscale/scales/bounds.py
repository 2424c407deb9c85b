"""Certified bounds on phi where no exact engine reaches: runs of any length.

The 2021 paper builds phi by listing every run of REL^N and calls longer runs infeasible
(Section 8: "our future work will concern approximating this generation process in order
to make it possible to deal with runs of whatever length"). This module answers phi
normalised to (0, 1] (phi divided by the number of distinct values, as
``RankMap.normalized``) as an interval ``[lo, hi]`` that provably contains it, with the
method that gave it; ``lo == hi`` where the answer is exact.

Binary RBP with rational p = a/b > 1/2 (:func:`rbp_bounds`)
    Every one of the 2^N runs has its own value (a polynomial with coefficients in
    {-1, 0, 1} has no rational root in (0, 1)), so phi / 2^N = P(S <= y) for the run's
    y = sum_k x_k p^(k-1) and S = sum_k X_k p^(k-1) with X_k fair coin flips. With S_k =
    X_k + p S_(k+1), F_k(y) = P(S_k <= y) obeys

        F_k(y) = F_(k+1)(y / p) / 2 + F_(k+1)((y - 1) / p) / 2.

    On the grid y = i / M, rounding each argument down to the grid gives a lower bound of
    F (F is non-decreasing) and rounding up an upper bound; the indices are exact integer
    arithmetic (i b // a). Ranks deeper than K (where p^K / (1 - p) < 1 / M) are replaced
    by the bounds 0 <= S_(K+1) <= (1 - p^(N-K)) / (1 - p); with K = N nothing is replaced.
    Float rounding (at most 2^-53 per level, never amplified: each level averages) is
    added to the width. A run's y is placed on the grid exactly (Python integers), so
    ``lo <= phi / 2^N <= hi`` holds without any tolerance: a rigorous, deterministic
    bound (confidence 0 in :class:`PhiBounds`).

DCG / nDCG (:func:`dcg_bounds`): lattice convolution of the classes' sums, see there.

Not yet (see docs/guide.md, "Long runs"): graded RBP, a cache of the tables, and their
use by ``transform``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from irscale.errors import ArgumentError, IrscaleError
from irscale.validate import integer

RESOLUTION = 10**6  # grid points per unit of y by default (RBP(0.95), N = 1000: width about 5e-6)
MAX_GRID = 10**9  # grid points the tables may hold (8 GB each): beyond, refused up front
_ULP = 2.0**-53


@dataclass(frozen=True)
class PhiBounds:
    """phi / size of each run lies in ``[lo, hi]`` (``lo == hi``: exact).

    ``size``: the number of distinct values (exact integer), so ``phi`` itself lies in
    ``[lo * size, hi * size]``. ``confidence`` is 0 for deterministic bounds (these hold
    always), else the probability that they fail. ``width``: the largest ``hi - lo``
    over the runs asked; ``max_width``: the largest over every run (the table's worst).
    """

    lo: np.ndarray
    hi: np.ndarray
    method: str
    size: int
    resolution: int
    confidence: float
    assumptions: str
    max_width: float
    seconds: float
    details: dict = field(default_factory=dict)

    @property
    def width(self) -> float:
        return float(np.max(self.hi - self.lo)) if len(self.lo) else 0.0

    @property
    def mid(self) -> np.ndarray:
        return (self.lo + self.hi) / 2

    @property
    def exact(self) -> bool:
        return self.max_width == 0.0


_KERNELS: dict = {}


def _kernels():
    """(level, conv) compiled with numba: the grid recursion's level pass and the lattice
    convolution's class pass; None without numba (the numpy passes serve)."""
    if "k" in _KERNELS:
        return _KERNELS["k"]
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        _KERNELS["k"] = None
        return None

    @numba.njit(nogil=True, cache=True)
    def level(F, out, a, b, M, up):  # pragma: no cover (compiled)
        # out[i] = (F(i/(pM)) + F((i - M)/(pM))) / 2 on the grid 0..G, the arguments rounded
        # down (up = 0) or up (up = 1) to the grid; below 0: 0, beyond G: 1. The indices
        # floor((i b + off) / a) advance by b/a < 2 per step: kept as quotient and remainder
        # (no division in the loop)
        G = len(F) - 1
        off = a - 1 if up else 0
        n1, n2 = off, off - M * b
        q1, q2 = n1 // a, n2 // a
        r1, r2 = n1 - q1 * a, n2 - q2 * a
        for i in range(G + 1):
            v1 = 1.0 if q1 > G else F[q1]
            v2 = 0.0 if q2 < 0 else (1.0 if q2 > G else F[q2])
            out[i] = 0.5 * (v1 + v2)
            r1 += b
            while r1 >= a:
                r1 -= a
                q1 += 1
            r2 += b
            while r2 >= a:
                r2 -= a
                q2 += 1

    @numba.njit(nogil=True, cache=True)
    def conv(pmf, length, shifts, out):  # pragma: no cover (compiled)
        # out[j] = mean over s in shifts of pmf[j - s], j < length + max(shifts); returns that length
        new = length + shifts.max()
        for j in range(new):
            out[j] = 0.0
        for s in shifts:
            for j in range(length):
                out[j + s] += pmf[j]
        inv = 1.0 / len(shifts)
        for j in range(new):
            out[j] *= inv
        return new

    _KERNELS["k"] = (level, conv)
    return _KERNELS["k"]


def _level_kernel():
    k = _kernels()
    return None if k is None else k[0]


def _conv_kernel():
    k = _kernels()
    return None if k is None else k[1]


def _level_numpy(F, out, a, b, M, up):
    G = len(F) - 1
    i = np.arange(G + 1, dtype=np.int64)
    padded = np.concatenate(([0.0], F, [1.0]))  # index -1: below 0, G + 1: beyond G
    for n, target in ((i * b, 0), ((i - M) * b, 1)):
        j = -((-n) // a) if up else n // a
        v = padded[np.clip(j, -1, G + 1) + 1]
        if target == 0:
            out[:] = v
        else:
            out += v
    out *= 0.5


@dataclass
class RBPGrid:
    """The lower and upper tables of F_1 on the grid (see the module docstring)."""

    a: int
    b: int
    N: int
    M: int
    K: int
    lo: np.ndarray
    hi: np.ndarray
    slack: float
    seconds: float

    @classmethod
    def build(cls, p: Fraction, N: int, M: int, threads: bool = True, levels: int | None = None) -> "RBPGrid":
        """``levels``: the ranks computed exactly (default: all N, or fewer where the deeper
        ranks move y by under 1/M; tests pass a few to check the bound of the rest)."""
        a, b = p.numerator, p.denominator
        if not (Fraction(1, 2) < p < 1):
            raise ArgumentError(f"the grid recursion is for 1/2 < p < 1, not p = {p}")
        t = time.perf_counter()
        G = -(-M * b // (b - a))  # y < 1 / (1 - p) = b / (b - a): F = 1 from grid point G on
        if (G + M + 1) * b >= 2**62:  # the level pass's integers (i b, (i - M) b) stay in int64
            raise ArgumentError(f"RBP(p={p}): p = {a}/{b} has too large a denominator for the grid recursion at "
                                f"resolution {M:,} (its integers would pass 2^62); write p as a short fraction "
                                f"or decimal, e.g. RBP(p={float(p):.4g})")
        if G + 1 > MAX_GRID:
            raise IrscaleError(f"RBP(p={p}) bounds at resolution {M:,} need a grid of {G + 1:,} points (over "
                               f"{MAX_GRID:,}); use a smaller resolution")
        # levels computed exactly: all N, or K where the deeper ranks move y by under 1/M
        K = N
        tail = math.log(b / (b - a) * M) / -math.log(a / b)  # p^K / (1 - p) <= 1 / M
        if tail + 2 < N:
            K = int(math.ceil(tail)) + 2
        if levels is not None:
            K = min(N, integer("levels", levels, minimum=0))
        lo = np.ones(G + 1)
        hi = np.ones(G + 1)
        if K < N:  # S_(K+1) <= (1 - p^(N-K)) / (1 - p): lo is 1 only from there on
            smax = (1 - p ** (N - K)) / (1 - p)
            first = -(-smax.numerator * M // smax.denominator)
            lo[:min(first, G + 1)] = 0.0
        kernel = _level_kernel() or _level_numpy

        def run(F, up):
            other = np.empty_like(F)
            for _ in range(K):
                kernel(F, other, a, b, M, up)
                F, other = other, F
            return F

        if threads:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(2) as ex:  # the kernel releases the GIL: lo and hi together
                flo, fhi = ex.submit(run, lo, 0), ex.submit(run, hi, 1)
                lo, hi = flo.result(), fhi.result()
        else:
            lo, hi = run(lo, 0), run(hi, 1)
        return cls(a, b, N, M, K, lo, hi, (K + 1) * _ULP, time.perf_counter() - t)

    def query(self, keys) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of P(S <= y) for runs whose RBP key (RBPSpace.keys: y b^(N-1), exact
        integers) is each of ``keys``."""
        den = self.b ** (self.N - 1)
        G = len(self.lo) - 1
        lo, hi = np.empty(len(keys)), np.empty(len(keys))
        for n, key in enumerate(keys):
            num = int(key) * self.M
            i_lo, i_hi = num // den, -((-num) // den)
            lo[n] = self.lo[min(i_lo, G)]
            hi[n] = self.hi[min(i_hi, G)]
        return np.clip(lo - self.slack, 0.0, 1.0), np.clip(hi + self.slack, 0.0, 1.0)

    @property
    def max_width(self) -> float:
        """The widest interval any run can get: hi at a grid point over lo one below."""
        return float(min(1.0, np.max(self.hi[1:] - self.lo[:-1]) + 2 * self.slack))


def rbp_bounds(measure, N: int, runs: np.ndarray, resolution: int = RESOLUTION,
               threads: bool = True) -> PhiBounds:
    """Bounds on phi / 2^N of binary runs (an (n, N) 0/1 array) under binary RBP with
    p > 1/2 at run length N (see the module docstring); ``resolution``: grid points per
    unit of y (the width shrinks about as 1 / resolution)."""
    from irscale.measures import parse_measure
    from irscale.scales.spaces import space_for

    m = parse_measure(measure) if isinstance(measure, str) else measure
    N = integer("N", N, minimum=1)
    resolution = integer("resolution", resolution, minimum=16)
    p = m.p_exact
    space = space_for(m, N, 1)
    if type(space).__name__ != "RBPSpace":
        raise ArgumentError(f"{m} at N = {N}: not binary RBP with p > 1/2 (its scale has a closed form; "
                            "build its rank map instead)")
    runs = np.asarray(runs)
    if runs.ndim != 2 or runs.shape[1] != N or runs.dtype.kind not in "iub" or \
            (runs.size and (runs.min() < 0 or runs.max() > 1)):
        raise ArgumentError(f"runs must be an (n, {N}) integer array of 0/1 grades, not shape {runs.shape} of "
                            f"{runs.dtype}")
    grid = RBPGrid.build(p, N, resolution, threads)
    lo, hi = grid.query(space.keys(runs))
    return PhiBounds(lo, hi, "grid recursion", 2**N, resolution, 0.0,
                     "none (every one of the 2^N runs has its own value for rational p)", grid.max_width,
                     grid.seconds, {"p": str(p), "levels exact": grid.K, "grid points": len(grid.lo)})


# -- DCG / nDCG: lattice convolution of the class sums ---------------------------------------------


def _conv_numpy(pmf, length, shifts, out):
    new = length + int(shifts.max())
    out[:new] = 0.0
    for s in shifts:
        out[s:s + length] += pmf[:length]
    out[:new] *= 1.0 / len(shifts)
    return new


HOEFFDING_DELTAS = tuple(10.0 ** -k for k in range(2, 16))  # tail probabilities tried per run


@dataclass
class DCGLattice:
    """The distribution of the grid-rounded class sums of a DCG space (:func:`dcg_lattice`;
    the bounds are explained at :func:`dcg_bounds`)."""

    h: float  # grid spacing (value units)
    cdf: np.ndarray  # P(D <= j), D = sum of floor(w_c U_c / h)
    mean_err: float  # E[sum of rounding errors e_c = w_c U_c - h floor(w_c U_c / h)]
    err_min: float  # smallest and largest possible sum of rounding errors
    err_max: float
    hoeffding: float  # sum over classes of (range of e_c)^2
    slack: float  # float rounding of the convolution and the cumulative sum, bounded
    classes: int
    size: int
    seconds: float

    def query(self, values: np.ndarray, value_err: float) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of P(V <= m) for each value m (float, within ``value_err`` of the exact)."""
        cdf, h = self.cdf, self.h
        G = len(cdf) - 1
        m = np.asarray(values, dtype=np.float64)
        # float error of m, of mu, err_max and t (sums over the classes) and of the subtraction
        # and division below, generously
        pad = value_err + (self.classes + 4) * _ULP * (np.abs(m) + self.classes * h) + 1e-12 * h

        def at(x):  # P(h D <= x) for float x, x already moved by the error in the safe direction
            j = np.floor(x / h)
            return np.where(j < 0, 0.0, cdf[np.clip(j, 0, G).astype(np.int64)])

        lo = at(m - self.err_max - pad)  # E <= err_max: P(V <= m) >= P(hD <= m - err_max)
        hi = at(m - self.err_min + pad)  # E >= err_min: P(V <= m) <= P(hD <= m - err_min)
        for delta in HOEFFDING_DELTAS:  # one-sided: P(E - mu >= t) <= delta and P(mu - E >= t) <= delta
            t = math.sqrt(self.hoeffding * math.log(1 / delta) / 2) * (1 + 1e-12)
            lo = np.maximum(lo, at(m - self.mean_err - t - pad) - delta)
            hi = np.minimum(hi, at(m - self.mean_err + t + pad) + delta)
        return np.clip(lo - self.slack, 0.0, 1.0), np.clip(hi + self.slack, 0.0, 1.0)

    @property
    def max_width(self) -> float:
        """An upper bound of the widest interval any value gets: lo and hi are
        non-decreasing in the value, so between two points m_i < m_(i+1) of a sweep of the
        value range no interval is wider than hi(m_(i+1)) - lo(m_i)."""
        m = np.linspace(0, self.h * (len(self.cdf) - 1), min(len(self.cdf), 2_000_001))
        lo, hi = self.query(m, 1e-12 * float(m[-1]))  # the padding dcg_bounds gives real values
        return float(min(1.0, np.max(hi[1:] - lo[:-1])))


def dcg_lattice(space, grid: int) -> DCGLattice:
    """Round each class's contributions w_c a (a its attainable integer sums, w_c in
    60-digit arithmetic) down onto a grid of ``grid`` points over the value range and
    convolve the class distributions (uniform over the attainable sums: under the
    space's assumption each vector of class sums is one distinct value)."""
    import mpmath

    t0 = time.perf_counter()
    A = space.attainable
    with mpmath.workdps(60):
        W = space._exact_class_weights
        vmax = mpmath.fsum(w * int(a[-1]) for w, a in zip(W, A))
        h = vmax / grid
        shifts, mean_err, emin, emax, S = [], mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0)
        for w, a in zip(W, A):
            v = [w * int(x) for x in a]
            d = [int(mpmath.floor(x / h)) for x in v]
            e = [x - k * h for x, k in zip(v, d)]
            shifts.append(np.array(d, dtype=np.int64))
            mean_err += mpmath.fsum(e) / len(e)
            emin, emax = emin + min(e), emax + max(e)
            S += (max(e) - min(e)) ** 2
        h_f, mean_f, emin_f, emax_f, S_f = (float(x) for x in (h, mean_err, emin, emax, S))
    total = sum(int(s.max()) for s in shifts) + 1
    pmf, out = np.zeros(total), np.zeros(total)
    pmf[0], length = 1.0, 1
    conv = _conv_kernel() or _conv_numpy
    for s in sorted(shifts, key=len, reverse=True):  # the many-valued classes while the support is short
        length = conv(pmf, length, s, out)
        pmf, out = out, pmf
    cdf = np.minimum(np.cumsum(pmf[:length]), 1.0)
    ops = sum(len(s) + 1 for s in shifts) + length
    return DCGLattice(h_f, cdf, mean_f, emin_f, emax_f, S_f * (1 + 1e-9), 4 * ops * _ULP, len(shifts),
                      space.n_values, time.perf_counter() - t0)


def dcg_bounds(measure, N: int, runs: np.ndarray, levels: int = 2, grid: int = 10**7) -> PhiBounds:
    """Bounds on phi / |M| of runs (an (n, N) array of grades 0..levels-1) under DCG or
    nDCG at run length N (nDCG maps like DCG).

    Under the space's assumption (no rational relation among the irrational factors of
    different classes of commensurable weights, e.g. 1/log2(3) and 1/log2(5)), distinct
    values are distinct vectors of class sums, so phi / |M| = P(V <= m) for V = sum_c w_c
    U_c with U_c uniform over class c's attainable sums. Each term is rounded down onto a
    grid of spacing h; the sum D of the rounded terms has an exact distribution by
    convolution, and V = h D + E with the rounding errors E between their smallest and
    largest sums, or (Hoeffding, the errors being independent and each within an
    interval) within t of their mean except with probability delta. Every bound below
    holds exactly; the smallest interval over delta in HOEFFDING_DELTAS is kept."""
    from irscale.measures import parse_measure
    from irscale.scales.spaces import DCGSpace, space_for

    m = parse_measure(measure) if isinstance(measure, str) else measure
    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    grid = integer("grid", grid, minimum=16, maximum=MAX_GRID)
    space = space_for(m, N, levels - 1)
    if not isinstance(space, DCGSpace):
        raise ArgumentError(f"{m} is not DCG or nDCG")
    runs = np.asarray(runs)
    top = 1 if space.binary_measure else space.c
    if runs.ndim != 2 or runs.shape[1] != N or runs.dtype.kind not in "iub" or \
            (runs.size and (runs.min() < 0 or runs.max() > top)):
        raise ArgumentError(f"runs must be an (n, {N}) integer array of grades 0..{top}, not shape {runs.shape} "
                            f"of {runs.dtype}")
    lat = dcg_lattice(space, grid)
    totals = space.class_totals(runs)
    values = totals @ space.class_weights  # float; its error is far below the pad
    value_err = 1e-12 * (float(np.max(values)) if len(values) else 0.0) + 1e-15
    lo, hi = lat.query(values, value_err)
    return PhiBounds(lo, hi, "lattice convolution", lat.size, grid, 0.0,
                     "distinct vectors of class sums have distinct values (the weights' irrational factors, "
                     "1/log r for r not a perfect power, are linearly independent over the rationals)",
                     lat.max_width, lat.seconds, {"classes": len(space.attainable), "grid points": len(lat.cdf),
                                                  "spacing": lat.h})


# -- any measure -------------------------------------------------------------------------------------

EXACT_RUNS = 2**34  # phi_bounds builds the exact rank map (lo = hi) of spaces with at most this many runs


def phi_bounds(measure, N: int, runs: np.ndarray, levels: int = 2, resolution: int | None = None) -> PhiBounds:
    """phi / |M| of each run (an (n, N) array of grades 0..levels-1) at run length N,
    with a guarantee: exact (``lo == hi``) where a closed form or an exact engine serves
    (closed forms: P, R, F, RR, RBTO, binary RBP with p <= 1/2, at any N; other measures
    while REL^N has at most EXACT_RUNS runs), certified bounds for binary RBP with p > 1/2
    (:func:`rbp_bounds`, ``resolution`` grid points per unit) and DCG/nDCG
    (:func:`dcg_bounds`, ``resolution`` grid points in all), and a refusal that says why
    for the rest (AP beyond the exact range: its distinct values have no product
    structure to bound)."""
    from irscale.errors import MeasureError
    from irscale.measures import parse_measure
    from irscale.scales.rankmap import build, choose_engine
    from irscale.scales.spaces import DCGSpace, RBPSpace, space_for

    m = parse_measure(measure) if isinstance(measure, str) else measure
    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    if resolution is not None:
        resolution = integer("resolution", resolution, minimum=16)
    space = space_for(m, N, levels - 1)
    t = time.perf_counter()
    exact = space.closed or space.n_runs <= EXACT_RUNS
    if not exact and isinstance(space, RBPSpace):
        if levels != 2:
            raise MeasureError(f"{m} at N = {N} on {levels} levels: certified bounds are built for binary RBP "
                               "only so far (levels=2, or binarise the runs at rel)")
        return rbp_bounds(m, N, runs, resolution or RESOLUTION)
    if not exact and isinstance(space, DCGSpace):
        return dcg_bounds(m, N, runs, levels, resolution or 10**7)
    if not exact:
        raise MeasureError(
            f"{m} at N = {N}: no certified bounds. Its {space.n_runs:.3g} runs have no structure that bounds "
            f"their distinct values (unlike RBP and DCG, whose values are sums over independent ranks or "
            f"classes), and estimating them from sampled runs does not bound phi. Use a shorter N, where the "
            f"exact rank map is built (irscale.scales.build('{m}', N); the 2021 paper stopped at 30), or a "
            f"measure with bounds (RBP, nDCG)")
    choose_engine(space)  # its limits, before anything is built
    rm = build(m, N, levels)
    norm = rm.normalized(rm.phi_runs(np.asarray(runs)))
    return PhiBounds(norm, norm.copy(), f"exact ({rm.engine})", int(rm.size), 0, 0.0, "none", 0.0,
                     time.perf_counter() - t)
