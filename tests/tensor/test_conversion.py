"""Reading back and converting: to_numpy, __array__, into_scalar, cast/int/float/bool,
to_device, clone, repr, truth value."""

from __future__ import annotations

import numpy as np
import pytest

import minidl
from minidl import Device, DType, Kind, Tensor, TensorCheckError, TensorKindError

from .support import T, close, ints, randn


def test_to_numpy_is_a_copy_and_array_protocol_works(device):
    a = randn((2, 3), 61)
    x = T(a, device)
    out = x.to_numpy()
    out[:] = 0.0
    close(x, a)  # writing into the copy leaves the tensor alone
    np.testing.assert_array_equal(np.asarray(x), a)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert x.tolist() == a.tolist()


def test_metadata(device):
    x = T(randn((2, 3, 4), 62), device)
    assert x.shape == (2, 3, 4) and x.dims() == [2, 3, 4] and x.rank == x.ndim == 3
    assert x.numel() == 24 and len(x) == 2
    assert x.dtype is DType.F32 and x.kind is Kind.FLOAT and x.device == device


def test_into_scalar(device):
    assert T([2.5], device).into_scalar() == 2.5
    assert T([[7]], device).into_scalar() == 7 and isinstance(T([[7]], device).into_scalar(), int)
    assert T([True], device).item() is True
    assert float(T(randn((3, 3)), device).sum()) == pytest.approx(float(randn((3, 3)).sum()), rel=1e-5)


def test_into_scalar_and_bool_need_one_element(plain):
    with pytest.raises(TensorCheckError, match="exactly one element.*\\[2\\]"):
        T([1.0, 2.0], plain).into_scalar()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(T([1.0, 2.0], plain))
    assert bool(T([1.0], plain) > 0)


@pytest.mark.parametrize("target", [minidl.float64, minidl.float16, minidl.int32, minidl.int64, minidl.bool_])
def test_cast_within_and_across_kinds(device, target):
    a = np.array([[-1.7, 0.0, 2.9]], np.float32)
    x = T(a, device)
    expected = a != 0 if target is minidl.bool_ else a.astype(target.numpy)  # float → int truncates
    out = x.cast(target)
    assert out.kind is target.kind
    close(out, expected, rtol=1e-3)
    assert x.cast(minidl.float32) is x


def test_int_float_bool_conversions(device):
    i = ints((2, 3), -3, 4)
    x = T(i, device)
    close(x.float(), i.astype(np.float32))
    if device.settings().supports(minidl.float64):  # Device.wgpu() refuses it (tests/gpu)
        close(x.float(minidl.float64), i.astype(np.float64))
    close(x.int(minidl.int32), i.astype(np.int32))
    assert x.int() is x
    close(x.bool(), i != 0)
    close(x.bool().int(), (i != 0).astype(np.int64))
    close(x.bool().float(), (i != 0).astype(np.float32))
    with pytest.raises(TensorKindError, match="float dtype"):
        x.float(minidl.int32)


def test_clone_and_detach(device):
    x = T(randn((2, 2), 63), device)
    c = x.clone()
    assert c is not x and c.shape == x.shape
    close(c, x.to_numpy())
    close(x.detach(), x.to_numpy())
    assert T([1], device).detach().kind is Kind.INT


def test_to_device_between_backends_and_autodiff(plain):
    x = T(randn((2, 2), 64), plain)
    other = x.to_device(Device.ndarray(1))
    assert other.device == Device.ndarray(1)
    close(other, x.to_numpy())
    i = T(np.array([1, 2]), plain).to_device(Device.ndarray(1))
    assert i.device == Device.ndarray(1) and i.kind is Kind.INT


def test_repr_shows_values_shape_dtype_device(device):
    text = repr(T(np.array([[1.5, 2.0]], np.float32), device))
    assert "1.5" in text and "shape:  [1, 2]" in text and '"float32"' in text and str(device) in text
    assert '"Float"' in text
    assert '"Int"' in repr(Tensor.arange(3, device=device))


def test_cast_to_an_unsupported_dtype_names_the_choices(plain):
    with pytest.raises(TensorKindError, match="(?s)Operation: 'cast'.*complex64.*float32"):
        T([1.0], plain).cast("complex64")
