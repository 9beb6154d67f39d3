"""Devices for the module/nn/optim tests: NdArray and Flex (plain and autodiff). A backend
that fails to load fails every test that needs it: nothing here turns it into an xfail."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.dispatch import Device, backend_for
from minidl.tensor import Tensor


def need(device: Device) -> Device:
    """``device`` with its backend loaded (an import error is raised: the test fails)."""
    backend_for(device)
    return device


#: The two device kinds burn's experiments use; tests parametrized over them run on both.
#: Plus the GPU device (Device.wgpu(), float32 tolerances as for the CPU kinds).
KINDS = [pytest.param("ndarray", id="ndarray"), pytest.param("flex", id="flex"), pytest.param("wgpu", id="wgpu")]


def plain_device(kind: str) -> Device:
    """The plain device of a kind, its backend loaded."""
    return need({"flex": Device.flex, "wgpu": Device.wgpu}.get(kind, Device.ndarray)())


def arr(t: Tensor) -> np.ndarray:
    """The values of a tensor as NumPy."""
    return t.to_numpy()


def T(array, device: Device) -> Tensor:
    """A float tensor holding ``array``."""
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float32), device=device)
