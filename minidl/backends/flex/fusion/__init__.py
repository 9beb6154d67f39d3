"""Flex's side of fusion: the numba code generator for fused blocks and ``Fusion[Flex]``
(burn's ``FusionBackend`` impl for a backend, in burn-cubecl's ``fusion.rs``, with
burn-cubecl-fusion's optimizations as the generator).

The generic part (IR, stream, search, fusers' rules, plans, the decorator) is
``minidl.backends.fusion`` and imports no backend; this package supplies what is Flex's:
:data:`FLEX_FUSION`, the :class:`~minidl.backends.fusion.kernel.FusionRuntime` it registers
for Flex, and :data:`FusionFlex`, the composed backend of ``Device.fusion()``.
"""

from __future__ import annotations

import numpy as np

from minidl.backends.flex.backend import Flex
from minidl.backends.flex.fusion.generator import NumbaGenerator
from minidl.backends.fusion import fusion_backend, register_runtime
from minidl.backends.fusion.kernel import FusionRuntime

#: What Flex supplies to ``Fusion[Flex]``: numba kernels; small ops on ready tensors run at
#: once (on a CPU a recorded op's Python costs more than running a small one).
FLEX_FUSION = FusionRuntime(
    generator=NumbaGenerator(), primitive=np.ndarray, device_kind="fusion", records_every_op=False
)


register_runtime(Flex, FLEX_FUSION)
#: ``Fusion[Flex]``, the backend of ``Device.fusion()``
FusionFlex = fusion_backend(Flex)

__all__ = ["FLEX_FUSION", "FusionFlex", "NumbaGenerator"]
