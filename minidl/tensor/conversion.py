"""Reading tensors back and converting them (burn-tensor ``into_data``, ``into_scalar``, ``cast``,
``int``/``float``/``bool``, ``to_device``, ``Display``).
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from minidl.backend.base import TensorData
from minidl.backend.dtype import DEFAULT_FLOAT, DType, Kind
from minidl.dispatch import Device, Dispatch, backend_for
from minidl.tensor.base import TensorBase, kind_name
from minidl.tensor.check import fail, fmt_shape


class ConversionOps(TensorBase):
    """Host read-back, dtype and kind conversion, device moves, printing."""

    __slots__ = ()

    # ----- host data ------------------------------------------------------------------------
    def into_data(self) -> TensorData:
        """The values on the host (burn's ``into_data``)."""
        op = self._by_kind(float=Dispatch.float_into_data, int=Dispatch.int_into_data,
                           bool=Dispatch.bool_into_data)
        return op(self.primitive)

    to_data = into_data

    def to_numpy(self) -> np.ndarray:
        """A NumPy array holding a copy of the values (changing it never changes the tensor):
        every backend's ``*_into_data`` returns a copy of its own (the protocol's contract,
        ``tests/backend/test_float_data.py``), so nothing is copied here."""
        return self.into_data().array

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def tolist(self) -> list:
        """The values as nested Python lists."""
        return self.to_numpy().tolist()

    def into_scalar(self) -> float | int | bool:
        """The single value of a one-element tensor, as a Python number (burn's ``into_scalar``)."""
        if self.numel() != 1:
            fail("into_scalar", "Only a tensor with exactly one element can become a scalar.",
                 f"Expected 1 element, found shape {fmt_shape(self.shape)} ({self.numel()} elements).")
        return self.to_numpy().reshape(()).item()

    item = into_scalar

    def __float__(self) -> float:
        return float(self.into_scalar())

    def __int__(self) -> int:
        return int(self.into_scalar())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise TensorTruthError(
                f"Tensor.__bool__: the truth value of a tensor with {self.numel()} elements "
                f"(shape {fmt_shape(self.shape)}) is ambiguous; use .any() or .all()"
            )
        return bool(self.into_scalar())

    # ----- dtype and kind -------------------------------------------------------------------
    def cast(self, dtype: DType | str) -> Self:
        """The values as ``dtype``: within a kind (float32 → float16) or across kinds
        (float → int truncates, non-zero → true)."""
        try:
            dtype = DType.of(dtype)
        except TypeError as err:
            fail("cast", "Argument dtype is not a minidl dtype.", str(err), kind=True)
        if dtype == self.dtype:
            return self
        if dtype.kind is Kind.FLOAT:
            return self.float(dtype)
        if dtype.kind is Kind.INT:
            return self.int(dtype)
        return self.bool()

    def float(self, dtype: DType | str | None = None) -> Self:
        """A Float tensor (float32 unless ``dtype``); a Float tensor is returned as is."""
        target = DEFAULT_FLOAT if dtype is None else DType.of(dtype)
        if target.kind is not Kind.FLOAT:
            fail("float", "Argument dtype must be a float dtype.", f"Found {target.value}.", kind=True)
        if self.kind is Kind.FLOAT:
            if dtype is None or target == self.dtype:
                return self
            return self._wrap(Dispatch.float_cast(self.primitive, target))
        if self.kind is Kind.INT:
            return self._wrap(Dispatch.int_into_float(self.primitive, target), Kind.FLOAT)
        return self._wrap(Dispatch.bool_into_float(self.primitive, target), Kind.FLOAT)

    def int(self, dtype: DType | str | None = None) -> Self:
        """An Int tensor (the device's default int unless ``dtype``: int64 on the CPU devices,
        int32 on ``Device.wgpu()``); floats are truncated toward zero."""
        target = self.device.settings().int_dtype if dtype is None else DType.of(dtype)
        if target.kind is not Kind.INT:
            fail("int", "Argument dtype must be an int dtype.", f"Found {target.value}.", kind=True)
        if self.kind is Kind.INT:
            if dtype is None or target == self.dtype:
                return self
            return self._wrap(Dispatch.int_cast(self.primitive, target))
        if self.kind is Kind.FLOAT:
            return self._wrap(Dispatch.float_into_int(self.primitive, target), Kind.INT)
        return self._wrap(Dispatch.bool_into_int(self.primitive, target), Kind.INT)

    def bool(self) -> Self:
        """A Bool tensor: non-zero is true."""
        if self.kind is Kind.BOOL:
            return self
        if self.kind is Kind.FLOAT:
            return self._wrap(Dispatch.float_not_equal_elem(self.primitive, 0.0), Kind.BOOL)
        return self._wrap(Dispatch.bool_not(Dispatch.int_equal_elem(self.primitive, 0)), Kind.BOOL)

    # ----- identity and devices -------------------------------------------------------------
    def clone(self) -> Self:
        """Another handle on the same values (tensors are immutable, so nothing is copied: burn's
        ``clone`` is a reference-count bump too)."""
        return self._wrap(self.primitive)

    def to_device(self, device: Device) -> Self:
        """The tensor on ``device`` (between a device and its autodiff twin only the graph changes)."""
        if not isinstance(device, Device):
            fail("to_device", "Argument device must be a Device.", f"Found {device!r}.", kind=True)
        op = self._by_kind(float=Dispatch.float_to_device, int=Dispatch.int_to_device,
                           bool=Dispatch.bool_to_device)
        return self._wrap(op(self.primitive, device))

    # ----- printing -------------------------------------------------------------------------
    def __repr__(self) -> str:
        data = np.array2string(self.to_numpy(), separator=", ", threshold=200, edgeitems=3)
        try:
            backend = backend_for(self.device).name
        except Exception:  # a backend that can't load still prints its tensors' metadata
            backend = "?"
        return (
            "Tensor {\n"
            f"  data:\n{data},\n"
            f"  shape:  {list(self.shape)},\n"
            f"  device:  {self.device},\n"
            f'  backend:  "{backend}",\n'
            f'  kind:  "{kind_name(self.kind)}",\n'
            f'  dtype:  "{self.dtype.value}",\n'
            "}"
        )

    __str__ = __repr__


class TensorTruthError(ValueError):
    """``bool(t)`` on a tensor with more than one element (torch raises the same)."""
