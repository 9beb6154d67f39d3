"""The GPU backend's side of fusion: the WGSL code generator and ``Fusion[Wgpu]`` (burn's
``Fusion<CubeBackend<WgpuRuntime>>``: burn-cubecl's ``FusionBackend`` impl, with
burn-cubecl-fusion's ``ElemwiseOptimization`` as the generator).

``Device.fusion_wgpu()`` routes to ``Fusion[Wgpu]``. On the GPU every op is recorded, as burn
records them: a dispatch costs far more than the Python of recording an op, so there is no
size below which running an op eagerly pays (the CPU device's ``eager_below``).
"""

from __future__ import annotations

from minidl.backends.wgpu.backend import Wgpu
from minidl.backends.wgpu.fusion.codegen import WgslKernel
from minidl.backends.wgpu.fusion.generator import WgslGenerator
from minidl.backends.wgpu.tensor import WgpuTensor
from minidl.fusion import fusion_backend, register_runtime
from minidl.fusion.kernel import FusionRuntime

#: What Wgpu supplies to ``Fusion[Wgpu]``: WGSL kernels, every op recorded.
WGPU_FUSION = FusionRuntime(
    generator=WgslGenerator(),
    primitive=WgpuTensor,
    device_kind="fusion_wgpu",
    records_every_op=True,
)


register_runtime(Wgpu, WGPU_FUSION)
#: ``Fusion[Wgpu]``, the backend of ``Device.fusion_wgpu()``
FusionWgpu = fusion_backend(Wgpu)

__all__ = ["WGPU_FUSION", "FusionWgpu", "WgslGenerator", "WgslKernel"]
