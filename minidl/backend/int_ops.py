"""``IntTensorOps``: integer tensor ops of the backend protocol (burn-backend ``ops/int_tensor.rs``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backend.base import TensorData, default, required
from minidl.backend.dtype import DType
from minidl.backend.limits import check_size, repeat_shapes

Shape = tuple[int, ...]


class IntTensorOps:
    """Int tensor ops. On an autodiff device int tensors stay on the inner backend (as burn)."""

    @required
    def int_from_data(cls, data: np.ndarray, device):
        """An int primitive holding a copy of ``data``."""

    @required
    def int_into_data(cls, tensor) -> TensorData:
        """Read back to the host, as an array of its own (a copy the caller may write to)."""

    @required
    def int_device(cls, tensor):
        """The device of an int primitive."""

    @required
    def int_to_device(cls, tensor, device):
        """Move to another device of the same backend."""

    @default
    def int_zeros(cls, shape: Shape, dtype: DType, device):
        check_size("int_zeros", shape, dtype.numpy)
        return cls.int_from_data(np.zeros(shape, dtype=dtype.numpy), device)

    @default
    def int_arange(cls, start: int, end: int, step: int, dtype: DType, device):
        if step == 0:
            raise ValueError("int_arange: expected a non-zero step, found 0")
        check_size("int_arange", (max(0, -(-(end - start) // step)),), dtype.numpy)
        return cls.int_from_data(np.arange(start, end, step, dtype=dtype.numpy), device)

    @required
    def int_random(cls, shape: Shape, low: int, high: int, dtype: DType, device):
        """Uniform integers in [low, high) from the device's seeded generator."""

    @required
    def int_cast(cls, tensor, dtype: DType):
        """Convert to another int dtype."""

    @required
    def int_into_float(cls, tensor, dtype: DType):
        """Convert to a float primitive."""

    @required
    def int_add(cls, lhs, rhs):
        """``lhs + rhs`` with broadcasting."""

    @required
    def int_sub(cls, lhs, rhs):
        """``lhs - rhs``."""

    @required
    def int_mul(cls, lhs, rhs):
        """``lhs * rhs``."""

    @required
    def int_div(cls, lhs, rhs):
        """Integer division rounding toward zero (as burn)."""

    @required
    def int_remainder(cls, lhs, rhs):
        """Remainder with the sign of the divisor."""

    @required
    def int_add_scalar(cls, lhs, rhs: int):
        """``lhs + rhs``."""

    @required
    def int_mul_scalar(cls, lhs, rhs: int):
        """``lhs * rhs``."""

    @default
    def int_sub_scalar(cls, lhs, rhs: int):
        return cls.int_add_scalar(lhs, -rhs)

    @default
    def int_neg(cls, tensor):
        return cls.int_mul_scalar(tensor, -1)

    @required
    def int_abs(cls, tensor):
        """Absolute value."""

    @required
    def int_equal(cls, lhs, rhs):
        """``lhs == rhs`` → bool primitive."""

    @required
    def int_greater(cls, lhs, rhs):
        """``lhs > rhs``."""

    @required
    def int_lower(cls, lhs, rhs):
        """``lhs < rhs``."""

    @required
    def int_equal_elem(cls, lhs, rhs: int):
        """``lhs == rhs`` for a scalar."""

    @required
    def int_greater_elem(cls, lhs, rhs: int):
        """``lhs > rhs`` for a scalar."""

    @required
    def int_lower_elem(cls, lhs, rhs: int):
        """``lhs < rhs`` for a scalar."""

    @required
    def int_sum(cls, tensor):
        """Sum of all elements, shape ``[1]``."""

    @required
    def int_sum_dim(cls, tensor, dim: int):
        """Sum along ``dim`` kept with size 1."""

    @required
    def int_max_dim(cls, tensor, dim: int):
        """Maximum along ``dim`` kept with size 1."""

    @required
    def int_min_dim(cls, tensor, dim: int):
        """Minimum along ``dim`` kept with size 1."""

    @required
    def int_argmax(cls, tensor, dim: int):
        """Index of the maximum along ``dim``."""

    @required
    def int_argmin(cls, tensor, dim: int):
        """Index of the minimum along ``dim``."""

    @required
    def int_reshape(cls, tensor, shape: Shape):
        """New shape."""

    @required
    def int_swap_dims(cls, tensor, dim1: int, dim2: int):
        """Exchange two axes."""

    @required
    def int_permute(cls, tensor, axes: Sequence[int]):
        """Reorder axes."""

    @required
    def int_flip(cls, tensor, axes: Sequence[int]):
        """Reverse along ``axes``."""

    @required
    def int_expand(cls, tensor, shape: Shape):
        """Broadcast to ``shape``."""

    @required
    def int_slice(cls, tensor, slices: Sequence[slice]):
        """A sub-tensor."""

    @required
    def int_slice_assign(cls, tensor, slices: Sequence[slice], value):
        """Replace a region."""

    @required
    def int_cat(cls, tensors: Sequence, dim: int):
        """Concatenate along ``dim``."""

    @required
    def int_gather(cls, dim: int, tensor, indices):
        """torch.gather along ``dim``."""

    @required
    def int_scatter(cls, dim: int, tensor, indices, value):
        """Add ``value`` at ``indices`` along ``dim``."""

    @required
    def int_select(cls, tensor, dim: int, indices):
        """index_select along ``dim``."""

    @required
    def int_select_assign(cls, tensor, dim: int, indices, value):
        """Add ``value`` into the slices ``indices`` along ``dim``."""

    @required
    def int_mask_where(cls, tensor, mask, value):
        """Where ``mask``, take ``value``."""

    @required
    def int_mask_fill(cls, tensor, mask, value: int):
        """Where ``mask``, put ``value``."""

    @default
    def int_repeat_dim(cls, tensor, dim: int, times: int):
        # one copy, as float_repeat_dim
        shapes = repeat_shapes("int_repeat_dim", tensor.shape, dim, times, tensor.dtype)
        return cls.int_reshape(cls.int_expand(cls.int_reshape(tensor, shapes[0]), shapes[1]), shapes[2])
