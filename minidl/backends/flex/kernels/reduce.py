"""Reductions along one dimension (kept, as burn's ``*_dim`` ops keep it) and over the whole
tensor (a shape ``(1,)`` result, as burn returns it): sum, mean, prod, max, min, argmax,
argmin, var (biased or unbiased).

Mirrors burn-flex's ``float_sum``/``float_sum_dim``, ``float_mean_dim``, ``float_prod``,
``float_max_dim``/``float_min_dim`` (+ ``_with_indices``), ``float_argmax``/``argmin`` and the
``var`` used by ``batch_norm`` and ``layer_norm`` defaults.

The array is viewed as [outer, n, inner], n the reduced dimension:

* ``inner == 1`` (the last dimension, or the whole tensor): each row is contiguous, the loop
  is a reduction and ``fastmath`` ``reassoc`` lets it vectorize. A whole tensor is cut into
  rows first so both threads get work, and the row results are reduced again;
* ``inner > 1``: the [n, inner] slab is reduced into an [inner] row, the vectorized loop runs
  along ``inner`` (contiguous), the reduction is the outer loop.

``var`` is two passes (mean, then the mean of squared deviations), the form burn's defaults
use. max/min propagate NaN (as torch); argmax/argmin return the first extreme position, or
the first NaN.
"""

from __future__ import annotations

import functools
import math

# This module's public names sum/max/min shadow the builtins: the kernels below never call
# those builtins (numba would find the wrappers instead).
import numpy as np
from numba import njit, prange

from ._common import FLOATS, JIT, JIT_FAST, PARALLEL_MIN_ELEMS, compute_dtype
from .reduce_rows import (
    ARGMAX,
    ARGMIN,
    divide_rows,
    extreme_rows_parallel,
    extreme_rows_serial,
    row_sums,
)

SUM, PROD, MAX, MIN, SQDEV = 0, 1, 2, 3, 4
ROW_CHUNK = 1 << 16  # whole-tensor reductions: elements per partial


@njit(inline="always", **JIT_FAST)
def _row(r, op, zero, c):
    n = r.shape[0]
    if op == SUM:
        s = zero
        for j in range(n):
            s += r[j]
        return s
    if op == PROD:
        s = zero + 1
        for j in range(n):
            s *= r[j]
        return s
    if op == SQDEV:
        s = zero
        for j in range(n):
            d = r[j] - c
            s += d * d
        return s
    m = r[0]
    if op == MAX:
        for j in range(n):
            v = r[j]
            m = v if (v > m or v != v) else m
    else:
        for j in range(n):
            v = r[j]
            m = v if (v < m or v != v) else m
    return m


@njit(**JIT_FAST)
def row_reduce_serial(x, out, op, zero, centers):
    """out[i] = reduce(x[i, :]) for x [rows, n]; op SUM, PROD, MAX, MIN, or SQDEV (sum of
    squared deviations from ``centers[i]``)."""
    for i in range(x.shape[0]):
        out[i] = _row(x[i], op, zero, centers[i] if centers.shape[0] else zero)


@njit(parallel=True, **JIT_FAST)
def row_reduce_parallel(x, out, op, zero, centers):
    """``row_reduce_serial`` with rows spread over threads."""
    for i in prange(x.shape[0]):
        out[i] = _row(x[i], op, zero, centers[i] if centers.shape[0] else zero)


@njit(**JIT_FAST)
def _col_task(x, out, op, zero, centers, o, lo, hi):
    # out[o, lo:hi] = reduce over a of x[o, a, lo:hi]
    acc = out[o, lo:hi]
    w = acc.shape[0]
    c = centers[o, lo:hi] if centers.shape[0] else acc
    first = x[o, 0, lo:hi]
    for k in range(w):
        if op == SUM or op == SQDEV:
            acc[k] = zero
        elif op == PROD:
            acc[k] = zero + 1
        else:
            acc[k] = first[k]
    for a in range(x.shape[1]):
        r = x[o, a, lo:hi]
        if op == SUM:
            for k in range(w):
                acc[k] += r[k]
        elif op == PROD:
            for k in range(w):
                acc[k] *= r[k]
        elif op == SQDEV:
            for k in range(w):
                d = r[k] - c[k]
                acc[k] += d * d
        elif op == MAX:
            for k in range(w):
                v = r[k]
                acc[k] = v if (v > acc[k] or v != v) else acc[k]
        else:
            for k in range(w):
                v = r[k]
                acc[k] = v if (v < acc[k] or v != v) else acc[k]


