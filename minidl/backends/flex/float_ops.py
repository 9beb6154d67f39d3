"""``FlexFloatOps``: every float op of Flex, assembled from one mixin per family
(burn-flex's ``ops/tensor.rs``).

=========================  ==================================================================
family                     file
=========================  ==================================================================
creation and casts         here (fill and copy kernels)
element-wise math          :mod:`minidl.backends.flex.float_math`
matmul                     :mod:`minidl.backends.flex.float_matmul`
reductions                 :mod:`minidl.backends.flex.float_reduce`
layout and indexing        :mod:`minidl.backends.flex.float_layout`
random                     :mod:`minidl.backends.flex.float_random`
=========================  ==================================================================

Data in and out and devices are not here: they come from ``CpuHostOps`` in
:mod:`minidl.backends.cpu_common`, shared with NdArray (host copies are not compute).
"""

from __future__ import annotations

from minidl.backend import DType
from minidl.backends.flex.float_layout import FlexLayoutOps
from minidl.backends.flex.float_math import FlexMathOps
from minidl.backends.flex.float_matmul import matmul
from minidl.backends.flex.float_random import FlexRandomOps
from minidl.backends.flex.float_reduce import FlexReduceOps
from minidl.backends.flex.kernels import copy

Shape = tuple[int, ...]


class FlexFloatOps(FlexMathOps, FlexReduceOps, FlexLayoutOps, FlexRandomOps):
    """Float tensor ops of Flex: each one a call of a numba kernel, or a NumPy view for the
    pure layout ops (see :mod:`minidl.backends.flex.float_layout`)."""

    # ----- creation (the fill kernel; the defaults would build a NumPy array and copy it) -------
    @classmethod
    def float_zeros(cls, shape: Shape, dtype: DType, device):
        return copy.full(tuple(shape), 0.0, dtype.numpy)

    @classmethod
    def float_ones(cls, shape: Shape, dtype: DType, device):
        return copy.full(tuple(shape), 1.0, dtype.numpy)

    @classmethod
    def float_full(cls, shape: Shape, fill_value: float, dtype: DType, device):
        return copy.full(tuple(shape), fill_value, dtype.numpy)

    # ----- casts ----------------------------------------------------------------------------------
    @classmethod
    def float_cast(cls, tensor, dtype: DType):
        """A copy in ``dtype`` (float16 on either side is converted by NumPy: numba has none)."""
        return copy.cast(tensor, dtype.numpy)

    @classmethod
    def float_into_int(cls, tensor, dtype: DType):
        """Truncation toward zero (Rust's ``as``), by the copy kernel."""
        return copy.cast(tensor, dtype.numpy)

    # ----- matmul -----------------------------------------------------------------------------
    @classmethod
    def float_matmul(cls, lhs, rhs):
        """Batched product over the last two dims (batch dims broadcast) on the packed gemm."""
        return matmul(lhs, rhs)
