"""conv2d (+ input, weight and bias gradients), conv_transpose2d and the conv1d default against
PyTorch and torch autograd: strides, dilations, groups and asymmetric padding."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import assume, given
from hypothesis import strategies as st

from minidl.backend import ConvOptions, ConvTransposeOptions

from .support import SETTINGS, as_layout, assert_close, layouts, randn, seeds, sum_atol, tt

small = st.integers(1, 3)


@st.composite
def conv_cases(draw):
    """A conv2d problem: shapes and options whose (padded) input fits the dilated kernel."""
    groups = draw(small)
    kernel = (draw(small), draw(small))
    stride = (draw(small), draw(small))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))  # top, bottom, left, right
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    h = max(1, spans[0] - pads[0] - pads[1] + draw(st.integers(0, 5)))
    w = max(1, spans[1] - pads[2] - pads[3] + draw(st.integers(0, 5)))
    options = ConvOptions(stride=stride, padding=(pads[0], pads[2]), padding_end=(pads[1], pads[3]),
                          dilation=dilation, groups=groups)
    return dict(n=draw(st.integers(1, 2)), c_in=groups * draw(small), c_out=groups * draw(small),
                hw=(h, w), kernel=kernel, options=options, bias=draw(st.booleans()))


def _torch_conv(x, w, b, options: ConvOptions):
    top, bottom, left, right = options.pads
    return F.conv2d(F.pad(x, (left, right, top, bottom)), w, b, stride=options.stride,
                    dilation=options.dilation, groups=options.groups)


@SETTINGS
@given(case=conv_cases(), seed=seeds, layout=layouts)
def test_conv2d_and_its_gradients_match_torch(B, case, seed, layout):
    options = case["options"]
    x = randn(seed, (case["n"], case["c_in"], *case["hw"]))
    w = randn(seed + 1, (case["c_out"], case["c_in"] // options.groups, *case["kernel"]))
    b = randn(seed + 2, (case["c_out"],)) if case["bias"] else None
    tx, tw = tt(x, True), tt(w, True)
    tb = tt(b, True) if b is not None else None
    expected = _torch_conv(tx, tw, tb, options)
    terms = w[0].size
    out = B.conv2d(x=as_layout(x, layout), weight=as_layout(w, layout), bias=b, options=options)
    assert_close(out, expected, atol=sum_atol(terms, 4.0))

    grad = randn(seed + 3, tuple(expected.shape))
    expected.backward(tt(grad))
    dx = B.conv2d_x_backward(x=x, weight=w, output_grad=as_layout(grad, layout), options=options)
    assert_close(dx, tx.grad, atol=sum_atol(case["c_out"] * terms, 4.0))
    dw = B.conv2d_weight_backward(x=as_layout(x, layout), weight=w, output_grad=grad, options=options)
    assert_close(dw, tw.grad, atol=sum_atol(grad[:, 0].size, 4.0))
    if b is not None:
        assert_close(B.conv2d_bias_backward(output_grad=grad), tb.grad, atol=sum_atol(grad[:, 0].size))


def test_conv2d_keeps_float16_and_float64(B):
    options = ConvOptions(padding=1)
    for dtype, rtol in (("float16", 2e-3), ("float64", 1e-12)):
        x, w = randn(0, (1, 2, 5, 5), dtype), randn(1, (3, 2, 3, 3), dtype)
        out = B.conv2d(x=x, weight=w, bias=None, options=options)
        expected = F.conv2d(tt(x).double(), tt(w).double(), padding=1).to(getattr(torch, dtype))
        assert_close(out, expected, rtol=rtol, atol=rtol * 10)


@st.composite
def transpose_cases(draw):
    groups = draw(small)
    kernel = (draw(small), draw(small))
    stride = (draw(small), draw(small))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    # torch: output padding must be smaller than the stride or the dilation
    padding_out = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    hw = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    for size, s, p, k, d, op in zip(hw, stride, padding, kernel, dilation, padding_out):
        assume((size - 1) * s - 2 * p + d * (k - 1) + op + 1 > 0)
    options = ConvTransposeOptions(stride=stride, padding=padding, padding_out=padding_out,
                                   dilation=dilation, groups=groups)
    return dict(n=draw(st.integers(1, 2)), c_in=groups * draw(small), c_out_g=draw(small), hw=hw,
                kernel=kernel, options=options, bias=draw(st.booleans()))


@SETTINGS
@given(case=transpose_cases(), seed=seeds, layout=layouts)
def test_conv_transpose2d_matches_torch(B, case, seed, layout):
    o = case["options"]
    x = randn(seed, (case["n"], case["c_in"], *case["hw"]))
    w = randn(seed + 1, (case["c_in"], case["c_out_g"], *case["kernel"]))
    b = randn(seed + 2, (case["c_out_g"] * o.groups,)) if case["bias"] else None
    expected = F.conv_transpose2d(tt(x), tt(w), tt(b) if b is not None else None, stride=o.stride,
                                  padding=o.padding, output_padding=o.padding_out, groups=o.groups,
                                  dilation=o.dilation)
    out = B.conv_transpose2d(x=as_layout(x, layout), weight=w, bias=b, options=o)
    assert_close(out, expected, atol=sum_atol(case["c_in"] * w[0, 0].size, 4.0))


@SETTINGS
@given(seed=seeds, groups=small, c=small, k=small, stride=small, dilation=st.integers(1, 2),
       padding=st.integers(0, 2), padding_end=st.none() | st.integers(0, 2), extra=st.integers(0, 5))
def test_conv1d_default_runs_through_conv2d_like_torch(B, seed, groups, c, k, stride, dilation, padding,
                                                        padding_end, extra):
    end = padding if padding_end is None else padding_end
    length = max(1, (k - 1) * dilation + 1 - padding - end + extra)
    x = randn(seed, (2, groups * c, length))
    w = randn(seed + 1, (groups * 2, c, k))
    b = randn(seed + 2, (groups * 2,))
    out = B.conv1d(x=x, weight=w, bias=b, stride=stride, padding=padding, dilation=dilation,
                   groups=groups, padding_end=padding_end)
    expected = F.conv1d(F.pad(tt(x), (padding, end)), tt(w), tt(b), stride=stride, dilation=dilation, groups=groups)
    assert_close(out, expected, atol=sum_atol(c * k, 4.0))


def test_module_ops_accept_an_empty_batch(B):
    from minidl.backend import InterpolateOptions, PoolOptions

    x = np.zeros((0, 2, 5, 5), np.float32)
    w = randn(0, (4, 2, 3, 3))
    o = ConvOptions(padding=1)
    grad = np.zeros((0, 4, 5, 5), np.float32)
    assert_close(B.conv2d(x=x, weight=w, bias=None, options=o), F.conv2d(tt(x), tt(w), padding=1))
    assert_close(B.conv2d_x_backward(x=x, weight=w, output_grad=grad, options=o), tt(x))
    assert_close(B.conv2d_weight_backward(x=x, weight=w, output_grad=grad, options=o), np.zeros_like(w))
    wt = randn(1, (2, 3, 3, 3))
    assert_close(B.conv_transpose2d(x=x, weight=wt, bias=None, options=ConvTransposeOptions()),
                 F.conv_transpose2d(tt(x), tt(wt)))
    pool = PoolOptions(kernel_size=2)
    assert_close(B.max_pool2d(x=x, options=pool), F.max_pool2d(tt(x), 2))
    assert_close(B.avg_pool2d(x=x, options=pool), F.avg_pool2d(tt(x), 2))
    assert_close(B.adaptive_avg_pool2d(x=x, output_size=(3, 2)), F.adaptive_avg_pool2d(tt(x), (3, 2)))
    assert_close(B.interpolate(x=x, output_size=(7, 7), options=InterpolateOptions("bilinear")),
                 F.interpolate(tt(x), size=(7, 7), mode="bilinear", align_corners=False))
