"""The short paths of Flex's small ops (the MLP step's: ReLU's backward, bias adds, short-row
max with indices, gather/scatter with one index per row, tiny fills and expands) against torch
and against the general paths they stand in for: same values, dtypes, NaN/inf/-0.0 and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.backends.flex import Flex
from minidl.backends.flex.kernels import unary as un

from .helpers import FLOATS

SPECIAL = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0, 1e-45, -1e-45], np.float32)


def _relu_grad_torch(output: np.ndarray, grad: np.ndarray) -> np.ndarray:
    # torch's threshold_backward: grad where output > 0 ... exactly: zero where output <= 0
    return torch.where(torch.from_numpy(output) <= 0, 0.0, torch.from_numpy(grad)).numpy()


def _default_relu_backward(output, grad):
    return Flex.float_mask_fill(grad, Flex.float_lower_equal_elem(output, 0.0), 0.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(0,), (9,), (3, 3), (128, 256), (300, 257)])  # 300x257: parallel
def test_relu_backward_one_pass_matches_the_default_and_torch(dtype, shape):
    rng = np.random.default_rng(1)
    n = int(np.prod(shape))
    output = np.resize(SPECIAL, n).astype(dtype)
    rng.shuffle(output)
    output = output.reshape(shape)
    grad = rng.standard_normal(shape).astype(dtype)
    grad.flat[: min(n, 4)] = [np.nan, np.inf, -0.0, -np.inf][: min(n, 4)]
    got = Flex.relu_backward(output, grad)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(got, _default_relu_backward(output, grad))
    np.testing.assert_array_equal(got, _relu_grad_torch(output, grad))
    # a NaN output lets the gradient through; -0.0 and 0 zero it (with +0.0)
    if n >= len(SPECIAL):
        o = SPECIAL.astype(dtype)
        g = np.full(o.shape, -3.0, dtype)
        r = Flex.relu_backward(o, g)
        np.testing.assert_array_equal(r, np.where(o <= 0, 0.0, -3.0).astype(dtype))
        assert not np.signbit(r[o <= 0]).any()


def test_relu_backward_other_layouts_and_dtypes_take_the_default():
    rng = np.random.default_rng(2)
    output = rng.standard_normal((8, 6)).astype(np.float32)
    grad = rng.standard_normal((8, 6)).astype(np.float32)
    for o, g in [(output.T, grad.T), (output[:, ::2], grad[:, ::2]), (output, grad[:1]),
                 (output.astype(np.float16), grad.astype(np.float16)), (output.astype(np.float64), grad)]:
        assert un.relu_backward(o, g) is None  # not the one-pass case
        got = Flex.relu_backward(o, g)
        np.testing.assert_array_equal(got, _default_relu_backward(o, g))
        assert got.dtype == g.dtype


def _rows_with_specials(shape, dtype, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(dtype)  # many ties
    flat = x.reshape(-1)
    for k, v in enumerate([np.nan, -0.0, np.inf, -np.inf, np.nan]):
        flat[(k * 37) % flat.size] = v
    return x


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1,), (128, 10), (4, 3, 7), (5, 1), (300, 260)])  # last: parallel
def test_max_min_with_indices_one_pass_matches_torch(dtype, shape):
    x = _rows_with_specials(shape, dtype)
    if x.ndim > 1 and shape[-1] > 1:
        x[0, ...] = 0.0
        x[0, ..., 1] = -0.0  # a tie of 0.0 and -0.0: the first one is kept, and its sign
    t = torch.from_numpy(x)
    for ours, theirs in [(Flex.float_max_dim_with_indices, torch.max), (Flex.float_min_dim_with_indices, torch.min)]:
        vals, idx = ours(x, -1)
        ref_v, ref_i = theirs(t, -1, keepdim=True)
        assert vals.dtype == dtype and idx.dtype == np.int64 and vals.shape == ref_v.shape
        np.testing.assert_array_equal(vals, ref_v.numpy())
        np.testing.assert_array_equal(idx, np.argmax(x, -1, keepdims=True) if theirs is torch.max
                                      else np.argmin(x, -1, keepdims=True))
        np.testing.assert_array_equal(np.signbit(vals), np.signbit(np.take_along_axis(x, idx, -1)))
        # the general path (another dim, or a strided view) agrees with the one-pass one
        gv, gi = ours(np.ascontiguousarray(np.moveaxis(x, -1, 0)), 0)
        np.testing.assert_array_equal(np.moveaxis(gi, 0, -1), idx)
        np.testing.assert_array_equal(np.moveaxis(gv, 0, -1), vals)


def test_with_indices_edge_cases_keep_their_errors():
    with pytest.raises(ValueError):
        Flex.float_max_dim_with_indices(np.zeros((3, 0), np.float32), 1)
    vals, idx = Flex.float_max_dim_with_indices(np.zeros((0, 4), np.float32), 1)
    assert vals.shape == idx.shape == (0, 1)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((128, 10), 1), ((128, 256), 0), ((128, 1), None), ((4, 5, 6), 1),
                                       ((4, 5, 6), -1), ((7,), 0), ((3, 0), 0), ((1, 1), None)])
def test_small_sums_and_means_match_the_general_path(dtype, shape, dim):
    from minidl.backends.flex.kernels import reduce as r

    x = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    if x.size:
        x.flat[x.size // 2] = np.inf
    for fn, ref in [(r.sum, torch.sum), (r.mean, torch.mean)]:
        got = fn(x, dim)
        t = torch.from_numpy(x)
        want = (ref(t).reshape(1) if dim is None else ref(t, dim, keepdim=True)).numpy()
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
        big = np.ascontiguousarray(x.T).T  # a strided view: the general path
        np.testing.assert_allclose(fn(big, dim), got, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [*FLOATS, np.float16])
@pytest.mark.parametrize("shape,dim,m", [((128, 10), 1, 1), ((128, 10), -1, 3), ((6, 4, 5), 1, 7),
                                         ((6, 4, 5), 0, 2), ((5,), 0, 9)])
def test_gather_and_scatter_whole_tensor_match_torch(dtype, shape, dim, m):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[0] = np.nan
    d = dim % len(shape)
    ishape = shape[:d] + (m,) + shape[d + 1 :]
    idx = rng.integers(0, shape[d], ishape).astype(np.int64)  # repeats: the scatter accumulates
    value = rng.standard_normal(ishape).astype(dtype)
    value.flat[-1] = np.inf
    tx, ti, tv = (torch.from_numpy(a) for a in (x.astype(np.float64), idx, value.astype(np.float64)))
    got = Flex.float_gather(dim, x, idx)
    assert got.dtype == dtype and got.shape == ishape
    np.testing.assert_array_equal(got, torch.gather(tx, dim, ti).numpy().astype(dtype))
    got = Flex.float_scatter(dim, x, idx, value)
    assert got.dtype == dtype and got.shape == shape
    want = torch.scatter_add(tx, dim, ti, tv).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 1e-5, atol=1e-6)
    # int32 indices and a strided tensor reach the same result
    np.testing.assert_array_equal(Flex.float_gather(dim, np.asfortranarray(x), idx.astype(np.int32)),
                                  Flex.float_gather(dim, x, idx))
    np.testing.assert_array_equal(Flex.float_scatter(dim, np.asfortranarray(x), idx.astype(np.int32), value),
                                  Flex.float_scatter(dim, x, idx, value))


@pytest.mark.parametrize("bad", [-1, 10])
def test_gather_and_scatter_refuse_bad_indices_and_leave_the_input_alone(bad):
    x = np.arange(40, dtype=np.float32).reshape(4, 10)
    before = x.copy()
    idx = np.zeros((4, 1), np.int64)
    idx[2, 0] = bad
    with pytest.raises(IndexError, match=r"gather: index out of range \[0, 10\)"):
        Flex.float_gather(1, x, idx)
    with pytest.raises(IndexError, match=r"scatter: index out of range \[0, 10\)"):
        Flex.float_scatter(1, x, idx, np.ones((4, 1), np.float32))
    np.testing.assert_array_equal(x, before)


def test_gather_and_scatter_with_cropping_indices_keep_the_region_path():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    idx = rng.integers(0, 6, (3, 2)).astype(np.int64)  # rows 0..2 only
    value = rng.standard_normal((4, 3)).astype(np.float32)  # larger than idx: cropped
    tx, ti = torch.from_numpy(x), torch.from_numpy(idx)
    np.testing.assert_array_equal(Flex.float_gather(1, x, idx), torch.gather(tx, 1, ti).numpy())
    want = torch.scatter_add(tx, 1, ti, torch.from_numpy(value[:3, :2].copy())).numpy()
    np.testing.assert_allclose(Flex.float_scatter(1, x, idx, value), want, rtol=1e-6)


@pytest.mark.parametrize("small,target", [((1, 1), (128, 1)), ((128, 1), (128, 10)), ((3,), (2, 4, 3)),
                                          ((2, 1, 3), (5, 2, 4, 3)), ((1,), (0,)), ((2, 1), (2, 1)),
                                          ((1, 0), (4, 0))])
def test_expand_builds_the_broadcast_view_from_the_strides(small, target):
    x = np.arange(int(np.prod(small)), dtype=np.float32).reshape(small)
    got = Flex.float_expand(x, target)
    want = np.broadcast_to(x, target)
    assert got.shape == want.shape and got.strides == want.strides and got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)
    assert not got.flags.writeable and (not got.size or np.shares_memory(got, x))
    np.testing.assert_array_equal(Flex.float_expand(x.astype(np.float64), target), want)


def test_expand_errors_and_strided_inputs_are_np_broadcast_to():
    x = np.ones((3, 2), np.float32)
    for bad in [(3, 4), (2,), (3, -1)]:
        with pytest.raises(ValueError):
            Flex.float_expand(x, bad)
    inner = np.arange(20, dtype=np.float32).reshape(4, 5)[2:3]  # C-contiguous, not at the start
    np.testing.assert_array_equal(Flex.float_expand(inner, (3, 5)), np.broadcast_to(inner, (3, 5)))
    readonly = np.frombuffer(np.arange(3, dtype=np.float32).tobytes(), np.float32).reshape(3, 1)
    np.testing.assert_array_equal(Flex.float_expand(readonly, (3, 2)), np.broadcast_to(readonly, (3, 2)))
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::4]  # [3, 1], stride 16
    np.testing.assert_array_equal(Flex.float_expand(strided, (2, 3, 5)), np.broadcast_to(strided, (2, 3, 5)))


@pytest.mark.parametrize("dtype", [*FLOATS, np.float16, np.int32, np.int64])
def test_fills_of_every_size_and_dtype(dtype):
    from minidl.backend import DType

    dt = DType.of(np.dtype(dtype))
    dev = Flex.float_device(np.zeros(1, np.float32))
    for shape in [(), (1,), (3, 4), (0, 2), (300, 300)]:
        for op, v in [(Flex.float_ones, 1), (Flex.float_zeros, 0)]:
            got = op(shape, dt, dev)
            assert got.shape == shape and got.dtype == dtype
            np.testing.assert_array_equal(got, np.full(shape, v, dtype))
    got = Flex.float_full((2, 3), np.nan, DType.of(np.dtype(np.float32)), dev)
    assert np.isnan(got).all()
    assert not np.signbit(Flex.float_zeros((), DType.of(np.dtype(np.float32)), dev))


@pytest.mark.parametrize("dtype", [*FLOATS, np.int32, np.int64])
@pytest.mark.parametrize("ashape,bshape", [((128, 10), (1, 10)), ((128, 256), (1, 256)), ((128, 10), (128, 1)),
                                           ((1, 7), (1, 1)), ((7, 1), (1, 1)), ((5, 3), (5, 1)), ((1, 3), (1, 3)),
                                           ((300, 300), (1, 300)), ((1, 1), (1, 5)), ((4, 1), (1, 6))])
def test_row_and_column_broadcasts_match_the_general_kernel(dtype, ashape, bshape):
    from minidl.backends.flex.kernels import broadcast as bc

    rng = np.random.default_rng(7)
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(ashape).astype(dtype)
        b = rng.standard_normal(bshape).astype(dtype)
        a.flat[0], b.flat[0] = np.nan, np.inf
    else:
        a = rng.integers(-9, 9, ashape).astype(dtype)
        b = rng.integers(-9, 9, bshape).astype(dtype)
        b[b == 0] = 3
    for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
        got = bc.binary(op, a, b)
        shape = np.broadcast_shapes(ashape, bshape)
        want = np.empty(shape, dtype)
        bc.binary_serial(np.broadcast_to(a, shape)[None], np.broadcast_to(b, shape)[None], want[None],
                         bc.BINARY_OPS[op])
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_array_equal(got, want)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(bc.binary("maximum", a, b), np.maximum(a, b))


@pytest.mark.parametrize("dtype", [*FLOATS, np.int32, np.int64])
def test_large_array_scalar_ops_match_numpy(dtype):
    from minidl.backends.flex.kernels import broadcast as bc

    rng = np.random.default_rng(8)
    a = (rng.standard_normal((784, 256)) * 10).astype(dtype)  # parallel: >= 64K elements
    if np.dtype(dtype).kind == "f":
        a.flat[:3] = [np.nan, np.inf, -0.0]
    for view in (a, a.T):  # C-contiguous: the flat parallel kernel; a transposed view: the general path
        for op, ref in [("mul", np.multiply), ("sub", np.subtract), ("add", np.add), ("maximum", np.maximum)]:
            got = bc.binary(op, view, 3)
            assert got.dtype == dtype and got.shape == view.shape
            np.testing.assert_array_equal(got, ref(view, np.dtype(dtype).type(3)))
    got = Flex.float_mul_scalar(a.astype(np.float32), 0.01)
    np.testing.assert_array_equal(got, a.astype(np.float32) * np.float32(0.01))


def test_reshape_of_contiguous_views_and_its_errors():
    x = np.arange(12, dtype=np.float32)
    for shape in [(3, 4), (1, 12), (2, -1)]:
        got = Flex.float_reshape(x, shape)
        assert np.shares_memory(got, x) and got.shape == x.reshape(shape).shape
    for bad in [(5,), (-1, -1)]:
        with pytest.raises(ValueError, match=r"reshape: cannot reshape \(12,\)"):
            Flex.float_reshape(x, bad)
        with pytest.raises(ValueError, match=r"reshape: cannot reshape"):
            Flex.float_reshape(x.reshape(3, 4).T, bad)
    np.testing.assert_array_equal(Flex.float_reshape(x.reshape(3, 4).T, (12,)), x.reshape(3, 4).T.reshape(12))


def test_mean_of_a_small_tensor_counts_a_negative_dim_from_the_end():
    from minidl.backends.flex.kernels import reduce as r

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(r.mean(x, -1), x.mean(-1, keepdims=True))
    np.testing.assert_array_equal(r.mean(x, -2), x.mean(-2, keepdims=True))


def test_a_large_same_shape_result_starts_on_a_cache_line():
    # the optimizer's `w - lr * g` becomes the next weight, which the gemm reads in place
    from minidl.backends.flex.kernels import broadcast
    from minidl.backends.flex.kernels._common import PARALLEL_MIN_ELEMS

    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((PARALLEL_MIN_ELEMS // 64, 64)).astype(dtype)
        b = rng.standard_normal(a.shape).astype(dtype)
        out = broadcast.binary("sub", a, b)
        assert out.__array_interface__["data"][0] % 64 == 0
        assert out.shape == a.shape and out.dtype == a.dtype and out.flags.c_contiguous
        np.testing.assert_array_equal(out, a - b)


def _general(op, a, b):
    # the general path of broadcast.binary: 3-D views and the row kernels
    from minidl.backends.flex.kernels import broadcast
    from minidl.backends.flex.kernels.operands import as_operand, run3, shape_of

    av, bv = as_operand(a, a.dtype), as_operand(b, a.dtype)
    out = np.empty(shape_of(av, bv), a.dtype)
    run3(broadcast.binary_serial, broadcast.binary_parallel, [av, bv], out, broadcast.BINARY_OPS[op])
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,stat", [
    ((32, 8, 8, 8), (1, 8, 1, 1)), ((32, 8, 8, 8), (32, 8, 8, 1)), ((32, 8, 8, 8), (32, 8, 1, 1)),
    ((32, 16, 4, 4), (1, 16, 1, 1)), ((6, 5), (1, 5)), ((6, 5), (6, 1)), ((2, 3, 4), (1, 3, 4)),
    ((2, 3, 4), (1, 1, 4)), ((3, 4, 5, 2), (1, 1, 5, 2)), ((2, 3, 4, 5, 6), (1, 3, 1, 1, 1)),
])
def test_small_statistic_broadcasts_equal_the_general_path_to_the_bit(rng, shape, stat, dtype):
    from minidl.backends.flex.kernels import broadcast

    big = rng.standard_normal(shape).astype(dtype)
    small = rng.standard_normal(stat).astype(dtype) + 0.5
    big.reshape(-1)[::13] = np.nan
    expanded = np.broadcast_to(small, shape)  # an expand() view: stride 0 where stat is 1
    for op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum"):
        for a, b in ((big, small), (small, big), (big, expanded), (expanded, big)):
            got = broadcast.binary(op, a, b)
            want = _general(op, np.ascontiguousarray(a) if a is expanded else a,
                            np.ascontiguousarray(b) if b is expanded else b)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {a.shape} {b.shape}")
