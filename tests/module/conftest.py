"""Fixtures: ``kind`` runs a test on each device kind (NdArray, Flex)."""

from __future__ import annotations

import pytest

from .support import KINDS


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    """A device kind: ``"ndarray"`` or ``"flex"``."""
    return request.param
