"""``CpuViewOps``: the pure layout ops of every tensor kind, written once for both CPU backends.

``reshape``, ``swap_dims``, ``permute``, ``flip``, ``expand`` and ``slice`` move no element:
NumPy returns a view with new shape and strides (negative along a flip, zero along an
expanded dim), as burn-flex's strided tensors do (``layout.rs``). A primitive is a plain
``np.ndarray`` on both backends and treated as an immutable value, so a view is as good as a
copy. This class is the one place those ops are written; NdArray and Flex inherit it.

A reshape calls the array's ``reshape`` method, which ``np.reshape`` wraps (same view, copy
and errors; the wrapper cost ~0.4 us warm and ~3 us with the caches cold, and the loss reshapes
its [128] targets to [128, 1] every step).

``float_reshape`` of a view NumPy cannot reshape in place copies (NumPy's own copy); Flex
overrides that one op to copy with its numba copy kernel instead. ``expand`` checks the size
of the view it makes (:func:`~minidl.backend.limits.check_size`): the view costs nothing, but
the first op that reads it writes a result that large. Each kind keeps its own op
(``float_permute``, ``int_permute``, ``bool_permute``), as burn's traits do, so a trace and
``debug.implementations`` name the op that ran.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backend.limits import check_size

Shape = tuple[int, ...]


class CpuViewOps:
    """Views for float, int and bool primitives (``np.reshape``, ``np.swapaxes``, ...)."""

    # ----- float ------------------------------------------------------------------------------
    @classmethod
    def float_reshape(cls, tensor, shape: Shape):
        """A view when the strides allow it, else a NumPy copy reshaped."""
        return tensor.reshape(tuple(shape))

    @classmethod
    def float_swap_dims(cls, tensor, dim1: int, dim2: int):
        return np.swapaxes(tensor, dim1, dim2)

    @classmethod
    def float_permute(cls, tensor, axes: Sequence[int]):
        return np.transpose(tensor, tuple(axes))

    @classmethod
    def float_flip(cls, tensor, axes: Sequence[int]):
        """A view with negative strides along ``axes``."""
        return np.flip(tensor, axis=tuple(axes))

    @classmethod
    def float_expand(cls, tensor, shape: Shape):
        """A broadcast view (stride 0 along grown and new dims)."""
        check_size("float_expand", shape, tensor.dtype)
        return np.broadcast_to(tensor, tuple(shape))

    @classmethod
    def float_slice(cls, tensor, slices: Sequence[slice]):
        return tensor[tuple(slices)]

    # ----- int --------------------------------------------------------------------------------
    @classmethod
    def int_reshape(cls, tensor, shape: Shape):
        return tensor.reshape(tuple(shape))

    @classmethod
    def int_swap_dims(cls, tensor, dim1: int, dim2: int):
        return np.swapaxes(tensor, dim1, dim2)

    @classmethod
    def int_permute(cls, tensor, axes: Sequence[int]):
        return np.transpose(tensor, tuple(axes))

    @classmethod
    def int_flip(cls, tensor, axes: Sequence[int]):
        return np.flip(tensor, axis=tuple(axes))

    @classmethod
    def int_expand(cls, tensor, shape: Shape):
        check_size("int_expand", shape, tensor.dtype)
        return np.broadcast_to(tensor, tuple(shape))

    @classmethod
    def int_slice(cls, tensor, slices: Sequence[slice]):
        return tensor[tuple(slices)]

    # ----- bool -------------------------------------------------------------------------------
    @classmethod
    def bool_reshape(cls, tensor, shape: Shape):
        return tensor.reshape(tuple(shape))

    @classmethod
    def bool_swap_dims(cls, tensor, dim1: int, dim2: int):
        return np.swapaxes(tensor, dim1, dim2)

    @classmethod
    def bool_permute(cls, tensor, axes: Sequence[int]):
        return np.transpose(tensor, tuple(axes))

    @classmethod
    def bool_flip(cls, tensor, axes: Sequence[int]):
        return np.flip(tensor, axis=tuple(axes))

    @classmethod
    def bool_expand(cls, tensor, shape: Shape):
        check_size("bool_expand", shape, tensor.dtype)
        return np.broadcast_to(tensor, tuple(shape))

    @classmethod
    def bool_slice(cls, tensor, slices: Sequence[slice]):
        return tensor[tuple(slices)]
