"""``vpowf``: ``x ** p`` for a scalar exponent, branch-free so a loop over it vectorizes, for
the unary kernels' ``powf_scalar`` and fusion's generated kernels (see :mod:`.vmath`).

float32 computes ``exp(p log|x|)`` in float64 with :func:`~.vmath.vlog` and :func:`~.vmath.vexp`
and rounds once: ``p log|x|`` reaches +-104 before the result leaves float32's range, and the
exp multiplies the error of its argument by that much, so float32 arithmetic would lose 7 bits.
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
from numba import types
from numba.extending import overload

from .vmath import _OPTS, _as_int, vexp, vlog


def vpowf(x, p):
    """``x ** p`` for a float32 or float64 scalar ``x`` and a float ``p`` (use in njit code)."""
    return x**p


def _pow32(x, p):
    q = np.float64(np.float32(p))
    v = np.float64(x)
    a = abs(v)
    r = vexp(q * vlog(a))
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
