"""Element-wise arithmetic, scalar forms, Python operators and matmul, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import minidl
from minidl import Kind, Tensor, TensorCheckError, TensorKindError

from .support import SETTINGS, T, close, ints, randn, tt

pairs = mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=4, max_side=4)

BINARY = {
    "add": (torch.add, lambda a, b: a + b),
    "sub": (torch.sub, lambda a, b: a - b),
    "mul": (torch.mul, lambda a, b: a * b),
    "div": (torch.div, lambda a, b: a / b),
}


@pytest.mark.parametrize("op", list(BINARY))
@SETTINGS
@given(shapes=pairs, seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_like_torch(device, op, shapes, seed):
    (sa, sb), _ = shapes
    rank = max(len(sa), len(sb))  # burn broadcasts sizes of 1 only, at equal rank
    sa, sb = (1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb
    a, b = randn(sa, seed), randn(sb, seed + 1)
    if op == "div":
        b = np.where(np.abs(b) < 0.1, 0.5, b).astype(np.float32)
    ref, operator = BINARY[op]
    expected = ref(tt(a), tt(b))
    close(getattr(T(a, device), op)(T(b, device)), expected)
    close(operator(T(a, device), T(b, device)), expected)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_ops_refuse_a_rank_mismatch_naming_both_shapes(device, op):
    # burn's Tensor<B, D> has the rank in its type: [4, 3] + [3] does not compile there
    x, v = T(randn((4, 3), 0), device), T(randn((3,), 1), device)
    for lhs, rhs, shapes in ((x, v, r"lhs \[4, 3\] \(2\), found rhs \[3\] \(1\)"),
                             (v, x, r"lhs \[3\] \(1\), found rhs \[4, 3\] \(2\)")):
        with pytest.raises(TensorCheckError, match="different ranks") as err:
            getattr(lhs, op)(rhs)
        assert err.match(shapes)
    close(getattr(x, op)(v.unsqueeze(0)), BINARY[op][0](tt(x.to_numpy()), tt(v.to_numpy())))


def test_scalar_forms_and_reflected_operators(device):
    a = randn((2, 3), 1)
    x, ta = T(a, device), tt(a)
    close(x.add_scalar(2), ta + 2)
    close(x.sub_scalar(0.5), ta - 0.5)
    close(x.mul_scalar(-3), ta * -3)
    close(x.div_scalar(4), ta / 4)
    close(x + 1.5, ta + 1.5)
    close(1.5 + x, 1.5 + ta)
    close(2 - x, 2 - ta)
    close(3 * x, 3 * ta)
    close(2 / (x.abs() + 1), 2 / (ta.abs() + 1))
    close(-x, -ta)
    close(+x, ta)
    close(np.float32(2) * x, 2 * ta)  # NumPy scalars defer to the Tensor (no ndarray result)


def test_pow_remainder_and_their_operators(device):
    a = np.abs(randn((3, 4), 2)) + 0.5
    b = randn((1, 4), 3)
    x, ta = T(a, device), tt(a)
    close(x.powf(T(b, device)), ta ** tt(b), rtol=1e-5)
    close(x ** 2.5, ta ** 2.5, rtol=1e-5)
    close(x ** 3, ta ** 3, rtol=1e-5)
    close(x.powi_scalar(2), ta ** 2, rtol=1e-5)
    close(2.0 ** x, 2.0 ** ta, rtol=1e-5)
    c = randn((3, 4), 4) * 3
    close(T(c, device).remainder_scalar(1.5), torch.remainder(tt(c), 1.5), atol=1e-5)
    close(T(c, device) % T(b + 2, device), torch.remainder(tt(c), tt(b + 2)), atol=1e-5)


def test_int_arithmetic_follows_burn(device):
    a, b = ints((3, 4), -9, 10, 0), ints((1, 4), 1, 5, 1)
    x, y = T(a, device), T(b, device)
    close(x + y, a + b)
    close(x - 3, a - 3)
    close(x * y, a * b)
    close(x / y, np.trunc(a / b).astype(np.int64))  # rounds toward zero, as burn
    close(x.div_scalar(4), np.trunc(a / 4).astype(np.int64))
    close(x % 4, np.remainder(a, 4))
    close(x ** 3, a ** 3)
    close(-x, -a)
    close(10 - x, 10 - a)
    assert (x + y).kind is Kind.INT


def test_binary_op_errors_name_the_op_and_the_shapes(plain):
    a, b = T(np.ones((2, 3), np.float32), plain), T(np.ones((2, 4), np.float32), plain)
    with pytest.raises(TensorCheckError) as err:
        a.add(b)
    text = str(err.value)
    assert "Operation: 'add'" in text and "[2, 3]" in text and "[2, 4]" in text and "3 != 4" in text
    with pytest.raises(TensorKindError, match="same kind as self .Float.*Int tensor"):
        a.mul(T(np.ones((2, 3), np.int64), plain))
    with pytest.raises(TensorKindError, match="int for an Int tensor"):
        T([1, 2], plain).mul_scalar(0.5)
    with pytest.raises(TensorKindError, match="Float or Int.*Bool"):
        T([True], plain).add_scalar(1)


def test_mixing_devices_fails_in_dispatch(plain):
    other = minidl.Device.ndarray(1)
    a, b = Tensor.ones([2], plain), Tensor.ones([2], other)
    with pytest.raises(ValueError, match="Input tensor .* is on the wrong device"):
        a + b


MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),  # batch dims broadcast, ranks differ
    ((1, 3, 4), (6, 4, 2)),
    ((4,), (4, 5)),  # vector on the left
    ((2, 3, 4), (4,)),  # vector on the right
    ((4,), (2, 4, 3)),
    ((4,), (4,)),
]


@pytest.mark.parametrize(("sa", "sb"), MATMUL_SHAPES)
def test_matmul_matches_torch(device, sa, sb):
    a, b = randn(sa, 5), randn(sb, 6)
    expected = torch.matmul(tt(a), tt(b))
    if expected.dim() == 0:
        expected = expected.reshape(1)  # burn has no rank-0 tensors
    close(T(a, device) @ T(b, device), expected, rtol=1e-5, atol=1e-5)


def test_matmul_of_transposed_and_sliced_views(device):
    a, b = randn((5, 4), 7), randn((6, 8), 8)
    x = T(a, device).transpose()  # non-contiguous [4, 5]
    y = T(b, device)[1:, ::2]  # strided [5, 4]
    close(x.matmul(y), tt(a).T @ tt(b)[1:, ::2], atol=1e-5)


def test_matmul_errors(plain):
    a, b = T(randn((2, 3)), plain), T(randn((4, 5)), plain)
    with pytest.raises(TensorCheckError, match="inner dimension of matmul.*3 and 4") as err:
        a @ b
    assert "lhs shape [2, 3]" in str(err.value) and "rhs shape [4, 5]" in str(err.value)
    with pytest.raises(TensorCheckError, match="batch dims"):
        T(randn((2, 3, 4)), plain) @ T(randn((3, 4, 5)), plain)
    with pytest.raises(TensorKindError, match="Float"):
        T([[1, 2]], plain) @ T([[1], [2]], plain)


def test_float16_and_float64_keep_their_dtype(device):
    a = randn((3, 3), 9)
    for dtype in (minidl.float16, minidl.float64):
        x = T(a, device, dtype)
        out = (x * x + 1) @ x
        ref = ((tt(a).double() * tt(a).double() + 1) @ tt(a).double()).numpy().astype(dtype.numpy)
        close(out, ref, rtol=2e-2 if dtype is minidl.float16 else 1e-6, atol=2e-2 if dtype is minidl.float16 else 1e-6)
