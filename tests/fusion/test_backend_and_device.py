"""``Fusion[B]`` is made once per inner backend, prints as burn names it, keeps burn's
overrides (conv2d yes, linear and layer_norm no), and ``Device.fusion()`` behaves like the other
devices."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.autodiff import Autodiff
from minidl.backend import Backend, Distribution, ModuleOps, defines, defining_class
from minidl.backends.flex import Flex
from minidl.backends.flex.fusion import FusionFlex
from minidl.dispatch import Device, backend_for
from minidl.fusion import Fusion, FusionTensor, fusion_backend
from minidl.tensor import Tensor

from .helpers import on


def test_fusion_class_is_cached_named_and_subclasses_the_protocol_not_flex():
    assert Fusion[Flex] is fusion_backend(Flex) is FusionFlex
    assert FusionFlex.__name__ == FusionFlex.__qualname__ == "Fusion[Flex]"
    assert FusionFlex.name == "fusion<flex>"
    assert issubclass(FusionFlex, Backend) and not issubclass(FusionFlex, Flex)
    assert FusionFlex.inner_backend() is Flex


def test_fusion_refuses_to_decorate_an_autodiff_backend():
    with pytest.raises(TypeError, match="Autodiff outside"):
        fusion_backend(Autodiff[Flex])


def test_fusion_overrides_conv2d_but_not_linear_or_layer_norm_as_burn_does():
    assert defines(FusionFlex, "conv2d")
    for op in ("linear", "layer_norm", "batch_norm"):
        assert not defines(FusionFlex, op), op
        assert defining_class(FusionFlex, op) is ModuleOps


def test_devices_route_to_fusion_and_its_autodiff_composition():
    assert backend_for(Device.fusion()) is FusionFlex
    ad = backend_for(Device.fusion().autodiff())
    assert ad is Autodiff[FusionFlex] and ad.name == "autodiff<fusion<flex>>"


def test_fusion_device_inner_autodiff_equality_and_repr():
    dev = Device.fusion()
    assert repr(dev) == "Device.fusion()" and repr(dev.autodiff()) == "Device.fusion().autodiff()"
    assert dev.autodiff().inner() == dev and not dev.is_autodiff() and dev.autodiff().is_autodiff()
    assert dev == dev.autodiff() and dev != Device.flex()
    with pytest.raises(RuntimeError, match="Only first-order autodiff is supported"):
        dev.autodiff().autodiff()


def test_mixing_fusion_and_flex_tensors_is_the_wrong_device_error():
    with pytest.raises(ValueError, match="is on the wrong device"):
        on([1.0, 2.0]) + on([1.0, 2.0], Device.flex())


def test_seed_makes_fusion_random_draws_reproducible():
    dev = Device.fusion()
    draws = []
    for _ in range(2):
        dev.seed(7)
        draws.append(Tensor.random((4, 3), Distribution.normal(0.0, 1.0), dev).to_numpy())
    np.testing.assert_array_equal(draws[0], draws[1])
    assert draws[0].std() > 0


def test_results_are_lazy_handles_registered_as_primitives():
    y = on([1.0, -2.0]) * 3.0
    assert isinstance(y.primitive.backend_tensor, FusionTensor)
    assert y.device == Device.fusion()
