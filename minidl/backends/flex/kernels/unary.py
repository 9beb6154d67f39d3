"""Unary element-wise kernels (exp, log, sqrt, tanh, sigmoid, relu, exact gelu, ...) and the
fused ``relu_affine(x, a, b) = relu(x * a + b)``; re-exported by :mod:`.elementwise`.

Mirrors burn-flex's ``float_exp``, ``float_log``, ... and the activations ``relu``, ``gelu``,
``sigmoid``. One flat loop over a contiguous array, the op a small integer whose branch LLVM
hoists out of the loop; above ``PARALLEL_MIN_ELEMS`` elements, chunks over threads.

``relu_affine`` is the fusion lesson: torch eager runs ``x * a``, ``+ b`` and ``relu`` as three
passes over memory with two temporaries; one numba loop reads x once and writes once.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._common import JIT_EW, PARALLEL_MIN_ELEMS, compute_dtype

CHUNK = 8192
Scalar = int | float
ArrayOrScalar = np.ndarray | Scalar

UNARY_OPS = {
    "exp": 0, "log": 1, "sqrt": 2, "abs": 3, "neg": 4, "recip": 5, "tanh": 6,
    "sigmoid": 7, "relu": 8, "gelu": 9, "sin": 10, "cos": 11, "erf": 12, "floor": 13,
    "ceil": 14, "round": 15, "log1p": 16, "expm1": 17,
}  # fmt: skip



@njit(inline="always", **JIT_EW)
def _un(op, v):
    if op == 0:
        return np.exp(v)
    if op == 1:
        return np.log(v)
    if op == 2:
        return np.sqrt(v)
    if op == 3:
        return np.abs(v)
    if op == 4:
        return -v
    if op == 5:
        return 1 / v
    if op == 6:
        return np.tanh(v)
    if op == 7:
        return 1 / (1 + np.exp(-v))
    if op == 8:
        return v if (v > 0 or v != v) else np.float32(0)  # NaN stays NaN, as torch
    if op == 9:
        # 1 + erf(z) written as erfc(-z): no cancellation for negative v (erf -> -1)
        return 0.5 * v * math.erfc(-v * 0.7071067811865476)
    if op == 10:
        return np.sin(v)
    if op == 11:
        return np.cos(v)
    if op == 12:
        return math.erf(v)
    if op == 13:
        return np.floor(v)
    if op == 14:
        return np.ceil(v)
    if op == 15:
        return np.round(v)  # half to even, as torch.round
    if op == 16:
        return np.log1p(v)
    return np.expm1(v)


@njit(**JIT_EW)
def _unary_chunk(x, out, op, lo, hi):
    xs = x[lo:hi]
    os = out[lo:hi]
    for i in range(os.shape[0]):
        os[i] = _un(op, xs[i])


@njit(**JIT_EW)
def unary_serial(x, out, op):
    """out = f(x) for flat contiguous arrays; ``op`` from UNARY_OPS."""
    _unary_chunk(x, out, op, 0, x.shape[0])


@njit(parallel=True, **JIT_EW)
def unary_parallel(x, out, op):
    """``unary_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _unary_chunk(x, out, op, t * CHUNK, min(t * CHUNK + CHUNK, n))


@njit(**JIT_EW)
def _relu_affine_chunk(x, a, b, out, lo, hi):
    xs = x[lo:hi]
    os = out[lo:hi]
    for i in range(os.shape[0]):
        v = xs[i] * a + b
        os[i] = v if (v > 0 or v != v) else np.float32(0)


@njit(**JIT_EW)
def relu_affine_serial(x, a, b, out):
    """out = relu(x * a + b) for a flat contiguous x and scalars a, b: one read, one write."""
    _relu_affine_chunk(x, a, b, out, 0, x.shape[0])


@njit(parallel=True, **JIT_EW)
def relu_affine_parallel(x, a, b, out):
    """``relu_affine_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _relu_affine_chunk(x, a, b, out, t * CHUNK, min(t * CHUNK + CHUNK, n))


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def unary(op: str, x: np.ndarray) -> np.ndarray:
    """``f(x)`` element-wise; op in exp, log, sqrt, abs, neg, recip, tanh, sigmoid, relu, gelu
    (exact erf form), sin, cos, erf, floor, ceil, round (half to even), log1p, expm1. Any layout in, a C-contiguous array out, of x's dtype (integer
    ``abs``/``neg`` stay integer; other ops on integers give float32, as torch)."""
    code = UNARY_OPS[op]
    if x.dtype.kind in "biu":
        from .elementwise import binary  # the integer forms are binary ops

        if op == "neg":
            return binary("sub", 0, x)
        if op == "abs":
            return binary("maximum", x, binary("sub", 0, x))
        x = x.astype(np.float32)
    cdt = compute_dtype(x.dtype)
    xc = x if x.dtype == cdt and x.flags.c_contiguous else np.ascontiguousarray(x, dtype=cdt)
    out = np.empty(x.shape, cdt)
    if xc.size:
        kernel = unary_parallel if xc.size >= PARALLEL_MIN_ELEMS else unary_serial
        kernel(xc.reshape(-1), out.reshape(-1), code)
    return out if cdt == x.dtype else out.astype(x.dtype)


def relu_affine(x: np.ndarray, a: ArrayOrScalar, b: ArrayOrScalar) -> np.ndarray:
    """``relu(x * a + b)`` in one pass (one read of x, one write), torch's three ops fused.

    ``a`` and ``b`` are scalars (fast flat kernel) or arrays broadcasting against ``x``.
    """
    cdt = compute_dtype(x.dtype)
    if np.ndim(a) == 0 and np.ndim(b) == 0:
        xc = np.ascontiguousarray(x, dtype=cdt).reshape(-1)
        out = np.empty(xc.shape, cdt)
        if xc.size:
            kernel = relu_affine_parallel if xc.size >= PARALLEL_MIN_ELEMS else relu_affine_serial
            kernel(xc, cdt.type(a), cdt.type(b), out)
        return out.reshape(x.shape).astype(x.dtype, copy=False)
    from . import elementwise as ew  # array a, b: the broadcasting ternary kernel

    av, bv = ew._as_operand(a, cdt), ew._as_operand(b, cdt)
    out = np.empty(ew._shape_of(x, av, bv), cdt)
    xc = x.astype(cdt, copy=False)
    ew._run3(ew.ternary_serial, ew.ternary_parallel, [xc, av, bv], out, ew._RELU_AFFINE)
    return out.astype(x.dtype, copy=False)


def _unary_fn(op: str):
    def fn(x: np.ndarray) -> np.ndarray:
        return unary(op, x)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``unary('{op}', x)``: element-wise {op}."
    return fn


(exp, log, sqrt, abs, neg, recip, tanh, sigmoid, relu, gelu, sin, cos, erf, floor, ceil, round,
 log1p, expm1) = (_unary_fn(o) for o in UNARY_OPS)  # noqa: A001  # fmt: skip
