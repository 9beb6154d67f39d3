"""Helpers for the debug tools' tests: devices by backend name, small inputs.

Each test that needs a library piece asks for it through :func:`need`; a piece that fails to
import fails the test (nothing here turns it into an xfail or a skip).
"""

from __future__ import annotations

import importlib

import numpy as np

INNER = {"flex": ("minidl.backends.flex", "Flex"), "ndarray": ("minidl.backends.ndarray", "NdArray")}


def need(module: str, attr: str | None = None):
    """Import ``module`` (and its ``attr``); an import error is raised."""
    mod = importlib.import_module(module)
    return getattr(mod, attr) if attr else mod


def device(kind: str, autodiff: bool = False):
    """``Device.flex()`` / ``Device.ndarray()`` (``.autodiff()``), with its backend class made
    (``Autodiff[B]`` included), so a test run alone sees the same classes as the whole suite."""
    need(*INNER[kind])
    from minidl.dispatch import Device, backend_for

    dev = Device.flex() if kind == "flex" else Device.ndarray()
    dev = dev.autodiff() if autodiff else dev
    backend_for(dev)
    return dev


def backend_name(kind: str) -> str:
    """``Flex`` or ``NdArray``."""
    return INNER[kind][1]


def tensor(shape, dev, seed: int = 0):
    """A float32 Tensor of ``shape`` on ``dev`` with reproducible values."""
    Tensor = need("minidl.tensor", "Tensor")
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(data, device=dev)


def is_subsequence(needle: list[str], hay: list[str]) -> bool:
    """Whether ``needle`` appears in ``hay`` in order (gaps allowed)."""
    it = iter(hay)
    return all(any(n == h for h in it) for n in needle)
