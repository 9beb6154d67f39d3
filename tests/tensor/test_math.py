"""Unary math, activations and clamps as Tensor methods, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl import TensorKindError

from .support import T, close, ints, randn, tt

UNARY = {
    "exp": torch.exp,
    "log": torch.log,
    "log1p": torch.log1p,
    "sqrt": torch.sqrt,
    "abs": torch.abs,
    "neg": torch.neg,
    "recip": torch.reciprocal,
    "tanh": torch.tanh,
    "sin": torch.sin,
    "cos": torch.cos,
    "erf": torch.erf,
    "floor": torch.floor,
    "sign": torch.sign,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "gelu": torch.nn.functional.gelu,
    "square": torch.square,
}
POSITIVE = {"log", "log1p", "sqrt", "recip"}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_ops_match_torch(device, op):
    a = randn((3, 5), 11, scale=2.0)
    if op in POSITIVE:
        a = np.abs(a) + 0.1
    a[0, 0] = 0.0 if op not in POSITIVE else a[0, 0]
    close(getattr(T(a, device), op)(), UNARY[op](tt(a)), rtol=1e-5, atol=1e-6)


def test_unary_ops_on_non_contiguous_views(device):
    a = randn((4, 6), 12)
    x = T(a, device).transpose()[::2]
    close(x.exp(), torch.exp(tt(a).T[::2]))
    close(x.gelu(), torch.nn.functional.gelu(tt(a).T[::2]), atol=1e-6)


def test_leaky_relu_and_clamps(device):
    a = randn((4, 4), 13, scale=3.0)
    x, ta = T(a, device), tt(a)
    close(x.leaky_relu(0.2), torch.nn.functional.leaky_relu(ta, 0.2))
    close(x.clamp(-1.0, 0.5), torch.clamp(ta, -1.0, 0.5))
    close(x.clamp_min(0.25), torch.clamp(ta, min=0.25))
    close(x.clamp_max(-0.25), torch.clamp(ta, max=-0.25))
    b = randn((1, 4), 14)  # same rank: burn broadcasts sizes of 1 only
    close(x.max_pair(T(b, device)), torch.maximum(ta, tt(b)))
    close(x.min_pair(T(b, device)), torch.minimum(ta, tt(b)))


def test_int_abs_sign_clamp(device):
    a = ints((3, 4), -5, 6, 1)
    x = T(a, device)
    close(x.abs(), np.abs(a))
    close(x.sign(), np.sign(a))
    close(x.clamp(-2, 3), np.clip(a, -2, 3))
    close(x.max_pair(T(ints((1, 4), -5, 6, 2), device)), np.maximum(a, ints((1, 4), -5, 6, 2)))


def test_float_only_ops_reject_int_tensors(plain):
    with pytest.raises(TensorKindError) as err:
        T([1, 2], plain).exp()
    text = str(err.value)
    assert "Operation: 'exp'" in text and "must be a Float tensor" in text and "Int tensor (int64" in text
    assert ".float()" in text
