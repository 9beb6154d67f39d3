"""Fixtures of the Tensor-layer tests: ``device`` runs a test once per device in
:data:`support.DEVICES` (plain and autodiff: NdArray, Flex, and the GPU device Wgpu)."""

from __future__ import annotations

import pytest

from minidl import Device
from tests.gpu_refusals import pytest_pyfunc_call  # noqa: F401 - the refused-dtype skip, as a hook here

from .support import DEVICES, load_device


@pytest.fixture(scope="session", params=DEVICES, ids=[d[0] for d in DEVICES])
def device(request) -> Device:
    """A device to create tensors on."""
    _, make = request.param
    return load_device(make)


@pytest.fixture(scope="session")
def plain() -> Device:
    """The NdArray device, for tests about the Tensor layer itself rather than a backend."""
    return load_device(Device.ndarray)
