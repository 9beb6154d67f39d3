"""Flex's ``interpolate`` and its backward: nearest and bilinear (``align_corners=False``)
resizing of NCHW tensors (burn-flex's ``interpolate``; kernels:
:mod:`minidl.backends.flex.kernels.interpolate`, torch's index arithmetic).
"""

from __future__ import annotations

from minidl.backend import InterpolateOptions
from minidl.backends.flex.kernels import interpolate as k
from minidl.backends.flex.kernels.copy import cast, contiguous


class FlexInterpolateOps:
    """Spatial resizing of Flex: one plane per task, tap tables per axis."""

    @classmethod
    def interpolate(cls, x, output_size: tuple[int, int], options: InterpolateOptions):
        return k.interpolate(contiguous(x), tuple(output_size), options.mode)

    @classmethod
    def interpolate_backward(cls, x, output_grad, output_size: tuple[int, int],
                             options: InterpolateOptions):
        """Each output gradient sent back, times its tap weights, to the inputs it read."""
        dx = k.interpolate_backward(x.shape, contiguous(output_grad), options.mode)
        return dx if dx.dtype == x.dtype else cast(dx, x.dtype)
