"""Fixtures: ``kind`` runs a test on each device kind (NdArray, Flex, Fusion[Flex], Wgpu: the
GPU device, float32 tolerances as for the CPU kinds)."""

from __future__ import annotations

import pytest

from minidl.dispatch import Device

from .support import plain_device


@pytest.fixture(params=["ndarray", "flex", "fusion", "wgpu"])
def kind(request) -> str:
    """A device kind."""
    return request.param


@pytest.fixture
def plain(kind) -> Device:
    """The plain device of the kind under test."""
    return plain_device(kind)


@pytest.fixture
def ad(plain) -> Device:
    """Its autodiff twin."""
    return plain.autodiff()
