"""burn-wgpu (CubeBackend on the wgpu runtime): ``Wgpu``, WGSL compute kernels on any GPU
wgpu finds, or on Mesa's software Vulkan driver (lavapipe) where there is none.

``wgpu`` (the optional ``gpu`` extra) is imported when the device is first used, not here.
"""

from __future__ import annotations

from minidl.backends.wgpu.backend import Wgpu

__all__ = ["Wgpu"]
