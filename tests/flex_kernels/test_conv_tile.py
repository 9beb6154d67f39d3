"""conv2d's register-tiled float32 kernels (``conv_tile`` forward, ``conv_wgrad`` weight
gradient; and layer_norm's ``norm_simd`` rows in the AVX2 child): partial vector slots, channel counts that are not a multiple of the tile,
strided/transposed inputs, NaN/inf, threads, and the AVX2 tiles in a child process (the ISA is
fixed at import)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minidl.backends.flex.kernels import conv, conv_tile, isa

from .helpers import assert_close

ROOT = Path(__file__).resolve().parents[2]


def _ref(x, w, b, stride=1, padding=0, dilation=1, groups=1):
    t = lambda v: None if v is None else torch.from_numpy(np.ascontiguousarray(v)).double()  # noqa: E731
    return F.conv2d(t(x), t(w), t(b), stride, padding, dilation, groups).numpy()


@pytest.mark.parametrize(
    "n,c,h,w,k,ks,stride,pad,dil,groups",
    [
        (2, 3, 5, 37, 7, (3, 3), 1, 1, 1, 1),  # rows of 2 full + 1 partial slot, K % MR != 0
        (1, 4, 3, 3, 5, (3, 3), 1, 1, 1, 1),  # fewer slots than one tile
        (2, 4, 6, 35, 4, (3, 3), 1, 1, 1, 1),  # Kg = 4: the narrow tile
        (2, 6, 6, 35, 18, (3, 3), 1, 1, 1, 3),  # Kg = 6: the wide tile, channels past Kg
        (3, 8, 19, 16, 12, (3, 3), 1, 1, 1, 2),  # rows exactly one AVX-512 vector, groups
        (2, 6, 21, 23, 9, (3, 3), 2, 1, 1, 3),  # strided: im2col rows, partial slots
        (2, 5, 17, 40, 6, (2, 5), 1, (0, 2), (2, 1), 1),  # dilation, asymmetric kernel
        (1, 2, 9, 70, 3, (1, 1), 1, 0, 1, 1),  # 1x1, long rows
    ],
)
def test_tiled_conv2d_matches_torch(rng, n, c, h, w, k, ks, stride, pad, dil, groups):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wgt = rng.standard_normal((k, c // groups, *ks)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    got = conv.conv2d(x, wgt, b, stride, pad, dil, groups)
    assert got.dtype == np.float32
    assert_close(got, _ref(x, wgt, b, stride, pad, dil, groups), np.float32, c * ks[0] * ks[1])


def _flat(oh, ow, wrow):
    # conv2d's choice: the slots run over the plane end to end when that takes fewer
    return -(-(oh * wrow) // conv_tile.LANES) < oh * -(-ow // conv_tile.LANES)


@pytest.mark.parametrize(
    "n,c,h,w,k,ks,stride,pad,dil,groups",
    [
        (32, 1, 8, 8, 8, (3, 3), 1, 1, 1, 1),  # the training chapter's conv1
        (32, 8, 4, 4, 16, (3, 3), 1, 1, 1, 1),  # its conv2: 24 grid positions, the short tile
        (32, 16, 4, 4, 8, (3, 3), 1, 1, 1, 1),  # conv2's input gradient as a forward conv
        (3, 5, 5, 3, 11, (3, 3), 1, (2, 0), 1, 1),  # OW 3, asymmetric padding, K % MR != 0
        (2, 3, 7, 5, 3, (3, 2), 1, 1, (2, 1), 1),  # Kg <= 4 (narrow tile), dilation
        (2, 4, 6, 6, 12, (3, 3), 1, 1, 1, 2),  # groups
        (2, 6, 9, 7, 10, (3, 3), 2, 1, 1, 1),  # strided: im2col rows, no border columns
        (2, 3, 6, 9, 6, (1, 1), 1, 0, 1, 1),  # 1x1, rows wider than the output
        (2, 2, 2, 2, 9, (3, 3), 1, 1, 1, 1),  # 2x2 planes: one slot for both rows
    ],
)
def test_small_planes_run_flat_and_match_torch(rng, n, c, h, w, k, ks, stride, pad, dil, groups):
    # forward, input gradient (a transposed conv through the same kernel) and weight gradient
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wgt = rng.standard_normal((k, c // groups, *ks)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    xt = torch.from_numpy(x).double().requires_grad_()
    wt = torch.from_numpy(wgt).double().requires_grad_()
    pads = (pad, pad) if isinstance(pad, int) else pad
    y = F.conv2d(xt, wt, torch.from_numpy(b).double(), stride, pads, dil, groups)
    oh, ow = y.shape[2], y.shape[3]
    wrow = ow if stride != 1 else w + 2 * pads[1]
    assert _flat(oh, ow, wrow)
    red = c // groups * ks[0] * ks[1]
    got = conv.conv2d(x, wgt, b, stride, pads, dil, groups)
    assert got.dtype == np.float32 and got.flags.c_contiguous
    assert_close(got, y.detach().numpy(), np.float32, red)
    go = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(torch.from_numpy(go).double())
    gx = conv.conv2d_x_backward(go, wgt, x.shape, stride, pads, dil, groups)
    assert_close(gx, xt.grad.numpy(), np.float32, k // groups * ks[0] * ks[1])
    gw = conv.conv2d_weight_backward(x, go, wgt.shape, stride, pads, dil, groups)
    assert_close(gw, wt.grad.numpy(), np.float32, n * oh * ow)


def test_flat_planes_keep_nan_and_inf_local(rng):
    # the border columns of the grid are computed from the neighbouring row's values: an inf
    # or a NaN there must reach only the outputs whose window holds it
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    x[1, 2, 1, 3] = np.inf
    x[0, 0, 2, 0] = np.nan
    wgt = np.abs(rng.standard_normal((5, 3, 3, 3))).astype(np.float32)
    ref = F.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wgt).double(), None, 1, 1).numpy()
    got = conv.conv2d(x, wgt, None, 1, 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(ref))
    fin = np.isfinite(ref)
    assert_close(got[fin], ref[fin], np.float32, 27)


def test_tile_shape_takes_the_short_tile_when_it_pads_less():
    mr, nv = conv_tile.WIDE
    assert conv_tile.tile_shape(mr, None) == conv_tile.WIDE
    assert conv_tile.tile_shape(mr, 2) == conv_tile.SHORT  # 2 slots: no padding slot
    assert conv_tile.tile_shape(mr, nv) == conv_tile.WIDE
    assert conv_tile.tile_shape(4, 2) == conv_tile.NARROW


def test_tiled_conv2d_parallel_odd_sizes_and_views(rng):
    # Big enough for the threaded path; x is a transposed (non-contiguous) view.
    x = rng.standard_normal((9, 13, 31, 29)).astype(np.float32).transpose(0, 1, 3, 2)
    wgt = rng.standard_normal((11, 13, 3, 3)).astype(np.float32)
    got = conv.conv2d(x, wgt, None, 1, 1)
    assert got.size * 13 * 9 >= conv.PARALLEL_MIN_WORK
    assert_close(got, _ref(x, wgt, None, 1, 1), np.float32, 13 * 9)


def test_tiled_conv2d_nan_stays_local(rng):
    x = rng.standard_normal((1, 2, 6, 40)).astype(np.float32)
    x[0, 1, 3, 20] = np.nan
    y = conv.conv2d(x, np.ones((3, 2, 3, 3), np.float32), None, 1, 1)
    bad = np.isnan(y[0, 0])
    assert bad[2:5, 19:22].all() and bad.sum() == 9


@pytest.mark.parametrize("nv", [3, 6])
def test_slots_cover_each_row_once(nv):
    q, d, lanes = conv_tile.slots(3, 2 * conv_tile.LANES + 5, 50, nv)
    assert len(q) % nv == 0
    assert lanes.sum() == 3 * (2 * conv_tile.LANES + 5)
    assert list(lanes[:3]) == [conv_tile.LANES, conv_tile.LANES, 5]
    assert q[3] == 50 and d[3] == 2 * conv_tile.LANES + 5


def test_avx2_tiles_match_torch_in_a_child_process():
    code = """
