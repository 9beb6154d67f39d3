"""The pools and resizing a PyTorch user reaches for, against torch and torch autograd: pools
with ``ceil_mode``, adaptive max pool (+ indices, + backward), the 1-D pools (defaults through
the 2-D ones, as burn), bilinear resizing with ``align_corners=True``, and ``float_prod``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
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

small = st.integers(1, 3)
float_dtypes = st.sampled_from([np.float32, np.float64])


def _tol(dtype, terms=9):
    return dict(rtol=1e-5 if dtype == np.float32 else 1e-12, atol=sum_atol(terms, dtype=dtype))


@SETTINGS
@given(case=pool_cases(dilated=True, ceil_mode=True), seed=seeds, layout=layouts, dtype=float_dtypes)
def test_max_pool2d_with_ceil_mode_matches_torch_forward_indices_and_backward(B, case, seed, layout, dtype):
    n, c, hw, o = case
    assume(windows_have_real_elements(hw, o))  # torch's own backward writes out of bounds otherwise
    x = randn(seed, (n, c, *hw), dtype)
    tx = tt(x, True)
    expected, expected_idx = F.max_pool2d(tx, o.kernel_size, o.stride, o.padding, o.dilation,
                                          ceil_mode=o.ceil_mode, return_indices=True)
    assert o.output_size(hw) == tuple(expected.shape[2:])
    out, indices = B.max_pool2d_with_indices(as_layout(x, layout), o)
    assert_close(out, expected, **_tol(dtype))
    assert_close(indices, expected_idx, dtype=np.int64)
    assert_close(B.max_pool2d(x, o), expected, **_tol(dtype))
    grad = randn(seed + 1, tuple(expected.shape), dtype)
    expected.backward(tt(grad))
    assert_close(B.max_pool2d_with_indices_backward(x, o, grad, indices), tx.grad, **_tol(dtype))


@SETTINGS
@given(case=pool_cases(dilated=False, ceil_mode=True), seed=seeds, layout=layouts, dtype=float_dtypes)
def test_avg_pool2d_with_ceil_mode_matches_torch_forward_and_backward(B, case, seed, layout, dtype):
    n, c, hw, o = case
    x = randn(seed, (n, c, *hw), dtype)
    tx = tt(x, True)
    expected = F.avg_pool2d(tx, o.kernel_size, o.stride, o.padding, ceil_mode=o.ceil_mode,
                            count_include_pad=o.count_include_pad)
    assert_close(B.avg_pool2d(as_layout(x, layout), o), expected, **_tol(dtype))
    grad = randn(seed + 1, tuple(expected.shape), dtype)
    expected.backward(tt(grad))
    assert_close(B.avg_pool2d_backward(x, o, as_layout(grad, layout)), tx.grad, **_tol(dtype))


def test_ceil_mode_adds_the_partial_last_window_torch_adds():
    o = PoolOptions(kernel_size=2, stride=2, ceil_mode=True)
    assert o.output_size((5, 4)) == (3, 2)
    assert PoolOptions(kernel_size=2, stride=2).output_size((5, 4)) == (2, 2)
    # the last window must start inside the input or its left padding (torch drops it otherwise)
    assert PoolOptions(kernel_size=3, stride=2, padding=1, ceil_mode=True).output_size((5, 5)) == (3, 3)
    assert F.max_pool2d(torch.zeros(1, 1, 5, 5), 3, 2, 1, ceil_mode=True).shape[-2:] == (3, 3)


@SETTINGS
@given(seed=seeds, h=st.integers(1, 7), w=st.integers(1, 7), oh=st.integers(1, 9), ow=st.integers(1, 9),
       layout=layouts, dtype=float_dtypes, ties=st.booleans())
def test_adaptive_max_pool2d_with_indices_and_backward_match_torch(B, seed, h, w, oh, ow, layout, dtype, ties):
    # ties: values on a coarse grid, so a bin often holds its maximum twice (the first wins)
    x = randn(seed, (2, 3, h, w), dtype)
    if ties:
        x = np.round(x).astype(dtype)
    tx = tt(x, True)
    expected, expected_idx = F.adaptive_max_pool2d(tx, (oh, ow), return_indices=True)
    out, indices = B.adaptive_max_pool2d_with_indices(as_layout(x, layout), (oh, ow))
    assert_close(out, expected, **_tol(dtype))
    assert_close(indices, expected_idx, dtype=np.int64)
    assert_close(B.adaptive_max_pool2d(x, (oh, ow)), expected, **_tol(dtype))
    grad = randn(seed + 1, (2, 3, oh, ow), dtype)
    expected.backward(tt(grad))  # bins overlap when oh > h: gradients add
    assert_close(B.adaptive_max_pool2d_with_indices_backward(x, as_layout(grad, layout), indices),
                 tx.grad, **_tol(dtype))


def test_adaptive_max_pool2d_points_at_the_last_nan_like_torch(B):
    x = np.array([[[[1.0, np.nan, 3.0], [np.nan, 5.0, -np.inf]]]], np.float32)
    out, indices = B.adaptive_max_pool2d_with_indices(x, (1, 2))
    expected, expected_idx = F.adaptive_max_pool2d(tt(x), (1, 2), return_indices=True)
    assert_close(out, expected)
    assert_close(indices, expected_idx)


@st.composite
def pool1d_cases(draw, dilated: bool):
    k = draw(small)
    p = draw(st.integers(0, k // 2))
    d = draw(st.integers(1, 2)) if dilated else 1
    s = draw(small)
    length = max(1, (k - 1) * d + 1 - 2 * p + draw(st.integers(0, 6)))
    return k, s, p, d, length, draw(st.booleans()), draw(st.booleans())


@SETTINGS
@given(case=pool1d_cases(dilated=True), seed=seeds, dtype=float_dtypes)
def test_max_pool1d_with_indices_and_backward_match_torch(B, case, seed, dtype):
    k, s, p, d, length, ceil, _ = case
    o = PoolOptions(kernel_size=(1, k), stride=(1, s), padding=(0, p), dilation=(1, d), ceil_mode=ceil)
    assume(windows_have_real_elements((1, length), o))
    x = randn(seed, (2, 3, length), dtype)
    tx = tt(x, True)
    expected, expected_idx = F.max_pool1d(tx, k, s, p, d, ceil_mode=ceil, return_indices=True)
    out, indices = B.max_pool1d_with_indices(x, k, s, p, d, ceil)
    assert_close(out, expected, **_tol(dtype))
    assert_close(indices, expected_idx, dtype=np.int64)
    assert_close(B.max_pool1d(x, k, s, p, d, ceil), expected, **_tol(dtype))
    grad = randn(seed + 1, tuple(expected.shape), dtype)
    expected.backward(tt(grad))
    assert_close(B.max_pool1d_with_indices_backward(x, k, s, p, d, ceil, grad, indices), tx.grad, **_tol(dtype))


@SETTINGS
@given(case=pool1d_cases(dilated=False), seed=seeds, dtype=float_dtypes)
def test_avg_pool1d_and_backward_match_torch(B, case, seed, dtype):
    k, s, p, _, length, ceil, include_pad = case
    x = randn(seed, (2, 3, length), dtype)
    tx = tt(x, True)
    expected = F.avg_pool1d(tx, k, s, p, ceil_mode=ceil, count_include_pad=include_pad)
    assert_close(B.avg_pool1d(x, k, s, p, include_pad, ceil), expected, **_tol(dtype))
    grad = randn(seed + 1, tuple(expected.shape), dtype)
    expected.backward(tt(grad))
    assert_close(B.avg_pool1d_backward(x, grad, k, s, p, include_pad, ceil), tx.grad, **_tol(dtype))


@SETTINGS
@given(seed=seeds, length=st.integers(1, 9), out=st.integers(1, 11), dtype=float_dtypes)
def test_adaptive_pools_1d_and_backward_match_torch(B, seed, length, out, dtype):
    x = randn(seed, (2, 3, length), dtype)
    grad = randn(seed + 1, (2, 3, out), dtype)
    tx = tt(x, True)
    expected = F.adaptive_avg_pool1d(tx, out)
    assert_close(B.adaptive_avg_pool1d(x, out), expected, **_tol(dtype))
    expected.backward(tt(grad))
    assert_close(B.adaptive_avg_pool1d_backward(x, grad), tx.grad, **_tol(dtype))
    tx = tt(x, True)
    expected, expected_idx = F.adaptive_max_pool1d(tx, out, return_indices=True)
    values, indices = B.adaptive_max_pool1d_with_indices(x, out)
    assert_close(values, expected, **_tol(dtype))
    assert_close(indices, expected_idx, dtype=np.int64)
    expected.backward(tt(grad))
    assert_close(B.adaptive_max_pool1d_with_indices_backward(x, grad, indices), tx.grad, **_tol(dtype))


@SETTINGS
@given(seed=seeds, h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 13), ow=st.integers(1, 13),
       layout=layouts, dtype=float_dtypes)
def test_bilinear_with_align_corners_matches_torch_forward_and_backward(B, seed, h, w, oh, ow, layout, dtype):
    x = randn(seed, (2, 2, h, w), dtype)
    tx = tt(x, True)
    expected = F.interpolate(tx, size=(oh, ow), mode="bilinear", align_corners=True)
    options = InterpolateOptions(mode="bilinear", align_corners=True)
    assert_close(B.interpolate(as_layout(x, layout), (oh, ow), options), expected, **_tol(dtype, 4))
    grad = randn(seed + 1, (2, 2, oh, ow), dtype)
    expected.backward(tt(grad))
    terms = 4 * (oh // h + 2) * (ow // w + 2)
    assert_close(B.interpolate_backward(x, as_layout(grad, layout), (oh, ow), options), tx.grad,
                 **_tol(dtype, terms))


def test_align_corners_is_refused_for_nearest_like_torch():
    with pytest.raises(ValueError, match="align_corners=True only applies to mode 'bilinear'"):
        InterpolateOptions(mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(torch.zeros(1, 1, 2, 2), size=(3, 3), mode="nearest", align_corners=True)
    with pytest.raises(TypeError, match="align_corners must be a bool"):
        InterpolateOptions(mode="bilinear", align_corners="yes")


@SETTINGS
@given(seed=seeds, shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), dtype=float_dtypes)
def test_float_prod_matches_torch_including_negatives_and_zeros(B, seed, shape, dtype):
    x = np.round(randn(seed, tuple(shape), dtype, 1.5) * 2) / 2  # halves: zeros and negatives
    assert_close(B.float_prod(x), tt(x).prod().reshape(1), **_tol(dtype))
    for dim in range(len(shape)):
        assert_close(B.float_prod_dim(x, dim), tt(x).prod(dim, keepdim=True), **_tol(dtype))
