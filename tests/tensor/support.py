"""Helpers of the Tensor-layer tests: the devices under test, data, and comparison with PyTorch.

Tensor tests run on every device in :data:`DEVICES`; a device whose backend fails to load
fails them.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import HealthCheck, settings

from minidl import Device, Tensor
from minidl.dispatch import backend_for

#: (id, device factory). One line adds a device.
DEVICES = [
    ("ndarray", lambda: Device.ndarray()),
    ("ndarray-autodiff", lambda: Device.ndarray().autodiff()),
    ("flex", lambda: Device.flex()),
    ("flex-autodiff", lambda: Device.flex().autodiff()),
    # the GPU device (WGSL kernels; lavapipe where there is no GPU): float32, int32 and bool only
    ("wgpu", lambda: Device.wgpu()),
    ("wgpu-autodiff", lambda: Device.wgpu().autodiff()),
]

#: The float32 tolerances of every comparison here, stated once: rtol 1e-5 and atol 1e-6 on
#: every device. Device.wgpu() computes in float32 with WGSL's built-ins (on lavapipe, LLVM's);
#: its results stay within these, except where a test states a wider bound for a sum or a
#: transcendental (``close``'s ``rtol``/``atol`` arguments), which then holds on every device.
RTOL, ATOL = 1e-5, 1e-6

SETTINGS = settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow,
                    HealthCheck.function_scoped_fixture])


def load_device(make) -> Device:
    """The device ``make()`` builds, its backend loaded (an import error fails the test)."""
    device = make()
    backend_for(device)
    return device


def randn(shape, seed: int = 0, dtype=np.float32, scale: float = 1.0) -> np.ndarray:
    """Reproducible standard-normal values."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def ints(shape, low: int, high: int, seed: int = 0, dtype=np.int64) -> np.ndarray:
    """Reproducible integers in ``[low, high)``."""
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def T(array, device: Device, dtype=None) -> Tensor:
    """A minidl tensor holding ``array``."""
    return Tensor.from_data(np.asarray(array), device, dtype)


def tt(array) -> torch.Tensor:
    """The torch twin of a NumPy array."""
    return torch.tensor(np.ascontiguousarray(array))


def close(actual: Tensor, expected, rtol: float = RTOL, atol: float = ATOL, dtype=None) -> None:
    """Same shape, the expected dtype, values within tolerance (ints and bools exactly).

    An expected int64 (torch's and the CPU devices' int) stands for the device's default int:
    int32 on ``Device.wgpu()`` (``Device.settings()``, burn's per-device ``DeviceSettings``)."""
    assert isinstance(actual, Tensor), f"expected a minidl Tensor, found {type(actual)}"
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    expected = np.asarray(expected)
    got = actual.to_numpy()
    assert got.shape == expected.shape, f"shape {got.shape} != expected {expected.shape}"
    want = np.dtype(dtype) if dtype is not None else expected.dtype
    if want == np.int64:
        want = actual.device.settings().int_dtype.numpy
    assert got.dtype == want, f"dtype {got.dtype} != expected {want}"
    assert actual.dtype.numpy == want
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
