"""Layout ops: reshape (-1 and 0 as burn), transpose, swap_dims, permute, flatten, squeeze,
unsqueeze, expand, repeat, flip, cat, stack, narrow, chunk."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl import Tensor, TensorCheckError, TensorKindError

from .support import T, close, ints, randn, tt


def test_reshape_infers_minus_one_and_keeps_zero(device):
    a = randn((2, 3, 4), 31)
    x = T(a, device)
    close(x.reshape([4, -1]), a.reshape(4, -1))
    close(x.reshape(0, -1), a.reshape(2, 12))  # 0 keeps dim 0's size (burn)
    close(x.reshape((0, 0, 2, 2)), a.reshape(2, 3, 2, 2))
    close(x.reshape(24), a.reshape(24))
    close(x.transpose().reshape(-1), tt(a).transpose(-1, -2).reshape(-1))  # non-contiguous source


def test_reshape_errors(plain):
    x = T(randn((2, 3)), plain)
    with pytest.raises(TensorCheckError) as err:
        x.reshape([4, 2])
    text = str(err.value)
    assert "Operation: 'reshape'" in text and "6 elements" in text and "[4, 2]" in text and "[2, 3]" in text
    with pytest.raises(TensorCheckError, match="at most one -1"):
        x.reshape(-1, -1)
    with pytest.raises(TensorCheckError, match="infer the -1"):
        x.reshape(4, -1)


def test_transpose_swap_permute(device):
    a = randn((2, 3, 4), 32)
    x, ta = T(a, device), tt(a)
    close(x.transpose(), ta.transpose(-1, -2))
    close(x.T, ta.transpose(-1, -2))
    close(x.swap_dims(0, -1), ta.transpose(0, 2))
    close(x.permute(2, 0, 1), ta.permute(2, 0, 1))
    close(x.permute([-1, -3, -2]), ta.permute(2, 0, 1))
    close(T(randn(5), device).transpose(), randn(5))  # rank 1: unchanged
    close(T(ints((2, 3), 0, 9), device).transpose(), ints((2, 3), 0, 9).T)
    close(T(ints((2, 3), 0, 2) > 0, device).permute(1, 0), (ints((2, 3), 0, 2) > 0).T)


def test_permute_errors(plain):
    x = T(randn((2, 3, 4)), plain)
    with pytest.raises(TensorCheckError, match="every dim once"):
        x.permute(0, 1)
    with pytest.raises(TensorCheckError, match="repeats a dim"):
        x.permute(0, 1, 1)


def test_flatten_squeeze_unsqueeze(device):
    a = randn((2, 1, 3, 1), 33)
    x, ta = T(a, device), tt(a)
    close(x.flatten(), ta.flatten())
    close(x.flatten(1, 2), ta.flatten(1, 2))
    close(x.flatten(-3, -1), ta.flatten(-3, -1))
    close(x.squeeze(), ta.squeeze())
    close(x.squeeze(1), ta.squeeze(1))
    close(x.squeeze_dim(-1), ta.squeeze(-1))
    close(x.squeeze_dims([1, 3]), ta.squeeze(3).squeeze(1))
    close(x.unsqueeze(), ta.unsqueeze(0))
    close(x.unsqueeze(-1), ta.unsqueeze(-1))
    close(x.unsqueeze_dim(2), ta.unsqueeze(2))
    close(x.unsqueeze_dims([0, 5]), ta.unsqueeze(0).unsqueeze(5))
    assert T(np.ones((1, 1), np.float32), device).squeeze().shape == (1,)  # no rank 0 in burn


def test_squeeze_and_flatten_errors(plain):
    x = T(randn((2, 3)), plain)
    with pytest.raises(TensorCheckError, match="Can't squeeze dim 0.*found 2"):
        x.squeeze_dim(0)
    with pytest.raises(TensorCheckError, match="start dim"):
        x.flatten(1, 0)


def test_expand_and_repeat(device):
    a = randn((3, 1), 34)
    x, ta = T(a, device), tt(a)
    close(x.expand(2, 3, 4), ta.expand(2, 3, 4))
    close(x.expand([-1, 5]), ta.expand(-1, 5))
    close(x.expand(2, 3, 4) + 1, ta.expand(2, 3, 4) + 1)  # a broadcast view feeds another op
    close(x.repeat_dim(1, 3), ta.repeat(1, 3))
    close(x.repeat(2, 2), ta.repeat(2, 2))
    close(x.repeat([2, 1, 3]), ta.repeat(2, 1, 3))
    close(T(ints((2,), 0, 5), device).repeat(3), tt(ints((2,), 0, 5)).repeat(3))


def test_expand_errors(plain):
    with pytest.raises(TensorCheckError) as err:
        T(randn((3, 2)), plain).expand(3, 4)
    assert "only expands when it is 1" in str(err.value) and "[3, 2]" in str(err.value)


def test_flip(device):
    a = randn((2, 3, 4), 35)
    close(T(a, device).flip([0, -1]), tt(a).flip([0, 2]))
    close(T(a, device).flip(1), tt(a).flip(1))


def test_cat_and_stack(device):
    a, b = randn((2, 3), 36), randn((2, 5), 37)
    close(Tensor.cat([T(a, device), T(b, device)], 1), torch.cat([tt(a), tt(b)], 1))
    close(Tensor.cat([T(a, device), T(a, device)], -2), torch.cat([tt(a), tt(a)], 0))
    close(Tensor.stack([T(a, device), T(a * 2, device)], 1), torch.stack([tt(a), tt(a * 2)], 1))
    close(Tensor.stack([T(a, device), T(a, device)], -1), torch.stack([tt(a), tt(a)], -1))
    i = ints((2, 2), 0, 9)
    close(Tensor.cat([T(i, device), T(i, device)], 0), np.concatenate([i, i]))
    m = np.array([[True, False]])
    close(Tensor.cat([T(m, device), T(~m, device)], 0), np.concatenate([m, ~m]))


def test_cat_stack_errors(plain):
    a, b = T(randn((2, 3)), plain), T(randn((3, 3)), plain)
    with pytest.raises(TensorCheckError, match="different shapes.*tensors\\[1\\]"):
        Tensor.cat([a, b], 1)
    with pytest.raises(TensorKindError, match="kind of tensors\\[0\\]"):
        Tensor.cat([a, T(np.ones((2, 3), np.int64), plain)], 0)
    with pytest.raises(TensorCheckError, match="empty list"):
        Tensor.cat([], 0)
    with pytest.raises(TensorCheckError, match="Can't stack tensors with different shapes"):
        Tensor.stack([a, b])


def test_narrow_and_chunk(device):
    a = randn((7, 3), 38)
    x, ta = T(a, device), tt(a)
    close(x.narrow(0, 2, 3), ta.narrow(0, 2, 3))
    close(x.narrow(1, -2, 2), ta.narrow(1, -2, 2))
    pieces = x.chunk(3, 0)
    expected = ta.chunk(3, 0)
    assert len(pieces) == len(expected)
    for p, e in zip(pieces, expected):
        close(p, e)
