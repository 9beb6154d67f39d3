"""layer_norm, softmax and log_softmax against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backends.flex.kernels import norm, softmax

from .helpers import assert_close


# (4096 // 16, 1024), (5, 3, 192) and (7, 64): rows a multiple of norm_simd.CHUNK (its SIMD rows,
# parallel and serial); the others take the loop-vectorized kernel.
@pytest.mark.parametrize(
    "shape", [(1, 1), (3, 5), (2, 3, 7), (4096 // 16, 1024), (5, 3, 192), (7, 64), (10,)]
)
@pytest.mark.parametrize("affine", ["both", "gamma", "beta", "none"])
def test_layer_norm_matches_torch(rng, shape, affine):
    d = shape[-1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(d).astype(np.float32) if affine in ("both", "gamma") else None
    b = rng.standard_normal(d).astype(np.float32) if affine in ("both", "beta") else None
    t = lambda v: None if v is None else torch.from_numpy(v).double()  # noqa: E731
    ref = F.layer_norm(t(x), (d,), t(g), t(b), 1e-5).numpy()
    assert_close(norm.layer_norm(x, g, b, 1e-5), ref, np.float32, d)


def test_layer_norm_float64_float16_and_constant_rows(rng):
    x = rng.standard_normal((5, 33))
    ref = F.layer_norm(torch.from_numpy(x), (33,)).numpy()
    np.testing.assert_allclose(norm.layer_norm(x), ref, rtol=1e-10, atol=1e-12)
    h = norm.layer_norm(x.astype(np.float16))
    assert h.dtype == np.float16
    np.testing.assert_array_equal(norm.layer_norm(np.ones((2, 4), np.float32)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"gamma must have shape \(33,\)"):
        norm.layer_norm(x, np.ones(3))


def test_layer_norm_float32_keeps_nan_rows_and_large_offsets(rng):
    # Computed in float32 throughout (no float64 promotion): the two-pass variance still holds
    # for rows far from zero, and a NaN / inf poisons its own row only (no nnan/ninf fastmath).
    x = (rng.standard_normal((300, 1024)) + 1e3).astype(np.float32)
    ref = F.layer_norm(torch.from_numpy(x).double(), (1024,)).numpy()
    x[7, 3], x[9, 0] = np.nan, np.inf
    y = norm.layer_norm(x)
    assert y.dtype == np.float32
    assert np.isnan(y[7]).all() and np.isnan(y[9]).all()
    keep = np.ones(300, bool)
    keep[[7, 9]] = False
    np.testing.assert_allclose(y[keep], ref[keep], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    "shape,dim", [((5, 7), -1), ((3, 4, 5), 1), ((3, 4, 5), 0), ((300, 400), 0), ((300, 400), 1), ((7,), 0), ((2, 1, 3), 1)]
)
def test_softmax_and_log_softmax_match_torch_along_any_dim(rng, shape, dim):
    x = (rng.standard_normal(shape) * 5).astype(np.float32)
    xt = torch.from_numpy(x).double()
    assert_close(softmax.softmax(x, dim), torch.softmax(xt, dim).numpy(), np.float32, 1)
    assert_close(softmax.log_softmax(x, dim), torch.log_softmax(xt, dim).numpy(), np.float32, 4)


@settings(deadline=None, max_examples=15)
@given(rows=st.integers(1, 20), n=st.integers(1, 40), scale=st.sampled_from([1.0, 30.0, 200.0]), seed=st.integers(0, 2**31))
def test_softmax_is_stable_for_large_inputs(rows, n, scale, seed):
    x = np.random.default_rng(seed).standard_normal((rows, n)) * scale
    got = softmax.softmax(x)
    np.testing.assert_allclose(got, torch.softmax(torch.from_numpy(x), -1).numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-12)


def test_softmax_infinities_and_nans_behave_as_torch():
    x = np.array([[1, np.inf, 2], [-np.inf] * 3, [1, np.nan, 3], [0, -np.inf, 0]], np.float32)
    ref = torch.softmax(torch.from_numpy(x), -1).numpy()
    np.testing.assert_array_equal(np.isnan(softmax.softmax(x)), np.isnan(ref))
    np.testing.assert_allclose(softmax.softmax(x)[3], ref[3])
