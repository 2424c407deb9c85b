"""Exact integers wider than 64 bits, in numpy arrays, for the split engine.

ERR's exact keys, lcm(1..N) * 2^(cN) * ERR, outgrow int64 (72 bits binary at N = 30, 69
on 3 levels at N = 20). Python integers would be exact, but the split engine forms
billions of keys and object arrays make each addition a Python call. A :class:`Wide`
array holds each integer x as two numbers:

* ``words``: x mod 2^64 (uint64; numpy's uint64 and int64 arithmetic wraps, so sums,
  differences and products of words are exact modulo 2^64);
* ``approx``: a float64 within ``x * 2^-45`` of x (what the space computing them
  guarantees: a few roundings in float64 at relative 2^-53 each).

Together they are exact: x = words + 2^64 * round((approx - words) / 2^64) whenever the
error is far below 2^63, and two integers x, y with ``|x - y| < 2^63`` compare exactly by
the signed 64-bit difference of their words, int64(words(x) - words(y)). The split
engine orders and deduplicates the halves by (high word, low word), and a bucket's keys
by their signed word offsets from the bucket's lower bound where the bucket is narrower
than 2^62 (bucket bounds are chosen so; sparse wider buckets sort (high, low) pairs);
floats only choose candidates, with a margin far beyond their error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["as_keys", "KEY", "keys_ints", "MASK", "MAX_BITS", "REL_ERROR", "Wide", "words_of"]


MASK = (1 << 64) - 1
REL_ERROR = 2.0**-45  # |approx - x| <= REL_ERROR * |x|: what producers of Wide arrays guarantee
MAX_BITS = 100  # the engine's margins stay far below 2^62 while keys stay below 2^100


@dataclass(frozen=True)
class Wide:
    """Non-negative integers beyond 64 bits as (float64 approximation, value mod 2^64)."""

    approx: np.ndarray  # float64
    words: np.ndarray  # uint64

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i) -> Wide:
        return Wide(self.approx[i], self.words[i])

    @classmethod
    def of(cls, x) -> Wide:
        """From Python integers (exact: float() rounds correctly)."""
        x = np.asarray(x, dtype=object).reshape(-1)
        return cls(x.astype(np.float64), (x & MASK).astype(np.uint64))

    def high(self) -> np.ndarray:
        """x >> 64 (int64), exact while the approximation's error is below 2^62."""
        return np.rint((self.approx - self.words.astype(np.float64)) * 2.0**-64).astype(np.int64)

    def ints(self) -> np.ndarray:
        """The exact Python integers (object array; for small arrays)."""
        return self.high().astype(object) * (1 << 64) + self.words.astype(object)

    def scaled(self, s: int) -> Wide:
        """x * s for a positive integer s below 2^53 (one more float rounding)."""
        return Wide(self.approx * float(s), self.words * np.uint64(s))

    def unique_counts(self) -> tuple[Wide, np.ndarray]:
        """Sorted distinct values (exact order and equality) and how often each occurs."""
        hi = self.high()
        order = np.lexsort((self.words, hi))
        hi, w = hi[order], self.words[order]
        if not len(w):
            return self[order], np.zeros(0, dtype=np.int64)
        start = np.flatnonzero(np.concatenate([[True], (hi[1:] != hi[:-1]) | (w[1:] != w[:-1])]))
        counts = np.diff(np.append(start, len(w))).astype(np.int64)
        return self[order[start]], counts


def words_of(x) -> np.ndarray:
    """Python integers (any sign) mod 2^64, as int64 two's complement (for wrapping sums)."""
    return (np.asarray(x, dtype=object).reshape(-1) & MASK).astype(np.uint64).view(np.int64)


KEY = np.dtype([("hi", "<i8"), ("lo", "<u8")])  # exact sortable keys: x = hi * 2^64 + lo; numpy searches
# structured arrays field by field (sorting them is slow: sort hi/lo with np.lexsort instead)


def as_keys(x) -> np.ndarray:
    """Python integers as KEY records (exact order and equality)."""
    x = np.asarray(x, dtype=object).reshape(-1)
    out = np.empty(len(x), dtype=KEY)
    out["hi"] = (x >> 64).astype(np.int64)
    out["lo"] = (x & MASK).astype(np.uint64)
    return out


def keys_ints(k: np.ndarray) -> np.ndarray:
    """KEY records as Python integers (object array)."""
    return k["hi"].astype(object) * (1 << 64) + k["lo"].astype(object)
