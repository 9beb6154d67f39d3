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
]


def inner_backend(name: str) -> type:
    """``NdArray``, ``Flex`` or synced ``Fusion[Flex]``."""
    if name == "fusion":
        from minidl.backends.fusion.synced import SyncedFusionFlex

        return SyncedFusionFlex
    module = importlib.import_module(f"minidl.backends.{name}")
    return getattr(module, {"ndarray": "NdArray", "flex": "Flex"}[name])


def ad(name: str, checkpointing: str | None = None) -> type:
    """``Autodiff[B]`` for an inner backend name."""
    inner = inner_backend(name)
    return Autodiff[inner] if checkpointing is None else Autodiff[inner, checkpointing]


def leaf(AD: type, array, grad: bool = True):
    """An autodiff leaf holding a copy of ``array`` (tracked when ``grad``)."""
    tensor = AD.from_inner(np.array(array, copy=True))
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
