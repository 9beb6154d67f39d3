"""Hypothesis properties of the Tensor layer on random shapes: reductions and layout ops agree
with NumPy for every dim (negative ones included), and matmul broadcasts batch dims as torch."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from .support import SETTINGS, T, close, randn, tt

shapes = array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_dim_reductions_match_numpy(plain, shape, data):
    a = randn(shape, 131)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = T(a, plain)
    close(x.sum_dim(dim), a.sum(dim, keepdims=True), atol=1e-5)
    close(x.max_dim(dim), a.max(dim, keepdims=True))
    close(x.argmin(dim), np.expand_dims(a.argmin(dim), dim))
    close(x.mean_dim(dim).squeeze_dim(dim), a.mean(dim), atol=1e-6)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_permute_then_reshape_matches_numpy(plain, shape, data):
    a = randn(shape, 132)
    axes = data.draw(st.permutations(range(len(shape))))
    negative = [ax - len(shape) if data.draw(st.booleans()) else ax for ax in axes]
    x = T(a, plain).permute(negative)
    close(x, a.transpose(axes))
    close(x.reshape(-1), a.transpose(axes).reshape(-1))
    close(x.flatten(0, -1), a.transpose(axes).reshape(-1))


@SETTINGS
@given(batch=array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), data=st.data())
def test_matmul_broadcasts_batch_dims_like_torch(plain, batch, data):
    m, k, n = (data.draw(st.integers(1, 4)) for _ in range(3))
    other = tuple(1 if data.draw(st.booleans()) else b for b in batch)  # size-1 dims broadcast
    a, b = randn(batch + (m, k), 133), randn(other[data.draw(st.integers(0, len(other))):] + (k, n), 134)
    close(T(a, plain) @ T(b, plain), torch.matmul(tt(a), tt(b)), atol=1e-5)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_unsqueeze_squeeze_round_trip(plain, shape, data):
    a = randn(shape, 135)
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    x = T(a, plain).unsqueeze(dim)
    close(x, np.expand_dims(a, dim))
    close(x.squeeze_dim(dim), a)
