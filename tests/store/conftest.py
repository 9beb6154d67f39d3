"""Fixtures of the store tests: ``device`` runs a test on each CPU backend (a backend not
written yet shows as xfail with the reason, never as a silent skip)."""

from __future__ import annotations

import pytest

from minidl.dispatch import Device
from minidl.dispatch.route import backend_for

DEVICES = [
    ("ndarray", Device.ndarray, "NdArray backend not written yet"),
    ("flex", Device.flex, "Flex backend not written yet (minidl.backends.flex.Flex)"),
]


@pytest.fixture(scope="session", params=DEVICES, ids=[d[0] for d in DEVICES])
def device(request) -> Device:
    """A plain (non-autodiff) device; tests lift it with ``.autodiff()`` where they train."""
    _, make, pending = request.param
    dev = make()
    try:
        backend_for(dev)
    except (ModuleNotFoundError, AttributeError, ImportError) as err:
        pytest.xfail(f"{pending}: {err}")
    return dev


@pytest.fixture(scope="session")
def plain() -> Device:
    """The NdArray device, for tests about the store itself rather than a backend."""
    return Device.ndarray()
