"""What the two CPU backends share: host data and devices, the random streams, and NumPy
implementations of every int and bool op.

burn's ndarray and flex crates each write their own int and bool ops; here both CPU backends
inherit one NumPy version, because int and bool tensors (indices, masks) are not what the book
teaches. A CPU backend is assembled from these mixins, the pure layout ops of every kind
(``CpuViewOps``, :mod:`minidl.backends.cpu_views`) and its own float and module ops::

    class NdArray(CpuHostOps, CpuViewOps, CpuIntOps, CpuBoolOps, NdArrayFloatOps, NdArrayModuleOps,
                  Backend)

The mixins are plain classes (they do not subclass the protocol families), so the protocol's
required-op check still finds each op in the backend's own classes.

Conventions (shared by every CPU backend, so Dispatch can mix them):

- Primitives are plain ``np.ndarray``s, treated as immutable values: an op may return a view of
  its input (reshape, slice, expand), and never writes into an input.
- A binary op's result has the dtype of ``lhs``; a scalar operand takes ``lhs``'s dtype.
- Reductions keep the reduced dim with size 1; whole-tensor reductions return shape ``(1,)``.
  An int reduction keeps the input's int dtype (as burn; torch widens sums to int64);
  ``argmax``/``argmin`` return int64.
- ``scatter`` and ``select_assign`` *add* ``value`` (burn's scatter sums duplicates).
- An index outside ``[0, size)`` (negative ones included: NumPy would wrap them) is refused
  with an ``IndexError``, as torch and Flex's kernels do; so is an integer division by zero
  and a max/min/argmax over an empty dim — never a raw NumPy error or a silent wrap.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from minidl.backend import DType, TensorData
from minidl.backend.limits import check_cat, check_size
from minidl.backends.cpu_helpers import (  # noqa: F401  (re-exported: the backends import them from here)
    INDEX_DTYPE,
    Shape,
    cpu_device,
    gather,
    host_copy,
    indices_in_range,
    into_data,
    nonempty_dim,
    nonzero_divisor,
    scatter_add,
    select,
    select_add,
    slice_assign,
    whole,
)

_GENERATORS_LOCK = threading.Lock()


class CpuHostOps:
    """Data in and out, devices, and the seeded random streams of a CPU backend.

    Mirrors what burn-ndarray's ``NdArrayDevice`` and its seeded ``StdRng`` do: one device per
    backend (index 0), one ``np.random.Generator`` (PCG64) per device, restarted by ``seed``.
    Unseeded, a device's stream starts from fresh OS entropy. The autodiff twin of a device
    shares its stream (the key ignores autodiff).
    """

    name: ClassVar[str]
    _generators: ClassVar[dict[tuple[str, int], np.random.Generator]] = {}

    @classmethod
    def _device(cls):
        return cpu_device(cls.name)

    @classmethod
    def _same_memory(cls, tensor, device, op: str):
        # every device of a CPU backend shares one memory: moving is a check, not a copy
        if getattr(device, "kind", None) != cls.name:
            raise ValueError(f"{op}: {cls.__name__} cannot place a tensor on {device!r}")
        return tensor

    @classmethod
    def generator(cls, device) -> np.random.Generator:
        """The random stream of ``device`` (created from OS entropy on first use)."""
        key = (cls.name, getattr(device, "index", 0))
        generator = CpuHostOps._generators.get(key)
        if generator is None:
            with _GENERATORS_LOCK:  # NumPy's Generator locks its own draws; creation is ours
                generator = CpuHostOps._generators.setdefault(key, np.random.Generator(np.random.PCG64()))
        return generator

    @classmethod
    def seed(cls, device, seed: int) -> None:
        key = (cls.name, getattr(device, "index", 0))
        with _GENERATORS_LOCK:
            CpuHostOps._generators[key] = np.random.Generator(np.random.PCG64(int(seed)))

    @classmethod
    def float_from_data(cls, data: np.ndarray, device):
        return host_copy(data, "f", "float_from_data")

    @classmethod
    def float_into_data(cls, tensor) -> TensorData:
        if type(tensor) is np.ndarray:  # into_data's common case inline: a call costs ~1 us cold
            return TensorData(tensor.copy())
        return into_data(tensor)

    @classmethod
    def float_device(cls, tensor):
        return cls._device()

    @classmethod
    def float_to_device(cls, tensor, device):
        return cls._same_memory(tensor, device, "float_to_device")

    @classmethod
    def int_from_data(cls, data: np.ndarray, device):
        return host_copy(data, "iu", "int_from_data")

    @classmethod
    def int_into_data(cls, tensor) -> TensorData:
        if type(tensor) is np.ndarray:  # into_data's common case inline: a call costs ~1 us cold
            return TensorData(tensor.copy())
        return into_data(tensor)

    @classmethod
    def int_device(cls, tensor):
        return cls._device()

    @classmethod
    def int_to_device(cls, tensor, device):
        return cls._same_memory(tensor, device, "int_to_device")

    @classmethod
    def bool_from_data(cls, data: np.ndarray, device):
        return host_copy(data, "b", "bool_from_data")

    @classmethod
    def bool_into_data(cls, tensor) -> TensorData:
        if type(tensor) is np.ndarray:  # into_data's common case inline: a call costs ~1 us cold
            return TensorData(tensor.copy())
        return into_data(tensor)

    @classmethod
    def bool_device(cls, tensor):
        return cls._device()

    @classmethod
    def bool_to_device(cls, tensor, device):
        return cls._same_memory(tensor, device, "bool_to_device")

    @classmethod
    def int_random(cls, shape: Shape, low: int, high: int, dtype: DType, device):
        """Uniform integers in ``[low, high)`` from the device's stream."""
        check_size("int_random", shape, dtype.numpy)
        return cls.generator(device).integers(low, high, size=tuple(shape), dtype=dtype.numpy)


