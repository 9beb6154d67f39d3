"""What ``Device.wgpu()`` refuses, for the test directories that run on it: the refusal's words
and the hook that turns it into a skip (a conftest takes the hook by importing it)."""

from __future__ import annotations

import pytest

#: What ``Device.wgpu()`` says when asked for a dtype it cannot hold (float64, int64, float16;
#: WGSL has no 64-bit types, and no float16 here): the message names the dtype.
WGPU_REFUSES = "is not supported on Device.wgpu()"


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """On ``Device.wgpu()``, a test that needs a dtype the device refuses (float64, int64,
    float16) skips with the device's refusal, which names that dtype; any other error fails."""
    try:
        return (yield)
    except TypeError as error:
        on_gpu = getattr(pyfuncitem.funcargs.get("device"), "kind", None) == "wgpu"
        if on_gpu and WGPU_REFUSES in str(error):
            pytest.skip(f"Device.wgpu() refuses the dtype this test needs: {str(error).splitlines()[0]}")
        raise
