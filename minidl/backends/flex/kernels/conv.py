"""2-D convolution (NCHW): forward, the three backward pieces, and the transposed convolution.

Mirrors burn-flex's ``conv2d`` / ``conv_transpose2d`` and the helpers behind burn-autodiff's
``Conv2dWithBias`` backward step (``conv2d_x_backward``, ``conv2d_weight_backward``,
``conv2d_bias_backward``).

Forward, without an im2col matrix for stride 1 (im2col followed by a gemm measured 0.26x
torch's oneDNN conv: the packing dominated):

1. each input plane is copied into a zero-padded plane of width ``Wp`` (flattened, with a
   little slack at the end);
2. the output is computed on the *padded* grid, ``OH`` rows of ``Wp`` positions. Then, for one
   weight position r = (c, dy, dx), the inputs that every output position needs form one
   contiguous slice of the padded plane, shifted by ``dy*dh*Wp + dx*dw``: the patch matrix is
   just a list of offsets, nothing is copied;
3. float32 runs the register-tiled kernel of :mod:`.conv_tile`: explicit SIMD vectors sized
   per instruction set (16 lanes on AVX-512, 8 on AVX2), a tile of accumulators (8 or 4
   channels x a few vectors) kept in registers over the whole reduction, masked stores
   straight into the output (the border columns are never stored). Measured on one AVX-512
   core, [32,16,32,32] * [32,16,3,3]: 3.57 ms -> 1.7 ms (torch 1.85 ms). Small planes run
   *flat*: the vector slots cover the plane's rows of the grid end to end, border columns
   included, into a scratch plane whose real columns are then copied out, when that takes
   fewer slots than a slot (or more) per output row: the training chapter's [32, 8, 4, 4] *
   [16, 8, 3, 3] used 4 of 16 lanes per row, 86 -> 48 us a call with the copy (torch 61 us);
4. float64 keeps the loop-vectorized kernel of :mod:`.conv_loop` (4 accumulator rows in L1,
   3 weight positions per pass; the ``Wp - OW`` border columns dropped when written out).

A strided convolution builds real im2col rows (one per weight position) and runs the same
kernels over them. The padded planes and the im2col rows come from :mod:`.conv_common`. The
transposed convolution is a stride-1 convolution of the zero-stuffed input with the flipped,
transposed weight, so it is also conv2d's input gradient.

Backward (called by burn-autodiff's ``Conv2dWithBias`` / ``Conv2dNoBias`` backward step):

* input: a transposed convolution of the output gradient (what reached each input pixel),
  with the output padding that restores rows the strided forward never read;
* weight: float32 runs :mod:`.conv_wgrad`, a register-tiled kernel over the transposed output
  gradient and the forward's shifted source rows (no im2col for stride 1; one core, the bench
  shape: 5.8 -> 2.1 ms); float64 keeps, per image and group, ``grad_out[n, g] [Kg, OH*OW] @
  cols[n, g].T`` with the im2col rows of the input, summed over the images;
* bias: the output gradient summed over images and pixels, one kernel.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import njit

from . import conv_wgrad as wgrad
from . import conv_wgrad_flat as wgrad_flat
from ._common import JIT, PARALLEL_MIN_ELEMS, aligned_empty, as_compute, compute_dtype
from .conv_common import (
    Pad4,
    Pair,
    conv2d_out_hw,
    im2col_all,
    pad4,
    pad_parallel,
    pad_serial,
    pair,
    prepare,
)
from .conv_loop import MRC, Q_TARGET, conv_parallel, conv_serial
from .conv_tile import LANES, conv_tiles_parallel, conv_tiles_serial, pack, slots, tile_shape
from .gemm import batched_matmul

PARALLEL_MIN_WORK = 100**3  # multiply-adds above which the conv runs on all threads


@njit(**JIT)
def drop_border_columns(grid, out):
    """out[p, i, j] = grid[p, i, j] for j < out.shape[2] (the padded grid's real columns;
    NumPy's strided copy took 10 us for the training chapter's [32, 16, 4, 4] output)."""
    ow = out.shape[2]
    for p in range(out.shape[0]):
        for i in range(out.shape[1]):
            src = grid[p, i]
            dst = out[p, i]
            for j in range(ow):
                dst[j] = src[j]


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def _sources(xpad, kernel, stride, dilation, oh, ow, wp, groups, parallel, slack):
    # The source rows [N, G, L] and the offset of weight position r's row in them; output row
    # oh starts at oh * wrow. Stride 1: shifted views of the padded planes (rows wp apart, the
    # border columns are dropped); else the im2col rows.
    n_img, cin = xpad.shape[0], xpad.shape[1]
    cg = cin // groups
    (kh, kw), (dh, dw) = kernel, dilation
    if stride == (1, 1):
        plane = xpad.shape[2]
        offs = _shift_offsets(cg, kh, kw, plane, wp, dh, dw)
        return xpad.reshape(n_img, groups, cg * plane), offs, wp
    src = im2col_all(xpad, kernel, stride, dilation, oh, ow, wp, groups, parallel, slack)
    return src, np.arange(cg * kh * kw, dtype=np.int64) * (oh * ow), ow


@functools.lru_cache(maxsize=256)
def _shift_offsets(cg: int, kh: int, kw: int, plane: int, wp: int, dh: int, dw: int) -> np.ndarray:
    # Where weight position r = (c, dy, dx) starts in the padded planes. A layer asks the same
    # question every step: kept (the kernels only read it), since building it took longer
    # than the kernel itself on the training chapter's 8x8 images.
    c, dy, dx = np.meshgrid(np.arange(cg), np.arange(kh), np.arange(kw), indexing="ij")
    return (c * plane + dy * dh * wp + dx * dw).reshape(-1).astype(np.int64)


_F32 = np.dtype(np.float32)


def _stride1_geometry(x_shape, w_shape, stride, padding, dilation, groups):
    """The shape arithmetic the stride-1 plans share (forward and weight gradient): the sizes,
    dilation, top/left pads, padded plane and output size, with ``r`` the reduction length; None
    for a case the plans do not take (not 4-D, bad groups, a stride, a negative pad, an empty
    output), where the general code runs, with its errors."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        return None
    n_img, cin, h, w = x_shape
    k_out, cg, kh, kw = w_shape
    if groups < 1 or cin % groups or k_out % groups or cg * groups != cin:
        return None
    if pair(stride) != (1, 1):
        return None
    dh, dw = pair(dilation)
    pt, pb, pl, pr = pad4(padding)
    if min(pt, pb, pl, pr) < 0:
        return None
    hp, wp = h + pt + pb, w + pl + pr
    oh, ow = conv2d_out_hw(h, w, (kh, kw), (1, 1), (pt, pb, pl, pr), (dh, dw))
    r = cg * kh * kw
    if oh <= 0 or ow <= 0 or n_img * cin == 0 or k_out == 0 or r == 0:
        return None
    return n_img, cin, k_out, cg, kh, kw, dh, dw, pt, pl, hp, wp, oh, ow, r