# ----- int ops ----------------------------------------------------------------------------------


class CpuIntOps:
    """Every int op of the protocol in NumPy (burn-ndarray's ``int_tensor.rs``, in spirit)."""

    @classmethod
    def int_cast(cls, tensor, dtype: DType):
        return tensor.astype(dtype.numpy)

    @classmethod
    def int_into_float(cls, tensor, dtype: DType):
        return tensor.astype(dtype.numpy)

    # arithmetic: the result keeps lhs's dtype
    @classmethod
    def int_add(cls, lhs, rhs):
        return np.add(lhs, rhs).astype(lhs.dtype, copy=False)

    @classmethod
    def int_sub(cls, lhs, rhs):
        return np.subtract(lhs, rhs).astype(lhs.dtype, copy=False)

    @classmethod
    def int_mul(cls, lhs, rhs):
        return np.multiply(lhs, rhs).astype(lhs.dtype, copy=False)

    @classmethod
    def int_div(cls, lhs, rhs):
        """Division rounding toward zero (burn, C, torch's ``rounding_mode='trunc'``).

        NumPy's ``//`` rounds toward minus infinity: where the signs differ and the division is
        not exact, step the floor quotient one up. (Going through floats would lose int64 digits.)
        """
        nonzero_divisor("int_div", rhs)
        lhs, rhs = np.broadcast_arrays(lhs, rhs)
        floor = np.floor_divide(lhs, rhs)
        inexact = np.remainder(lhs, rhs) != 0
        return (floor + (inexact & ((lhs < 0) != (rhs < 0)))).astype(lhs.dtype, copy=False)

    @classmethod
    def int_remainder(cls, lhs, rhs):
        """Remainder with the sign of the divisor: NumPy's ``remainder`` is torch.remainder."""
        nonzero_divisor("int_remainder", rhs)
        return np.remainder(lhs, rhs).astype(lhs.dtype, copy=False)

    @classmethod
    def int_add_scalar(cls, lhs, rhs: int):
        return np.add(lhs, rhs).astype(lhs.dtype, copy=False)

    @classmethod
    def int_mul_scalar(cls, lhs, rhs: int):
        return np.multiply(lhs, rhs).astype(lhs.dtype, copy=False)

    @classmethod
    def int_abs(cls, tensor):
        return np.abs(tensor)

    # comparisons → bool primitives
    @classmethod
    def int_equal(cls, lhs, rhs):
        return np.equal(lhs, rhs)

    @classmethod
    def int_greater(cls, lhs, rhs):
        return np.greater(lhs, rhs)

    @classmethod
    def int_lower(cls, lhs, rhs):
        return np.less(lhs, rhs)

    @classmethod
    def int_equal_elem(cls, lhs, rhs: int):
        return np.equal(lhs, rhs)

    @classmethod
    def int_greater_elem(cls, lhs, rhs: int):
        return np.greater(lhs, rhs)

    @classmethod
    def int_lower_elem(cls, lhs, rhs: int):
        return np.less(lhs, rhs)

    # reductions: keep the dtype and the reduced dim
    @classmethod
    def int_sum(cls, tensor):
        return whole(np.sum(tensor, dtype=tensor.dtype), tensor.dtype)

    @classmethod
    def int_sum_dim(cls, tensor, dim: int):
        return np.sum(tensor, axis=dim, keepdims=True, dtype=tensor.dtype)

    @classmethod
    def int_max_dim(cls, tensor, dim: int):
        nonempty_dim("int_max_dim", tensor, dim)
        return np.max(tensor, axis=dim, keepdims=True)

    @classmethod
    def int_min_dim(cls, tensor, dim: int):
        nonempty_dim("int_min_dim", tensor, dim)
        return np.min(tensor, axis=dim, keepdims=True)

    @classmethod
    def int_argmax(cls, tensor, dim: int):
        nonempty_dim("int_argmax", tensor, dim)
        return np.argmax(tensor, axis=dim, keepdims=True).astype(INDEX_DTYPE, copy=False)

    @classmethod
    def int_argmin(cls, tensor, dim: int):
        nonempty_dim("int_argmin", tensor, dim)
        return np.argmin(tensor, axis=dim, keepdims=True).astype(INDEX_DTYPE, copy=False)

    # layout that moves elements (the views are CpuViewOps')
    @classmethod
    def int_slice_assign(cls, tensor, slices: Sequence[slice], value):
        return slice_assign(tensor, slices, value)

    @classmethod
    def int_cat(cls, tensors: Sequence, dim: int):
        check_cat("int_cat", tensors, dim)
        return np.concatenate(list(tensors), axis=dim).astype(tensors[0].dtype, copy=False)

    @classmethod
    def int_gather(cls, dim: int, tensor, indices):
        return gather(dim, tensor, indices, "int_gather")

    @classmethod
    def int_scatter(cls, dim: int, tensor, indices, value):
        return scatter_add(dim, tensor, indices, value, "int_scatter")

    @classmethod
    def int_select(cls, tensor, dim: int, indices):
        return select(tensor, dim, indices, "int_select")

    @classmethod
    def int_select_assign(cls, tensor, dim: int, indices, value):
        return select_add(tensor, dim, indices, value, "int_select_assign")

    @classmethod
    def int_mask_where(cls, tensor, mask, value):
        return np.where(mask, value, tensor).astype(tensor.dtype, copy=False)

    @classmethod
    def int_mask_fill(cls, tensor, mask, value: int):
        return np.where(mask, value, tensor).astype(tensor.dtype, copy=False)


