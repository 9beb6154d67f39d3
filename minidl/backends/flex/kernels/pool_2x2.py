"""The max pool most CNNs use, 2x2 windows with stride 2 and no padding, as its own kernel.

The general kernel (:mod:`.pool`) tests every window position against the input's bounds and
walks ``kh x kw`` loops of unknown length; on the training chapter's [32, 8, 8, 8] input it
took ~40 us, twice torch's time. Here each window is four loads and three branch-free
selects. The result is the general kernel's to the bit: the first maximum of the window in
row-major order, or its last NaN, and the flat ``row * W + col`` index of it.
"""

from __future__ import annotations

from numba import njit

from ._common import JIT_FAST


@njit(**JIT_FAST)
def _take(m, best, v, at):
    # v replaces the running maximum when larger, or when NaN (NaN propagates, as torch)
    take = (v > m) | (v != v)
    return (v if take else m), (at if take else best)


@njit(**JIT_FAST)
def max_pool_2x2(x, out, idx):
    """out[n, c, i, j] = max of x[n, c, 2i:2i+2, 2j:2j+2]; idx the flat input index of it.
    ``out`` is [N, C, OH, OW] with 2 * OH <= H and 2 * OW <= W (whole windows only)."""
    w = x.shape[3]
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out.shape[2]):
                y = 2 * i
                for j in range(out.shape[3]):
                    xx = 2 * j
                    m, best = x[n, c, y, xx], y * w + xx
                    m, best = _take(m, best, x[n, c, y, xx + 1], y * w + xx + 1)
                    m, best = _take(m, best, x[n, c, y + 1, xx], (y + 1) * w + xx)
                    m, best = _take(m, best, x[n, c, y + 1, xx + 1], (y + 1) * w + xx + 1)
                    out[n, c, i, j] = m
                    idx[n, c, i, j] = best
