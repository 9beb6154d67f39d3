"""The one entry point for every element-wise kernel: comparisons (here), and re-exported from
below, the binary and ternary ops with broadcasting (:mod:`.broadcast`: ``binary``, ``where``,
``clamp``), unary math and the fused ``relu_affine`` (:mod:`.unary`); one function per op
(``add``, ``lt``, ``exp``, ...).

Mirrors burn-flex's element-wise ops (``float_add`` ... ``float_powf``, ``float_equal`` ...
(``ops/comparison.rs``), ``float_exp`` ..., ``float_mask_where``, ``float_clamp``, the
activations ``relu``, ``gelu``, ``sigmoid``).

The comparison kernel runs on the broadcasting machinery of :mod:`.broadcast` (3-D views with
merged dimensions, chunks over threads above ``PARALLEL_MIN_ELEMS``) and writes a bool array;
its op is a named constant (``EQ`` ... ``GE``), like every element-wise kernel's.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT_EW, PARALLEL_MIN_ELEMS, compute_dtype
from .broadcast import (
    BINARY_OPS,
    CHUNK,
    binary,
    clamp,
    locate,
    row_of,
    where,
)
from .operands import ArrayOrScalar, as_operand, fast_pair, result_dtype, run3, shape_of
from .unary import (
    UNARY_OPS,
    abs,
    ceil,
    cos,
    erf,
    exp,
    expm1,
    floor,
    gelu,
    log,
    log1p,
    neg,
    recip,
    relu,
    relu_affine,
    round,
    sigmoid,
    sin,
    sqrt,
    tanh,
    unary,
)

# The comparison kernel's ops
EQ, NE, LT, LE, GT, GE = range(6)
COMPARE_OPS = {"eq": EQ, "ne": NE, "lt": LT, "le": LE, "gt": GT, "ge": GE}


@njit(inline="always", **JIT_EW)
def _cmp(op, x, y):
    if op == EQ:
        return x == y
    if op == NE:
        return x != y
    if op == LT:
        return x < y
    if op == LE:
        return x <= y
    if op == GT:
        return x > y
    # GE
    return x >= y


# Each row loop in its own small function, as the binary kernels' (broadcast.py says why: in
# one body with the six-way op branch no loop vectorized; x < y over [128, 256] took 21 us).


@njit(**JIT_EW)
def _compare_vs(op, ar, y, orow):
    for j in range(orow.shape[0]):
        orow[j] = _cmp(op, ar[j], y)


@njit(**JIT_EW)
def _compare_vv(op, ar, br, orow):
    for j in range(orow.shape[0]):
        orow[j] = _cmp(op, ar[j], br[j])


@njit(**JIT_EW)
def _compare_strided(op, ar, sa, br, sb, orow):
    for j in range(orow.shape[0]):
        orow[j] = _cmp(op, ar[j * sa], br[j * sb])


@njit(**JIT_EW)
def _compare_task(a, b, out, op, t, nch):
    i0, i1, lo, hi = locate(out.shape, t, nch)
    ar, a_one = row_of(a, i0, i1, lo, hi)
    br, b_one = row_of(b, i0, i1, lo, hi)
    orow = out[i0, i1, lo:hi]
    if b_one and not a_one:
        _compare_vs(op, ar, br[0], orow)
    elif not a_one and not b_one:
        _compare_vv(op, ar, br, orow)
    else:
        _compare_strided(op, ar, 0 if a_one else 1, br, 0 if b_one else 1, orow)


@njit(**JIT_EW)
def compare_serial(a, b, out, op):
    """out (bool) = a <cmp> b over 3-D views; ``op`` from COMPARE_OPS."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in range(out.shape[0] * out.shape[1] * nch):
        _compare_task(a, b, out, op, t, nch)


@njit(parallel=True, **JIT_EW)
def compare_parallel(a, b, out, op):
    """``compare_serial`` with the chunks spread over threads."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in prange(out.shape[0] * out.shape[1] * nch):
        _compare_task(a, b, out, op, t, nch)


def compare(op: str, a: ArrayOrScalar, b: ArrayOrScalar) -> np.ndarray:
    """Element-wise comparison with broadcasting, a bool array; op in eq, ne, lt, le, gt, ge."""
    code = COMPARE_OPS[op]
    if fast_pair(a, b):
        n = a.size
        out = np.empty(a.shape, np.bool_)
        if n:
            kernel = compare_parallel if n >= PARALLEL_MIN_ELEMS else compare_serial
            kernel(a.reshape(1, 1, n), b.reshape(1, 1, n), out.reshape(1, 1, n), code)
        return out
    cdt = compute_dtype(result_dtype(a, b))
    av, bv = as_operand(a, cdt), as_operand(b, cdt)
    out = np.empty(shape_of(av, bv), np.bool_)
    return run3(compare_serial, compare_parallel, [av, bv], out, code)


def _binary_fn(op: str):
    def fn(a: ArrayOrScalar, b: ArrayOrScalar) -> np.ndarray:
        return binary(op, a, b)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``binary('{op}', a, b)``: element-wise {op} with broadcasting."
    return fn


def _compare_fn(op: str):
    def fn(a: ArrayOrScalar, b: ArrayOrScalar) -> np.ndarray:
        return compare(op, a, b)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``compare('{op}', a, b)``: element-wise {op}, a bool array."
    return fn


add, sub, mul, div, pow, maximum, minimum = (_binary_fn(o) for o in BINARY_OPS)  # noqa: A001
eq, ne, lt, le, gt, ge = (_compare_fn(o) for o in COMPARE_OPS)

__all__ = [
    "BINARY_OPS", "COMPARE_OPS", "UNARY_OPS", "binary", "compare", "unary", "where", "clamp",
    "relu_affine", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt",
    "le", "gt", "ge", "abs", "ceil", "cos", "erf", "exp", "expm1", "floor", "gelu", "log",
    "log1p", "neg", "recip", "relu", "round", "sigmoid", "sin", "sqrt", "tanh",
]  # fmt: skip
