"""Pools and interpolate against PyTorch and torch autograd: max pool (+ indices, + backward)
with padding and dilation, average pool with and without padding counted, adaptive average
pool, nearest and bilinear resizing (align_corners=False)."""

from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as F
from hypothesis import assume, given
from hypothesis import strategies as st

from minidl.backend import InterpolateOptions, PoolOptions

from .support import (
    SETTINGS,
    as_layout,
    assert_close,
    layouts,
    pool_cases,
    randn,
    seeds,
    sum_atol,
    tt,
    windows_have_real_elements,
)


@SETTINGS
@given(case=pool_cases(dilated=True), seed=seeds, layout=layouts)
def test_max_pool2d_with_indices_and_backward_match_torch(B, case, seed, layout):
    n, c, hw, o = case
    # a window made only of padding makes torch's backward write out of bounds (and crash);
    # that case has its own test below
    assume(windows_have_real_elements(hw, o))
    x = randn(seed, (n, c, *hw))
    tx = tt(x, True)
    expected, expected_idx = F.max_pool2d(tx, o.kernel_size, o.stride, o.padding, o.dilation, return_indices=True)
    view = as_layout(x, layout)
    assert_close(B.max_pool2d(x=view, options=o), expected)
    out, indices = B.max_pool2d_with_indices(x=view, options=o)
    assert_close(out, expected)
    assert_close(indices, expected_idx, dtype=np.int64)
    grad = randn(seed + 1, tuple(expected.shape))
    expected.backward(tt(grad))
    dx = B.max_pool2d_with_indices_backward(x=x, options=o, output_grad=as_layout(grad, layout), indices=indices)
    assert_close(dx, tx.grad, atol=sum_atol(4))


@SETTINGS
@given(case=pool_cases(dilated=False), seed=seeds, layout=layouts)
def test_avg_pool2d_and_backward_match_torch(B, case, seed, layout):
    n, c, hw, o = case
    x = randn(seed, (n, c, *hw))
    tx = tt(x, True)
    expected = F.avg_pool2d(tx, o.kernel_size, o.stride, o.padding, count_include_pad=o.count_include_pad)
    assert_close(B.avg_pool2d(x=as_layout(x, layout), options=o), expected, atol=sum_atol(9))
    grad = randn(seed + 1, tuple(expected.shape))
    expected.backward(tt(grad))
    dx = B.avg_pool2d_backward(x=x, options=o, output_grad=as_layout(grad, layout))
    assert_close(dx, tx.grad, atol=sum_atol(9))


@SETTINGS
@given(seed=seeds, h=st.integers(1, 7), w=st.integers(1, 7), oh=st.integers(1, 9), ow=st.integers(1, 9),
       layout=layouts)
def test_adaptive_avg_pool2d_and_backward_match_torch(B, seed, h, w, oh, ow, layout):
    x = randn(seed, (2, 3, h, w))
    tx = tt(x, True)
    expected = F.adaptive_avg_pool2d(tx, (oh, ow))
    assert_close(B.adaptive_avg_pool2d(x=as_layout(x, layout), output_size=(oh, ow)), expected, atol=sum_atol(h * w))
    grad = randn(seed + 1, (2, 3, oh, ow))
    expected.backward(tt(grad))
    dx = B.adaptive_avg_pool2d_backward(x=x, output_grad=as_layout(grad, layout))
    assert_close(dx, tx.grad, atol=sum_atol(oh * ow))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@SETTINGS
@given(seed=seeds, h=st.integers(1, 7), w=st.integers(1, 7), oh=st.integers(1, 15), ow=st.integers(1, 15),
       layout=layouts)
def test_interpolate_and_backward_match_torch_autograd(B, mode, seed, h, w, oh, ow, layout):
    x = randn(seed, (2, 2, h, w))
    tx = tt(x, True)
    extra = {} if mode == "nearest" else {"align_corners": False}
    expected = F.interpolate(tx, size=(oh, ow), mode=mode, **extra)
    options = InterpolateOptions(mode)
    assert_close(B.interpolate(x=as_layout(x, layout), output_size=(oh, ow), options=options), expected)
    grad = randn(seed + 1, (2, 2, oh, ow))
    expected.backward(tt(grad))
    dx = B.interpolate_backward(x=x, output_grad=as_layout(grad, layout), output_size=(oh, ow), options=options)
    assert_close(dx, tx.grad, atol=sum_atol(4 * (oh // h + 1) * (ow // w + 1)))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_interpolate_keeps_float16(B, mode):
    x = randn(0, (1, 1, 3, 4), np.float16)
    out = B.interpolate(x=x, output_size=(5, 7), options=InterpolateOptions(mode))
    assert out.dtype == np.float16 and out.shape == (1, 1, 5, 7)
    extra = {} if mode == "nearest" else {"align_corners": False}
    expected = F.interpolate(tt(x).float(), size=(5, 7), mode=mode, **extra).half()
    assert_close(out, expected, rtol=2e-3, atol=2e-3)


def test_max_pool_indices_never_point_into_padding(B):
    # the bottom-left window holds padding and one real -inf: the index must be the -inf
    x = np.array([[[[1.0, np.inf], [-np.inf, 0.0]]]], dtype=np.float32)
    o = PoolOptions(kernel_size=2, stride=1, padding=1)
    out, indices = B.max_pool2d_with_indices(x=x, options=o)
    expected, expected_idx = F.max_pool2d(tt(x), 2, 1, 1, return_indices=True)
    assert_close(out, expected)
    assert_close(indices, expected_idx)


def test_a_window_of_only_padding_gets_torchs_index_and_no_gradient(B):
    # width 1, kernel 2 dilated by 2, padding 1: the only window reads columns -1 and 1
    x = randn(0, (1, 1, 2, 1))
    o = PoolOptions(kernel_size=(1, 2), stride=1, padding=(0, 1), dilation=(1, 2))
    out, indices = B.max_pool2d_with_indices(x=x, options=o)
    expected, expected_idx = F.max_pool2d(tt(x), (1, 2), 1, (0, 1), (1, 2), return_indices=True)
    assert_close(out, expected)
    assert_close(indices, expected_idx)
    grad = np.ones(out.shape, np.float32)
    dx = B.max_pool2d_with_indices_backward(x=x, options=o, output_grad=grad, indices=indices)
    assert_close(dx, np.zeros_like(x))


def test_max_pool_indices_follow_torch_on_ties_and_nans(B):
    # ties keep the first maximum; NaN wins its window and the last NaN is reported
    x = np.array([[[[1, np.nan, 5, np.nan, 2, 3, 7, 7, 0, 7]]]], dtype=np.float32)
    o = PoolOptions(kernel_size=(1, 5))
    out, indices = B.max_pool2d_with_indices(x=x, options=o)
    expected, expected_idx = F.max_pool2d(tt(x), (1, 5), return_indices=True)
    assert_close(out, expected)
    assert_close(indices, expected_idx)
