"""Copies that move elements: contiguous copies of strided views, casts, broadcasting copies
into (possibly strided) destinations, concatenation, and fills.

Mirrors burn-flex's layout kernels (``float_cat``, ``float_cast``, the copy behind
``into_contiguous``, ``float_full``). Views (reshape, transpose, slice, expand) cost nothing
and are not here: only what has to touch every element.

Both sides are viewed as 3-D with dimensions merged where the strides of the source and of
the destination allow it (:func:`views3`, on the merge rule of :func:`._common.merge_dims`), so a contiguous copy is one flat loop and a
transposed one a 2-D loop. float16 on either side goes through NumPy (numba has no f16).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit, prange

from ._common import FLOATS, JIT, PARALLEL_MIN_ELEMS, merge_dims

CHUNK = 8192


@njit(**JIT)
def _copy_task(src, dst, t, nch):
    d1 = dst.shape[1]
    row = t // nch
    lo = (t - row * nch) * CHUNK
    i0 = row // d1
    i1 = row - i0 * d1
    s = src[i0, i1, lo : lo + CHUNK]
    d = dst[i0, i1, lo : lo + CHUNK]
    for j in range(d.shape[0]):
        d[j] = s[j]  # converts when the dtypes differ (float -> int truncates)


@njit(**JIT)
def copy_serial(src, dst):
    """dst[...] = src for 3-D views of equal shape (either may be strided or broadcast)."""
    nch = (dst.shape[2] + CHUNK - 1) // CHUNK
    for t in range(dst.shape[0] * dst.shape[1] * nch):
        _copy_task(src, dst, t, nch)


@njit(parallel=True, **JIT)
def copy_parallel(src, dst):
    """``copy_serial`` with chunks spread over threads."""
    nch = (dst.shape[2] + CHUNK - 1) // CHUNK
    for t in prange(dst.shape[0] * dst.shape[1] * nch):
        _copy_task(src, dst, t, nch)


@njit(**JIT)
def fill_serial(out, value):
    """out[:] = value for a flat array."""
    for i in range(out.shape[0]):
        out[i] = value


@njit(parallel=True, **JIT)
def fill_parallel(out, value):
    """``fill_serial`` over threads."""
    for i in prange(out.shape[0]):
        out[i] = value


def views3(shape: tuple[int, ...], arrays: Sequence[np.ndarray], writable: int = -1):
    """Each array broadcast to ``shape`` and viewed as 3-D with dims merged where every array's
    strides allow it (:func:`._common.merge_dims`); ``arrays[writable]`` (a destination) is not
    broadcast and stays writable. None when more than three stride patterns remain.
    """
    views = [
        a if i == writable % len(arrays) and writable >= 0 else np.broadcast_to(a, shape)
        for i, a in enumerate(arrays)
    ]
    merged = merge_dims(shape, views)
    if merged is None:
        return None
    shape3, strides3 = merged
    return [
        np.lib.stride_tricks.as_strided(
            v, shape3, strides, writeable=writable >= 0 and k == writable % len(arrays)
        )
        for k, (v, strides) in enumerate(zip(views, strides3, strict=True))
    ]


def copy_into(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """``dst[...] = src`` (src broadcasts to dst's shape; dst may be a strided view)."""
    src = np.asarray(src)
    if dst.size == 0:
        return dst
    if np.float16 in (src.dtype, dst.dtype) or src.dtype.kind not in "biuf":
        np.broadcast_shapes(src.shape, dst.shape)  # raises a clear error on mismatch
        dst[...] = src
        return dst
    n = dst.size
    kernel = copy_parallel if n >= PARALLEL_MIN_ELEMS else copy_serial
    if src.shape == dst.shape:
        if src.flags.c_contiguous and dst.flags.c_contiguous:
            # the common case (a copy, a cast): one flat row, no broadcast views to build
            kernel(src.reshape(1, 1, n), dst.reshape(1, 1, n))
            return dst
        if src.ndim <= 3:
            # a transposed or sliced array of up to three dims: new axes in front (indexing
            # with None, always a view, so dst is written in place) and the kernel reads the
            # strides as they are (np.broadcast_to and as_strided cost about 10 us)
            pad = (None,) * (3 - src.ndim)
            kernel(src[pad], dst[pad])
            return dst
    np.broadcast_shapes(src.shape, dst.shape)  # raises a clear error on mismatch
    v = views3(dst.shape, [src, dst], writable=1)
    if v is None:  # more than three stride patterns: peel off the leading dimension
        for i in range(dst.shape[0]):
            copy_into(src if src.ndim < dst.ndim else src[i if src.shape[0] > 1 else 0], dst[i])
        return dst
    kernel(v[0], v[1])
    return dst


def cast(x: np.ndarray, dtype) -> np.ndarray:
    """A new C-contiguous copy of ``x`` in ``dtype`` (always a copy, even for the same dtype).

    float -> int truncates toward zero (Rust's ``as``); -> bool is ``x != 0``.
    """
    out = np.empty(x.shape, np.dtype(dtype))
    if np.dtype(dtype) == np.bool_ and x.dtype != np.bool_:
        out[...] = x != 0
        return out
    return copy_into(x, out)


#: Below this many elements ``small_contiguous`` makes the copy: the copy kernel's set-up
#: (merging dims, strided views) cost ~30 us, more than a small copy takes.
SMALL_COPY = 1 << 15
_NUMBA_COPIES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32,
                                                np.int64, np.uint8, np.bool_))


