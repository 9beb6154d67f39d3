"""Fixtures of the GPU backend's tests."""

from __future__ import annotations

import os

import pytest

from .support import adapter_error


@pytest.fixture(scope="session")
def wgpu_adapter() -> None:
    error = adapter_error()
    if error is not None:
        if os.environ.get("MINIDL_WGPU_OPTIONAL"):
            pytest.skip(error)
        pytest.fail(error)
