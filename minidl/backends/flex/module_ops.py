"""``FlexModuleOps``: the module ops Flex writes itself (burn-flex's ``ops/module.rs``):
conv2d (+ its input, weight and bias gradients), conv_transpose2d, the 2-D pools (+ backward),
interpolate (+ backward) and the fused layer_norm, each on its kernel module
(:mod:`~minidl.backends.flex.kernels.conv`, ``pool``, ``interpolate``, ``norm``).

What is *not* here matters as much as what is: ``linear`` (and its three backward helpers),
``batch_norm``, ``batch_norm_train``, ``embedding``, ``conv1d`` and ``attention`` are left to
the ``ModuleOps`` defaults, so on Flex they run as separate matmul / reshape / add / mean ...
ops (``conv1d``'s default is a conv2d of height 1, as in burn). ``layer_norm`` is the one
default Flex replaces, with a fused kernel — the split the book's tables show (Flex defines
``conv2d`` and ``layer_norm``, not ``linear``).

- conv: each op translates the option record into the kernel's arguments; ``padding`` goes
  down as ``(top, bottom, left, right)``, so asymmetric padding needs no extra copy.
- pools: padding is virtual in the kernels (windows are clipped to the real input, nothing is
  copied). One rule is Flex's own, not the kernel's: a max-pool window made only of padding
  passes no gradient back (its index, torch's fallback, may even name an element outside the
  window, or past the plane) — those windows are known from the options alone; the ``where``
  kernel zeroes their gradients (and points them at position 0) before the scatter.
- interpolate: nearest and bilinear (``align_corners`` either way) resizing of NCHW tensors, torch's
  index arithmetic; one plane per task, tap tables per axis.
- layer_norm: the default runs ``mean_dim``, ``sub``, ``mul``, ``mean_dim``, ``add_scalar``,
  ``sqrt``, ``div``, ``mul``, ``add`` — nine ops, eight temporaries. The kernel reads each row
  twice (mean, then the biased variance — the default's exact formula) and writes it once. On
  an autodiff device this override is not reached: ``Autodiff`` does not override
  ``layer_norm``, so the default decomposes into recorded steps there. ``batch_norm`` stays
  the default on Flex too.
"""

from __future__ import annotations

import functools

import numpy as np

from minidl.backend import ConvOptions, ConvTransposeOptions, InterpolateOptions, PoolOptions
from minidl.backends.flex.kernels import conv, norm, pool
from minidl.backends.flex.kernels import interpolate as interp
from minidl.backends.flex.kernels.broadcast import where
from minidl.backends.flex.kernels.copy import cast, contiguous


