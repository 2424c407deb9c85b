"""The split engine on keys beyond 64 bits (scales/wide.py; ERR at binary N >= 27, 3
levels N >= 19, 4 levels N >= 15, 5 levels N >= 12).

Three checks: ERR's keys scaled by 3^20 (the same order and ties, 70-90 bits at small N)
give exactly the value set of the int64 engine, through both in-bucket paths (int64
offsets and, for buckets wider than WIDTH, (high, low) words); at binary N = 27 (the
first N beyond 64 bits) two different splits agree and the lowest values equal a count
in fractions over the runs that can have them; the Wide representation itself under
hypothesis."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale.errors import MeasureError
from irscale.measures import parse_measure
from irscale.scales import build, engines
from irscale.scales.engines import Buckets, split_engine
from irscale.scales.spaces import all_runs
from irscale.scales.spaces.err import ERRSpace
from irscale.scales.wide import KEY, MASK, REL_ERROR, Wide, as_keys, keys_ints

K = 3**20  # odd, so scaled keys keep no power-of-two structure; 31.7 more bits


class ScaledERR(ERRSpace):
    """ERR's exact keys times K: the same order and ties, beyond 64 bits from small N."""

    @cached_property
    def L(self) -> int:
        return math.lcm(*range(1, self.N + 1)) * K


def _queries(space, n=3000, seed=0):
    """Keys of random runs, of the extreme runs, and their neighbours (keys +- 1)."""
    c = space.c
    g = np.random.default_rng(seed).integers(0, c + 1, size=(n, space.N))
    g[0], g[1] = 0, c
    keys = [int(k) for k in space.keys(g)]
    return sorted({k + d for k in keys for d in (-1, 0, 1)})


def _compare(narrow_space, wide_space, **kw):
    narrow = split_engine(narrow_space)
    wide = split_engine(wide_space, **kw)
    assert not wide_space.int64 and wide_space.max_key.bit_length() > 64
    assert isinstance(wide, Buckets) and wide.bounds.dtype == object
    assert wide.size == narrow.size
    q = _queries(narrow_space)
    qn = np.array(q, dtype=np.int64)
    qw = np.array([k * K for k in q], dtype=object)
    assert wide.phi(qw).tolist() == narrow.phi(qn).tolist()
    le_n, at_n = narrow.runs_le_at(qn)
    le_w, at_w = wide.runs_le_at(qw)
    assert [int(x) for x in le_w] == [int(x) for x in le_n] and [int(x) for x in at_w] == [int(x) for x in at_n]
    assert [int(x) for x in wide.listed(4)] == [K * int(x) for x in narrow.listed(4)]
    assert [int(x) for x in wide.listed(None, 4)] == [K * int(x) for x in narrow.listed(None, 4)]
    return wide


@pytest.mark.slow
@pytest.mark.parametrize("N,c", [(12, 2), (18, 1), (9, 3), (8, 4)])
def test_wide_keys_give_the_int64_value_set(N, c):
    m = parse_measure("ERR")
    wide = _compare(ERRSpace(m, N, c), ScaledERR(m, N, c), bucket_pairs=2**14)
    assert len(wide.bounds) > 8  # many buckets, so bucket edges are crossed


@pytest.mark.slow
def test_buckets_wider_than_width_are_decided_by_words(monkeypatch):
    monkeypatch.setattr(engines, "WIDTH", 2**44)  # most buckets take the (high, low) path
    m = parse_measure("ERR")
    wide = _compare(ERRSpace(m, 11, 2), ScaledERR(m, 11, 2), bucket_pairs=2**12)
    widths = np.diff(wide.bounds)
    assert (widths > 2**44).sum() > 5


def _err(run) -> Fraction:
    e, reach = Fraction(0), Fraction(1)
    for k, g in enumerate(run, 1):
        e += reach * Fraction(g, 2) / k
        reach *= 1 - Fraction(g, 2)
    return e


