"""Certified bounds on phi where no exact engine reaches: runs of any length.

The 2021 paper builds phi by listing every run of REL^N and calls longer runs infeasible
(Section 8: "our future work will concern approximating this generation process in order
to make it possible to deal with runs of whatever length"). This module answers phi
normalised to (0, 1] (phi divided by the number of distinct values, as
``RankMap.normalized``) as an interval ``[lo, hi]`` that provably contains it, with the
method that gave it; ``lo == hi`` where the answer is exact.

RBP with rational p = a/b whose runs all have their own values (:func:`rbp_bounds`)
    Binary runs with p > 1/2: every one of the 2^N runs has its own value (a polynomial
    with coefficients in {-1, 0, 1} has no rational root in (0, 1)). Graded runs with
    integer gains G_0 < ... < G_c (``RBPSpace.gain_ints``; 0..c by default): every one
    of the (c+1)^N runs has its own value when no two gains differ by a multiple of b
    (:func:`~irscale.scales.counting.rbp_runs_distinct`; e.g. b > c for gains 0..c);
    elsewhere (RBP(p=2/3) on 4 levels) runs tie and the bounds are refused. (Grades of
    equal gain, e.g. ``gains=1:0``, tie; the distinct gains are what is counted.) Then
    ``phi / |M| = P(S <= y)`` for the run's y = sum_k G(g_k) p^(k-1) and S = sum_k X_k
    p^(k-1) with X_k uniform over the L distinct gains (binary: fair coin flips). With S_k = X_k + p S_(k+1),
    F_k(y) = P(S_k <= y) obeys

        F_k(y) = (1 / L) sum over the gains G of F_(k+1)((y - G) / p)

    (binary: F_(k+1)(y / p) / 2 + F_(k+1)((y - 1) / p) / 2). On the grid y = i t / M
    (t the top gain; 0 <= y < t / (1 - p)), rounding each argument down to the grid
    gives a lower bound of F (F is non-decreasing) and rounding up an upper bound; the
    indices are exact integer arithmetic (floor(((i t - G M) b) / (a t))). Ranks deeper
    than K (where p^K / (1 - p) < 1 / M) are replaced by the bounds 0 <= S_(K+1) <=
    t (1 - p^(N-K)) / (1 - p); with K = N nothing is replaced. Float rounding (at most
    2^-53 per level for two gains, L 2^-53 for more, never amplified: each level
    averages) is added to the width. A run's y is placed on the grid exactly (its key,
    Python integers), so ``lo <= phi / |M| <= hi`` holds without any tolerance: a
    rigorous, deterministic bound (confidence 0 in :class:`PhiBounds`).

DCG / nDCG (:func:`dcg_bounds`): lattice convolution of the classes' sums, see there.

The tables (the grid's lo and hi, the lattice's cdf) are cached on disk per measure, N,
levels and resolution beside the rank maps (``cache=``; ``irscale cache info`` lists them,
``irscale cache clear`` removes them), except those over ``CACHE_MAX_BYTES``.

Not yet (see docs/guide.md, "Long runs"): their use by ``transform``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from irscale.errors import ArgumentError, IrscaleError, MeasureError, count_text
from irscale.kernels import compiled
from irscale.validate import integer

__all__ = [
    "bounds_resolution",
    "CACHE_MAX_BYTES",
    "dcg_bounds",
    "dcg_lattice",
    "DCGLattice",
    "EXACT_RUNS",
    "HOEFFDING_DELTAS",
    "MAX_GRID",
    "phi_bounds",
    "PhiBounds",
    "rbp_bounds",
    "RBPGrid",
    "RESOLUTION",
    "runs_distinct",
]


RESOLUTION = 10**6  # grid points per unit of y / top gain by default (RBP(0.95), N = 1000: width about 5e-6)
MAX_GRID = 10**9  # grid points the tables may hold (8 GB each): beyond, refused up front
_ULP = 2.0**-53
_TINY = 1e-300  # absolute error of underflow: at most 2^-1074 per rounding, far fewer than 10^20 of them
CACHE_MAX_BYTES = 2**30  # bounds tables larger than this (1 GiB) are not stored in the cache (see _through_cache)
_TABLES_FORMAT = 2  # part of every bounds table's cache key: raise it when the tables' meaning changes
_BINARY = np.array([0, 1], dtype=np.int64)  # the gains of binary runs


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

    def _repr_html_(self) -> str:
        """A compact display for notebooks: the method, size, guarantee and widths, then
        the bounds of the first runs (``irscale._display.MAX_ROWS``; the rest counted)."""
        from html import escape

        from irscale._display import MAX_ROWS, card, fmt, names, table

        n = len(self.lo)
        facts = [
            ("method", names([self.method])),
            ("runs", f"{n:,}"),
            ("distinct values (size)", f"{self.size:,}"),
            ("guarantee", "exact" if self.exact else ("certified" if self.confidence == 0 else "probabilistic")),
            ("width (these runs)", fmt(self.width)),
            ("max width (all runs)", fmt(self.max_width)),
            ("assumptions", escape(self.assumptions)),
            ("seconds", f"{self.seconds:.3g}"),
        ]
        if self.resolution:
            facts.insert(3, ("resolution", f"{self.resolution:,}"))
        if self.confidence:
            facts.append(("failure probability", fmt(self.confidence)))
        facts += [(str(k), fmt(v)) for k, v in self.details.items()]
        k = min(n, MAX_ROWS)
        rows = [[i, self.lo[i], self.hi[i], self.hi[i] - self.lo[i]] for i in range(k)]
        body = table(["lo", "hi", "width"], rows, index="run", total=n)
        return card("PhiBounds: phi / size of each run lies in [lo, hi]", facts, body)


def _kernels():
    """(level, conv) compiled with numba: the grid recursion's level pass and the lattice
    convolution's class pass; None without numba (the numpy passes serve)."""
    return compiled("scales.bounds", _build_kernels)


