"""2-D pools over NCHW planes: max (values and flat indices, as torch's ``return_indices``)
with its backward, average (``count_include_pad``) with its backward, adaptive average with
its backward.

Mirrors burn-flex's ``max_pool2d_with_indices`` (+ ``_backward``), ``avg_pool2d``
(+ ``_backward``), ``adaptive_avg_pool2d`` (+ ``_backward``), and torch's
``adaptive_max_pool2d`` (burn has none; its backward is ``max_pool2d_backward``'s scatter).
``ceil_mode`` only changes the output size: windows are clipped to the input anyway. One task per (image, channel)
plane; planes are spread over threads when the work is large. Padding is virtual: windows
are clipped to the real input, nothing is copied.

Max pool follows torch exactly: each window is scanned keeping ``v > max or isnan(v)`` over
real elements, so the index is that of the first maximum or of the last NaN; a window that
holds only padding gives -inf and the first window position past the top/left padding.
An index is the flat position ``row * W + col`` in the input plane (int64).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from ._common import JIT_FAST, PARALLEL_MIN_ELEMS, compute_dtype
from .pool_2x2 import max_pool_2x2

Pair = tuple[int, int]


@njit(**JIT_FAST)
def _max_plane(x, out, idx, p, kh, kw, sh, sw, ph, pw, dh, dw):
    n_c = x.shape[1]
    n = p // n_c
    c = p - n * n_c
    h, w = x.shape[2], x.shape[3]
    plane = x[n, c]
    oplane = out[n, c]
    iplane = idx[n, c]
    for oy in range(out.shape[2]):
        y0 = oy * sh - ph
        while y0 < 0:
            y0 += dh
        for ox in range(out.shape[3]):
            x0 = ox * sw - pw
            while x0 < 0:
                x0 += dw
            m = -np.inf
            best = y0 * w + x0
            for ky in range(kh):
                yy = oy * sh - ph + ky * dh
                if yy < 0 or yy >= h:
                    continue
                row = plane[yy]
                for kx in range(kw):
                    xx = ox * sw - pw + kx * dw
                    if xx < 0 or xx >= w:
                        continue
                    v = row[xx]
                    if v > m or v != v:
                        m = v
                        best = yy * w + xx
            oplane[oy, ox] = m
            iplane[oy, ox] = best


@njit(**JIT_FAST)
def max_pool_serial(x, out, idx, kh, kw, sh, sw, ph, pw, dh, dw):
    """Max pool of x [N, C, H, W] into out [N, C, OH, OW] with flat input indices idx."""
    for p in range(x.shape[0] * x.shape[1]):
        _max_plane(x, out, idx, p, kh, kw, sh, sw, ph, pw, dh, dw)


@njit(parallel=True, **JIT_FAST)
def max_pool_parallel(x, out, idx, kh, kw, sh, sw, ph, pw, dh, dw):
    """``max_pool_serial`` with the planes spread over threads."""
    for p in prange(x.shape[0] * x.shape[1]):
        _max_plane(x, out, idx, p, kh, kw, sh, sw, ph, pw, dh, dw)


@njit(**JIT_FAST)
def scatter_by_index(grad_out, idx, grad_in):
    """grad_in[n, c, idx[n, c, i]] += grad_out[n, c, i] (planes flattened), from zero. Returns
    how many indices were outside the plane (skipped; the caller raises when any was)."""
    bad = 0
    size = grad_in.shape[2]
    for n in range(grad_out.shape[0]):
        for c in range(grad_out.shape[1]):
            g = grad_out[n, c]
            ii = idx[n, c]
            dst = grad_in[n, c]
            for i in range(dst.shape[0]):
                dst[i] = 0
            for i in range(g.shape[0]):
                j = ii[i]
                if 0 <= j < size:
                    dst[j] += g[i]
                else:
                    bad += 1
    return bad


@njit(**JIT_FAST)
def _avg_plane(x, out, p, kh, kw, sh, sw, ph, pw, include_pad, backward):
    # Forward: out = window means of x. Backward (x is grad_out, out is grad_in): each
    # gradient is spread evenly over its window.
    n_c = x.shape[1]
    n = p // n_c
    c = p - n * n_c
    if backward:
        h, w = out.shape[2], out.shape[3]
        oh_n, ow_n = x.shape[2], x.shape[3]
        gin = out[n, c]
        for i in range(h):
            for j in range(w):
                gin[i, j] = 0
    else:
        h, w = x.shape[2], x.shape[3]
        oh_n, ow_n = out.shape[2], out.shape[3]
    for oy in range(oh_n):
        y0 = oy * sh - ph
        y1 = y0 + kh
        ya, yb = max(y0, 0), min(y1, h)
        for ox in range(ow_n):
            x0 = ox * sw - pw
            x1 = x0 + kw
            xa, xb = max(x0, 0), min(x1, w)
            if include_pad:
                cnt = (min(y1, h + ph) - y0) * (min(x1, w + pw) - x0)
            else:
                cnt = (yb - ya) * (xb - xa)
            if backward:
                g = x[n, c, oy, ox] / cnt
                for yy in range(ya, yb):
                    for xx in range(xa, xb):
                        out[n, c, yy, xx] += g
            else:
                s = 0.0  # float64 accumulator: windows are short, exactness is cheap
                for yy in range(ya, yb):
                    for xx in range(xa, xb):
                        s += x[n, c, yy, xx]
                out[n, c, oy, ox] = s / cnt


@njit(**JIT_FAST)
def avg_pool_serial(x, out, kh, kw, sh, sw, ph, pw, include_pad, backward):
    """Average pool (or its backward, then x is the output gradient) plane by plane."""
    for p in range(x.shape[0] * x.shape[1]):
        _avg_plane(x, out, p, kh, kw, sh, sw, ph, pw, include_pad, backward)


@njit(parallel=True, **JIT_FAST)
def avg_pool_parallel(x, out, kh, kw, sh, sw, ph, pw, include_pad, backward):
    """``avg_pool_serial`` with the planes spread over threads."""
    for p in prange(x.shape[0] * x.shape[1]):
        _avg_plane(x, out, p, kh, kw, sh, sw, ph, pw, include_pad, backward)


@njit(**JIT_FAST)
def _adaptive_plane(x, out, p, backward):
    # Bin i of an axis of size s into o bins covers [floor(i*s/o), ceil((i+1)*s/o)).
    n_c = x.shape[1]
    n = p // n_c
    c = p - n * n_c
    if backward:
        h, w = out.shape[2], out.shape[3]
        oh_n, ow_n = x.shape[2], x.shape[3]
        for i in range(h):
            for j in range(w):
                out[n, c, i, j] = 0
    else:
        h, w = x.shape[2], x.shape[3]
        oh_n, ow_n = out.shape[2], out.shape[3]
    for oy in range(oh_n):
        ya = (oy * h) // oh_n
        yb = -((-(oy + 1) * h) // oh_n)
        for ox in range(ow_n):
            xa = (ox * w) // ow_n
            xb = -((-(ox + 1) * w) // ow_n)
            cnt = (yb - ya) * (xb - xa)
            if backward:
                g = x[n, c, oy, ox] / cnt
                for yy in range(ya, yb):
                    for xx in range(xa, xb):
                        out[n, c, yy, xx] += g
            else:
                s = 0.0  # float64 accumulator
                for yy in range(ya, yb):
                    for xx in range(xa, xb):
                        s += x[n, c, yy, xx]
                out[n, c, oy, ox] = s / cnt


@njit(**JIT_FAST)
def _adaptive_max_plane(x, out, idx, p):
    # torch's bins, scanned keeping `v > max or isnan(v)`: the first maximum or the last NaN
    n_c = x.shape[1]
    n = p // n_c
    c = p - n * n_c
    h, w = x.shape[2], x.shape[3]
    oh_n, ow_n = out.shape[2], out.shape[3]
    for oy in range(oh_n):
        ya = (oy * h) // oh_n
        yb = -((-(oy + 1) * h) // oh_n)
        for ox in range(ow_n):
            xa = (ox * w) // ow_n
            xb = -((-(ox + 1) * w) // ow_n)
            m = x[n, c, ya, xa]
            best = ya * w + xa
            for yy in range(ya, yb):
                for xx in range(xa, xb):
                    v = x[n, c, yy, xx]
                    if v > m or v != v:
                        m = v
                        best = yy * w + xx
            out[n, c, oy, ox] = m
            idx[n, c, oy, ox] = best


@njit(**JIT_FAST)
def adaptive_max_serial(x, out, idx):
    """Adaptive max pool of x [N, C, H, W] into out [N, C, OH, OW] with flat input indices."""
    for p in range(x.shape[0] * x.shape[1]):
        _adaptive_max_plane(x, out, idx, p)


@njit(parallel=True, **JIT_FAST)
def adaptive_max_parallel(x, out, idx):
    """``adaptive_max_serial`` with the planes spread over threads."""
    for p in prange(x.shape[0] * x.shape[1]):
        _adaptive_max_plane(x, out, idx, p)


@njit(**JIT_FAST)
def adaptive_avg_serial(x, out, backward):
    """Adaptive average pool (or its backward, x then the output gradient), plane by plane."""
    for p in range(x.shape[0] * x.shape[1]):
        _adaptive_plane(x, out, p, backward)


@njit(parallel=True, **JIT_FAST)
def adaptive_avg_parallel(x, out, backward):
    """``adaptive_avg_serial`` with the planes spread over threads."""
    for p in prange(x.shape[0] * x.shape[1]):
        _adaptive_plane(x, out, p, backward)


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def _pair(v: int | Pair | None, default: Pair | None = None) -> Pair:
    if v is None:
        assert default is not None
        return default
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _out_size(size: int, k: int, s: int, p: int, d: int = 1, ceil_mode: bool = False) -> int:
    # torch's pooling_output_shape: with ceil_mode the last window may hang past the input's
    # end, but must start inside the input or its left padding
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _prep(x: np.ndarray, name: str) -> np.ndarray:
    if x.ndim != 4:
        raise ValueError(f"{name}: expected a 4-D NCHW array, found shape {x.shape}")
    return np.ascontiguousarray(x, dtype=compute_dtype(x.dtype))


_F32, _I64 = np.dtype(np.float32), np.dtype(np.int64)


@functools.lru_cache(maxsize=256)
def _two_by_two(shape, kernel, stride, padding, dilation, ceil_mode) -> tuple[int, ...] | None:
    """The output shape when :func:`max_pool2d` of a ``shape`` input with these options runs
    ``max_pool_2x2`` (whole 2x2 windows, stride 2, no padding, small work), else None."""
    if len(shape) != 4:
        return None
    kh, kw = _pair(kernel)
    sh, sw = _pair(stride, (kh, kw))
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    if (kh, kw, sh, sw, ph, pw, dh, dw) != (2, 2, 2, 2, 0, 0, 1, 1):
        return None
    n, c, h, w = shape
    oh, ow = _out_size(h, kh, sh, ph, dh, ceil_mode), _out_size(w, kw, sw, pw, dw, ceil_mode)
    size = n * c * max(oh, 0) * max(ow, 0)
    if not size or size * kh * kw >= PARALLEL_MIN_ELEMS or 2 * oh > h or 2 * ow > w:
        return None
    return (n, c, oh, ow)


def max_pool2d(
    x: np.ndarray,
    kernel: int | Pair,
    stride: int | Pair | None = None,
    padding: int | Pair = 0,
    dilation: int | Pair = 1,
    ceil_mode: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, indices)`` of a 2-D max pool (stride defaults to the kernel, as torch).
    Windows are clipped to the input, so ``ceil_mode`` only changes the output size."""
    if x.dtype is _F32 and x.flags.c_contiguous:
        # a speed trick (ARCHITECTURE.md, "Where speed tricks may live"): a CNN's 2x2 pools
        # ask the same question every step; the answer kept, its kernel called at once
        try:
            out_shape = _two_by_two(x.shape, kernel, stride, padding, dilation, ceil_mode)
        except TypeError:  # an option given as a list (unhashable): the general code below
            out_shape = None
        if out_shape is not None:
            out, idx = np.empty(out_shape, _F32), np.empty(out_shape, np.int64)
            max_pool_2x2(x, out, idx)
            return out, idx
    kh, kw = _pair(kernel)
    sh, sw = _pair(stride, (kh, kw))
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    if 2 * ph > kh or 2 * pw > kw:
        raise ValueError(f"max_pool2d: padding {(ph, pw)} must be at most half the kernel")
    xc = _prep(x, "max_pool2d")
    n, c, h, w = xc.shape
    oh, ow = _out_size(h, kh, sh, ph, dh, ceil_mode), _out_size(w, kw, sw, pw, dw, ceil_mode)
    out = np.empty((n, c, max(oh, 0), max(ow, 0)), xc.dtype)
    idx = np.empty(out.shape, np.int64)
    small = out.size * kh * kw < PARALLEL_MIN_ELEMS
    if out.size and small and (kh, kw, sh, sw, ph, pw, dh, dw) == (2, 2, 2, 2, 0, 0, 1, 1) \
            and 2 * oh <= h and 2 * ow <= w:
        max_pool_2x2(xc, out, idx)  # whole 2x2 windows: branch-free (pool_2x2.py)
    elif out.size:
        kern = max_pool_serial if small else max_pool_parallel
        kern(xc, out, idx, kh, kw, sh, sw, ph, pw, dh, dw)
    return out.astype(x.dtype, copy=False), idx


