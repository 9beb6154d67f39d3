"""Creating tensors: zeros/ones/full/arange/from_data/from_numpy/random/*_like, kinds and dtypes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minidl
from minidl import Device, Distribution, DType, Kind, Tensor, TensorCheckError, TensorKindError

from .support import DEVICES, close, load_device


@pytest.mark.parametrize("dtype", [minidl.float32, minidl.float64, minidl.float16, minidl.int32,
                                   minidl.int64, minidl.bool_])
def test_zeros_ones_full_have_the_requested_dtype_and_kind(device, dtype):
    z = Tensor.zeros([2, 3], device, dtype)
    o = Tensor.ones((2, 3), device=device, dtype=dtype)
    f = Tensor.full([2, 3], 1 if dtype.kind is not Kind.FLOAT else 2.5, device, dtype)
    assert z.kind is o.kind is f.kind is dtype.kind
    close(z, np.zeros((2, 3), dtype.numpy))
    close(o, np.ones((2, 3), dtype.numpy))
    close(f, np.full((2, 3), 1 if dtype.kind is not Kind.FLOAT else 2.5, dtype.numpy))
    assert z.device == device and z.device.is_autodiff() == device.is_autodiff()


def test_default_dtype_is_float32_and_shape_accepts_an_int(device):
    t = Tensor.zeros(4, device)
    assert t.dtype is DType.F32 and t.kind is Kind.FLOAT and t.shape == (4,) and t.dims() == [4]


def test_full_bool_false_and_int_fill(device):
    close(Tensor.full([3], False, device, minidl.bool_), np.zeros(3, bool))
    close(Tensor.full([2], -7, device, minidl.int32), np.full(2, -7, np.int32))


@pytest.mark.parametrize("args", [(5,), (2, 9), (9, 2, -3), (-4, 4, 3)])
def test_arange_matches_torch(device, args):
    t = Tensor.arange(*args, device=device)
    assert t.kind is Kind.INT
    close(t, torch.arange(*args))


def test_arange_with_float_dtype_and_errors(plain):
    close(Tensor.arange(0, 4, device=plain, dtype=minidl.float32), np.arange(4, dtype=np.float32))
    with pytest.raises(TensorCheckError, match="step must not be 0"):
        Tensor.arange(0, 4, 0, device=plain)
    with pytest.raises(TensorKindError, match="Argument end must be an int"):
        Tensor.arange(0, 2.5, device=plain)


def test_from_data_infers_burn_defaults(device):
    assert Tensor.from_data([1.5, 2.0], device).dtype is DType.F32  # python floats → f32
    int_default = device.settings().int_dtype  # burn's per-device default: i64 NdArray, i32 wgpu
    assert int_default is (DType.I32 if device.kind == "wgpu" else DType.I64)
    assert Tensor.from_data([1, 2], device).dtype is int_default
    assert Tensor.from_data([True, False], device).kind is Kind.BOOL
    assert Tensor.from_data(np.arange(3, dtype=np.int32), device).dtype is DType.I32
    assert Tensor.from_data(np.ones(2, np.uint8), device).dtype is int_default  # widened
    scalar = Tensor.from_data(3.0, device)
    assert scalar.shape == (1,)  # burn has no rank-0 tensors
    # NumPy's float64 is kept where the device holds it, else it takes the device's float32
    wide = Tensor.from_data(np.ones(2, np.float64), device).dtype
    assert wide is (DType.F32 if device.kind == "wgpu" else DType.F64)
    close(Tensor.from_data([[1, 2]], device, dtype="float64"), np.array([[1, 2]], np.float64))


def test_from_numpy_copies_non_contiguous_input(device):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base.T[::2]  # transposed and strided
    t = Tensor.from_numpy(view, device)
    close(t, view)
    base[:] = -1  # the tensor holds a copy
    close(t, np.arange(24, dtype=np.float32).reshape(4, 6).T[::2])


def test_from_data_rejects_bad_input(plain):
    with pytest.raises(TensorKindError, match="from_numpy"):
        Tensor.from_numpy([1, 2], plain)
    with pytest.raises(TensorKindError, match="numbers or bools"):
        Tensor.from_data(np.array(["a"]), plain)
    with pytest.raises(TensorCheckError, match="negative size"):
        Tensor.zeros([2, -1], plain)
    with pytest.raises(TypeError, match="Device"):
        Tensor.zeros([2], "cpu")


def test_random_is_seeded_and_in_range(device):
    device.seed(7)
    a = Tensor.random([500], Distribution.uniform(-2.0, 3.0), device)
    device.seed(7)
    b = Tensor.random([500], Distribution.uniform(-2.0, 3.0), device)
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    values = a.to_numpy()
    assert values.dtype == np.float32 and values.min() >= -2.0 and values.max() < 3.0
    assert values.std() > 0.5  # not a constant


def test_random_int_bool_and_normal(device):
    device.seed(3)
    int_default = device.settings().int_dtype
    ints = Tensor.random([400], Distribution.uniform(0, 5), device, int_default).to_numpy()
    assert ints.dtype == int_default.numpy and set(np.unique(ints)) == {0, 1, 2, 3, 4}
    coins = Tensor.random([2000], Distribution.bernoulli(0.25), device, minidl.bool_)
    assert coins.kind is Kind.BOOL and 0.18 < coins.to_numpy().mean() < 0.32
    normal = Tensor.random([4000], Distribution.normal(1.0, 2.0), device).to_numpy()
    assert abs(normal.mean() - 1.0) < 0.15 and abs(normal.std() - 2.0) < 0.15


def test_random_rejects_a_distribution_the_kind_cannot_use(plain):
    with pytest.raises(TensorKindError, match="bernoulli"):
        Tensor.random([3], Distribution.normal(0, 1), plain, minidl.bool_)


def test_like_constructors_keep_shape_dtype_device(device):
    wide = DType.F64 if device.settings().supports(DType.F64) else DType.F32  # wgpu: float32 only
    x = Tensor.from_data(np.ones((2, 3)), device, wide)
    for t in (x.zeros_like(), x.ones_like(), x.full_like(4.0), x.random_like(Distribution.bernoulli(0.5))):
        assert t.shape == (2, 3) and t.dtype is wide and t.device == device
    close(x.full_like(4.0), np.full((2, 3), 4.0, wide.numpy))


def test_device_none_means_the_default_flex_device():
    load_device(DEVICES[2][1])
    t = Tensor.zeros([2], None)
    assert t.device == Device.flex() == Device.default()
