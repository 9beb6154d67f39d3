"""Element-wise kernels against NumPy/torch: broadcasting, NaN semantics, dtypes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minidl.backends.flex.kernels import elementwise as ew

from .helpers import assert_close

NP_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
}  # fmt: skip
NP_COMPARE = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip
TORCH_UNARY = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "abs": torch.abs, "neg": torch.neg,
    "recip": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu,
    "gelu": torch.nn.functional.gelu, "sin": torch.sin, "cos": torch.cos, "erf": torch.erf,
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "log1p": torch.log1p,
    "expm1": torch.expm1,
}  # fmt: skip

SHAPE_PAIRS = [
    ((3, 4, 5), (3, 4, 5)),
    ((3, 4, 5), (5,)),
    ((3, 4, 5), (4, 1)),
    ((3, 1, 5), (1, 4, 1)),
    ((2, 3, 4, 5, 6), (3, 1, 5, 1)),
    ((7,), ()),
    ((), (7,)),
    ((0, 3), (3,)),
    ((300, 301), (301,)),
]


@pytest.mark.parametrize("op", list(NP_BINARY))
@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS)
def test_binary_broadcasts_like_numpy(rng, op, sa, sb):
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    assert_close(ew.binary(op, a, b), NP_BINARY[op](a.astype(np.float64), b))


@pytest.mark.parametrize("op", list(NP_COMPARE))
@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS[:5])
def test_compare_gives_bool_like_numpy(rng, op, sa, sb):
    a = rng.integers(-2, 3, sa).astype(np.float32)
    b = rng.integers(-2, 3, sb).astype(np.float32)
    got = ew.compare(op, a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, NP_COMPARE[op](a, b))


@settings(deadline=None, max_examples=20)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=5),
    op=st.sampled_from(list(NP_BINARY)),
    seed=st.integers(0, 2**31),
)
def test_binary_random_broadcasts(shapes, op, seed):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shapes.input_shapes[0])
    b = r.standard_normal(shapes.input_shapes[1])
    got = ew.binary(op, a, b)
    assert got.shape == shapes.result_shape
    np.testing.assert_allclose(got, NP_BINARY[op](a, b), rtol=1e-12)


def test_binary_scalars_take_the_array_dtype_and_pow(rng):
    x = np.abs(rng.standard_normal((4, 5))).astype(np.float32) + 0.1
    assert ew.binary("mul", x, 2.5).dtype == np.float32
    assert_close(ew.binary("sub", 1.0, x), 1.0 - x.astype(np.float64))
    assert_close(ew.binary("pow", x, 1.7), x.astype(np.float64) ** 1.7)
    assert_close(ew.pow(x, x), x.astype(np.float64) ** x)


def test_maximum_minimum_propagate_nan():
    a = np.array([1.0, np.nan, 3.0], np.float32)
    b = np.array([np.nan, 2.0, 1.0], np.float32)
    np.testing.assert_array_equal(ew.maximum(a, b), np.maximum(a, b))
    np.testing.assert_array_equal(ew.minimum(a, b), np.minimum(a, b))


def test_integer_division_truncates_as_rust():
    a = np.array([7, -7, 7, -7, 0, 9], np.int64)
    b = np.array([2, 2, -2, -2, 3, 3], np.int64)
    np.testing.assert_array_equal(ew.div(a, b), [3, -3, -3, 3, 0, 3])
    assert ew.add(a, b).dtype == np.int64
    big = np.array([2**62 + 1], np.int64)
    np.testing.assert_array_equal(ew.add(big, np.array([1], np.int64)), [2**62 + 2])


@pytest.mark.parametrize("op", list(TORCH_UNARY))
@pytest.mark.parametrize("n", [1, 37, 100_003])
def test_unary_matches_torch(rng, op, n):
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    if op == "round":
        x = np.round(x * 2) / 2  # exact halves: round half to even
    # float64 oracle: torch's own float32 vector paths are off by more than an ulp here and
    # there (gelu near -3.5: torch f32 -0.00092539, exact -0.00092438, Flex -0.00092438).
    ref = TORCH_UNARY[op](torch.from_numpy(x).double()).numpy()
    got = ew.unary(op, x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(got[ok], ref[ok], rtol=2e-6, atol=1e-6)


def test_unary_keeps_shape_of_strided_input_and_handles_special_values(rng):
    x = rng.standard_normal((6, 5)).astype(np.float64)
    np.testing.assert_allclose(ew.exp(x.T[::2]), np.exp(x.T[::2]))
    special = np.array([-np.inf, np.nan, -0.0, 0.0, np.inf], np.float32)
    np.testing.assert_array_equal(ew.relu(special), torch.relu(torch.from_numpy(special)).numpy())
    np.testing.assert_array_equal(ew.sigmoid(special[[0, 4]]), [0.0, 1.0])
    np.testing.assert_array_equal(ew.neg(np.array([3, -4], np.int32)), [-3, 4])
    np.testing.assert_array_equal(ew.abs(np.array([3, -4], np.int64)), [3, 4])
    assert ew.exp(np.array([1, 2], np.int64)).dtype == np.float32


def test_float16_is_computed_in_float32_and_cast_back(rng):
    a = rng.standard_normal((8, 9)).astype(np.float16)
    out = ew.mul(a, a)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, (a.astype(np.float32) * a.astype(np.float32)).astype(np.float16))
    assert ew.tanh(a).dtype == np.float16


def test_where_clamp_and_relu_affine(rng):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((4, 1)).astype(np.float32)
    np.testing.assert_array_equal(ew.where(a > 0, a, b), np.where(a > 0, a, b))
    np.testing.assert_array_equal(ew.where(a > 0, 1.5, a), np.where(a > 0, 1.5, a).astype(np.float32))
    np.testing.assert_array_equal(ew.clamp(a, -0.5, 0.5), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(ew.clamp(a, b, 1.0), np.minimum(np.maximum(a, b), 1.0))
    nan = np.array([np.nan, 2.0], np.float32)
    assert np.isnan(ew.clamp(nan, 0.0, 1.0)[0])
    assert_close(ew.relu_affine(a, 2.0, 0.1), np.maximum(a.astype(np.float64) * 2 + 0.1, 0))
    assert_close(ew.relu_affine(a, b, 0.1), np.maximum(a.astype(np.float64) * b + 0.1, 0))
    big = rng.standard_normal(200_000).astype(np.float32)
    assert_close(ew.relu_affine(big, 1.5, -0.2), np.maximum(big.astype(np.float64) * 1.5 - 0.2, 0))
