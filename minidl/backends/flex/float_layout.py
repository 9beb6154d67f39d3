"""Flex's float layout ops (burn-flex's layout section of ``ops/tensor.rs``).

Pure layout ops only make views, as burn-flex's strided tensors do: ``reshape`` (when the
memory allows it), ``swap_dims``, ``permute``, ``flip``, ``expand`` and ``slice`` return NumPy
views of their input and copy nothing. Everything that moves elements runs a numba kernel:
``reshape`` of a view that cannot be reshaped in place, ``slice_assign`` and ``cat`` (the copy
kernel, :mod:`~minidl.backends.flex.kernels.copy`), ``gather``, ``scatter``, ``select`` and
``select_assign`` (:mod:`~minidl.backends.flex.kernels.indexing`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backends.flex.kernels import copy, indexing
from minidl.backends.flex.kernels.copy import contiguous

Shape = tuple[int, ...]


class FlexLayoutOps:
    """Views where the layout allows, numba copy and index kernels where elements move."""

    @classmethod
    def float_reshape(cls, tensor, shape: Shape):
        """A view when the strides allow it, else a contiguous copy (copy kernel) reshaped."""
        return reshape(tensor, shape)

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
        return np.broadcast_to(tensor, tuple(shape))

    @classmethod
    def float_slice(cls, tensor, slices: Sequence[slice]):
        return tensor[tuple(slices)]

    @classmethod
    def float_slice_assign(cls, tensor, slices: Sequence[slice], value):
        out = copy.cast(tensor, tensor.dtype)
        copy.copy_into(value, out[tuple(slices)])
        return out

    @classmethod
    def float_cat(cls, tensors: Sequence, dim: int):
        return copy.cat(list(tensors), dim, tensors[0].dtype)

    @classmethod
    def float_repeat_dim(cls, tensor, dim: int, times: int):
        return copy.cat([tensor] * times, dim)

    @classmethod
    def float_gather(cls, dim: int, tensor, indices):
        """torch.gather; ``indices`` may be smaller than ``tensor`` outside ``dim`` (the tensor is
        then read through a cropped view)."""
        src = contiguous(tensor[_region(indices.shape, dim)])
        return _in_compute_dtype(indexing.gather, dim, src, contiguous(indices))

    @classmethod
    def float_scatter(cls, dim: int, tensor, indices, value):
        """``value`` added at ``indices`` along ``dim`` (torch's scatter_add, burn's scatter)."""
        region = _region(indices.shape, dim)
        value = contiguous(value[tuple(slice(0, n) for n in indices.shape)])
        if all(r == slice(None) for r in region):
            return _in_compute_dtype(indexing.scatter_add, dim, tensor, indices, value)
        part = _in_compute_dtype(indexing.scatter_add, dim, tensor[region], indices, value)
        out = copy.cast(tensor, tensor.dtype)
        copy.copy_into(part, out[region])
        return out

    @classmethod
    def float_select(cls, tensor, dim: int, indices):
        return _in_compute_dtype(lambda x: indexing.select(x, dim, indices), contiguous(tensor))

    @classmethod
    def float_select_assign(cls, tensor, dim: int, indices, value):
        return _in_compute_dtype(lambda x, v: indexing.select_add(x, dim, indices, v), tensor, value)


def _region(index_shape: Shape, dim: int) -> tuple[slice, ...]:
    """The part of a tensor an index tensor of ``index_shape`` addresses (all of ``dim``)."""
    return tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_shape))


def _in_compute_dtype(fn, *args):
    """Run an index kernel. numba has no float16: float16 arrays go in as float32, and when the
    tensor (the first array argument) is float16 the result comes back as float16 (exact for
    the copies, one rounding for the sums)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if not any(a.dtype == np.float16 for a in arrays):
        return fn(*args)
    lifted = [copy.cast(a, np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a
              for a in args]
    out = fn(*lifted)
    return copy.cast(out, np.float16) if arrays[0].dtype == np.float16 else out


def reshape(tensor: np.ndarray, shape: Shape) -> np.ndarray:
    """``tensor`` with a new shape: a view if NumPy can make one, else copy first (numba)."""
    shape = tuple(shape)
    try:
        return np.reshape(tensor, shape, copy=False)
    except ValueError:
        if int(np.prod(shape, dtype=np.int64)) != tensor.size:
            raise ValueError(f"reshape: cannot reshape {tensor.shape} into {shape}") from None
        return copy.contiguous(tensor).reshape(shape)