import numpy as np, torch, torch.nn.functional as F
from minidl.backends.flex.kernels import conv, conv_tile, conv_wgrad_flat, isa
assert conv_tile.LANES == 8 and conv_tile.WIDE == conv_tile.NARROW == (4, 3)
assert conv_tile.SHORT == (4, 2)
rng = np.random.default_rng(0)
for shape, k, stride in [((2, 3, 5, 21), 7, 1), ((4, 16, 32, 32), 32, 1), ((2, 6, 13, 11), 5, 2),
                         ((32, 8, 4, 4), 16, 1), ((2, 3, 3, 3), 6, 1)]:  # flat, the short tile
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((k, shape[1], 3, 3)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    ref = F.conv2d(*(torch.from_numpy(v).double() for v in (x, w, b)), stride=stride, padding=1)
    got = conv.conv2d(x, w, b, stride, 1)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-5, atol=1e-4)
    go = rng.standard_normal(got.shape).astype(np.float32)
    wt = torch.from_numpy(w).double().requires_grad_()
    F.conv2d(torch.from_numpy(x).double(), wt, stride=stride, padding=1).backward(
        torch.from_numpy(go).double())
    gw = conv.conv2d_weight_backward(x, go, w.shape, stride, 1)
    np.testing.assert_allclose(gw, wt.grad.numpy(), rtol=1e-5, atol=2e-3)
