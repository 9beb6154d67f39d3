"""Autodiff's bool ops: each one is the inner backend's (burn-autodiff ``ops/bool_tensor.rs``).

Bool tensors are the inner backend's primitives on an autodiff device, as in burn; every op
calls ``B``'s. A ``device`` argument is handed down as the inner device, and
``bool_into_float`` wraps its result as an untracked ``AutodiffTensor``. A test checks that
every ``BoolTensorOps`` op is defined here.
"""

from __future__ import annotations

from minidl.autodiff.ops.base import AutodiffOpsBase, inner_device
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend.dtype import DType


class AutodiffBoolOps(AutodiffOpsBase):
    """Bool ops of ``Autodiff[B]``: each one calls ``B``'s."""

    @classmethod
    def bool_from_data(cls, data, device):
        return cls._inner.bool_from_data(data, inner_device(device))

    @classmethod
    def bool_into_data(cls, tensor):
        return cls._inner.bool_into_data(tensor)

    @classmethod
    def bool_device(cls, tensor):
        return cls._inner.bool_device(tensor)

    @classmethod
    def bool_to_device(cls, tensor, device):
        return cls._inner.bool_to_device(tensor, inner_device(device))

    @classmethod
    def bool_into_int(cls, tensor, dtype):
        return cls._inner.bool_into_int(tensor, dtype)

    @classmethod
    def bool_into_float(cls, tensor, dtype=DType.F32):
        return AutodiffTensor.untracked(cls._inner.bool_into_float(tensor, dtype))

    @classmethod
    def bool_not(cls, tensor):
        return cls._inner.bool_not(tensor)

    @classmethod
    def bool_and(cls, lhs, rhs):
        return cls._inner.bool_and(lhs, rhs)

    @classmethod
    def bool_or(cls, lhs, rhs):
        return cls._inner.bool_or(lhs, rhs)

    @classmethod
    def bool_equal(cls, lhs, rhs):
        return cls._inner.bool_equal(lhs, rhs)

    @classmethod
    def bool_xor(cls, lhs, rhs):
        return cls._inner.bool_xor(lhs, rhs)

    @classmethod
    def bool_reshape(cls, tensor, shape):
        return cls._inner.bool_reshape(tensor, shape)

    @classmethod
    def bool_swap_dims(cls, tensor, dim1, dim2):
        return cls._inner.bool_swap_dims(tensor, dim1, dim2)

    @classmethod
    def bool_permute(cls, tensor, axes):
        return cls._inner.bool_permute(tensor, axes)

    @classmethod
    def bool_flip(cls, tensor, axes):
        return cls._inner.bool_flip(tensor, axes)

    @classmethod
    def bool_expand(cls, tensor, shape):
        return cls._inner.bool_expand(tensor, shape)

    @classmethod
    def bool_slice(cls, tensor, slices):
        return cls._inner.bool_slice(tensor, slices)

    @classmethod
    def bool_cat(cls, tensors, dim):
        return cls._inner.bool_cat(tensors, dim)

    @classmethod
    def bool_any(cls, tensor):
        return cls._inner.bool_any(tensor)

    @classmethod
    def bool_all(cls, tensor):
        return cls._inner.bool_all(tensor)
