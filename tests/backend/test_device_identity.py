"""One ``Device`` object per device identity, whichever way it is asked for.

Dispatch's fast path tests ``rhs.device is device``: two tensors on equal devices that are
different objects would take the full ``route()`` on every op. So every constructor, every
backend's device lookup and backward's seed of ones must hand out the interned object.
"""

from __future__ import annotations

import copy
import pickle
import pkgutil

import numpy as np
import pytest

import minidl.dispatch.ops
from minidl.backends.cpu_helpers import cpu_device
from minidl.backends.flex import Flex
from minidl.backends.flex.fusion import FusionFlex
from minidl.backends.ndarray import NdArray
from minidl.dispatch import Device
from minidl.tensor import Tensor

KINDS = ("flex", "ndarray", "fusion")


def _by_constructor(kind: str) -> Device:
    return getattr(Device, kind)()


@pytest.mark.parametrize("kind", KINDS)
def test_every_constructor_of_a_device_hands_out_one_object(kind):
    device = _by_constructor(kind)
    same = [
        _by_constructor(kind),
        Device(kind),
        Device(kind, 0),
        device.autodiff().inner(),
        device.autodiff().gradient_checkpointing().inner(),
        copy.copy(device),
        copy.deepcopy(device),
        pickle.loads(pickle.dumps(device)),
    ]
    assert all(d is device for d in same)
    ad = device.autodiff()
    assert ad is _by_constructor(kind).autodiff() is Device(kind, 0, True)
    assert ad.gradient_checkpointing() is Device(kind, 0, True, "balanced")
    assert pickle.loads(pickle.dumps(ad)) is ad and copy.deepcopy(ad) is ad
    assert Device(kind, 1) is Device(kind, 1) and Device(kind, 1) is not device


def test_the_default_and_the_cpu_helpers_device_are_the_interned_ones():
    assert Device.default() is Device.flex()
    assert cpu_device("flex") is Device.flex() and cpu_device("ndarray") is Device.ndarray()


@pytest.mark.parametrize("backend, kind", [(Flex, "flex"), (NdArray, "ndarray"), (FusionFlex, "fusion")])
def test_a_backends_device_lookup_returns_the_interned_device(backend, kind):
    x = backend.float_from_data(np.ones((2, 2), np.float32), Device(kind))
    assert backend.float_device(x) is _by_constructor(kind)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind 'gpu'"):
        Device("gpu")


@pytest.fixture
def route_calls(monkeypatch):
    """Counts the calls of ``route`` made by the generated forwarders (each module imported it)."""
    calls = []
    for info in pkgutil.iter_modules(minidl.dispatch.ops.__path__):
        module = __import__(f"minidl.dispatch.ops.{info.name}", fromlist=["route"])
        real = module.route

        def counting(op, args, _real=real):
            calls.append(op)
            return _real(op, args)

        monkeypatch.setattr(module, "route", counting)
    return calls


@pytest.mark.parametrize("kind", KINDS)
def test_two_tensors_made_with_separate_device_calls_take_the_fast_path(kind, route_calls):
    a = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], _by_constructor(kind))
    b = Tensor.from_data([[5.0, 6.0], [7.0, 8.0]], _by_constructor(kind))
    route_calls.clear()
    out = (a + b) * b - a
    assert route_calls == []
    np.testing.assert_array_equal(out.to_numpy(), [[29.0, 46.0], [67.0, 92.0]])


def test_backward_on_fusion_seeds_its_ones_on_the_interned_device(monkeypatch):
    seen = []
    real = FusionFlex.float_ones.__func__

    def recording(cls, shape, dtype, device):
        seen.append(device)
        return real(cls, shape, dtype, device)

    monkeypatch.setattr(FusionFlex, "float_ones", classmethod(recording))
    device = Device.fusion().autodiff()
    w = Tensor.from_data([1.0, 2.0, 3.0], device).require_grad()
    grads = (w * w).sum().backward()
    assert seen and all(d is Device.fusion() for d in seen)
    np.testing.assert_array_equal(w.grad(grads).to_numpy(), [2.0, 4.0, 6.0])