class FlexModuleOps:
    """conv2d (+ backward), conv_transpose2d, pools (+ backward), interpolate (+ backward) and
    the fused layer_norm, each one call of its numba kernel."""

    # ----- convolutions ---------------------------------------------------------------------------
    @classmethod
    def conv2d(cls, x, weight, bias, options: ConvOptions):
        out = conv.conv2d(contiguous(x), contiguous(weight), bias, options.stride, options.pads,
                          options.dilation, options.groups)
        return _like(out, x.dtype)

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
        (kh, kw), (dh, dw) = weight.shape[2:], options.dilation
        if options.stride == (1, 1) and max(top, bottom) <= dh * (kh - 1) and max(left, right) <= dw * (kw - 1):
            # stride 1, padding within the kernel's reach (a "same" conv): the transposed conv
            # needs no cropping, so it computes x's size directly, not the padded one (the
            # training chapter's 4x4 planes: 16 outputs instead of 36)
            grad = conv.conv2d_x_backward(contiguous(output_grad), contiguous(weight), x.shape,
                                          options.stride, options.pads, options.dilation, options.groups)
            return _like(grad, x.dtype)
        padded = (n, c, h + top + bottom, w + left + right)
        grad = conv.conv2d_x_backward(contiguous(output_grad), contiguous(weight), padded,
                                      options.stride, 0, options.dilation, options.groups)
        grad = contiguous(grad[:, :, top : top + h, left : left + w])
        return _like(grad, x.dtype)

    @classmethod
    def conv2d_weight_backward(cls, x, weight, output_grad, options: ConvOptions):
        """Output gradients times the input windows, summed over the batch (gemm)."""
        grad = conv.conv2d_weight_backward(contiguous(x), contiguous(output_grad), weight.shape,
                                           options.stride, options.pads, options.dilation,
                                           options.groups)
        return _like(grad, weight.dtype)

    @classmethod
    def conv2d_bias_backward(cls, output_grad):
        """``output_grad`` summed over batch, height and width in one kernel (the default would
        run three ``sum_dim`` ops and a reshape)."""
        return conv.conv2d_bias_backward(contiguous(output_grad))

    @classmethod
    def conv_transpose2d(cls, x, weight, bias, options: ConvTransposeOptions):
        out = conv.conv_transpose2d(contiguous(x), contiguous(weight), bias, options.stride,
                                    options.padding, options.padding_out, options.dilation,
                                    options.groups)
        return _like(out, x.dtype)

    # ----- pools ----------------------------------------------------------------------------------
    @classmethod
    def max_pool2d(cls, x, options: PoolOptions):
        return cls.max_pool2d_with_indices(x, options)[0]

    @classmethod
    def max_pool2d_with_indices(cls, x, options: PoolOptions):
        """``(output, indices)``; an index is the flat ``row * W + col`` of the first maximum
        (or the last NaN) of its window in the input plane, int64 (torch's convention)."""
        return pool.max_pool2d(contiguous(x), options.kernel_size, options.stride,
                               options.padding, options.dilation, options.ceil_mode)

    @classmethod
    def max_pool2d_with_indices_backward(cls, x, options: PoolOptions, output_grad, indices):
        """Each output gradient added at the input position its maximum came from."""
        grad, indices = contiguous(output_grad), contiguous(indices)
        empty = _padding_only_windows(x.shape, grad.shape[2:], options)
        if empty is not None:  # a zero gradient, sent to position 0 of the plane
            grad, indices = where(empty, 0.0, grad), where(empty, 0, indices)
        dx = pool.max_pool2d_backward(grad, indices, x.shape)
        return _like(dx, x.dtype)

    @classmethod
    def avg_pool2d(cls, x, options: PoolOptions):
        """Window means (dilation does not apply to average pools, as torch)."""
        return pool.avg_pool2d(contiguous(x), options.kernel_size, options.stride, options.padding,
                               options.count_include_pad, options.ceil_mode)

    @classmethod
    def avg_pool2d_backward(cls, x, options: PoolOptions, output_grad):
        dx = pool.avg_pool2d_backward(contiguous(output_grad), x.shape, options.kernel_size,
                                      options.stride, options.padding, options.count_include_pad)
        return _like(dx, x.dtype)

    @classmethod
    def adaptive_avg_pool2d(cls, x, output_size: tuple[int, int]):
        return pool.adaptive_avg_pool2d(contiguous(x), tuple(output_size))

    @classmethod
    def adaptive_avg_pool2d_backward(cls, x, output_grad):
        dx = pool.adaptive_avg_pool2d_backward(contiguous(output_grad), x.shape)
        return _like(dx, x.dtype)

    @classmethod
    def adaptive_max_pool2d_with_indices(cls, x, output_size: tuple[int, int]):
        """``(output, indices)``: each bin's first maximum (or last NaN) and its flat position."""
        return pool.adaptive_max_pool2d(contiguous(x), tuple(output_size))

    @classmethod
    def adaptive_max_pool2d_with_indices_backward(cls, x, output_grad, indices):
        """Each output gradient added at its maximum's input position (max pool's scatter)."""
        dx = pool.max_pool2d_backward(contiguous(output_grad), contiguous(indices), x.shape)
        return _like(dx, x.dtype)

    # ----- interpolate ----------------------------------------------------------------------------
    @classmethod
    def interpolate(cls, x, output_size: tuple[int, int], options: InterpolateOptions):
        return interp.interpolate(contiguous(x), tuple(output_size), options.mode, options.align_corners)

    @classmethod
    def interpolate_backward(cls, x, output_grad, output_size: tuple[int, int],
                             options: InterpolateOptions):
        """Each output gradient sent back, times its tap weights, to the inputs it read."""
        dx = interp.interpolate_backward(x.shape, contiguous(output_grad), options.mode,
                                         options.align_corners)
        return _like(dx, x.dtype)

    # ----- the fused layer_norm -------------------------------------------------------------------
    @classmethod
    def layer_norm(cls, x, gamma, beta, epsilon: float):
        """Normalize over the last dim with the biased variance, then ``* gamma + beta``."""
        return norm.layer_norm(contiguous(x), gamma, beta, epsilon)


def _like(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return out if out.dtype == dtype else cast(out, dtype)


@functools.lru_cache(maxsize=256)
def _has_real(size: int, out: int, k: int, s: int, p: int, d: int) -> np.ndarray:
    """Per output position along one axis: does its window hold a real (non-padding) element?
    (Kept per shape: a pool's backward asks every step; the caller only reads it.)"""
    starts = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d
    return ((starts >= 0) & (starts < size)).any(axis=1)


def _padding_only_windows(x_shape, out_hw, options: PoolOptions) -> np.ndarray | None:
    """A [oh, ow] bool mask of the windows that hold only padding, or None when there is none."""
    h, w = x_shape[2:]
    (kh, kw), (sh, sw) = options.kernel_size, options.stride
    (ph, pw), (dh, dw) = options.padding, options.dilation
    return _padding_only(h, w, out_hw[0], out_hw[1], kh, kw, sh, sw, ph, pw, dh, dw)


@functools.lru_cache(maxsize=256)
def _padding_only(h: int, w: int, oh: int, ow: int, kh: int, kw: int, sh: int, sw: int, ph: int,
                  pw: int, dh: int, dw: int) -> np.ndarray | None:
    # Kept per shape, as _has_real: a pool's backward asks every step, and the two .all()
    # calls alone cost more than the look-up (the caller only reads the mask).
    rows = _has_real(h, oh, kh, sh, ph, dh)
    cols = _has_real(w, ow, kw, sw, pw, dw)
    if rows.all() and cols.all():
        return None
    return ~(rows[:, None] & cols[None, :])
