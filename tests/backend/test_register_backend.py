"""register_backend: a device kind of one's own, routed by Dispatch to a backend class (the
tensors chapter puts the reader's assembled backend behind a Tensor with it)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.backend import DType
from minidl.backends.ndarray import NdArray
from minidl.dispatch import backend_for
from minidl.dispatch.register import register_backend


class Box(np.ndarray):
    """A primitive type Dispatch does not know until registered."""


def _counting(name):
    calls = []

    class Counting(NdArray):
        @classmethod
        def float_from_data(cls, data, device):
            return np.asarray(super().float_from_data(data, device)).view(Box)

        @classmethod
        def float_add(cls, lhs, rhs):
            calls.append("float_add")
            return np.asarray(super().float_add(lhs, rhs)).view(Box)

    Counting.name = name
    return Counting, calls


def test_a_registered_kind_runs_tensor_ops_on_its_backend():
    backend, calls = _counting("counting")
    device = register_backend("counting_test", backend, Box)
    assert device == Device("counting_test") and backend_for(device) is backend
    x = Tensor.from_data([1.0, 2.0], device)
    y = x + x
    assert calls == ["float_add"] and y.device == device
    assert type(y.primitive.backend_tensor) is Box and y.tolist() == [2.0, 4.0]
    assert device.settings().int_dtype is DType.I64  # NdArray's settings by default


def test_registering_again_replaces_the_backend():
    first, first_calls = _counting("first")
    second, second_calls = _counting("second")
    device = register_backend("replaced_test", first, Box)
    Tensor.from_data([1.0], device) + Tensor.from_data([1.0], device)
    assert register_backend("replaced_test", second, Box) is device
    Tensor.from_data([1.0], device) + Tensor.from_data([1.0], device)
    assert first_calls == ["float_add"] and second_calls == ["float_add"]


def test_minidls_own_kinds_cannot_be_taken_over():
    with pytest.raises(ValueError, match="minidl's own device kinds"):
        register_backend("flex", NdArray, np.ndarray)
    with pytest.raises(ValueError, match="unknown kind"):
        Device("never_registered")


def test_a_registered_kind_prints_as_the_call_that_makes_it():
    # Device.flex() has a constructor to print; a registered kind has none: Device('kind')
    backend, _ = _counting("counting_repr")
    device = register_backend("counting_repr", backend, Box)
    assert repr(device) == "Device('counting_repr')"
    assert repr(Device("counting_repr", 2).autodiff()) == "Device('counting_repr', 2).autodiff()"
    assert eval(repr(device)) == device  # noqa: S307 (round trip)
    assert repr(Device.flex(1)) == "Device.flex(1)" and repr(Device.wgpu()) == "Device.wgpu()"
