"""Float matmul (broadcast batch dims) and reductions against PyTorch: kept dims, whole-tensor
results of shape (1,), argmax/argmin as int64, tolerances scaled to the reduction length."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from .support import (
    SETTINGS,
    as_layout,
    assert_close,
    coarse,
    layouts,
    randn,
    seeds,
    shapes,
    sum_atol,
    tt,
)

batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2)


@SETTINGS
@given(data=st.data(), m=st.integers(1, 6), k=st.integers(1, 40), n=st.integers(1, 6),
       seed=seeds, layout=layouts)
def test_matmul_broadcasts_batch_dims_like_torch(B, data, m, k, n, seed, layout):
    batch = data.draw(batch_shapes)
    # each side keeps or squeezes each batch dim, and may drop leading ones
    lhs_batch = [b if data.draw(st.booleans()) else 1 for b in batch]
    rhs_batch = [b if data.draw(st.booleans()) else 1 for b in batch][data.draw(st.integers(0, len(batch))):]
    lhs = randn(seed, (*lhs_batch, m, k))
    rhs = randn(seed + 1, (*rhs_batch, k, n))
    out = B.float_matmul(lhs=as_layout(lhs, layout), rhs=as_layout(rhs, layout))
    assert_close(out, torch.matmul(tt(lhs), tt(rhs)), atol=sum_atol(k, 4.0))


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_matmul_keeps_float16_and_float64(B, dtype):
    lhs, rhs = randn(0, (2, 3, 64), dtype), randn(1, (64, 5), dtype)
    out = B.float_matmul(lhs=lhs, rhs=rhs)
    # the reference: exact products summed in float64, rounded once to dtype
    expected = (lhs.astype(np.float64) @ rhs.astype(np.float64)).astype(dtype)
    assert_close(out, expected, rtol=2e-3 if dtype == np.float16 else 1e-12, atol=0.1 if dtype == np.float16 else 1e-12)


def test_matmul_with_an_empty_inner_dim_is_zeros(B):
    out = B.float_matmul(lhs=np.ones((2, 3, 0), np.float32), rhs=np.ones((0, 4), np.float32))
    assert_close(out, torch.zeros(2, 3, 4))


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts)
def test_whole_sum_is_shape_one(B, shape, seed, layout):
    x = randn(seed, shape)
    assert_close(B.float_sum(tensor=as_layout(x, layout)), tt(x).sum().reshape(1), atol=sum_atol(x.size, 3.0))
    assert_close(B.float_mean(tensor=x), tt(x).mean().reshape(1), atol=sum_atol(x.size, 3.0))


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data(), layout=layouts)
def test_dim_reductions_keep_the_dim(B, shape, seed, data, layout):
    dim = data.draw(st.integers(0, len(shape) - 1))
    x = coarse(seed, shape) + randn(seed, shape, scale=1e-3) * (seed % 2)  # ties on even seeds
    t, view = tt(x), as_layout(x, layout)
    n = shape[dim]
    assert_close(B.float_sum_dim(tensor=view, dim=dim), t.sum(dim, keepdim=True), atol=sum_atol(n, 2.0))
    assert_close(B.float_mean_dim(tensor=view, dim=dim), t.mean(dim, keepdim=True), atol=sum_atol(n, 2.0))
    assert_close(B.float_max_dim(tensor=view, dim=dim), t.amax(dim, keepdim=True))
    assert_close(B.float_min_dim(tensor=view, dim=dim), t.amin(dim, keepdim=True))
    # torch's CPU argmax returns the first index of a tie, like NumPy
    assert_close(B.float_argmax(tensor=view, dim=dim), t.argmax(dim, keepdim=True), dtype=np.int64)
    assert_close(B.float_argmin(tensor=view, dim=dim), t.argmin(dim, keepdim=True), dtype=np.int64)
    values, indices = B.float_max_dim_with_indices(tensor=view, dim=dim)
    assert_close(values, t.amax(dim, keepdim=True))
    assert_close(indices, t.argmax(dim, keepdim=True))
    values, indices = B.float_min_dim_with_indices(tensor=view, dim=dim)
    assert_close(values, t.amin(dim, keepdim=True))
    assert_close(indices, t.argmin(dim, keepdim=True))


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_prod_dim_matches_torch_on_positive_values(B, shape, seed, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    x = np.abs(randn(seed, shape)) + 0.5
    assert_close(B.float_prod_dim(tensor=x, dim=dim), tt(x).prod(dim, keepdim=True), rtol=1e-5 * shape[dim], atol=1e-6)


def test_whole_max_and_min_are_shape_one(B):
    x = randn(0, (3, 4, 5))
    assert_close(B.float_max(tensor=x), tt(x).max().reshape(1))
    assert_close(B.float_min(tensor=x), tt(x).min().reshape(1))


def test_sum_over_an_empty_dim_is_zero(B):
    x = np.zeros((3, 0, 2), dtype=np.float32)
    assert_close(B.float_sum_dim(tensor=x, dim=1), torch.zeros(3, 1, 2))
    assert_close(B.float_sum(tensor=x), torch.zeros(1))


def test_float16_sums_accumulate_in_float32(B):
    # 60000 + 60000 overflows float16 (max 65504); accumulated in float32 the sum is exactly 0
    x = np.array([60000, 60000, -60000, -60000], dtype=np.float16)
    out = B.float_sum(tensor=x)
    assert out.dtype == np.float16 and out.shape == (1,)
    assert out[0] == 0
    assert B.float_sum_dim(tensor=x.reshape(1, 4), dim=1)[0, 0] == 0
    assert B.float_mean_dim(tensor=x.reshape(1, 4), dim=1)[0, 0] == 0


def test_nan_propagates_through_max_like_torch(B):
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    assert_close(B.float_max_dim(tensor=x, dim=1), tt(x).amax(1, keepdim=True))
    assert_close(B.float_sum_dim(tensor=x, dim=1), tt(x).sum(1, keepdim=True))
