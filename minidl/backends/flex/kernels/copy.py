"""Copies, casts and fills over strided views: the element-wise moves of data that layout ops
need (make a view contiguous, cast between dtypes, write a tensor into a region of another for
``cat`` and ``slice_assign``).

Mirrors the copy loops of burn-flex's layout ops (``float_cat``, ``float_slice_assign``,
``float_cast``, making a strided tensor contiguous).

Source and destination are viewed as 3-D arrays whose dimensions are merged wherever both
allow it (a contiguous copy is one flat row), and the kernel runs an inner loop over the last
dimension; numba casts on assignment (float to int truncates toward zero, as Rust's ``as``).
numba has no float16 type: a float16 -> float16 copy moves the bits as ``uint16``, and a cast
from or to float16 is done by NumPy on the host (as the other kernels' wrappers do).
Above ``PARALLEL_MIN_ELEMS`` elements, chunks of rows are spread over threads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit, prange

from ._common import JIT, PARALLEL_MIN_ELEMS

CHUNK = 8192  # elements of the last dimension per parallel task

_F16 = np.dtype(np.float16)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _copy_task(src, dst, t, nch):
    d1 = dst.shape[1]
    row = t // nch
    lo = (t - row * nch) * CHUNK
    hi = min(lo + CHUNK, dst.shape[2])
    i0 = row // d1
    i1 = row - i0 * d1
    s = src[i0, i1]
    d = dst[i0, i1]
    for j in range(lo, hi):
        d[j] = s[j]


@njit(**JIT)
def copy_serial(src, dst):
    """dst[i, j, k] = src[i, j, k] for 3-D views of one shape (any strides; numba casts)."""
    nch = (dst.shape[2] + CHUNK - 1) // CHUNK
    for t in range(dst.shape[0] * dst.shape[1] * nch):
        _copy_task(src, dst, t, nch)


@njit(parallel=True, **JIT)
def copy_parallel(src, dst):
    """``copy_serial`` with (row, chunk) tasks spread over threads."""
    nch = (dst.shape[2] + CHUNK - 1) // CHUNK
    for t in prange(dst.shape[0] * dst.shape[1] * nch):
        _copy_task(src, dst, t, nch)


@njit(**JIT)
def fill_serial(out, value):
    """out[:] = value for a flat contiguous array."""
    for i in range(out.shape[0]):
        out[i] = value


@njit(parallel=True, **JIT)
def fill_parallel(out, value):
    """``fill_serial`` with chunks spread over threads."""
    n = out.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        for i in range(t * CHUNK, min(t * CHUNK + CHUNK, n)):
            out[i] = value


# ---------------------------------------------------------------------------------------------
# 3-D views with merged dimensions
# ---------------------------------------------------------------------------------------------


def _merged3(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``src`` (broadcast to ``dst``'s shape) and ``dst`` as 3-D views, dims merged where both
    allow it. Above three stride patterns the caller loops over the leading dims."""
    shape = dst.shape
    pair = (src, dst)
    dims = [i for i, s in enumerate(shape) if s != 1]
    groups: list[list[int]] = []
    for i in dims:
        if groups:
            j = groups[-1][-1]
            if all(v.strides[j] == v.strides[i] * shape[i] for v in pair):
                groups[-1].append(i)
                continue
        groups.append([i])
    lead = 3 - len(groups)
    shape3 = [1] * lead + [int(np.prod([shape[i] for i in g])) for g in groups]
    views = []
    for v, writeable in ((src, False), (dst, True)):
        strides = [0] * lead + [v.strides[g[-1]] for g in groups]
        views.append(np.lib.stride_tricks.as_strided(v, shape3, strides, writeable=writeable))
    return views[0], views[1]


def _groups_needed(src: np.ndarray, dst: np.ndarray) -> int:
    shape, count, prev = dst.shape, 0, None
    for i, n in enumerate(shape):
        if n == 1:
            continue
        if prev is None or not all(v.strides[prev] == v.strides[i] * n for v in (src, dst)):
            count += 1
        prev = i
    return count


def _bits(x: np.ndarray) -> np.ndarray:
    # float16 has no numba type: move its bits as uint16 (same itemsize, so any view works)
    return x.view(np.uint16) if x.dtype == _F16 else x


def copy_into(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Write ``src`` (broadcast to ``dst``'s shape) into the (possibly strided) view ``dst``,
    converting to ``dst``'s dtype. Returns ``dst``."""
    if dst.size == 0:
        return dst
    src = np.broadcast_to(src, dst.shape)
    if (src.dtype == _F16) != (dst.dtype == _F16):
        src = src.astype(dst.dtype)  # numba has no float16: the host converts
    src, dst_k = _bits(src), _bits(dst)
    if _groups_needed(src, dst_k) > 3:
        for i in range(dst.shape[0]):
            copy_into(src[i], dst[i])
        return dst
    s3, d3 = _merged3(src, dst_k)
    (copy_parallel if dst.size >= PARALLEL_MIN_ELEMS else copy_serial)(s3, d3)
    return dst


def contiguous(x: np.ndarray) -> np.ndarray:
    """``x`` itself when C-contiguous, else a C-contiguous copy made by the copy kernel."""
    if x.flags.c_contiguous:
        return x
    return copy_into(x, np.empty(x.shape, x.dtype))


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A C-contiguous copy of ``x`` converted to ``dtype`` (float to int truncates toward zero).

    A cast from or to float16 is NumPy's ``astype`` (numba has no float16 type).
    """
    dtype = np.dtype(dtype)
    if x.dtype == _F16 or dtype == _F16:
        return np.ascontiguousarray(x.astype(dtype))
    return copy_into(x, np.empty(x.shape, dtype))


def full(shape: tuple[int, ...], value: float | int | bool, dtype: np.dtype) -> np.ndarray:
    """A new C-contiguous array of ``shape`` and ``dtype`` holding ``value`` everywhere."""
    dtype = np.dtype(dtype)
    out = np.empty(shape, dtype)
    if out.size == 0:
        return out
    flat = _bits(out).reshape(-1)
    scalar = np.array(value, dtype).view(flat.dtype)[()]
    (fill_parallel if out.size >= PARALLEL_MIN_ELEMS else fill_serial)(flat, scalar)
    return out


def cat(arrays: Sequence[np.ndarray], dim: int, dtype: np.dtype | None = None) -> np.ndarray:
    """Concatenate ``arrays`` along ``dim`` into a new array (of ``dtype``, default the first
    array's), each one copied into its region by the copy kernel."""
    first = arrays[0]
    dtype = first.dtype if dtype is None else np.dtype(dtype)
    for a in arrays:
        if a.ndim != first.ndim or any(
            a.shape[d] != first.shape[d] for d in range(first.ndim) if d != dim
        ):
            raise ValueError(
                f"cat: every tensor must match {first.shape} except in dim {dim}, found {a.shape}"
            )
    shape = list(first.shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    out = np.empty(tuple(shape), dtype)
    start = 0
    for a in arrays:
        stop = start + a.shape[dim]
        region = (slice(None),) * dim + (slice(start, stop),)
        copy_into(a, out[region])
        start = stop
    return out
