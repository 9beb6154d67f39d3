"""Data in and out, casts, devices and the seeded random streams of a backend."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given

from minidl.backend import Distribution, DType, TensorData

from .support import GPU_NAMES, SETTINGS, as_layout, assert_close, layouts, randn, seeds, shapes, tt

FLOATS = [DType.F16, DType.F32, DType.F64]


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_from_data_copies_and_into_data_returns_a_copy(B, device, dtype):
    data = randn(0, (2, 3), dtype.numpy)
    prim = B.float_from_data(data=data, device=device)
    data[0, 0] = 123.0  # the primitive must not see changes to the source
    out = B.float_into_data(tensor=prim)
    assert isinstance(out, TensorData)
    assert out.array.dtype == dtype.numpy and out.shape == (2, 3)
    assert out.array[0, 0] != 123.0
    out.array[0, 1] = 456.0  # nor changes to what was read back
    assert B.float_into_data(tensor=prim).array[0, 1] != 456.0


def test_from_data_refuses_the_wrong_kind_naming_the_dtype(B, device):
    with pytest.raises(TypeError, match="int64"):
        B.float_from_data(data=np.arange(3), device=device)
    with pytest.raises(TypeError, match="float32"):
        B.int_from_data(data=np.zeros(3, np.float32), device=device)
    with pytest.raises(TypeError, match="uint8"):
        B.int_from_data(data=np.zeros(3, np.uint8), device=device)
    with pytest.raises(TypeError, match="int64"):
        B.bool_from_data(data=np.arange(3), device=device)


def test_into_data_of_a_view_is_contiguous(B):
    x = as_layout(randn(0, (3, 4)), "flipped")
    out = B.float_into_data(tensor=x).array
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "flipped"])
@pytest.mark.parametrize("kind", ["float", "int", "bool"])
def test_into_data_of_every_kind_and_layout_is_a_contiguous_copy(B, kind, layout):
    values = {"float": randn(1, (3, 4)), "int": np.arange(12).reshape(3, 4),
              "bool": randn(1, (3, 4)) > 0}[kind]
    x = as_layout(values, layout)
    out = getattr(B, f"{kind}_into_data")(tensor=x).array
    assert type(out) is np.ndarray and out.flags.c_contiguous and out.dtype == x.dtype
    assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, values)


def test_into_data_of_an_array_subclass_is_a_plain_array(B):
    x = np.arange(6, dtype=np.int64).reshape(2, 3).view(np.recarray)  # not the ndarray fast path
    out = B.int_into_data(tensor=x).array
    assert type(out) is np.ndarray and out.flags.c_contiguous and not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("kind", ["float", "int", "bool"])
def test_reshape_of_every_kind_views_copies_and_refuses_as_numpy(B, kind):
    values = {"float": randn(2, (4, 6)), "int": np.arange(24).reshape(4, 6),
              "bool": randn(2, (4, 6)) > 0}[kind]
    reshape = getattr(B, f"{kind}_reshape")
    view = reshape(tensor=values, shape=[24, 1])  # a list shape too
    # a GPU view shares its device buffer (tests/gpu checks it), not the host array
    assert view.shape == (24, 1) and (B.name in GPU_NAMES or np.shares_memory(view, values))
    np.testing.assert_array_equal(view, values.reshape(24, 1))
    np.testing.assert_array_equal(reshape(tensor=values.T, shape=(24,)), values.T.reshape(24))
    np.testing.assert_array_equal(reshape(tensor=values, shape=(2, -1)), values.reshape(2, 12))
    with pytest.raises(ValueError):
        reshape(tensor=values, shape=(5, 5))


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("dst", FLOATS)
def test_float_cast_matches_torch(B, src, dst):
    x = randn(0, (4, 5), src.numpy, 10.0)
    torch_dtype = getattr(torch, dst.value)
    assert_close(B.float_cast(tensor=x, dtype=dst), tt(x).to(torch_dtype), rtol=0, atol=0)


@SETTINGS
@given(shape=shapes, seed=seeds, layout=layouts)
def test_float_into_int_truncates_toward_zero(B, shape, seed, layout):
    x = randn(seed, shape, scale=5.0)
    # the GPU devices hold no int64 (their refusal is tested on its own)
    for dtype in (DType.I32,) if B.name in GPU_NAMES else (DType.I32, DType.I64):
        out = B.float_into_int(tensor=as_layout(x, layout), dtype=dtype)
        assert_close(out, tt(x).to(getattr(torch, dtype.value)))  # torch truncates as well


def test_devices_are_the_backend_device(B, device):
    x = np.zeros((2,), np.float32)
    assert B.float_device(tensor=x) == device
    assert B.int_device(tensor=np.zeros(2, np.int64)) == device
    assert B.bool_device(tensor=np.zeros(2, bool)) == device
    assert B.float_device(tensor=x).kind == B.name
    np.testing.assert_array_equal(B.float_to_device(tensor=x, device=device), x)
    np.testing.assert_array_equal(B.int_to_device(tensor=np.arange(2), device=device), np.arange(2))
    np.testing.assert_array_equal(B.bool_to_device(tensor=x > 0, device=device), x > 0)


def test_to_device_refuses_another_backends_device(B):
    from minidl.dispatch import Device

    other = Device("flex" if B.name == "ndarray" else "ndarray")
    with pytest.raises(ValueError, match="cannot place"):
        B.float_to_device(tensor=np.zeros(2, np.float32), device=other)


@pytest.mark.parametrize("dtype", FLOATS)
def test_creation_defaults_fill_with_the_dtype(B, device, dtype):
    assert_close(B.float_zeros(shape=(2, 3), dtype=dtype, device=device), np.zeros((2, 3), dtype.numpy))
    assert_close(B.float_ones(shape=(2, 3), dtype=dtype, device=device), np.ones((2, 3), dtype.numpy))
    assert_close(B.float_full(shape=(4,), fill_value=2.5, dtype=dtype, device=device), np.full(4, 2.5, dtype.numpy))


# ----- random streams -----------------------------------------------------------------------------

DISTRIBUTIONS = [Distribution.uniform(-2.0, 3.0), Distribution.normal(1.0, 2.0), Distribution.bernoulli(0.3),
                 Distribution.default()]


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_a_seed_restarts_the_stream(B, device, dist):
    B.seed(device=device, seed=7)
    first = B.float_random(shape=(3, 4), distribution=dist, dtype=DType.F32, device=device)
    second = B.float_random(shape=(3, 4), distribution=dist, dtype=DType.F32, device=device)
    B.seed(device=device, seed=7)
    again = B.float_random(shape=(3, 4), distribution=dist, dtype=DType.F32, device=device)
    np.testing.assert_array_equal(first, again)
    assert first.dtype == np.float32 and first.shape == (3, 4)
    if dist.name != "bernoulli":
        assert not np.array_equal(first, second)  # the stream moves on


def test_different_seeds_give_different_streams(B, device):
    dist = Distribution.default()
    B.seed(device=device, seed=1)
    a = B.float_random(shape=(16,), distribution=dist, dtype=DType.F32, device=device)
    B.seed(device=device, seed=2)
    b = B.float_random(shape=(16,), distribution=dist, dtype=DType.F32, device=device)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_random_samples_follow_their_distribution(B, device, dtype):
    # seeded, so these statistics are fixed numbers, not a flaky test
    B.seed(device=device, seed=1234)
    n = 40_000
    uniform = B.float_random(shape=(n,), distribution=Distribution.uniform(-2.0, 3.0), dtype=dtype, device=device)
    assert uniform.dtype == dtype.numpy
    assert uniform.min() >= -2.0 and uniform.max() < 3.0
    assert abs(float(uniform.astype(np.float64).mean()) - 0.5) < 0.05
    normal = B.float_random(shape=(n,), distribution=Distribution.normal(1.0, 2.0), dtype=dtype, device=device)
    assert abs(float(normal.astype(np.float64).mean()) - 1.0) < 0.05
    assert abs(float(normal.astype(np.float64).std()) - 2.0) < 0.05
    coin = B.float_random(shape=(n,), distribution=Distribution.bernoulli(0.3), dtype=dtype, device=device)
    assert set(np.unique(coin).tolist()) <= {0.0, 1.0}
    assert abs(float(coin.astype(np.float64).mean()) - 0.3) < 0.02


def test_uniform_stays_below_high_after_rounding(B, device):
    # in float16 the draws just below `high` round up to it unless the backend prevents it
    B.seed(device=device, seed=0)
    x = B.float_random(shape=(200_000,), distribution=Distribution.uniform(0.0, 1.0), dtype=DType.F16, device=device)
    assert x.max() < 1.0


def test_int_random_is_seeded_and_in_range(B, device):
    B.seed(device=device, seed=3)
    a = B.int_random(shape=(1000,), low=-3, high=4, dtype=DType.I32, device=device)
    B.seed(device=device, seed=3)
    b = B.int_random(shape=(1000,), low=-3, high=4, dtype=DType.I32, device=device)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int32 and a.min() == -3 and a.max() == 3


def test_the_autodiff_twin_shares_the_stream(B, device):
    B.seed(device=device, seed=11)
    a = B.float_random(shape=(8,), distribution=Distribution.default(), dtype=DType.F32, device=device)
    B.seed(device=device.autodiff(), seed=11)
    b = B.float_random(shape=(8,), distribution=Distribution.default(), dtype=DType.F32, device=device)
    np.testing.assert_array_equal(a, b)
