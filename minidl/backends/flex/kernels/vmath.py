"""``vexp``, ``vlog`` and ``fmaximum``: an ``exp``, a ``log`` and a NaN-propagating ``max`` that
LLVM can vectorize, for the kernels' loops.

numba lowers ``np.exp`` to a scalar libm call per element (there is no SVML here), so a loop
over ``exp`` stays scalar: [128, 10] took 4.2 us where NumPy's own SIMD exp takes 0.8. This is
the textbook range reduction (Cody and Waite) written without branches, so the loop vectorizer
packs it like any arithmetic:

    exp(x) = 2**n * exp(r),  n = round(x / ln 2),  r = x - n*ln2_hi - n*ln2_lo,  |r| <= ln2 / 2

``exp(r)`` is a polynomial (Cephes' degree-7 minimax form for float32, the Taylor series to
r**13 for float64), and ``2**n`` is built in the exponent bits. The scale is applied as two
factors ``2**(n//2) * 2**(n - n//2)``, each a normal float, so results that are subnormal round
once and results past the largest float overflow to inf, with no special case. Below
``-104`` (float32) / ``-746`` (float64) the result is 0 and above ``89`` / ``710`` inf; NaN
comes out as NaN. Measured against the correctly rounded exp over the whole range: at most 1
ulp off in both dtypes, 0.08-0.09 ulp on average (NumPy's own float32 exp: up to 3 ulp); see
``tests/flex_kernels/test_vmath.py``.

``vlog`` is musl's (fdlibm's) log written the same way: the exponent ``k`` and a mantissa
``m`` in [sqrt(2)/2, sqrt(2)) taken from the bits (a subnormal scaled by 2**25 / 2**54
first), ``log(m) = 2 atanh(f / (2 + f))`` as an odd polynomial, ``k ln 2`` added in two
parts; 0 gives -inf, a negative or NaN input NaN, inf inf.

The functions are numba overloads compiled as their own functions without ``reassoc``
(reassociating ``(t + magic) - magic`` or the two-part ``ln 2`` would undo the reduction);
LLVM inlines them into a caller's loop and keeps their own fast-math flags, so a softmax
compiled with ``reassoc`` still gets this rounding.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from ._common import JIT

_OPTS = {"fastmath": {"contract"}, "error_model": "numpy"}


@intrinsic
def _as_int(typingctx, x):
    # the bits of a float as the signed integer of its width (an LLVM bitcast: free)
    width = x.bitwidth
    sig = getattr(types, f"int{width}")(x)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(width))

    return sig, codegen


@intrinsic
def _as_float(typingctx, x):
    # the float whose bits are the integer x (int32 -> float32, int64 -> float64)
    float_type = types.float32 if x.bitwidth == 32 else types.float64
    sig = float_type(x)

    def codegen(context, builder, signature, args):
        llvm_type = ir.FloatType() if x.bitwidth == 32 else ir.DoubleType()
        return builder.bitcast(args[0], llvm_type)

    return sig, codegen


@intrinsic
def fmaximum(typingctx, a, b):
    """NaN-propagating ``max(a, b)`` of two floats of one type as LLVM's ``llvm.maximum``: the
    loop vectorizer takes a running max of it as a reduction (``m = v if v > m or v != v else
    m`` stayed scalar: a softmax row max over [128, 256] 29.8 vs 2.2 us)."""
    if a != b or not isinstance(a, types.Float):
        return None
    sig = a(a, b)

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.maximum", [t], ir.FunctionType(t, [t, t]))
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once, for three floats of one type, as LLVM's ``llvm.fma`` (one
    instruction on x86-64 with FMA3, vectorized like any arithmetic): the exact error of a
    product, ``fma(a, b, -a * b)``, which ``contract`` alone may or may not fuse."""
    if not (a == b == c and isinstance(a, types.Float)):
        return None
    sig = a(a, b, c)

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        return builder.call(fn, args)

    return sig, codegen


def vexp(x):
    """``exp(x)`` for a float32 or float64 scalar, branch-free so a loop over it vectorizes
    (use inside njit code; burn-flex's ``float_exp`` calls the platform's vector exp)."""
    return np.exp(x)


def _exp32(x):
    f = np.float32
    # NaN becomes 0 here (its result is chosen at the end); the clamp keeps n in range
    v = f(0) if x != x else (f(-104) if x < f(-104) else (f(89) if x > f(89) else x))
    magic = f(12582912)  # 1.5 * 2**23: adding it rounds to an integer held in the low bits
    t = v * f(1.44269504088896341) + magic
    nf = t - magic
    r = v - nf * f(0.693359375) + nf * f(2.12194440e-4)
    r2 = r * r
    p = f(1.9875691500e-4) * r + f(1.3981999507e-3)
    p = p * r + f(8.3334519073e-3)
    p = p * r + f(4.1665795894e-2)
    p = p * r + f(1.6666665459e-1)
    p = p * r + f(5.0000001201e-1)
    e = p * r2 + r + f(1)
    # the integer n from t's bits; numba widens int32 arithmetic to int64, so the exponent
    # words are narrowed back before they become float32 bits
    n = _as_int(t) - 0x4B400000
    h = n >> 1
    s1 = _as_float(np.int32((h + 127) << 23))
    s2 = _as_float(np.int32((n - h + 127) << 23))
    return x + x if x != x else e * s1 * s2


