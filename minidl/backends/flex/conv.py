"""Flex's convolutions: ``conv2d`` with its input, weight and bias gradients, and
``conv_transpose2d`` (burn-flex's ``ops/conv.rs``; kernels:
:mod:`minidl.backends.flex.kernels.conv`).

Not here, on purpose: ``conv1d`` — the ``ModuleOps`` default (a conv2d of height 1) runs, as
in burn. Each op translates the option record into the kernel's arguments; ``padding`` goes
down as ``(top, bottom, left, right)``, so asymmetric padding needs no extra copy.
"""

from __future__ import annotations

from minidl.backend import ConvOptions, ConvTransposeOptions
from minidl.backends.flex.kernels import conv as k
from minidl.backends.flex.kernels.copy import cast, contiguous


def _as(out, dtype):
    return out if out.dtype == dtype else cast(out, dtype)


class FlexConvOps:
    """conv2d (+ x, weight and bias backward) and conv_transpose2d on the numba conv kernels."""

    @classmethod
    def conv2d(cls, x, weight, bias, options: ConvOptions):
        out = k.conv2d(contiguous(x), contiguous(weight), bias, options.stride, options.pads,
                       options.dilation, options.groups)
        return _as(out, x.dtype)

    @classmethod
    def conv2d_x_backward(cls, x, weight, output_grad, options: ConvOptions):
        """A transposed convolution of ``output_grad`` (what reached each input pixel).

        Computed for the *padded* input (no padding, so the kernel never crops), then the
        padding border is cut off: the kernel's own cropping path miscounts rows when a
        padding is larger than what the transposed convolution produces (e.g. 1x1 kernel,
        stride 3, top padding 2 on a 1-pixel input).
        """
        n, c, h, w = x.shape
        top, bottom, left, right = options.pads
        padded = (n, c, h + top + bottom, w + left + right)
        grad = k.conv2d_x_backward(contiguous(output_grad), contiguous(weight), padded,
                                   options.stride, 0, options.dilation, options.groups)
        grad = contiguous(grad[:, :, top : top + h, left : left + w])
        return _as(grad, x.dtype)

    @classmethod
    def conv2d_weight_backward(cls, x, weight, output_grad, options: ConvOptions):
        """Output gradients times the input windows, summed over the batch (gemm)."""
        grad = k.conv2d_weight_backward(contiguous(x), contiguous(output_grad), weight.shape,
                                        options.stride, options.pads, options.dilation,
                                        options.groups)
        return _as(grad, weight.dtype)

    @classmethod
    def conv2d_bias_backward(cls, output_grad):
        """``output_grad`` summed over batch, height and width in one kernel (the default would
        run three ``sum_dim`` ops and a reshape)."""
        return k.conv2d_bias_backward(contiguous(output_grad))

    @classmethod
    def conv_transpose2d(cls, x, weight, bias, options: ConvTransposeOptions):
        out = k.conv_transpose2d(contiguous(x), contiguous(weight), bias, options.stride,
                                 options.padding, options.padding_out, options.dilation,
                                 options.groups)
        return _as(out, x.dtype)
