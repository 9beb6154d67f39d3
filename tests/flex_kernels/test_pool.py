"""Pools against torch: values, torch's indices, and the backward passes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minidl.backends.flex.kernels import pool

from .helpers import assert_close

MAX_CASES = [
    ((2, 3, 7, 8), 3, 2, 1, 1),
    ((1, 2, 9, 9), (2, 3), (1, 2), (1, 1), (2, 1)),
    ((2, 1, 5, 5), 2, None, 0, 1),
    ((1, 1, 1, 1), 1, 1, 0, 1),
    ((3, 4, 32, 32), 3, 1, 1, 1),
]


@pytest.mark.parametrize("shape,k,s,p,d", MAX_CASES)
def test_max_pool2d_values_indices_and_backward_match_torch(rng, shape, k, s, p, d):
    x = rng.standard_normal(shape).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    ref, ref_idx = F.max_pool2d(xt, k, s, p, d, return_indices=True)
    values, idx = pool.max_pool2d(x, k, s, p, d)
    np.testing.assert_array_equal(values, ref.detach().numpy())
    np.testing.assert_array_equal(idx, ref_idx.numpy())
    assert idx.dtype == np.int64
    go = torch.randn_like(ref)
    ref.backward(go)
    assert_close(pool.max_pool2d_backward(go.numpy(), idx, x.shape), xt.grad.numpy())


def test_max_pool2d_nan_and_ties_follow_torch():
    x = np.array([[[[1, np.nan, 3], [np.nan, 2, 0], [4, 4, -1]]]], np.float32)
    values, idx = pool.max_pool2d(x, 2, 1)
    ref, ref_idx = F.max_pool2d(torch.from_numpy(x), 2, 1, return_indices=True)
    np.testing.assert_array_equal(values, ref.numpy())
    np.testing.assert_array_equal(idx, ref_idx.numpy())


@pytest.mark.parametrize("shape,k,s,p", [((2, 3, 7, 8), 3, 2, 1), ((1, 2, 9, 9), (2, 3), (1, 2), (1, 1)), ((2, 2, 6, 6), 2, None, 0)])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_and_backward_match_torch(rng, shape, k, s, p, count_include_pad):
    x = rng.standard_normal(shape).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    ref = F.avg_pool2d(xt, k, s, p, count_include_pad=count_include_pad)
    assert_close(pool.avg_pool2d(x, k, s, p, count_include_pad), ref.detach().numpy())
    go = torch.randn_like(ref)
    ref.backward(go)
    got = pool.avg_pool2d_backward(go.numpy(), x.shape, k, s, p, count_include_pad)
    assert_close(got, xt.grad.numpy())


@pytest.mark.parametrize("out_size", [(1, 1), (3, 2), (5, 7), (8, 9)])
def test_adaptive_avg_pool2d_and_backward_match_torch(rng, out_size):
    x = rng.standard_normal((2, 3, 8, 9)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    ref = F.adaptive_avg_pool2d(xt, out_size)
    assert_close(pool.adaptive_avg_pool2d(x, out_size), ref.detach().numpy())
    go = torch.randn_like(ref)
    ref.backward(go)
    assert_close(pool.adaptive_avg_pool2d_backward(go.numpy(), x.shape), xt.grad.numpy())


def test_pools_reject_non_4d_input():
    with pytest.raises(ValueError, match="4-D NCHW"):
        pool.avg_pool2d(np.zeros((3, 4), np.float32), 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(32, 8, 8, 8), (2, 3, 7, 9), (1, 1, 2, 2), (3, 2, 5, 4)])
def test_the_2x2_kernel_is_the_general_kernel_to_the_bit(rng, shape, dtype):
    # ties, NaNs (the last NaN of a window wins), -inf and odd sizes (a last row or column
    # no whole window covers) on the 2x2 / stride 2 path, against the general kernel
    x = rng.standard_normal(shape).astype(dtype)
    x[..., 0, 1] = x[..., 0, 0]
    x.reshape(-1)[::7] = np.nan
    x.reshape(-1)[3::11] = -np.inf
    values, idx = pool.max_pool2d(x, 2, 2)
    want = np.empty(values.shape, dtype)
    want_idx = np.empty(values.shape, np.int64)
    pool.max_pool_serial(x, want, want_idx, 2, 2, 2, 2, 0, 0, 1, 1)
    np.testing.assert_array_equal(values, want)
    np.testing.assert_array_equal(idx, want_idx)
    xt = torch.from_numpy(np.nan_to_num(x, nan=0.0, neginf=-1e30))
    ref, ref_idx = F.max_pool2d(xt, 2, 2, return_indices=True)
    clean, clean_idx = pool.max_pool2d(np.nan_to_num(x, nan=0.0, neginf=-1e30), 2, 2)
    np.testing.assert_array_equal(clean, ref.numpy())
    np.testing.assert_array_equal(clean_idx, ref_idx.numpy())


@pytest.mark.parametrize("bad", [-1, 16])
def test_max_pool2d_backward_refuses_an_index_outside_the_plane(rng, bad):
    grad = rng.standard_normal((1, 2, 2, 2)).astype(np.float32)
    idx = np.zeros((1, 2, 2, 2), np.int64)
    idx[0, 1, 1, 0] = bad
    with pytest.raises(IndexError, match=r"out of range \[0, 16\)"):
        pool.max_pool2d_backward(grad, idx, (1, 2, 4, 4))
