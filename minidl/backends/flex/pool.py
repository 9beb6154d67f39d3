"""Flex's 2-D pools (burn-flex's ``max_pool2d`` (+ indices, + backward), ``avg_pool2d``
(+ backward), ``adaptive_avg_pool2d`` (+ backward); kernels:
:mod:`minidl.backends.flex.kernels.pool`).

Padding is virtual in the kernels (windows are clipped to the real input, nothing is
copied). One rule is Flex's own, not the kernel's: a max-pool window made only of padding
passes no gradient back (its index, torch's fallback, may even name an element outside the
window, or past the plane) — those windows are known from the options alone; the ``where``
kernel zeroes their gradients (and points them at position 0) before the scatter.
"""

from __future__ import annotations

import numpy as np

from minidl.backend import PoolOptions
from minidl.backends.flex.kernels import elementwise as ew
from minidl.backends.flex.kernels import pool
from minidl.backends.flex.kernels.copy import cast, contiguous


def _has_real(size: int, out: int, k: int, s: int, p: int, d: int) -> np.ndarray:
    """Per output position along one axis: does its window hold a real (non-padding) element?"""
    starts = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d
    return ((starts >= 0) & (starts < size)).any(axis=1)


def _padding_only_windows(x_shape, out_hw, options: PoolOptions) -> np.ndarray | None:
    """A [oh, ow] bool mask of the windows that hold only padding, or None when there is none."""
    h, w = x_shape[2:]
    (kh, kw), (sh, sw) = options.kernel_size, options.stride
    (ph, pw), (dh, dw) = options.padding, options.dilation
    rows = _has_real(h, out_hw[0], kh, sh, ph, dh)
    cols = _has_real(w, out_hw[1], kw, sw, pw, dw)
    if rows.all() and cols.all():
        return None
    return ~(rows[:, None] & cols[None, :])


class FlexPoolOps:
    """Max, average and adaptive-average pools of Flex, each one pool kernel."""

    @classmethod
    def max_pool2d(cls, x, options: PoolOptions):
        return cls.max_pool2d_with_indices(x, options)[0]

    @classmethod
    def max_pool2d_with_indices(cls, x, options: PoolOptions):
        """``(output, indices)``; an index is the flat ``row * W + col`` of the first maximum
        (or the last NaN) of its window in the input plane, int64 (torch's convention)."""
        return pool.max_pool2d(contiguous(x), options.kernel_size, options.stride,
                               options.padding, options.dilation)

    @classmethod
    def max_pool2d_with_indices_backward(cls, x, options: PoolOptions, output_grad, indices):
        """Each output gradient added at the input position its maximum came from."""
        grad, indices = contiguous(output_grad), contiguous(indices)
        empty = _padding_only_windows(x.shape, grad.shape[2:], options)
        if empty is not None:  # a zero gradient, sent to position 0 of the plane
            grad, indices = ew.where(empty, 0.0, grad), ew.where(empty, 0, indices)
        dx = pool.max_pool2d_backward(grad, indices, x.shape)
        return dx if dx.dtype == x.dtype else cast(dx, x.dtype)

    @classmethod
    def avg_pool2d(cls, x, options: PoolOptions):
        """Window means (dilation does not apply to average pools, as torch)."""
        return pool.avg_pool2d(contiguous(x), options.kernel_size, options.stride, options.padding,
                               options.count_include_pad)

    @classmethod
    def avg_pool2d_backward(cls, x, options: PoolOptions, output_grad):
        dx = pool.avg_pool2d_backward(contiguous(output_grad), x.shape, options.kernel_size,
                                      options.stride, options.padding, options.count_include_pad)
        return dx if dx.dtype == x.dtype else cast(dx, x.dtype)

    @classmethod
    def adaptive_avg_pool2d(cls, x, output_size: tuple[int, int]):
        return pool.adaptive_avg_pool2d(contiguous(x), tuple(output_size))

    @classmethod
    def adaptive_avg_pool2d_backward(cls, x, output_grad):
        dx = pool.adaptive_avg_pool2d_backward(contiguous(output_grad), x.shape)
        return dx if dx.dtype == x.dtype else cast(dx, x.dtype)
