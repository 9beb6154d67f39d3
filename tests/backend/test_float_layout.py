"""Float layout ops against PyTorch: reshape, swap_dims, permute, flip, expand, slice (with
steps), slice_assign, cat, gather, scatter (adds), select, select_assign (adds), mask_where,
mask_fill, repeat_dim, transpose — on contiguous and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from .support import SETTINGS, as_layout, assert_close, layouts, randn, seeds, shapes, tt


def _dim(data, shape):
    return data.draw(st.integers(0, len(shape) - 1))


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_reshape_swap_permute_flip_match_torch(B, shape, seed, layout, data):
    x = randn(seed, shape)
    view, t = as_layout(x, layout), tt(x)
    flat = (int(np.prod(shape)),)
    assert_close(B.float_reshape(tensor=view, shape=flat), t.reshape(flat))
    assert_close(B.float_reshape(tensor=view, shape=shape[::-1]), t.reshape(shape[::-1]))
    d1, d2 = _dim(data, shape), _dim(data, shape)
    assert_close(B.float_swap_dims(tensor=view, dim1=d1, dim2=d2), t.transpose(d1, d2))
    axes = data.draw(st.permutations(range(len(shape))))
    assert_close(B.float_permute(tensor=view, axes=axes), t.permute(*axes))
    flip = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    assert_close(B.float_flip(tensor=view, axes=flip), t.flip(flip) if flip else t)
    if len(shape) >= 2:
        assert_close(B.float_transpose(tensor=view), t.transpose(-2, -1))


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_expand_grows_size_one_dims_and_adds_leading_dims(B, shape, seed, data):
    small = tuple(n if data.draw(st.booleans()) else 1 for n in shape)
    target = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2))) + shape
    x = randn(seed, small)
    assert_close(B.float_expand(tensor=x, shape=target), tt(x).expand(*target))


@st.composite
def slicings(draw, shape):
    """One ``slice`` with a positive step for each of the leading dims of ``shape``."""
    out = []
    for n in shape[: draw(st.integers(1, len(shape)))]:
        start = draw(st.integers(0, n))
        stop = draw(st.integers(start, n))
        out.append(slice(start, stop, draw(st.integers(1, 3))))
    return out


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_slice_and_slice_assign_match_torch(B, shape, seed, layout, data):
    x = randn(seed, shape)
    slices = data.draw(slicings(shape))
    expected = tt(x)[tuple(slices)]
    assert_close(B.float_slice(tensor=as_layout(x, layout), slices=slices), expected)
    value = randn(seed + 1, tuple(expected.shape))
    out = B.float_slice_assign(tensor=as_layout(x, layout), slices=slices, value=value)
    t = tt(x).clone()
    t[tuple(slices)] = tt(value)
    assert_close(out, t)


def test_slice_assign_leaves_its_input_alone(B):
    x = randn(0, (3, 4))
    before = x.copy()
    B.float_slice_assign(tensor=x, slices=[slice(0, 2)], value=np.zeros((2, 4), np.float32))
    np.testing.assert_array_equal(x, before)


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data(), count=st.integers(1, 3))
def test_cat_matches_torch(B, shape, seed, data, count):
    dim = _dim(data, shape)
    parts = []
    for i in range(count):
        part_shape = list(shape)
        part_shape[dim] = data.draw(st.integers(0, 3))
        parts.append(randn(seed + i, tuple(part_shape)))
    assert_close(B.float_cat(tensors=parts, dim=dim), torch.cat([tt(p) for p in parts], dim))
    times = data.draw(st.integers(1, 3))
    assert_close(B.float_repeat_dim(tensor=parts[0], dim=dim, times=times),
                 torch.cat([tt(parts[0])] * times, dim))


@st.composite
def index_case(draw, shape):
    """(dim, indices) for gather/scatter: same rank as ``shape``, each dim at most as long
    (torch allows a smaller index), values in range along ``dim``."""
    dim = draw(st.integers(0, len(shape) - 1))
    index_shape = tuple(draw(st.integers(1, n)) if d != dim else draw(st.integers(0, 6)) for d, n in enumerate(shape))
    seed = draw(seeds)
    indices = np.random.default_rng(seed).integers(0, shape[dim], index_shape).astype(np.int64)
    return dim, indices


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_gather_matches_torch(B, shape, seed, layout, data):
    dim, indices = data.draw(index_case(shape))
    x = randn(seed, shape)
    out = B.float_gather(dim=dim, tensor=as_layout(x, layout), indices=as_layout(indices, layout))
    assert_close(out, torch.gather(tt(x), dim, tt(indices)))


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_scatter_adds_like_torch_scatter_add(B, shape, seed, data):
    dim, indices = data.draw(index_case(shape))
    x, value = randn(seed, shape), randn(seed + 1, indices.shape)
    out = B.float_scatter(dim=dim, tensor=x, indices=indices, value=value)
    assert_close(out, tt(x).scatter_add(dim, tt(indices), tt(value)), atol=1e-5)


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_select_and_select_assign_match_torch(B, shape, seed, layout, data):
    dim = _dim(data, shape)
    indices = np.array(data.draw(st.lists(st.integers(0, shape[dim] - 1), max_size=6)), dtype=np.int64)
    x = randn(seed, shape)
    expected = torch.index_select(tt(x), dim, tt(indices))
    assert_close(B.float_select(tensor=as_layout(x, layout), dim=dim, indices=indices), expected)
    value = randn(seed + 1, tuple(expected.shape))
    out = B.float_select_assign(tensor=as_layout(x, layout), dim=dim, indices=indices, value=value)
    # repeated indices accumulate, as torch's index_add
    assert_close(out, tt(x).index_add(dim, tt(indices), tt(value)), atol=1e-5)


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts, data=st.data())
def test_mask_where_and_mask_fill_match_torch(B, shape, seed, layout, data):
    mask_shape = tuple(n if data.draw(st.booleans()) else 1 for n in shape)
    mask = np.random.default_rng(seed).random(mask_shape) < 0.5
    x, value = randn(seed, shape), randn(seed + 1, shape)
    out = B.float_mask_where(tensor=as_layout(x, layout), mask=mask, value=as_layout(value, layout))
    assert_close(out, torch.where(tt(mask), tt(value), tt(x)))
    fill = data.draw(st.sampled_from([0.0, -1.5, float("-inf")]))
    assert_close(B.float_mask_fill(tensor=as_layout(x, layout), mask=mask, value=fill),
                 tt(x).masked_fill(tt(mask), fill))


def test_layout_ops_keep_float16(B):
    x = randn(0, (2, 3), np.float16)
    idx = np.array([[0, 1, 1]], dtype=np.int64)
    assert B.float_cat(tensors=[x, x], dim=0).dtype == np.float16
    assert B.float_scatter(dim=0, tensor=x, indices=idx, value=x[:1]).dtype == np.float16
    assert B.float_select_assign(tensor=x, dim=1, indices=np.array([0, 0]), value=x[:, :2]).dtype == np.float16
    assert B.float_mask_fill(tensor=x, mask=x > 0, value=-1.0).dtype == np.float16
    assert B.float_mask_where(tensor=x, mask=x > 0, value=x.astype(np.float32)).dtype == np.float16