def _exp64(x):
    v = 0.0 if x != x else (-746.0 if x < -746.0 else (710.0 if x > 710.0 else x))
    magic = 6755399441055744.0  # 1.5 * 2**52
    t = v * 1.4426950408889634 + magic
    nf = t - magic
    r = v - nf * 0.6931471803691238 - nf * 1.9082149292705877e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    e = p * (r * r) + r + 1.0
    n = _as_int(t) - 0x4338000000000000
    h = n >> 1
    s1 = _as_float((h + 1023) << 52)
    s2 = _as_float((n - h + 1023) << 52)
    return x + x if x != x else e * s1 * s2


@njit(**JIT, fastmath={"contract"})
def exp_nonpositive32(v):
    """float32 ``exp(v)`` for ``v <= 0`` (or NaN, which passes through), within an ulp, for the
    callers whose argument is never positive (sigmoid's ``exp(-|x|)``, erf's tail): no upper
    clamp and no NaN select, and ``2**n`` as ``2**(n + 64) * 2**-64``, two integer operations
    where :func:`vexp`'s two-factor scale takes eight (39 -> 24 vector instructions per 16
    values). Below -104 the result is 0 (or the smallest subnormal)."""
    f = np.float32
    v = f(-104) if v < f(-104) else v
    magic = f(12582912)
    tt = v * f(1.44269504088896341) + magic
    nf = tt - magic
    r = v - nf * f(0.693359375) + nf * f(2.12194440e-4)
    em1 = f(0.0013796287) * r + f(0.008369964)  # (exp(r) - 1 - r) / r**2, 2**-28
    em1 = em1 * r + f(0.041668843)
    em1 = em1 * r + f(0.1666651)
    em1 = em1 * r + f(0.4999999)
    em1 = em1 * (r * r) + r
    scale = _as_float(np.int32((_as_int(tt) << 23) + (191 << 23)))
    return (em1 * scale + scale) * f(5.421010862427522e-20)


@overload(vexp, jit_options=_OPTS)
def _vexp_overload(x):
    if x == types.float32:
        return _exp32
    if x == types.float64:
        return _exp64
    return None


def vlog(x):
    """``log(x)`` for a float32 or float64 scalar, branch-free so a loop over it vectorizes
    (use inside njit code; burn-flex's ``float_log`` calls the platform's vector log)."""
    return np.log(x)


def _log32(x):
    f = np.float32
    sub = x < f(1.17549435e-38)  # subnormal (or <= 0: its result is chosen at the end)
    v = x * f(33554432.0) if sub else x  # 2**25
    ix = _as_int(v) + (0x3F800000 - 0x3F3504F3)
    k = (ix >> 23) - 0x7F - (25 if sub else 0)
    m = _as_float(np.int32((ix & 0x007FFFFF) + 0x3F3504F3))
    g = m - f(1)
    s = g / (f(2) + g)
    z = s * s
    w = z * z
    t1 = w * (f(0.40000972152) + w * f(0.24279078841))
    t2 = z * (f(0.66666662693) + w * f(0.28498786688))
    hfsq = f(0.5) * g * g
    dk = f(k)
    r = s * (hfsq + t1 + t2) + dk * f(9.0580006145e-06) - hfsq + g + dk * f(6.9313812256e-01)
    r = f(np.nan) if x < f(0) else r
    r = f(-np.inf) if x == f(0) else r
    return x + x if not (x < f(np.inf)) else r  # NaN and inf come back as they are


def _log64(x):
    sub = x < 2.2250738585072014e-308
    v = x * 18014398509481984.0 if sub else x  # 2**54
    ix = _as_int(v) + (0x3FF0000000000000 - 0x3FE6A09E667F3BCD)
    k = (ix >> 52) - 0x3FF - (54 if sub else 0)
    m = _as_float((ix & 0x000FFFFFFFFFFFFF) + 0x3FE6A09E667F3BCD)
    g = m - 1.0
    s = g / (2.0 + g)
    z = s * s
    w = z * z
    t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01))
    t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01
                                              + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)))
    hfsq = 0.5 * g * g
    dk = float(k)
    r = s * (hfsq + t1 + t2) + dk * 1.90821492927058770002e-10 - hfsq + g + dk * 6.93147180369123816490e-01
    r = np.nan if x < 0.0 else r
    r = -np.inf if x == 0.0 else r
    return x + x if not (x < np.inf) else r


@overload(vlog, jit_options=_OPTS)
def _vlog_overload(x):
    if x == types.float32:
        return _log32
    if x == types.float64:
        return _log64
    return None