@njit(**JIT)
def small_contiguous(x):
    """A C-contiguous copy of a small array of any layout, in one call (numba walks the
    strides; compiled once per rank, layout and dtype)."""
    return np.ascontiguousarray(x)


def contiguous(x: np.ndarray) -> np.ndarray:
    """``x`` itself when C-contiguous, else a C-contiguous copy (the copy kernel's, for large
    arrays)."""
    x = np.asarray(x)
    if x.flags.c_contiguous:
        return x
    if x.size < SMALL_COPY and x.dtype in _NUMBA_COPIES:
        return small_contiguous(x)
    return copy_into(x, np.empty(x.shape, x.dtype))


def cat(tensors: Sequence[np.ndarray], dim: int, dtype=None) -> np.ndarray:
    """Concatenate along ``dim`` (all other dims equal) into a new C-contiguous array."""
    if not tensors:
        raise ValueError("cat: expected at least one array")
    first = tensors[0]
    dim = dim % first.ndim
    for t in tensors:
        if t.ndim != first.ndim or t.shape[:dim] + t.shape[dim + 1 :] != (
            first.shape[:dim] + first.shape[dim + 1 :]
        ):
            raise ValueError(f"cat: shapes differ outside dim {dim}: {first.shape} and {t.shape}")
    shape = list(first.shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    out = np.empty(shape, np.dtype(dtype) if dtype is not None else first.dtype)
    pos = 0
    for t in tensors:
        n = t.shape[dim]
        index = (slice(None),) * dim + (slice(pos, pos + n),)
        copy_into(t, out[index])
        pos += n
    return out


def full(shape: tuple[int, ...], value, dtype) -> np.ndarray:
    """A new array of ``shape`` filled with ``value`` (fill kernel; float16 by NumPy)."""
    dtype = np.dtype(dtype)
    out = np.empty(shape, dtype)
    if dtype in FLOATS:  # the common case first (a 0-d ones() seeding backward)
        n = out.size
        if n:
            (fill_parallel if n >= PARALLEL_MIN_ELEMS else fill_serial)(out.reshape(n), dtype.type(value))
        return out
    flat = out.reshape(-1)
    if dtype == np.float16 or dtype.kind not in "biuf":
        flat[:] = value
    elif flat.size:
        # the fill value in the array's dtype; NumPy's cast rules for an int dtype (a NaN or an
        # out-of-range value wraps, where the scalar constructor would raise)
        v = dtype.type(value) if dtype.kind == "f" else np.asarray(value).astype(dtype)[()]
        (fill_parallel if flat.size >= PARALLEL_MIN_ELEMS else fill_serial)(flat, v)
    return out
