"""Fixtures of the store tests: ``device`` runs a test on each backend, the CPU ones and the GPU
device (a backend that fails to load fails the tests on it)."""

from __future__ import annotations

import pytest

from minidl.dispatch import Device
from minidl.dispatch.route import backend_for
from tests.gpu_refusals import pytest_pyfunc_call  # noqa: F401 - the refused-dtype skip, as a hook here

#: Device.wgpu() holds float32, int32 and bool only (WGSL has no 64-bit types, no float16 here).
DEVICES = [("ndarray", Device.ndarray), ("flex", Device.flex), ("wgpu", Device.wgpu)]


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
