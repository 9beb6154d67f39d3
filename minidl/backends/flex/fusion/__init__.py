"""Flex's side of fusion: the numba code generator for fused blocks and ``Fusion[Flex]``
(burn's ``FusionBackend`` impl for a backend, in burn-cubecl's ``fusion.rs``, with
burn-cubecl-fusion's optimizations as the generator).

The generic part (IR, stream, search, fusers' rules, plans, the decorator) is
``minidl.fusion`` and imports no backend; this package supplies what is Flex's:
:data:`FLEX_FUSION`, the :class:`~minidl.fusion.kernel.FusionRuntime` it registers
for Flex, :data:`FusionFlex`, the composed backend of ``Device.fusion()``, and
:data:`SyncedFusionFlex`, it synced after every op for the backend test suites.
"""

from __future__ import annotations

import numpy as np

from minidl.backends.flex.backend import Flex
from minidl.backends.flex.fusion.generator import NumbaGenerator
from minidl.fusion import fusion_backend, register_runtime
from minidl.fusion.kernel import FusionRuntime
from minidl.fusion.synced import synced_backend

#: What Flex supplies to ``Fusion[Flex]``: numba kernels; small ops on ready tensors run at
#: once (on a CPU a recorded op's Python costs more than running a small one).
FLEX_FUSION = FusionRuntime(
    generator=NumbaGenerator(), primitive=np.ndarray, device_kind="fusion", records_every_op=False
)


register_runtime(Flex, FLEX_FUSION)
#: ``Fusion[Flex]``, the backend of ``Device.fusion()``
FusionFlex = fusion_backend(Flex)
#: ``Fusion[Flex]`` synced after every op, NumPy arrays in and out (the backend test suites')
SyncedFusionFlex = synced_backend(Flex)

__all__ = ["FLEX_FUSION", "FusionFlex", "NumbaGenerator", "SyncedFusionFlex"]