@njit(**JIT_FAST)
def col_reduce_serial(x, out, op, zero, centers):
    """out[o, k] = reduce over a of x[o, a, k] for x [outer, n, inner]; ops as the row form
    (``centers`` [outer, inner] for SQDEV, else empty)."""
    for o in range(x.shape[0]):
        _col_task(x, out, op, zero, centers, o, 0, x.shape[2])


@njit(**JIT)  # not JIT_FAST: see ``row_sums``
def col_sum_serial(x, out, zero, centers, count):
    """``col_reduce_serial``'s sum, then each result divided by ``count`` unless it is 0 (a
    mean: one kernel call where a sum and NumPy's divide were two)."""
    col_reduce_serial(x, out, SUM, zero, centers)
    if count:
        divide_rows(out.ravel(), count)


@njit(parallel=True, **JIT_FAST)
def col_reduce_parallel(x, out, op, zero, centers):
    """``col_reduce_serial`` with (outer row, inner chunk) tasks spread over threads."""
    inner = x.shape[2]
    nch = (inner + 1023) // 1024
    for t in prange(x.shape[0] * nch):
        o = t // nch
        lo = (t - o * nch) * 1024
        _col_task(x, out, op, zero, centers, o, lo, lo + 1024 if lo + 1024 < inner else inner)


@njit(**JIT_FAST)
def _arg_task(x, out, op, o, lo, hi):
    # out[o, k] = position along axis 1 of the extreme of x[o, :, k], for k in lo..hi
    for k in range(lo, hi):
        m = x[o, 0, k]
        best = 0
        for a in range(x.shape[1]):
            v = x[o, a, k]
            if m != m:
                break  # a NaN was found first: it is the answer
            if (v > m if op == ARGMAX else v < m) or v != v:
                m = v
                best = a
        out[o, k] = best


@njit(**JIT_FAST)
def arg_serial(x, out, op):
    """out[o, k] = argmax (op 0) or argmin (op 1) over axis 1 of x [outer, n, inner]."""
    for o in range(x.shape[0]):
        _arg_task(x, out, op, o, 0, x.shape[2])


@njit(parallel=True, **JIT_FAST)
def arg_parallel(x, out, op):
    """``arg_serial`` with (outer row, inner chunk) tasks over threads."""
    inner = x.shape[2]
    nch = (inner + 255) // 256
    for t in prange(x.shape[0] * nch):
        o = t // nch
        lo = (t - o * nch) * 256
        _arg_task(x, out, op, o, lo, lo + 256 if lo + 256 < inner else inner)


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def _view(x: np.ndarray, dim: int | None):
    cdt = compute_dtype(x.dtype)
    xc = np.ascontiguousarray(x, dtype=cdt)
    if dim is None:
        return xc.reshape(1, -1, 1), None
    if x.ndim == 0:
        raise ValueError("reduce: a 0-d array has no dimension to reduce")
    dim = dim % x.ndim
    outer = math.prod(x.shape[:dim])
    inner = math.prod(x.shape[dim + 1 :])
    return xc.reshape(outer, x.shape[dim], inner), dim


_NONE: dict = {}


def _none(dtype: np.dtype, ndim: int) -> np.ndarray:
    """An empty array standing for "no centers" (kernel arguments cannot be None)."""
    key = (dtype, ndim)
    if key not in _NONE:
        _NONE[key] = np.zeros((0,) * ndim, dtype)
    return _NONE[key]


def _reduce3(x3: np.ndarray, op: int, centers: np.ndarray | None = None) -> np.ndarray:
    """Reduce axis 1 of x3 [outer, n, inner] -> [outer, inner]."""
    outer, n, inner = x3.shape
    zero = x3.dtype.type(0)
    par = x3.size >= PARALLEL_MIN_ELEMS
    if n == 0:
        if op in (MAX, MIN):
            raise ValueError("reduce: max/min of an empty dimension")
        return np.full((outer, inner), 1 if op == PROD else 0, x3.dtype)
    if inner == 1:
        x2 = x3[:, :, 0]
        c = _none(x3.dtype, 1) if centers is None else centers.reshape(outer)
        if outer == 1 and n >= 2 * ROW_CHUNK and par:
            # One long row (a whole tensor): partial results per chunk, then reduce those.
            rows = n // ROW_CHUNK
            main = x2[0, : rows * ROW_CHUNK].reshape(rows, ROW_CHUNK)
            part = np.empty(rows + 1, x3.dtype)
            cc = np.full(rows, c[0], x3.dtype) if c.size else c
            row_reduce_parallel(main, part[:rows], op, zero, cc)
            tail = x2[:, rows * ROW_CHUNK :]
            row_reduce_serial(tail, part[rows:], op, zero, c)
            final = SUM if op in (SUM, SQDEV) else op
            out = np.empty(1, x3.dtype)
            row_reduce_serial(part.reshape(1, -1), out, final, zero, _none(x3.dtype, 1))
            return out.reshape(1, 1)
        out = np.empty(outer, x3.dtype)
        (row_reduce_parallel if par else row_reduce_serial)(x2, out, op, zero, c)
        return out.reshape(outer, 1)
    out = np.empty((outer, inner), x3.dtype)
    c = _none(x3.dtype, 2) if centers is None else centers
    (col_reduce_parallel if par else col_reduce_serial)(x3, out, op, zero, c)
    return out


