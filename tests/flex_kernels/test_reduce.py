"""Reductions against torch: kept dims, whole-tensor forms, NaN and tie rules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backends.flex.kernels import reduce as R

from .helpers import assert_close

SHAPES = [(3, 4, 5), (7,), (300, 400), (1, 5), (200_000,), (2, 300, 301), (5, 1, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_reductions_along_each_dim_match_torch(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(x).double()
    for dim in range(x.ndim):
        n = shape[dim]
        assert_close(R.sum(x, dim), t.sum(dim, keepdim=True), n=n)
        assert_close(R.mean(x, dim), t.mean(dim, keepdim=True), n=n)
        assert_close(R.max(x, dim), t.amax(dim, keepdim=True))
        assert_close(R.min(x, dim), t.amin(dim, keepdim=True))
        assert_close(R.var(x, dim), t.var(dim, unbiased=False, keepdim=True), n=n)
        if n > 1:
            assert_close(R.var(x, dim, unbiased=True), t.var(dim, keepdim=True), n=n)
        np.testing.assert_array_equal(R.argmax(x, dim), t.argmax(dim, keepdim=True).numpy())
        np.testing.assert_array_equal(R.argmin(x, dim), t.argmin(dim, keepdim=True).numpy())


@pytest.mark.parametrize("shape", SHAPES)
def test_whole_tensor_reductions_have_shape_one(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(x).double()
    n = x.size
    assert_close(R.sum(x), t.sum().reshape(1), n=n)
    assert_close(R.mean(x), t.mean().reshape(1), n=n)
    assert_close(R.max(x), t.max().reshape(1))
    assert_close(R.min(x), t.min().reshape(1))
    assert_close(R.var(x), t.var(unbiased=False).reshape(1), n=n)


@settings(deadline=None, max_examples=15)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    dim=st.integers(0, 3),
    seed=st.integers(0, 2**31),
)
def test_random_shapes_float64(shape, dim, seed):
    dim = dim % len(shape)
    x = np.random.default_rng(seed).standard_normal(shape)
    np.testing.assert_allclose(R.sum(x, dim), x.sum(dim, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(R.prod(x, dim), x.prod(dim, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(R.var(x, dim), x.var(dim, keepdims=True), rtol=1e-9, atol=1e-12)


def test_nan_propagates_and_argmax_points_at_it():
    x = np.array([[1, np.nan, 3, 3], [2, 5, 5, 1]], np.float32)
    t = torch.from_numpy(x)
    np.testing.assert_array_equal(R.max(x, 1), t.amax(1, keepdim=True).numpy())
    np.testing.assert_array_equal(R.argmax(x, 1), t.argmax(1, keepdim=True).numpy())
    np.testing.assert_array_equal(R.argmin(x, 1), t.argmin(1, keepdim=True).numpy())
    np.testing.assert_array_equal(R.argmax(x.T, 0), t.T.argmax(0, keepdim=True).numpy())
    assert np.isnan(R.sum(x)[0]) and np.isnan(R.min(x)[0])


def test_integer_float16_and_empty_reductions():
    np.testing.assert_array_equal(R.sum(np.arange(10, dtype=np.int64)), [45])
    np.testing.assert_array_equal(R.prod(np.arange(1, 6, dtype=np.int32), 0), [120])
    assert R.sum(np.ones((2, 3), np.float16), 0).dtype == np.float16
    np.testing.assert_array_equal(R.sum(np.zeros((0, 3), np.float32), 0), np.zeros((1, 3)))
    values, idx = R.max_with_indices(np.array([[1.0, 4.0, 4.0]]), 1)
    np.testing.assert_array_equal(values, [[4.0]])
    np.testing.assert_array_equal(idx, [[1]])
    with pytest.raises(ValueError, match="empty"):
        R.max(np.zeros((0, 3), np.float32), 0)
