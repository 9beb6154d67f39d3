"""``Flex``: the CPU backend whose every compute op is a numba kernel (burn's ``burn-flex``).
"""

from __future__ import annotations

from minidl.backend import Backend
from minidl.backends.cpu_common import CpuBoolOps, CpuHostOps, CpuIntOps
from minidl.backends.flex.activation_ops import FlexActivationOps
from minidl.backends.flex.float_ops import FlexFloatOps
from minidl.backends.flex.float_random import FlexRandomOps
from minidl.backends.flex.module_ops import FlexModuleOps


class Flex(CpuHostOps, CpuIntOps, CpuBoolOps, FlexFloatOps, FlexActivationOps, FlexModuleOps, Backend):
    """Every required op of the protocol on numba kernels (``@njit(cache=True)``, compiled on
    first call, never at import), plus the defaults worth fusing (``layer_norm``, ``softmax``,
    scalar forms, ``_elem`` comparisons).

    Primitives are ``np.ndarray`` (float16 is stored as float16 and computed in float32); the
    device is ``Device.flex()``. Host data, devices and the int/bool ops come from
    :mod:`minidl.backends.cpu_common`, shared with NdArray (int and bool tensors are indices
    and masks, not what the book teaches); the random streams are Flex's own counter-based
    generator. No op calls BLAS: two thread pools on two cores fight (DESIGN §7).
    """

    name = "flex"

    # CpuHostOps comes first in the bases and has a ``seed`` for NumPy streams; Flex's own
    # (restarting the counter-based stream, then the NumPy one int_random uses) must win.
    seed = FlexRandomOps.__dict__["seed"]
