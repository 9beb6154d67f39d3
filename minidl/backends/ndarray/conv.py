"""NdArray's convolutions: conv2d (+ input and weight gradients) and conv_transpose2d, in NumPy
(burn-ndarray's ``ops/conv.rs``).

All of them are one idea, *im2col*: :func:`unfold` views every receptive field of the padded
input as a ``[..., out_h, out_w, k_h, k_w]`` array (no copy: ``sliding_window_view``), one
``einsum`` contracts it with the weight, and :func:`fold` is the way back, adding each window's
values into the positions it came from. conv2d is unfold + einsum; its input gradient is
einsum + fold; a transposed convolution is the input gradient of a convolution, plus a bias.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minidl.backend import ConvOptions, ConvTransposeOptions
from minidl.backends.ndarray.float_ops import compute, like

Pair = tuple[int, int]


def pad2d(x: np.ndarray, pads: tuple[int, int, int, int], value: float = 0.0) -> np.ndarray:
    """``x`` [n, c, h, w] padded by ``(top, bottom, left, right)`` with ``value``."""
    top, bottom, left, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def unfold(x: np.ndarray, kernel: Pair, stride: Pair, dilation: Pair) -> np.ndarray:
    """A view ``[n, c, out_h, out_w, k_h, k_w]`` of every (dilated, strided) window of ``x``."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    if x.shape[2] < span[0] or x.shape[3] < span[1]:
        raise ValueError(
            f"conv/pool: the (padded) input is {x.shape[2]}x{x.shape[3]}, smaller than the "
            f"dilated kernel {span[0]}x{span[1]}: the output would be empty"
        )
    windows = sliding_window_view(x, span, axis=(2, 3))
    return windows[:, :, ::sh, ::sw, ::dh, ::dw]


def fold(cols: np.ndarray, size: Pair, stride: Pair, dilation: Pair) -> np.ndarray:
    """The adjoint of :func:`unfold`: ``cols`` ``[..., out_h, out_w, k_h, k_w]`` added back into
    a zero ``[..., *size]`` image, each window at the place ``unfold`` read it from."""
    *lead, oh, ow, kh, kw = cols.shape
    (sh, sw), (dh, dw) = stride, dilation
    image = np.zeros((*lead, *size), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            columns = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            image[..., rows, columns] += cols[..., i, j]
    return image


def _grouped_weight(weight: np.ndarray, groups: int) -> np.ndarray:
    """conv2d's ``[c_out, c_in/g, kh, kw]`` as ``[g, c_out/g, c_in/g, kh, kw]``."""
    c_out, c_per_group, kh, kw = weight.shape
    return compute(weight).reshape(groups, c_out // groups, c_per_group, kh, kw)


def _grouped_cols(x: np.ndarray, weight: np.ndarray, options: ConvOptions) -> np.ndarray:
    """The unfolded padded input as ``[n, g, c_in/g, out_h, out_w, kh, kw]``."""
    cols = unfold(pad2d(compute(x), options.pads), weight.shape[2:], options.stride, options.dilation)
    n, c_in, oh, ow, kh, kw = cols.shape
    g = options.groups
    return cols.reshape(n, g, c_in // g, oh, ow, kh, kw)


class NdArrayConvOps:
    """conv2d, its input/weight gradients and conv_transpose2d. ``conv1d`` is not here: it is
    burn's default (a conv2d of height 1), inherited from ``ModuleOps``."""

    @classmethod
    def conv2d(cls, x, weight, bias, options: ConvOptions):
        """NCHW convolution: unfold the padded input, contract (channel, kh, kw) per group."""
        cols = _grouped_cols(x, weight, options)
        out = np.einsum("ngchwij,gocij->ngohw", cols, _grouped_weight(weight, options.groups), optimize=True)
        n, g, c_out_g, oh, ow = out.shape
        out = out.reshape(n, g * c_out_g, oh, ow)
        if bias is not None:
            out = out + compute(bias).reshape(1, -1, 1, 1)
        return like(out, x.dtype)

    @classmethod
    def conv2d_x_backward(cls, x, weight, output_grad, options: ConvOptions):
        """Each output gradient flows back through the weights into its window (fold)."""
        n, c_in, h, w = x.shape
        g = options.groups
        grad = compute(output_grad)
        grad = grad.reshape(n, g, grad.shape[1] // g, *grad.shape[2:])
        cols = np.einsum("ngohw,gocij->ngchwij", grad, _grouped_weight(weight, g), optimize=True)
        top, bottom, left, right = options.pads
        cols = cols.reshape(n, c_in, *cols.shape[3:])
        padded = fold(cols, (h + top + bottom, w + left + right), options.stride, options.dilation)
        return like(padded[:, :, top : top + h, left : left + w], x.dtype)

    @classmethod
    def conv2d_weight_backward(cls, x, weight, output_grad, options: ConvOptions):
        """Each weight's gradient: its input windows times the output gradients, summed."""
        cols = _grouped_cols(x, weight, options)
        n, g = cols.shape[:2]
        grad = compute(output_grad)
        grad = grad.reshape(n, g, grad.shape[1] // g, *grad.shape[2:])
        dweight = np.einsum("ngchwij,ngohw->gocij", cols, grad, optimize=True)
        return like(dweight.reshape(weight.shape), weight.dtype)

    @classmethod
    def conv_transpose2d(cls, x, weight, bias, options: ConvTransposeOptions):
        """Every input pixel paints a kernel-sized patch (weighted by ``weight``
        ``[c_in, c_out/g, kh, kw]``) into the output, ``stride`` apart; ``padding`` is then cut
        off each side and ``padding_out`` extends the bottom/right (torch's semantics)."""
        n, c_in, h, w = x.shape
        _, c_out_g, kh, kw = weight.shape
        g = options.groups
        (sh, sw), (ph, pw), (dh, dw) = options.stride, options.padding, options.dilation
        # torch's output size, written out here on purpose (Wgpu's module_ops has the same line):
        # NdArray is the reference the suite checks the other backends against, so it keeps its
        # own formulas instead of sharing one that a wrong copy would then agree with
        out_h = (h - 1) * sh - 2 * ph + dh * (kh - 1) + options.padding_out[0] + 1
        out_w = (w - 1) * sw - 2 * pw + dw * (kw - 1) + options.padding_out[1] + 1
        xs = compute(x).reshape(n, g, c_in // g, h, w)
        ws = compute(weight).reshape(g, c_in // g, c_out_g, kh, kw)
        cols = np.einsum("ngchw,gcoij->ngohwij", xs, ws, optimize=True)
        # big enough for every painted patch and for the output window (padding_out may reach past)
        full = (max((h - 1) * sh + dh * (kh - 1) + 1, ph + out_h), max((w - 1) * sw + dw * (kw - 1) + 1, pw + out_w))
        painted = fold(cols, full, (sh, sw), (dh, dw))
        out = painted[:, :, :, ph : ph + out_h, pw : pw + out_w].reshape(n, g * c_out_g, out_h, out_w)
        if bias is not None:
            out = out + compute(bias).reshape(1, -1, 1, 1)
        return like(out, x.dtype)