@functools.lru_cache(maxsize=256)
def _tiled_plan(x_shape, w_shape, stride, padding, dilation, groups):
    """What :func:`conv2d` works out from the shapes alone for a float32 stride-1 convolution
    with padding >= 0 on the tiled kernel (the common case: every conv of the training
    chapter's CNN, forward and input gradient), or None for any other case (the general code
    then runs, with its errors). Kept per shape and options: the same layer asks every step,
    and working it out (pairs, padded sizes, tile and slots, offsets) cost ~7 us of Python a
    call, a third of the [32, 1, 8, 8] forward. The values are those the general code computes,
    so the kernels get the same arguments."""
    g = _stride1_geometry(x_shape, w_shape, stride, padding, dilation, groups)
    if g is None:
        return None
    n_img, cin, k_out, cg, kh, kw, dh, dw, pt, pl, hp, wp, oh, ow, r = g
    plane = hp * wp + dw * (kw - 1) + LANES  # prepare's padded plane, the tiled kernel's slack
    xpad_shape = (n_img, cin, plane)
    pad_kernel = pad_parallel if n_img * cin * plane >= PARALLEL_MIN_ELEMS else pad_serial
    offs = _shift_offsets(cg, kh, kw, plane, wp, dh, dw)
    parallel = n_img * k_out * oh * ow * r >= PARALLEL_MIN_WORK
    per_row = oh * -(-ow // LANES)
    n_flat = -(-(oh * wp) // LANES)
    flat = n_flat < per_row
    mr, nv = tile_shape(k_out // groups, n_flat if flat else None)
    if flat:
        qv, dv, lanes = slots(1, oh * wp, oh * wp, nv)
        grid = None if wp == ow else ((n_img, k_out, 1, oh * wp), (n_img * k_out, oh, wp), (n_img * k_out, oh, ow))
    else:
        qv, dv, lanes = slots(oh, ow, wp, nv)
        grid = None
    return (xpad_shape, pad_kernel, pt, pl, wp, (n_img, groups, cg * plane), offs,
            (n_img, k_out, oh, ow), (groups, k_out // groups, r), np.zeros(k_out, _F32), mr,
            qv, dv, lanes, nv, parallel, grid)  # fmt: skip


def _conv2d_tiled(plan, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """:func:`conv2d` along ``plan`` (:func:`_tiled_plan`): the general code's kernel calls,
    with its arguments, without working them out again."""
    (xpad_shape, pad_kernel, pt, pl, wp, src_shape, offs, out_shape, w3_shape, zeros, mr,
     qv, dv, lanes, nv, parallel, grid) = plan  # fmt: skip
    xpad = np.empty(xpad_shape, _F32)
    pad_kernel(x if x.flags.c_contiguous else np.ascontiguousarray(x), xpad, pt, pl, wp)
    out = np.empty(out_shape, _F32)
    wpk, bpk = pack(weight.reshape(w3_shape), zeros if bias is None else bias, mr)
    dst = out if grid is None else np.empty(grid[0], _F32)
    if parallel:
        conv_tiles_parallel(xpad.reshape(src_shape), offs, wpk, bpk, dst, qv, dv, lanes, nv,
                            numba.get_num_threads())  # fmt: skip
    else:
        conv_tiles_serial(xpad.reshape(src_shape), offs, wpk, bpk, dst, qv, dv, lanes, nv)
    if grid is not None:
        drop_border_columns(dst.reshape(grid[1]), out.reshape(grid[2]))
    return out


def conv2d(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None = None,
    stride: int | Pair = 1,
    padding: int | Pair | Pad4 = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
) -> np.ndarray:
    """2-D convolution (cross-correlation, as torch): x [N, C, H, W], weight [K, C/groups, kh, kw].

    ``padding`` is an int, (ph, pw) or (top, bottom, left, right); negative entries crop.
    Returns [N, K, OH, OW] in the input dtype (float16 is computed in float32).
    """
    if x.dtype is _F32 and weight.dtype is _F32 and (bias is None or bias.shape == weight.shape[:1]):
        # a speed trick (ARCHITECTURE.md, "Where speed tricks may live"): the shape work kept
        try:
            plan = _tiled_plan(x.shape, weight.shape, stride, padding, dilation, groups)
        except TypeError:  # an option given as a list (unhashable): the general code below
            plan = None
        if plan is not None:
            return _conv2d_tiled(plan, x, weight, bias)
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"conv2d: expected 4-D x and weight, found {x.shape} and {weight.shape}")
    n_img, cin, h, w = x.shape
    k_out, cg, kh, kw = weight.shape
    if groups < 1 or cin % groups or k_out % groups or cg * groups != cin:
        raise ValueError(
            f"conv2d: weight {weight.shape} does not fit input channels {cin} with groups={groups}"
        )
    if bias is not None and bias.shape != (k_out,):
        raise ValueError(f"conv2d: bias must have shape ({k_out},), found {bias.shape}")
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    tiled = compute_dtype(x.dtype) == np.float32
    # The tiled kernel reads whole vectors: a row's last one may run up to LANES - 1 past it.
    slack = LANES if tiled else 0
    prep = prepare(x, (kh, kw), (sh, sw), pad4(padding), (dh, dw), groups, slack)
    xpad, oh, ow, wp, parallel_prep = prep
    dt = xpad.dtype
    out = np.empty((n_img, k_out, oh, ow), dt)
    if out.size == 0:
        return out.astype(x.dtype, copy=False)
    b = np.zeros(k_out, dt) if bias is None else as_compute(bias)
    r = cg * kh * kw
    if r == 0:
        out[...] = b[None, :, None, None]
        return out.astype(x.dtype, copy=False)
    w3 = as_compute(weight).reshape(groups, k_out // groups, r)
    src, offs, wrow = _sources(
        xpad, (kh, kw), (sh, sw), (dh, dw), oh, ow, wp, groups, parallel_prep, slack
    )
    work = n_img * k_out * oh * ow * r
    parallel = work >= PARALLEL_MIN_WORK
    parts = numba.get_num_threads() if parallel else 1
    if tiled:
        # Small planes run "flat": the vector slots cover the plane's OH rows of the source
        # grid end to end (border columns included), not each output row on its own (a 4-wide
        # row used 4 of 16 lanes). im2col rows have no border columns; on the padded grid the
        # border columns are computed into a scratch plane and dropped when copied out.
        per_row = oh * -(-ow // LANES)
        n_flat = -(-(oh * wrow) // LANES)
        flat = n_flat < per_row
        mr, nv = tile_shape(k_out // groups, n_flat if flat else None)
        wpk, bpk = pack(w3, b, mr)
        if flat:
            qv, dv, lanes = slots(1, oh * wrow, oh * wrow, nv)
            dst = out if wrow == ow else np.empty((n_img, k_out, 1, oh * wrow), dt)
        else:
            qv, dv, lanes = slots(oh, ow, wrow, nv)
            dst = out
        if parallel:
            conv_tiles_parallel(src, offs, wpk, bpk, dst, qv, dv, lanes, nv, parts)
        else:
            conv_tiles_serial(src, offs, wpk, bpk, dst, qv, dv, lanes, nv)
        if dst is not out:
            drop_border_columns(
                dst.reshape(n_img * k_out, oh, wrow), out.reshape(n_img * k_out, oh, ow)
            )
        return out.astype(x.dtype, copy=False)
    q_rows = max(1, Q_TARGET // wrow)
    # Accumulator rows start on cache lines: every step loads and stores them, and a vector
    # access that straddles two lines costs double (measured 3.8 vs 7.7 ms when misaligned).
    row = (q_rows * wrow + 15) // 16 * 16
    kernel = conv_parallel if parallel else conv_serial
    kernel(src, offs, w3, b, out, q_rows, wrow, aligned_empty((parts, MRC, row), dt, force=True))
    return out.astype(x.dtype, copy=False)


def conv_transpose2d(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None = None,
    stride: int | Pair = 1,
    padding: int | Pair | Pad4 = 0,
    output_padding: int | Pair = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
) -> np.ndarray:
    """Transposed 2-D convolution, as torch: x [N, Cin, H, W], weight [Cin, Cout/groups, kh, kw].

    Output height ``(H-1)*sh - top - bottom + dh*(kh-1) + output_padding_h + 1`` (width alike).
    Computed as a stride-1 conv2d of the zero-stuffed input with the flipped, transposed weight.
    """
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(
            f"conv_transpose2d: expected 4-D x and weight, found {x.shape} and {weight.shape}"
        )
    n_img, cin, h, w = x.shape
    if weight.shape[0] != cin or cin % groups:
        raise ValueError(
            f"conv_transpose2d: weight {weight.shape} does not fit input channels {cin} "
            f"with groups={groups}"
        )
    _, cout_g, kh, kw = weight.shape
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    oph, opw = pair(output_padding)
    pt, pb, pl, pr = pad4(padding)
    dt = compute_dtype(x.dtype)
    xc = as_compute(x)
    if sh > 1 or sw > 1:
        z = np.zeros((n_img, cin, (h - 1) * sh + 1 if h else 0, (w - 1) * sw + 1 if w else 0), dt)
        z[:, :, ::sh, ::sw] = xc
        xc = z
    cin_g = cin // groups
    wc = (
        as_compute(weight)
        .reshape(groups, cin_g, cout_g, kh, kw)[:, :, :, ::-1, ::-1]
        .transpose(0, 2, 1, 3, 4)
        .reshape(groups * cout_g, cin_g, kh, kw)
    )
    eh, ew = dh * (kh - 1), dw * (kw - 1)
    pad = (eh - pt, eh - pb + oph, ew - pl, ew - pr + opw)
    y = conv2d(xc, np.ascontiguousarray(wc), bias, 1, pad, (dh, dw), groups)
    return y.astype(x.dtype, copy=False)


# ---------------------------------------------------------------------------------------------
# Backward: the gradients with respect to the input, the weight and the bias
# ---------------------------------------------------------------------------------------------


BIAS_LANES = 16  # partial sums per channel in bias_grad


@njit(**JIT)
def bias_grad(grad_out, out):
    """out[k] += sum over n and the plane of grad_out[n, k] (conv2d's bias gradient), with
    grad_out [N, K, H*W] C-contiguous. The plane is summed into ``BIAS_LANES`` partial sums, a
    vector (one running sum was a chain of dependent adds: 11 us for the CNN's [32, 8, 8, 8]);
    the wrapper passes zeros (np.empty garbage could be NaN: NaN * 0 = NaN)."""
    n_img, k_n, hw = grad_out.shape
    full = hw // BIAS_LANES * BIAS_LANES
    acc = np.empty(BIAS_LANES, out.dtype)
    for k in range(k_n):
        for lane in range(BIAS_LANES):
            acc[lane] = 0
        tail = out[k]
        for n in range(n_img):
            row = grad_out[n, k]
            for j in range(0, full, BIAS_LANES):
                chunk = row[j : j + BIAS_LANES]
                for lane in range(BIAS_LANES):
                    acc[lane] += chunk[lane]
            for j in range(full, hw):
                tail += row[j]
        s = tail
        for lane in range(BIAS_LANES):
            s += acc[lane]
        out[k] = s


@njit(**JIT)
def flip_weight(w, out):
    """out [G * Cout_g, Cin_g, kh, kw] = w [Cin, Cout_g, kh, kw] per group, transposed and
    flipped in both spatial dims: the weight of the stride-1 convolution that computes a
    transposed one (:func:`conv_transpose2d`'s reshape, flip, transpose and copy in one pass)."""
    cin, cout_g, kh, kw = w.shape
    cin_g = out.shape[1]
    for ci in range(cin):
        g = ci // cin_g
        i = ci - g * cin_g
        for o in range(cout_g):
            for y in range(kh):
                for x in range(kw):
                    out[g * cout_g + o, i, y, x] = w[ci, o, kh - 1 - y, kw - 1 - x]


@functools.lru_cache(maxsize=256)
def _xgrad_plan(go_shape, w_shape, x_shape, stride, padding, dilation, groups):
    """For a float32 stride-1 convolution, its input gradient as :func:`conv_transpose2d`
    computes it: ``(the forward plan of that stride-1 convolution, the flipped weight's
    shape)``, or None (the general code then runs, with its errors)."""
    if len(go_shape) != 4 or len(w_shape) != 4 or len(x_shape) != 4 or pair(stride) != (1, 1):
        return None
    cin, cout_g, kh, kw = w_shape
    if go_shape[1] != cin or groups < 1 or cin % groups:
        return None
    dh, dw = pair(dilation)
    pt, pb, pl, pr = pad4(padding)
    oh, ow = go_shape[2], go_shape[3]
    oph = x_shape[2] - ((oh - 1) - pt - pb + dh * (kh - 1) + 1)
    opw = x_shape[3] - ((ow - 1) - pl - pr + dw * (kw - 1) + 1)
    eh, ew = dh * (kh - 1), dw * (kw - 1)
    pad = (eh - pt, eh - pb + oph, ew - pl, ew - pr + opw)
    flipped_shape = (groups * cout_g, cin // groups, kh, kw)
    conv_plan = _tiled_plan(go_shape, flipped_shape, 1, pad, (dh, dw), groups)
    return None if conv_plan is None else (conv_plan, flipped_shape)


def conv2d_x_backward(
    grad_out: np.ndarray,
    weight: np.ndarray,
    x_shape: tuple[int, ...],
    stride: int | Pair = 1,
    padding: int | Pair | Pad4 = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
) -> np.ndarray:
    """Gradient of conv2d with respect to its input x (shape ``x_shape``): a transposed conv."""
    if grad_out.dtype is _F32 and weight.dtype is _F32:
        # a speed trick (ARCHITECTURE.md, "Where speed tricks may live"): the shape work kept
        try:
            plan = _xgrad_plan(grad_out.shape, weight.shape, tuple(x_shape), stride, padding,
                               dilation, groups)  # fmt: skip
        except TypeError:  # an option given as a list (unhashable): the general code below
            plan = None
        if plan is not None:
            conv_plan, flipped_shape = plan
            flipped = np.empty(flipped_shape, _F32)
            flip_weight(weight if weight.flags.c_contiguous else np.ascontiguousarray(weight), flipped)
            return _conv2d_tiled(conv_plan, grad_out, flipped, None)
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    pt, pb, pl, pr = pad4(padding)
    kh, kw = weight.shape[2], weight.shape[3]
    oh, ow = grad_out.shape[2], grad_out.shape[3]
    # Rows of x that the forward never reached (stride remainder) get output padding.
    oph = x_shape[2] - ((oh - 1) * sh - pt - pb + dh * (kh - 1) + 1)
    opw = x_shape[3] - ((ow - 1) * sw - pl - pr + dw * (kw - 1) + 1)
    return conv_transpose2d(
        grad_out, weight, None, (sh, sw), (pt, pb, pl, pr), (oph, opw), (dh, dw), groups
    )


def _wgrad_flat(kg: int) -> bool:
    """Whether the weight gradient runs :mod:`.conv_wgrad_flat` (lanes over the positions): when
    :mod:`.conv_wgrad` (lanes over the channels) would fill at most a quarter of its lanes."""
    return kg * 4 <= wgrad.KB


@functools.lru_cache(maxsize=256)
def _wgrad_plan(x_shape, weight_shape, stride, padding, dilation, groups):
    """What :func:`conv2d_weight_backward` works out from the shapes alone for a float32
    stride-1 convolution with padding >= 0 (as :func:`_tiled_plan` for the forward), or None
    for any other case: the output gradient's expected shape first, then the padded planes (no
    slack), the source rows and their offsets padded to the kernel's blocks, which kernel."""
    g = _stride1_geometry(x_shape, weight_shape, stride, padding, dilation, groups)
    if g is None:
        return None
    n_img, cin, k_out, cg, kh, kw, dh, dw, pt, pl, hp, wp, oh, ow, r = g
    kg = k_out // groups
    plane = hp * wp + dw * (kw - 1)  # prepare's padded plane, no slack
    pad_kernel = pad_parallel if n_img * cin * plane >= PARALLEL_MIN_ELEMS else pad_serial
    flat = _wgrad_flat(kg)
    block = wgrad_flat.RR if flat else wgrad.NR
    offs = _shift_offsets(cg, kh, kw, plane, wp, dh, dw)
    offs = np.concatenate([offs, np.zeros(-(-r // block) * block - r, np.int64)])
    work = n_img * k_out * oh * ow * r
    return ((n_img, k_out, oh, ow), (n_img, cin, plane), pad_kernel, pt, pl, wp,
            (n_img, groups, kg, oh, ow), (n_img, groups, cg * plane), offs, (kg, r), flat,
            work >= PARALLEL_MIN_WORK, n_img * groups)  # fmt: skip


def _wgrad_tiled(plan, x: np.ndarray, grad_out: np.ndarray, weight_shape) -> np.ndarray:
    """:func:`conv2d_weight_backward` along ``plan`` (:func:`_wgrad_plan`): the general code's
    kernel calls, with its arguments."""
    (_, xpad_shape, pad_kernel, pt, pl, wp, go_shape, src_shape, offs, kg_r, flat, parallel,
     tasks) = plan  # fmt: skip
    xpad = np.empty(xpad_shape, _F32)
    pad_kernel(x if x.flags.c_contiguous else np.ascontiguousarray(x), xpad, pt, pl, wp)
    go5 = (grad_out if grad_out.flags.c_contiguous else np.ascontiguousarray(grad_out)).reshape(go_shape)
    if flat:
        parts = numba.get_num_threads() if parallel else 1
        gw = wgrad_flat.weight_grad(go5, xpad.reshape(src_shape), offs, wp, kg_r, parts)
    else:
        parts = min(numba.get_num_threads(), tasks) if parallel else 1
        gw = wgrad.weight_grad(go5, xpad.reshape(src_shape), offs, wp, kg_r, parts)
    return gw.reshape(weight_shape)


def conv2d_weight_backward(
    x: np.ndarray,
    grad_out: np.ndarray,
    weight_shape: tuple[int, ...],
    stride: int | Pair = 1,
    padding: int | Pair | Pad4 = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
) -> np.ndarray:
    """Gradient of conv2d with respect to its weight [K, C/groups, kh, kw].

    float32: the register-tiled kernel of :mod:`.conv_wgrad` over the forward's source rows.
    float64: per image and group, ``grad_out[n, g] [Kg, OH*OW] @ cols[n, g].T`` with the
    im2col rows ``cols[n, g]`` [R, OH*OW] (used transposed without a copy), summed over images.
    """
    if x.dtype is _F32 and grad_out.dtype is _F32:
        # a speed trick (ARCHITECTURE.md, "Where speed tricks may live"): the shape work kept
        try:
            plan = _wgrad_plan(x.shape, tuple(weight_shape), stride, padding, dilation, groups)
        except TypeError:  # an option given as a list (unhashable): the general code below
            plan = None
        if plan is not None and grad_out.shape == plan[0]:
            return _wgrad_tiled(plan, x, grad_out, weight_shape)
    k_out, cg, kh, kw = weight_shape
    n_img = x.shape[0]
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    tiled = compute_dtype(x.dtype) == np.float32
    xpad, oh, ow, wp, parallel = prepare(x, (kh, kw), (sh, sw), pad4(padding), (dh, dw), groups)
    if grad_out.shape != (n_img, k_out, oh, ow):
        raise ValueError(
            f"conv2d_weight_backward: grad_out must have shape {(n_img, k_out, oh, ow)}, "
            f"found {grad_out.shape}"
        )
    r = cg * kh * kw
    kg = k_out // groups
    go = as_compute(grad_out).reshape(n_img, groups, kg, oh * ow)
    if tiled:
        src, offs, wrow = _sources(
            xpad, (kh, kw), (sh, sw), (dh, dw), oh, ow, wp, groups, parallel, 0
        )
        work = n_img * k_out * oh * ow * r
        parts = min(numba.get_num_threads(), n_img * groups) if work >= PARALLEL_MIN_WORK else 1
        go5 = go.reshape(n_img, groups, kg, oh, ow)
        if _wgrad_flat(kg):
            parts = numba.get_num_threads() if work >= PARALLEL_MIN_WORK else 1
            gw = wgrad_flat.weight_grad(go5, src, offs, wrow, (kg, r), parts)
        else:
            gw = wgrad.weight_grad(go5, src, offs, wrow, (kg, r), parts)
        return gw.reshape(weight_shape).astype(x.dtype, copy=False)
    cols = im2col_all(xpad, (kh, kw), (sh, sw), (dh, dw), oh, ow, wp, groups, parallel)
    cols = cols.reshape(n_img, groups, r, oh * ow)
    gw = np.empty((groups, kg, r), xpad.dtype)
    for g in range(groups):
        go_g = np.ascontiguousarray(go[:, g])
        cols_g = np.ascontiguousarray(cols[:, g])
        gw[g] = batched_matmul(go_g, cols_g.transpose(0, 2, 1)).sum(axis=0)
    return gw.reshape(weight_shape).astype(x.dtype, copy=False)


def conv2d_bias_backward(grad_out: np.ndarray) -> np.ndarray:
    """Gradient of conv2d with respect to its bias: grad_out summed over N, H and W."""
    go = as_compute(grad_out)
    out = np.zeros(go.shape[1], go.dtype)
    n_img, k_n = go.shape[0], go.shape[1]
    bias_grad(np.ascontiguousarray(go).reshape(n_img, k_n, go.size // max(1, n_img * k_n)), out)
    return out.astype(grad_out.dtype, copy=False)


__all__ = [
    "conv2d",
    "conv2d_bias_backward",
    "conv2d_out_hw",
    "conv2d_weight_backward",
    "conv2d_x_backward",
    "conv_transpose2d",
]
