"""``powf_scalar(x, p)``: ``x ** p`` for a float array and a scalar exponent, one flat loop
(burn-flex's ``float_powf_scalar``); re-exported by :mod:`.unary`. The exponents with a
shorter exact form (2, 3, -1, 0.5) run their own loop; every other one runs
:func:`.vmath_pow.vpowf`, which vectorizes.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT_EW, PARALLEL_MIN_ELEMS, compute_dtype
from .vmath_pow import vpowf

CHUNK = 8192

# x ** p for a scalar p: the exponents with a shorter exact form get their own loop
POW_ANY, POW_SQUARE, POW_CUBE, POW_RECIP, POW_SQRT = range(5)
#: ``** 0.5`` is sqrt in NumPy and torch alike (C's pow differs at -0.0 and -inf)
_POW_FORMS = {2.0: POW_SQUARE, 3.0: POW_CUBE, -1.0: POW_RECIP, 0.5: POW_SQRT}


@njit(**JIT_EW)
def _pow_chunk(x, out, p, form, lo, hi):
    xs = x[lo:hi]
    os = out[lo:hi]
    if form == POW_SQUARE:
        for i in range(os.shape[0]):
            os[i] = xs[i] * xs[i]  # one rounding: correctly rounded
    elif form == POW_CUBE:
        for i in range(os.shape[0]):
            v = np.float64(xs[i])  # x*x is exact in float64 (x float32): one rounding at the end
            os[i] = v * v * v
    elif form == POW_RECIP:
        for i in range(os.shape[0]):
            os[i] = 1 / xs[i]
    elif form == POW_SQRT:
        for i in range(os.shape[0]):
            os[i] = np.sqrt(xs[i])
    else:
        for i in range(os.shape[0]):
            os[i] = vpowf(xs[i], p)


@njit(**JIT_EW)
def pow_serial(x, out, p, form):
    """out = x ** p for flat contiguous arrays and a float64 ``p``; ``form`` from _POW_FORMS."""
    _pow_chunk(x, out, p, form, 0, x.shape[0])


@njit(parallel=True, **JIT_EW)
def pow_parallel(x, out, p, form):
    """``pow_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _pow_chunk(x, out, p, form, t * CHUNK, min(t * CHUNK + CHUNK, n))


def powf_scalar(x: np.ndarray, p: float) -> np.ndarray:
    """``x ** p`` element-wise for a float array and a Python float, with C99's special cases
    (NumPy's and torch's: ``x ** 0 = 1``, a negative base and a non-integer ``p`` give NaN,
    ...), and ``** 0.5`` as sqrt, as both do; ``p`` is rounded to x's dtype first, as they do.
    ``2``, ``3``, ``-1`` and ``0.5`` run as products, a quotient or sqrt; everything else
    through :func:`.vmath_pow.vpowf`. Any
    layout in, a C-contiguous array of x's dtype out (float16 is computed in float32).
    burn-flex's ``float_powf_scalar``."""
    cdt = compute_dtype(x.dtype)
    xc = np.ascontiguousarray(x, dtype=cdt)
    out = np.empty(x.shape, cdt)
    p = float(p)
    form = _POW_FORMS.get(p, POW_ANY)
    if xc.size:
        kernel = pow_parallel if xc.size >= PARALLEL_MIN_ELEMS else pow_serial
        kernel(xc.reshape(-1), out.reshape(-1), p, form)
    return out if cdt == x.dtype else out.astype(x.dtype)
