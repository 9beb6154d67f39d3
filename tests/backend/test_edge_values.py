"""Edge values against PyTorch, op by op: NaN, ±inf, ±0, huge and tiny numbers, empty (0-size)
tensors, and indices outside ``[0, size)``, negative ones included.

The random-value tests elsewhere in this suite never draw a NaN or an empty dim; this file is
where a backend that turns NaN into 0, drops a NaN in a maximum, wraps a negative index or
raises a raw NumPy error on an empty tensor fails. ``test_every_op_has_an_edge_case`` keeps it
complete: an op added to the protocol must be given a case here (or a reason it has none).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minidl.backend import Backend, DType, PoolOptions, op_names

from .support import GPU_NAMES, assert_close, tt

EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.5, 1e-30, -1e30])
DTYPES = [np.float32, np.float64]
EMPTY_SHAPES = [(0,), (2, 0, 3)]


def edge(dtype=np.float32) -> np.ndarray:
    return EDGE.astype(dtype)


def rows(dtype=np.float32) -> np.ndarray:
    """[4, 12]: the edge values in four orders, so every reduction meets a NaN, an inf, a -inf
    at the start, the middle and the end of a row; plus rows without NaN."""
    e = edge(dtype)
    finite_inf = np.where(np.isnan(e), 2.0, e).astype(dtype)
    return np.stack([e, e[::-1], np.roll(e, 5), finite_inf])


def close(actual, expected, dtype=None, rtol=1e-5, atol=1e-6):
    assert_close(np.asarray(actual), expected, rtol=rtol, atol=atol, dtype=dtype)


# ----- unary math and activations ---------------------------------------------------------------

UNARY = {
    "float_exp": torch.exp, "float_log": torch.log, "float_log1p": torch.log1p,
    "float_sqrt": torch.sqrt, "float_abs": torch.abs, "float_tanh": torch.tanh,
    "float_sin": torch.sin, "float_cos": torch.cos, "float_erf": torch.erf,
    "float_floor": torch.floor, "float_neg": torch.neg, "float_recip": torch.reciprocal,
    "float_sign": torch.sign, "relu": torch.relu, "sigmoid": torch.sigmoid,
    # torch's float32 CPU gelu gives NaN at ±inf (its vectorized erf), its float64 one ±inf and 0,
    # the limits: the oracle is the float64 one, rounded once
    "gelu": lambda t: F.gelu(t.double()).to(t.dtype),
}  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_agree_with_torch_on_nan_inf_and_signed_zero(B, op, dtype):
    if B.name in GPU_NAMES and op in ("float_sin", "float_cos"):
        pytest.xfail("Device.wgpu(): WGSL's sin/cos (lavapipe's) reduce a huge argument (-1e30) "
                     "wrongly; the backend has no Payne-Hanek reduction yet")
    x = edge(dtype)
    out = getattr(B, op)(x)
    close(out, UNARY[op](tt(x)))
    # signed zeros too (neg(0) = -0, abs(-0) = 0, relu(-0) = -0 ...): compare the sign bits.
    # Not for log1p: its protocol default, log(x + 1) (NdArray's, as the reference keeps every
    # default), rounds -0.0 + 1 to 1 and gives +0.0 where torch's log1p keeps -0.0
    expected = UNARY[op](tt(x)).numpy()
    zeros = (expected == 0) & (op != "float_log1p")
    np.testing.assert_array_equal(np.signbit(out[zeros]), np.signbit(expected[zeros]), err_msg=op)


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_keep_empty_tensors_empty(B, op, shape):
    x = np.zeros(shape, np.float32)
    close(getattr(B, op)(x), UNARY[op](tt(x)))


def test_leaky_relu_keeps_nan_and_scales_minus_inf(B):
    x = edge()
    close(B.leaky_relu(x, 0.1), F.leaky_relu(tt(x), 0.1))


def _torch_grad(fn, x):
    t = tt(x, requires_grad=True)
    fn(t).backward(torch.ones_like(t))
    return t.grad


def test_activation_backward_helpers_agree_with_torch_at_nan_and_inf(B):
    x = edge()
    ones = np.ones_like(x)
    # relu's backward reads its output: a NaN output lets the gradient through (torch's
    # threshold_backward tests `output <= 0`, false for NaN)
    close(B.relu_backward(B.relu(x), ones), _torch_grad(torch.relu, x))
    close(B.sigmoid_backward(B.sigmoid(x), ones), _torch_grad(torch.sigmoid, x))
    finite = x[np.isfinite(x)]  # torch's own gelu backward gives NaN at ±inf (inf * 0)
    close(B.gelu_backward(finite, np.ones_like(finite)), _torch_grad(F.gelu, finite))


# ----- binary, scalar and comparison ops -------------------------------------------------------

BINARY = {
    "float_add": torch.add, "float_sub": torch.sub, "float_mul": torch.mul, "float_div": torch.div,
    "float_powf": torch.pow, "float_max_pair": torch.maximum, "float_min_pair": torch.minimum,
    "float_equal": torch.eq, "float_not_equal": torch.ne, "float_greater": torch.gt,
    "float_greater_equal": torch.ge, "float_lower": torch.lt, "float_lower_equal": torch.le,
}  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_agree_with_torch_on_every_pair_of_edge_values(B, op, dtype):
    lhs, rhs = edge(dtype)[:, None], edge(dtype)[None, :]  # 144 pairs, NaN on either side
    close(getattr(B, op)(lhs, rhs), BINARY[op](tt(lhs), tt(rhs)))


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_broadcast_empty_tensors(B, op):
    lhs, rhs = np.zeros((0, 3), np.float32), np.ones((1, 3), np.float32)
    close(getattr(B, op)(lhs, rhs), BINARY[op](tt(lhs), tt(rhs)))
    close(getattr(B, op)(rhs, lhs), BINARY[op](tt(rhs), tt(lhs)))


SCALAR = {
    "float_add_scalar": torch.add, "float_sub_scalar": torch.sub, "float_mul_scalar": torch.mul,
    "float_div_scalar": torch.div, "float_powf_scalar": torch.pow,
    "float_equal_elem": torch.eq, "float_not_equal_elem": torch.ne, "float_greater_elem": torch.gt,
    "float_greater_equal_elem": torch.ge, "float_lower_elem": torch.lt,
    "float_lower_equal_elem": torch.le,
}  # fmt: skip
SCALARS = [0.5, -0.5, 2.0, 3.0, -1.0, -2.0, 0.0, 1.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(SCALAR))
def test_scalar_ops_agree_with_torch_on_edge_values_and_edge_scalars(B, op, dtype):
    # powf_scalar's 0.5 and -0.5 are torch's sqrt and rsqrt: (-inf) ** 0.5 is NaN, not C's inf
    x = edge(dtype)
    for scalar in SCALARS:
        expected = SCALAR[op](tt(x), scalar)
        actual = getattr(B, op)(x, scalar)
        close(actual, expected)
        zeros = expected.numpy() == 0
        np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected.numpy()[zeros]),
                                      err_msg=f"{op}({scalar})")


def test_remainder_scalar_agrees_with_torch_on_edge_values(B):
    x = edge()
    finite = x[np.isfinite(x) & (np.abs(x) < 1e20)]
    for divisor in (2.0, -1.5, 0.5):
        close(B.float_remainder_scalar(x[~np.isfinite(x)], divisor), torch.remainder(tt(x[~np.isfinite(x)]), divisor))
        close(B.float_remainder_scalar(finite, divisor), torch.remainder(tt(finite), divisor))


def test_clamps_keep_nan_and_clip_infinities(B):
    x = edge()
    close(B.float_clamp(x, -0.5, 0.5), torch.clamp(tt(x), -0.5, 0.5))
    close(B.float_clamp_min(x, 0.25), torch.clamp(tt(x), min=0.25))
    close(B.float_clamp_max(x, 0.25), torch.clamp(tt(x), max=0.25))


def test_masks_move_nan_and_inf_like_any_value(B):
    x = edge()
    other = x[::-1].copy()
    mask = np.isnan(x) | (x > 0)
    close(B.float_mask_where(x, mask, other), torch.where(tt(mask), tt(other), tt(x)))
    close(B.float_mask_fill(x, np.isnan(x), 7.0), tt(x).masked_fill(tt(np.isnan(x)), 7.0))
    close(B.float_mask_fill(x, x > 0, math.nan), tt(x).masked_fill(tt(x > 0), math.nan))


# ----- reductions -------------------------------------------------------------------------------

REDUCE_DIM = {
    "float_sum_dim": lambda t, d: t.sum(d, keepdim=True),
    "float_mean_dim": lambda t, d: t.mean(d, keepdim=True),
    "float_prod_dim": lambda t, d: t.prod(d, keepdim=True),
    "float_max_dim": lambda t, d: t.amax(d, keepdim=True),
    "float_min_dim": lambda t, d: t.amin(d, keepdim=True),
    "float_argmax": lambda t, d: t.argmax(d, keepdim=True),
    "float_argmin": lambda t, d: t.argmin(d, keepdim=True),
}
WHOLE = {"float_sum": torch.sum, "float_mean": torch.mean, "float_max": torch.amax, "float_min": torch.amin}
#: reductions with no value over nothing (torch: "Expected reduction dim to have non-zero size")
NEEDS_ELEMENTS = {"float_max_dim", "float_min_dim", "float_argmax", "float_argmin", "float_max", "float_min",
                  "float_max_dim_with_indices", "float_min_dim_with_indices"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(REDUCE_DIM))
def test_reductions_along_a_dim_propagate_nan_and_inf_like_torch(B, op, dtype):
    x = rows(dtype)
    for dim in (0, 1):
        close(getattr(B, op)(x, dim), REDUCE_DIM[op](tt(x), dim), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", sorted(WHOLE))
def test_whole_tensor_reductions_propagate_nan_and_inf_like_torch(B, op):
    for x in rows(), rows()[3]:
        close(getattr(B, op)(x), WHOLE[op](tt(x)).reshape(1))


@pytest.mark.parametrize("op", ["float_max_dim_with_indices", "float_min_dim_with_indices"])
def test_max_min_with_indices_point_at_the_nan_like_torch(B, op):
    x = rows()
    fn = torch.max if "max" in op else torch.min
    for dim in (0, 1):
        values, indices = getattr(B, op)(x, dim)
        expected = fn(tt(x), dim, keepdim=True)
        close(values, expected.values)
        close(indices, expected.indices)


@pytest.mark.parametrize("op", sorted(REDUCE_DIM))
def test_reductions_along_an_empty_dim_give_torchs_value_or_a_clear_error(B, op):
    x = np.zeros((0, 3), np.float32)
    if op in NEEDS_ELEMENTS:
        with pytest.raises(ValueError, match="empty"):
            getattr(B, op)(x, 0)
    else:  # sum 0, mean NaN, prod 1
        close(getattr(B, op)(x, 0), REDUCE_DIM[op](tt(x), 0))
    close(getattr(B, op)(x, 1), REDUCE_DIM[op](tt(x), 1))  # nothing to reduce: empty result


@pytest.mark.parametrize("op", sorted(WHOLE) + ["float_max_dim_with_indices", "float_min_dim_with_indices"])
def test_whole_reductions_of_an_empty_tensor_give_torchs_value_or_a_clear_error(B, op):
    x = np.zeros((0, 3), np.float32)
    call = (lambda: getattr(B, op)(x, 0)) if "indices" in op else (lambda: getattr(B, op)(x))
    if op in NEEDS_ELEMENTS:
        with pytest.raises(ValueError, match="empty"):
            call()
    else:
        close(call(), WHOLE[op](tt(x)).reshape(1))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_rows_with_nan_and_inf_agrees_with_torch(B, op):
    x = rows()
    for dim in (0, 1):
        close(getattr(B, op)(x, dim), getattr(torch, op)(tt(x), dim))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 4)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_an_empty_tensor_is_empty_like_torch(B, op, shape):
    x = np.zeros(shape, np.float32)
    for dim in range(len(shape)):
        close(getattr(B, op)(x, dim), getattr(torch, op)(tt(x), dim))


def test_matmul_propagates_nan_and_inf_and_empty_inner_dim_gives_zeros(B):
    a = edge()[None, :].repeat(3, 0)
    b = np.ones((12, 2), np.float32)
    close(B.float_matmul(a, b), tt(a) @ tt(b))
    inf_times_zero = np.array([[np.inf, 1.0]], np.float32), np.array([[0.0], [1.0]], np.float32)
    close(B.float_matmul(*inf_times_zero), tt(inf_times_zero[0]) @ tt(inf_times_zero[1]))
    close(B.float_matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)), torch.zeros(2, 3))
    close(B.float_matmul(np.zeros((0, 2), np.float32), np.ones((2, 3), np.float32)), torch.zeros(0, 3))
    close(B.float_matmul(np.zeros((4, 0, 2), np.float32), np.ones((4, 2, 3), np.float32)), torch.zeros(4, 0, 3))


# ----- layout and indexing ----------------------------------------------------------------------


def test_layout_ops_accept_empty_tensors(B):
    x = np.zeros((2, 0, 3), np.float32)
    t = tt(x)
    close(B.float_reshape(x, (0, 6)), t.reshape(0, 6))
    close(B.float_swap_dims(x, 0, 2), t.transpose(0, 2))
    close(B.float_permute(x, (1, 2, 0)), t.permute(1, 2, 0))
    close(B.float_flip(x, (0, 1)), t.flip(0, 1))
    close(B.float_transpose(x), t.transpose(1, 2))
    close(B.float_expand(np.zeros((1, 0), np.float32), (4, 0)), torch.zeros(4, 0))
    close(B.float_slice(x, [slice(0, 1)]), t[0:1])
    close(B.float_slice_assign(x, [slice(0, 1)], np.zeros((1, 0, 3), np.float32)), t)
    close(B.float_cat([x, x], 1), torch.cat([t, t], 1))
    close(B.float_cat([np.zeros((0, 3), np.float32), edge()[:3][None]], 0), tt(edge()[:3][None]))
    close(B.float_repeat_dim(x, 1, 4), t.repeat(1, 4, 1))
    close(B.float_repeat_dim(x, 0, 3), t.repeat(3, 1, 1))


def test_repeat_dim_zero_times_is_empty_like_torch(B):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    close(B.float_repeat_dim(x, 0, 0), tt(x).repeat(0, 1))
    close(B.float_repeat_dim(x, 1, 0), tt(x).repeat(1, 0))
    close(B.int_repeat_dim(x.astype(np.int64), 1, 0), tt(x.astype(np.int64)).repeat(1, 0))


def test_repeat_dim_copies_nan_and_inf(B):
    x = edge()[None]
    close(B.float_repeat_dim(x, 0, 3), tt(x).repeat(3, 1))
    close(B.float_repeat_dim(x, 1, 2), tt(x).repeat(1, 2))


X = np.arange(12, dtype=np.float32).reshape(3, 4)
BAD_INDICES = {
    "negative": -1,
    "past the end": 3,  # dim 0 of X has 3 rows: 3 is one past the last
}


def _index_calls(B, kind: str, bad: int):
    """Every indexing op of ``kind`` ('float' or 'int'), called with one bad index in dim 0."""
    x = X if kind == "float" else X.astype(np.int64)
    idx2 = np.array([[0, 1, 2, 0], [1, 2, bad, 0]])
    idx1 = np.array([0, bad])
    values = np.ones((2, 4), x.dtype)
    p = f"{kind}_"
    return {
        p + "gather": lambda: getattr(B, p + "gather")(0, x, idx2),
        p + "scatter": lambda: getattr(B, p + "scatter")(0, x, idx2, values),
        p + "select": lambda: getattr(B, p + "select")(x, 0, idx1),
        p + "select_assign": lambda: getattr(B, p + "select_assign")(x, 0, idx1, values),
    }


@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize("where", sorted(BAD_INDICES))
def test_indexing_refuses_an_index_outside_the_dim_like_torch(B, kind, where):
    bad = BAD_INDICES[where]
    for op, call in _index_calls(B, kind, bad).items():
        with pytest.raises(IndexError, match=r"out of range \[0, 3\)") as err:
            call()
        assert str(bad) in str(err.value), (op, str(err.value))
    # torch refuses the same (index_select, gather, scatter_add, index_add)
    with pytest.raises((IndexError, RuntimeError)):
        torch.index_select(tt(X), 0, torch.tensor([0, bad]))
    with pytest.raises((IndexError, RuntimeError)):
        torch.gather(tt(X), 0, torch.tensor([[0, 1, 2, 0], [1, 2, bad, 0]]))


@pytest.mark.parametrize("where", sorted(BAD_INDICES))
def test_embedding_refuses_an_id_outside_the_vocabulary_like_torch(B, where):
    bad = BAD_INDICES[where]
    ids = np.array([[0, bad]])
    with pytest.raises(IndexError, match=r"out of range \[0, 3\)"):
        B.embedding(X, ids)
    with pytest.raises(IndexError, match=r"out of range \[0, 3\)"):
        B.embedding_backward(X, np.ones((1, 2, 4), np.float32), ids)
    with pytest.raises(IndexError):
        F.embedding(torch.tensor(ids), tt(X))


def test_indexing_with_empty_indices_gives_empty_results(B):
    none = np.zeros((0,), np.int64)
    close(B.float_select(X, 1, none), torch.index_select(tt(X), 1, torch.tensor(none)))
    close(B.float_select_assign(X, 1, none, np.zeros((3, 0), np.float32)), tt(X))
    close(B.float_gather(1, X, np.zeros((3, 0), np.int64)), torch.zeros(3, 0))
    close(B.float_scatter(1, X, np.zeros((3, 0), np.int64), np.zeros((3, 0), np.float32)), tt(X))
    close(B.embedding(X, np.zeros((0, 2), np.int64)), torch.zeros(0, 2, 4))
    close(B.int_select(X.astype(np.int64), 0, none), torch.zeros(0, 4, dtype=torch.int64))


def test_gather_and_select_carry_nan_and_inf(B):
    x = edge().reshape(3, 4)
    idx = np.array([[2, 1, 0, 2]])
    close(B.float_gather(0, x, idx), torch.gather(tt(x), 0, torch.tensor(idx)))
    close(B.float_select(x, 1, np.array([3, 0, 0])), torch.index_select(tt(x), 1, torch.tensor([3, 0, 0])))
    close(B.float_scatter(0, x, idx, np.full((1, 4), np.inf, np.float32)),
          tt(x).scatter_add(0, torch.tensor(idx), torch.full((1, 4), math.inf)))


# ----- int and bool ops -------------------------------------------------------------------------


def test_int_division_by_zero_is_refused_like_torch(B):
    lhs, rhs = np.array([1, -1, 0]), np.array([2, 0, 1])
    for op in ("int_div", "int_remainder"):
        with pytest.raises(ZeroDivisionError, match=op):
            getattr(B, op)(lhs, rhs)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.div(tt(lhs), tt(rhs), rounding_mode="trunc")


@pytest.mark.parametrize("op", ["int_max_dim", "int_min_dim", "int_argmax", "int_argmin"])
def test_int_reductions_over_an_empty_dim_are_refused_clearly(B, op):
    with pytest.raises(ValueError, match=rf"{op}: cannot reduce an empty dim 0"):
        getattr(B, op)(np.zeros((0, 3), np.int64), 0)
    assert getattr(B, op)(np.zeros((0, 3), np.int64), 1).shape == (0, 1)


def test_int_and_bool_ops_accept_empty_tensors(B):
    e = np.zeros((0, 3), np.int64)
    b = np.zeros((0, 3), bool)
    close(B.int_sum(e), torch.zeros(1, dtype=torch.int64))
    close(B.int_sum_dim(e, 0), torch.zeros(1, 3, dtype=torch.int64))
    close(B.int_add(e, np.ones((1, 3), np.int64)), torch.zeros(0, 3, dtype=torch.int64))
    close(B.int_cat([e, np.ones((1, 3), np.int64)], 0), torch.ones(1, 3, dtype=torch.int64))
    close(B.bool_not(b), torch.zeros(0, 3, dtype=torch.bool))
    close(B.bool_any(b), torch.zeros(1, dtype=torch.bool))
    close(B.bool_all(b), torch.ones(1, dtype=torch.bool))  # all of nothing is true
    close(B.int_into_float(e, DType.F32), torch.zeros(0, 3))


# ----- module ops -------------------------------------------------------------------------------


def _nchw(dtype=np.float32):
    """[1, 1, 4, 4] with a NaN, an inf and a -inf in different windows."""
    x = np.arange(16, dtype=dtype).reshape(1, 1, 4, 4) / 4
    x[0, 0, 0, 0], x[0, 0, 1, 3], x[0, 0, 3, 1] = np.nan, np.inf, -np.inf
    return x


def test_pools_propagate_nan_and_inf_like_torch(B):
    x = _nchw()
    opts = PoolOptions(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1))
    close(B.max_pool2d(x, opts), F.max_pool2d(tt(x), 2))
    out, indices = B.max_pool2d_with_indices(x, opts)
    expected, expected_indices = F.max_pool2d(tt(x), 2, return_indices=True)
    close(out, expected)
    close(indices, expected_indices)
    close(B.avg_pool2d(x, opts), F.avg_pool2d(tt(x), 2))
    close(B.adaptive_avg_pool2d(x, (2, 2)), F.adaptive_avg_pool2d(tt(x), (2, 2)))
    out, indices = B.adaptive_max_pool2d_with_indices(x, (3, 2))
    expected, expected_indices = F.adaptive_max_pool2d(tt(x), (3, 2), return_indices=True)
    close(out, expected)
    close(indices, expected_indices)
    close(B.adaptive_max_pool2d(x, (2, 2)), F.adaptive_max_pool2d(tt(x), (2, 2)))


def test_1d_pools_propagate_nan_and_inf_like_torch(B):
    x = _nchw()[0]  # [1, 4, 4]: rows as channels
    close(B.max_pool1d(x, 2, 2), F.max_pool1d(tt(x), 2, 2))
    out, indices = B.max_pool1d_with_indices(x, 3, 1, 1, 1, True)
    expected, expected_indices = F.max_pool1d(tt(x), 3, 1, 1, 1, True, return_indices=True)
    close(out, expected)
    close(indices, expected_indices)
    close(B.avg_pool1d(x, 2, 1), F.avg_pool1d(tt(x), 2, 1))
    close(B.adaptive_avg_pool1d(x, 3), F.adaptive_avg_pool1d(tt(x), 3))
    out, indices = B.adaptive_max_pool1d_with_indices(x, 3)
    expected, expected_indices = F.adaptive_max_pool1d(tt(x), 3, return_indices=True)
    close(out, expected)
    close(indices, expected_indices)


def test_prod_propagates_nan_and_inf_and_is_one_over_nothing(B):
    for x in (rows(), rows()[3], np.zeros((0, 3), np.float32)):
        close(B.float_prod(x), tt(x).prod().reshape(1))


def test_conv_and_interpolate_propagate_nan_and_inf_like_torch(B):
    from minidl.backend import ConvOptions, InterpolateOptions

    x = _nchw()
    w = np.ones((1, 1, 2, 2), np.float32)
    opts = ConvOptions(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1)
    close(B.conv2d(x, w, None, opts), F.conv2d(tt(x), tt(w)))
    close(B.interpolate(x, (8, 8), InterpolateOptions(mode="nearest")),
          F.interpolate(tt(x), size=(8, 8), mode="nearest"))
    close(B.interpolate(x, (6, 6), InterpolateOptions(mode="bilinear")),
          F.interpolate(tt(x), size=(6, 6), mode="bilinear", align_corners=False))


def test_module_ops_accept_an_empty_batch(B):
    from minidl.backend import ConvOptions

    x = np.zeros((0, 1, 4, 4), np.float32)
    w = np.ones((2, 1, 3, 3), np.float32)
    conv = ConvOptions(stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1)
    close(B.conv2d(x, w, None, conv), F.conv2d(tt(x), tt(w), padding=1))
    pool = PoolOptions(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1))
    close(B.max_pool2d(x, pool), F.max_pool2d(tt(x), 2))
    close(B.avg_pool2d(x, pool), F.avg_pool2d(tt(x), 2))
    close(B.adaptive_avg_pool2d(x, (2, 2)), F.adaptive_avg_pool2d(tt(x), (2, 2)))
    close(B.embedding(X, np.zeros((0,), np.int64)), torch.zeros(0, 4))


# ----- completeness -----------------------------------------------------------------------------

#: ops this file exercises through the tables and tests above
COVERED = (
    set(UNARY) | set(BINARY) | set(SCALAR) | set(REDUCE_DIM) | set(WHOLE) | NEEDS_ELEMENTS
    | {"leaky_relu", "relu_backward", "sigmoid_backward", "gelu_backward", "float_remainder_scalar",
       "float_clamp", "float_clamp_min", "float_clamp_max", "float_mask_where", "float_mask_fill",
       "softmax", "log_softmax", "float_matmul", "float_reshape", "float_swap_dims", "float_permute",
       "float_flip", "float_transpose", "float_expand", "float_slice", "float_slice_assign",
       "float_cat", "float_repeat_dim", "float_gather", "float_scatter", "float_select",
       "float_select_assign", "int_gather", "int_scatter", "int_select", "int_select_assign",
       "int_div", "int_remainder", "int_max_dim", "int_min_dim", "int_argmax", "int_argmin",
       "int_sum", "int_sum_dim", "int_add", "int_cat", "int_repeat_dim", "bool_not", "bool_any",
       "bool_all", "int_into_float", "embedding", "embedding_backward", "max_pool2d",
       "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d", "conv2d", "interpolate",
       "float_prod", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "max_pool1d",
       "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d_with_indices"}
)  # fmt: skip

#: ops with no edge value of their own, and why
EXEMPT = {
    "data, devices, seeds and autodiff hooks carry no values": (
        "float_from_data", "float_into_data", "float_random", "seed", "float_zeros", "float_ones",
        "float_full", "float_device", "float_to_device", "float_detach", "float_require_grad",
        "float_set_require_grad", "float_is_require_grad", "int_from_data", "int_into_data",
        "int_device", "int_to_device", "int_zeros", "int_arange", "int_random", "bool_from_data",
        "bool_into_data", "bool_device", "bool_to_device"),
    "casts: NaN and inf to int are undefined (Rust saturates, C and NumPy give INT_MIN)": (
        "float_cast", "float_into_int", "int_cast", "bool_into_int", "bool_into_float"),
    "ints and bools have no NaN or inf; empties and ranges are in test_int_bool_ops": (
        "int_sub", "int_mul", "int_add_scalar", "int_mul_scalar", "int_sub_scalar", "int_neg",
        "int_abs", "int_equal", "int_greater", "int_lower", "int_equal_elem", "int_greater_elem",
        "int_lower_elem", "int_reshape", "int_swap_dims", "int_permute", "int_flip", "int_expand",
        "int_slice", "int_slice_assign", "int_mask_where", "int_mask_fill", "bool_and", "bool_or",
        "bool_equal", "bool_xor", "bool_reshape", "bool_swap_dims", "bool_permute", "bool_flip",
        "bool_expand", "bool_slice", "bool_cat"),
    "backward helpers and compositions of ops covered here (their own suites compare them)": (
        "linear", "linear_x_backward", "linear_weight_backward", "linear_bias_backward",
        "conv2d_x_backward", "conv2d_weight_backward", "conv2d_bias_backward", "conv1d",
        "conv_transpose2d", "max_pool2d_with_indices_backward", "avg_pool2d_backward",
        "adaptive_avg_pool2d_backward", "interpolate_backward", "adaptive_max_pool2d_with_indices_backward",
        "max_pool1d_with_indices_backward", "avg_pool1d_backward", "adaptive_avg_pool1d_backward",
        "adaptive_max_pool1d_with_indices_backward", "layer_norm", "batch_norm",
        "batch_norm_train", "attention"),
}  # fmt: skip


def test_every_op_has_an_edge_case():
    exempt = {op for ops in EXEMPT.values() for op in ops}
    missing = [op for op in op_names(Backend) if op not in COVERED and op not in exempt]
    assert not missing, f"ops with no edge-value case here (add one, or a reason to EXEMPT): {missing}"
    stale = sorted((COVERED | exempt) - set(op_names(Backend)))
    assert not stale, f"names here that are not ops of the protocol: {stale}"
