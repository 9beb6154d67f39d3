"""Reductions: whole-tensor forms return shape [1]; ``_dim`` forms keep the dim (as burn)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl import Kind, TensorCheckError, TensorKindError

from .support import T, close, ints, randn, tt


def test_whole_tensor_reductions_have_shape_1(device):
    a = randn((3, 4, 2), 21)
    x, ta = T(a, device), tt(a)
    close(x.sum(), ta.sum().reshape(1), atol=1e-5)
    close(x.mean(), ta.mean().reshape(1), atol=1e-6)
    close(x.max(), ta.max().reshape(1))
    close(x.min(), ta.min().reshape(1))
    close(x.argmax(), ta.argmax().reshape(1))
    close(x.argmin(), ta.argmin().reshape(1))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_dim_reductions_keep_the_dim(device, dim):
    a = randn((3, 4, 5), 22)
    x, ta = T(a, device), tt(a)
    close(x.sum_dim(dim), ta.sum(dim, keepdim=True), atol=1e-5)
    close(x.mean_dim(dim), ta.mean(dim, keepdim=True), atol=1e-6)
    close(x.max_dim(dim), ta.amax(dim, keepdim=True))
    close(x.min_dim(dim), ta.amin(dim, keepdim=True))
    close(x.argmax(dim), ta.argmax(dim, keepdim=True))
    close(x.argmin(dim), ta.argmin(dim, keepdim=True))
    values, indices = x.max_dim_with_indices(dim)
    ref = ta.max(dim, keepdim=True)
    close(values, ref.values)
    close(indices, ref.indices)
    values, indices = x.min_dim_with_indices(dim)
    ref = ta.min(dim, keepdim=True)
    close(values, ref.values)
    close(indices, ref.indices)


@pytest.mark.parametrize("correction", [0, 1])
def test_var_is_composed_like_burn_stats_var(device, correction):
    a = randn((4, 6), 23, scale=3.0)
    x, ta = T(a, device), tt(a)
    close(x.var(1, correction), torch.var(ta, 1, correction=correction, keepdim=True), rtol=1e-5, atol=1e-5)
    var, mean = x.var_mean(-2, correction)
    rv, rm = torch.var_mean(ta, 0, correction=correction, keepdim=True)
    close(var, rv, atol=1e-5)
    close(mean, rm, atol=1e-6)
    close(x.var(correction=correction), torch.var(ta, correction=correction).reshape(1), atol=1e-5)
    close(x.var_bias(0), torch.var(ta, 0, correction=0, keepdim=True), atol=1e-5)


@pytest.mark.parametrize(
    ("shape", "dim", "correction"),
    [((3, 0), 1, 1), ((3, 0), 1, 0), ((0,), None, 1), ((0, 4), 0, 1), ((4, 2), 1, 3), ((4, 1), 1, 1)],
)
def test_var_without_enough_elements_is_nan_or_inf_as_torch(device, shape, dim, correction):
    """n - correction <= 0 clamps at 0 as torch does: 0/0 is NaN (an empty dim), a positive sum
    of squares over 0 is inf; never a raise, never a negative count's -0."""
    import warnings

    a = randn(shape, 25)
    with warnings.catch_warnings():  # torch warns that the degrees of freedom are <= 0
        warnings.simplefilter("ignore")
        ref = torch.var(tt(a), correction=correction) if dim is None else torch.var(
            tt(a), dim, correction=correction, keepdim=True
        )
    got = T(a, device).var(dim, correction).to_numpy()
    np.testing.assert_array_equal(got, ref.numpy().reshape(got.shape))


def test_reductions_of_non_contiguous_views(device):
    a = randn((6, 5), 24)
    x = T(a, device)[::2].transpose()
    close(x.sum_dim(1), tt(a)[::2].T.sum(1, keepdim=True), atol=1e-5)
    close(x.max(), tt(a)[::2].max().reshape(1))


def test_int_and_bool_reductions(device):
    a = ints((3, 4), -9, 10, 3)
    x = T(a, device)
    close(x.sum(), a.sum().reshape(1))
    close(x.sum_dim(0), a.sum(0, keepdims=True))
    close(x.max(), a.max().reshape(1))
    close(x.min_dim(1), a.min(1, keepdims=True))
    close(x.argmax(1), a.argmax(1)[:, None])
    b = T(a > 0, device)
    assert b.sum().kind is Kind.INT
    close(b.sum(), np.array([(a > 0).sum()]))


def test_reduction_errors(plain):
    x = T(randn((2, 3)), plain)
    with pytest.raises(TensorCheckError) as err:
        x.sum_dim(2)
    text = str(err.value)
    assert "Operation: 'sum_dim'" in text and "-2 <= dim < 2" in text and "dim=2" in text and "[2, 3]" in text
    with pytest.raises(TensorKindError, match="Float"):
        T([1, 2], plain).mean()
    with pytest.raises(TensorCheckError, match="empty"):
        T(np.zeros((0, 3), np.float32), plain).max()
    with pytest.raises(TensorKindError, match="must be an int"):
        x.sum_dim(1.0)
