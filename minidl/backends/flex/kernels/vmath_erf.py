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

    t Φ(-t) = exp(-t**2 / 2) G(t),    G(t) = t erfcx(t / sqrt 2) / 2.

Sun's erfcf (glibc, musl) shows how to keep the exp accurate in float32: its argument's
condition number is ``t**2 / 2``, up to 105, so ``t**2 / 2`` is split exactly into ``hi +
lo`` (here with an FMA) and ``lo`` enters the reduced argument after the exact ``hi - n
ln2_hi``; the ``exp`` polynomial (degree 6, 2**-28) then sees the argument to 2**-30.

``G`` is all float32 and the error of its rational is damped: ``G = A (1 + delta)`` with

    A(t) = t / (2 (1 + c t)),  c = sqrt(2 pi) / 2,    delta = N(t) / D(t),  N, D of degree 4, 5,

``A`` matching G at 0 (``t / 2``) and at infinity (``1 / sqrt(2 pi)``), so ``|delta| <= 0.186``,
``delta ~ 0.8 / t`` far out, and the few float32 ulp that Horner's roundings leave in ``delta``
are a fraction of an ulp of G (a float32 ``t P / Q`` for G itself measured 5 ulp). With ``c = 1``
(``A`` off by 25 % at infinity) this degree needed a ``t N / D`` and one more FMA; ``D`` is
monic, its first step an addition. ``A``'s denominator is kept exact as ``2**65 (1 + c t) = d +
d_lo`` (two FMAs), ``d_lo / d`` joins the exp's argument; ``y = t 2**(n + 64) / d`` rounds once
(the ``2**64`` in both keeps ``t 2**(n + 64)`` normal) and ``y (1 + ff)``, ``ff = (1 + delta)
expm1 + delta``, once more (a subnormal result so rounds twice on its grid: 2 ulp at most).
``t / 2`` is an integer operation on the exponent bits, the exp's polynomial runs in Estrin's
order and ``y``'s division is issued before it is needed: on AVX2 the loop is bound by the
length of its chain more than by its operation count. Everything is arithmetic and selects:
the loop vectorizes (16 float32 lanes on AVX-512, 8 on AVX2). Measured over every third
float32 with ``2**-3 <= |x| < 16`` and every 1021st elsewhere: at most 2 ulp below 0 (9013 of
the 59M negatives), 1 above (past 14.5 the result is x).

