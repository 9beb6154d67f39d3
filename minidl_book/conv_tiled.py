"""A tiled im2col + gemm convolution, and a fair timing of it against other conv2d routes.

``conv2d_tiled`` mirrors burn-flex's generic forward convolution (``conv3d_impl`` in
``crates/burn-flex/src/ops/conv.rs``, v0.22.0-pre.2): the input copied to NHWC once, then,
tile by tile of ``TILE`` output positions, an im2col buffer of that tile only
(``[tile, c_in * k1 * k2]``, burn's ``col_tile``) multiplied by the flattened weight
(burn's ``w_flat``, rows in ``(i, j, c)`` order) and written into the output. Only stride
1, dilation 1 and one group, the case the nn modules chapter times. burn tiles each
image's positions; here a tile runs over the positions of the whole batch in order (the
chapter's 8 x 8 images have 64 positions each, far fewer than a tile).

``best_seconds`` times several contenders in alternating rounds, on one thread, and keeps
each one's best round: the time least disturbed by the machine's other work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from numba import njit

from minidl_book.in_turns import best_in_turns

#: output positions per tile, as burn-flex's ``TILE_SIZE`` (conv.rs:296)
TILE = 512
#: burn-flex's ``SMALL_CHANNEL_IN_THRESHOLD`` and ``SMALL_CHANNEL_OUT_THRESHOLD``
#: (conv.rs:1286, :1297)
SMALL_IN, SMALL_OUT = 4, 16


def burn_flex_path(x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                   stride: tuple[int, int] = (1, 1), padding: tuple[int, int] = (0, 0),
                   dilation: tuple[int, int] = (1, 1), groups: int = 1) -> str:
    """The path burn-flex's ``conv2d`` takes (``conv3d_typed``'s checks, in order, on the
    2-D shapes): "1x1", "depthwise", "small-channel", "direct" or "tiled im2col + gemm"."""
    _, c_in, h, w = x_shape
    c_out, per_group, k1, k2 = w_shape
    if (k1, k2) == (1, 1) and tuple(stride) == (1, 1) and tuple(padding) == (0, 0):
        return "1x1"
    if per_group == 1 and groups == c_in == c_out:
        return "depthwise"
    if groups == 1 and 0 < c_in <= SMALL_IN and 0 < c_out <= SMALL_OUT:
        return "small-channel"
    w_out = (w - k2) // stride[1] + 1
    if (groups == 1 and tuple(padding) == (0, 0) and tuple(dilation) == (1, 1)
            and k1 == 1 and h == 1 and c_in >= 32 and k2 <= 8 and w_out <= 800):
        return "direct"
    return "tiled im2col + gemm"


@njit(cache=True)
def _tiled(xpad: np.ndarray, w_flat: np.ndarray, bias: np.ndarray, k1: int, k2: int,
           h_out: int, w_out: int, tile: int) -> np.ndarray:  # pragma: no cover - jitted
    n, hp, wp, c_in = xpad.shape
    c_out, col_len = w_flat.shape
    positions = n * h_out * w_out
    out = np.empty((n, c_out, h_out, w_out), np.float32)
    col = np.empty((tile, col_len), np.float32)  # one tile's patch rows, reused
    for start in range(0, positions, tile):
        stop = min(start + tile, positions)
        for t in range(stop - start):  # im2col of this tile only
            p = start + t
            b, rest = p // (h_out * w_out), p % (h_out * w_out)
            oh, ow = rest // w_out, rest % w_out
            r = 0
            for i in range(k1):
                for j in range(k2):
                    for c in range(c_in):
                        col[t, r] = xpad[b, oh + i, ow + j, c]
                        r += 1
        for t in range(stop - start):  # gemm: w_flat [c_out, col_len] @ col.T
            p = start + t
            b, rest = p // (h_out * w_out), p % (h_out * w_out)
            oh, ow = rest // w_out, rest % w_out
            for co in range(c_out):
                acc = bias[co]
                for r in range(col_len):
                    acc += w_flat[co, r] * col[t, r]
                out[b, co, oh, ow] = acc
    return out


def conv2d_tiled(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                 padding: tuple[int, int], tile: int = TILE) -> np.ndarray:
    """burn-flex's tiled im2col + gemm (``conv3d_impl``), stride 1, one group, float32:
    ``x`` ``[n, c_in, h, w]``, ``weight`` ``[c_out, c_in, k1, k2]``, symmetric ``padding``."""
    c_out, c_in, k1, k2 = weight.shape
    p1, p2 = padding
    xpad = np.zeros((x.shape[0], x.shape[2] + 2 * p1, x.shape[3] + 2 * p2, c_in), np.float32)
    xpad[:, p1:p1 + x.shape[2], p2:p2 + x.shape[3]] = x.transpose(0, 2, 3, 1)  # NHWC
    w_flat = np.ascontiguousarray(weight.transpose(0, 2, 3, 1).reshape(c_out, -1), np.float32)
    b = np.zeros(c_out, np.float32) if bias is None else bias.astype(np.float32)
    h_out, w_out = xpad.shape[1] - k1 + 1, xpad.shape[2] - k2 + 1
    return _tiled(xpad, w_flat, b, k1, k2, h_out, w_out, tile)


def tile_bytes(weight_shape: tuple[int, ...], tile: int = TILE, itemsize: int = 4) -> int:
    """Bytes of one tile's im2col buffer: ``tile`` rows of ``c_in * k1 * k2`` values."""
    _, c_in, k1, k2 = weight_shape
    return tile * c_in * k1 * k2 * itemsize


def best_seconds(contenders: Mapping[str, Callable[[], object]], rounds: int = 7,
                 pause: float = 0.01) -> dict[str, float]:
    """Each contender's best wall time over ``rounds`` alternating rounds (one call each a
    round, after a warm-up call), numba on one thread so no route borrows more cores."""
    return best_in_turns(contenders, rounds=rounds, pause=pause)
