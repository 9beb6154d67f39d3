"""conv2d, its backward pieces and conv_transpose2d against torch (float64 oracle)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backends.flex.kernels import conv

from .helpers import assert_close

CASES = [
    # N, C, H, W, K, kernel, stride, padding (t, b, l, r), dilation, groups, bias
    (2, 3, 7, 9, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    (2, 4, 8, 8, 6, (3, 2), (2, 1), (0, 1, 2, 0), (1, 2), 2, True),
    (1, 6, 11, 10, 9, (2, 3), (3, 2), (2, 2, 1, 1), (2, 1), 3, False),
    (3, 6, 12, 10, 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 6, True),
    (2, 5, 9, 9, 7, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    (1, 1, 1, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, False),
    (1, 2, 5, 6, 3, (5, 6), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    (4, 16, 32, 32, 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
]


def _torch_conv(x, w, b, stride, pad, dil, groups):
    pt, pb, pl, pr = pad
    xt = torch.from_numpy(x).double().requires_grad_()
    wt = torch.from_numpy(w).double().requires_grad_()
    bt = None if b is None else torch.from_numpy(b).double().requires_grad_()
    y = F.conv2d(F.pad(xt, (pl, pr, pt, pb)), wt, bt, stride, 0, dil, groups)
    return y, xt, wt, bt


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_forward_and_backward_match_torch(rng, case, dtype):
    n, c, h, w, k, ks, stride, pad, dil, groups, has_bias = case
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wgt = rng.standard_normal((k, c // groups, *ks)).astype(dtype)
    b = rng.standard_normal(k).astype(dtype) if has_bias else None
    y, xt, wt, bt = _torch_conv(x, wgt, b, stride, pad, dil, groups)
    red = c // groups * ks[0] * ks[1]
    assert_close(conv.conv2d(x, wgt, b, stride, pad, dil, groups), y.detach().numpy(), dtype, red)
    go = torch.randn_like(y)
    y.backward(go)
    g = go.numpy().astype(dtype)
    gx = conv.conv2d_x_backward(g, wgt, x.shape, stride, pad, dil, groups)
    assert_close(gx, xt.grad.numpy(), dtype, red)
    gw = conv.conv2d_weight_backward(x, g, wgt.shape, stride, pad, dil, groups)
    assert_close(gw, wt.grad.numpy(), dtype, n * y.shape[2] * y.shape[3])
    if has_bias:
        gb = conv.conv2d_bias_backward(g)
        assert_close(gb, bt.grad.numpy(), dtype, n * y.shape[2] * y.shape[3])


@settings(deadline=None, max_examples=12)
@given(
    n=st.integers(1, 3),
    cg=st.integers(1, 3),
    kg=st.integers(1, 5),
    groups=st.integers(1, 2),
    h=st.integers(1, 9),
    w=st.integers(1, 9),
    kh=st.integers(1, 3),
    kw=st.integers(1, 3),
    sh=st.integers(1, 3),
    sw=st.integers(1, 3),
    dh=st.integers(1, 2),
    dw=st.integers(1, 2),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    seed=st.integers(0, 2**31),
)
def test_conv2d_random_options(n, cg, kg, groups, h, w, kh, kw, sh, sw, dh, dw, pads, seed):
    if h + pads[0] + pads[1] < dh * (kh - 1) + 1 or w + pads[2] + pads[3] < dw * (kw - 1) + 1:
        return
    r = np.random.default_rng(seed)
    x = r.standard_normal((n, cg * groups, h, w)).astype(np.float32)
    wgt = r.standard_normal((kg * groups, cg, kh, kw)).astype(np.float32)
    b = r.standard_normal(kg * groups).astype(np.float32)
    y, *_ = _torch_conv(x, wgt, b, (sh, sw), pads, (dh, dw), groups)
    got = conv.conv2d(x, wgt, b, (sh, sw), pads, (dh, dw), groups)
    assert_close(got, y.detach().numpy(), np.float32, cg * kh * kw)


@pytest.mark.parametrize(
    "cin,cout_g,groups,ks,stride,padding,out_pad,dil",
    [
        (3, 4, 1, (3, 3), (1, 1), (0, 0), (0, 0), (1, 1)),
        (4, 3, 2, (3, 2), (2, 1), (1, 0), (1, 0), (1, 2)),
        (6, 2, 3, (2, 3), (3, 2), (1, 1), (2, 1), (2, 1)),
        (2, 5, 1, (4, 4), (2, 2), (1, 1), (0, 0), (1, 1)),
    ],
)
def test_conv_transpose2d_matches_torch(rng, cin, cout_g, groups, ks, stride, padding, out_pad, dil):
    x = rng.standard_normal((2, cin, 5, 6)).astype(np.float32)
    w = rng.standard_normal((cin, cout_g, *ks)).astype(np.float32)
    b = rng.standard_normal(cout_g * groups).astype(np.float32)
    ref = F.conv_transpose2d(
        torch.from_numpy(x).double(), torch.from_numpy(w).double(), torch.from_numpy(b).double(),
        stride, padding, out_pad, groups, dil,
    )  # fmt: skip
    pads = (padding[0], padding[0], padding[1], padding[1])
    got = conv.conv_transpose2d(x, w, b, stride, pads, out_pad, dil, groups)
    assert_close(got, ref.numpy(), np.float32, cin * ks[0] * ks[1])


def test_conv2d_float16_computes_in_float32(rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float16)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float16)
    out = conv.conv2d(x, w, None, 1, 1)
    assert out.dtype == np.float16
    ref = conv.conv2d(x.astype(np.float32), w.astype(np.float32), None, 1, 1)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-2, atol=1e-2)


def test_conv2d_errors_name_the_problem():
    with pytest.raises(ValueError, match="groups=2"):
        conv.conv2d(np.zeros((1, 3, 4, 4), np.float32), np.zeros((2, 1, 3, 3), np.float32), groups=2)
    with pytest.raises(ValueError, match="larger than the padded input"):
        conv.conv2d(np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 3, 3), np.float32))
