"""Element-wise kernels over broadcast operands: the binary ops (``add`` ... ``minimum``), the
ternary ones (``where``, ``clamp``, the fused ``relu(c * a + b)``), and the row machinery they
share with the comparisons of :mod:`.elementwise` and the array form of :func:`.unary.relu_affine`.

Mirrors burn-flex's ``ops/binary.rs`` (``float_add`` ... ``float_powf``, integer division)
and the broadcasting behind ``float_mask_where`` and ``float_clamp``.

The kernels take 3-D views (built by :mod:`.operands`, no copy) and run over rows of the last
dimension, broadcasting size-1 dims themselves. Each row loop is a small function of its own
(``_rows_vv``, ``_rows_vs``, ...), so LLVM vectorizes it and hoists the op's branch out of it;
the op is a named integer constant (``ADD``, ``WHERE``, ...: module-level ints are
compile-time constants to numba). Two small arrays of one shape skip the views:
``binary_same_shape`` takes them as they are.

Float16 is computed in float32 and cast back (numba has no f16 arithmetic). Above
``PARALLEL_MIN_ELEMS`` elements the work is split in chunks over threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import overload

from ._common import JIT_EW, PARALLEL_MIN_ELEMS, aligned_empty, compute_dtype
from .binops import ADD, BINARY_OPS, DIV, MAXIMUM, MINIMUM, MUL, POW, SUB, apply_binary  # noqa: F401
from .broadcast_rows import column_binary, small_broadcast, stat_broadcast, unexpand
from .operands import (
    NATIVE_DTYPES,
    ArrayOrScalar,
    as_operand,
    broadcast_pair,
    result_dtype,
    run3,
    shape_of,
)

# Imported above: the binary kernel's ops and the scalar op itself (binops.py, re-exported),
# and the one-loop-nest paths for small broadcasts (broadcast_rows.py).
CHUNK = 8192  # elements of the last dimension per parallel task

WHERE, RELU_AFFINE, CLAMP = range(3)  # the ternary kernel's ops, on operands (c, a, b)


# ---------------------------------------------------------------------------------------------
# Tasks over 3-D views: task t = (row i0, row i1, chunk of the last dimension)
# ---------------------------------------------------------------------------------------------


@njit(inline="always", **JIT_EW)
def locate(shape, t, nch):
    """Task ``t`` of a 3-D output with ``nch`` chunks per row: ``(i0, i1, lo, hi)``."""
    d1 = shape[1]
    row = t // nch
    lo = (t - row * nch) * CHUNK
    i0 = row // d1
    return i0, row - i0 * d1, lo, min(lo + CHUNK, shape[2])


@njit(inline="always", **JIT_EW)
def row_of(x, i0, i1, lo, hi):
    """Row (i0, i1) of a 3-D operand, chunk lo..hi; size-1 axes broadcast. Returns the slice
    and whether it is a single value (size-1 last axis, or a stride-0 broadcast view)."""
    r = x[i0 if x.shape[0] > 1 else 0, i1 if x.shape[1] > 1 else 0]
    if r.shape[0] == 1:
        return r[0:1], True
    return r[lo:hi], r.strides[0] == 0


# The loops over one chunk of a row. Each is its own small (not inlined) function: with all four
# loops of a task and the seven-way ``op`` branch in one body, LLVM neither hoisted the branch
# nor vectorized a single loop (measured on AVX-512: a scalar multiply of 200K floats 99 us
# before, 19 us so split). Loops run over slices from 0: an index that may be negative makes
# numba add a wraparound check per access, and that alone stops LLVM from vectorizing.


@njit(**JIT_EW)
def _rows_vv(op, ar, br, orow):
    for j in range(orow.shape[0]):
        orow[j] = apply_binary(op, ar[j], br[j])


@njit(**JIT_EW)
def _rows_vs(op, ar, y, orow):
    for j in range(orow.shape[0]):
        orow[j] = apply_binary(op, ar[j], y)


@njit(**JIT_EW)
def _rows_sv(op, x, br, orow):
    for j in range(orow.shape[0]):
        orow[j] = apply_binary(op, x, br[j])


@njit(**JIT_EW)
def _binary_task(a, b, out, op, t, nch):
    i0, i1, lo, hi = locate(out.shape, t, nch)
    ar, a_one = row_of(a, i0, i1, lo, hi)
    br, b_one = row_of(b, i0, i1, lo, hi)
    orow = out[i0, i1, lo:hi]
    if b_one and not a_one:
        _rows_vs(op, ar, br[0], orow)
    elif a_one and not b_one:
        _rows_sv(op, ar[0], br, orow)
    elif a_one:
        orow[:] = apply_binary(op, ar[0], br[0])
    else:
        _rows_vv(op, ar, br, orow)


@njit(**JIT_EW)
def binary_serial(a, b, out, op):
    """out = a <op> b over 3-D views (a, b broadcast to out's shape); ``op`` from BINARY_OPS."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in range(out.shape[0] * out.shape[1] * nch):
        _binary_task(a, b, out, op, t, nch)


@njit(**JIT_EW)
def binary_same_shape(a, b, out, op):
    """out = a <op> b for arrays of one shape, any rank and layout (``out`` C-contiguous, of
    ``a``'s shape): the small-work path of :func:`binary`. When ``b``'s shape differs it is
    ``stat_broadcast`` (``b`` a column or per-channel statistic of ``a``), which returns
    False, computing nothing, for any other broadcast (operands of one rank).

    numba compiles a version per array type: a C-contiguous operand's ``ravel`` is a view,
    another layout's a copy (small work only). Taking the arrays as they are saves the three
    reshapes to 3-D of :func:`binary_serial`, which cost more than the loop on a 4x4 add; the
    shapes are compared here, where it costs nanoseconds (in Python, reading and comparing two
    ``shape`` tuples cost 0.16 us of a 4x4 add's 2.1)."""
    if a.shape != b.shape:
        return stat_broadcast(a, b, out, op)
    if not _expanded_column(a, b, out, op):
        _rows_vv(op, a.ravel(), b.ravel(), out.ravel())
    return True


def _expanded_column(a, b, out, op):
    """Whether ``binary_same_shape`` computed ``out`` from an operand that is a column
    ``expand()``ed along the last dim (stride 0 there, an autodiff mean's gradient) beside a
    C-contiguous one, by :func:`.broadcast_rows.column_binary` over its column (``ravel``
    copied the whole expanded operand, an element at a time). False, computing nothing,
    otherwise."""


@overload(_expanded_column, jit_options={"error_model": "numpy", "fastmath": {"contract"}})
def _expanded_column_impl(a, b, out, op):
    if a.ndim < 2:  # chosen by the types: a column needs two dims
        return lambda a, b, out, op: False

    def impl(a, b, out, op):
        nd = a.ndim
        n = a.shape[nd - 1]
        if n < 2:
            return False
        if a.strides[nd - 1] == 0 and b.flags.c_contiguous and not a.flags.c_contiguous:
            column_binary(op, a[..., 0].ravel(), b.ravel(), out.ravel(), n, True)
            return True
        if b.strides[nd - 1] == 0 and a.flags.c_contiguous and not b.flags.c_contiguous:
            column_binary(op, b[..., 0].ravel(), a.ravel(), out.ravel(), n, False)
            return True
        return False

    return impl


@njit(**JIT_EW)
def binary_array_scalar(a, y, out, op):
    """out = a <op> y for an array of any rank and layout and a scalar of its dtype: the
    small-work path of :func:`binary` for ``x * 0.5``, ``x + 1``."""
    _rows_vs(op, a.ravel(), y, out.ravel())


@njit(parallel=True, **JIT_EW)
def binary_parallel(a, b, out, op):
    """``binary_serial`` with the chunks spread over threads."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in prange(out.shape[0] * out.shape[1] * nch):
        _binary_task(a, b, out, op, t, nch)


@njit(**JIT_EW)
def _where_rows(cr, sc, ar, sa, br, sb, orow):
    # Both values are loaded before the choice, so it compiles to a blend, not a branch: a
    # random mask (ReLU's backward) mispredicted every other element (3 ns each, measured).
    n = orow.shape[0]
    if sc == 1 and sb == 1 and sa == 0:  # mask_fill: where(mask, value, tensor)
        x = ar[0]
        for j in range(n):
            y = br[j]
            orow[j] = x if cr[j] else y
    elif sc == 1 and sa == 1 and sb == 1:
        for j in range(n):
            x = ar[j]
            y = br[j]
            orow[j] = x if cr[j] else y
    else:
        for j in range(n):
            x = ar[j * sa]
            y = br[j * sb]
            orow[j] = x if cr[j * sc] else y


@njit(**JIT_EW)
def _relu_affine_rows(cr, sc, ar, sa, br, sb, orow):
    for j in range(orow.shape[0]):
        v = cr[j * sc] * ar[j * sa] + br[j * sb]
        orow[j] = np.float32(0) if v < 0 else v  # NaN and -0.0 stay, as torch


@njit(**JIT_EW)
def _clamp_rows(cr, sc, ar, sa, br, sb, orow):
    for j in range(orow.shape[0]):
        v = cr[j * sc]
        lo_v = ar[j * sa]
        hi_v = br[j * sb]
        v = lo_v if v < lo_v else v
        orow[j] = hi_v if v > hi_v else v


@njit(**JIT_EW)
def _ternary_task(c, a, b, out, op, t, nch):
    # A size-1 operand is read at index 0 (stride 0).
    i0, i1, lo, hi = locate(out.shape, t, nch)
    cr, c_one = row_of(c, i0, i1, lo, hi)
    ar, a_one = row_of(a, i0, i1, lo, hi)
    br, b_one = row_of(b, i0, i1, lo, hi)
    sc = 0 if c_one else 1
    sa = 0 if a_one else 1
    sb = 0 if b_one else 1
    orow = out[i0, i1, lo:hi]
    if op == WHERE:  # where(c, a, b)
        _where_rows(cr, sc, ar, sa, br, sb, orow)
    elif op == RELU_AFFINE:  # relu(c * a + b)
        _relu_affine_rows(cr, sc, ar, sa, br, sb, orow)
    else:  # CLAMP: clamp(c, a, b)
        _clamp_rows(cr, sc, ar, sa, br, sb, orow)


@njit(**JIT_EW)
def ternary_serial(c, a, b, out, op):
    """where(c, a, b) (WHERE), relu(c*a + b) (RELU_AFFINE) or clamp(c, a, b) (CLAMP) over 3-D
    views."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in range(out.shape[0] * out.shape[1] * nch):
        _ternary_task(c, a, b, out, op, t, nch)


@njit(parallel=True, **JIT_EW)
def ternary_parallel(c, a, b, out, op):
    """``ternary_serial`` with the chunks spread over threads."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in prange(out.shape[0] * out.shape[1] * nch):
        _ternary_task(c, a, b, out, op, t, nch)


_F32 = np.dtype(np.float32)  # an identity test is cheaper than hashing a dtype into a set
_NDARRAY, _EMPTY = np.ndarray, np.empty  # a global read, not a global and an attribute (tiny path)


def binary(op: str, a: ArrayOrScalar, b: ArrayOrScalar, lhs_dtype: bool = False) -> np.ndarray:
    """``a <op> b`` with NumPy broadcasting; op in add, sub, mul, div, pow, maximum, minimum.

    The result has NumPy's promoted dtype, or ``a``'s with ``lhs_dtype`` (a float op of Flex:
    mixed dtypes give lhs's, as burn). Integer ``div`` truncates toward zero (Rust's and
    burn's integer division).

    Only the last block (the general path: promote, broadcast to 3-D views, ``run3``) is
    needed for correctness. Everything before it is a **speed trick**, each one shaped by a
    call that an MLP training step makes, each giving the same result as the general path:

    1. same shape, small: ``binary_same_shape`` on the arrays as they are (the tiny-op path;
       its ``stat_broadcast`` also takes a column or per-channel statistic on the right, never
       a row: a bias row ``[1, n]`` falls through to path 3);
    2. same shape, large and contiguous: ``binary_parallel`` into a cache-line-aligned output;
    0. an ``expand``ed view (stride 0) is first taken as the small array it repeats;
    3. a small statistic over a small array of one rank, ``small_broadcast``: a bias row
       ``[1, n]`` (``binary_row``), a per-row column ``[m, 1, 1]``, a per-channel
       ``[1, C, 1, 1]`` (BatchNorm), the statistic on either side: one loop nest;
    4. one rank up to 3-D, contiguous: padded in front, size-1 dims broadcast by the kernel;
    5. array and Python number, small: ``binary_array_scalar``;
    6. array and Python number, large and contiguous: ``binary_parallel`` with a 1-element
       operand (the optimizer's ``grad * lr``).
    """
    # 1. first, before any flag is read: two small arrays of one rank and one native dtype,
    # the shapes compared by the kernel (`binary_same_shape`, any layout, an expanded view
    # included; a column or per-channel statistic on the right, such as BatchNorm's
    # [1, C, 1, 1], is computed by that kernel, ahead of path 3; any other broadcast, a bias
    # row [1, n] included, returns False at once and falls through having allocated a small
    # `out` for nothing). A 4x4 add spent 1.01 us in this function with the shapes compared
    # here, 0.85 us so, against 0.70 us for its np.empty and kernel call alone (one thread's
    # CPU time, Zen 4).
    if type(a) is _NDARRAY and type(b) is _NDARRAY:
        if ((dtype := a.dtype) is b.dtype and a.size < PARALLEL_MIN_ELEMS
                and (dtype is _F32 or dtype in NATIVE_DTYPES) and a.ndim == b.ndim):
            out = _EMPTY(a.shape, dtype)
            if binary_same_shape(a, b, out, BINARY_OPS[op]):
                return out
    code = BINARY_OPS[op]
    if type(a) is np.ndarray and type(b) is np.ndarray and not (a.flags.c_contiguous and b.flags.c_contiguous):
        a, b = _unexpanded(a, b)
    # Two arrays of one shape and native dtype: the tiny-op path, tested cheapest first (a 4x4
    # add spends more time in these tests than in its loop, so each attribute is read once).
    # Small work runs `binary_same_shape` on the arrays as they are (numba sees their layout); large
    # contiguous work goes parallel.
    if type(a) is np.ndarray and type(b) is np.ndarray and (dtype := a.dtype) is b.dtype and dtype in NATIVE_DTYPES:
        if (shape := a.shape) == b.shape:
            n = a.size
            if n < PARALLEL_MIN_ELEMS:
                out = np.empty(shape, dtype)
                binary_same_shape(a, b, out, code)
                return out
            if a.flags.c_contiguous and b.flags.c_contiguous:
                # on a cache line: an optimizer's `w - lr * g` makes the next Linear weight here,
                # and the gemm reads a weight's rows in place (x @ W1 of the MLP, 1 thread:
                # 258 us aligned vs 279 us at NumPy's usual 16 bytes past a line)
                out = aligned_empty(a.shape, a.dtype)
                binary_parallel(a.reshape(1, 1, n), b.reshape(1, 1, n), out.reshape(1, 1, n), code)
                return out
        elif (a.ndim == b.ndim >= 2 and a.flags.c_contiguous and b.flags.c_contiguous
              and (out := small_broadcast(code, a, b)) is not None):
            # a small statistic over a small array: a bias row [1, n], a per-row column
            # [m, 1, 1], a per-channel [1, C, 1, 1] (broadcast_rows.py), one loop nest
            return out
        elif a.ndim == b.ndim <= 3 and a.flags.c_contiguous and b.flags.c_contiguous:
            # one rank (the Tensor layer's rule), up to three dims: padded in front to 3-D, the
            # kernel broadcasts the size-1 dims (a [batch, 1] max subtracted from the logits)
            out = np.empty(broadcast_pair(a.shape, b.shape), a.dtype)
            pad = (1,) * (3 - a.ndim)
            kernel = binary_parallel if out.size >= PARALLEL_MIN_ELEMS else binary_serial
            kernel(a.reshape(pad + a.shape), b.reshape(pad + b.shape), out.reshape(pad + out.shape), code)
            return out
    elif type(a) is np.ndarray and isinstance(b, (int, float)) and a.dtype in NATIVE_DTYPES:
        # array <op> Python number (x * lr, x + 1): the number takes the array's dtype
        n = a.size
        if n < PARALLEL_MIN_ELEMS:
            out = np.empty(a.shape, a.dtype)
            binary_array_scalar(a, a.dtype.type(b), out, code)
            return out
        if a.flags.c_contiguous:
            # SGD's grad * lr on a [784, 256] weight: the general path's views skipped. (A flat
            # parallel array-scalar kernel of its own measured as fast alone but doubled this op
            # and the sub after it inside the MLP step, 2 threads: 50 -> 110 us each.)
            out = np.empty(a.shape, a.dtype)
            y = np.full((1, 1, 1), a.dtype.type(b))  # the number in the array's dtype, as above
            binary_parallel(a.reshape(1, 1, n), y, out.reshape(1, 1, n), code)
            return out
    # the general path; every path above gives a's dtype already
    dtype = result_dtype(a, b)
    cdt = compute_dtype(dtype)
    av, bv = as_operand(a, cdt), as_operand(b, cdt)
    out = np.empty(shape_of(av, bv), cdt)
    run3(binary_serial, binary_parallel, [av, bv], out, code)
    return out.astype(a.dtype if lhs_dtype else dtype, copy=False)


def _unexpanded(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` with an ``expand()``ed view taken as the small array it repeats, as far as
    the result keeps its shape (two views of one small array keep one of them whole)."""
    ua, ub = unexpand(a), unexpand(b)
    if (ua is a and ub is b) or a.ndim != b.ndim:
        return a, b
    full = broadcast_pair(a.shape, b.shape)
    for pair in ((ua, ub), (ua, b), (a, ub)):
        if broadcast_pair(pair[0].shape, pair[1].shape) == full:
            return pair
    return a, b


def where(mask: np.ndarray, a: ArrayOrScalar, b: ArrayOrScalar) -> np.ndarray:
    """``a`` where ``mask`` is true, else ``b``; all three broadcast together."""
    dtype = result_dtype(a, b)
    cdt = compute_dtype(dtype)
    m = np.asarray(mask, dtype=np.bool_)
    av, bv = as_operand(a, cdt), as_operand(b, cdt)
    out = np.empty(shape_of(m, av, bv), cdt)
    run3(ternary_serial, ternary_parallel, [m, av, bv], out, WHERE)
    return out.astype(dtype, copy=False)


def clamp(x: np.ndarray, lo: ArrayOrScalar, hi: ArrayOrScalar) -> np.ndarray:
    """``min(max(x, lo), hi)`` element-wise (NaN stays NaN); bounds broadcast against x."""
    cdt = compute_dtype(x.dtype)
    out = np.empty(x.shape, cdt)
    operands = [x.astype(cdt, copy=False), as_operand(lo, cdt), as_operand(hi, cdt)]
    run3(ternary_serial, ternary_parallel, operands, out, CLAMP)
    return out.astype(x.dtype, copy=False)
