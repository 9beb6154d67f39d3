"""The ModuleOps defaults, run on the backend under test, against PyTorch: linear (+ its three
backward helpers), layer_norm, batch_norm, batch_norm_train (biased variance), embedding
(+ backward) and attention with a mask."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import assume, given
from hypothesis import strategies as st

from .support import SETTINGS, as_layout, assert_close, layouts, randn, seeds, sum_atol, tt

lead_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@SETTINGS
@given(lead=lead_shapes, d_in=st.integers(1, 24), d_out=st.integers(1, 8), bias=st.booleans(),
       seed=seeds, layout=layouts)
def test_linear_and_its_backward_helpers_match_torch(B, lead, d_in, d_out, bias, seed, layout):
    x = randn(seed, (*lead, d_in))
    weight = randn(seed + 1, (d_in, d_out))  # burn's layout: [d_input, d_output]
    b = randn(seed + 2, (d_out,)) if bias else None
    tx, tw = tt(x, True), tt(weight, True)
    tb = tt(b, True) if bias else None
    expected = F.linear(tx, tw.T, tb)  # torch's weight is the transpose
    out = B.linear(x=as_layout(x, layout), weight=as_layout(weight, layout), bias=b)
    assert_close(out, expected, atol=sum_atol(d_in, 4.0))
    grad = randn(seed + 3, tuple(expected.shape))
    expected.backward(tt(grad))
    rows = int(np.prod(lead))
    assert_close(B.linear_x_backward(weight=weight, output_grad=grad), tx.grad, atol=sum_atol(d_out, 4.0))
    assert_close(B.linear_weight_backward(x=x, output_grad=grad), tw.grad, atol=sum_atol(rows, 4.0))
    if bias:
        assert_close(B.linear_bias_backward(output_grad=grad), tb.grad, atol=sum_atol(rows))


@SETTINGS
@given(lead=lead_shapes, d=st.integers(1, 32), affine=st.booleans(), seed=seeds, layout=layouts)
def test_layer_norm_matches_torch(B, lead, d, affine, seed, layout):
    x = randn(seed, (*lead, d), scale=3.0) + 1.0
    gamma = randn(seed + 1, (d,)) if affine else None
    beta = randn(seed + 2, (d,)) if affine else None
    out = B.layer_norm(x=as_layout(x, layout), gamma=gamma, beta=beta, epsilon=1e-5)
    expected = F.layer_norm(tt(x), (d,), tt(gamma) if affine else None, tt(beta) if affine else None, 1e-5)
    assert_close(out, expected, rtol=1e-4, atol=sum_atol(d, 4.0) * 10)


@st.composite
def batch_shapes(draw):
    """[n, c] or [n, c, spatial...] with up to two spatial dims."""
    spatial = draw(st.lists(st.integers(1, 4), max_size=2))
    return (draw(st.integers(1, 4)), draw(st.integers(1, 4)), *spatial)


@SETTINGS
@given(shape=batch_shapes(), affine=st.booleans(), seed=seeds)
def test_batch_norm_with_given_statistics_matches_torch_eval(B, shape, affine, seed):
    c = shape[1]
    x = randn(seed, shape, scale=2.0)
    mean, var = randn(seed + 1, (c,)), np.abs(randn(seed + 2, (c,))) + 0.5
    gamma = randn(seed + 3, (c,)) if affine else None
    beta = randn(seed + 4, (c,)) if affine else None
    out = B.batch_norm(x=x, gamma=gamma, beta=beta, mean=mean, var=var, epsilon=1e-5)
    expected = F.batch_norm(tt(x), tt(mean), tt(var), tt(gamma) if affine else None,
                            tt(beta) if affine else None, training=False, eps=1e-5)
    assert_close(out, expected, atol=1e-5)


@SETTINGS
@given(shape=batch_shapes(), affine=st.booleans(), seed=seeds)
def test_batch_norm_train_returns_batch_mean_and_biased_variance(B, shape, affine, seed):
    c = shape[1]
    assume(np.prod(shape) > c)  # torch refuses a single value per channel in training
    x = randn(seed, shape, scale=2.0) + 0.5
    gamma = randn(seed + 3, (c,)) if affine else None
    beta = randn(seed + 4, (c,)) if affine else None
    out, mean, var = B.batch_norm_train(x=x, gamma=gamma, beta=beta, epsilon=1e-5)
    expected = F.batch_norm(tt(x), None, None, tt(gamma) if affine else None, tt(beta) if affine else None,
                            training=True, eps=1e-5)
    count = x.size // c
    assert_close(out, expected, rtol=1e-4, atol=sum_atol(count, 4.0) * 10)
    dims = [d for d in range(len(shape)) if d != 1]
    assert_close(mean, tt(x).mean(dims), atol=sum_atol(count, 2.0))
    # biased: divided by the count, not count - 1 (PyTorch's running_var mixes the unbiased one)
    assert_close(var, tt(x).var(dims, correction=0), rtol=1e-4, atol=sum_atol(count, 4.0))


@SETTINGS
@given(n=st.integers(1, 10), d=st.integers(1, 6), index_shape=lead_shapes, seed=seeds)
def test_embedding_and_its_backward_match_torch(B, n, d, index_shape, seed):
    weights = randn(seed, (n, d))
    indices = np.random.default_rng(seed).integers(0, n, index_shape).astype(np.int64)
    tw = tt(weights, True)
    expected = F.embedding(tt(indices), tw)
    assert_close(B.embedding(weights=weights, indices=indices), expected)
    grad = randn(seed + 1, tuple(expected.shape))
    expected.backward(tt(grad))
    # repeated indices add their gradients into the same row
    assert_close(B.embedding_backward(weights=weights, output_grad=grad, indices=indices), tw.grad, atol=1e-5)


@SETTINGS
@given(batch=lead_shapes, q_len=st.integers(1, 6), k_len=st.integers(1, 6), d=st.integers(1, 16),
       d_v=st.integers(1, 5), masked=st.booleans(), seed=seeds)
def test_attention_with_and_without_mask_matches_torch(B, batch, q_len, k_len, d, d_v, masked, seed):
    q, k = randn(seed, (*batch, q_len, d)), randn(seed + 1, (*batch, k_len, d))
    v = randn(seed + 2, (*batch, k_len, d_v))
    mask = None
    if masked:
        mask = np.random.default_rng(seed).random((*batch, q_len, k_len)) < 0.4
        mask[..., 0] = False  # every query keeps one key (a fully masked row is NaN in both)
    out = B.attention(query=q, key=k, value=v, mask=mask)
    # torch's bool attn_mask says which keys take part: the opposite of ours
    expected = F.scaled_dot_product_attention(tt(q), tt(k), tt(v), attn_mask=None if mask is None else ~tt(mask))
    assert_close(out, expected, atol=sum_atol(max(d, k_len), 4.0))


def test_batch_norm_train_variance_is_not_pytorchs_running_one(B):
    # the lesson of the train-vs-inference chapter: burn mixes the biased variance into running_var, PyTorch the unbiased
    x = randn(5, (4, 2, 3))
    _, _, var = B.batch_norm_train(x=x, gamma=None, beta=None, epsilon=1e-5)
    bn = torch.nn.BatchNorm1d(2, momentum=1.0)
    bn.train()
    bn(tt(x))
    unbiased = bn.running_var.detach().numpy()
    count = x.size // 2
    np.testing.assert_allclose(var * count / (count - 1), unbiased, rtol=1e-5)
    assert not np.allclose(var, unbiased, rtol=1e-3)