def max_pool2d_backward(
    grad_out: np.ndarray, indices: np.ndarray, x_shape: tuple[int, ...]
) -> np.ndarray:
    """Gradient of max_pool2d for its input: each output gradient added at its index."""
    n, c, h, w = x_shape
    if grad_out.dtype is _F32 and grad_out.flags.c_contiguous:  # the usual case: no NumPy call
        g = grad_out.reshape(n, c, -1)
    else:
        g = np.ascontiguousarray(grad_out, dtype=compute_dtype(grad_out.dtype)).reshape(n, c, -1)
    if indices.dtype is _I64 and indices.flags.c_contiguous:
        ii = indices.reshape(n, c, -1)
    else:
        ii = np.ascontiguousarray(indices, dtype=np.int64).reshape(n, c, -1)
    out = np.empty((n, c, h * w), g.dtype)
    if scatter_by_index(g, ii, out):  # the kernel checks each index as it goes
        raise IndexError(f"max_pool2d_backward: index out of range [0, {h * w})")
    return out.reshape(x_shape).astype(grad_out.dtype, copy=False)


def avg_pool2d(
    x: np.ndarray,
    kernel: int | Pair,
    stride: int | Pair | None = None,
    padding: int | Pair = 0,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
) -> np.ndarray:
    """2-D average pool; ``count_include_pad`` divides by the window's part inside the padded
    input (the whole window, unless a ``ceil_mode`` window hangs past it), else by the number
    of real elements in it (torch's flags)."""
    kh, kw = _pair(kernel)
    sh, sw = _pair(stride, (kh, kw))
    ph, pw = _pair(padding)
    xc = _prep(x, "avg_pool2d")
    n, c, h, w = xc.shape
    out = np.empty((n, c, _out_size(h, kh, sh, ph, 1, ceil_mode), _out_size(w, kw, sw, pw, 1, ceil_mode)),
                   xc.dtype)
    if out.size:
        kern = avg_pool_parallel if out.size * kh * kw >= PARALLEL_MIN_ELEMS else avg_pool_serial
        kern(xc, out, kh, kw, sh, sw, ph, pw, count_include_pad, False)
    return out.astype(x.dtype, copy=False)


