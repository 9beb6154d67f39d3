"""Fixtures of the debug tools' tests: ``kind`` runs a test once per inner backend."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["flex", "ndarray"])
def kind(request) -> str:
    """Each inner backend: Flex (the issue's target) and NdArray (the reference)."""
    return request.param
