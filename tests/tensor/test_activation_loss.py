"""Functional activations (softmax, log_softmax, ...) and losses (cross_entropy, mse)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from minidl import TensorCheckError, TensorKindError
from minidl import functional as F

from .support import T, close, ints, randn, tt


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax(device, dim):
    a = randn((3, 4, 5), 121, scale=4.0)
    close(F.softmax(T(a, device), dim), TF.softmax(tt(a), dim), atol=1e-6)
    close(F.log_softmax(T(a, device), dim), TF.log_softmax(tt(a), dim), atol=1e-5)


def test_activation_functions(device):
    a = randn((4, 5), 122, scale=2.0)
    x, ta = T(a, device), tt(a)
    close(F.relu(x), TF.relu(ta))
    close(F.gelu(x), TF.gelu(ta), atol=1e-6)
    close(F.sigmoid(x), torch.sigmoid(ta), atol=1e-6)
    close(F.leaky_relu(x, 0.1), TF.leaky_relu(ta, 0.1))
    close(F.tanh(x), torch.tanh(ta), atol=1e-6)


def test_activation_errors(plain):
    with pytest.raises(TensorCheckError, match="(?s)Operation: 'softmax'.*found dim=2"):
        F.softmax(T(randn((2, 2)), plain), 2)
    with pytest.raises(TensorKindError, match="x must be a Float tensor"):
        F.relu(T([1, 2], plain))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_matches_torch(device, reduction):
    logits, targets = randn((6, 4), 123, scale=3.0), ints((6,), 0, 4, 124)
    out = F.cross_entropy(T(logits, device), T(targets, device), reduction)
    expected = TF.cross_entropy(tt(logits), tt(targets), reduction=reduction)
    close(out, expected.reshape(1), atol=1e-5)


def test_cross_entropy_checks(plain):
    logits = T(randn((3, 4)), plain)
    with pytest.raises(TensorKindError, match="targets must be an Int tensor"):
        F.cross_entropy(logits, T(randn((3,)), plain))
    with pytest.raises(TensorCheckError, match="shape \\[batch\\].*\\[3\\].*\\[4\\]"):
        F.cross_entropy(logits, T(np.array([0, 1, 2, 3]), plain))
    with pytest.raises(TensorCheckError, match="class index in \\[0, classes\\).*max 4"):
        F.cross_entropy(logits, T(np.array([0, 4, 1]), plain))
    # a negative label is caught too (the check reads the labels as unsigned), in every Int width
    for dtype in (np.int64, np.int32):
        with pytest.raises(TensorCheckError, match="class index in \\[0, classes\\).*min -1, max 2"):
            F.cross_entropy(logits, T(np.array([0, -1, 2], dtype), plain))
        assert F.cross_entropy(logits, T(np.array([0, 3, 2], dtype), plain)).shape == (1,)


def test_mse(device):
    a, b = randn((3, 4), 125), randn((3, 4), 126)
    close(F.mse(T(a, device), T(b, device)), TF.mse_loss(tt(a), tt(b)).reshape(1), atol=1e-6)
    close(F.mse(T(a, device), T(b, device), "sum"), TF.mse_loss(tt(a), tt(b), reduction="sum").reshape(1), atol=1e-5)
    with pytest.raises(TensorCheckError, match="same shape"):
        F.mse(T(a, device), T(b[:1], device))
