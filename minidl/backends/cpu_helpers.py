"""NumPy helpers that the CPU backends' ops share: devices, host copies, index checks,
gather/scatter/select on arrays, and the division-by-zero check.

Split out of :mod:`minidl.backends.cpu_common` (which holds the op mixins) so each file keeps
one job; every index helper refuses an index outside ``[0, size)`` with an ``IndexError``
naming the op, as torch and Flex's kernels do (NumPy would wrap a negative one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minidl.backend import Device, DType, TensorData

Shape = tuple[int, ...]
INDEX_DTYPE = np.int64


def cpu_device(kind: str, index: int = 0):
    """The ``Device`` of a CPU backend: every primitive of ``kind`` lives on its device 0."""
    return Device(kind, index)


def host_copy(data: np.ndarray, kinds: str, op: str) -> np.ndarray:
    """A C-contiguous copy of ``data``, after checking its dtype is one minidl has and belongs
    to the tensor kind (``kinds``: NumPy dtype kind letters, e.g. ``"f"`` for float)."""
    array = np.asarray(data)
    if array.dtype.kind not in kinds:
        raise TypeError(f"{op}: expected an array of kind {kinds!r}, found dtype {array.dtype}")
    DType.of(array.dtype)  # refuses dtypes minidl does not have (e.g. uint8), naming them
    return np.array(array, copy=True, order="C")


def into_data(tensor: np.ndarray) -> TensorData:
    """A C-contiguous copy of a primitive, read back to the host (so the caller may write to it).

    A plain ``np.ndarray`` takes its ``copy`` method (C order, as ``np.array(copy=True,
    order="C")``, without the keyword parsing: ~0.2 us warm, ~1 us with the caches cold, the
    loss reads its targets every step); anything else goes through ``np.array``.
    """
    if type(tensor) is np.ndarray:
        return TensorData(tensor.copy())
    return TensorData(np.array(tensor, copy=True, order="C"))


# ----- NumPy helpers shared by the float, int and bool ops of both CPU backends -----------------


def whole(value, dtype) -> np.ndarray:
    """A whole-tensor reduction result: shape ``(1,)``, as burn returns it."""
    return np.asarray(value, dtype=dtype).reshape(1)


def slice_assign(tensor: np.ndarray, slices: Sequence[slice], value: np.ndarray) -> np.ndarray:
    """A copy of ``tensor`` with the region ``slices`` replaced by ``value``."""
    out = tensor.copy()
    out[tuple(slices)] = value
    return out


def indices_in_range(op: str, indices: np.ndarray, size: int) -> np.ndarray:
    """``indices`` as int64 after checking every one is in ``[0, size)``.

    NumPy would wrap a negative index (``-1`` is the last row) and raise its own IndexError for
    a large one; torch's ``gather``/``index_select``/``scatter``/``index_add`` and Flex's kernels
    refuse both, so both CPU backends refuse both, naming the op, the range and what was found.
    """
    idx = np.asarray(indices).astype(INDEX_DTYPE, copy=False)
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        if low < 0 or high >= size:
            raise IndexError(f"{op}: index out of range [0, {size}): found {low}..{high}")
    return idx


def nonempty_dim(op: str, tensor: np.ndarray, dim: int | None = None) -> None:
    """Refuse a max/min/argmax/argmin over nothing (torch: "Expected reduction dim 0 to have
    non-zero size"), before NumPy raises its own "zero-size array" error."""
    size = tensor.size if dim is None else tensor.shape[dim]
    if size == 0:
        where = "the tensor" if dim is None else f"dim {dim}"
        raise ValueError(f"{op}: cannot reduce an empty {where} of shape {tuple(tensor.shape)}: "
                         "expected a non-zero size, found 0")


def gather(dim: int, tensor: np.ndarray, indices: np.ndarray, op: str = "gather") -> np.ndarray:
    """``out[i][j][k] = tensor[i][indices[i][j][k]][k]`` for ``dim = 1`` (torch.gather).

    ``indices`` has the rank of ``tensor`` and may be smaller than it in every dim but ``dim``.
    """
    idx = indices_in_range(op, indices, tensor.shape[dim])
    region = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(indices.shape))
    return np.take_along_axis(tensor[region], idx, axis=dim)


def scatter_add(dim: int, tensor: np.ndarray, indices: np.ndarray, value: np.ndarray,
                op: str = "scatter") -> np.ndarray:
    """A copy of ``tensor`` with ``out[i][indices[i][j]] += value[i][j]`` along ``dim``.

    Duplicated indices accumulate (``np.add.at``), as torch's ``scatter_add`` and burn's scatter.
    """
    out = tensor.copy()
    where = list(np.indices(indices.shape, sparse=True))
    where[dim] = indices_in_range(op, indices, tensor.shape[dim])
    region = tuple(slice(0, n) for n in indices.shape)
    np.add.at(out, tuple(where), value[region])
    return out


def select(tensor: np.ndarray, dim: int, indices: np.ndarray, op: str = "select") -> np.ndarray:
    """Whole slices of ``tensor`` along ``dim`` picked by 1-D ``indices`` (index_select)."""
    return np.take(tensor, indices_in_range(op, indices, tensor.shape[dim]), axis=dim)


def select_add(tensor: np.ndarray, dim: int, indices: np.ndarray, value: np.ndarray,
               op: str = "select_assign") -> np.ndarray:
    """A copy of ``tensor`` with ``value`` added into the slices ``indices`` along ``dim``
    (torch's ``index_add``); repeated indices accumulate."""
    out = tensor.copy()
    where: list[Any] = [slice(None)] * tensor.ndim
    where[dim] = indices_in_range(op, indices, tensor.shape[dim])
    np.add.at(out, tuple(where), value)
    return out


def nonzero_divisor(op: str, rhs) -> None:
    """Integer division by zero has no value (Rust panics, torch raises ZeroDivisionError);
    NumPy would return 0 with a warning."""
    if np.any(np.asarray(rhs) == 0):
        raise ZeroDivisionError(f"{op}: integer division by zero (found a 0 in the divisor)")


# ----- host data, devices, random streams ---------------------------------------------------------
