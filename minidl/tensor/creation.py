"""Creating tensors: ``zeros``, ``ones``, ``full``, ``arange``, ``from_data``, ``random``, ``*_like``
(burn-tensor ``api/base.rs`` and ``api/numeric.rs`` constructors).

As in burn, every constructor takes the ``device`` (``None`` means ``Device.default()``), and
the ``dtype`` picks the kind: ``float32`` (the default) makes a Float tensor, ``int64`` an Int
tensor, ``bool_`` a Bool tensor. An Int tensor made without a dtype takes the device's default
int (:meth:`Device.settings`, burn's per-device ``DeviceSettings``). Host data is only *converted* here (lists → NumPy arrays of
the right dtype); the backend makes the primitive.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from minidl.backend.base import TensorData
from minidl.backend.distribution import Distribution
from minidl.backend.dtype import DEFAULT_FLOAT, DType, Kind
from minidl.dispatch import Device, Dispatch
from minidl.tensor.base import TensorBase, by_kind
from minidl.tensor.check import as_shape, check_sizes, fail


def _device(device: Device | None) -> Device:
    if device is None:
        return Device.default()
    if not isinstance(device, Device):
        raise TypeError(f"device: expected a minidl Device (e.g. Device.ndarray()), found {device!r}")
    return device


def _dtype(ops: str, dtype: Any, default: DType) -> DType:
    if dtype is None:
        return default
    try:
        return DType.of(dtype)
    except TypeError as err:
        fail(ops, "Argument dtype is not a minidl dtype.", str(err), kind=True)
        raise


def _infer_dtype(ops: str, array: np.ndarray, from_python: bool, device: Device) -> DType:
    """The dtype of data given without one: Python ints and floats take the device's default
    int and float (burn's ``TensorCreationOptions::resolve_dtype``: int64 on the CPU devices,
    int32 on ``Device.wgpu()``); a NumPy array keeps its dtype where the device supports it, and
    an array the device cannot hold takes the device's default of its kind (burn converts all
    data to the defaults): int64 or uint8 on ``Device.wgpu()`` its int32, NumPy's float64 its
    float32."""
    settings = device.settings()
    kind = array.dtype.kind
    if kind == "b":
        return DType.BOOL
    if kind in "iu":
        if from_python:
            return settings.int_dtype
        try:
            own = DType.of(array.dtype)
        except TypeError:
            return settings.int_dtype  # int8, uint8, ...: widened to the default int
        return own if settings.supports(own) else settings.int_dtype
    if kind == "f":
        if from_python:
            return settings.float_dtype
        own = _dtype(ops, array.dtype, settings.float_dtype)
        return own if settings.supports(own) else settings.float_dtype
    fail(ops, "Argument data must hold numbers or bools.", f"Found NumPy dtype {array.dtype}.", kind=True)
    raise AssertionError


def _check_int_range(ops: str, array: np.ndarray, target: DType) -> None:
    """Refuse int data that ``target`` cannot hold (NumPy's conversion would wrap it silently)."""
    if array.dtype.kind not in "iu" or not array.size or np.can_cast(array.dtype, target.numpy):
        return
    info = np.iinfo(target.numpy)
    low, high = array.min(), array.max()
    if low < info.min or high > info.max:
        fail(ops, f"Argument data does not fit {target.value}, the dtype it is stored as.",
             f"Expected values in [{info.min}, {info.max}], found {low}..{high}.")


class CreationOps(TensorBase):
    """Constructors (classmethods) and ``*_like`` methods of Tensor."""

    __slots__ = ()

    # ----- from host data -----------------------------------------------------------------
    @classmethod
    def from_data(cls, data: Any, device: Device | None, dtype: DType | str | None = None) -> Self:
        """A tensor holding ``data`` (nested lists, a NumPy array, ``TensorData``, or a scalar,
        which becomes shape ``[1]``: burn has no rank-0 tensors) on ``device``.

        Without ``dtype``: Python floats → float32, ints → the device's default int (int64 on
        the CPU devices, int32 on ``Device.wgpu()``), bools → bool; a NumPy array keeps its
        dtype when the device supports it (otherwise the device's default of its kind: int
        values are checked to fit). An explicit ``dtype`` the device cannot hold is
        refused by its backend.
        """
        if isinstance(data, TensorData):
            data = data.array
        if isinstance(data, TensorBase):
            fail("from_data", "Argument data is already a Tensor.", "Use .to_device(device) or .cast(dtype).", kind=True)
        from_python = not isinstance(data, np.ndarray | np.generic)
        array = np.asarray(data)
        device = _device(device)
        if dtype is None:
            target = _infer_dtype("from_data", array, from_python, device)
        else:
            target = _dtype("from_data", dtype, device.settings().float_dtype)
        if target.kind is Kind.INT:
            _check_int_range("from_data", array, target)
        if array.ndim == 0:
            array = array.reshape(1)
        array = np.ascontiguousarray(array, dtype=target.numpy)
        from_data = by_kind(target.kind, float=Dispatch.float_from_data, int=Dispatch.int_from_data,
                            bool=Dispatch.bool_from_data)
        prim = from_data(array, device)
        return cls(prim, target.kind)

    @classmethod
    def from_numpy(cls, array: np.ndarray, device: Device | None, dtype: DType | str | None = None) -> Self:
        """A tensor holding a copy of the NumPy ``array`` (its dtype kept unless ``dtype`` is given)."""
        if not isinstance(array, np.ndarray):
            fail("from_numpy", "Argument array must be a NumPy array.", f"Found {type(array).__name__}.", kind=True)
        return cls.from_data(array, device, dtype)

    # ----- filled tensors -----------------------------------------------------------------
    @classmethod
    def zeros(cls, shape: Any, device: Device | None, dtype: DType | str | None = None) -> Self:
        """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
        shape = check_sizes("zeros", as_shape("zeros", shape))
        dtype, device = _dtype("zeros", dtype, DEFAULT_FLOAT), _device(device)
        if dtype.kind is Kind.FLOAT:
            return cls(Dispatch.float_zeros(shape, dtype, device), Kind.FLOAT)
        ints = Dispatch.int_zeros(shape, dtype if dtype.kind is Kind.INT else device.settings().int_dtype, device)
        if dtype.kind is Kind.INT:
            return cls(ints, Kind.INT)
        return cls(Dispatch.int_greater_elem(ints, 0), Kind.BOOL)

    @classmethod
    def ones(cls, shape: Any, device: Device | None, dtype: DType | str | None = None) -> Self:
        """A tensor of ones."""
        shape = check_sizes("ones", as_shape("ones", shape))
        dtype, device = _dtype("ones", dtype, DEFAULT_FLOAT), _device(device)
        if dtype.kind is Kind.FLOAT:
            return cls(Dispatch.float_ones(shape, dtype, device), Kind.FLOAT)
        return cls.full(shape, 1, device, dtype)

    @classmethod
    def full(cls, shape: Any, fill_value: float | int | bool, device: Device | None,
             dtype: DType | str | None = None) -> Self:
        """A tensor filled with ``fill_value`` (float32 unless ``dtype`` says otherwise, as burn)."""
        shape = check_sizes("full", as_shape("full", shape))
        dtype, device = _dtype("full", dtype, DEFAULT_FLOAT), _device(device)
        if dtype.kind is Kind.FLOAT:
            return cls(Dispatch.float_full(shape, float(fill_value), dtype, device), Kind.FLOAT)
        ints = Dispatch.int_zeros(shape, dtype if dtype.kind is Kind.INT else device.settings().int_dtype, device)
        if dtype.kind is Kind.INT:
            if int(fill_value) != fill_value:
                fail("full", "Argument fill_value must be an int for an Int tensor.", f"Found {fill_value!r}.",
                     kind=True)
            return cls(Dispatch.int_add_scalar(ints, int(fill_value)), Kind.INT)
        op = Dispatch.int_equal_elem if fill_value else Dispatch.int_greater_elem
        return cls(op(ints, 0), Kind.BOOL)

    @classmethod
    def arange(cls, start: int, end: int | None = None, step: int = 1, *, device: Device | None,
               dtype: DType | str | None = None) -> Self:
        """``[start, start + step, ...]`` below ``end`` as an Int tensor of the device's default
        int unless ``dtype`` (burn's ``arange`` / ``arange_step``); ``arange(n)`` counts from 0.
        A float ``dtype`` converts the result."""
        if end is None:
            start, end = 0, start
        for name, value in (("start", start), ("end", end), ("step", step)):
            if isinstance(value, bool) or not hasattr(value, "__index__"):
                fail("arange", f"Argument {name} must be an int.", f"Found {value!r}.", kind=True)
        if step == 0:
            fail("arange", "Argument step must not be 0.", "Found step=0.")
        device = _device(device)
        dtype = _dtype("arange", dtype, device.settings().int_dtype)
        int_dtype = dtype if dtype.kind is Kind.INT else device.settings().int_dtype
        ints = cls(Dispatch.int_arange(int(start), int(end), int(step), int_dtype, device), Kind.INT)
        return ints if dtype.kind is Kind.INT else ints.cast(dtype)

    @classmethod
    def random(cls, shape: Any, distribution: Distribution, device: Device | None,
               dtype: DType | str | None = None) -> Self:
        """A tensor sampled from ``distribution`` with the device's seeded stream.

        Float: any distribution. Int: ``uniform(low, high)`` (integers in ``[low, high)``) or
        ``bernoulli(p)``. Bool: ``bernoulli(p)``.
        """
        shape = check_sizes("random", as_shape("random", shape))
        if not isinstance(distribution, Distribution):
            fail("random", "Argument distribution must be a Distribution.", f"Found {distribution!r}.", kind=True)
        dtype, device = _dtype("random", dtype, DEFAULT_FLOAT), _device(device)
        if dtype.kind is Kind.FLOAT:
            return cls(Dispatch.float_random(shape, distribution, dtype, device), Kind.FLOAT)
        if dtype.kind is Kind.INT and distribution.name == "uniform":
            low, high = int(distribution.a), int(distribution.b)
            if low >= high:
                fail("random", "An Int uniform distribution needs integers in [low, high) with low < high.",
                     f"Found low={distribution.a}, high={distribution.b}.")
            return cls(Dispatch.int_random(shape, low, high, dtype, device), Kind.INT)
        if distribution.name != "bernoulli":
            wanted = "uniform(low, high) or bernoulli(p)" if dtype.kind is Kind.INT else "bernoulli(p)"
            fail("random", f"A {dtype.value} tensor needs a {wanted} distribution.",
                 f"Found {distribution.name}.", kind=True)
        coins = cls(Dispatch.float_random(shape, distribution, DEFAULT_FLOAT, device), Kind.FLOAT)
        return coins.cast(dtype)

    # ----- *_like -------------------------------------------------------------------------
    def zeros_like(self) -> Self:
        """Zeros with this tensor's shape, dtype and device."""
        return type(self).zeros(self.shape, self.device, self.dtype)

    def ones_like(self) -> Self:
        """Ones with this tensor's shape, dtype and device."""
        return type(self).ones(self.shape, self.device, self.dtype)

    def full_like(self, fill_value: float | int | bool) -> Self:
        """``fill_value`` everywhere, with this tensor's shape, dtype and device."""
        return type(self).full(self.shape, fill_value, self.device, self.dtype)

    def random_like(self, distribution: Distribution) -> Self:
        """Samples with this tensor's shape, dtype and device (Dropout's Bernoulli mask)."""
        return type(self).random(self.shape, distribution, self.device, self.dtype)
