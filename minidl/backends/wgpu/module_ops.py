"""``Wgpu``'s module ops: conv2d (+ input and weight gradients), conv_transpose2d and the 2-D
pools (+ backward) as direct WGSL kernels, one thread per output element
(burn-cubecl's ``kernel/conv`` and ``kernel/pool``, without their im2col and tiling).

``interpolate`` and its backward run on the device too; only their per-axis taps (a few
indices and weights, torch's index arithmetic as NdArray writes it) are computed on the host. Every default of ``ModuleOps``
(linear, layer_norm, batch_norm, embedding, the 1-D forms, attention) decomposes into
device ops, as on the CPU backends.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from minidl.backend import ConvOptions, ConvTransposeOptions, InterpolateOptions, PoolOptions
from minidl.backend.limits import check_size
from minidl.backends.wgpu import shaders
from minidl.backends.wgpu.ops import (
    F32,
    I32,
    LOOP_BUDGET,
    _add_all,
    _along,
    _index_check,
    _upload,
    contiguous,
    new,
)
from minidl.backends.wgpu.runtime import groups_1d, runtime


def _run(op: str, source: str, params: list[int], inputs: list, out):
    if out.size:
        runtime(out.index).dispatch(source, np.array([out.size] + params, dtype=np.int32),
                                    [t.buffer for t in inputs] + [out.buffer], groups_1d(out.size))
    return out


def _conv_params(x_shape, w_hw, co, out_hw, stride, pads_tl, dilation, groups, has_bias) -> list[int]:
    n, ci, h, w = x_shape
    return [n, ci, h, w, co, *w_hw, *out_hw, *stride, *pads_tl, *dilation, groups, int(has_bias)]


def _conv_grad(op: str, kernel: Callable[[tuple[int, ...]], str], out_shape, x, weight, output_grad, options: ConvOptions, inputs: list):
    """One of conv2d's gradient kernels (``inputs`` in the kernel's order) into ``out_shape``."""
    co, _, kh, kw = weight.shape
    top, _, left, _ = options.pads
    params = _conv_params(x.shape, (kh, kw), co, tuple(output_grad.shape[2:]), options.stride, (top, left),
                          options.dilation, options.groups, False)
    return _run(op, kernel(tuple(params[:16])), params, [contiguous(t) for t in inputs],
                new(out_shape, F32, x.index, op))


def _check4(op: str, **tensors) -> None:
    for name, t in tensors.items():
        if t is not None and t.ndim != 4:
            raise ValueError(f"{op}: expected {name} of rank 4 [batch, channels, height, width], found shape {t.shape}")


def _pool_params(x, out_hw, options: PoolOptions, dilation=True) -> list[int]:
    n, c, h, w = x.shape
    top, _, left, _ = options.pads((h, w))
    d = options.dilation if dilation else (1, 1)
    return [n * c, h, w, *out_hw, *options.kernel_size, *options.stride, top, left, *d,
            *options.padding, int(options.count_include_pad)]


class WgpuModuleOps:
    """Convolutions, pools and interpolate on the device."""

    @classmethod
    def conv2d(cls, x, weight, bias, options: ConvOptions):
        _check4("conv2d", x=x, weight=weight)
        co, cig, kh, kw = weight.shape
        if x.shape[1] != cig * options.groups or co % options.groups:
            raise ValueError(f"conv2d: x {x.shape} and weight {weight.shape} do not match groups={options.groups}")
        oh, ow = options.output_size(x.shape[2:], (kh, kw))
        if oh <= 0 or ow <= 0:
            raise ValueError(f"conv/pool: the (padded) input is smaller than the dilated kernel: output {oh}x{ow}")
        check_size("conv2d", (x.shape[0], co, oh, ow), F32)
        step = LOOP_BUDGET // ((kh + 1) * (kw + 2))  # a thread loops over c, ky, kx (ops.LOOP_BUDGET)
        if options.groups == 1 and cig > step:  # a sum over input channels: sum those of its parts
            return _add_all("conv2d", [cls.conv2d(_along(x, 1, at, at + step), _along(weight, 1, at, at + step),
                                                  bias if at == 0 else None, options) for at in range(0, cig, step)])
        out = new((x.shape[0], co, oh, ow), F32, x.index, "conv2d")
        top, _, left, _ = options.pads
        b = contiguous(bias) if bias is not None else _Dummy(x.index)
        params = _conv_params(x.shape, (kh, kw), co, (oh, ow), options.stride, (top, left), options.dilation,
                              options.groups, bias is not None)
        return _run("conv2d", shaders.conv2d_kernel(tuple(params[:16])), params, [contiguous(x), contiguous(weight), b], out)

    @classmethod
    def conv2d_x_backward(cls, x, weight, output_grad, options: ConvOptions):
        co, _, kh, kw = weight.shape
        step = LOOP_BUDGET // ((kh + 1) * (kw + 2))  # a thread loops over output channels, ky, kx
        if options.groups == 1 and co > step:  # a sum over output channels: sum those of its parts
            return _add_all("conv2d_x_backward", [
                cls.conv2d_x_backward(x, _along(weight, 0, at, at + step), _along(output_grad, 1, at, at + step),
                                      options) for at in range(0, co, step)])
        return _conv_grad("conv2d_x_backward", shaders.conv2d_x_backward_kernel, x.shape, x, weight, output_grad,
                          options, [output_grad, weight])

    @classmethod
    def conv2d_weight_backward(cls, x, weight, output_grad, options: ConvOptions):
        oh, ow = output_grad.shape[2:]
        step = max(1, LOOP_BUDGET // ((oh + 1) * (ow + 2)))  # a thread loops over n, oy, ox (ops.LOOP_BUDGET)
        if x.shape[0] > step:  # the gradient is a sum over the batch: sum those of its parts
            return _add_all("conv2d_weight_backward", [
                cls.conv2d_weight_backward(_along(x, 0, at, at + step), weight, _along(output_grad, 0, at, at + step),
                                           options) for at in range(0, x.shape[0], step)])
        return _conv_grad("conv2d_weight_backward", shaders.conv2d_weight_backward_kernel, weight.shape, x, weight,
                          output_grad, options, [x, output_grad])

    @classmethod
    def conv_transpose2d(cls, x, weight, bias, options: ConvTransposeOptions):
        _check4("conv_transpose2d", x=x, weight=weight)
        n, ci, h, w = x.shape
        _, cog, kh, kw = weight.shape
        g = options.groups
        (sh, sw), (ph, pw), (dh, dw) = options.stride, options.padding, options.dilation
        oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + options.padding_out[0] + 1
        ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + options.padding_out[1] + 1
        co = cog * g
        check_size("conv_transpose2d", (n, co, oh, ow), F32)
        out = new((n, co, oh, ow), F32, x.index, "conv_transpose2d")
        b = contiguous(bias) if bias is not None else _Dummy(x.index)
        params = _conv_params(x.shape, (kh, kw), co, (oh, ow), (sh, sw), (ph, pw), (dh, dw), g, bias is not None)
        return _run("conv_transpose2d", shaders.conv_transpose2d_kernel(tuple(params[:16])), params,
                    [contiguous(x), contiguous(weight), b], out)

    # ----- pools ---------------------------------------------------------------------------------
    @classmethod
    def _max_pool(cls, x, options: PoolOptions, want: str):
        _check4("max_pool2d", x=x)
        oh, ow = options.output_size(x.shape[2:])
        if oh <= 0 or ow <= 0:
            raise ValueError(f"conv/pool: the (padded) input {x.shape[2:]} is smaller than the kernel: output {oh}x{ow}")
        out = new((*x.shape[:2], oh, ow), F32 if want == "values" else I32, x.index, "max_pool2d")
        return _run("max_pool2d", shaders.max_pool2d_kernel(want), _pool_params(x, (oh, ow), options),
                    [contiguous(x)], out)

    @classmethod
    def max_pool2d(cls, x, options: PoolOptions):
        return cls._max_pool(x, options, "values")

    @classmethod
    def max_pool2d_with_indices(cls, x, options: PoolOptions):
        return cls._max_pool(x, options, "values"), cls._max_pool(x, options, "indices")

    @classmethod
    def max_pool2d_with_indices_backward(cls, x, options: PoolOptions, output_grad, indices):
        out = new(x.shape, F32, x.index, "max_pool2d_with_indices_backward")
        return _run("max_pool2d_with_indices_backward", shaders.max_pool2d_backward_kernel(),
                    _pool_params(x, output_grad.shape[2:], options), [contiguous(output_grad), contiguous(indices)], out)

    @classmethod
    def avg_pool2d(cls, x, options: PoolOptions):
        _check4("avg_pool2d", x=x)
        oh, ow = options.output_size(x.shape[2:])
        if oh <= 0 or ow <= 0:
            raise ValueError(f"conv/pool: the (padded) input {x.shape[2:]} is smaller than the kernel: output {oh}x{ow}")
        out = new((*x.shape[:2], oh, ow), F32, x.index, "avg_pool2d")
        return _run("avg_pool2d", shaders.avg_pool2d_kernel(), _pool_params(x, (oh, ow), options, False),
                    [contiguous(x)], out)

    @classmethod
    def avg_pool2d_backward(cls, x, options: PoolOptions, output_grad):
        out = new(x.shape, F32, x.index, "avg_pool2d_backward")
        return _run("avg_pool2d_backward", shaders.avg_pool2d_backward_kernel(),
                    _pool_params(x, output_grad.shape[2:], options, False), [contiguous(output_grad)], out)

    @classmethod
    def _adaptive(cls, op, x, output_size, kind, dtype):
        _check4(op, x=x)
        oh, ow = (int(s) for s in output_size)
        out = new((*x.shape[:2], oh, ow), dtype, x.index, op)
        n, c, h, w = x.shape
        params = [n * c, h, w, oh, ow] + [0] * 11
        return _run(op, shaders.adaptive_pool2d_kernel(kind), params, [contiguous(x)], out)

    @classmethod
    def adaptive_avg_pool2d(cls, x, output_size: tuple[int, int]):
        _check4("adaptive_avg_pool2d", x=x)
        (h, w), (oh, ow) = x.shape[2:], (int(s) for s in output_size)
        window = (-(-h // max(oh, 1)) + 1) * (-(-w // max(ow, 1)) + 2)  # a thread's loop iterations
        if window > LOOP_BUDGET and oh < h and ow < w:  # the mean of a window is the mean of its rows' means
            x = cls._adaptive("adaptive_avg_pool2d", x, (h, ow), "avg", F32)
        return cls._adaptive("adaptive_avg_pool2d", x, output_size, "avg", F32)

    @classmethod
    def adaptive_avg_pool2d_backward(cls, x, output_grad):
        n, c, h, w = x.shape
        out = new(x.shape, F32, x.index, "adaptive_avg_pool2d_backward")
        params = [n * c, h, w, *output_grad.shape[2:]] + [0] * 11
        return _run("adaptive_avg_pool2d_backward", shaders.adaptive_pool2d_backward_kernel("avg"), params,
                    [contiguous(output_grad)], out)

    @classmethod
    def adaptive_max_pool2d_with_indices(cls, x, output_size: tuple[int, int]):
        return (cls._adaptive("adaptive_max_pool2d_with_indices", x, output_size, "max", F32),
                cls._adaptive("adaptive_max_pool2d_with_indices", x, output_size, "argmax", I32))

    @classmethod
    def adaptive_max_pool2d_with_indices_backward(cls, x, output_grad, indices):
        n, c, h, w = x.shape
        _index_check("adaptive_max_pool2d_backward", indices, h * w)
        out = new(x.shape, F32, x.index, "adaptive_max_pool2d_with_indices_backward")
        params = [n * c, h, w, *output_grad.shape[2:]] + [0] * 11
        return _run("adaptive_max_pool2d_with_indices_backward", shaders.adaptive_pool2d_backward_kernel("max"),
                    params, [contiguous(output_grad), contiguous(indices)], out)

    # ----- interpolate: the taps (torch's index arithmetic, NdArray's taps()) come from the host --
    @classmethod
    def _taps(cls, x, output_size, options: InterpolateOptions):
        from minidl.backends.ndarray.interpolate import taps

        parts = []
        for size, out in zip(x.shape[2:], output_size, strict=True):
            made = taps(size, int(out), options.mode, np.dtype(np.float32), options.align_corners)
            low = made[0][0]
            high, lam = (made[1][0], made[1][1]) if len(made) > 1 else (low, np.zeros(int(out), np.float32))
            parts += [low, high, lam]
        return _upload("interpolate", np.concatenate(parts).astype(np.float32), "f", _Index(x.index))

    @classmethod
    def interpolate(cls, x, output_size: tuple[int, int], options: InterpolateOptions):
        _check4("interpolate", x=x)
        n, c, h, w = x.shape
        oh, ow = (int(s) for s in output_size)
        out = new((n, c, oh, ow), F32, x.index, "interpolate")
        params = [n * c, h, w, oh, ow, int(options.mode == "bilinear")]
        return _run("interpolate", shaders.interpolate_kernel(), params,
                    [contiguous(x), cls._taps(x, (oh, ow), options)], out)

    @classmethod
    def interpolate_backward(cls, x, output_grad, output_size: tuple[int, int], options: InterpolateOptions):
        n, c, h, w = x.shape
        oh, ow = (int(s) for s in output_size)
        out = new(x.shape, F32, x.index, "interpolate_backward")
        params = [n * c, h, w, oh, ow, int(options.mode == "bilinear")]
        return _run("interpolate_backward", shaders.interpolate_backward_kernel(), params,
                    [contiguous(output_grad), cls._taps(x, (oh, ow), options)], out)


class _Dummy:
    def __init__(self, index: int):
        self.buffer = runtime(index).dummy()


class _Index:
    def __init__(self, index: int):
        self.index = index
