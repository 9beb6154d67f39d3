"""``vsin`` and ``vcos``: sin and cos whose common case LLVM can vectorize, for the unary kernels
and fusion's generated kernels (see :mod:`.vmath`).

float32 is computed in float64 and rounded once, with one polynomial for both (SLEEF's
scheme): ``sin(x) = (-1)**q sin(x - q pi)``, ``q = round(x / pi)``, and ``cos(x) = sin(x - q
pi/2)`` up to sign for the odd ``q = 2 round(x / pi - 1/2) + 1``; the reduction subtracts
``q pi/2`` as 25 + 53 bits (``q * pio2_1`` is exact for ``|q| < 2**28``), leaving ``|r| <=
pi/2``, and ``sin(r) = r + r**3 P(r**2)`` with ``P`` of degree 4 (a least-squares fit with
Lawson's reweighting, 2**-35 relative). Measured over every float32 below :data:`NEAR`: at
most 1 ulp from the rounded float64 libm value, both functions. One polynomial and no
quadrant select replaced musl's pair (a sine and a cosine polynomial on ``|r| <= pi/4``,
both computed, one selected): 1M float32 on one Zen 3 core 1.6 -> 1.2 ms (torch 1.65).

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

_INV_PI = 0.3183098861837907
_PIO2_1 = 1.57079631090164184570e00  # the first 25 bits of pi/2
_PIO2_1T = 1.58932547735281966916e-08  # pi/2 - _PIO2_1
_TOINT = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer held in the low bits
#: sin(r) = r + r**3 P(r**2) on |r| <= pi/2, lowest power first
_SIN_P = (-0.1666666662618721, 0.00833333110999999, -0.00019840868368956608, 2.7525391492607895e-06,
          -2.3889016512353145e-08)  # fmt: skip


@njit(**JIT, fastmath={"contract"})
def _sin_poly(r):
    z = r * r
    p = _SIN_P[4] * z + _SIN_P[3]
    p = p * z + _SIN_P[2]
    p = p * z + _SIN_P[1]
    p = p * z + _SIN_P[0]
    return r + (r * z) * p


@njit(**JIT, fastmath={"contract"})
def _near(x):
    # x as float64, or 0 for a far x (|x| >= NEAR, inf, NaN) so nothing overflows
    return np.float64(x) if abs(x) < NEAR else 0.0


def _libm_sin(x):
    return np.sin(x)


def _libm_cos(x):
    return np.cos(x)


def vsin_near(x):
    """float32 ``sin(x)`` for ``|x| < NEAR``, branch-free (anything for other x: see vsin);
    float64: libm's."""
    return np.sin(x)


@njit(**JIT, fastmath={"contract"})
def _sin_reduced(x):
    # a function of its own: its selects inlined into the overload trip numba's phi check
    v = _near(x)
    t = v * _INV_PI + _TOINT  # q = round(x / pi) in t's low bits
    q = t - _TOINT
    r = v - (q + q) * _PIO2_1 - (q + q) * _PIO2_1T
    s = _sin_poly(r)
    s = -s if _as_int(t) & 1 else s
    return x if x == np.float32(0) else np.float32(s)  # -0.0 stays -0.0


def _sin_near32(x):
    return _sin_reduced(x)


@overload(vsin_near, inline="always", jit_options=_OPTS)
def _vsin_near_overload(x):
    if x == types.float32:
        return _sin_near32
    return _libm_sin if x == types.float64 else None


def vcos_near(x):
    """float32 ``cos(x)`` for ``|x| < NEAR``, branch-free (anything for other x: see vcos);
    float64: libm's."""
    return np.cos(x)


@njit(**JIT, fastmath={"contract"})
def _cos_reduced(x):
    v = _near(x)
    t = (v * _INV_PI - 0.5) + _TOINT  # m = round(x / pi - 1/2); (_TOINT - 0.5 would round)
    m = t - _TOINT
    q = m + m + 1.0
    r = v - q * _PIO2_1 - q * _PIO2_1T  # x = q pi/2 + r, q odd
    s = _sin_poly(r)
    return np.float32(s if _as_int(t) & 1 else -s)  # cos(q pi/2 + r) = -sin(r) for even m


def _cos_near32(x):
    return _cos_reduced(x)


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
