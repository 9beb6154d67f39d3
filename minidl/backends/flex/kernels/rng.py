"""A seeded, counter-based random stream: uniform, normal (Box-Muller) and Bernoulli fills.

Mirrors what burn-flex needs for ``float_random`` (``Distribution::Uniform``, ``Normal``,
``Bernoulli``) and the dropout mask, with a stream that depends only on the seed and on how
many numbers were drawn before: never on the number of threads or on how the work is split.

Element ``i`` of a draw that starts at counter ``c`` is a pure function of ``(key, c + i)``:
a splitmix64-style hash (multiply-xorshift finalizer, applied twice with the key mixed in).
That is what makes the fill parallel and reproducible at once; it is a statistical
generator, not a cryptographic one. :class:`RngState` keeps the seed and the counter in
Python: each call advances the counter by the numbers it consumed, so successive calls give
new numbers, and ``seed(n)`` restarts the stream.

Threads: a draw *reserves* its range of counters under a lock (read the counter, advance it)
and fills it outside the lock. Without the lock, two threads could read the same counter
before either advanced it and get the same numbers (four threads drawing dropout masks got
identical masks); with it, concurrent draws get disjoint ranges and still fill in parallel.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import njit, prange

from ._common import JIT, PARALLEL_MIN_ELEMS

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TWO_PI = 2.0 * math.pi
_INV53 = 1.0 / 9007199254740992.0  # 2^-53

UNIFORM, NORMAL, BERNOULLI = 0, 1, 2


@njit(inline="always", **JIT)
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


_ONE, _TWO = np.uint64(1), np.uint64(2)


@njit(inline="always", **JIT)
def _unit(key, n):
    """A float64 in [0, 1) from counter value n (53 random bits)."""
    h = _mix(_mix(n * _GOLDEN + key) ^ key)
    return np.float64(h >> _S11) * _INV53


@njit(**JIT)
def _fill(out, kind, key, start, a, b, lo, hi):
    # Elements lo..hi (hi even, or the array end) of one draw starting at counter `start`.
    # The counter is a uint64 of its own, stepped by one: with `base + np.uint64(i)` (the loop
    # index converted each time) LLVM did not vectorize the hash, and a uniform or Bernoulli
    # draw of 1024 floats took 6-7 us, 1.8 us so (the same numbers: the counter wraps alike).
    o = out[lo:hi]
    c = np.uint64(start) + np.uint64(lo)
    if kind == UNIFORM:
        for i in range(o.shape[0]):
            o[i] = a + (b - a) * _unit(key, c)
            c += _ONE
    elif kind == BERNOULLI:
        for i in range(o.shape[0]):
            o[i] = 1 if _unit(key, c) < a else 0
            c += _ONE
    else:
        # Box-Muller on the pair (2k, 2k+1): both outputs come from the same two draws, so
        # chunks must start on even positions (the drivers make sure of it).
        for i in range(0, o.shape[0], 2):
            u1 = 1.0 - _unit(key, c)  # (0, 1]: log is finite
            u2 = _unit(key, c + _ONE)
            c += _TWO
            r = math.sqrt(-2.0 * math.log(u1))
            o[i] = a + b * r * math.cos(_TWO_PI * u2)
            if i + 1 < o.shape[0]:
                o[i + 1] = a + b * r * math.sin(_TWO_PI * u2)


@njit(**JIT)
def fill_serial(out, kind, key, start, a, b):
    """Fill flat ``out`` from counter ``start``: UNIFORM in [a, b), NORMAL(mean a, std b),
    BERNOULLI(p = a) as 1/0."""
    _fill(out, kind, key, start, a, b, 0, out.shape[0])


@njit(parallel=True, **JIT)
def fill_parallel(out, kind, key, start, a, b):
    """``fill_serial`` in chunks over threads; the values do not depend on the split."""
    n = out.shape[0]
    chunk = 8192  # even, so Box-Muller pairs never straddle two chunks
    for t in prange((n + chunk - 1) // chunk):
        _fill(out, kind, key, start, a, b, t * chunk, min(t * chunk + chunk, n))


def _key(seed: int) -> np.uint64:
    z = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


class RngState:
    """Seed + counter of one stream. ``uniform``/``normal``/``bernoulli`` return new arrays
    and advance the counter by the numbers drawn (a normal draw uses an even count)."""

    def __init__(self, seed: int = 0) -> None:
        self._lock = threading.Lock()
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """Restart the stream: the next draws repeat those after any earlier ``seed(seed)``."""
        with self._lock:
            self.seed_value = int(seed)
            self.key = _key(seed)
            self.counter = 0

    def reserve(self, count: int) -> tuple[np.uint64, int]:
        """``(key, start)`` of ``count`` counters no other draw gets: the one step that must
        not interleave between threads."""
        with self._lock:
            start = self.counter
            self.counter += count
            return self.key, start

    def _draw(self, shape, kind: int, a: float, b: float, dtype, count: int) -> np.ndarray:
        dtype = np.dtype(dtype)
        cdt = np.float32 if dtype == np.float16 else dtype
        out = np.empty(math.prod(shape), cdt)
        key, start = self.reserve(count)
        if out.size:
            kernel = fill_parallel if out.size >= PARALLEL_MIN_ELEMS else fill_serial
            kernel(out, kind, key, np.uint64(start), a, b)
        return out.reshape(shape).astype(dtype, copy=False)

    def uniform(self, shape, low: float = 0.0, high: float = 1.0, dtype=np.float32) -> np.ndarray:
        """Uniform numbers in [low, high)."""
        n = math.prod(shape)
        return self._draw(shape, UNIFORM, float(low), float(high), dtype, n)

    def normal(self, shape, mean: float = 0.0, std: float = 1.0, dtype=np.float32) -> np.ndarray:
        """Normal numbers by Box-Muller."""
        n = math.prod(shape)
        return self._draw(shape, NORMAL, float(mean), float(std), dtype, n + (n & 1))

    def bernoulli(self, shape, p: float, dtype=np.float32) -> np.ndarray:
        """1 with probability ``p``, else 0 (``dtype`` may be bool)."""
        n = math.prod(shape)
        return self._draw(shape, BERNOULLI, float(p), 0.0, dtype, n)
