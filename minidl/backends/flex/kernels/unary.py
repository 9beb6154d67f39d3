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

from ._common import JIT_EW, PARALLEL_MIN_ELEMS, compute_dtype
from .broadcast import (
    RELU_AFFINE,
    binary,
    ternary_parallel,
    ternary_serial,
)
from .operands import as_operand, run3, shape_of
from .vmath import vexp, vlog
from .vmath_act import vgelu_tanh, vsigmoid, vtanh
from .vmath_erf import verf, vgelu
from .vmath_pow import vpowf
from .vmath_trig import NEAR, vcos, vcos_near, vsin, vsin_near

CHUNK = 8192
Scalar = int | float
ArrayOrScalar = np.ndarray | Scalar
_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))

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
#: vectorizes too (in float32; their float64 forms call libm where that is as fast).
_VMATH = (EXP, SIGMOID, LOG, TANH, ERF, GELU, GELU_TANH)


@njit(inline="always", **JIT_EW)
def _un_vmath(op, v):
    if op == EXP:
        return vexp(v)
    if op == LOG:
        return vlog(v)
    if op == TANH:
        return vtanh(v)
    if op == ERF:
        return verf(v)
    if op == GELU:
        return vgelu(v)
    if op == GELU_TANH:
        return vgelu_tanh(v)
    return vsigmoid(v)  # SIGMOID


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


@njit(**JIT_EW)
def _unary_chunk(x, out, op, lo, hi):
    # Separate loops: the ops LLVM can vectorize (arithmetic, compares, rounding; the vmath
    # functions; sin/cos with their fix-up) and the ones that call libm one value at a time
    # (log1p, expm1). In one loop the eighteen-way branch kept even ReLU scalar (measured:
    # relu over [128, 256] 22 us, NumPy 6 us).
    xs = x[lo:hi]
    os = out[lo:hi]
    if op in _CHEAP:
        _cheap_rows(xs, os, op)
    elif op in _VMATH:
        _vmath_rows(xs, os, op)
    elif op == SIN or op == COS:
        _trig_rows(xs, os, op)
    else:
        _libm_rows(xs, os, op)


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
    if x.dtype in _FLOATS and x.flags.c_contiguous:  # the common case, in the fewest steps
        out = np.empty(x.shape, x.dtype)
        n = out.size
        if n:
            (unary_parallel if n >= PARALLEL_MIN_ELEMS else unary_serial)(x.reshape(n), out.reshape(n), code)
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
        kernel = unary_parallel if xc.size >= PARALLEL_MIN_ELEMS else unary_serial
        kernel(xc.reshape(-1), out.reshape(-1), code)
    return out if cdt == x.dtype else out.astype(x.dtype)


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


def relu_backward(output: np.ndarray, grad: np.ndarray) -> np.ndarray | None:
    """ReLU's gradient: ``grad`` where ``output > 0`` (or NaN), else 0, in grad's dtype; one
    kernel pass. None unless both are C-contiguous float32/float64 arrays of one shape and
    dtype (the caller then runs the two-op default, which broadcasts and casts)."""
    dt = grad.dtype
    if (output.dtype is not dt or dt not in _FLOATS or output.shape != grad.shape
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
