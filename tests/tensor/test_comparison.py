"""Comparisons (tensor and scalar forms, operators), bool logic, any/all, per kind."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl import Kind, TensorCheckError, TensorKindError

from .support import T, close, ints, tt

OPS = {
    "equal": (torch.eq, lambda a, b: a == b),
    "not_equal": (torch.ne, lambda a, b: a != b),
    "greater": (torch.gt, lambda a, b: a > b),
    "greater_equal": (torch.ge, lambda a, b: a >= b),
    "lower": (torch.lt, lambda a, b: a < b),
    "lower_equal": (torch.le, lambda a, b: a <= b),
}


def _coarse(shape, seed):
    return (np.random.default_rng(seed).integers(-2, 3, shape) / 2).astype(np.float32)


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_comparisons_broadcast_and_return_bool(device, op, dtype):
    a, b = _coarse((3, 4), 0), _coarse((1, 4), 1)  # ties are common on a grid of halves
    if dtype == "int64":
        a, b = (a * 2).astype(np.int64), (b * 2).astype(np.int64)
    ref, operator = OPS[op]
    x, y = T(a, device), T(b, device)
    expected = ref(tt(a), tt(b))
    out = getattr(x, op)(y)
    assert out.kind is Kind.BOOL
    close(out, expected)
    close(operator(x, y), expected)
    close(getattr(x, f"{op}_elem")(b[0, 1]), ref(tt(a), tt(b[0, 1:2]).squeeze()))
    close(operator(x, b[0, 1].item()), ref(tt(a), b[0, 1].item()))
    with pytest.raises(TensorCheckError, match="different ranks"):
        getattr(x, op)(T(b[0], device))  # [3, 4] vs [4]: burn's types refuse it


def test_bool_comparisons_and_logic(device):
    a = np.array([[True, False], [True, True]])
    b = np.array([[False, True]])
    x, y = T(a, device), T(b, device)
    close(x == y, a == b)
    close(x != y, a != b)
    close(x > y, a > b)
    close(x.bool_and(y), a & b)
    close(x | y, a | b)
    close(x ^ y, a ^ b)
    close(~x, ~a)
    close(x.bool_not(), ~a)


def test_any_all_whole_and_per_dim(device):
    a = np.array([[0.0, 0.0, 1.5], [0.0, 0.0, 0.0]], np.float32)
    x = T(a, device)
    close(x.any(), np.array([True]))
    close(x.all(), np.array([False]))
    close(x.any_dim(1), a.any(axis=1, keepdims=True))
    close(x.all_dim(-2), a.all(axis=0, keepdims=True))
    close(T(ints((2, 3), 1, 4), device).all(), np.array([True]))
    close(T(np.array([True, True]), device).all(), np.array([True]))


def test_comparison_errors(plain):
    with pytest.raises(TensorKindError, match="Operation: 'greater'"):
        _ = T([1.0], plain) > T([1], plain)
    with pytest.raises(TensorCheckError, match="incompatible shapes"):
        _ = T([1.0, 2.0], plain) == T([1.0, 2.0, 3.0], plain)
    with pytest.raises(TensorKindError, match="Bool tensor"):
        T([1.0], plain).bool_and(T([True], plain))


def test_tensors_stay_hashable_by_identity(plain):
    x = T([1.0], plain)
    assert {x: 1}[x] == 1
    assert (x == None) is False  # noqa: E711 - a non-tensor operand falls back to identity
