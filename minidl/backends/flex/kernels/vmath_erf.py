"""``verf`` and ``vgelu``: erf and the exact GELU ``x Φ(x)`` as branch-free functions LLVM can
vectorize, for the unary kernels and fusion's generated kernels (see :mod:`.vmath`).

float32 ``erf`` is Norbert Juffa's minimax pair (published on Stack Overflow, "erff" in two
polynomials, each under 1 ulp with an FMA): an odd polynomial for ``|x| <= 0.9277`` and
``1 - exp(-t P(t))`` above it, ``t = |x|``. Both are computed and one selected, with
:func:`~.vmath.vexp` for the exp: a select vectorizes where libm's scalar ``erf`` does not.

float32 GELU is ``x Φ(x)`` with ``Φ(x) = erfc(-x / sqrt 2) / 2``: ``1 + erf(z)`` would cancel
for negative x (torch's float32 kernel is 4% off at ``x = -5`` and 0 below -5.5, where the true
value is -1e-7). Written with ``a = |x| / sqrt 2``, ``Φ(x) = erfc(a) / 2`` for negative x and
``1 - erfc(a) / 2`` otherwise, and

    erfc(a) = exp(-a**2) (1 + p(q)) / (1 + 2a),    q = (a - 2) / (a + 2),

Shepherd and Laframboise's form (Math. Comp. 36, 1981): ``(1 + 2a) exp(a**2) erfc(a)`` is
smooth in q over the whole half-line, here ``p`` of degree 14, a least-squares fit on Chebyshev
nodes over a in [0, 12] (2**-37.8 relative error). The argument ``a**2 = x**2 / 2`` of the
exp has a condition number of ``a**2`` (up to 100 before the result underflows), so this runs
in float64, where ``x**2 / 2`` is exact, and rounds once. float64 inputs call libm (``erf``,
``erfc``), the GELU with the rounding error of ``x / sqrt 2`` put back (see ``_gelu64``).

burn-flex calls its SIMD crate's ``erf``; burn's ``gelu`` is the exact form too.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ._common import JIT
from .vmath import _OPTS, vexp

SQRT1_2 = 0.7071067811865476
SQRT1_2_LO = -4.833646656726457e-17  # sqrt(1/2) - SQRT1_2


def verf(x):
    """``erf(x)`` for a float32 or float64 scalar, vectorizable in float32 (use in njit code)."""
    return math.erf(x)


def _erf32(x):
    f = np.float32
    t = abs(x)
    s = x * x
    # |x| > 0.927734375: 1 - exp(-t P(t))
    r = f(-1.72853470e-5) * t + f(3.83197126e-4)
    u = f(-3.88396438e-3) * t + f(2.42546219e-2)
    r = r * s + u
    r = r * t + f(-1.06777877e-1)
    r = r * t + f(-6.34846687e-1)
    r = r * t + f(-1.28717512e-1)
    far = f(1) - vexp(r * t - t)  # erf(inf) = 1: the polynomial goes to -inf, exp to 0
    far = -far if x < f(0) else far
    # |x| <= 0.927734375: x + x Q(x**2)
    q = f(-5.96761703e-4)
    q = q * s + f(4.99119423e-3)
    q = q * s + f(-2.67681349e-2)
    q = q * s + f(1.12819925e-1)
    q = q * s + f(-3.76125336e-1)
    q = q * s + f(1.28379166e-1)
    near = q * x + x
    return far if t > f(0.927734375) else near  # NaN is not >: the near form keeps it


def _erf64(x):
    return math.erf(x)


@overload(verf, inline="always", jit_options=_OPTS)
def _verf_overload(x):
    if x == types.float32:
        return _erf32
    if x == types.float64:
        return _erf64
    return None


@njit(**JIT, fastmath={"contract"})
def erfcx_pos(a):
    """``exp(a**2) erfc(a)`` for a float64 ``a >= 0`` (finite; clamp first), 2**-37.8 relative
    error: Shepherd and Laframboise's ``(1 + p(q)) / (1 + 2a)``, one division for both."""
    b = a + 2.0
    d = 1.0 + 2.0 * a
    inv = 1.0 / (b * d)
    q = (a - 2.0) * d * inv
    p = -7.468814003082878e-06
    p = p * q - 2.7412443856913125e-05
    p = p * q - 3.2772713546474e-06
    p = p * q + 0.00014375565859410955
    p = p * q + 0.0002055729892425865
    p = p * q - 0.0004513954538914351
    p = p * q - 0.0014561701350240524
    p = p * q + 0.0012706947026883122
    p = p * q + 0.008722495811437221
    p = p * q - 0.008033940955029364
    p = p * q - 0.054219984824513234
    p = p * q + 0.16405127613328874
    p = p * q - 0.16603039819748422
    p = p * q - 0.09276382652360587
    p = p * q + 0.2769783815557969
    return (1.0 + p) * (b * inv)


def vgelu(x):
    """The exact GELU ``x Φ(x) = x erfc(-x / sqrt 2) / 2`` for a float32 or float64 scalar,
    vectorizable in float32 (use in njit code)."""
    return 0.5 * x * math.erfc(-x * SQRT1_2)


def _gelu32(x):
    v = np.float64(x)
    a = abs(v) * SQRT1_2
    half_sq = (v * v) * 0.5  # a**2, exact: x has 24 bits, x*x 48
    a = a if a < 12.0 else 12.0  # erfc(12) ~ 1e-64: the exp below is 0 by then; NaN -> 12
    half_erfc = 0.5 * vexp(-half_sq) * erfcx_pos(a)
    phi = half_erfc if v < 0.0 else 1.0 - half_erfc
    return np.float32(v * phi)  # -inf * 0 = NaN at -inf, as torch


def _gelu64(x):
    # 1 + erf(z) written as erfc(-z): no cancellation for negative x (erf -> -1). The rounding
    # error d of a = -x / sqrt 2 (Dekker's exact product, sqrt(1/2) as two doubles) is put back
    # to first order, erfc(a + d) = erfc(a) - 2/sqrt(pi) exp(-a**2) d: without it the relative
    # error grows like a**2 ulp (70 ulp at x = -8)
    a = -x * SQRT1_2
    split = 134217729.0 * x  # 2**27 + 1: x = xh + xl, each half a mantissa
    xh = split - (split - x)
    xl = x - xh
    split_c = 134217729.0 * SQRT1_2
    ch = split_c - (split_c - SQRT1_2)
    cl = SQRT1_2 - ch
    err = ((xh * ch - (x * SQRT1_2)) + xh * cl + xl * ch) + xl * cl  # x*c - round(x*c), exact
    d = -(err + x * SQRT1_2_LO)
    # past |x| = 40 erfc(a) is exactly 0 or 2 and exp(-a*a) is 0, while the split above
    # overflows (inf - inf = NaN at x = +-inf): the correction is left out there
    corr = 1.1283791670955126 * math.exp(-a * a) * d if abs(x) < 40.0 else 0.0
    return 0.5 * x * (math.erfc(a) - corr)


@overload(vgelu, inline="always", jit_options=_OPTS)
def _vgelu_overload(x):
    if x == types.float32:
        return _gelu32
    if x == types.float64:
        return _gelu64
    return None
