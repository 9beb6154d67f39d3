"""``vtanh``, ``vsigmoid`` and ``vgelu_tanh``: the tanh family as branch-free functions LLVM can
vectorize, for the unary kernels and fusion's generated kernels (see :mod:`.vmath`).

float32:

- ``tanh(x)`` is ``x + x**3 P(x**2)`` below ``|x| = 0.625`` (``P`` of degree 5, a least-squares
  fit on Chebyshev nodes: 3e-9 relative error before rounding) and ``1 - 2 / (exp(2|x|) + 1)``
  above it, where the subtraction can no longer cancel (the result is above 0.55) and the
  error of ``exp`` is scaled down by ``2 / (exp(2|x|) + 1) < 0.45``. Both are computed and one
  is selected: a select vectorizes, a branch does not.
- ``sigmoid(x) = e / (1 + e)`` for ``x < 0`` and ``1 / (1 + e)`` otherwise, ``e = exp(-|x|)``:
  ``exp`` never overflows, so the subnormal results of ``x`` in (-103.9, -87.3) come out
  instead of a 0 (``1 / (1 + exp(-x))`` overflows there). Its two roundings on top of
  exp's error reach 2 ulp at worst (a float64 quotient gives 1 but cost 50% more time). The
  exp is :func:`~.vmath.exp_nonpositive32`, written for its argument range [-104, 0].
- torch's tanh form of GELU, ``0.5 x (1 + tanh(u))`` with ``u = sqrt(2/pi) (x + 0.044715 x**3)``,
  is written ``x / (1 + exp(-2u))``: for negative ``x`` the ``1 + tanh`` form cancels to 0
  (torch's own float32 kernel is 20% off at ``x = -5``). ``exp(-2u)`` is sensitive to the
  error of ``u`` (its condition number is ``2|u|``, up to 100), so it is evaluated in float64
  and rounded once.

float64 ``tanh`` calls libm (numba's ``np.tanh``), which is already within an ulp; float64
``sigmoid`` and ``gelu_tanh`` use the float64 ``vexp``. burn-flex calls its SIMD crate's
``tanh``; no burn counterpart for the GELU form (burn's ``gelu`` is the erf one).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from .vmath import _OPTS, exp_nonpositive32, vexp

#: sqrt(2 / pi) and the cubic's coefficient of torch's ``gelu(x, approximate="tanh")``
GELU_K = 0.7978845608028654
GELU_C = 0.044715


def vtanh(x):
    """``tanh(x)`` for a float32 or float64 scalar, vectorizable in float32 (use in njit code)."""
    return np.tanh(x)


def _tanh32(x):
    f = np.float32
    a = abs(x)
    z = x * x
    p = f(2.138226293027401e-3) * z + f(-8.171788416802883e-3)
    p = p * z + f(2.1698210388422012e-2)
    p = p * z + f(-5.3946252912282944e-2)
    p = p * z + f(1.333320140838623e-1)
    p = p * z + f(-3.333333134651184e-1)
    near = x + (x * z) * p
    e = vexp(a + a)  # inf past 44: 2 / inf = 0, tanh = 1; NaN stays NaN
    far = f(1) - f(2) / (e + f(1))
    far = -far if x < f(0) else far
    r = near if a < f(0.625) else far
    return x if x == f(0) else r  # -0.0 stays -0.0 (the polynomial's sum gives +0.0)


def _tanh64(x):
    return np.tanh(x)


@overload(vtanh, inline="always", jit_options=_OPTS)
def _vtanh_overload(x):
    if x == types.float32:
        return _tanh32
    if x == types.float64:
        return _tanh64
    return None


def vsigmoid(x):
    """``1 / (1 + exp(-x))`` for a float32 or float64 scalar, vectorizable (use in njit code)."""
    return 1 / (1 + np.exp(-x))


def _sigmoid32(x):
    e = exp_nonpositive32(-abs(x))  # exp(-|x|) in (0, 1]: never overflows
    one = np.float32(1)
    return (e if x < np.float32(0) else one) / (one + e)


def _sigmoid64(x):
    e = vexp(-abs(x))
    return (e if x < 0.0 else 1.0) / (1.0 + e)


@overload(vsigmoid, inline="always", jit_options=_OPTS)
def _vsigmoid_overload(x):
    if x == types.float32:
        return _sigmoid32
    if x == types.float64:
        return _sigmoid64
    return None


def vgelu_tanh(x):
    """torch's ``gelu(x, approximate="tanh")``, ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
    x**3)))``, for a float32 or float64 scalar, vectorizable (use in njit code)."""
    return x / (1 + np.exp(-2 * GELU_K * (x + GELU_C * x**3)))


def _gelu_tanh64(x):
    u = x * (GELU_K + (GELU_K * GELU_C) * (x * x))
    e = vexp(-2.0 * abs(u))  # exp(-2|u|) in (0, 1]: never overflows
    top = e if u < 0.0 else 1.0
    return x * (top / (1.0 + e))  # -inf * 0 = NaN at -inf, as torch


def _gelu_tanh32(x):
    return np.float32(vgelu_tanh(np.float64(x)))


@overload(vgelu_tanh, inline="always", jit_options=_OPTS)
def _vgelu_tanh_overload(x):
    if x == types.float32:
        return _gelu_tanh32
    if x == types.float64:
        return _gelu_tanh64
    return None
