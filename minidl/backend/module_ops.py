"""``ModuleOps``: the neural-network ops of the backend protocol (burn-backend ``ops/modules/base.rs``).

As in burn 0.22: ``conv2d``, ``conv_transpose2d``, the pools, ``interpolate`` (and their
backward helpers) are *required*; ``linear`` (+ its three backward helpers), ``layer_norm``,
``batch_norm``, ``embedding``, ``conv1d`` (through conv2d) and ``attention`` have *defaults*
written with other ops of ``cls``. Which class's body actually runs for a call is what the
book's ``minidl.debug.implementations`` table shows.
"""

from __future__ import annotations

from minidl.backend.base import default, required
from minidl.backend.modules import linear as linear_mod
from minidl.backend.modules import misc, norm, pool1d
from minidl.backend.options import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    PoolOptions,
)


class ModuleOps:
    """Module (layer) ops. Defaults delegate to the generic functions in ``backend/modules``."""

    # ----- linear: a default, so Dispatch can run it itself ------------------------------
    @default
    def linear(cls, x, weight, bias=None):
        return linear_mod.linear(cls, x, weight, bias)

    @default
    def linear_x_backward(cls, weight, output_grad):
        return linear_mod.linear_x_backward(cls, weight, output_grad)

    @default
    def linear_weight_backward(cls, x, output_grad):
        return linear_mod.linear_weight_backward(cls, x, output_grad)

    @default
    def linear_bias_backward(cls, output_grad):
        return linear_mod.linear_bias_backward(cls, output_grad)

    # ----- convolutions -------------------------------------------------------------------
    @required
    def conv2d(cls, x, weight, bias, options: ConvOptions):
        """NCHW convolution; ``weight`` is ``[c_out, c_in / groups, k1, k2]``."""

    @required
    def conv2d_x_backward(cls, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv2d w.r.t. its input."""

    @required
    def conv2d_weight_backward(cls, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv2d w.r.t. its weight."""

    @default
    def conv2d_bias_backward(cls, output_grad):
        out = output_grad
        for dim in (3, 2, 0):
            out = cls.float_sum_dim(out, dim)
        return cls.float_reshape(out, (output_grad.shape[1],))

    @default
    def conv1d(cls, x, weight, bias, stride: int = 1, padding: int = 0, dilation: int = 1,
               groups: int = 1, padding_end: int | None = None):
        return misc.conv1d(cls, x, weight, bias, stride, padding, dilation, groups, padding_end)

    @required
    def conv_transpose2d(cls, x, weight, bias, options: ConvTransposeOptions):
        """Transposed convolution; ``weight`` is ``[c_in, c_out / groups, k1, k2]`` (torch's layout)."""

    # ----- pools --------------------------------------------------------------------------
    @required
    def max_pool2d(cls, x, options: PoolOptions):
        """Max pool over NCHW."""

    @required
    def max_pool2d_with_indices(cls, x, options: PoolOptions):
        """``(output, indices)``; indices are flat positions in each input plane (int)."""

    @required
    def max_pool2d_with_indices_backward(cls, x, options: PoolOptions, output_grad, indices):
        """Scatter ``output_grad`` back to the arg-max positions."""

    @required
    def avg_pool2d(cls, x, options: PoolOptions):
        """Average pool over NCHW."""

    @required
    def avg_pool2d_backward(cls, x, options: PoolOptions, output_grad):
        """Spread each output gradient evenly over its window."""

    @required
    def adaptive_avg_pool2d(cls, x, output_size: tuple[int, int]):
        """Average pool to a fixed output size (torch's bins)."""

    @required
    def adaptive_avg_pool2d_backward(cls, x, output_grad):
        """Gradient of adaptive_avg_pool2d."""

    @default
    def adaptive_max_pool2d(cls, x, output_size: tuple[int, int]):
        return cls.adaptive_max_pool2d_with_indices(x, output_size)[0]

    @required
    def adaptive_max_pool2d_with_indices(cls, x, output_size: tuple[int, int]):
        """``(output, indices)``: the maximum of each of torch's bins (as
        ``adaptive_avg_pool2d``'s) and its flat position in the input plane (int). Not in
        burn 0.22; torch's ``adaptive_max_pool2d(return_indices=True)``."""

    @required
    def adaptive_max_pool2d_with_indices_backward(cls, x, output_grad, indices):
        """Scatter ``output_grad`` back to the arg-max positions."""

    # ----- 1-D pools: defaults through the 2-D ones (burn's ``*_from_2d``) ----------------
    @default
    def max_pool1d(cls, x, kernel_size: int, stride: int, padding: int = 0, dilation: int = 1,
                   ceil_mode: bool = False):
        return cls.max_pool1d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode)[0]

    @default
    def max_pool1d_with_indices(cls, x, kernel_size: int, stride: int, padding: int = 0,
                                dilation: int = 1, ceil_mode: bool = False):
        return pool1d.max_pool1d_with_indices(cls, x, kernel_size, stride, padding, dilation, ceil_mode)

    @default
    def max_pool1d_with_indices_backward(cls, x, kernel_size: int, stride: int, padding: int,
                                         dilation: int, ceil_mode: bool, output_grad, indices):
        return pool1d.max_pool1d_with_indices_backward(cls, x, kernel_size, stride, padding, dilation,
                                                       ceil_mode, output_grad, indices)

    @default
    def avg_pool1d(cls, x, kernel_size: int, stride: int, padding: int = 0,
                   count_include_pad: bool = True, ceil_mode: bool = False):
        return pool1d.avg_pool1d(cls, x, kernel_size, stride, padding, count_include_pad, ceil_mode)

    @default
    def avg_pool1d_backward(cls, x, output_grad, kernel_size: int, stride: int, padding: int,
                            count_include_pad: bool, ceil_mode: bool):
        return pool1d.avg_pool1d_backward(cls, x, output_grad, kernel_size, stride, padding,
                                          count_include_pad, ceil_mode)

    @default
    def adaptive_avg_pool1d(cls, x, output_size: int):
        return pool1d.adaptive_avg_pool1d(cls, x, output_size)

    @default
    def adaptive_avg_pool1d_backward(cls, x, output_grad):
        return pool1d.adaptive_avg_pool1d_backward(cls, x, output_grad)

    @default
    def adaptive_max_pool1d_with_indices(cls, x, output_size: int):
        return pool1d.adaptive_max_pool1d_with_indices(cls, x, output_size)

    @default
    def adaptive_max_pool1d_with_indices_backward(cls, x, output_grad, indices):
        return pool1d.adaptive_max_pool1d_with_indices_backward(cls, x, output_grad, indices)

    @required
    def interpolate(cls, x, output_size: tuple[int, int], options: InterpolateOptions):
        """Resize NCHW spatially (nearest, or bilinear with or without ``align_corners``)."""

    @required
    def interpolate_backward(cls, x, output_grad, output_size: tuple[int, int], options: InterpolateOptions):
        """Gradient of interpolate w.r.t. its input."""

    # ----- lookups, norms, attention: defaults --------------------------------------------
    @default
    def embedding(cls, weights, indices):
        return misc.embedding(cls, weights, indices)

    @default
    def embedding_backward(cls, weights, output_grad, indices):
        return misc.embedding_backward(cls, weights, output_grad, indices)

    @default
    def layer_norm(cls, x, gamma, beta, epsilon: float):
        return norm.layer_norm(cls, x, gamma, beta, epsilon)

    @default
    def batch_norm(cls, x, gamma, beta, mean, var, epsilon: float):
        return norm.batch_norm(cls, x, gamma, beta, mean, var, epsilon)

    @default
    def batch_norm_train(cls, x, gamma, beta, epsilon: float):
        return norm.batch_norm_train(cls, x, gamma, beta, epsilon)

    @default
    def attention(cls, query, key, value, mask=None):
        return misc.attention(cls, query, key, value, mask)
