"""``vpowf``: ``x ** p`` for a scalar exponent, branch-free so a loop over it vectorizes, for
the unary kernels' ``powf_scalar`` and fusion's generated kernels (see :mod:`.vmath`).

float32 computes ``exp(p log|x|)`` in float64 and rounds once: ``p log|x|`` reaches +-104
before the result leaves float32's range, and the exp multiplies the error of its argument by
that much, so float32 arithmetic would lose 7 bits. The float64 ``vlog``/``vexp`` were more
than a float32 result needs (2**-52, with a 13-term exp) and converted the exponent from an
int64, which AVX2 cannot do in a vector: here the log takes the exponent and mantissa from the
float32 bits (int32 lanes, the exponent made a float through its bits), runs a 7-term atanh
series (2**-40), and the exp a degree-9 Taylor polynomial (2**-35) with one ``2**n`` factor
(a float64 2**n is normal for every float32 result; the final conversion rounds subnormals
once). 125 instead of 200 vector instructions per 16 values on AVX-512.
The exponent is ``p`` rounded to float32 first, as NumPy and torch do with a Python scalar.
C99's (and NumPy's and torch's) special cases are selects around it:

- ``x ** 0 = 1`` and ``1 ** p = 1``, even for NaN; ``(-1) ** +-inf = 1``;
- a finite negative ``x`` gives NaN for a non-integer ``p``, and the sign of ``x`` for an odd
  integer ``p`` (``-0.0`` included: ``(-0.0) ** -1 = -inf``);
- the rest (zeros, infinities, NaN) are what ``exp(p log|x|)`` gives: ``log 0 = -inf``,
  ``log inf = inf``, ``exp(-inf) = 0``.

float64 calls libm's ``pow`` (numba's ``**``). burn-flex's ``float_powf_scalar`` calls its
SIMD crate's ``powf``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from ._common import JIT
from .vmath import _OPTS, _as_float, _as_int


def vpowf(x, p):
    """``x ** p`` for a float32 or float64 scalar ``x`` and a float ``p`` (use in njit code)."""
    return x**p


@njit(inline="always", **JIT, fastmath={"contract"})
def _log32_as64(x):
    # log|x| for a float32 x, in float64 to 2**-40 relative: the exponent and the mantissa in
    # [sqrt(2)/2, sqrt(2)) taken from the float32 bits (int32 lanes: AVX2 has no int64 ->
    # double conversion, so k becomes a float through its bits too), then
    # log m = 2 atanh(s) = s (2 + z T(z)), s = (m - 1) / (m + 1), z = s**2 <= 0.0295, T the
    # series' next six terms (the seventh, 2 s**15 / 15, is below 2**-40 of log m)
    f = np.float32
    a = abs(x)
    sub = a < f(1.17549435e-38)
    v = a * f(33554432.0) if sub else a  # 2**25: a subnormal's mantissa gets its bits
    ix = _as_int(v) + (0x3F800000 - 0x3F3504F3)
    # k + 2**23 + 127 + 25 sub as a float's bits, then minus the constant: exact
    kf = _as_float(np.int32(((ix >> 23) & 0x1FF) | 0x4B000000)) - f(8388608 + 127)
    kf = kf - f(25) if sub else kf
    m = _as_float(np.int32((ix & 0x007FFFFF) + 0x3F3504F3))
    g = np.float64(m) - 1.0
    s = g / (2.0 + g)
    z = s * s
    t = 0.15384615384615385 * z + 0.18181818181818182  # 2/13, 2/11
    t = t * z + 0.2222222222222222
    t = t * z + 0.2857142857142857
    t = t * z + 0.4
    t = t * z + 0.6666666666666666
    r = (s * z) * t + (s + s) + np.float64(kf) * 0.6931471805599453
    r = -np.inf if a == f(0) else r
    return np.float64(a) if not (a < f(np.inf)) else r  # inf stays inf, NaN NaN


@njit(inline="always", **JIT, fastmath={"contract"})
def _exp64_for32(y):
    # exp(y) to 2**-32 relative, enough for a float32 result: y clamped to [-110, 100] (the
    # float32 result is 0 or inf beyond; NaN passes), n = round(y / ln 2), |r| <= ln2 / 2, a
    # degree-9 Taylor polynomial (remainder 2**-35), 2**n one normal float64 factor
    yc = 100.0 if y > 100.0 else y
    yc = -110.0 if yc < -110.0 else yc
    magic = 6755399441055744.0  # 1.5 * 2**52
    t = yc * 1.4426950408889634 + magic
    nf = t - magic
    r = nf * -0.6931471805599453 + yc
    e = 2.7557319223985893e-06 * r + 2.48015873015873e-05
    e = e * r + 1.984126984126984e-04
    e = e * r + 1.388888888888889e-03
    e = e * r + 8.333333333333333e-03
    e = e * r + 4.1666666666666664e-02
    e = e * r + 0.16666666666666666
    e = e * r + 0.5
    e = e * (r * r) + r
    scale = _as_float((_as_int(t) - 0x4338000000000000 + 1023) << 52)
    return e * scale + scale


def _pow32(x, p):
    q = np.float64(np.float32(p))
    v = np.float64(x)
    a = abs(v)
    r = _exp64_for32(q * _log32_as64(x))
    whole = q == np.floor(q)  # +-inf counts as whole (and even), NaN does not
    half = q * 0.5
    odd = whole and half != np.floor(half) and abs(q) < 9007199254740992.0
    r = -r if odd and _as_int(x) < 0 else r  # the sign bit: -0.0 too
    r = np.nan if v < 0.0 and not whole and a < np.inf else r
    r = 1.0 if v == 1.0 or q == 0.0 or (a == 1.0 and abs(q) == np.inf) else r
    return np.float32(r)


def _pow64(x, p):
    return x ** np.float64(p)


@overload(vpowf, inline="always", jit_options=_OPTS)
def _vpowf_overload(x, p):
    if not isinstance(p, (types.Float, types.Integer)):
        return None
    if x == types.float32:
        return _pow32
    if x == types.float64:
        return _pow64
    return None
