"""Unary element-wise kernels (exp, log, sqrt, tanh, sigmoid, relu, exact gelu, ...) and the
fused ``relu_affine(x, a, b) = relu(x * a + b)``, and ReLU's backward ``relu_backward(output,
grad)`` (two inputs, one pass); re-exported by :mod:`.elementwise`.
Integer ``neg``/``abs`` and ``relu_affine`` with array ``a``, ``b`` run the broadcasting
kernels of :mod:`.broadcast`, the module below this one.

Mirrors burn-flex's ``float_exp``, ``float_log``, ... and the activations ``relu``, ``gelu``,
``sigmoid``. One flat loop over a contiguous array, the op a named integer constant (``EXP``,
``SIGMOID``, ...: compile-time constants to numba) whose branch LLVM hoists out of the loop; above ``PARALLEL_MIN_ELEMS`` elements, chunks over threads.
``exp``, ``log``, ``tanh``, ``sigmoid``, ``erf``, both GELUs, ``sin``, ``cos`` and
``powf_scalar`` use :mod:`.vmath` and its siblings, whose loops vectorize (libm is one scalar
call per value: [128, 10] float32 exp 4.7 -> 1.4 us, [128, 256] 97 -> 13, 1 thread, warm).

``relu_affine`` is the fusion lesson: torch eager runs ``x * a``, ``+ b`` and ``relu`` as three
passes over memory with two temporaries; one numba loop reads x once and writes once.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import FLOATS, JIT_EW, PARALLEL_MIN_ELEMS, compute_dtype
from .broadcast import (
    RELU_AFFINE,
    binary,
    ternary_parallel,
    ternary_serial,
)
from .operands import as_operand, run3, shape_of
from .unary_pow import powf_scalar  # noqa: F401  (re-exported)
from .vmath import vexp, vlog
from .vmath_act import vgelu_tanh, vsigmoid, vtanh
from .vmath_erf import verf, vgelu
from .vmath_trig import NEAR, vcos, vcos_near, vsin, vsin_near

CHUNK = 8192
Scalar = int | float
ArrayOrScalar = np.ndarray | Scalar

# The unary kernel's ops
(EXP, LOG, SQRT, ABS, NEG, RECIP, TANH, SIGMOID, RELU, GELU, SIN, COS, ERF, FLOOR, CEIL, ROUND,
 LOG1P, EXPM1, GELU_TANH) = range(19)  # fmt: skip
UNARY_OPS = {
    "exp": EXP, "log": LOG, "sqrt": SQRT, "abs": ABS, "neg": NEG, "recip": RECIP, "tanh": TANH,
    "sigmoid": SIGMOID, "relu": RELU, "gelu": GELU, "sin": SIN, "cos": COS, "erf": ERF,
    "floor": FLOOR, "ceil": CEIL, "round": ROUND, "log1p": LOG1P, "expm1": EXPM1,
    "gelu_tanh": GELU_TANH,
}  # fmt: skip


#: The ops that need no libm call: a loop over them vectorizes.
_CHEAP = (ABS, NEG, RECIP, RELU, FLOOR, CEIL, ROUND, SQRT)


@njit(inline="always", **JIT_EW)
def _un_cheap(op, v):
    if op == ABS:
        return np.abs(v)
    if op == NEG:
        return -v
    if op == RECIP:
        return 1 / v
    if op == RELU:
        return np.float32(0) if v < 0 else v  # NaN and -0.0 stay, as torch's clamp_min(x, 0)
    if op == FLOOR:
        return np.floor(v)
    if op == CEIL:
        return np.ceil(v)
    if op == ROUND:
        return np.round(v)  # half to even, as torch.round
    return np.sqrt(v)  # SQRT


#: The ops written with :mod:`.vmath` and its siblings (branch-free): a loop over them
#: vectorizes too (in float32; their float64 forms call libm where that is as fast). Two
#: groups, so a first ``exp`` does not compile the GELUs too.
_VMATH = (EXP, SIGMOID, LOG, TANH)
_ERF = (ERF, GELU, GELU_TANH)


@njit(inline="always", **JIT_EW)
def _un_vmath(op, v):
    if op == EXP:
        return vexp(v)
    if op == LOG:
        return vlog(v)
    if op == TANH:
        return vtanh(v)
    return vsigmoid(v)  # SIGMOID


@njit(inline="always", **JIT_EW)
def _un_erf(op, v):
    if op == ERF:
        return verf(v)
    if op == GELU:
        return vgelu(v)
    return vgelu_tanh(v)  # GELU_TANH


@njit(inline="always", **JIT_EW)
def _un_libm(op, v):
    # the ops that call libm for each value
    if op == LOG1P:
        return np.log1p(v)
    # EXPM1
    return np.expm1(v)


@njit(**JIT_EW)
def _cheap_rows(xs, os, op):
    for i in range(os.shape[0]):
        os[i] = _un_cheap(op, xs[i])


@njit(**JIT_EW)
def _vmath_rows(xs, os, op):
    for i in range(os.shape[0]):
        os[i] = _un_vmath(op, xs[i])


@njit(**JIT_EW)
def _erf_rows(xs, os, op):
    for i in range(os.shape[0]):
        os[i] = _un_erf(op, xs[i])


@njit(**JIT_EW)
def _trig_rows(xs, os, op):
    # the vectorized near form over the whole chunk, then the rare far values again (|x| >=
    # 4.2e8, inf, NaN) through libm: a branch in the first loop would keep it scalar
    far = False
    for i in range(os.shape[0]):
        v = xs[i]
        os[i] = vsin_near(v) if op == SIN else vcos_near(v)
        far |= not np.abs(v) < NEAR
    if far:
        for i in range(os.shape[0]):
            v = xs[i]
            if not np.abs(v) < NEAR:
                os[i] = vsin(v) if op == SIN else vcos(v)


@njit(**JIT_EW)
def _libm_rows(xs, os, op):
    for i in range(os.shape[0]):
        os[i] = _un_libm(op, xs[i])


# Separate loops, each its own kernel pair: the ops LLVM can vectorize (arithmetic, compares,
# rounding; the vmath functions; sin/cos with their fix-up) and the ones that call libm one
# value at a time (log1p, expm1). In one loop the eighteen-way branch kept even ReLU scalar
# (measured: relu over [128, 256] 22 us, NumPy 6 us); in one kernel a first ReLU compiled
# every group (26 s with an empty cache, 4 s for ReLU's own).
@njit(**JIT_EW)
def cheap_serial(x, out, op):
    """out = f(x) for flat contiguous arrays; ``op`` one of the cheap (arithmetic) ops."""
    _cheap_rows(x, out, op)


@njit(parallel=True, **JIT_EW)
def cheap_parallel(x, out, op):
    """``cheap_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _cheap_rows(x[t * CHUNK : min(t * CHUNK + CHUNK, n)], out[t * CHUNK : min(t * CHUNK + CHUNK, n)], op)


