"""Defaults for the 1-D pools, through the 2-D ones (burn-backend's ``ops/modules/pool.rs``:
``avg_pool1d_from_2d``, ``max_pool1d_with_indices_from_2d``, ...), and the adaptive max pool
without indices.

A ``[n, c, length]`` input is viewed as ``[n, c, 1, length]`` and pooled with a ``(1, k)``
kernel; the flat 2-D indices ``row * length + col`` are then the 1-D positions themselves
(``row`` is 0), so the max-pool indices need no translation.
"""

from __future__ import annotations

from minidl.backend.options import PoolOptions


def _options(kernel_size: int, stride: int | None, padding: int, dilation: int = 1,
             count_include_pad: bool = True, ceil_mode: bool = False) -> PoolOptions:
    return PoolOptions(kernel_size=(1, int(kernel_size)), stride=(1, int(stride or kernel_size)),
                       padding=(0, int(padding)), dilation=(1, int(dilation)),
                       count_include_pad=count_include_pad, ceil_mode=ceil_mode)


def _as_2d(B, x):
    n, c, length = x.shape
    return B.float_reshape(x, (n, c, 1, length))


def _as_1d(B, y):
    n, c, _, length = y.shape
    return B.float_reshape(y, (n, c, length))


def _int_as_1d(B, y):
    n, c, _, length = y.shape
    return B.int_reshape(y, (n, c, length))


def _int_as_2d(B, y):
    n, c, length = y.shape
    return B.int_reshape(y, (n, c, 1, length))


def max_pool1d_with_indices(B, x, kernel_size, stride, padding, dilation, ceil_mode):
    out, indices = B.max_pool2d_with_indices(_as_2d(B, x), _options(kernel_size, stride, padding, dilation,
                                                                     ceil_mode=ceil_mode))
    return _as_1d(B, out), _int_as_1d(B, indices)


def max_pool1d_with_indices_backward(B, x, kernel_size, stride, padding, dilation, ceil_mode,
                                     output_grad, indices):
    grad = B.max_pool2d_with_indices_backward(
        _as_2d(B, x), _options(kernel_size, stride, padding, dilation, ceil_mode=ceil_mode),
        _as_2d(B, output_grad), _int_as_2d(B, indices))
    return _as_1d(B, grad)


def avg_pool1d(B, x, kernel_size, stride, padding, count_include_pad, ceil_mode):
    options = _options(kernel_size, stride, padding, 1, count_include_pad, ceil_mode)
    return _as_1d(B, B.avg_pool2d(_as_2d(B, x), options))


def avg_pool1d_backward(B, x, output_grad, kernel_size, stride, padding, count_include_pad, ceil_mode):
    options = _options(kernel_size, stride, padding, 1, count_include_pad, ceil_mode)
    return _as_1d(B, B.avg_pool2d_backward(_as_2d(B, x), options, _as_2d(B, output_grad)))


def adaptive_avg_pool1d(B, x, output_size: int):
    return _as_1d(B, B.adaptive_avg_pool2d(_as_2d(B, x), (1, int(output_size))))


def adaptive_avg_pool1d_backward(B, x, output_grad):
    return _as_1d(B, B.adaptive_avg_pool2d_backward(_as_2d(B, x), _as_2d(B, output_grad)))


def adaptive_max_pool1d_with_indices(B, x, output_size: int):
    out, indices = B.adaptive_max_pool2d_with_indices(_as_2d(B, x), (1, int(output_size)))
    return _as_1d(B, out), _int_as_1d(B, indices)


def adaptive_max_pool1d_with_indices_backward(B, x, output_grad, indices):
    grad = B.adaptive_max_pool2d_with_indices_backward(_as_2d(B, x), _as_2d(B, output_grad),
                                                       _int_as_2d(B, indices))
    return _as_1d(B, grad)
