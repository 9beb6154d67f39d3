"""``verf`` and ``vgelu``: erf and the exact GELU ``x Φ(x)`` as branch-free functions LLVM can
vectorize, for the unary kernels and fusion's generated kernels (see :mod:`.vmath`).

float32 ``erf`` is Norbert Juffa's minimax pair (published on Stack Overflow, "erff" in two
polynomials, each under 1 ulp with an FMA): an odd polynomial for ``|x| <= 0.9277`` and
``1 - exp(-t P(t))`` above it, ``t = |x|``. Both are computed and one selected, with
:func:`~.vmath.exp_nonpositive32` for the exp (its argument is never positive): a select
vectorizes where libm's scalar ``erf`` does not.

float32 GELU is ``x Φ(x)`` written through ``t Φ(-t)``, ``t = |x|``: ``x - t Φ(-t)`` for
``x >= 0`` and ``-t Φ(-t)`` below (``Φ(x) + Φ(-x) = 1``), so nothing cancels: ``1 + erf(z)``
would for negative x (torch's float32 kernel is 4% off at ``x = -5`` and 0 below -5.5, where
the true value is -1e-7). With Shepherd and Laframboise's observation that ``erfcx`` is smooth
on the whole half-line (Math. Comp. 36, 1981),

    t Φ(-t) = exp(-t**2 / 2) G(t),    G(t) = t erfcx(t / sqrt 2) / 2 = t P(t) / Q(t),

``P``, ``Q`` of degree 4 and 5 (least squares with Lawson's reweighting on Chebyshev nodes
over t in [0, 14.5], ``P(0) = 1/2`` so a tiny x gives exactly x/2; 2**-27.3 relative). Sun's
erfcf (glibc, musl) shows how to keep the exp accurate in float32: its argument's condition
number is ``t**2 / 2``, up to 105, so ``t**2 / 2`` is split exactly into ``hi + lo`` (here
with an FMA) and ``lo`` enters the reduced argument after the exact ``hi - n ln2_hi``; the
``exp`` polynomial (degree 6, 2**-28) then sees the argument to 2**-30. ``G`` is evaluated
in float64: float32 Horner steps round ~10 times at weight ~1 (4 to 6 float32 ulp off over
t in [1, 14]), float64 is exact to far below the fit, and only G's 20 multiply-adds run at
float64 width. The scale ``2**n`` goes in as ``2**(n + 64) * 2**-64``, the last factor
fused into the final subtraction, so a subnormal result rounds once. Everything is
arithmetic and selects: the loop vectorizes (16 float32 lanes on AVX-512, 8 on AVX2).
Measured over every float32: at most 2 ulp below 0, 1 above (past 14.5 the result is x).
Its cost, measured on 1M values (2-core AVX-512 Xeon, where LLVM picks 8-lane vectors): 0.9
ms, torch 0.4 ms. The exp part with G replaced by ``0.39 t`` alone takes 0.40 ms on data in
cache, G's float64 rational about 0.45 (its ten 8-wide float64 FMAs cost twice float32 ones;
with a float32 divide instead of the float64 one it is still 0.83 ms), and G in float32 (0.58
ms) is 5 ulp off below 0, 3 above: no G makes this form faster than torch there (16-lane
vectors, ``NUMBA_CPU_NAME=haswell``: 0.89 ms as it is, 0.50 with the float32 G).
On an AVX2 Zen 3 core (one thread): 1.4 ms, torch 0.98; the exp part alone 0.61, G in float32
0.84 (but 5 ulp), Estrin's scheme or G in a pass of its own no faster. A float32 form through
the inverse Mills ratio, ``t Phi(-t) = exp(-t**2 / 2 - ln sqrt(2 pi)) N / (N + A)``, ``N = t
B(t)``, whose A and B errors are damped for large t, still measured 4 ulp near 0 and 2.1 at
large t: its three float32 roundings after A and B are not damped, and an ulp of the quotient
can be two of the result (they sit in different places of their binades).

float64 inputs call libm (``erf``, ``erfc``), the GELU with the rounding error of
``x / sqrt 2`` put back (see ``_gelu64``).

burn-flex calls its SIMD crate's ``erf``; burn's ``gelu`` is the exact form too.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from .vmath import _OPTS, _as_float, _as_int, exp_nonpositive32, fma

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
    far = f(1) - exp_nonpositive32(r * t - t)  # t (P(t) - 1) <= 0; at inf -inf, exp 0
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


def vgelu(x):
    """The exact GELU ``x Φ(x) = x erfc(-x / sqrt 2) / 2`` for a float32 or float64 scalar,
    vectorizable in float32 (use in njit code)."""
    return 0.5 * x * math.erfc(-x * SQRT1_2)


#: G(t) = t P(t) / Q(t), lowest power first (float64: see the module docstring)
_GELU_P = (0.5, 0.43759636299468213, 0.18269118199714396, 0.040442166288018125, 0.004085654958875945)
_GELU_Q = (1.0, 1.6730775710510397, 1.200301203050489, 0.4680277129256902, 0.10138005567667263,
           0.010241095729229842)  # fmt: skip
#: t past which t Φ(-t) is below half the smallest subnormal (t Φ(-t) < 1e-46 at 14.3)
GELU_TAIL_END = np.float32(14.5)


def _gelu32(x):
    f = np.float32
    t = abs(x)
    tc = t if t < GELU_TAIL_END else GELU_TAIL_END  # NaN -> 14.5 too: its result comes from x
    h = f(0.5) * tc
    a_hi = tc * h
    a_lo = fma(tc, h, -a_hi)  # t**2 / 2 = a_hi + a_lo exactly
    magic = f(12582912)  # 1.5 * 2**23, as in vexp
    tt = a_hi * f(-1.44269504088896341) + magic
    nf = tt - magic
    r = fma(nf, f(-0.693359375), -a_hi)  # exact: n ln2_hi has 17 bits, both within 2**-17
    r = fma(nf, f(2.12194440e-4), r) - a_lo
    e = f(0.0013796287) * r + f(0.008369964)
    e = e * r + f(0.041668843)
    e = e * r + f(0.1666651)
    e = e * r + f(0.4999999)
    em1 = e * (r * r) + r  # exp(r) - 1
    td = np.float64(tc)
    p = _GELU_P[4] * td + _GELU_P[3]
    p = p * td + _GELU_P[2]
    p = p * td + _GELU_P[1]
    p = p * td + _GELU_P[0]
    q = _GELU_Q[5] * td + _GELU_Q[4]
    q = q * td + _GELU_Q[3]
    q = q * td + _GELU_Q[2]
    q = q * td + _GELU_Q[1]
    q = q * td + _GELU_Q[0]
    g = np.float32(td * p / q)
    eg = g * em1 + g  # exp(r) G(t)
    # 2**(n + 64) from tt's low bits: (0x4B400000 + n) << 23 keeps n's, + (127 + 64) << 23
    s = _as_float(np.int32((_as_int(tt) << 23) + (191 << 23)))
    tail = (eg * s) * f(5.421010862427522e-20)  # t Φ(-t); * 2**-64 rounds once if subnormal
    base = x * f(0) if x < f(0) else x  # -inf * 0: NaN at -inf, as torch (NaN stays NaN)
    return base - tail


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
