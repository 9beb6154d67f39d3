"""Autodiff's int ops: each one is the inner backend's (burn-autodiff ``ops/int_tensor.rs``).

Int tensors are never differentiated, so on an autodiff device they are the inner backend's
primitives and every op is a plain call of ``B``'s op, written out one by one as burn writes
them. Two rules: a ``device`` argument is handed down as the inner device, and
``int_into_float`` wraps its result as an untracked ``AutodiffTensor`` (a float on the
autodiff side). A test checks that every ``IntTensorOps`` op is defined here, so that none
falls back to a protocol default running on ``Autodiff[B]``.
"""

from __future__ import annotations

from minidl.autodiff.ops.base import AutodiffOpsBase, inner_device
from minidl.autodiff.tensor import AutodiffTensor


class AutodiffIntOps(AutodiffOpsBase):
    """Int ops of ``Autodiff[B]``: each one calls ``B``'s."""

    @classmethod
    def int_from_data(cls, data, device):
        return cls._inner.int_from_data(data, inner_device(device))

    @classmethod
    def int_into_data(cls, tensor):
        return cls._inner.int_into_data(tensor)

    @classmethod
    def int_device(cls, tensor):
        return cls._inner.int_device(tensor)

    @classmethod
    def int_to_device(cls, tensor, device):
        return cls._inner.int_to_device(tensor, inner_device(device))

    @classmethod
    def int_zeros(cls, shape, dtype, device):
        return cls._inner.int_zeros(shape, dtype, inner_device(device))

    @classmethod
    def int_arange(cls, start, end, step, dtype, device):
        return cls._inner.int_arange(start, end, step, dtype, inner_device(device))

    @classmethod
    def int_random(cls, shape, low, high, dtype, device):
        return cls._inner.int_random(shape, low, high, dtype, inner_device(device))

    @classmethod
    def int_cast(cls, tensor, dtype):
        return cls._inner.int_cast(tensor, dtype)

    @classmethod
    def int_into_float(cls, tensor, dtype):
        return AutodiffTensor.untracked(cls._inner.int_into_float(tensor, dtype))

    @classmethod
    def int_add(cls, lhs, rhs):
        return cls._inner.int_add(lhs, rhs)

    @classmethod
    def int_sub(cls, lhs, rhs):
        return cls._inner.int_sub(lhs, rhs)

    @classmethod
    def int_mul(cls, lhs, rhs):
        return cls._inner.int_mul(lhs, rhs)

    @classmethod
    def int_div(cls, lhs, rhs):
        return cls._inner.int_div(lhs, rhs)

    @classmethod
    def int_remainder(cls, lhs, rhs):
        return cls._inner.int_remainder(lhs, rhs)

    @classmethod
    def int_add_scalar(cls, lhs, rhs):
        return cls._inner.int_add_scalar(lhs, rhs)

    @classmethod
    def int_mul_scalar(cls, lhs, rhs):
        return cls._inner.int_mul_scalar(lhs, rhs)

    @classmethod
    def int_sub_scalar(cls, lhs, rhs):
        return cls._inner.int_sub_scalar(lhs, rhs)

    @classmethod
    def int_neg(cls, tensor):
        return cls._inner.int_neg(tensor)

    @classmethod
    def int_abs(cls, tensor):
        return cls._inner.int_abs(tensor)

    @classmethod
    def int_equal(cls, lhs, rhs):
        return cls._inner.int_equal(lhs, rhs)

    @classmethod
    def int_greater(cls, lhs, rhs):
        return cls._inner.int_greater(lhs, rhs)

    @classmethod
    def int_lower(cls, lhs, rhs):
        return cls._inner.int_lower(lhs, rhs)

    @classmethod
    def int_equal_elem(cls, lhs, rhs):
        return cls._inner.int_equal_elem(lhs, rhs)

    @classmethod
    def int_greater_elem(cls, lhs, rhs):
        return cls._inner.int_greater_elem(lhs, rhs)

    @classmethod
    def int_lower_elem(cls, lhs, rhs):
        return cls._inner.int_lower_elem(lhs, rhs)

    @classmethod
    def int_sum(cls, tensor):
        return cls._inner.int_sum(tensor)

    @classmethod
    def int_sum_dim(cls, tensor, dim):
        return cls._inner.int_sum_dim(tensor, dim)

    @classmethod
    def int_max_dim(cls, tensor, dim):
        return cls._inner.int_max_dim(tensor, dim)

    @classmethod
    def int_min_dim(cls, tensor, dim):
        return cls._inner.int_min_dim(tensor, dim)

    @classmethod
    def int_argmax(cls, tensor, dim):
        return cls._inner.int_argmax(tensor, dim)

    @classmethod
    def int_argmin(cls, tensor, dim):
        return cls._inner.int_argmin(tensor, dim)

    @classmethod
    def int_reshape(cls, tensor, shape):
        return cls._inner.int_reshape(tensor, shape)

    @classmethod
    def int_swap_dims(cls, tensor, dim1, dim2):
        return cls._inner.int_swap_dims(tensor, dim1, dim2)

    @classmethod
    def int_permute(cls, tensor, axes):
        return cls._inner.int_permute(tensor, axes)

    @classmethod
    def int_flip(cls, tensor, axes):
        return cls._inner.int_flip(tensor, axes)

    @classmethod
    def int_expand(cls, tensor, shape):
        return cls._inner.int_expand(tensor, shape)

    @classmethod
    def int_slice(cls, tensor, slices):
        return cls._inner.int_slice(tensor, slices)

    @classmethod
    def int_slice_assign(cls, tensor, slices, value):
        return cls._inner.int_slice_assign(tensor, slices, value)

    @classmethod
    def int_cat(cls, tensors, dim):
        return cls._inner.int_cat(tensors, dim)

    @classmethod
    def int_gather(cls, dim, tensor, indices):
        return cls._inner.int_gather(dim, tensor, indices)

    @classmethod
    def int_scatter(cls, dim, tensor, indices, value):
        return cls._inner.int_scatter(dim, tensor, indices, value)

    @classmethod
    def int_select(cls, tensor, dim, indices):
        return cls._inner.int_select(tensor, dim, indices)

    @classmethod
    def int_select_assign(cls, tensor, dim, indices, value):
        return cls._inner.int_select_assign(tensor, dim, indices, value)

    @classmethod
    def int_mask_where(cls, tensor, mask, value):
        return cls._inner.int_mask_where(tensor, mask, value)

    @classmethod
    def int_mask_fill(cls, tensor, mask, value):
        return cls._inner.int_mask_fill(tensor, mask, value)

    @classmethod
    def int_repeat_dim(cls, tensor, dim, times):
        return cls._inner.int_repeat_dim(tensor, dim, times)