def _finish(res: np.ndarray, x: np.ndarray, dim: int | None, dtype=None) -> np.ndarray:
    dtype = x.dtype if dtype is None else dtype
    if dim is None:
        return res.reshape(1).astype(dtype, copy=False)
    shape = x.shape[:dim] + (1,) + x.shape[dim + 1 :]
    return res.reshape(shape).astype(dtype, copy=False)


#: per float dtype: its zero and the empty "no centers" array of the column kernel (dict
#: lookups: ``dtype.type(0)`` and ``_none`` cost 0.3 us each, a third of a [32, 8, 1, 1] sum)
_SMALL = {dt: (dt.type(0), np.zeros((0, 0), dt)) for dt in FLOATS}


def _small_sum(x: np.ndarray, dim: int | None, mean: bool = False) -> np.ndarray | None:
    """The serial sum (or ``mean``) of a small C-contiguous f32/f64 array straight into its
    result (the MLP step's [128, 10] row sums, [128, 256] column sums, [128, 1] means;
    BatchNorm's means over dims 3, 2, 0 and its gradient's sums over 0, 2, 3), or None for the
    general path: the views, the dtype handling and the size tests of
    ``_view``/``_reduce3``/``_finish`` skipped, rows summed by a loop without the general
    kernel's op branches, and a mean divided by its count in the same kernel call (IEEE
    division, as NumPy's: the general path's rounding). The shapes involved come from
    :func:`_small_plan`, kept per (shape, dim)."""
    small = _SMALL.get(x.dtype)
    if small is None or not x.flags.c_contiguous:
        return None
    plan = _small_plan(x.shape, dim)
    if plan is None:
        return None
    kept, x_form, out_form, n, by_rows = plan
    zero, empty = small
    out = np.empty(kept, x.dtype)
    if by_rows:
        row_sums(x.reshape(x_form), out.reshape(out_form), zero, n if mean else 0)
    else:
        col_sum_serial(x.reshape(x_form), out.reshape(out_form), zero, empty, n if mean else 0)
    return out


