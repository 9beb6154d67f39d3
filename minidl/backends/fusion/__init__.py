"""burn-fusion: ``Fusion[B]``, a lazy backend decorator that records ops as IR in a stream,
searches it for fusable blocks and runs each block as one generated numba kernel.

``Device.fusion()`` routes to ``Fusion[Flex]`` (burn's ``Fusion<CubeBackend>`` on a CPU) and
``Device.fusion().autodiff()`` to ``Autodiff[Fusion[Flex]]``. Importing this package
registers :class:`FusionTensor` in ``minidl.backend.PRIMITIVE_TYPES`` so Dispatch wraps it.
"""

from __future__ import annotations

from minidl.backend import PRIMITIVE_TYPES
from minidl.backends.fusion.backend import Fusion, fusion_backend
from minidl.backends.fusion.events import STREAM_LISTENERS
from minidl.backends.fusion.fusers import ElementwiseFuser, MatmulFuser, OperationFuser, ReduceFuser
from minidl.backends.fusion.ir import OperationIr, TensorIr
from minidl.backends.fusion.stream import Stream
from minidl.backends.fusion.tensor import FusionTensor

if FusionTensor not in PRIMITIVE_TYPES:
    PRIMITIVE_TYPES.append(FusionTensor)


def __getattr__(name: str):
    # ``FusionFlex`` imports Flex (and numba) on first use only, like the dispatch routes do
    if name == "FusionFlex":
        from minidl.backends.flex import Flex

        return fusion_backend(Flex)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "STREAM_LISTENERS",
    "ElementwiseFuser",
    "Fusion",
    "FusionFlex",
    "FusionTensor",
    "MatmulFuser",
    "OperationFuser",
    "OperationIr",
    "ReduceFuser",
    "Stream",
    "TensorIr",
    "fusion_backend",
]