@pytest.mark.slow
def test_binary_ERR_at_N27_beyond_64_bits(tmp_path, monkeypatch):
    monkeypatch.setenv("IRSCALE_CACHE_DIR", str(tmp_path))
    N = 27
    rm = build("ERR", N, 2)
    space = rm.space
    assert rm.engine == "split" and not space.int64 and space.max_key.bit_length() > 64
    other = split_engine(space, h=11)  # another decomposition of the same runs
    assert other.size == rm.size and rm.n_runs == 2**N
    q = _queries(space, 2000, seed=1)
    keys = np.array(q, dtype=object)
    phi = rm.phi_keys(keys)
    assert phi.tolist() == other.phi(keys).tolist()
    assert (np.diff(phi) >= 0).all() and phi[-1] <= rm.size
    assert [int(x) for x in other.runs_le_at(keys)[0]] == [int(x) for x in rm.summary.runs_le_at(keys)[0]]
    top = space.keys(np.ones((1, N), dtype=np.int8))  # every document relevant: ERR's maximum
    assert rm.phi_keys(top).tolist() == [rm.size]
    assert int(rm.summary.runs_le(top)[0]) == 2**N

    # the lowest values: a first relevant document at rank f <= 19 gives ERR >= 1/(2f) >= 1/38,
    # so every value below 1/38 is one of a run whose ranks 1..19 are all non-relevant
    tail = all_runs(N - 19, 1)
    runs = np.concatenate([np.zeros((len(tail), 19), dtype=np.int8), tail], axis=1)
    values = [_err(r) for r in runs.tolist()]
    low = sorted({v for v in values if v < Fraction(1, 38)})
    ks = space.keys(runs)
    for v, k in zip(values, ks):
        if v < Fraction(1, 38):
            assert int(k) == v * space.L * 2**N  # the key is L * 2^N * ERR
    phi_low = rm.phi_keys(np.array([int(k) for k, v in zip(ks, values) if v < Fraction(1, 38)], dtype=object))
    assert phi_low.tolist() == [low.index(v) + 1 for v in values if v < Fraction(1, 38)]

    again = build("ERR", N, 2)  # from the cache: bounds back as Python integers, same answers
    assert again.from_cache and again.summary.bounds.dtype == object
    assert again.phi_keys(keys).tolist() == phi.tolist()


def test_ERR_refused_beyond_the_split_limit_with_the_reason():
    with pytest.raises(MeasureError, match="ERR is exact up to N=17 on 4 levels; use -N 17 or less"):
        build("ERR", 18, 4, cache=False)
    with pytest.raises(MeasureError, match="ERR is exact up to N=22 on 3 levels"):
        build("ERR", 23, 3, cache=False)
    with pytest.raises(MeasureError, match="exact up to N=35 on 2 levels"):
        build("ERR", 36, 2, cache=False)


_big = st.integers(min_value=0, max_value=2**99)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_big, st.floats(min_value=-1, max_value=1)), min_size=1, max_size=40),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=40),
)
def test_wide_is_exact_under_its_error_bound(xs, shifts):
    # near neighbours (x + small) share approximations up to the error bound
    ints = [x for x, _ in xs] + [max(0, xs[0][0] + d) for d in shifts]
    errs = [e for _, e in xs] + [0.5] * len(shifts)
    approx = np.array([float(x) * (1 + e * REL_ERROR) for x, e in zip(ints, errs)])
    w = Wide(approx, np.array([x & MASK for x in ints], dtype=np.uint64))
    assert [int(x) for x in w.ints()] == ints
    u, n = w.unique_counts()
    expect = sorted(set(ints))
    assert [int(x) for x in u.ints()] == expect
    assert n.tolist() == [ints.count(x) for x in expect]
    k = as_keys(expect)
    assert k.dtype == KEY and [int(x) for x in keys_ints(k)] == expect
    probe = as_keys(ints)
    assert np.searchsorted(k, probe, side="right").tolist() == [expect.index(x) + 1 for x in ints]


def test_split_refuses_keys_beyond_its_width():
    from irscale.errors import IrscaleError

    with pytest.raises(IrscaleError, match="decides keys up to 100 bits"):
        build("ERR", 3, 40, engine="split", cache=False)  # 6 * 2^117 * 2: 121 bits
    with pytest.raises(MeasureError, match="up to 51 relevance levels"):
        build("ERR", 1, 64, engine="split", cache=False)
