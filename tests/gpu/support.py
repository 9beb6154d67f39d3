"""Helpers of the GPU backend's tests: the marker that needs a WebGPU adapter."""

from __future__ import annotations

import functools

import pytest


@functools.cache
def adapter_error() -> str | None:
    """Why ``Device.wgpu()`` cannot run here, or None when it can."""
    try:
        from minidl.backends.wgpu.runtime import runtime

        runtime(0)
    except RuntimeError as error:
        return str(error)
    return None


#: ``make`` installs wgpu and lavapipe, so a missing adapter fails the tests unless
#: MINIDL_WGPU_OPTIONAL=1 says this machine may lack one (then they skip with the reason).
needs_adapter = pytest.mark.usefixtures("wgpu_adapter")
