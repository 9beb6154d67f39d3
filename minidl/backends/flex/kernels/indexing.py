"""Index kernels: gather, scatter (adding), index select, and select-assign (adding).

Mirrors burn-flex's ``float_gather`` / ``float_scatter`` / ``float_select`` /
``float_select_assign`` (burn's scatter and select_assign *sum* into the target, as torch's
``scatter_add`` and ``index_add``).

``gather`` and ``scatter`` work on any rank: the kernel walks the index tensor in row-major
order keeping a coordinate counter, and replaces the coordinate along ``dim`` by the index
value (the other coordinates address the source directly, so an index tensor smaller than the
source in the other dims is fine, as in torch). ``select`` and ``select_assign`` view the
tensor as ``[outer, dim, inner]``. The adding kernels run on one thread: repeated indices
write the same element. Indices are checked in the kernel; the wrapper raises a clear error
naming the bad index. float16 is gathered/selected as raw bits and summed in float32.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._common import JIT, compute_dtype
from .copy import cast, contiguous, copy_into

_F16 = np.dtype(np.float16)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def gather_kernel(src, src_strides, idx, shape, dim, size, out):
    """out[p] = src[offset of p with coordinate ``dim`` replaced by idx[p]] for every p in the
    row-major walk of ``shape`` (the index tensor's). ``src`` and ``out`` are flat; returns the
    flat position of the first index outside ``[0, size)``, or -1."""
    rank = shape.shape[0]
    coord = np.zeros(rank, np.int64)
    for p in range(out.shape[0]):
        k = idx[p]
        if k < 0 or k >= size:
            return p
        off = 0
        for d in range(rank):
            off += (k if d == dim else coord[d]) * src_strides[d]
        out[p] = src[off]
        d = rank - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                break
            coord[d] = 0
            d -= 1
    return -1


@njit(**JIT)
def scatter_add_kernel(dst, dst_strides, idx, value, value_strides, shape, dim, size):
    """dst[offset of p with coordinate ``dim`` = idx[p]] += value[p's offset in ``value``] over
    the row-major walk of ``shape``; returns the first bad position or -1 (nothing after it is
    written)."""
    rank = shape.shape[0]
    coord = np.zeros(rank, np.int64)
    for p in range(idx.shape[0]):
        k = idx[p]
        if k < 0 or k >= size:
            return p
        off = 0
        voff = 0
        for d in range(rank):
            off += (k if d == dim else coord[d]) * dst_strides[d]
            voff += coord[d] * value_strides[d]
        dst[off] += value[voff]
        d = rank - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                break
            coord[d] = 0
            d -= 1
    return -1


@njit(**JIT)
def select_kernel(src, idx, out):
    """out[o, j, i] = src[o, idx[j], i] for src [outer, n, inner]; returns the first bad j or -1."""
    n = src.shape[1]
    for j in range(idx.shape[0]):
        if idx[j] < 0 or idx[j] >= n:
            return j
    for o in range(src.shape[0]):
        for j in range(idx.shape[0]):
            s = src[o, idx[j]]
            d = out[o, j]
            for i in range(s.shape[0]):
                d[i] = s[i]
    return -1


@njit(**JIT)
def select_add_kernel(dst, idx, value):
    """dst[o, idx[j], i] += value[o, j, i] for dst [outer, n, inner]; returns the first bad j or -1."""
    n = dst.shape[1]
    for j in range(idx.shape[0]):
        if idx[j] < 0 or idx[j] >= n:
            return j
    for o in range(dst.shape[0]):
        for j in range(idx.shape[0]):
            d = dst[o, idx[j]]
            v = value[o, j]
            for i in range(d.shape[0]):
                d[i] += v[i]
    return -1


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def _elem_strides(x: np.ndarray) -> np.ndarray:
    return np.array([s // x.itemsize for s in x.strides], dtype=np.int64)


def _indices(indices: np.ndarray) -> np.ndarray:
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, found {idx.dtype}")
    return contiguous(idx) if idx.dtype == np.int64 else cast(idx, np.int64)


def _bad(op: str, bad: int, idx: np.ndarray, dim: int, size: int) -> None:
    if bad >= 0:
        where = np.unravel_index(bad, idx.shape) if idx.ndim > 1 else bad
        raise IndexError(
            f"{op}: index {int(idx.reshape(-1)[bad])} at {where} is out of range for dim {dim} "
            f"of size {size}"
        )


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint16) if x.dtype == _F16 else x


def _check_rank(op: str, tensor: np.ndarray, indices: np.ndarray, dim: int) -> None:
    if indices.ndim != tensor.ndim:
        raise ValueError(
            f"{op}: indices must have the rank of the tensor ({tensor.ndim}), found {indices.shape}"
        )
    for d in range(tensor.ndim):
        if d != dim and indices.shape[d] > tensor.shape[d]:
            raise ValueError(
                f"{op}: indices {indices.shape} are larger than the tensor {tensor.shape} in dim {d}"
            )


def gather(dim: int, tensor: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``out[i][j][k] = tensor[i][indices[i][j][k]][k]`` for ``dim = 1`` (torch.gather).

    ``indices`` has the rank of ``tensor``, may be smaller in every dim but ``dim``; the result
    has the shape of ``indices`` and the dtype of ``tensor``.
    """
    _check_rank("gather", tensor, indices, dim)
    src = _bits(contiguous(tensor))
    idx = _indices(indices)
    out = np.empty(idx.shape, src.dtype)
    if out.size:
        shape = np.array(idx.shape, np.int64)
        bad = gather_kernel(src.reshape(-1), _elem_strides(src), idx.reshape(-1), shape, dim,
                            tensor.shape[dim], out.reshape(-1))
        _bad("gather", bad, idx, dim, tensor.shape[dim])
    return out.view(tensor.dtype)


def scatter_add(dim: int, tensor: np.ndarray, indices: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A copy of ``tensor`` with ``out[i][indices[i][j]] += value[i][j]`` along ``dim`` (torch's
    ``scatter_add``; repeated indices accumulate). ``value`` covers at least ``indices``' shape."""
    _check_rank("scatter", tensor, indices, dim)
    cdt = compute_dtype(tensor.dtype)
    out = cast(tensor, cdt)
    idx = _indices(indices)
    if idx.size:
        val = cast(value, cdt) if value.dtype != cdt else contiguous(value)
        shape = np.array(idx.shape, np.int64)
        bad = scatter_add_kernel(out.reshape(-1), _elem_strides(out), idx.reshape(-1),
                                 val.reshape(-1), _elem_strides(val), shape, dim, tensor.shape[dim])
        _bad("scatter", bad, idx, dim, tensor.shape[dim])
    return out if out.dtype == tensor.dtype else out.astype(tensor.dtype)


def _outer_inner(shape: tuple[int, ...], dim: int) -> tuple[int, int]:
    return int(np.prod(shape[:dim], dtype=np.int64)), int(np.prod(shape[dim + 1 :], dtype=np.int64))


def select(tensor: np.ndarray, dim: int, indices: np.ndarray) -> np.ndarray:
    """Whole slices of ``tensor`` picked along ``dim`` by the 1-D ``indices`` (index_select)."""
    idx = _indices(indices).reshape(-1)
    src = _bits(contiguous(tensor))
    outer, inner = _outer_inner(tensor.shape, dim)
    shape = tensor.shape[:dim] + (idx.shape[0],) + tensor.shape[dim + 1 :]
    out = np.empty(shape, src.dtype)
    if out.size or idx.size:
        n = tensor.shape[dim]
        bad = select_kernel(src.reshape(outer, n, inner), idx, out.reshape(outer, idx.shape[0], inner))
        _bad("select", bad, idx, dim, n)
    return out.view(tensor.dtype)


def select_add(tensor: np.ndarray, dim: int, indices: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A copy of ``tensor`` with ``value`` added into the slices ``indices`` along ``dim``
    (torch's ``index_add``; repeated indices accumulate)."""
    idx = _indices(indices).reshape(-1)
    cdt = compute_dtype(tensor.dtype)
    out = cast(tensor, cdt)
    outer, inner = _outer_inner(tensor.shape, dim)
    n = tensor.shape[dim]
    want = tensor.shape[:dim] + (idx.shape[0],) + tensor.shape[dim + 1 :]
    if value.shape != want:
        raise ValueError(f"select_assign: value must have shape {want}, found {value.shape}")
    val = np.empty(want, cdt)
    copy_into(value, val)
    bad = select_add_kernel(out.reshape(outer, n, inner), idx, val.reshape(outer, idx.shape[0], inner))
    _bad("select_assign", bad, idx, dim, n)
    return out if out.dtype == tensor.dtype else out.astype(tensor.dtype)