assert conv_wgrad_flat.KR == 4 and conv_wgrad_flat.RR == 2
for shape, k, stride in [((32, 1, 8, 8), 3, 1), ((3, 5, 9, 7), 4, 2)]:  # the flat weight gradient
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((k, shape[1], 3, 3)).astype(np.float32)
    wt = torch.from_numpy(w).double().requires_grad_()
    y = F.conv2d(torch.from_numpy(x).double(), wt, stride=stride, padding=1)
    go = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(torch.from_numpy(go).double())
    gw = conv.conv2d_weight_backward(x, go, w.shape, stride, 1)
    np.testing.assert_allclose(gw, wt.grad.numpy(), rtol=1e-5, atol=2e-3)
from minidl.backends.flex.kernels import norm, norm_simd
assert norm_simd.CHUNK == 32
x = rng.standard_normal((300, 96)).astype(np.float32) * 3 + 1
g, b = rng.standard_normal(96).astype(np.float32), rng.standard_normal(96).astype(np.float32)
ref = F.layer_norm(torch.from_numpy(x).double(), (96,), torch.from_numpy(g).double(),
                   torch.from_numpy(b).double())
np.testing.assert_allclose(norm.layer_norm(x, g, b), ref.numpy(), rtol=1e-5, atol=1e-5)
print("ok")
"""
    # A true AVX2 build: the CPU name alone keeps the host's AVX-512 features in numba.
    env = dict(os.environ, **isa.AVX2_BUILD, PYTHONPATH=str(ROOT))
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


@pytest.mark.parametrize(
    "n,c,h,w,k,ks,stride,pad,groups",
    [
        (3, 5, 9, 37, 7, (3, 3), 1, 1, 1),  # partial slots, Kg and R not multiples of the tile
        (2, 6, 13, 21, 10, (3, 3), 2, 1, 2),  # strided: im2col rows, groups
        (2, 5, 7, 40, 6, (2, 3), 1, (0, 1), 1),
        (9, 13, 31, 29, 11, (3, 3), 1, 1, 1),  # big enough for the threaded path
        # few channels: lanes over the positions (conv_wgrad_flat)
        (32, 1, 8, 8, 8, (3, 3), 1, 1, 1),  # the training chapter's conv1
        (9, 13, 31, 29, 5, (3, 3), 1, 1, 1),  # threaded, Kg and R not multiples of the tile
        (3, 4, 5, 3, 6, (3, 3), 1, (2, 0), 2),  # OW 3, asymmetric padding, groups
        (2, 3, 11, 9, 2, (2, 3), 2, 1, 1),  # strided: im2col rows
        (1, 2, 1, 1, 3, (1, 1), 1, 0, 1),  # one output position
    ],
)
def test_tiled_weight_gradient_matches_torch(rng, n, c, h, w, k, ks, stride, pad, groups):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wgt = rng.standard_normal((k, c // groups, *ks)).astype(np.float32)
    xt = torch.from_numpy(x).double()
    wt = torch.from_numpy(wgt).double().requires_grad_()
    y = F.conv2d(xt, wt, None, stride, pad, 1, groups)
    go = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(torch.from_numpy(go).double())
    gw = conv.conv2d_weight_backward(x, go, wgt.shape, stride, pad, 1, groups)
    assert gw.dtype == np.float32
    assert_close(gw, wt.grad.numpy(), np.float32, n * y.shape[2] * y.shape[3])


def test_flat_weight_gradient_is_chosen_for_few_channels():
    from minidl.backends.flex.kernels import conv_wgrad

    assert conv._wgrad_flat(1) and conv._wgrad_flat(conv_wgrad.KB // 4)
    assert not conv._wgrad_flat(conv_wgrad.KB // 4 + 1)


def test_flat_weight_gradient_with_dilation_and_inf(rng):
    # an inf in x reaches exactly the gradients whose windows hold it (here all of one input
    # channel's, every output position seeing it through some weight position)
    x = rng.standard_normal((2, 2, 6, 7)).astype(np.float32)
    x[1, 0, 3, 6] = np.inf
    wt = torch.zeros(3, 2, 2, 3, dtype=torch.float64, requires_grad=True)
    y = F.conv2d(torch.from_numpy(x).double(), wt, None, 1, (1, 2), (2, 1))
    go = np.abs(rng.standard_normal(y.shape)).astype(np.float32)
    y.backward(torch.from_numpy(go).double())
    gw = conv.conv2d_weight_backward(x, go, (3, 2, 2, 3), 1, (1, 2), (2, 1))
    ref = wt.grad.numpy()
    np.testing.assert_array_equal(np.isfinite(gw), np.isfinite(ref))
    np.testing.assert_array_equal(np.isnan(gw), np.isnan(ref))
    fin = np.isfinite(ref)
    assert_close(gw[fin], ref[fin], np.float32, 2 * y.shape[2] * y.shape[3])


def test_weight_gradient_never_reads_past_a_row(rng):
    # OW = 15 of a 17-wide input: for dx = 0, column 15 is read only by positions past the
    # output row; an inf there must not turn the dx = 0 gradients into NaN (0 * inf).
    x = rng.standard_normal((1, 1, 4, 17)).astype(np.float32)
    x[0, 0, 1, 15] = np.inf
    go = rng.standard_normal((1, 1, 2, 15)).astype(np.float32)
    gw = conv.conv2d_weight_backward(x, go, (1, 1, 3, 3), 1, 0)
    wt = torch.zeros(1, 1, 3, 3, dtype=torch.float64, requires_grad=True)
    F.conv2d(torch.from_numpy(x).double(), wt).backward(torch.from_numpy(go).double())
    assert np.isfinite(gw[0, 0, :, 0]).all()
    np.testing.assert_array_equal(np.isfinite(gw), np.isfinite(wt.grad.numpy()))


@pytest.mark.parametrize("shape", [(32, 8, 8, 8), (3, 5, 7, 3), (2, 3, 1, 1), (0, 4, 2, 2), (2, 3, 0, 5)])
def test_bias_gradient_sums_planes_in_partial_sums(rng, shape):
    # planes a multiple of the partial sums, with a tail, shorter than them, empty
    g = rng.standard_normal(shape).astype(np.float32)
    got = conv.conv2d_bias_backward(g)
    assert got.dtype == np.float32 and got.shape == (shape[1],)
    assert_close(got, g.astype(np.float64).sum(axis=(0, 2, 3)), np.float32, g.size // max(1, shape[1]))


def test_bias_gradient_of_a_view_and_nan(rng):
    g = rng.standard_normal((4, 3, 9, 5)).astype(np.float32).transpose(0, 1, 3, 2)
    g[1, 2, 4, 8] = np.nan
    got = conv.conv2d_bias_backward(g)
    ref = g.astype(np.float64).sum(axis=(0, 2, 3))
    assert np.isnan(got[2]) and np.isfinite(got[:2]).all()
    assert_close(got[:2], ref[:2], np.float32, 180)
