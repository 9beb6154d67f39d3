"""Shared helpers of the autodiff tests: the inner backends and leaf/loss plumbing."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from minidl.autodiff import Autodiff
from minidl.autodiff.ops.module import AutodiffModuleOps

#: Parametrize a test over the inner backends (one that fails to load fails its tests).
INNER = [
    pytest.param("ndarray", id="ndarray"),
    pytest.param("flex", id="flex"),
    # Fusion[Flex] synced after each op (primitives stay NumPy arrays): Autodiff[Fusion[Flex]]
    pytest.param("fusion", id="fusion"),
    # Wgpu, uploaded and read back around each op (NumPy primitives): Autodiff[Wgpu]. A case in a
    # dtype the GPU refuses (the float64 finite differences) skips naming it; float32 results are
    # held to the same tolerances as the CPU backends' (stated in each test: rtol 1e-5, atol 1e-6
    # for values, 1e-5 for gradients)
    pytest.param("wgpu", id="wgpu"),
]


#: The GPU device's float32 tolerances, stated once: a test whose float64 inputs the device
#: takes as float32 is held to these where it states tighter ones (see :func:`tolerance`).
WGPU_RTOL, WGPU_ATOL = 1e-5, 1e-6


def tolerance(inner: str, rtol: float, atol: float = 0.0) -> dict[str, float]:
    """``rtol``/``atol`` for ``assert_allclose``, widened to float32's on the GPU device."""
    if inner == "wgpu":
        return {"rtol": max(rtol, WGPU_RTOL), "atol": max(atol, WGPU_ATOL)}
    return {"rtol": rtol, "atol": atol}


def needs_float64(inner: str, what: str) -> None:
    """Skip on the GPU device, which refuses float64 (its refusal: tests/gpu), naming what needed it."""
    if inner == "wgpu":
        pytest.skip(f"Device.wgpu() refuses float64, which {what} needs (WGSL has no 64-bit types)")


def inner_backend(name: str) -> type:
    """``NdArray``, ``Flex``, synced ``Fusion[Flex]`` or synced ``Wgpu``."""
    if name == "wgpu":
        from tests.backend.support import WgpuUnderTest  # refusals of float64 skip, naming it

        return WgpuUnderTest
    if name == "fusion":
        from minidl.backends.flex.fusion import SyncedFusionFlex

        return SyncedFusionFlex
    module = importlib.import_module(f"minidl.backends.{name}")
    return getattr(module, {"ndarray": "NdArray", "flex": "Flex"}[name])


def ad(name: str, checkpointing: str | None = None) -> type:
    """``Autodiff[B]`` for an inner backend name."""
    inner = inner_backend(name)
    return Autodiff[inner] if checkpointing is None else Autodiff[inner, checkpointing]


def inner_array(AD: type, array):
    """``array`` as ``AD``'s inner primitive: itself for the CPU backends; on the GPU device,
    NumPy's float64 taken as the device's float32 (as ``Tensor.from_data`` takes it), and for
    the real ``Wgpu`` (``backend_for(Device.wgpu().autodiff())``) uploaded to a buffer."""
    inner = getattr(AD, "_inner", None)
    if getattr(inner, "name", None) != "wgpu":
        return array
    array = np.asarray(array)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    if inner.__name__ == "Wgpu":
        from minidl.backends.wgpu import Wgpu
        from minidl.dispatch import Device

        return Wgpu.float_from_data(array, Device.wgpu())
    return array


def leaf(AD: type, array, grad: bool = True):
    """An autodiff leaf holding a copy of ``array`` (tracked when ``grad``)."""
    tensor = AD.from_inner(inner_array(AD, np.array(array, copy=True)))
    return AD.float_require_grad(tensor) if grad else tensor


def weighted_loss(AD: type, out, weights: np.ndarray):
    """``sum(out * weights)``: a scalar whose gradient is ``weights`` (tests full Jacobians,
    not only their column sums)."""
    return AD.float_sum(AD.float_mul(out, AD.from_inner(weights.astype(out.dtype))))


def value(AD: type, tensor) -> np.ndarray:
    """The host array of an autodiff tensor."""
    return np.asarray(AD.float_into_data(tensor).array)


def spy_linear(monkeypatch, AD: type) -> list:
    """Replace ``AD.linear`` by a spy that records each call (and still computes)."""
    calls: list = []

    def spy(cls, x, weight, bias=None):
        calls.append(cls)
        return AutodiffModuleOps.linear.__func__(cls, x, weight, bias)

    monkeypatch.setattr(AD, "linear", classmethod(spy))
    return calls
