"""Activations and their backward helpers against PyTorch (forward) and torch autograd
(backward), run on the backend under test (defaults or its own overrides)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from .support import SETTINGS, as_layout, assert_close, layouts, randn, seeds, shapes, sum_atol, tt


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts)
def test_pointwise_activations_match_torch(B, shape, seed, layout):
    x = randn(seed, shape, scale=3.0)
    x.flat[0] = 0.0  # relu's kink
    view = as_layout(x, layout)
    assert_close(B.relu(tensor=view), F.relu(tt(x)))
    assert_close(B.leaky_relu(tensor=view, negative_slope=0.1), F.leaky_relu(tt(x), 0.1))
    assert_close(B.gelu(tensor=view), F.gelu(tt(x)), atol=1e-6)
    assert_close(B.sigmoid(tensor=view), torch.sigmoid(tt(x)))


def _autograd(fn, x, grad):
    t = tt(x, requires_grad=True)
    out = fn(t)
    out.backward(tt(grad))
    return out.detach(), t.grad


@SETTINGS
@given(shape=shapes, seed=seeds)
def test_activation_backward_helpers_match_autograd(B, shape, seed):
    x, grad = randn(seed, shape, scale=3.0), randn(seed + 1, shape)
    out, expected = _autograd(F.relu, x, grad)
    assert_close(B.relu_backward(output=out.numpy(), grad=grad), expected)
    out, expected = _autograd(torch.sigmoid, x, grad)
    assert_close(B.sigmoid_backward(output=out.numpy(), grad=grad), expected)
    _, expected = _autograd(F.gelu, x, grad)
    assert_close(B.gelu_backward(x=x, grad=grad), expected, atol=1e-6)


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_softmax_and_log_softmax_match_torch(B, shape, seed, layout, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    x = randn(seed, shape, scale=5.0)
    view = as_layout(x, layout)
    assert_close(B.softmax(tensor=view, dim=dim), F.softmax(tt(x), dim), atol=sum_atol(shape[dim]))
    assert_close(B.log_softmax(tensor=view, dim=dim), F.log_softmax(tt(x), dim), atol=sum_atol(shape[dim], 5.0))


def test_softmax_is_stable_for_large_inputs(B):
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], dtype=np.float32)
    assert_close(B.softmax(tensor=x, dim=1), F.softmax(tt(x), 1))
    assert_close(B.log_softmax(tensor=x, dim=1), F.log_softmax(tt(x), 1), atol=1e-5)