def _build_kernels(numba):
    @numba.njit(nogil=True, cache=True)
    def level_gains(F, out, a, b, M, up, gains):  # pragma: no cover (compiled)
        # out[i] = mean over the gains g of F((i t / M - g) / p) read on the grid y = j t / M
        # (t = the top gain), the argument rounded down (up = 0) or up (up = 1) to the grid;
        # below 0: 0, beyond G: 1. The grid index of gain g is floor(((i t - g M) b + off) /
        # (a t)); it advances by b/a per step: kept as quotient and remainder (no division
        # in the loop). Two gains (binary runs) have their own loop: the common case, as fast
        # as scalars allow
        G = len(F) - 1
        L = len(gains)
        t = gains.max()
        A, B = a * t, b * t
        off = A - 1 if up else 0
        if L == 2:
            n1, n2 = off - gains[0] * M * b, off - gains[1] * M * b
            q1, q2 = n1 // A, n2 // A
            r1, r2 = n1 - q1 * A, n2 - q2 * A
            for i in range(G + 1):
                v1 = 0.0 if q1 < 0 else (1.0 if q1 > G else F[q1])
                v2 = 0.0 if q2 < 0 else (1.0 if q2 > G else F[q2])
                out[i] = 0.5 * (v1 + v2)
                r1 += B
                while r1 >= A:
                    r1 -= A
                    q1 += 1
                r2 += B
                while r2 >= A:
                    r2 -= A
                    q2 += 1
            return
        q = np.empty(L, np.int64)
        r = np.empty(L, np.int64)
        for j in range(L):
            n = off - gains[j] * M * b
            q[j] = n // A
            r[j] = n - q[j] * A
        for i in range(G + 1):
            s = 0.0
            for j in range(L):
                qj = q[j]
                s += 0.0 if qj < 0 else (1.0 if qj > G else F[qj])
                rj = r[j] + B
                while rj >= A:
                    rj -= A
                    qj += 1
                q[j] = qj
                r[j] = rj
            out[i] = s / L

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

    def level(F, out, a, b, M, up, gains=_BINARY):
        level_gains(F, out, a, b, M, up, gains)

    return level, conv


def _level_kernel():
    k = _kernels()
    return None if k is None else k[0]


def _conv_kernel():
    k = _kernels()
    return None if k is None else k[1]


