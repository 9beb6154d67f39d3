"""``NdArray``: the plain NumPy backend, the book's readable reference and the test oracle
(burn's ``burn-ndarray`` crate).
"""

from __future__ import annotations

from minidl.backend import Backend
from minidl.backends.cpu_common import CpuBoolOps, CpuHostOps, CpuIntOps
from minidl.backends.cpu_views import CpuViewOps
from minidl.backends.ndarray.float_ops import NdArrayFloatOps
from minidl.backends.ndarray.module_ops import NdArrayModuleOps


class NdArray(CpuHostOps, CpuViewOps, CpuIntOps, CpuBoolOps, NdArrayFloatOps, NdArrayModuleOps, Backend):
    """Every required op of the protocol in NumPy; every default op left to the protocol.

    Primitives are ``np.ndarray`` (float16 is stored as float16 and computed in float32); the
    device is ``Device.ndarray()``. Host data, devices, the seeded streams and the int/bool ops
    come from :mod:`minidl.backends.cpu_common`, the views of every kind from
    :mod:`minidl.backends.cpu_views`, both shared with Flex.
    """

    name = "ndarray"