def avg_pool2d_backward(
    grad_out: np.ndarray,
    x_shape: tuple[int, ...],
    kernel: int | Pair,
    stride: int | Pair | None = None,
    padding: int | Pair = 0,
    count_include_pad: bool = True,
) -> np.ndarray:
    """Gradient of avg_pool2d for its input: each output gradient spread over its window."""
    kh, kw = _pair(kernel)
    sh, sw = _pair(stride, (kh, kw))
    ph, pw = _pair(padding)
    g = _prep(grad_out, "avg_pool2d_backward")
    out = np.empty(tuple(x_shape), g.dtype)
    if out.size:
        work = g.size * kh * kw
        kern = avg_pool_parallel if work >= PARALLEL_MIN_ELEMS else avg_pool_serial
        kern(g, out, kh, kw, sh, sw, ph, pw, count_include_pad, True)
    return out.astype(grad_out.dtype, copy=False)


def adaptive_avg_pool2d(x: np.ndarray, output_size: int | Pair) -> np.ndarray:
    """Adaptive average pool to ``output_size``: torch's bins (floor start, ceil end)."""
    oh, ow = _pair(output_size)
    xc = _prep(x, "adaptive_avg_pool2d")
    out = np.empty((xc.shape[0], xc.shape[1], oh, ow), xc.dtype)
    if out.size:
        kern = adaptive_avg_parallel if xc.size >= PARALLEL_MIN_ELEMS else adaptive_avg_serial
        kern(xc, out, False)
    return out.astype(x.dtype, copy=False)


