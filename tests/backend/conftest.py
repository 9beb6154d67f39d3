"""Fixtures of the backend conformance suite: every test taking ``B`` runs once per backend in
:data:`support.BACKENDS` (a backend that fails to load is a failure of each of them)."""

from __future__ import annotations

import pytest

from minidl.dispatch import Device

from .support import BACKENDS, load_backend


@pytest.fixture(scope="session", params=BACKENDS, ids=[b[0] for b in BACKENDS])
def B(request) -> type:
    """The backend class under test."""
    _, module, name = request.param
    return load_backend(module, name)


@pytest.fixture(scope="session")
def device(B) -> Device:
    """The plain device of the backend under test."""
    return Device(B.name)