@functools.lru_cache(maxsize=1024)
def _small_plan(shape: tuple[int, ...], dim: int | None):
    """How :func:`_small_sum` reduces a ``shape`` array along ``dim``: ``(result shape, the
    array's 2-D [rows, n] or 3-D [outer, n, inner] form, the result's form, n, whether by rows)``,
    or None when it does not (empty, 0-d, or large enough for the threads). Kept per shape:
    BatchNorm's gradient sums over dims 0, 2, 3 ask the same questions every step, and
    working them out (slices, products, the tests) cost more than a small kernel's call."""
    size = math.prod(shape)
    if size >= PARALLEL_MIN_ELEMS or not size:
        return None
    if dim is None:
        return (1,), (1, size), (1,), size, True
    if not shape:
        return None
    d = dim % len(shape)
    n = shape[d]
    kept = shape[:d] + (1,) + shape[d + 1 :]
    rows = size // n
    inner = 1 if d == len(shape) - 1 else rows if d == 0 else math.prod(shape[d + 1 :])
    if inner == 1:
        # the last dim, or one followed by 1s only (BatchNorm's second mean, [32, 8, 8, 1] over
        # dim 2): contiguous rows. The column kernel took 13 us there, its inner loop one wide
        return kept, (rows, n), (rows,), n, True
    return kept, (rows // inner, n, inner), (rows // inner, inner), n, False


def sum(x: np.ndarray, dim: int | None = None) -> np.ndarray:  # noqa: A001
    """Sum along ``dim`` (kept as size 1), or of the whole tensor (shape ``(1,)``)."""
    out = _small_sum(x, dim)
    if out is not None:
        return out
    x3, d = _view(x, dim)
    return _finish(_reduce3(x3, SUM), x, d)


def prod(x: np.ndarray, dim: int | None = None) -> np.ndarray:
    """Product along ``dim`` (kept), or of the whole tensor (shape ``(1,)``)."""
    x3, d = _view(x, dim)
    return _finish(_reduce3(x3, PROD), x, d)


def mean(x: np.ndarray, dim: int | None = None) -> np.ndarray:
    """Mean along ``dim`` (kept), or of the whole tensor (shape ``(1,)``)."""
    out = _small_sum(x, dim, mean=True)
    if out is not None:
        return out
    x3, d = _view(x, dim)
    s = _reduce3(x3, SUM)
    return _finish(s / x3.dtype.type(x3.shape[1]) if x3.shape[1] else s * np.nan, x, d)


def max(x: np.ndarray, dim: int | None = None) -> np.ndarray:  # noqa: A001
    """Maximum along ``dim`` (kept), or of the whole tensor (shape ``(1,)``); NaN wins."""
    x3, d = _view(x, dim)
    return _finish(_reduce3(x3, MAX), x, d)


def min(x: np.ndarray, dim: int | None = None) -> np.ndarray:  # noqa: A001
    """Minimum along ``dim`` (kept), or of the whole tensor (shape ``(1,)``); NaN wins."""
    x3, d = _view(x, dim)
    return _finish(_reduce3(x3, MIN), x, d)


def var(x: np.ndarray, dim: int | None = None, unbiased: bool = False) -> np.ndarray:
    """Variance along ``dim`` (kept) or of the whole tensor: two passes, divided by n
    (``unbiased=False``, burn's ``var_bias``) or n - 1 (``unbiased=True``, burn's ``var``)."""
    x3, d = _view(x, dim)
    n = x3.shape[1]
    m = _reduce3(x3, SUM) / x3.dtype.type(n if n else 1)
    ss = _reduce3(x3, SQDEV, m)
    denom = n - 1 if unbiased else n
    res = ss / x3.dtype.type(denom) if denom > 0 else ss * np.nan
    return _finish(res, x, d)


def _arg(x: np.ndarray, dim: int, op: int) -> np.ndarray:
    x3, d = _view(x, dim)
    if x3.shape[1] == 0:
        raise ValueError("argmax/argmin: empty dimension")
    out = np.empty((x3.shape[0], x3.shape[2]), np.int64)
    if out.size:
        (arg_parallel if x3.size >= PARALLEL_MIN_ELEMS else arg_serial)(x3, out, op)
    return _finish(out, x, d, np.int64)


def argmax(x: np.ndarray, dim: int) -> np.ndarray:
    """Index (int64, dim kept) of the first maximum along ``dim``; a NaN counts as maximum."""
    return _arg(x, dim, ARGMAX)


def argmin(x: np.ndarray, dim: int) -> np.ndarray:
    """Index (int64, dim kept) of the first minimum along ``dim``; a NaN counts as minimum."""
    return _arg(x, dim, ARGMIN)


def _with_indices(x: np.ndarray, dim: int, op: int):
    # Along the last dim of a C-contiguous f32/f64 array (a [batch, classes] logits max): one
    # pass for both; elsewhere the two reductions.
    if x.dtype in FLOATS and x.ndim and x.flags.c_contiguous and x.shape[-1] and dim % x.ndim == x.ndim - 1:
        n = x.shape[-1]
        rows = x.size // n
        shape = x.shape[:-1] + (1,)
        vals = np.empty(shape, x.dtype)
        idx = np.empty(shape, np.int64)
        if rows:
            kernel = extreme_rows_parallel if x.size >= PARALLEL_MIN_ELEMS else extreme_rows_serial
            kernel(x.reshape(rows, n), vals.reshape(rows), idx.reshape(rows), op)
        return vals, idx
    if op == ARGMAX:
        return max(x, dim), argmax(x, dim)
    return min(x, dim), argmin(x, dim)


def max_with_indices(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """``(max(x, dim), argmax(x, dim))``, both with ``dim`` kept (burn's
    ``float_max_dim_with_indices``); the value is ``x`` at the index (the first NaN wins)."""
    return _with_indices(x, dim, ARGMAX)


def min_with_indices(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """``(min(x, dim), argmin(x, dim))``, both with ``dim`` kept."""
    return _with_indices(x, dim, ARGMIN)
