"""Index kernels: gather / scatter-add along a dimension, select (index_select) / select-add
(index_add), and the embedding lookup with its backward.

Mirrors burn-flex's ``float_gather``, ``float_scatter`` (which adds, as burn's does),
``float_select``, ``float_select_assign`` (adds too) and the ``embedding`` /
``embedding_backward`` module defaults built from them.

Every array is viewed as [outer, n, inner] around the indexed dimension. Indices are checked
in the wrapper (numba does no bounds checks: a bad index would read or write out of bounds).
The adding kernels run on one thread: two indices may name the same row.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._common import FLOATS, JIT, PARALLEL_MIN_ELEMS
from .copy import cast

_I64 = np.dtype(np.int64)


@njit(**JIT)
def _gather_rows(x, idx, out, lo, hi):
    m, inner = idx.shape[1], idx.shape[2]
    for o in range(lo, hi):
        for a in range(m):
            irow = idx[o, a]
            orow = out[o, a]
            for k in range(inner):
                orow[k] = x[o, irow[k], k]


@njit(parallel=True, **JIT)
def gather_parallel(x, idx, out):
    """out[o, a, k] = x[o, idx[o, a, k], k] (torch.gather along axis 1 of 3-D views), the
    outer rows spread over threads."""
    for o in prange(x.shape[0]):
        _gather_rows(x, idx, out, o, o + 1)


@njit(**JIT)
def gather_checked(x, idx, out):
    """out[o, a, k] = x[o, idx[o, a, k], k], checking each index as it reads it: False when one is outside [0, n)
    (``out`` is then discarded). One call where a range check and the gather made two."""
    # A flag, not a return from inside the loops: the early return made this 5x slower
    # (3 us vs 0.6 us for 128 indices, measured).
    n = x.shape[1]
    outer, m, inner = idx.shape
    ok = True
    for o in range(outer):
        for a in range(m):
            irow = idx[o, a]
            orow = out[o, a]
            for k in range(inner):
                i = irow[k]
                if i < 0 or i >= n:
                    ok = False
                    i = 0
                orow[k] = x[o, i, k]
    return ok


@njit(**JIT)
def scatter_add_checked(x, out, idx, value):
    """``out[...] = x`` (``out`` the 3-D view [outer, n, inner] of x's shape, both
    C-contiguous), then ``out[o, idx[o, a, k], k] += value[o, a, k]`` in order: the copy, the
    index checks and the adds in one call. False when an index is outside [0, n) (it adds
    nothing; ``out`` is then discarded)."""
    xf = x.ravel()
    of = out.ravel()
    for j in range(of.shape[0]):
        of[j] = xf[j]
    n = out.shape[1]
    outer, m, inner = idx.shape
    ok = True
    for o in range(outer):
        for a in range(m):
            irow = idx[o, a]
            vrow = value[o, a]
            for k in range(inner):
                i = irow[k]
                if 0 <= i < n:
                    out[o, i, k] += vrow[k]
                else:
                    ok = False
    return ok


@njit(**JIT)
def scatter_add_kernel(out, idx, value):
    """out[o, idx[o, a, k], k] += value[o, a, k], in order (repeated indices accumulate)."""
    outer, m, inner = idx.shape
    for o in range(outer):
        for a in range(m):
            irow = idx[o, a]
            vrow = value[o, a]
            for k in range(inner):
                out[o, irow[k], k] += vrow[k]


@njit(**JIT)
def _select_rows(x, idx, out, lo, hi):
    for o in range(lo, hi):
        for a in range(idx.shape[0]):
            src = x[o, idx[a]]
            dst = out[o, a]
            for k in range(dst.shape[0]):
                dst[k] = src[k]


@njit(**JIT)
def select_serial(x, idx, out):
    """out[o, a, :] = x[o, idx[a], :] (index_select along axis 1 of 3-D views)."""
    _select_rows(x, idx, out, 0, x.shape[0])


@njit(parallel=True, **JIT)
def select_parallel(x, idx, out):
    """``select_serial`` with blocks of selected rows spread over threads."""
    outer, m = x.shape[0], idx.shape[0]
    blk = max(1, 256)
    nb = (m + blk - 1) // blk
    for t in prange(outer * nb):
        o = t // nb
        a0 = (t - o * nb) * blk
        a1 = min(a0 + blk, m)
        _select_rows(x[o : o + 1], idx[a0:a1], out[o : o + 1, a0:a1], 0, 1)


@njit(**JIT)
def select_add_kernel(out, idx, value):
    """out[o, idx[a], :] += value[o, a, :], in order (index_add along axis 1)."""
    for o in range(out.shape[0]):
        for a in range(idx.shape[0]):
            dst = out[o, idx[a]]
            src = value[o, a]
            for k in range(dst.shape[0]):
                dst[k] += src[k]


def _split(shape: tuple[int, ...], dim: int) -> tuple[int, int, int]:
    return (
        math.prod(shape[:dim]),
        shape[dim],
        math.prod(shape[dim + 1 :]),
    )


def region(index_shape: tuple[int, ...], dim: int) -> tuple[slice, ...]:
    """The part of a tensor an index tensor of ``index_shape`` addresses (all of ``dim``; a
    negative ``dim`` counts from the end, as everywhere else)."""
    dim = dim % len(index_shape) if index_shape else dim
    return tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_shape))


def in_compute_dtype(fn, *args):
    """Run an index kernel. numba has no float16: float16 arrays go in as float32, and when the
    tensor (the first array argument) is float16 the result comes back as float16 (exact for
    the copies, one rounding for the sums)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if not any(a.dtype == np.float16 for a in arrays):
        return fn(*args)
    lifted = [cast(a, np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a
              for a in args]
    out = fn(*lifted)
    return cast(out, np.float16) if arrays[0].dtype == np.float16 else out


@njit(**JIT)
def _all_in_range(flat, n):
    """Whether every index of ``flat`` is in [0, n) (one pass; min() and max() cost two)."""
    for i in range(flat.shape[0]):
        if flat[i] < 0 or flat[i] >= n:
            return False
    return True


def _check_indices(name: str, idx: np.ndarray, n: int) -> np.ndarray:
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    if idx.size and not _all_in_range(idx.reshape(-1), n):
        raise IndexError(f"{name}: index out of range [0, {n}): found {idx.min()}..{idx.max()}")
    return idx


def _check_same_outside(name: str, a: tuple[int, ...], b: tuple[int, ...], dim: int) -> None:
    if len(a) != len(b) or a[:dim] + a[dim + 1 :] != b[:dim] + b[dim + 1 :]:
        raise ValueError(f"{name}: shapes {a} and {b} must match outside dim {dim}")


def _index_array(indices: np.ndarray) -> np.ndarray:
    if indices.dtype is _I64 and indices.flags.c_contiguous:
        return indices
    return np.ascontiguousarray(indices, dtype=np.int64)


def _out_of_range(name: str, idx: np.ndarray, n: int) -> IndexError:
    return IndexError(f"{name}: index out of range [0, {n}): found {idx.min()}..{idx.max()}")


def gather(dim: int, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``torch.gather(x, dim, indices)``: indices has x's shape except along ``dim``."""
    dim = dim % x.ndim
    _check_same_outside("gather", x.shape, indices.shape, dim)
    outer, n, inner = _split(x.shape, dim)
    xc = (x if x.flags.c_contiguous else np.ascontiguousarray(x)).reshape(outer, n, inner)
    out = np.empty(indices.shape, x.dtype)
    size = out.size
    if size >= PARALLEL_MIN_ELEMS:
        idx = _check_indices("gather", indices, n).reshape(outer, indices.shape[dim], inner)
        gather_parallel(xc, idx, out.reshape(idx.shape))
    elif size:
        idx = _index_array(indices)
        if not gather_checked(xc, idx.reshape(outer, indices.shape[dim], inner), out.reshape(outer, -1, inner)):
            raise _out_of_range("gather", idx, n)
    return out


def scatter_add(dim: int, x: np.ndarray, indices: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A copy of x with ``value`` added at ``indices`` along ``dim`` (burn's ``scatter``)."""
    dim = dim % x.ndim
    _check_same_outside("scatter", x.shape, indices.shape, dim)
    if value.shape != indices.shape:
        raise ValueError(
            f"scatter: value {value.shape} must have the indices' shape {indices.shape}"
        )
    outer, n, inner = _split(x.shape, dim)
    if x.dtype not in FLOATS or not x.flags.c_contiguous or not indices.size:
        idx = _check_indices("scatter", indices, n).reshape(outer, indices.shape[dim], inner)
        out = cast(x, x.dtype).reshape(outer, n, inner)
        if idx.size:
            scatter_add_kernel(out, idx, np.ascontiguousarray(value, dtype=x.dtype).reshape(idx.shape))
        return out.reshape(x.shape)
    # contiguous float: the copy, the index checks and the adds in one call
    idx = _index_array(indices)
    v = value if value.dtype is x.dtype and value.flags.c_contiguous else np.ascontiguousarray(value, x.dtype)
    out = np.empty(x.shape, x.dtype)
    shape3 = (outer, indices.shape[dim], inner)
    if not scatter_add_checked(x, out.reshape(outer, n, inner), idx.reshape(shape3), v.reshape(shape3)):
        raise _out_of_range("scatter", idx, n)
    return out


def select(x: np.ndarray, dim: int, indices: np.ndarray) -> np.ndarray:
    """``torch.index_select(x, dim, indices)`` with 1-D ``indices``."""
    dim = dim % x.ndim
    outer, n, inner = _split(x.shape, dim)
    idx = _check_indices("select", np.asarray(indices).reshape(-1), n)
    xc = np.ascontiguousarray(x).reshape(outer, n, inner)
    out = np.empty((outer, idx.shape[0], inner), x.dtype)
    if out.size:
        (select_parallel if out.size >= PARALLEL_MIN_ELEMS else select_serial)(xc, idx, out)
    return out.reshape(x.shape[:dim] + (idx.shape[0],) + x.shape[dim + 1 :])


def select_add(x: np.ndarray, dim: int, indices: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A copy of x with ``value`` added at the rows ``indices`` of ``dim`` (index_add; burn's
    ``select_assign``). ``value`` has x's shape with ``len(indices)`` along ``dim``."""
    dim = dim % x.ndim
    outer, n, inner = _split(x.shape, dim)
    idx = _check_indices("select_assign", np.asarray(indices).reshape(-1), n)
    expected = x.shape[:dim] + (idx.shape[0],) + x.shape[dim + 1 :]
    if value.shape != expected:
        raise ValueError(f"select_assign: value must have shape {expected}, found {value.shape}")
    out = cast(x, x.dtype).reshape(outer, n, inner)
    if idx.size:
        v = np.ascontiguousarray(value, dtype=x.dtype).reshape(outer, idx.shape[0], inner)
        select_add_kernel(out, idx, v)
    return out.reshape(x.shape)


def embedding(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows of ``weight`` [vocab, d] picked by integer ``ids`` (any shape) -> ids.shape + (d,)."""
    return select(weight, 0, ids.reshape(-1)).reshape(ids.shape + (weight.shape[1],))


def embedding_backward(
    weight_shape: tuple[int, int], ids: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    """Gradient of ``embedding`` for the weight: ``grad`` rows added at their ids (index_add)."""
    zeros = np.zeros(weight_shape, grad.dtype)
    return select_add(zeros, 0, ids.reshape(-1), grad.reshape(-1, weight_shape[1]))
