"""Int and bool ops against PyTorch (the ops both CPU backends share from ``cpu_common``):
truncating division, divisor-signed remainder, kept reduction dims and dtypes, layouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from minidl.backend import DType

from .support import SETTINGS, as_layout, assert_close, layouts, seeds, shapes, tt

pairs = mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=4, max_side=4)
int_dtypes = st.sampled_from([np.int32, np.int64])


def ints(seed, shape, dtype=np.int64, low=-9, high=10):
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def bools(seed, shape):
    return np.random.default_rng(seed).random(shape) < 0.5


INT_BINARY = {"int_add": torch.add, "int_sub": torch.sub, "int_mul": torch.mul}


@pytest.mark.parametrize("op", sorted(INT_BINARY))
@SETTINGS
@given(shapes=pairs, seed=seeds, dtype=int_dtypes, layout=layouts)
def test_int_arithmetic_matches_torch_and_keeps_lhs_dtype(B, op, shapes, seed, dtype, layout):
    lhs, rhs = ints(seed, shapes.input_shapes[0], dtype), ints(seed + 1, shapes.input_shapes[1], np.int64)
    out = getattr(B, op)(lhs=as_layout(lhs, layout), rhs=rhs)
    assert_close(out, INT_BINARY[op](tt(lhs), tt(rhs)).numpy().astype(dtype), dtype=dtype)


@SETTINGS
@given(shapes=pairs, seed=seeds, dtype=int_dtypes)
def test_int_div_truncates_and_remainder_takes_the_divisors_sign(B, shapes, seed, dtype):
    lhs = ints(seed, shapes.input_shapes[0], dtype)
    rhs = ints(seed + 1, shapes.input_shapes[1], dtype)
    rhs[rhs == 0] = 3
    assert_close(B.int_div(lhs=lhs, rhs=rhs), torch.div(tt(lhs), tt(rhs), rounding_mode="trunc"))
    assert_close(B.int_remainder(lhs=lhs, rhs=rhs), torch.remainder(tt(lhs), tt(rhs)))


def test_int_div_is_exact_for_large_int64(B):
    # through float64 these would lose their last digits
    lhs = np.array([2**62 + 1, -(2**62) - 3], dtype=np.int64)
    rhs = np.array([3, 7], dtype=np.int64)
    assert_close(B.int_div(lhs=lhs, rhs=rhs), torch.div(tt(lhs), tt(rhs), rounding_mode="trunc"))


@SETTINGS
@given(shape=shapes, seed=seeds, dtype=int_dtypes, scalar=st.integers(-5, 5))
def test_int_scalar_ops_and_comparisons_match_torch(B, shape, seed, dtype, scalar):
    x = ints(seed, shape, dtype)
    t = tt(x)
    assert_close(B.int_add_scalar(lhs=x, rhs=scalar), (t + scalar).numpy().astype(dtype), dtype=dtype)
    assert_close(B.int_sub_scalar(lhs=x, rhs=scalar), (t - scalar).numpy().astype(dtype), dtype=dtype)
    assert_close(B.int_mul_scalar(lhs=x, rhs=scalar), (t * scalar).numpy().astype(dtype), dtype=dtype)
    assert_close(B.int_neg(tensor=x), -t)
    assert_close(B.int_abs(tensor=x), t.abs())
    assert_close(B.int_equal_elem(lhs=x, rhs=scalar), t == scalar)
    assert_close(B.int_greater_elem(lhs=x, rhs=scalar), t > scalar)
    assert_close(B.int_lower_elem(lhs=x, rhs=scalar), t < scalar)


@SETTINGS
@given(shapes=pairs, seed=seeds)
def test_int_comparisons_broadcast_like_torch(B, shapes, seed):
    lhs, rhs = ints(seed, shapes.input_shapes[0], low=-2, high=3), ints(seed + 1, shapes.input_shapes[1], low=-2, high=3)
    assert_close(B.int_equal(lhs=lhs, rhs=rhs), torch.eq(tt(lhs), tt(rhs)))
    assert_close(B.int_greater(lhs=lhs, rhs=rhs), torch.gt(tt(lhs), tt(rhs)))
    assert_close(B.int_lower(lhs=lhs, rhs=rhs), torch.lt(tt(lhs), tt(rhs)))


@SETTINGS
@given(shape=shapes, seed=seeds, dtype=int_dtypes, layout=layouts, data=st.data())
def test_int_reductions_keep_dim_and_dtype(B, shape, seed, dtype, layout, data):
    x = ints(seed, shape, dtype, low=-3, high=4)
    view, t = as_layout(x, layout), tt(x)
    dim = data.draw(st.integers(0, len(shape) - 1))
    # an int sum keeps its dtype (as burn); torch widens int32 sums to int64, so compare values
    assert_close(B.int_sum(tensor=view), t.sum().reshape(1).numpy().astype(dtype), dtype=dtype)
    assert_close(B.int_sum_dim(tensor=view, dim=dim), t.sum(dim, keepdim=True).numpy().astype(dtype), dtype=dtype)
    assert_close(B.int_max_dim(tensor=view, dim=dim), t.amax(dim, keepdim=True))
    assert_close(B.int_min_dim(tensor=view, dim=dim), t.amin(dim, keepdim=True))
    assert_close(B.int_argmax(tensor=view, dim=dim), t.argmax(dim, keepdim=True), dtype=np.int64)
    assert_close(B.int_argmin(tensor=view, dim=dim), t.argmin(dim, keepdim=True), dtype=np.int64)


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_int_layout_ops_match_torch(B, shape, seed, layout, data):
    x = ints(seed, shape)
    view, t = as_layout(x, layout), tt(x)
    rank = len(shape)
    assert_close(B.int_reshape(tensor=view, shape=shape[::-1]), t.reshape(shape[::-1]))
    d1, d2 = data.draw(st.integers(0, rank - 1)), data.draw(st.integers(0, rank - 1))
    assert_close(B.int_swap_dims(tensor=view, dim1=d1, dim2=d2), t.transpose(d1, d2))
    axes = data.draw(st.permutations(range(rank)))
    assert_close(B.int_permute(tensor=view, axes=axes), t.permute(*axes))
    assert_close(B.int_flip(tensor=view, axes=[d1]), t.flip([d1]))
    assert_close(B.int_expand(tensor=view, shape=(2, *shape)), t.expand(2, *shape))
    slices = [slice(0, n, 2) for n in shape]
    assert_close(B.int_slice(tensor=view, slices=slices), t[tuple(slices)])
    region = t[tuple(slices)]
    value = ints(seed + 1, tuple(region.shape))
    expected = t.clone()
    expected[tuple(slices)] = tt(value)
    assert_close(B.int_slice_assign(tensor=view, slices=slices, value=value), expected)
    assert_close(B.int_cat(tensors=[view, x], dim=d1), torch.cat([t, t], d1))
    assert_close(B.int_repeat_dim(tensor=view, dim=d1, times=3), torch.cat([t] * 3, d1))


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_int_index_ops_match_torch(B, shape, seed, data):
    x = ints(seed, shape)
    t = tt(x)
    dim = data.draw(st.integers(0, len(shape) - 1))
    indices = np.random.default_rng(seed).integers(0, shape[dim], shape).astype(np.int64)
    value = ints(seed + 2, shape)
    assert_close(B.int_gather(dim=dim, tensor=x, indices=indices), torch.gather(t, dim, tt(indices)))
    assert_close(B.int_scatter(dim=dim, tensor=x, indices=indices, value=value),
                 t.scatter_add(dim, tt(indices), tt(value)))
    picks = np.array(data.draw(st.lists(st.integers(0, shape[dim] - 1), max_size=5)), dtype=np.int64)
    expected = torch.index_select(t, dim, tt(picks))
    assert_close(B.int_select(tensor=x, dim=dim, indices=picks), expected)
    added = ints(seed + 3, tuple(expected.shape))
    assert_close(B.int_select_assign(tensor=x, dim=dim, indices=picks, value=added),
                 t.index_add(dim, tt(picks), tt(added)))
    mask = bools(seed, shape)
    assert_close(B.int_mask_where(tensor=x, mask=mask, value=value), torch.where(tt(mask), tt(value), t))
    assert_close(B.int_mask_fill(tensor=x, mask=mask, value=-7), t.masked_fill(tt(mask), -7))


def test_int_conversions_and_creation(B, device):
    x = np.array([-3, 0, 7], dtype=np.int64)
    assert_close(B.int_cast(tensor=x, dtype=DType.I32), x.astype(np.int32))
    assert_close(B.int_into_float(tensor=x, dtype=DType.F32), tt(x).float())
    assert_close(B.int_into_float(tensor=x, dtype=DType.F16), tt(x).half())
    prim = B.int_from_data(data=x, device=device)
    x[0] = 99
    assert B.int_into_data(tensor=prim).array[0] == -3
    assert_close(B.int_zeros(shape=(2, 2), dtype=DType.I32, device=device), np.zeros((2, 2), np.int32))
    assert_close(B.int_arange(start=2, end=11, step=3, dtype=DType.I64, device=device), torch.arange(2, 11, 3))


# ----- bool -------------------------------------------------------------------------------------


@SETTINGS
@given(shapes=pairs, seed=seeds, layout=layouts)
def test_bool_logic_matches_torch(B, shapes, seed, layout):
    lhs, rhs = bools(seed, shapes.input_shapes[0]), bools(seed + 1, shapes.input_shapes[1])
    view = as_layout(lhs, layout)
    assert_close(B.bool_not(tensor=view), ~tt(lhs))
    assert_close(B.bool_and(lhs=view, rhs=rhs), tt(lhs) & tt(rhs))
    assert_close(B.bool_or(lhs=view, rhs=rhs), tt(lhs) | tt(rhs))
    assert_close(B.bool_xor(lhs=view, rhs=rhs), tt(lhs) ^ tt(rhs))
    assert_close(B.bool_equal(lhs=view, rhs=rhs), tt(lhs) == tt(rhs))


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_bool_layout_and_reductions_match_torch(B, shape, seed, layout, data):
    x = bools(seed, shape)
    view, t = as_layout(x, layout), tt(x)
    rank = len(shape)
    assert_close(B.bool_reshape(tensor=view, shape=(-1,)), t.reshape(-1))
    d1, d2 = data.draw(st.integers(0, rank - 1)), data.draw(st.integers(0, rank - 1))
    assert_close(B.bool_swap_dims(tensor=view, dim1=d1, dim2=d2), t.transpose(d1, d2))
    axes = data.draw(st.permutations(range(rank)))
    assert_close(B.bool_permute(tensor=view, axes=axes), t.permute(*axes))
    assert_close(B.bool_flip(tensor=view, axes=[d2]), t.flip([d2]))
    assert_close(B.bool_expand(tensor=view, shape=(3, *shape)), t.expand(3, *shape))
    slices = [slice(1, None, 2) for _ in shape]
    assert_close(B.bool_slice(tensor=view, slices=slices), t[tuple(slices)])
    assert_close(B.bool_cat(tensors=[view, x], dim=d1), torch.cat([t, t], d1))
    assert_close(B.bool_any(tensor=view), t.any().reshape(1))
    assert_close(B.bool_all(tensor=view), t.all().reshape(1))


def test_bool_conversions(B, device):
    x = np.array([True, False, True])
    assert_close(B.bool_into_int(tensor=x, dtype=DType.I64), tt(x).long())
    assert_close(B.bool_into_int(tensor=x, dtype=DType.I32), tt(x).int())
    assert_close(B.bool_into_float(tensor=x), tt(x).float())
    assert_close(B.bool_into_float(tensor=x, dtype=DType.F64), tt(x).double())
    prim = B.bool_from_data(data=x, device=device)
    x[1] = True
    assert not B.bool_into_data(tensor=prim).array[1]


def test_bool_any_all_of_empty_tensors(B):
    empty = np.zeros((0, 2), dtype=bool)
    assert_close(B.bool_any(tensor=empty), torch.zeros(0, 2, dtype=torch.bool).any().reshape(1))
    assert_close(B.bool_all(tensor=empty), torch.zeros(0, 2, dtype=torch.bool).all().reshape(1))