def adaptive_avg_pool2d_backward(grad_out: np.ndarray, x_shape: tuple[int, ...]) -> np.ndarray:
    """Gradient of adaptive_avg_pool2d for its input (shape ``x_shape``)."""
    g = _prep(grad_out, "adaptive_avg_pool2d_backward")
    out = np.empty(tuple(x_shape), g.dtype)
    if out.size:
        kern = adaptive_avg_parallel if out.size >= PARALLEL_MIN_ELEMS else adaptive_avg_serial
        kern(g, out, True)
    return out.astype(grad_out.dtype, copy=False)


def adaptive_max_pool2d(x: np.ndarray, output_size: int | Pair) -> tuple[np.ndarray, np.ndarray]:
    """``(values, indices)`` of an adaptive max pool to ``output_size`` (torch's bins); an
    index is the flat ``row * W + col`` in the input plane, int64."""
    oh, ow = _pair(output_size)
    xc = _prep(x, "adaptive_max_pool2d")
    out = np.empty((xc.shape[0], xc.shape[1], oh, ow), xc.dtype)
    idx = np.empty(out.shape, np.int64)
    if out.size:
        if xc.shape[2] == 0 or xc.shape[3] == 0:
            raise ValueError(f"adaptive_max_pool2d: expected a non-empty plane, found {x.shape}")
        kern = adaptive_max_parallel if xc.size >= PARALLEL_MIN_ELEMS else adaptive_max_serial
        kern(xc, out, idx)
    return out.astype(x.dtype, copy=False), idx
