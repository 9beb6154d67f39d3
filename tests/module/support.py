"""Devices for the module/nn/optim tests: NdArray (plain and autodiff) always, Flex when its
backend exists — until then a Flex case is reported as xfail naming what is missing."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.dispatch import Device, backend_for
from minidl.tensor import Tensor

FLEX_MISSING = "Flex backend not written yet (minidl.backends.flex.Flex)"


def flex_available() -> bool:
    """Whether ``minidl.backends.flex.Flex`` loads."""
    try:
        backend_for(Device.flex())
        return True
    except (ModuleNotFoundError, AttributeError, ImportError):
        return False


def need(device: Device) -> Device:
    """``device``, or an xfail when its backend can't load yet (never a silent skip)."""
    if device.kind == "flex" and not flex_available():
        pytest.xfail(FLEX_MISSING)
    return device


#: The two device kinds burn's experiments use; tests parametrized over them run on both.
KINDS = [pytest.param("ndarray", id="ndarray"), pytest.param("flex", id="flex")]


def plain_device(kind: str) -> Device:
    """The plain device of a kind (xfail for a missing Flex)."""
    return need(Device.flex() if kind == "flex" else Device.ndarray())


def arr(t: Tensor) -> np.ndarray:
    """The values of a tensor as NumPy."""
    return t.to_numpy()


def T(array, device: Device) -> Tensor:
    """A float tensor holding ``array``."""
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float32), device=device)
