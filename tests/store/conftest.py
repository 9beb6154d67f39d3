"""Fixtures of the store tests: ``device`` runs a test on each backend, the CPU ones and the GPU
device (a backend that fails to load fails the tests on it)."""

from __future__ import annotations

import pytest

from minidl.dispatch import Device
from minidl.dispatch.route import backend_for

#: Device.wgpu() holds float32, int32 and bool only (WGSL has no 64-bit types, no float16 here).
DEVICES = [("ndarray", Device.ndarray), ("flex", Device.flex), ("wgpu", Device.wgpu)]

#: What Device.wgpu() says when asked for a dtype it cannot hold (as tests/tensor/support.py).
WGPU_REFUSES = "is not supported on Device.wgpu()"


@pytest.fixture(scope="session", params=DEVICES, ids=[d[0] for d in DEVICES])
def device(request) -> Device:
    """A plain (non-autodiff) device; tests lift it with ``.autodiff()`` where they train."""
    _, make = request.param
    dev = make()
    backend_for(dev)
    return dev


@pytest.fixture(scope="session")
def plain() -> Device:
    """The NdArray device, for tests about the store itself rather than a backend."""
    return Device.ndarray()


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