@njit(**JIT_EW)
def vmath_serial(x, out, op):
    """out = f(x) for exp, log, tanh, sigmoid."""
    _vmath_rows(x, out, op)


@njit(parallel=True, **JIT_EW)
def vmath_parallel(x, out, op):
    """``vmath_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _vmath_rows(x[t * CHUNK : min(t * CHUNK + CHUNK, n)], out[t * CHUNK : min(t * CHUNK + CHUNK, n)], op)


@njit(**JIT_EW)
def erf_serial(x, out, op):
    """out = f(x) for erf, gelu, gelu_tanh."""
    _erf_rows(x, out, op)


@njit(parallel=True, **JIT_EW)
def erf_parallel(x, out, op):
    """``erf_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _erf_rows(x[t * CHUNK : min(t * CHUNK + CHUNK, n)], out[t * CHUNK : min(t * CHUNK + CHUNK, n)], op)


@njit(**JIT_EW)
def trig_serial(x, out, op):
    """out = sin(x) or cos(x)."""
    _trig_rows(x, out, op)


@njit(parallel=True, **JIT_EW)
def trig_parallel(x, out, op):
    """``trig_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _trig_rows(x[t * CHUNK : min(t * CHUNK + CHUNK, n)], out[t * CHUNK : min(t * CHUNK + CHUNK, n)], op)


@njit(**JIT_EW)
def libm_serial(x, out, op):
    """out = log1p(x) or expm1(x), libm per value."""
    _libm_rows(x, out, op)


@njit(parallel=True, **JIT_EW)
def libm_parallel(x, out, op):
    """``libm_serial`` with chunks spread over threads."""
    n = x.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _libm_rows(x[t * CHUNK : min(t * CHUNK + CHUNK, n)], out[t * CHUNK : min(t * CHUNK + CHUNK, n)], op)


def _kernels_of(code: int):
    if code in _CHEAP:
        return cheap_serial, cheap_parallel
    if code in _VMATH:
        return vmath_serial, vmath_parallel
    if code in _ERF:
        return erf_serial, erf_parallel
    if code in (SIN, COS):
        return trig_serial, trig_parallel
    return libm_serial, libm_parallel


#: op code -> (serial, parallel) kernel
KERNELS = {code: _kernels_of(code) for code in UNARY_OPS.values()}


def unary_serial(x: np.ndarray, out: np.ndarray, op: int) -> None:
    """out = f(x) for flat contiguous arrays; ``op`` from UNARY_OPS (its group's serial kernel)."""
    KERNELS[op][0](x, out, op)


def unary_parallel(x: np.ndarray, out: np.ndarray, op: int) -> None:
    """``unary_serial`` with chunks spread over threads."""
    KERNELS[op][1](x, out, op)


@njit(**JIT_EW)
def _relu_affine_chunk(x, a, b, out, lo, hi):
    xs = x[lo:hi]
    os = out[lo:hi]
    for i in range(os.shape[0]):
        v = xs[i] * a + b
        os[i] = np.float32(0) if v < 0 else v


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


@njit(**JIT_EW)
def _relu_backward_chunk(o, g, out, lo, hi):
    os_, gs, outs = o[lo:hi], g[lo:hi], out[lo:hi]
    for i in range(outs.shape[0]):
        v = gs[i]  # loaded before the choice: a blend, not a branch on a random sign
        outs[i] = np.float32(0) if os_[i] <= 0 else v  # a NaN output is not <= 0: grad passes


@njit(**JIT_EW)
def relu_backward_serial(o, g, out):
    """out = 0 where o <= 0 else g, for flat contiguous arrays of one dtype (burn-flex's
    ``relu_backward``): one pass where the default's compare + mask_fill make two."""
    _relu_backward_chunk(o, g, out, 0, out.shape[0])


@njit(parallel=True, **JIT_EW)
def relu_backward_parallel(o, g, out):
    """``relu_backward_serial`` with chunks spread over threads."""
    n = out.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        _relu_backward_chunk(o, g, out, t * CHUNK, min(t * CHUNK + CHUNK, n))


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def unary(op: str, x: np.ndarray) -> np.ndarray:
    """``f(x)`` element-wise; op in exp, log, sqrt, abs, neg, recip, tanh, sigmoid, relu, gelu
    (exact erf form), sin, cos, erf, floor, ceil, round (half to even), log1p, expm1, gelu_tanh
    (torch's ``approximate="tanh"``). Any
    layout in, a C-contiguous array out, of x's dtype (integer ``abs``/``neg`` stay integer;
    other ops on integers give float32, as torch)."""
    code = UNARY_OPS[op]
    if x.dtype in FLOATS and x.flags.c_contiguous:  # the common case, in the fewest steps
        out = np.empty(x.shape, x.dtype)
        n = out.size
        if n:
            KERNELS[code][n >= PARALLEL_MIN_ELEMS](x.reshape(n), out.reshape(n), code)
        return out
    if x.dtype.kind in "biu":
        # the integer forms are binary ops
        if op == "neg":
            return binary("sub", 0, x)
        if op == "abs":
            return binary("maximum", x, binary("sub", 0, x))
        x = x.astype(np.float32)
    cdt = compute_dtype(x.dtype)
    xc = x if x.dtype == cdt and x.flags.c_contiguous else np.ascontiguousarray(x, dtype=cdt)
    out = np.empty(x.shape, cdt)
    if xc.size:
        KERNELS[code][xc.size >= PARALLEL_MIN_ELEMS](xc.reshape(-1), out.reshape(-1), code)
    return out if cdt == x.dtype else out.astype(x.dtype)


def relu_backward(output: np.ndarray, grad: np.ndarray) -> np.ndarray | None:
    """ReLU's gradient: ``grad`` where ``output > 0`` (or NaN), else 0, in grad's dtype; one
    kernel pass. None unless both are C-contiguous float32/float64 arrays of one shape and
    dtype (the caller then runs the two-op default, which broadcasts and casts)."""
    dt = grad.dtype
    if (output.dtype is not dt or dt not in FLOATS or output.shape != grad.shape
            or not (output.flags.c_contiguous and grad.flags.c_contiguous)):
        return None
    out = np.empty(grad.shape, dt)
    n = out.size
    if n:
        kernel = relu_backward_parallel if n >= PARALLEL_MIN_ELEMS else relu_backward_serial
        kernel(output.reshape(n), grad.reshape(n), out.reshape(n))
    return out


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
    # array a, b: the broadcasting ternary kernel
    av, bv = as_operand(a, cdt), as_operand(b, cdt)
    out = np.empty(shape_of(x, av, bv), cdt)
    xc = x.astype(cdt, copy=False)
    run3(ternary_serial, ternary_parallel, [xc, av, bv], out, RELU_AFFINE)
    return out.astype(x.dtype, copy=False)


def _unary_fn(op: str):
    def fn(x: np.ndarray) -> np.ndarray:
        return unary(op, x)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``unary('{op}', x)``: element-wise {op}."
    return fn


(exp, log, sqrt, abs, neg, recip, tanh, sigmoid, relu, gelu, sin, cos, erf, floor, ceil, round,
 log1p, expm1, gelu_tanh) = (_unary_fn(o) for o in UNARY_OPS)  # noqa: A001  # fmt: skip
