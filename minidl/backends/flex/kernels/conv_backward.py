"""conv2d's backward pieces: the gradients with respect to the input, the weight and the bias.

Mirrors burn-flex's ``conv2d_x_backward``, ``conv2d_weight_backward`` and
``conv2d_bias_backward`` (called by burn-autodiff's ``Conv2dWithBias`` / ``Conv2dNoBias``
backward step). Re-exported by :mod:`.conv`.

* input: a transposed convolution of the output gradient (what reached each input pixel),
  with the output padding that restores rows the strided forward never read;
* weight: per image and group, ``grad_out[n, g] [Kg, OH*OW] @ cols[n, g].T`` with the im2col
  rows of the input (a reduction over pixels, so the dot-product gemm runs long rows), summed
  over the images;
* bias: the output gradient summed over images and pixels, one kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._common import JIT_FAST, as_compute
from .conv import Pad4, Pair, _im2col_all, _pad4, _pair, _prepare, conv_transpose2d
from .gemm import batched_matmul


@njit(**JIT_FAST)
def bias_grad(grad_out, out):
    """out[k] = sum over n, h, w of grad_out[n, k, h, w] (conv2d's bias gradient)."""
    n_img, k_n = grad_out.shape[0], grad_out.shape[1]
    for k in range(k_n):
        s = out[k]  # the wrapper passes zeros (np.empty garbage could be NaN: NaN * 0 = NaN)
        for n in range(n_img):
            plane = grad_out[n, k]
            for i in range(plane.shape[0]):
                row = plane[i]
                for j in range(row.shape[0]):
                    s += row[j]
        out[k] = s


def conv2d_x_backward(
    grad_out: np.ndarray,
    weight: np.ndarray,
    x_shape: tuple[int, ...],
    stride: int | Pair = 1,
    padding: int | Pair | Pad4 = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
) -> np.ndarray:
    """Gradient of conv2d with respect to its input x (shape ``x_shape``): a transposed conv."""
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    pt, pb, pl, pr = _pad4(padding)
    kh, kw = weight.shape[2], weight.shape[3]
    oh, ow = grad_out.shape[2], grad_out.shape[3]
    # Rows of x that the forward never reached (stride remainder) get output padding.
    oph = x_shape[2] - ((oh - 1) * sh - pt - pb + dh * (kh - 1) + 1)
    opw = x_shape[3] - ((ow - 1) * sw - pl - pr + dw * (kw - 1) + 1)
    return conv_transpose2d(
        grad_out, weight, None, (sh, sw), (pt, pb, pl, pr), (oph, opw), (dh, dw), groups
    )


def conv2d_weight_backward(
    x: np.ndarray,
    grad_out: np.ndarray,
    weight_shape: tuple[int, ...],
    stride: int | Pair = 1,
    padding: int | Pair | Pad4 = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
) -> np.ndarray:
    """Gradient of conv2d with respect to its weight [K, C/groups, kh, kw].

    Per image and group, ``grad_out[n, g] [Kg, OH*OW] @ cols[n, g].T`` with the im2col rows
    ``cols[n, g]`` [R, OH*OW] (used transposed without a copy), summed over the images.
    """
    k_out, cg, kh, kw = weight_shape
    n_img = x.shape[0]
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    xpad, oh, ow, wp, parallel = _prepare(x, (kh, kw), (sh, sw), _pad4(padding), (dh, dw), groups)
    if grad_out.shape != (n_img, k_out, oh, ow):
        raise ValueError(
            f"conv2d_weight_backward: grad_out must have shape {(n_img, k_out, oh, ow)}, "
            f"found {grad_out.shape}"
        )
    r = cg * kh * kw
    kg = k_out // groups
    go = as_compute(grad_out).reshape(n_img, groups, kg, oh * ow)
    cols = _im2col_all(xpad, (kh, kw), (sh, sw), (dh, dw), oh, ow, wp, groups, parallel)
    cols = cols.reshape(n_img, groups, r, oh * ow)
    gw = np.empty((groups, kg, r), xpad.dtype)
    for g in range(groups):
        go_g = np.ascontiguousarray(go[:, g])
        cols_g = np.ascontiguousarray(cols[:, g])
        gw[g] = batched_matmul(go_g, cols_g.transpose(0, 2, 1)).sum(axis=0)
    return gw.reshape(weight_shape).astype(x.dtype, copy=False)


def conv2d_bias_backward(grad_out: np.ndarray) -> np.ndarray:
    """Gradient of conv2d with respect to its bias: grad_out summed over N, H and W."""
    go = as_compute(grad_out)
    out = np.zeros(go.shape[1], go.dtype)
    bias_grad(go, out)
    return out.astype(grad_out.dtype, copy=False)
