"""``BoolTensorOps``: boolean tensor ops of the backend protocol (burn-backend ``ops/bool_tensor.rs``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backend.base import TensorData, default, required
from minidl.backend.dtype import DType

Shape = tuple[int, ...]


class BoolTensorOps:
    """Bool tensor ops (masks). Like int tensors they stay on the inner backend under autodiff."""

    @required
    def bool_from_data(cls, data: np.ndarray, device):
        """A bool primitive holding a copy of ``data``."""

    @required
    def bool_into_data(cls, tensor) -> TensorData:
        """Read back to the host, as an array of its own (a copy the caller may write to)."""

    @required
    def bool_device(cls, tensor):
        """The device of a bool primitive."""

    @required
    def bool_to_device(cls, tensor, device):
        """Move to another device of the same backend."""

    @required
    def bool_into_int(cls, tensor, dtype: DType):
        """True → 1, False → 0."""

    @required
    def bool_into_float(cls, tensor, dtype: DType = DType.F32):
        """True → 1.0, False → 0.0."""

    @required
    def bool_not(cls, tensor):
        """Logical not."""

    @required
    def bool_and(cls, lhs, rhs):
        """Logical and, broadcasting."""

    @required
    def bool_or(cls, lhs, rhs):
        """Logical or, broadcasting."""

    @required
    def bool_equal(cls, lhs, rhs):
        """Element-wise equality."""

    @default
    def bool_xor(cls, lhs, rhs):
        return cls.bool_not(cls.bool_equal(lhs, rhs))

    @required
    def bool_reshape(cls, tensor, shape: Shape):
        """New shape."""

    @required
    def bool_swap_dims(cls, tensor, dim1: int, dim2: int):
        """Exchange two axes."""

    @required
    def bool_permute(cls, tensor, axes: Sequence[int]):
        """Reorder axes."""

    @required
    def bool_flip(cls, tensor, axes: Sequence[int]):
        """Reverse along ``axes``."""

    @required
    def bool_expand(cls, tensor, shape: Shape):
        """Broadcast to ``shape``."""

    @required
    def bool_slice(cls, tensor, slices: Sequence[slice]):
        """A sub-tensor."""

    @required
    def bool_cat(cls, tensors: Sequence, dim: int):
        """Concatenate along ``dim``."""

    @required
    def bool_any(cls, tensor):
        """Whether any element is true, as a shape-[1] bool primitive."""

    @required
    def bool_all(cls, tensor):
        """Whether all elements are true, as a shape-[1] bool primitive."""
