"""NdArray's ``interpolate`` (nearest, bilinear with or without align_corners) and its backward, in
NumPy (burn-ndarray's ``ops/interpolate.rs``), following torch's index arithmetic exactly.

Both modes resize the two spatial axes independently. For each axis, :func:`taps` says which
input rows every output row reads and with what weight — nearest: one tap of weight 1;
bilinear: two neighbours weighted ``1 - λ`` and ``λ``. The forward sums the weighted taps; the
backward sends each output gradient back along the same taps.
"""

from __future__ import annotations

import numpy as np

from minidl.backend import InterpolateOptions
from minidl.backends.ndarray.float_ops import compute, like

Tap = tuple[np.ndarray, np.ndarray]  # (input index per output position, weight per output position)


def taps(in_size: int, out_size: int, mode: str, dtype: np.dtype, align_corners: bool = False) -> list[Tap]:
    """The input positions (and weights) each of ``out_size`` outputs reads along one axis."""
    dst = np.arange(out_size)
    if mode == "nearest":
        # torch: src = min(floor(dst * (in / out)), in - 1), computed in float32 even for float64
        scale = np.float32(in_size) / np.float32(out_size)
        src = np.floor(dst.astype(np.float32) * scale).astype(np.int64)
        return [(np.minimum(src, in_size - 1), np.ones(out_size, dtype=dtype))]
    if align_corners:
        # the corner pixels' centres line up: src = dst * (in - 1) / (out - 1) (0 for one output)
        scale = dtype.type(in_size - 1) / dtype.type(out_size - 1) if out_size > 1 else dtype.type(0)
        real = scale * dst.astype(dtype)
    else:
        # pixel centres line up: src = (dst + 0.5) * scale - 0.5 ≥ 0
        scale = dtype.type(in_size) / dtype.type(out_size)
        real = np.maximum(scale * (dst.astype(dtype) + dtype.type(0.5)) - dtype.type(0.5), 0)
    low = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam = np.clip(real - low, 0, 1).astype(dtype)
    high = np.minimum(low + 1, in_size - 1)
    return [(low, 1 - lam), (high, lam)]


def _axes_taps(x: np.ndarray, output_size: tuple[int, int], options: InterpolateOptions):
    dtype = compute(x).dtype
    rows = taps(x.shape[2], output_size[0], options.mode, dtype, options.align_corners)
    cols = taps(x.shape[3], output_size[1], options.mode, dtype, options.align_corners)
    return [(r, rw[:, None] * cw[None, :], c) for r, rw in rows for c, cw in cols]


class NdArrayInterpolateOps:
    """Spatial resizing of NCHW float primitives."""

    @classmethod
    def interpolate(cls, x, output_size: tuple[int, int], options: InterpolateOptions):
        """``out[.., i, j] = Σ weight · x[.., row, col]`` over the taps of row ``i`` and column ``j``."""
        source = compute(x)
        out = np.zeros((*x.shape[:2], *output_size), dtype=source.dtype)
        for rows, weight, cols in _axes_taps(x, output_size, options):
            out += source[:, :, rows[:, None], cols[None, :]] * weight
        return like(out, x.dtype)

    @classmethod
    def interpolate_backward(cls, x, output_grad, output_size: tuple[int, int], options: InterpolateOptions):
        """Each output gradient, times a tap's weight, added to the input position the tap read."""
        grad = compute(output_grad)
        out = np.zeros(x.shape, dtype=grad.dtype)
        everything = slice(None)
        for rows, weight, cols in _axes_taps(x, output_size, options):
            np.add.at(out, (everything, everything, rows[:, None], cols[None, :]), grad * weight)
        return like(out, x.dtype)
