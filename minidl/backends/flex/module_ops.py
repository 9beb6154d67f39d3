"""``FlexModuleOps``: the module ops Flex writes itself (burn-flex's ``ops/module.rs``).

What is *not* here matters as much as what is: ``linear`` (and its three backward helpers),
``batch_norm``, ``batch_norm_train``, ``embedding``, ``conv1d`` and ``attention`` are left to
the ``ModuleOps`` defaults, so on Flex they run as separate matmul / reshape / add / mean ...
ops. ``layer_norm`` is the one default Flex replaces, with a fused kernel — the split the
book's tables show (Flex defines ``conv2d`` and ``layer_norm``, not ``linear``).
"""

from __future__ import annotations

from minidl.backends.flex.conv import FlexConvOps
from minidl.backends.flex.interpolate import FlexInterpolateOps
from minidl.backends.flex.norm import FlexNormOps
from minidl.backends.flex.pool import FlexPoolOps


class FlexModuleOps(FlexConvOps, FlexPoolOps, FlexInterpolateOps, FlexNormOps):
    """conv2d (+ backward), conv_transpose2d, pools (+ backward), interpolate (+ backward) and
    the fused layer_norm."""