Its cost on 1M values, one thread on a shared Zen 4 core, beside torch 2.13 (oneDNN's erf
polynomial, no exp, which cancels for negative x), ``bench/kernels.py --threads 1``, median
(best): on AVX-512 0.59 ms (0.58), torch 0.54 (0.47), the form before (``A`` with ``c = 1``, a
``t N / D`` with ``D(0) = 1``, the division last) 0.65 (0.64); on the AVX2 build 0.83 ms (0.77),
torch 0.54 (0.48), before 1.02 (0.97). In 21 paired rounds (CPU time, under load): 0.613 ms,
before 0.664, torch 0.577 on AVX-512; 0.851, before 0.963, torch 0.574 on AVX2. The AVX-512 loop
is 54 instructions per 16 lanes: 25 FMAs and products (the limit: about one 512-bit FMA a cycle),
two divisions (about 2.5 FMAs' worth each), the rest additions, selects and integer operations;
the rational is 8 FMAs, an addition and a division of it, the ``d_lo`` exactness two FMAs, an
addition and an integer operation (without it the result is 3 ulp off). The AVX2 loop is the
same 56 instructions for 8 lanes. The float64 rational for G that the float32 one replaced took
0.80 ms: 20 of its 58 instructions were 8-lane float64 FMAs.

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


#: A(t) = t / (2 (1 + c t)) with c = sqrt(2 pi) / 2 (in float32), so A -> 1 / sqrt(2 pi) = G(inf)
_GELU_C = np.float32(1.2533141374588013)
#: 1 + delta(t) = G(t) / A(t): delta = N(t) / D(t), N of degree 4, D of degree 5 and monic,
#: lowest power first (fitted in float64 with Lawson's reweighting on Chebyshev nodes over
#: [0, 14.5], the error weighted as an ulp of the result, so looser where it is subnormal,
#: 2**-27.4; rounded to float32 one coefficient at a time, refitting the rest after each, 2**-27.2;
#: |delta| <= 0.186, and delta ~ 0.8 / t at the far end)
_GELU_N = (-4.3134471638950345e-07, 32.62449264526367, 20.8253173828125, 6.056952953338623,
           0.7978171110153198)  # fmt: skip
_GELU_D = (71.63446044921875, 124.37301635742188, 93.10293579101562, 38.254642486572266,
           8.8407621383667, 1.0)  # fmt: skip
#: t past which t Φ(-t) is below half the smallest subnormal (t Φ(-t) < 1e-46 at 14.3)
GELU_TAIL_END = np.float32(14.5)
_TWO65 = np.float32(2.0**65)
_TWO65C = np.float32(2.0**65 * float(_GELU_C))  # exact: a power of two times c
_N32 = tuple(np.float32(c) for c in _GELU_N)
_D32 = tuple(np.float32(c) for c in _GELU_D)
_SIGN = np.int32(-0x80000000)


def _gelu32(x):
    f = np.float32
    t = abs(x)
    tc = t if t < GELU_TAIL_END else GELU_TAIL_END  # NaN -> 14.5 too: its result comes from x
    # A's denominator 2**65 (1 + c t) = d + d_lo exactly: 2**65 - d is exact (a multiple of d's
    # ulp below d), so the second FMA gives the first one's rounding error (to its own ulp)
    d = fma(tc, _TWO65C, _TWO65)
    d_lo = fma(tc, _TWO65C, _TWO65 - d)
    # d_lo / d (|.| <= 2**-24) to 12%, through the bits of an approximate 1 / d
    inv_d = _as_float(np.int32(0x7EF311C3 - _as_int(d)))
    # h = t / 2 by the exponent bits (an integer operation, not a product); below 2**-125 h is
    # a wrong tiny number or 0, and t * h underflows either way
    hb = np.int32(_as_int(tc) - np.int32(1 << 23))
    h = _as_float(hb if hb > np.int32(0) else np.int32(0))
    a_hi = tc * h
    a_lo = fma(tc, h, -a_hi)  # t**2 / 2 = a_hi + a_lo exactly
    magic = f(12582912)  # 1.5 * 2**23, as in vexp
    tt = a_hi * f(-1.44269504088896341) + magic
    nf = tt - magic
    r = fma(nf, f(-0.693359375), -a_hi)  # exact: n ln2_hi has 17 bits, both within 2**-17
    # exp(r) (1 + d_lo / d)**-1: the small terms summed first (far below r's ulp), so r rounds
    # once
    r = r - fma(nf, f(-2.12194440e-4), fma(d_lo, inv_d, a_lo))
    # exp(r) - 1 = r + r**2 (e2 + e3 r + e4 r**2 + e5 r**3 + e6 r**4) (2**-28), in Estrin's
    # order (the same six operations as Horner's, a shorter chain)
    r2 = r * r
    e_hi = fma(f(0.0013796287) * r + f(0.008369964), r, f(0.041668843))
    e = fma(e_hi, r2, f(0.1666651) * r + f(0.4999999))
    em1 = e * r2 + r
    p = _N32[4] * tc + _N32[3]
    p = p * tc + _N32[2]
    p = p * tc + _N32[1]
    p = p * tc + _N32[0]
    q = tc + _D32[4]
    q = q * tc + _D32[3]
    q = q * tc + _D32[2]
    q = q * tc + _D32[1]
    q = q * tc + _D32[0]
    delta = p / q
    ff = fma(delta, em1, delta) + em1  # (1 + delta) exp(r) - 1
    # 2**(n + 64) from tt's low bits: (0x4B400000 + n) << 23 keeps n's, + (127 + 64) << 23
    s = _as_float(np.int32((_as_int(tt) << 23) + (191 << 23)))
    # y = t 2**(n + 64) / 2**65 (1 + c t) = t 2**n / (2 (1 + c t)) rounds once; divided before
    # exp's polynomial is done, off the longest chain
    y = (tc * s) / d
    tail = fma(y, ff, y)  # t Φ(-t)
    # -0 below 0 (-(t - t)), NaN at -inf (inf - inf), as torch; NaN stays NaN
    base = _as_float(np.int32(_as_int(t - t) ^ _SIGN)) if x < f(0) else x
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
