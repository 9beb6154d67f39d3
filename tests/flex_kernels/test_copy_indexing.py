"""Copies (contiguous, cast, copy_into, cat, full) and index kernels against NumPy/torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.backends.flex.kernels import copy, indexing


def test_contiguous_copies_any_view_and_keeps_contiguous_arrays(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert copy.contiguous(x) is x
    views = [x.transpose(0, 2, 1, 3), x[:, ::2], x[..., ::-1], x.transpose(3, 1, 0, 2),
             np.broadcast_to(x[:, :1], x.shape), rng.standard_normal((300, 500)).T]  # fmt: skip
    for v in views:
        got = copy.contiguous(v)
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, v)


def test_cast_truncates_and_always_copies():
    x = np.array([1.7, -1.7, 0.0, 2.5], np.float32)
    np.testing.assert_array_equal(copy.cast(x, np.int64), [1, -1, 0, 2])
    np.testing.assert_array_equal(copy.cast(x, np.bool_), [True, True, False, True])
    same = copy.cast(x, np.float32)
    assert same is not x and np.array_equal(same, x)
    assert copy.cast(x, np.float16).dtype == np.float16


def test_copy_into_broadcasts_into_strided_destination():
    out = np.zeros((4, 6), np.float32)
    copy.copy_into(np.arange(3, dtype=np.float32), out[1:3, ::2])
    expected = np.zeros((4, 6), np.float32)
    expected[1:3, ::2] = np.arange(3)
    np.testing.assert_array_equal(out, expected)


def test_cat_and_full(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(copy.cat([x, x[:, :1]], 1), np.concatenate([x, x[:, :1]], 1))
    assert copy.cat([x[0], x[1]], -1, np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="shapes differ outside dim 0"):
        copy.cat([x, x[:, :2]], 0)
    np.testing.assert_array_equal(copy.full((2, 3), 7, np.int32), np.full((2, 3), 7))
    np.testing.assert_array_equal(copy.full((100_000,), 1.5, np.float32), 1.5)
    assert copy.full((3,), 1.5, np.float16).dtype == np.float16


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_scatter_select_match_torch(rng, dim):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    xt = torch.from_numpy(x)
    shape = list(x.shape)
    shape[dim] = 6
    idx = rng.integers(0, x.shape[dim], shape)
    it = torch.from_numpy(idx)
    np.testing.assert_array_equal(indexing.gather(dim, x, idx), torch.gather(xt, dim, it).numpy())
    v = rng.standard_normal(shape).astype(np.float32)
    ref = xt.scatter_add(dim, it, torch.from_numpy(v)).numpy()
    np.testing.assert_allclose(indexing.scatter_add(dim, x, idx, v), ref, rtol=1e-6, atol=1e-6)
    sel = rng.integers(0, x.shape[dim], 7)
    ref = torch.index_select(xt, dim, torch.from_numpy(sel)).numpy()
    np.testing.assert_array_equal(indexing.select(x, dim, sel), ref)
    shape[dim] = 7
    v = rng.standard_normal(shape).astype(np.float32)
    ref = xt.index_add(dim, torch.from_numpy(sel), torch.from_numpy(v)).numpy()
    np.testing.assert_allclose(indexing.select_add(x, dim, sel, v), ref, rtol=1e-6, atol=1e-6)


def test_embedding_and_its_backward(rng):
    w = rng.standard_normal((10, 4)).astype(np.float32)
    ids = rng.integers(0, 10, (2, 3))
    np.testing.assert_array_equal(indexing.embedding(w, ids), w[ids])
    g = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ref = np.zeros_like(w)
    np.add.at(ref, ids.reshape(-1), g.reshape(-1, 4))
    np.testing.assert_allclose(indexing.embedding_backward(w.shape, ids, g), ref, rtol=1e-6)
    big = rng.standard_normal((50_000, 8)).astype(np.float32)
    rows = rng.integers(0, 50_000, 30_000)
    np.testing.assert_array_equal(indexing.select(big, 0, rows), big[rows])


def test_out_of_range_indices_raise_instead_of_reading_memory():
    with pytest.raises(IndexError, match=r"index out of range \[0, 3\)"):
        indexing.gather(0, np.zeros((3, 2)), np.full((3, 2), 9))
    with pytest.raises(IndexError):
        indexing.select(np.zeros((3, 2)), 0, np.array([-1]))