def _level_numpy(F, out, a, b, M, up, gains=_BINARY):
    """The level pass in numpy (equal to the compiled one, bit for bit)."""
    G = len(F) - 1
    t = int(max(gains))
    A = a * t
    i = np.arange(G + 1, dtype=np.int64)
    padded = np.concatenate(([0.0], F, [1.0]))  # index -1: below 0, G + 1: beyond G
    for k, g in enumerate(gains):
        n = (i * t - int(g) * M) * b
        j = -((-n) // A) if up else n // A
        v = padded[np.clip(j, -1, G + 1) + 1]
        if k == 0:
            out[:] = v
        else:
            out += v
    out /= len(gains)


def _exact_ranks(p: Fraction, N: int, M: int) -> int:
    """The ranks the grid recursion computes: all N, or K where the deeper ranks move
    y / t by under 1 / M (p^K / (1 - p) <= 1 / M). A choice of work, not of rigour: the
    ranks past K are bounded whatever K is."""
    a, b = p.numerator, p.denominator
    tail = math.log(b / (b - a) * M) / -math.log(a / b)
    return int(math.ceil(tail)) + 2 if tail + 2 < N else N


def _gain_tuple(gains) -> tuple[int, ...]:
    try:
        out = tuple(int(g) for g in gains)
    except (TypeError, ValueError):
        out = ()
    if (
        len(out) < 1
        or list(out) != sorted(set(out))
        or out[0] < 0
        or out[-1] == 0
        or any(not isinstance(g, (int, np.integer)) for g in gains)
    ):
        raise ArgumentError(
            f"gains must be distinct non-negative integers in increasing order, not all 0, "
            f"e.g. gains=(0, 1, 2, 3); got {gains!r}"
        )
    return out


def _grid_slack(K: int, L: int) -> float:
    """The float rounding of K level passes over L gains: the sum of L values in [0, 1]
    and its division by L, at most 2^-53 for L = 2 ((v1 + v2) / 2: one rounding of a sum
    below 2, halving exact) and L 2^-53 beyond; each level averages the errors before it
    (never amplified); one more for the tables' start."""
    per = 1 if L <= 2 else L
    return (K + 1) * per * _ULP


@dataclass
class RBPGrid:
    """The lower and upper tables of F_1 on the grid y = i t / M, t the top gain (see the
    module docstring); ``K`` ranks computed, the rest bounded."""

    a: int
    b: int
    N: int
    M: int
    K: int
    lo: np.ndarray
    hi: np.ndarray
    slack: float
    seconds: float
    gains: tuple[int, ...] = (0, 1)

    @classmethod
    def build(
        cls, p: Fraction, N: int, M: int, threads: bool = True, ranks: int | None = None, gains=(0, 1)
    ) -> RBPGrid:
        """Tables of P(S <= y), S = sum over k = 1..N of X_k p^(k-1), X_k uniform over the
        integer ``gains`` (distinct, increasing, from 0 or more; binary: 0, 1), at ``M``
        grid points per unit of y / t (t = the top gain). ``ranks``: the ranks computed
        exactly (default :func:`_exact_ranks`; tests pass a few to check the bound of the
        rest)."""
        a, b = p.numerator, p.denominator
        if not (0 < p < 1):
            raise ArgumentError(f"the grid recursion is for 0 < p < 1, not p = {p}")
        gains = _gain_tuple(gains)
        t = gains[-1]
        t0 = time.perf_counter()
        G = -(-M * b // (b - a))  # y / t < 1 / (1 - p) = b / (b - a): F = 1 from grid point G on
        if (G + M + 1) * b * t >= 2**62:  # the level pass's integers ((i t - g M) b) stay in int64
            raise ArgumentError(
                f"RBP(p={p}): p = {a}/{b} has too large a denominator for the grid recursion at "
                f"resolution {M:,}"
                + (f" with gains up to {t}" if t > 1 else "")
                + f" (its integers would pass 2^62); write p as a short fraction or decimal, e.g. "
                f"RBP(p={float(p):.4g})"
            )
        if G + 1 > MAX_GRID:
            raise IrscaleError(
                f"RBP(p={p}) bounds at resolution {M:,} need a grid of {G + 1:,} points (over "
                f"{MAX_GRID:,}); use a smaller resolution"
            )
        K = _exact_ranks(p, N, M) if ranks is None else min(N, integer("ranks", ranks, minimum=0))
        lo = np.ones(G + 1)
        hi = np.ones(G + 1)
        if K < N:  # S_(K+1) <= t (1 - p^(N-K)) / (1 - p): lo is 1 only from there on
            smax = (1 - p ** (N - K)) / (1 - p)  # in units of t
            first = -(-smax.numerator * M // smax.denominator)
            lo[: min(first, G + 1)] = 0.0
        kernel = _level_kernel() or _level_numpy
        g_arr = np.array(gains, dtype=np.int64)

        def run(F, up):
            other = np.empty_like(F)
            for _ in range(K):
                kernel(F, other, a, b, M, up, g_arr)
                F, other = other, F
            return F

        if threads:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(2) as ex:  # the kernel releases the GIL: lo and hi together
                flo, fhi = ex.submit(run, lo, 0), ex.submit(run, hi, 1)
                lo, hi = flo.result(), fhi.result()
        else:
            lo, hi = run(lo, 0), run(hi, 1)
        return cls(a, b, N, M, K, lo, hi, _grid_slack(K, len(gains)), time.perf_counter() - t0, gains)

    def query(self, keys) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of P(S <= y) for runs whose RBP key (RBPSpace.keys: y b^(N-1) with y in
        the integer gains, exact integers) is each of ``keys``: grid index y M / t, exact."""
        den = self.gains[-1] * self.b ** (self.N - 1)
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


def _through_cache(identity: str, size: int, build, arrays_of, from_arrays, cache: bool):
    """``(table, seconds, note)``: the bounds table ``identity`` loaded from the on-disk
    cache (:mod:`irscale.scales.cache`: checksummed, damaged files warned about and
    rebuilt), else built and stored; ``seconds`` is the time it took here (the load, or
    the build), ``note`` says which. Tables over ``CACHE_MAX_BYTES`` are built and not
    stored: a 10^6 grid for RBP(0.95) is 320 MB (two float64 tables of 20 million points)
    and stays in, a grid of 10^8 points would be 1.6 GB per entry. They are stored as
    they are (float64): rounding them to store less would break the bounds' rigour."""
    from irscale.scales import cache as C

    if not cache:
        t = build()
        return t, t.seconds, "not used (cache=False)"
    t0 = time.perf_counter()
    z = C.load_table(identity)
    if z is not None:
        try:
            table = from_arrays(z)
        except (KeyError, ValueError, TypeError, IndexError) as e:
            C.damaged(z["_file"], e, "bounds-table")
        else:
            return (
                table,
                time.perf_counter() - t0,
                (f"loaded from the cache ({z['_file']}; built in {table.seconds:.2f} s)"),
            )
    table = build()
    arrays = arrays_of(table)
    nbytes = sum(np.asarray(a).nbytes for a in arrays.values())
    if nbytes > CACHE_MAX_BYTES:
        return (
            table,
            table.seconds,
            (
                f"built, not stored: its tables take {nbytes / 2**20:,.0f} MiB, over the "
                f"cache's limit of {CACHE_MAX_BYTES / 2**20:,.0f} MiB (bounds.CACHE_MAX_BYTES)"
            ),
        )
    f = C.save_table(identity, size, arrays)
    return (
        table,
        table.seconds,
        (f"built and stored ({f})" if f is not None else "built; the cache could not be written (warned)"),
    )


def _scalar(z, name: str, kind=int):
    a = z[name]
    if a.shape != ():
        raise ValueError(f"{name} is not a scalar")
    return kind(a)


def _table(z, name: str, length: int | None = None) -> np.ndarray:
    a = z[name]
    if a.dtype != np.float64 or a.ndim != 1 or len(a) < 1 or (length is not None and len(a) != length):
        raise ValueError(f"{name} is not a float64 table" + (f" of {length:,} points" if length else ""))
    return a


def _rbp_grid(p: Fraction, N: int, M: int, gains: tuple[int, ...], threads: bool, cache: bool):
    """(RBPGrid, seconds, cache note): :meth:`RBPGrid.build` through the cache."""
    gains = _gain_tuple(gains)
    K = _exact_ranks(p, N, M)
    a, b = p.numerator, p.denominator
    identity = (
        f"RBP bounds table|p={a}/{b}|gains={','.join(map(str, gains))}|N={N}|resolution={M}|ranks={K}"
        f"|format={_TABLES_FORMAT}"
    )

    def arrays_of(g: RBPGrid) -> dict:
        return {"lo": g.lo, "hi": g.hi, "slack": np.array(g.slack), "seconds": np.array(g.seconds)}

    def from_arrays(z) -> RBPGrid:
        G = -(-M * b // (b - a))
        slack = _grid_slack(K, len(gains))
        if _scalar(z, "slack", float) != slack:
            raise ValueError(f"its float slack {_scalar(z, 'slack', float)!r} is not this grid's {slack!r}")
        return RBPGrid(
            a, b, N, M, K, _table(z, "lo", G + 1), _table(z, "hi", G + 1), slack, _scalar(z, "seconds", float), gains
        )

    return _through_cache(
        identity, len(gains) ** N, lambda: RBPGrid.build(p, N, M, threads, gains=gains), arrays_of, from_arrays, cache
    )


def rbp_bounds(
    measure,
    N: int,
    runs: np.ndarray,
    resolution: int = RESOLUTION,
    threads: bool = True,
    levels: int = 2,
    cache: bool = True,
    keys=None,
) -> PhiBounds:
    """Bounds on ``phi / |M|`` of runs (an (n, N) integer array of grades 0..levels-1; 0/1
    for binary RBP) under RBP with rational p at run length N where every run has its own
    value (see the module docstring); ``resolution``: grid points per unit of y / t, t
    the top integer gain (the width shrinks about as 1 / resolution).

    Graded runs: the space's integer gains G_0 <= ... <= G_c (:attr:`RBPSpace.gain_ints`);
    when the distinct ones differ pairwise by no multiple of b (p = a/b), every vector of
    gains has its own value (:func:`~irscale.scales.counting.rbp_runs_distinct`'s proof),
    ``|M| = (number of distinct gains)^N`` and ``phi / |M| = P(S <= y)`` with X_k uniform over
    the distinct gains. Otherwise runs tie in ways the recursion does not count: refused
    (MeasureError), with the exact engines' range.

    ``cache``: load the grid's tables from the on-disk cache (``irscale cache info``)
    where an earlier call stored them, else build and store them (``details["cache"]``
    says which; ``seconds`` is the load or the build). ``keys``: the runs' exact keys
    (``RBPSpace.keys`` of their binarised view) where the caller has them already
    (transform does), else computed here."""
    from irscale.measures import parse_measure
    from irscale.measures.gains import RBP
    from irscale.scales.spaces import space_for
    from irscale.scales.spaces.rbp import RBPSpace

    m = parse_measure(measure) if isinstance(measure, str) else measure
    N = integer("N", N, minimum=1)
    resolution = integer("resolution", resolution, minimum=16)
    levels = integer("levels", levels, minimum=2)
    space = space_for(m, N, levels - 1)
    on = "" if levels == 2 else f" on {levels} levels"
    if not isinstance(space, RBPSpace):
        if getattr(m, "p_exact", None) is None:
            raise ArgumentError(f"{m} is not RBP: rbp_bounds bounds RBP only (phi_bounds serves every measure)")
        if space.c == 1:
            raise ArgumentError(
                f"{m} at N = {N}: not binary RBP with p > 1/2 (its scale has a closed form; build "
                f"its rank map instead: irscale.scales.build('{m}', {N}))"
            )
        raise ArgumentError(
            f"{m} at N = {N}{on}: this p gives a closed form (exact at any N, nothing to bound); "
            f"build its rank map instead: irscale.scales.build('{m}', {N}, {levels})"
        )
    assert isinstance(m, RBP)  # an RBPSpace serves RBP only
    p = m.p_exact
    a, b = p.numerator, p.denominator
    top = levels - 1  # the judged grades; a binary measure (rel=) binarises them below
    runs = np.asarray(runs)
    if (
        runs.ndim != 2
        or runs.shape[1] != N
        or runs.dtype.kind not in "iub"
        or (runs.size and (runs.min() < 0 or runs.max() > top))
    ):
        what = "0/1 grades" if top == 1 else f"grades 0..{top}"
        raise ArgumentError(f"runs must be an (n, {N}) integer array of {what}, not shape {runs.shape} of {runs.dtype}")
    runs = space.grade_view(runs)  # binary measures: 1 for grades >= rel (1 by default)
    G = space.gain_ints
    gains = sorted(set(G))
    if any((gi - gj) % b == 0 for i, gi in enumerate(gains) for gj in gains[:i]):
        from irscale.scales.rankmap import exact_reach

        last = exact_reach(m, space.c, N)
        core = str(m).split("@")[0]
        exact = (
            f"the exact engines build it up to N = {last} (irscale.scales.build('{core}', {last}, {levels}))"
            if last
            else f"no exact engine builds it on {levels} levels"
        )
        span = gains[-1] - gains[0]
        raise MeasureError(
            f"{m} at N = {N}{on}: with p = {a}/{b} and integer gains {', '.join(map(str, G))}, two gains differ "
            f"by a multiple of b = {b}, so different runs can tie and phi / |M| is not the fraction of runs at or "
            f"below a value, which is what the grid recursion bounds. {exact[0].upper() + exact[1:]}; or binarise "
            f"the runs (RBP(p={m.p}, rel=1): binary, bounded at any N), or take p = a/b with b > {span} (e.g. "
            f"RBP(p={_suggest_p(p, span)}))"
        )
    grid, seconds, note = _rbp_grid(p, N, resolution, tuple(gains), threads, cache)
    lo, hi = grid.query(space.keys(runs) if keys is None else keys)
    size = len(gains) ** N
    why = (
        "every one of the 2^N runs has its own value for rational p"
        if len(G) == 2
        else f"every vector of the gains {', '.join(map(str, gains))} has its own value (no two differ by a "
        f"multiple of b = {b})" + (", grades of equal gain tie" if len(gains) < len(G) else "")
    )
    return PhiBounds(
        lo,
        hi,
        "grid recursion",
        size,
        resolution,
        0.0,
        f"none ({why})",
        grid.max_width,
        seconds,
        {
            "p": str(p),
            "gains": ",".join(map(str, gains)),
            "levels exact": grid.K,
            "grid points": len(grid.lo),
            "cache": note,
        },
    )


def _suggest_p(p: Fraction, span: int) -> str:
    """A decimal near p whose denominator (in lowest terms) exceeds ``span``."""
    for digits in range(2, 8):
        for step in (0, 1, -1):
            q = Fraction(round(p * 10**digits) + step, 10**digits)
            if 0 < q < 1 and q.denominator > span:
                return str(float(q))
    return f"{float(p):.6f}"


# -- DCG / nDCG: lattice convolution of the class sums ---------------------------------------------


def _conv_numpy(pmf, length, shifts, out):
    new = length + int(shifts.max())
    out[:new] = 0.0
    for s in shifts:
        out[s : s + length] += pmf[:length]
    out[:new] *= 1.0 / len(shifts)
    return new


HOEFFDING_DELTAS = tuple(10.0**-k for k in range(2, 16))  # tail probabilities tried per run


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
    # float rounding of the convolution and the cumulative sum, bounded relative to the value:
    # every step adds or scales non-negative numbers, so each computed probability is within a
    # factor 1 +- slack of the exact one (plus _TINY for underflow), which keeps the far tail
    # (phi / |M| of 1e-40 at N = 1000) resolved instead of drowned by an absolute margin
    slack: float
    classes: int
    size: int
    seconds: float
    width: float | None = None  # max_width once swept (stored with the cached lattice)

    def query(self, values: np.ndarray, value_err: float) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of P(V <= m) for each value m (float, within ``value_err`` of the exact)."""
        cdf, h = self.cdf, self.h
        G = len(cdf) - 1
        m = np.asarray(values, dtype=np.float64)
        # float error of m, of mu, err_max and t (sums over the classes) and of the subtraction
        # and division below, generously
        pad = value_err + (self.classes + 4) * _ULP * (np.abs(m) + self.classes * h) + 1e-12 * h

        def at(x, up):  # P(h D <= x) for float x, x already moved by the error in the safe direction,
            # the table's float error added (up) or taken off
            j = np.floor(x / h)
            p = np.where(j < 0, 0.0, cdf[np.clip(j, 0, G).astype(np.int64)])
            return p * (1 + self.slack) + _TINY if up else p * (1 - self.slack) - _TINY

        lo = at(m - self.err_max - pad, False)  # E <= err_max: P(V <= m) >= P(hD <= m - err_max)
        hi = at(m - self.err_min + pad, True)  # E >= err_min: P(V <= m) <= P(hD <= m - err_min)
        for delta in HOEFFDING_DELTAS:  # one-sided: P(E - mu >= t) <= delta and P(mu - E >= t) <= delta
            t = math.sqrt(self.hoeffding * math.log(1 / delta) / 2) * (1 + 1e-12)
            lo = np.maximum(lo, at(m - self.mean_err - t - pad, False) - delta)
            hi = np.minimum(hi, at(m - self.mean_err + t + pad, True) + delta)
        return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)

    @property
    def max_width(self) -> float:
        """An upper bound of the widest interval any value gets: lo and hi are
        non-decreasing in the value, so between two points m_i < m_(i+1) of a sweep of the
        value range no interval is wider than hi(m_(i+1)) - lo(m_i). Swept once per lattice
        (seconds at grid 10^7) and kept."""
        if self.width is None:
            m = np.linspace(0, self.h * (len(self.cdf) - 1), min(len(self.cdf), 2_000_001))
            lo, hi = self.query(m, 1e-12 * float(m[-1]))  # the padding dcg_bounds gives real values
            self.width = float(min(1.0, np.max(hi[1:] - lo[:-1])))
        return self.width


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
    # relative error: a class pass sums at most len(s) non-negative terms and scales by a
    # rounded 1 / len(s) (len(s) + 2 roundings), the cumulative sum adds `length` terms; each
    # rounding multiplies by at most 1 + 2^-53, and errors compound additively to first order
    # (the factor 2 covers the second order and more)
    slack = _lattice_slack([len(s) for s in shifts], length)
    return DCGLattice(
        h_f, cdf, mean_f, emin_f, emax_f, S_f * (1 + 1e-9), slack, len(shifts), space.n_values, time.perf_counter() - t0
    )


def _lattice_slack(class_sizes: list[int], length: int) -> float:
    """The lattice's relative float error (see dcg_lattice): 2 * (roundings) * 2^-53."""
    return 2 * (sum(n + 2 for n in class_sizes) + length) * _ULP


def _dcg_lattice(space, grid: int, cache: bool):
    """(DCGLattice, seconds, cache note): :func:`dcg_lattice` through the cache."""
    identity = f"DCG bounds table|{space.identity}|grid={grid}|format={_TABLES_FORMAT}"
    scalars = ("h", "mean_err", "err_min", "err_max", "hoeffding", "slack", "seconds")

    def arrays_of(lat: DCGLattice) -> dict:
        return {
            "cdf": lat.cdf,
            "classes": np.array(lat.classes),
            "max_width": np.array(lat.max_width),
            **{k: np.array(float(getattr(lat, k))) for k in scalars},
        }

    def from_arrays(z) -> DCGLattice:
        classes = _scalar(z, "classes")
        if classes != len(space.attainable):
            raise ValueError(f"{classes} classes, not the space's {len(space.attainable)}")
        v = {k: _scalar(z, k, float) for k in scalars}
        cdf = _table(z, "cdf")
        slack = _lattice_slack([len(a) for a in space.attainable], len(cdf))
        if v["slack"] != slack:
            raise ValueError(f"its float slack {v['slack']!r} is not this lattice's {slack!r}")
        return DCGLattice(
            v["h"],
            cdf,
            v["mean_err"],
            v["err_min"],
            v["err_max"],
            v["hoeffding"],
            v["slack"],
            classes,
            space.n_values,
            v["seconds"],
            _scalar(z, "max_width", float),
        )

    return _through_cache(identity, space.n_values, lambda: dcg_lattice(space, grid), arrays_of, from_arrays, cache)


def dcg_bounds(measure, N: int, runs: np.ndarray, levels: int = 2, grid: int = 10**7, cache: bool = True) -> PhiBounds:
    """Bounds on ``phi / |M|`` of runs (an (n, N) array of grades 0..levels-1) under DCG or
    nDCG at run length N (nDCG maps like DCG).

    Under the space's assumption (no rational relation among the irrational factors of
    different classes of commensurable weights, e.g. 1/log2(3) and 1/log2(5)), distinct
    values are distinct vectors of class sums, so ``phi / |M| = P(V <= m)`` for V = sum_c w_c
    U_c with U_c uniform over class c's attainable sums. Each term is rounded down onto a
    grid of spacing h; the sum D of the rounded terms has an exact distribution by
    convolution, and V = h D + E with the rounding errors E between their smallest and
    largest sums, or (Hoeffding, the errors being independent and each within an
    interval) within t of their mean except with probability delta. Every bound below
    holds exactly; the smallest interval over delta in HOEFFDING_DELTAS is kept.

    ``cache``: the lattice's cdf is loaded from the on-disk cache where an earlier call
    stored it (80 MB at grid 10^7), else built and stored (``details["cache"]``)."""
    from irscale.measures import parse_measure
    from irscale.scales.spaces import space_for
    from irscale.scales.spaces.dcg import DCGSpace

    m = parse_measure(measure) if isinstance(measure, str) else measure
    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    grid = integer("grid", grid, minimum=16, maximum=MAX_GRID)
    space = space_for(m, N, levels - 1)
    if not isinstance(space, DCGSpace):
        raise ArgumentError(f"{m} is not DCG or nDCG")
    runs = np.asarray(runs)
    top = levels - 1  # the judged grades; a binary measure (rel=) binarises them below
    if (
        runs.ndim != 2
        or runs.shape[1] != N
        or runs.dtype.kind not in "iub"
        or (runs.size and (runs.min() < 0 or runs.max() > top))
    ):
        raise ArgumentError(
            f"runs must be an (n, {N}) integer array of grades 0..{top}, not shape {runs.shape} of {runs.dtype}"
        )
    runs = space.grade_view(runs)  # binary measures: 1 for grades >= rel (1 by default)
    lat, seconds, note = _dcg_lattice(space, grid, cache)
    totals = space.class_totals(runs)
    values = totals @ space.class_weights  # float; its error is far below the pad
    value_err = 1e-12 * (float(np.max(values)) if len(values) else 0.0) + 1e-15
    lo, hi = lat.query(values, value_err)
    return PhiBounds(
        lo,
        hi,
        "lattice convolution",
        lat.size,
        grid,
        0.0,
        "distinct vectors of class sums have distinct values (the weights' irrational factors, "
        "1/log r for r not a perfect power, are linearly independent over the rationals)",
        lat.max_width,
        seconds,
        {"classes": len(space.attainable), "grid points": len(lat.cdf), "spacing": lat.h, "cache": note},
    )


# -- any measure -------------------------------------------------------------------------------------

EXACT_RUNS = 2**34  # phi_bounds builds the exact rank map (lo = hi) of spaces with at most this many runs


def phi_bounds(
    measure, N: int, runs: np.ndarray, levels: int = 2, resolution: int | None = None, cache: bool = True, keys=None
) -> PhiBounds:
    """``phi / |M|`` of each run (an (n, N) array of grades 0..levels-1) at run length N,
    with a guarantee: exact (``lo == hi``) where a closed form or an exact engine serves
    (closed forms: P, R, F, RR, RBTO, RBP with small p, at any N; other measures while
    REL^N has at most EXACT_RUNS runs and an engine serves it), certified bounds for RBP whose runs all have
    their own values (binary with p > 1/2; graded with no two gains a multiple of p's
    denominator apart) (:func:`rbp_bounds`, ``resolution`` grid points per unit of
    y / top gain) and DCG/nDCG (:func:`dcg_bounds`, ``resolution`` grid points in all),
    and a refusal that says why for the rest (AP beyond the exact range: its distinct
    values have no product structure to bound; RBP whose runs tie, as RBP(p=2/3) on 4
    levels). ``cache``: rank maps and bounds tables are loaded from the on-disk cache
    where an earlier call stored them, else built and stored; False: neither read nor
    written. ``keys``: the runs' exact keys, passed to :func:`rbp_bounds` (others ignore them)."""
    from irscale.measures import parse_measure
    from irscale.scales.rankmap import build, choose_engine
    from irscale.scales.spaces import space_for
    from irscale.scales.spaces.dcg import DCGSpace
    from irscale.scales.spaces.rbp import RBPSpace

    m = parse_measure(measure) if isinstance(measure, str) else measure
    N = integer("N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    if resolution is not None:
        resolution = integer("resolution", resolution, minimum=16)
    space = space_for(m, N, levels - 1)
    t = time.perf_counter()
    exact = space.closed
    if not exact and space.n_runs <= EXACT_RUNS:
        try:
            choose_engine(space)  # its limits, before anything is built
            exact = True
        except IrscaleError:  # e.g. graded spaces whose halves outgrow the count engine: bounded instead
            if not isinstance(space, (RBPSpace, DCGSpace)):
                raise
    if not exact and isinstance(space, RBPSpace):
        return rbp_bounds(m, N, runs, resolution or RESOLUTION, levels=levels, cache=cache, keys=keys)
    if not exact and isinstance(space, DCGSpace):
        return dcg_bounds(m, N, runs, levels, resolution or 10**7, cache=cache)
    if not exact:
        n_runs = count_text(space.n_runs, space.c + 1)  # 4^1000 on four levels: beyond a float
        raise MeasureError(
            f"{m} at N = {N}: no certified bounds. Its {n_runs} runs have no structure that bounds "
            f"their distinct values (unlike RBP and DCG, whose values are sums over independent ranks or "
            f"classes), and estimating them from sampled runs does not bound phi. Use a shorter N, where the "
            f"exact rank map is built (irscale.scales.build('{m}', N); the 2021 paper stopped at 30), or a "
            f"measure with bounds (RBP, nDCG)"
        )
    rm = build(m, N, levels, cache=cache)
    norm = rm.normalized(rm.phi_runs(np.asarray(runs)))
    return PhiBounds(
        norm, norm.copy(), f"exact ({rm.engine})", int(rm.size), 0, 0.0, "none", 0.0, time.perf_counter() - t
    )


def runs_distinct(space) -> bool:
    """Every run of ``space`` has a value of its own (then phi over values is the rank over
    runs, and every tie strategy gives one phi): proven for RBP (:func:`irscale.scales.counting.rbp_runs_distinct`),
    not claimed for the other spaces with certified bounds."""
    from irscale.scales.counting import rbp_runs_distinct
    from irscale.scales.spaces.rbp import RBPSpace

    return isinstance(space, RBPSpace) and rbp_runs_distinct(space)


def bounds_resolution(space, approx: float) -> tuple[int, float]:
    """For :func:`phi_bounds` on ``space`` with half-widths of at most ``approx``: (a first
    resolution that usually reaches ``approx``, widths at N = 100-1000 being about 2.5-5 /
    resolution for RBP and 300-2,500 / grid points for DCG, capped at the defaults; the
    bytes the bounds tables take per unit of resolution: RBP about 32 per grid point and
    1 / (1 - p) points per unit, DCG about 24 per grid point)."""
    from irscale.scales.spaces.rbp import RBPSpace

    if isinstance(space, RBPSpace):
        return min(10**6, max(1000, math.ceil(8 / approx))), 32 / (1 - float(space.measure.p_exact))
    return min(10**7, max(10**4, math.ceil(2500 / approx))), 24.0
