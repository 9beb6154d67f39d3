"""Spatial resizing of NCHW tensors: nearest and bilinear (with or without ``align_corners``),
forward and backward, with torch's index arithmetic.

Mirrors burn-flex's ``interpolate`` / ``interpolate_backward`` (burn-ndarray's
``ops/interpolate.rs`` in spirit).

Both modes resize the two axes independently: for each axis a small *tap table* says which
input rows (columns) every output row (column) reads and with what weight — nearest: one tap
of weight 1, bilinear: the two neighbours weighted ``1 - λ`` and ``λ``. The tables are
computed once per call on the host (a few hundred numbers); the kernels walk the planes:
the forward sums the weighted taps, the backward adds each output gradient back along the same
taps. Each plane is owned by one task, so planes go over threads without races. float16 is
computed in float32 and cast back.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT_FAST, PARALLEL_MIN_ELEMS, compute_dtype

MODES = ("nearest", "bilinear")


# ---------------------------------------------------------------------------------------------
# Kernels: planes [P, H, W] -> [P, OH, OW] and back
# ---------------------------------------------------------------------------------------------


@njit(**JIT_FAST)
def _resize_plane(x, out, rows, rw, cols, cw, p):
    src = x[p]
    dst = out[p]
    zero = rw[0, 0] * 0
    for i in range(dst.shape[0]):
        orow = dst[i]
        for j in range(orow.shape[0]):
            orow[j] = zero
        for a in range(rows.shape[1]):
            srow = src[rows[i, a]]
            wr = rw[i, a]
            for j in range(orow.shape[0]):
                acc = zero
                for b in range(cols.shape[1]):
                    acc += cw[j, b] * srow[cols[j, b]]
                orow[j] += wr * acc


@njit(**JIT_FAST)
def resize_serial(x, out, rows, rw, cols, cw):
    """out[p, i, j] = sum_a rw[i, a] * sum_b cw[j, b] * x[p, rows[i, a], cols[j, b]]."""
    for p in range(x.shape[0]):
        _resize_plane(x, out, rows, rw, cols, cw, p)


@njit(parallel=True, **JIT_FAST)
def resize_parallel(x, out, rows, rw, cols, cw):
    """``resize_serial`` with the planes spread over threads."""
    for p in prange(x.shape[0]):
        _resize_plane(x, out, rows, rw, cols, cw, p)


@njit(**JIT_FAST)
def _resize_back_plane(grad, out, rows, rw, cols, cw, p):
    g = grad[p]
    dst = out[p]
    zero = rw[0, 0] * 0
    for i in range(dst.shape[0]):
        drow = dst[i]
        for j in range(drow.shape[0]):
            drow[j] = zero
    for i in range(g.shape[0]):
        grow = g[i]
        for a in range(rows.shape[1]):
            drow = dst[rows[i, a]]
            wr = rw[i, a]
            for j in range(grow.shape[0]):
                v = wr * grow[j]
                for b in range(cols.shape[1]):
                    drow[cols[j, b]] += cw[j, b] * v


@njit(**JIT_FAST)
def resize_backward_serial(grad, out, rows, rw, cols, cw):
    """The adjoint of ``resize_serial``: out[p, rows[i, a], cols[j, b]] += rw * cw * grad[p, i, j]."""
    for p in range(grad.shape[0]):
        _resize_back_plane(grad, out, rows, rw, cols, cw, p)


@njit(parallel=True, **JIT_FAST)
def resize_backward_parallel(grad, out, rows, rw, cols, cw):
    """``resize_backward_serial`` with the planes spread over threads."""
    for p in prange(grad.shape[0]):
        _resize_back_plane(grad, out, rows, rw, cols, cw, p)


# ---------------------------------------------------------------------------------------------
# Tap tables and wrappers
# ---------------------------------------------------------------------------------------------


def taps(in_size: int, out_size: int, mode: str, dtype: np.dtype,
         align_corners: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(index [out, T], weight [out, T])``: the input positions each output reads along one
    axis, torch's arithmetic (nearest: ``floor(dst * in/out)`` in float32; bilinear with
    ``align_corners=False``: ``src = max((dst + 0.5) * in/out - 0.5, 0)``; with
    ``align_corners=True``: ``src = dst * (in - 1) / (out - 1)``, 0 for a single output)."""
    if mode not in MODES:
        raise ValueError(f"interpolate: mode must be one of {MODES}, found {mode!r}")
    dtype = np.dtype(dtype)
    dst = np.arange(out_size)
    if mode == "nearest":
        scale = np.float32(in_size) / np.float32(out_size)
        src = np.floor(dst.astype(np.float32) * scale).astype(np.int64)
        index = np.minimum(src, in_size - 1).reshape(out_size, 1)
        return index, np.ones((out_size, 1), dtype)
    if align_corners:
        scale = dtype.type(in_size - 1) / dtype.type(out_size - 1) if out_size > 1 else dtype.type(0)
        real = scale * dst.astype(dtype)
    else:
        scale = dtype.type(in_size) / dtype.type(out_size)
        real = np.maximum(scale * (dst.astype(dtype) + dtype.type(0.5)) - dtype.type(0.5), 0)
    low = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam = np.clip(real - low, 0, 1).astype(dtype)
    high = np.minimum(low + 1, in_size - 1)
    return np.stack([low, high], axis=1), np.stack([1 - lam, lam], axis=1).astype(dtype)


def _tables(in_hw, out_hw, mode, cdt, align_corners=False):
    rows, rw = taps(in_hw[0], out_hw[0], mode, cdt, align_corners)
    cols, cw = taps(in_hw[1], out_hw[1], mode, cdt, align_corners)
    return rows, rw, cols, cw


def interpolate(x: np.ndarray, output_size: tuple[int, int], mode: str,
                align_corners: bool = False) -> np.ndarray:
    """Resize x [N, C, H, W] to [N, C, *output_size]; same dtype as x."""
    if x.ndim != 4:
        raise ValueError(f"interpolate: expected a 4-D input [N, C, H, W], found {x.shape}")
    n, c, h, w = x.shape
    oh, ow = int(output_size[0]), int(output_size[1])
    cdt = compute_dtype(x.dtype)
    out = np.empty((n * c, oh, ow), cdt)
    if out.size and h and w:
        xc = np.ascontiguousarray(x, dtype=cdt).reshape(n * c, h, w)
        kernel = resize_parallel if out.size >= PARALLEL_MIN_ELEMS else resize_serial
        kernel(xc, out, *_tables((h, w), (oh, ow), mode, cdt, align_corners))
    return out.reshape(n, c, oh, ow).astype(x.dtype, copy=False)


def interpolate_backward(x_shape: tuple[int, ...], grad: np.ndarray, mode: str,
                         align_corners: bool = False) -> np.ndarray:
    """Gradient of :func:`interpolate` w.r.t. its input of shape ``x_shape``, grad's dtype."""
    n, c, h, w = x_shape
    oh, ow = grad.shape[2], grad.shape[3]
    cdt = compute_dtype(grad.dtype)
    if not (oh and ow):
        return np.zeros(x_shape, grad.dtype)  # no output, no gradient
    out = np.empty((n * c, h, w), cdt)
    if out.size:
        g = np.ascontiguousarray(grad, dtype=cdt).reshape(n * c, oh, ow)
        big = max(out.size, g.size) >= PARALLEL_MIN_ELEMS
        kernel = resize_backward_parallel if big else resize_backward_serial
        kernel(g, out, *_tables((h, w), (oh, ow), mode, cdt, align_corners))
    return out.reshape(n, c, h, w).astype(grad.dtype, copy=False)
