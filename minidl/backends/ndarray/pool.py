"""NdArray's 2-D pools in NumPy: max (+ indices, + backward), average (+ backward), adaptive
average (+ backward) and adaptive max (+ indices, + backward) — burn-ndarray's
``ops/maxpool.rs``, ``avgpool.rs``, ``adaptive_avgpool.rs`` (burn has no adaptive max pool; the
op is torch's ``adaptive_max_pool2d``). ``ceil_mode`` pads the bottom and right with what its
last windows reach past the input (-inf for max, nothing counted for average).

The windows come from the same :func:`~minidl.backends.ndarray.conv.unfold` view the
convolutions use; the backward passes put gradients back with
:func:`~minidl.backends.ndarray.conv.fold` or ``np.add.at``.
"""

from __future__ import annotations

import numpy as np

from minidl.backend import PoolOptions
from minidl.backends.cpu_common import INDEX_DTYPE, indices_in_range
from minidl.backends.ndarray.conv import fold, pad2d, unfold
from minidl.backends.ndarray.float_ops import compute, like

NO_DILATION = (1, 1)


def _pads(x_shape, options: PoolOptions) -> tuple[int, int, int, int]:
    """``(top, bottom, left, right)``: the padding, plus what a ``ceil_mode`` window reaches."""
    return options.pads(tuple(x_shape[2:]))


def _avg_divisor(x: np.ndarray, options: PoolOptions) -> np.ndarray | int:
    """What each window's sum is divided by (torch's rule): with ``count_include_pad`` the part
    of the window inside the padded input — the full kernel area, except for a ``ceil_mode``
    window hanging past the padding —, else the number of real (not padding) elements."""
    kh, kw = options.kernel_size
    top, bottom, left, right = _pads(x.shape, options)
    ph, pw = options.padding
    if options.count_include_pad and (bottom, right) == (ph, pw):
        return kh * kw
    dtype = compute(x).dtype
    if options.count_include_pad:  # padded input counts, the ceil_mode overhang does not
        ones = pad2d(np.ones((1, 1, x.shape[2] + 2 * ph, x.shape[3] + 2 * pw), dtype=dtype),
                     (0, bottom - ph, 0, right - pw))
    else:
        ones = pad2d(np.ones((1, 1, *x.shape[2:]), dtype=dtype), (top, bottom, left, right))
    return unfold(ones, options.kernel_size, options.stride, NO_DILATION).sum(axis=(4, 5))