# ----- bool ops ---------------------------------------------------------------------------------


class CpuBoolOps:
    """Every bool op of the protocol in NumPy (burn-ndarray's ``bool_tensor.rs``, in spirit)."""

    @classmethod
    def bool_into_int(cls, tensor, dtype: DType):
        return tensor.astype(dtype.numpy)

    @classmethod
    def bool_into_float(cls, tensor, dtype: DType = DType.F32):
        return tensor.astype(dtype.numpy)

    @classmethod
    def bool_not(cls, tensor):
        return np.logical_not(tensor)

    @classmethod
    def bool_and(cls, lhs, rhs):
        return np.logical_and(lhs, rhs)

    @classmethod
    def bool_or(cls, lhs, rhs):
        return np.logical_or(lhs, rhs)

    @classmethod
    def bool_equal(cls, lhs, rhs):
        return np.equal(lhs, rhs)

    @classmethod
    def bool_cat(cls, tensors: Sequence, dim: int):
        check_cat("bool_cat", tensors, dim)
        return np.concatenate(list(tensors), axis=dim)

    @classmethod
    def bool_any(cls, tensor):
        return whole(np.any(tensor), np.bool_)

    @classmethod
    def bool_all(cls, tensor):
        return whole(np.all(tensor), np.bool_)
