"""What conv2d's forward and backward share: the input's zero-padded planes and its im2col rows,
and the argument forms (an int, a pair, four paddings). Named after burn-flex's
``ops/conv_common.rs``, the helpers its forward and transposed convolutions share (there: dtype
wrappers and the bias addition; the padding and patch gathering here are this module's own).

* padded planes: each input plane copied into a zero-padded flat plane of width ``Wp``, with a
  little slack at the end (shifted views of the border columns read past the last row);
* im2col rows: one row per weight position r = (c, dy, dx), the inputs every output position
  needs, for strided convolutions and for the weight gradient.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT, PARALLEL_MIN_ELEMS, as_compute

Pair = tuple[int, int]
Pad4 = tuple[int, int, int, int]


@njit(**JIT)
def _pad_plane(x, xpad, t, pt, pl, wp):
    # xpad[n, c, (i + pt) * wp + j + pl] = x[n, c, i, j]; everything else 0.
    cin = x.shape[1]
    n = t // cin
    c = t - n * cin
    dst = xpad[n, c]
    for i in range(dst.shape[0]):
        dst[i] = 0
    plane = x[n, c]
    w = plane.shape[1]
    for i in range(plane.shape[0]):
        row = plane[i]
        # Slices indexed from 0: numba checks possibly-negative indices, which blocks SIMD.
        d = dst[(i + pt) * wp + pl : (i + pt) * wp + pl + w]
        for j in range(w):
            d[j] = row[j]


@njit(**JIT)
def pad_serial(x, xpad, pt, pl, wp):
    """Copy every plane of x [N, C, H, W] into the zero-padded flat planes xpad [N, C, L]."""
    for t in range(x.shape[0] * x.shape[1]):
        _pad_plane(x, xpad, t, pt, pl, wp)


@njit(parallel=True, **JIT)
def pad_parallel(x, xpad, pt, pl, wp):
    """``pad_serial`` with the planes spread over threads."""
    for t in prange(x.shape[0] * x.shape[1]):
        _pad_plane(x, xpad, t, pt, pl, wp)


@njit(**JIT)
def _im2col(xpad, cols, t, kh, kw, sh, sw, dh, dw, oh_n, ow_n, wp):
    # cols[n, g, r*Q + oh*OW + ow] = padded x[n, g*Cg + c, oh*sh + dy*dh, ow*sw + dx*dw],
    # r = (c*kh + dy)*kw + dx, Q = OH*OW.
    groups = cols.shape[1]
    n = t // groups
    g = t - n * groups
    cg = xpad.shape[1] // groups
    q_n = oh_n * ow_n
    dst = cols[n, g]
    for c in range(cg):
        src = xpad[n, g * cg + c]
        for dy in range(kh):
            for dx in range(kw):
                base = ((c * kh + dy) * kw + dx) * q_n
                for oh in range(oh_n):
                    start = (oh * sh + dy * dh) * wp + dx * dw
                    s_row = src[start : start + (ow_n - 1) * sw + 1 : sw]
                    d_row = dst[base + oh * ow_n : base + oh * ow_n + ow_n]
                    for ow in range(ow_n):
                        d_row[ow] = s_row[ow]


@njit(**JIT)
def im2col_serial(xpad, cols, kh, kw, sh, sw, dh, dw, oh_n, ow_n, wp):
    """Fill cols [N, G, R*Q] with the im2col rows of the padded input (see ``_im2col``)."""
    for t in range(cols.shape[0] * cols.shape[1]):
        _im2col(xpad, cols, t, kh, kw, sh, sw, dh, dw, oh_n, ow_n, wp)


@njit(parallel=True, **JIT)
def im2col_parallel(xpad, cols, kh, kw, sh, sw, dh, dw, oh_n, ow_n, wp):
    """``im2col_serial`` with the (image, group) pairs spread over threads."""
    for t in prange(cols.shape[0] * cols.shape[1]):
        _im2col(xpad, cols, t, kh, kw, sh, sw, dh, dw, oh_n, ow_n, wp)


# ---------------------------------------------------------------------------------------------
# Python helpers
# ---------------------------------------------------------------------------------------------


def pair(v: int | Pair) -> Pair:
    """``v`` as a (height, width) pair."""
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def pad4(v: int | Pair | Pad4) -> Pad4:
    """``v`` as (top, bottom, left, right) paddings."""
    if isinstance(v, int):
        return (v, v, v, v)
    if len(v) == 2:
        return (int(v[0]), int(v[0]), int(v[1]), int(v[1]))
    return (int(v[0]), int(v[1]), int(v[2]), int(v[3]))


def conv2d_out_hw(
    h: int, w: int, kernel: Pair, stride: Pair, padding: Pad4, dilation: Pair
) -> Pair:
    """Output (height, width) of a conv2d; ``padding`` is (top, bottom, left, right)."""
    oh = (h + padding[0] + padding[1] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (w + padding[2] + padding[3] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    return oh, ow


def prepare(
    x: np.ndarray,
    kernel: Pair,
    stride: Pair,
    padding: Pad4,
    dilation: Pair,
    groups: int,
    slack: int = 0,
) -> tuple[np.ndarray, int, int, int, bool]:
    """Zero-padded flat planes of x (negative padding crops), output size, padded width.

    Each plane ends with ``slack`` more zeros beyond what the shifted views need."""
    n_img, cin, h, w = x.shape
    pt, pb, pl, pr = padding
    xc = as_compute(x)
    if min(padding) < 0:
        xc = xc[:, :, max(-pt, 0) : h - max(-pb, 0), max(-pl, 0) : w - max(-pr, 0)]
        xc = np.ascontiguousarray(xc)
        pt, pb, pl, pr = max(pt, 0), max(pb, 0), max(pl, 0), max(pr, 0)
    hp, wp = xc.shape[2] + pt + pb, xc.shape[3] + pl + pr
    oh, ow = conv2d_out_hw(xc.shape[2], xc.shape[3], kernel, stride, (pt, pb, pl, pr), dilation)
    if oh <= 0 or ow <= 0:
        raise ValueError(
            f"conv2d: kernel {kernel} (dilation {dilation}) larger than the padded input {(hp, wp)}"
        )
    # Slack after the last row: shifted views of the border columns read past it.
    xpad = np.empty((n_img, cin, hp * wp + dilation[1] * (kernel[1] - 1) + slack), xc.dtype)
    parallel = xpad.size >= PARALLEL_MIN_ELEMS
    if xpad.size:
        (pad_parallel if parallel else pad_serial)(xc, xpad, pt, pl, wp)
    return xpad, oh, ow, wp, parallel


def im2col_all(
    xpad: np.ndarray,
    kernel: Pair,
    stride: Pair,
    dilation: Pair,
    oh: int,
    ow: int,
    wp: int,
    groups: int,
    parallel: bool,
    slack: int = 0,
) -> np.ndarray:
    """The im2col rows [N, G, R*OH*OW (+ slack, unset)] of the padded planes ``xpad`` (see
    ``_im2col``)."""
    n_img, cin = xpad.shape[0], xpad.shape[1]
    r = cin // groups * kernel[0] * kernel[1]
    cols = np.empty((n_img, groups, r * oh * ow + slack), xpad.dtype)
    args = (*kernel, *stride, *dilation, oh, ow, wp)
    (im2col_parallel if parallel or cols.size >= PARALLEL_MIN_ELEMS else im2col_serial)(
        xpad, cols, *args
    )
    return cols