def _bins(size: int, out: int) -> list[tuple[int, int]]:
    """torch's adaptive-pool bins: bin ``i`` covers ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


class NdArrayPoolOps:
    """Max, average, adaptive-average and adaptive-max 2-D pools over NCHW float primitives."""

    @classmethod
    def max_pool2d(cls, x, options: PoolOptions):
        """The largest value of each (padded with -inf, dilated, strided) window."""
        padded = pad2d(x, _pads(x.shape, options), -np.inf)
        return unfold(padded, options.kernel_size, options.stride, options.dilation).max(axis=(4, 5))

    @classmethod
    def max_pool2d_with_indices(cls, x, options: PoolOptions):
        """``(output, indices)``; an index is the flat position ``row * W + col`` of the maximum
        in its input plane (torch's ``return_indices`` convention), int64.

        torch scans each window keeping ``val > max or isnan(val)``, over real elements only
        (never padding); so the index is the first maximum, or the last NaN of the window. A
        window made only of padding has neither; torch then reports the first window position
        past the top/left padding, and so do we.
        """
        n, c, h, w = x.shape
        (sh, sw), (ph, pw), (dh, dw) = options.stride, options.padding, options.dilation
        pads, window = _pads(x.shape, options), (options.kernel_size, options.stride, options.dilation)
        flat_windows = unfold(pad2d(x, pads, -np.inf), *window)
        oh, ow, kh, kw = flat_windows.shape[2:]
        flat = flat_windows.reshape(n, c, oh, ow, kh * kw)
        out = flat.max(axis=-1)
        real = unfold(pad2d(np.ones((1, 1, h, w), dtype=bool), pads, False), *window)
        real = real.reshape(1, 1, oh, ow, kh * kw)
        first_max = real & (flat == out[..., None])
        nans = real & np.isnan(flat)
        last_nan = kh * kw - 1 - nans[..., ::-1].argmax(axis=-1)
        started = np.zeros((1, 1, h + pads[0] + pads[1], w + pads[2] + pads[3]), dtype=bool)
        started[..., ph:, pw:] = True  # torch's fallback: past the top and left padding
        fallback = unfold(started, *window).reshape(1, 1, oh, ow, kh * kw).argmax(axis=-1)
        k = np.where(nans.any(axis=-1), last_nan, np.where(first_max.any(axis=-1), first_max.argmax(axis=-1), fallback))
        ki, kj = np.divmod(k, kw)
        rows = np.arange(oh).reshape(oh, 1) * sh - ph + ki * dh
        cols = np.arange(ow).reshape(1, ow) * sw - pw + kj * dw
        return out, (rows * w + cols).astype(INDEX_DTYPE)

    @classmethod
    def max_pool2d_with_indices_backward(cls, x, options: PoolOptions, output_grad, indices):
        """Each output gradient goes to the input position its maximum came from (added, since
        overlapping windows can share a maximum). A window made only of padding passes nothing
        back (its index, torch's fallback, may even name an element outside the window)."""
        n, c, h, w = x.shape
        window = (options.kernel_size, options.stride, options.dilation)
        real = unfold(pad2d(np.ones((1, 1, h, w), dtype=bool), _pads(x.shape, options), False), *window)
        grad_out = np.where(real.any(axis=(4, 5)), compute(output_grad), 0)
        inside = (indices >= 0) & (indices < h * w)
        grad = np.zeros((n, c, h * w + 1), dtype=compute(x).dtype)  # the extra slot takes the rest
        batch = np.arange(n).reshape(n, 1, 1, 1)
        channel = np.arange(c).reshape(1, c, 1, 1)
        np.add.at(grad, (batch, channel, np.where(inside, indices, h * w)), grad_out)
        return like(grad[:, :, : h * w].reshape(n, c, h, w), x.dtype)

    @classmethod
    def avg_pool2d(cls, x, options: PoolOptions):
        """The mean of each zero-padded window (dilation does not apply to average pools)."""
        padded = pad2d(compute(x), _pads(x.shape, options))
        sums = unfold(padded, options.kernel_size, options.stride, NO_DILATION).sum(axis=(4, 5))
        return like(sums / _avg_divisor(x, options), x.dtype)

    @classmethod
    def avg_pool2d_backward(cls, x, options: PoolOptions, output_grad):
        """Each output gradient, divided like the forward, spread evenly over its window."""
        n, c, h, w = x.shape
        share = compute(output_grad) / _avg_divisor(x, options)
        cols = np.broadcast_to(share[..., None, None], (*share.shape, *options.kernel_size))
        top, bottom, left, right = _pads(x.shape, options)
        padded = fold(cols, (h + top + bottom, w + left + right), options.stride, NO_DILATION)
        return like(padded[:, :, top : top + h, left : left + w], x.dtype)

    @classmethod
    def adaptive_avg_pool2d(cls, x, output_size: tuple[int, int]):
        """Average pool to ``output_size`` with torch's bins (they may overlap by one)."""
        n, c, h, w = x.shape
        source = compute(x)
        out = np.empty((n, c, *output_size), dtype=source.dtype)
        for i, (r0, r1) in enumerate(_bins(h, output_size[0])):
            for j, (c0, c1) in enumerate(_bins(w, output_size[1])):
                out[:, :, i, j] = source[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
        return like(out, x.dtype)

    @classmethod
    def adaptive_avg_pool2d_backward(cls, x, output_grad):
        """Each output gradient spread evenly over its bin (bins may overlap: contributions add)."""
        n, c, h, w = x.shape
        grad = compute(output_grad)
        oh, ow = grad.shape[2:]
        out = np.zeros((n, c, h, w), dtype=grad.dtype)
        for i, (r0, r1) in enumerate(_bins(h, oh)):
            for j, (c0, c1) in enumerate(_bins(w, ow)):
                out[:, :, r0:r1, c0:c1] += grad[:, :, i, j, None, None] / ((r1 - r0) * (c1 - c0))
        return like(out, x.dtype)

    @classmethod
    def adaptive_max_pool2d_with_indices(cls, x, output_size: tuple[int, int]):
        """``(output, indices)``: the maximum of each of torch's bins and its flat position
        ``row * W + col`` in the input plane; the first maximum, or the last NaN, of the bin
        (torch scans keeping ``val > max or isnan(val)``)."""
        n, c, h, w = x.shape
        oh, ow = output_size
        out = np.empty((n, c, oh, ow), dtype=x.dtype)
        indices = np.empty((n, c, oh, ow), dtype=INDEX_DTYPE)
        for i, (r0, r1) in enumerate(_bins(h, oh)):
            for j, (c0, c1) in enumerate(_bins(w, ow)):
                window = x[:, :, r0:r1, c0:c1].reshape(n, c, -1)
                nan = np.isnan(window)
                size = window.shape[-1]
                last_nan = size - 1 - nan[..., ::-1].argmax(axis=-1)
                k = np.where(nan.any(axis=-1), last_nan, window.argmax(axis=-1))
                out[:, :, i, j] = np.take_along_axis(window, k[..., None], axis=-1)[..., 0]
                rows, cols = np.divmod(k, c1 - c0)
                indices[:, :, i, j] = (r0 + rows) * w + c0 + cols
        return out, indices

    @classmethod
    def adaptive_max_pool2d_with_indices_backward(cls, x, output_grad, indices):
        """Each output gradient added at the input position its maximum came from (bins may
        overlap, so two outputs can share a position)."""
        n, c, h, w = x.shape
        grad = np.zeros((n, c, h * w), dtype=compute(x).dtype)
        batch = np.arange(n).reshape(n, 1, 1, 1)
        channel = np.arange(c).reshape(1, c, 1, 1)
        np.add.at(grad, (batch, channel, indices_in_range("adaptive_max_pool2d_backward", indices, h * w)),
                  compute(output_grad))
        return like(grad.reshape(n, c, h, w), x.dtype)
