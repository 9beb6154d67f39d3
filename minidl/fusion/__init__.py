"""burn-fusion: ``Fusion[B]``, a lazy backend decorator that records ops as IR in a stream,
searches it for fusable blocks and runs each block as one generated kernel.

This package is the generic part and imports no backend: each inner backend supplies its
code generator, registered beside it (:class:`~.kernel.FusionRuntime`,
:func:`register_runtime`): numba source on Flex (``minidl.backends.flex.fusion``), WGSL on the
GPU (``minidl.backends.wgpu.fusion``). ``Device.fusion()`` routes to ``Fusion[Flex]`` (burn's
``Fusion<CubeBackend>`` on a CPU) and ``Device.fusion().autodiff()`` to
``Autodiff[Fusion[Flex]]``. Importing this package registers :class:`FusionTensor` in
``minidl.backend.PRIMITIVE_TYPES`` so Dispatch wraps it.
"""

from __future__ import annotations

from minidl.backend import PRIMITIVE_TYPES
from minidl.fusion.backend import Fusion, fusion_backend, register_runtime
from minidl.fusion.events import STREAM_LISTENERS
from minidl.fusion.fusers import ElementwiseFuser, MatmulFuser, OperationFuser, ReduceFuser
from minidl.fusion.ir import OperationIr, TensorIr
from minidl.fusion.kernel import FusionRuntime, Kernel, KernelGenerator
from minidl.fusion.stream import Stream
from minidl.fusion.tensor import FusionTensor

if FusionTensor not in PRIMITIVE_TYPES:
    PRIMITIVE_TYPES.append(FusionTensor)


__all__ = [
    "STREAM_LISTENERS",
    "ElementwiseFuser",
    "Fusion",
    "FusionRuntime",
    "FusionTensor",
    "Kernel",
    "KernelGenerator",
    "MatmulFuser",
    "OperationFuser",
    "OperationIr",
    "ReduceFuser",
    "Stream",
    "TensorIr",
    "fusion_backend",
    "register_runtime",
]
