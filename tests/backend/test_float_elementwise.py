"""Element-wise float ops against PyTorch: arithmetic with broadcasting, unary math,
comparisons, the scalar and clamp defaults, dtypes and memory layouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from .support import SETTINGS, as_layout, assert_close, coarse, layouts, randn, seeds, shapes, tt

pairs = mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=4, max_side=4)

BINARY = {
    "float_add": torch.add,
    "float_sub": torch.sub,
    "float_mul": torch.mul,
    "float_div": torch.div,
}


@pytest.mark.parametrize("op", sorted(BINARY))
@SETTINGS
@given(shapes=pairs, seed=seeds, lhs_layout=layouts, rhs_layout=layouts)
def test_binary_ops_broadcast_like_torch(B, op, shapes, seed, lhs_layout, rhs_layout):
    lhs_shape, rhs_shape = shapes.input_shapes
    lhs = randn(seed, lhs_shape)
    rhs = randn(seed + 1, rhs_shape)
    if op == "float_div":
        rhs = np.where(np.abs(rhs) < 0.1, 0.5, rhs).astype(np.float32)
    out = getattr(B, op)(lhs=as_layout(lhs, lhs_layout), rhs=as_layout(rhs, rhs_layout))
    assert_close(out, BINARY[op](tt(lhs), tt(rhs)))


@SETTINGS
@given(shapes=pairs, seed=seeds)
def test_powf_matches_torch_on_positive_bases(B, shapes, seed):
    lhs_shape, rhs_shape = shapes.input_shapes
    base = np.abs(randn(seed, lhs_shape)) + 0.1
    exponent = randn(seed + 1, rhs_shape)
    assert_close(B.float_powf(lhs=base, rhs=exponent), torch.pow(tt(base), tt(exponent)), atol=1e-5)


UNARY = {
    "float_exp": (torch.exp, "any"),
    "float_log": (torch.log, "positive"),
    "float_sqrt": (torch.sqrt, "positive"),
    "float_abs": (torch.abs, "any"),
    "float_tanh": (torch.tanh, "any"),
    "float_sin": (torch.sin, "any"),
    "float_cos": (torch.cos, "any"),
    "float_erf": (torch.erf, "any"),
    "float_floor": (torch.floor, "any"),
    "float_neg": (torch.neg, "any"),
    "float_recip": (torch.reciprocal, "positive"),
    "float_log1p": (torch.log1p, "positive"),
    "float_sign": (torch.sign, "coarse"),
}


def _unary_input(seed, shape, domain, dtype=np.float32):
    if domain == "positive":
        return (np.abs(randn(seed, shape, np.float64, 2.0)) + 0.1).astype(dtype)
    if domain == "coarse":
        return coarse(seed, shape, dtype)
    return randn(seed, shape, dtype, 2.0)


@pytest.mark.parametrize("op", sorted(UNARY))
@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts)
def test_unary_ops_match_torch(B, op, shape, seed, layout):
    fn, domain = UNARY[op]
    x = _unary_input(seed, shape, domain)
    assert_close(getattr(B, op)(tensor=as_layout(x, layout)), fn(tt(x)))


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
@pytest.mark.parametrize("op", ["float_exp", "float_log", "float_sqrt", "float_tanh", "float_erf", "float_sin"])
def test_unary_ops_keep_float16_and_float64(B, op, dtype):
    fn, domain = UNARY[op]
    x = _unary_input(3, (4, 7), "positive" if domain == "positive" else "any", dtype)
    rtol = 2e-3 if dtype == np.float16 else 1e-12
    # the oracle computes float16 in float32 and rounds once, as the backends must
    expected = fn(tt(x.astype(np.float32))).to(torch.float16) if dtype == np.float16 else fn(tt(x))
    assert_close(getattr(B, op)(tensor=x), expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_binary_ops_keep_the_lhs_dtype(B, dtype):
    lhs = randn(0, (3, 4), dtype)
    rhs = randn(1, (1, 4), np.float32)
    for op in ("float_add", "float_sub", "float_mul", "float_div", "float_powf"):
        out = getattr(B, op)(lhs=np.abs(lhs) + 1, rhs=rhs)
        assert out.dtype == dtype, op
        assert out.shape == (3, 4), op


COMPARE = {"float_equal": torch.eq, "float_greater": torch.gt, "float_lower": torch.lt,
           "float_not_equal": torch.ne, "float_greater_equal": torch.ge, "float_lower_equal": torch.le}


@pytest.mark.parametrize("op", sorted(COMPARE))
@SETTINGS
@given(shapes=pairs, seed=seeds, layout=layouts)
def test_comparisons_return_bool_like_torch(B, op, shapes, seed, layout):
    lhs_shape, rhs_shape = shapes.input_shapes
    lhs, rhs = coarse(seed, lhs_shape), coarse(seed + 1, rhs_shape)
    assert_close(getattr(B, op)(lhs=as_layout(lhs, layout), rhs=rhs), COMPARE[op](tt(lhs), tt(rhs)))


ELEM = {"float_equal_elem": torch.eq, "float_not_equal_elem": torch.ne, "float_greater_elem": torch.gt,
        "float_greater_equal_elem": torch.ge, "float_lower_elem": torch.lt, "float_lower_equal_elem": torch.le}


@pytest.mark.parametrize("op", sorted(ELEM))
@SETTINGS
@given(shape=shapes, seed=seeds, scalar=st.sampled_from([-1.0, 0.0, 0.5, 2.0]))
def test_scalar_comparisons_match_torch(B, op, shape, seed, scalar):
    x = coarse(seed, shape)
    assert_close(getattr(B, op)(lhs=x, rhs=scalar), ELEM[op](tt(x), scalar))


SCALAR = {"float_add_scalar": torch.add, "float_sub_scalar": torch.sub, "float_mul_scalar": torch.mul,
          "float_div_scalar": torch.div, "float_powf_scalar": torch.pow, "float_remainder_scalar": torch.remainder}


@pytest.mark.parametrize("op", sorted(SCALAR))
@SETTINGS
@given(shape=shapes, seed=seeds, scalar=st.sampled_from([-2.5, -1.0, 0.5, 3.0]))
def test_scalar_ops_match_torch_and_keep_dtype(B, op, shape, seed, scalar):
    x = np.abs(randn(seed, shape)) + 0.1 if op == "float_powf_scalar" else randn(seed, shape, scale=3.0)
    assert_close(getattr(B, op)(lhs=x, rhs=scalar), SCALAR[op](tt(x), scalar), atol=1e-5)


def test_scalar_ops_keep_float16(B):
    x = randn(0, (5,), np.float16)
    for op in SCALAR:
        assert getattr(B, op)(lhs=np.abs(x) + 1, rhs=0.5).dtype == np.float16, op


@SETTINGS
@given(shapes=pairs, seed=seeds)
def test_max_and_min_pair_match_torch(B, shapes, seed):
    lhs_shape, rhs_shape = shapes.input_shapes
    lhs, rhs = coarse(seed, lhs_shape), coarse(seed + 1, rhs_shape)
    assert_close(B.float_max_pair(lhs=lhs, rhs=rhs), torch.maximum(tt(lhs), tt(rhs)))
    assert_close(B.float_min_pair(lhs=lhs, rhs=rhs), torch.minimum(tt(lhs), tt(rhs)))


@SETTINGS
@given(shape=shapes, seed=seeds, low=st.sampled_from([-1.0, 0.0]), high=st.sampled_from([0.5, 1.5]))
def test_clamps_match_torch(B, shape, seed, low, high):
    x = randn(seed, shape, scale=2.0)
    assert_close(B.float_clamp(tensor=x, min=low, max=high), torch.clamp(tt(x), low, high))
    assert_close(B.float_clamp_min(tensor=x, min=low), torch.clamp(tt(x), min=low))
    assert_close(B.float_clamp_max(tensor=x, max=high), torch.clamp(tt(x), max=high))


def test_nan_and_inf_propagate_like_torch(B):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], dtype=np.float32)
    for op, fn in [("float_exp", torch.exp), ("float_tanh", torch.tanh), ("float_abs", torch.abs),
                   ("float_floor", torch.floor), ("float_erf", torch.erf)]:
        assert_close(getattr(B, op)(tensor=x), fn(tt(x)))
    assert_close(B.float_add(lhs=x, rhs=x[::-1].copy()), tt(x) + tt(x[::-1].copy()))
    assert_close(B.float_equal(lhs=x, rhs=x), torch.eq(tt(x), tt(x)))  # NaN != NaN


def test_empty_tensors_stay_empty(B):
    x = np.zeros((0, 3), dtype=np.float32)
    assert B.float_add(lhs=x, rhs=np.ones((1, 3), np.float32)).shape == (0, 3)
    assert B.float_exp(tensor=x).shape == (0, 3)
    assert B.float_greater(lhs=x, rhs=x).dtype == np.bool_
