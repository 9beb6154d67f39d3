"""Element-wise kernels over broadcast operands: the binary ops (``add`` ... ``minimum``), the
ternary ones (``where``, ``clamp``, the fused ``relu(c * a + b)``), and the machinery they share
with the comparisons of :mod:`.elementwise` and the array form of :func:`.unary.relu_affine`.

Mirrors burn-flex's ``ops/binary.rs`` (``float_add`` ... ``float_powf``, integer division)
and the broadcasting behind ``float_mask_where`` and ``float_clamp``.

Broadcasting: the wrapper broadcasts every operand to the output shape (zero strides, no
copy), then merges adjacent dimensions wherever all operands allow it
(:func:`._common.merge_dims`): same-shape operands collapse to one dimension, a bias row to
two, a per-channel scale of an NCHW tensor to three. The kernels take 3-D views (the rare case
that stays above three dimensions is copied first) and run an inner loop over the last one;
LLVM versions that loop for unit strides, so the common cases vectorize and a stride-0 operand
still works. One kernel per family, the op a named integer constant (``ADD``, ``WHERE``, ...:
module-level ints are compile-time constants to numba): a branch on a loop-invariant value,
which LLVM hoists out of the loop (measured: same speed as a dedicated loop).

Float16 is computed in float32 and cast back (numba has no f16 arithmetic). Above
``PARALLEL_MIN_ELEMS`` elements the work is split in chunks over threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from ._common import JIT_EW, PARALLEL_MIN_ELEMS, compute_dtype, merge_dims

CHUNK = 8192  # elements of the last dimension per parallel task

# The binary kernel's ops
ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM = range(7)
BINARY_OPS = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW, "maximum": MAXIMUM,
              "minimum": MINIMUM}  # fmt: skip
# The ternary kernel's ops, on operands (c, a, b)
WHERE, RELU_AFFINE, CLAMP = range(3)

Scalar = int | float
ArrayOrScalar = np.ndarray | Scalar


# ---------------------------------------------------------------------------------------------
# Scalar ops (inlined into the loops)
# ---------------------------------------------------------------------------------------------


def _div(x, y):
    """x / y; for integers truncating toward zero, as Rust's ``/`` (burn's ``int_div``)."""


@overload(_div, jit_options={"inline": "always"})
def _div_impl(x, y):
    # Chosen when the kernel is typed, so an integer kernel never promotes to float.
    if isinstance(x, types.Integer):

        def int_div(x, y):
            if y == 0:
                return x * 0
            q = x // y
            if (x % y != 0) and ((x < 0) != (y < 0)):
                q += 1
            return q

        return int_div
    return lambda x, y: x / y


@njit(inline="always", **JIT_EW)
def _bin(op, x, y):
    if op == ADD:
        return x + y
    if op == SUB:
        return x - y
    if op == MUL:
        return x * y
    if op == DIV:
        return _div(x, y)
    if op == POW:
        return x**y
    if op == MAXIMUM:
        # NaN-propagating maximum, like torch.maximum / np.maximum
        return x if (x > y or x != x) else y
    # MINIMUM
    return x if (x < y or x != x) else y


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
        orow[j] = _bin(op, ar[j], br[j])


@njit(**JIT_EW)
def _rows_vs(op, ar, y, orow):
    for j in range(orow.shape[0]):
        orow[j] = _bin(op, ar[j], y)


@njit(**JIT_EW)
def _rows_sv(op, x, br, orow):
    for j in range(orow.shape[0]):
        orow[j] = _bin(op, x, br[j])


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
        orow[:] = _bin(op, ar[0], br[0])
    else:
        _rows_vv(op, ar, br, orow)


@njit(**JIT_EW)
def binary_serial(a, b, out, op):
    """out = a <op> b over 3-D views (a, b broadcast to out's shape); ``op`` from BINARY_OPS."""
    nch = (out.shape[2] + CHUNK - 1) // CHUNK
    for t in range(out.shape[0] * out.shape[1] * nch):
        _binary_task(a, b, out, op, t, nch)


@njit(**JIT_EW)
def binary_same(a, b, out, op):
    """out = a <op> b for arrays of one shape, any rank and layout (``out`` C-contiguous): the
    small-work path of :func:`binary`.

    numba compiles a version per array type: a C-contiguous operand's ``ravel`` is a view,
    another layout's a copy (small work only). Taking the arrays as they are saves the three
    reshapes to 3-D of :func:`binary_serial`, which cost more than the loop on a 4x4 add."""
    _rows_vv(op, a.ravel(), b.ravel(), out.ravel())


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


# ---------------------------------------------------------------------------------------------
# Broadcasting: 3-D views with merged dimensions
# ---------------------------------------------------------------------------------------------


def _views3(shape: tuple[int, ...], arrays: list[np.ndarray]):
    """``(shape3, views)``: each array viewed as 3-D (broadcast to ``shape``, dims merged where
    all allow it; a single value stays [1, 1, 1]), and the 3-D shape of the output."""
    n = 1
    for s in shape:
        n *= s
    if all((a.shape == shape and a.flags.c_contiguous) or a.size == 1 for a in arrays):
        # The common cases, in about a microsecond: same-shape operands and single values
        # (the kernels broadcast size-1 axes themselves).
        return (1, 1, n), [a.reshape(1, 1, n) if a.shape == shape else a.reshape(1, 1, 1) for a in arrays]
    if len(shape) <= 3 and all(a.ndim <= 3 and a.flags.c_contiguous for a in arrays):
        # Up to three dims (a bias row, a per-row scale): each operand padded in front to 3-D,
        # a reshape; the kernels broadcast its size-1 dims themselves. merge_dims would find
        # no fewer dims here and costs several microseconds.
        return (1,) * (3 - len(shape)) + shape, [a.reshape((1,) * (3 - a.ndim) + a.shape) for a in arrays]
    if all(a.flags.c_contiguous for a in arrays):
        # Strides straight from the shapes: no broadcast views built on the way (np.broadcast_to
        # costs about 2.5 us an array; one np.ndarray over the operand's buffer about 0.25 us).
        merged = merge_dims(shape, [_Strides(_broadcast_strides(a, shape)) for a in arrays])
        if merged is not None:
            shape3 = tuple(merged[0])
            return shape3, [_view(a, shape3, st) for a, st in zip(arrays, merged[1])]
    views = [np.broadcast_to(a, shape) for a in arrays]
    merged = merge_dims(shape, views)
    if merged is None:
        # Too many distinct stride patterns: materialize, then everything is one flat dimension.
        return (1, 1, n), [np.ascontiguousarray(v).reshape(1, 1, n) for v in views]
    shape3 = tuple(merged[0])
    # The merge rule is NumPy's own, so these reshapes are views, never copies.
    return shape3, [v.reshape(shape3) for v in views]


class _Strides:
    """What ``merge_dims`` reads of an array: its strides (here those of its broadcast view)."""

    __slots__ = ("strides",)

    def __init__(self, strides: tuple[int, ...]):
        self.strides = strides


def _broadcast_strides(a: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    # NumPy's broadcasting rule: missing leading dims and size-1 dims get stride 0
    pad = len(shape) - a.ndim
    return (0,) * pad + tuple(0 if n == 1 else st for n, st in zip(a.shape, a.strides))


def _view(a: np.ndarray, shape3: tuple[int, ...], strides3) -> np.ndarray:
    # A broadcast (stride-0) dim is given size 1, which the kernels broadcast themselves
    # (`row_of`): a bias row then stays C-contiguous, so numba types it 'C' and the row loop
    # vectorizes (a stride-0 view is typed 'A': a [128, 256] + [256] add ran 3x slower).
    # Read-only, like np.broadcast_to's views, so numba sees the same array type as before.
    shape = tuple([1 if st == 0 else n for n, st in zip(shape3, strides3)])
    v = np.ndarray(shape, a.dtype, a, 0, tuple(strides3))
    v.flags.writeable = False
    return v


def _broadcast_pair(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two shapes of one rank (NumPy's rule; ValueError when they clash)."""
    out = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"operands could not be broadcast together with shapes {sa} {sb}")
        out.append(x if y == 1 else y)
    return tuple(out)


def shape_of(*arrays: np.ndarray) -> tuple[int, ...]:
    """The broadcast shape of ``arrays`` (fast when they all have one shape)."""
    first = arrays[0].shape
    if all(a.shape == first for a in arrays):
        return first
    # NumPy's rule, in Python: np.broadcast_shapes builds arrays to find it (about 3 us)
    rank = max(a.ndim for a in arrays)
    out = [1] * rank
    for a in arrays:
        for i, n in enumerate(a.shape, rank - a.ndim):
            if n != 1:
                if out[i] not in (1, n):
                    raise ValueError(f"operands could not be broadcast together with shapes "
                                     f"{' '.join(str(x.shape) for x in arrays)}")
                out[i] = n
    return tuple(out)


def as_operand(x: ArrayOrScalar, dtype: np.dtype) -> np.ndarray:
    """``x`` as an array of ``dtype`` (no copy when it already is one)."""
    if isinstance(x, np.ndarray) and x.dtype == dtype:
        return x
    return np.asarray(x, dtype=dtype)


def result_dtype(a: ArrayOrScalar, b: ArrayOrScalar) -> np.dtype:
    """The dtype of ``a <op> b``: a Python scalar takes the array's dtype (as torch and burn
    do); two arrays promote."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype:
        return a.dtype
    if not isinstance(a, np.ndarray):
        return np.asarray(b).dtype if isinstance(b, np.ndarray) else np.result_type(a, b)
    if not isinstance(b, np.ndarray):
        return a.dtype
    return np.result_type(a.dtype, b.dtype)


def run3(serial, parallel, arrays: list[np.ndarray], out: np.ndarray, *extra) -> np.ndarray:
    """Run a 3-D kernel pair over ``arrays`` broadcast to ``out`` (serial below
    ``PARALLEL_MIN_ELEMS``), with ``extra`` arguments (the op) after ``out``."""
    if out.size == 0:
        return out
    shape3, views = _views3(out.shape, arrays)
    out3 = out.reshape(shape3)
    (parallel if out.size >= PARALLEL_MIN_ELEMS else serial)(*views, out3, *extra)
    return out


#: The dtypes numba computes in directly (float16 goes through float32), as dtype objects:
#: NumPy's builtin dtypes are singletons, so ``a.dtype is b.dtype`` is the cheap equality test.
_NATIVE = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def fast_pair(a, b) -> bool:
    """Same shape and the same native dtype, both C-contiguous: the tiny-op path.

    Ordered cheapest first: this test runs on every binary op, and on a 4x4 add it used to
    cost as much as the kernel."""
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape
            and a.dtype is b.dtype and a.dtype in _NATIVE and a.flags.c_contiguous
            and b.flags.c_contiguous)


def binary(op: str, a: ArrayOrScalar, b: ArrayOrScalar) -> np.ndarray:
    """``a <op> b`` with NumPy broadcasting; op in add, sub, mul, div, pow, maximum, minimum.

    Integer ``div`` truncates toward zero (Rust's and burn's integer division).
    """
    code = BINARY_OPS[op]
    # Two arrays of one shape and native dtype: the tiny-op path, tested cheapest first (a 4x4
    # add spends more time in these tests than in its loop). Small work runs `binary_same` on
    # the arrays as they are (numba sees their layout); large contiguous work goes parallel.
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype and a.dtype in _NATIVE:
        if a.shape == b.shape:
            n = a.size
            if n < PARALLEL_MIN_ELEMS:
                out = np.empty(a.shape, a.dtype)
                binary_same(a, b, out, code)
                return out
            if a.flags.c_contiguous and b.flags.c_contiguous:
                out = np.empty(a.shape, a.dtype)
                binary_parallel(a.reshape(1, 1, n), b.reshape(1, 1, n), out.reshape(1, 1, n), code)
                return out
        elif a.ndim == b.ndim <= 3 and a.flags.c_contiguous and b.flags.c_contiguous:
            # one rank (the Tensor layer's rule), up to three dims: padded in front to 3-D, the
            # kernel broadcasts the size-1 dims (a [batch, 1] max subtracted from the logits)
            out = np.empty(_broadcast_pair(a.shape, b.shape), a.dtype)
            pad = (1,) * (3 - a.ndim)
            kernel = binary_parallel if out.size >= PARALLEL_MIN_ELEMS else binary_serial
            kernel(a.reshape(pad + a.shape), b.reshape(pad + b.shape), out.reshape(pad + out.shape), code)
            return out
    elif (type(a) is np.ndarray and isinstance(b, (int, float)) and a.dtype in _NATIVE
            and a.size < PARALLEL_MIN_ELEMS):
        # array <op> Python number (x * lr, x + 1): the number takes the array's dtype
        out = np.empty(a.shape, a.dtype)
        binary_array_scalar(a, a.dtype.type(b), out, code)
        return out
    dtype = result_dtype(a, b)
    cdt = compute_dtype(dtype)
    av, bv = as_operand(a, cdt), as_operand(b, cdt)
    out = np.empty(shape_of(av, bv), cdt)
    run3(binary_serial, binary_parallel, [av, bv], out, code)
    return out.astype(dtype, copy=False)


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
