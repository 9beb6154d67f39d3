"""``vsin`` and ``vcos``: sin and cos whose common case LLVM can vectorize, for the unary kernels
and fusion's generated kernels (see :mod:`.vmath`).

float32 follows musl's ``sinf``/``cosf`` (fdlibm's), in float64 throughout: ``n = round(x * 2/pi)``,
``r = x - n * pio2_1 - n * pio2_1t`` (pi/2 as 25 + 53 bits: ``n * pio2_1`` is exact for
``|n| < 2**28``), then a degree-9 odd polynomial for ``sin(r)`` and a degree-8 even one for
``cos(r)`` on ``|r| <= pi/4`` (musl's ``__sindf``/``__cosdf``: 2**-37.5 and 2**-34.1), the
quadrant ``n mod 4`` choosing which and its sign with selects; rounded to float32 once.

That reduction holds for ``|x| < 2**28 pi/2`` (:data:`NEAR`, 4.2e8). Beyond it an exact
reduction needs 2/pi to a hundred bits and more (Payne and Hanek's); those values (and
inf, NaN) take libm's float64 ``sin``/``cos``, which reduces exactly, rounded to float32.
:func:`vsin` picks between the two with a branch, which keeps a loop scalar; the unary kernel
therefore runs :func:`vsin_near` over a chunk (vectorized, wrong for the far values),
noting whether any value was far, and recomputes just those (see :mod:`.unary`). float64
inputs call libm (within an ulp). burn-flex calls its SIMD crate's ``sin``/``cos``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from ._common import JIT
from .vmath import _OPTS, _as_int

#: float32 |x| below which the float64 reduction of ``vsin_near``/``vcos_near`` is exact enough
NEAR = np.float32(2**28 * np.pi / 2)

_INV_PIO2 = 6.36619772367581382433e-01
_PIO2_1 = 1.57079631090164184570e00  # the first 25 bits of pi/2
_PIO2_1T = 1.58932547735281966916e-08  # pi/2 - _PIO2_1
_TOINT = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer held in the low bits


@njit(**JIT, fastmath={"contract"})
def _reduce(x):
    # (r, n): x = n pi/2 + r, |r| <= pi/4 (a little more at the rounding edge); a far x
    # (|x| >= NEAR, inf, NaN) is replaced by 0 so nothing overflows
    v = np.float64(x) if abs(x) < NEAR else 0.0
    t = v * _INV_PIO2 + _TOINT
    fn = t - _TOINT
    r = v - fn * _PIO2_1 - fn * _PIO2_1T
    return r, _as_int(t)  # the low bits of t's mantissa are n (two's complement)


@njit(**JIT, fastmath={"contract"})
def _sin_poly(r):
    z = r * r
    w = z * z
    p = -1.98393348360966317347e-04 + z * 2.71831149398982190640e-06
    s = z * r
    return (r + s * (-1.66666666416265235595e-01 + z * 8.33332938588946317560e-03)) + s * w * p


@njit(**JIT, fastmath={"contract"})
def _cos_poly(r):
    z = r * r
    w = z * z
    p = -1.38867637746099294692e-03 + z * 2.43904487962774090654e-05
    return ((1.0 + z * -4.99999997251031003120e-01) + w * 4.16666233237390631894e-02) + (w * z) * p


def _libm_sin(x):
    return np.sin(x)


def _libm_cos(x):
    return np.cos(x)


def vsin_near(x):
    """float32 ``sin(x)`` for ``|x| < NEAR``, branch-free (anything for other x: see vsin);
    float64: libm's."""
    return np.sin(x)


@njit(**JIT, fastmath={"contract"})
def _sin_quadrant(x, r, n):
    # sin(n pi/2 + r) = sin(x); a function of its own (no branch is left in the inlined caller)
    s, c = _sin_poly(r), _cos_poly(r)
    v = c if n & 1 else s
    v = np.float32(-v if n & 2 else v)
    return x if x == np.float32(0) else v  # -0.0 stays -0.0


@njit(**JIT, fastmath={"contract"})
def _cos_quadrant(r, n):
    s, c = _sin_poly(r), _cos_poly(r)
    v = s if n & 1 else c
    return np.float32(-v if (n + 1) & 2 else v)


def _sin_near32(x):
    r, n = _reduce(x)
    return _sin_quadrant(x, r, n)


@overload(vsin_near, inline="always", jit_options=_OPTS)
def _vsin_near_overload(x):
    if x == types.float32:
        return _sin_near32
    return _libm_sin if x == types.float64 else None


def vcos_near(x):
    """float32 ``cos(x)`` for ``|x| < NEAR``, branch-free (anything for other x: see vcos);
    float64: libm's."""
    return np.cos(x)


def _cos_near32(x):
    r, n = _reduce(x)
    return _cos_quadrant(r, n)


@overload(vcos_near, inline="always", jit_options=_OPTS)
def _vcos_near_overload(x):
    if x == types.float32:
        return _cos_near32
    return _libm_cos if x == types.float64 else None


def vsin(x):
    """``sin(x)`` for a float32 or float64 scalar (use in njit code): float32 by
    :func:`vsin_near` where it holds, else libm's float64 sin rounded."""
    return np.sin(x)


def _sin32(x):
    return vsin_near(x) if abs(x) < NEAR else np.float32(np.sin(np.float64(x)))


@overload(vsin, inline="always", jit_options=_OPTS)
def _vsin_overload(x):
    if x == types.float32:
        return _sin32
    if x == types.float64:
        return _libm_sin
    return None


def vcos(x):
    """``cos(x)`` for a float32 or float64 scalar (use in njit code): float32 by
    :func:`vcos_near` where it holds, else libm's float64 cos rounded."""
    return np.cos(x)


def _cos32(x):
    return vcos_near(x) if abs(x) < NEAR else np.float32(np.cos(np.float64(x)))


@overload(vcos, inline="always", jit_options=_OPTS)
def _vcos_overload(x):
    if x == types.float32:
        return _cos32
    if x == types.float64:
        return _libm_cos
    return None
