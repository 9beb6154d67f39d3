"""Slicing (burn ranges and Python indexing), slice_assign, gather, scatter (adds), select,
select_assign (adds), mask_where, mask_fill, pad."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from minidl import Tensor, TensorCheckError, TensorKindError

from .support import SETTINGS, T, close, ints, randn, tt


def test_slice_with_burn_ranges(device):
    a = randn((4, 5, 6), 41)
    x = T(a, device)
    close(x.slice([(1, 3)]), a[1:3])
    close(x.slice([None, (1, -1), 2]), a[:, 1:-1, 2:3])  # an int keeps its dim (burn)
    close(x.slice([range(0, 4, 2), None, (0, 6, 3)]), a[0:4:2, :, 0:6:3])
    close(x.slice([(0, 4, -1)]), a[::-1])  # a reversed range, as burn's s![..;-1]
    close(x.slice([(1, 4, -2)]), a[1:4][::-2])
    close(x.slice([slice(None, None, -2)]), a[::-2])


def test_slice_errors_name_the_range(plain):
    x = T(randn((4, 5)), plain)
    with pytest.raises(TensorCheckError) as err:
        x.slice([None, (2, 7)])
    text = str(err.value)
    assert "Operation: 'slice'" in text and "end <= 5 for dim 1" in text and "2..7" in text
    with pytest.raises(TensorCheckError, match="more dims than the tensor"):
        x.slice([None, None, None])
    with pytest.raises(TensorCheckError, match="index exceeds"):
        x.slice([4])


def test_getitem_follows_python(device):
    a = randn((4, 5, 6), 42)
    x, ta = T(a, device), tt(a)
    for key in [
        1, -1, (slice(1, 3), slice(None), slice(None, None, 2)), (Ellipsis, 2), (None, 1, Ellipsis, None),
        (slice(None, None, -1), 0), (slice(-100, 100), slice(4, 1, -2)), (Ellipsis,), (slice(3, 1),),
    ]:
        close(x[key], a[key])
    close(x[1:3, :, ::2], ta[1:3, :, ::2])
    idx = T(np.array([3, 0, 3]), device)
    close(x[idx], ta[torch.tensor([3, 0, 3])])
    close(x[:, T(np.array([[1, 2], [0, 4]]), device)], ta[:, torch.tensor([[1, 2], [0, 4]])])


def test_getitem_errors_and_iteration(plain):
    x = T(randn((2, 3)), plain)
    with pytest.raises(IndexError, match="out of range for dim 0 of size 2"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0
    rows = list(x)
    assert len(rows) == 2 and rows[1].shape == (3,)


@SETTINGS
@given(data=st.data())
def test_python_slices_match_numpy(plain, data):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    a = randn(shape, 43)
    key = tuple(
        slice(data.draw(st.none() | st.integers(-6, 6)), data.draw(st.none() | st.integers(-6, 6)),
              data.draw(st.none() | st.sampled_from([1, 2, 3, -1, -2])))
        for _ in shape
    )
    close(T(a, plain)[key], a[key])


def test_slice_assign_and_fill(device):
    a, v = randn((4, 5), 44), randn((2, 3), 45)
    x = T(a, device)
    out = x.slice_assign([(1, 3), (0, 5, 2)], T(v, device))
    expected = a.copy()
    expected[1:3, 0:5:2] = v
    close(out, expected)
    close(x, a)  # the original is unchanged: tensors are immutable
    reversed_ = x.slice_assign([(0, 2, -1)], T(a[:2], device))
    expected = a.copy()
    expected[0:2][::-1] = a[:2]
    close(reversed_, expected)
    row = x.slice_assign([(0, 2)], T(np.ones((1, 5), np.float32), device))  # broadcast to the region
    expected = a.copy()
    expected[0:2] = 1.0
    close(row, expected)
    expected = a.copy()
    expected[:, 1:3] = -2.0
    close(x.slice_fill([None, (1, 3)], -2.0), expected)
    m = np.zeros((2, 3), bool)
    expected = m.copy()
    expected[0, 1:] = True
    close(T(m, device).slice_assign([0, (1, 3)], T(np.ones((1, 2), bool), device)), expected)


def test_slice_assign_error(plain):
    with pytest.raises(TensorCheckError, match="must match the region.*\\[2, 3\\].*\\[3, 3\\]"):
        T(randn((4, 5)), plain).slice_assign([(0, 2), (0, 3)], T(randn((3, 3)), plain))


def test_gather_scatter_select(device):
    a = randn((3, 4), 46)
    idx = ints((3, 2), 0, 4, 1)
    x, ta = T(a, device), tt(a)
    close(x.gather(1, T(idx, device)), torch.gather(ta, 1, tt(idx)))
    idx0 = ints((5, 4), 0, 3, 2)
    close(x.gather(-2, T(idx0, device)), torch.gather(ta, 0, tt(idx0)))
    values = randn((3, 2), 47)
    # burn's scatter ADDS (torch's scatter_add), repeated indices accumulate
    close(x.scatter(1, T(idx, device), T(values, device)), ta.scatter_add(1, tt(idx), tt(values)), atol=1e-6)
    sel = np.array([2, 0, 2])
    close(x.select(1, T(sel, device)), ta.index_select(1, tt(sel)))
    vals = randn((3, 3), 48)
    close(x.select_assign(1, T(sel, device), T(vals, device)), ta.index_add(1, tt(sel), tt(vals)), atol=1e-6)
    i = ints((3, 4), 0, 9)
    close(T(i, device).gather(1, T(idx, device)), np.take_along_axis(i, idx, 1))


def test_index_op_errors(plain):
    x = T(randn((3, 4)), plain)
    with pytest.raises(TensorKindError, match="indices must be an Int tensor"):
        x.gather(1, T(randn((3, 2)), plain))
    with pytest.raises(TensorCheckError, match="shape except at the gathered dim"):
        x.gather(1, T(ints((2, 2), 0, 4), plain))
    with pytest.raises(TensorCheckError, match="same shape"):
        x.scatter(1, T(ints((3, 2), 0, 4), plain), T(randn((3, 3)), plain))
    with pytest.raises(TensorCheckError, match="1 dim"):
        x.select(0, T(ints((2, 2), 0, 3), plain))
    with pytest.raises(TensorCheckError, match="Expected values of shape \\[3, 2\\]"):
        x.select_assign(1, T(np.array([0, 1]), plain), T(randn((3, 3)), plain))


def test_mask_where_and_mask_fill(device):
    a, b = randn((3, 4), 49), randn((4,), 50)
    mask = a > 0.2
    x = T(a, device)
    close(x.mask_where(T(mask, device), T(b, device)), torch.where(tt(mask), tt(b), tt(a)))
    close(x.mask_fill(T(mask[0], device), 9.0), np.where(mask[0], 9.0, a).astype(np.float32))
    i = ints((3, 4), -3, 3)
    close(T(i, device).mask_fill(T(mask, device), 7), np.where(mask, 7, i))
    m2 = T(np.array([True, False, True]), device)
    close(m2.mask_fill(T(np.array([True, True, False]), device), False), np.array([False, False, True]))


def test_mask_errors(plain):
    x = T(randn((3, 4)), plain)
    with pytest.raises(TensorKindError, match="mask must be a Bool tensor"):
        x.mask_fill(T(randn((3, 4)), plain), 0.0)
    with pytest.raises(TensorCheckError, match="does not broadcast to the tensor's shape"):
        x.mask_fill(T(np.ones((3, 3), bool), plain), 0.0)


def test_pad_follows_burn_left_right_top_bottom(device):
    a = randn((2, 3, 4), 51)
    out = T(a, device).pad((1, 2, 3, 0), 0.5)
    close(out, torch.nn.functional.pad(tt(a), (1, 2, 3, 0), value=0.5))
    close(T(a, device).pad((2, 0)), torch.nn.functional.pad(tt(a), (2, 0)))
    close(T(ints((2, 2), 0, 5), device).pad((1, 1, 1, 1), -1), np.pad(ints((2, 2), 0, 5), 1, constant_values=-1))


def test_pad_errors(plain):
    with pytest.raises(TensorCheckError, match="left, right, top, bottom"):
        T(randn((2, 2)), plain).pad((1, -1, 0, 0))
    with pytest.raises(TensorCheckError, match="at least 2 dims"):
        Tensor.ones([3], plain).pad((0, 0, 1, 1))


def test_getitem_rejects_a_bool_mask_with_a_hint(plain):
    x = T(randn((2, 3)), plain)
    with pytest.raises(TypeError, match="Int tensor.*mask_where"):
        x[x > 0]
