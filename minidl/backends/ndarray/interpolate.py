"""NdArray's ``interpolate`` (nearest, bilinear with or without align_corners) and its backward, in
NumPy (burn-ndarray's ``ops/interpolate.rs``), following torch's index arithmetic exactly.

Both modes resize the two spatial axes independently. For each axis, :func:`source_taps` says
which input positions an output position reads and with what weight — nearest: one tap of
weight 1; bilinear: two neighbours weighted ``1 - λ`` and ``λ``. The forward sums the weighted
taps; the backward sends each output gradient back along the same taps.

This is the reference the Flex kernels are tested against (``tests/flex/``), so it is written
its own way: one output position at a time, in scalars, where Flex's kernel
(:mod:`minidl.backends.flex.kernels.interpolate`) builds its index and weight tables as whole
arrays. Only torch's arithmetic is shared, as the specification both follow.
"""

from __future__ import annotations

import math

import numpy as np

from minidl.backend import InterpolateOptions
from minidl.backends.ndarray.float_ops import compute, like


def source_taps(i: int, in_size: int, out_size: int, mode: str, dtype: np.dtype,
                align_corners: bool = False) -> list[tuple[int, float]]:
    """The ``(input position, weight)`` pairs output ``i`` reads along one axis, in ``dtype``."""
    t = np.dtype(dtype).type
    if mode == "nearest":
        # torch: floor(i * (in / out)) in float32, whatever the dtype, at most in - 1
        src = math.floor(np.float32(i) * (np.float32(in_size) / np.float32(out_size)))
        return [(min(src, in_size - 1), t(1))]
    if align_corners:  # the corner pixels' centres line up; one output reads position 0
        src = t(in_size - 1) / t(out_size - 1) * t(i) if out_size > 1 else t(0)
    else:  # pixel centres line up, clamped at 0
        src = max(t(in_size) / t(out_size) * (t(i) + t(0.5)) - t(0.5), t(0))
    low = min(math.floor(src), in_size - 1)
    lam = min(max(src - t(low), t(0)), t(1))
    # both neighbours always, even at weight 0: torch adds 0 * x, so an inf there gives NaN
    return [(low, t(1) - lam), (min(low + 1, in_size - 1), lam)]


def taps(in_size: int, out_size: int, mode: str, dtype: np.dtype,
         align_corners: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per tap slot, ``(input position, weight)`` of every output along one axis: one slot for
    nearest, two for bilinear (the Wgpu backend uploads these for its kernels)."""
    per_output = [source_taps(i, in_size, out_size, mode, dtype, align_corners) for i in range(out_size)]
    slots = zip(*per_output, strict=True)  # slot k: the k-th tap of every output
    return [(np.array([j for j, _ in slot]), np.array([w for _, w in slot], dtype)) for slot in slots]


def _taps(x: np.ndarray, output_size: tuple[int, int], options: InterpolateOptions):
    """``(rows, weight [oh, ow], cols)`` for every pair of a row slot and a column slot."""
    dtype = compute(x).dtype
    rows = taps(x.shape[2], output_size[0], options.mode, dtype, options.align_corners)
    cols = taps(x.shape[3], output_size[1], options.mode, dtype, options.align_corners)
    return [(r[:, None], rw[:, None] * cw[None, :], c[None, :]) for r, rw in rows for c, cw in cols]


class NdArrayInterpolateOps:
    """Spatial resizing of NCHW float primitives."""

    @classmethod
    def interpolate(cls, x, output_size: tuple[int, int], options: InterpolateOptions):
        """``out[.., i, j] = Σ weight · x[.., row, col]`` over the taps of row ``i`` and column ``j``."""
        source = compute(x)
        out = np.zeros((*x.shape[:2], *output_size), dtype=source.dtype)
        for rows, weight, cols in _taps(x, output_size, options):
            out += source[:, :, rows, cols] * weight
        return like(out, x.dtype)

    @classmethod
    def interpolate_backward(cls, x, output_grad, output_size: tuple[int, int], options: InterpolateOptions):
        """Each output gradient, times a tap's weight, added to the input position the tap read."""
        grad = compute(output_grad)
        out = np.zeros(x.shape, dtype=grad.dtype)
        for rows, weight, cols in _taps(x, output_size, options):
            np.add.at(out, (slice(None), slice(None), rows, cols), grad * weight)
        return like(out, x.dtype)
