"""Fixtures of the Tensor-layer tests: ``device`` runs a test once per device in
:data:`support.DEVICES` (plain and autodiff: NdArray, Flex, and the GPU device Wgpu)."""

from __future__ import annotations

import pytest

from minidl import Device

from .support import DEVICES, WGPU_REFUSES, load_device


@pytest.fixture(scope="session", params=DEVICES, ids=[d[0] for d in DEVICES])
def device(request) -> Device:
    """A device to create tensors on."""
    _, make = request.param
    return load_device(make)


@pytest.fixture(scope="session")
def plain() -> Device:
    """The NdArray device, for tests about the Tensor layer itself rather than a backend."""
    return load_device(Device.ndarray)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """On ``Device.wgpu()``, a test that needs a dtype the device refuses (float64, int64,
    float16) skips with the device's refusal, which names that dtype; any other error fails."""
    try:
        return (yield)
    except TypeError as error:
        on_gpu = getattr(pyfuncitem.funcargs.get("device"), "kind", None) == "wgpu"
        if on_gpu and WGPU_REFUSES in str(error):
            pytest.skip(f"Device.wgpu() refuses the dtype this test needs: {str(error).splitlines()[0]}")
        raise
