"""``SyncedWgpu``: ``Wgpu`` behind a NumPy face, for the primitive-level test suites.

The conformance and autodiff suites hand a backend NumPy arrays and read results back with
``np.asarray``. ``SyncedWgpu`` uploads each array argument to ``Device.wgpu()`` (float, int or
bool by its dtype; int64 data, and an int64 ``dtype`` argument, as the device's int32, which
``Wgpu`` itself refuses), runs the op there (defaults included:
they decompose into device ops) and reads every result back. An int result, int32 on the
device, comes back in the dtype of the op's int inputs (int64 when it had none, minidl's
default; the dtype asked for by a ``dtype`` argument; int64 for indices), so the suites compare
values with the CPU backends' contract. It prints as ``wgpu``.
"""

from __future__ import annotations

import inspect

import numpy as np

from minidl.backend import Backend, Device, DType, Kind, TensorData, op_names, protocol_of
from minidl.backends.wgpu import ops
from minidl.backends.wgpu.backend import Wgpu
from minidl.backends.wgpu.tensor import WgpuTensor

_DEVICE = Device("wgpu")


def _narrow(array: np.ndarray) -> np.ndarray:
    """An int array as the device's int32 (what ``Tensor.from_data`` does for int data given
    without a dtype), refusing values that do not fit."""
    if array.size and (array.min() < -(2**31) or array.max() >= 2**31):
        raise OverflowError(f"synced: Device.wgpu() stores ints as int32, found values "
                            f"{array.min()}..{array.max()} outside [-2^31, 2^31 - 1]")
    return array.astype(np.int32)


def _up(value, ints: list):
    if isinstance(value, np.ndarray):
        kind = value.dtype.kind
        if kind in "iu":
            ints.append(value.dtype)
            return ops._upload("synced", _narrow(value), "i", _DEVICE)
        return ops._upload("synced", value, "b" if kind == "b" else "f", _DEVICE)
    if isinstance(value, tuple):
        return tuple(_up(v, ints) for v in value)
    if isinstance(value, list):
        return [_up(v, ints) for v in value]
    return value


def _down(value, int_dtype):
    if isinstance(value, TensorData):
        array = value.array
        return TensorData(array.astype(int_dtype) if array.dtype.kind == "i" else array)
    if isinstance(value, WgpuTensor):
        array = ops.read(value)
        return array.astype(int_dtype) if array.dtype.kind == "i" else array
    if isinstance(value, tuple):
        return tuple(_down(v, int_dtype) for v in value)
    if isinstance(value, list):
        return [_down(v, int_dtype) for v in value]
    return value


def _forward(op: str):
    sig = inspect.signature(protocol_of(op).__dict__[op].__func__)

    names = list(sig.parameters)[1:]

    def method(cls, *args, **kwargs):
        ints: list = []
        bound = dict(zip(names, args)) | kwargs
        # host data stays host data; tensors go to the device
        bound = {k: v if k == "data" else _up(v, ints) for k, v in bound.items()}
        data = bound.get("data")
        if op == "int_from_data" and isinstance(data, np.ndarray) and data.dtype == np.int64:
            ints.append(data.dtype)
            bound["data"] = _narrow(data)
        requested = bound.get("dtype")
        if isinstance(requested, DType) and requested.kind is Kind.INT:
            int_dtype = requested.numpy  # the dtype the op was asked for: read back as it
            bound["dtype"] = DType.I32  # computed in the device's int32
        elif "arg" in op or "indices" in op or not ints:
            int_dtype = np.dtype(np.int64)  # indices: int64 on the CPU backends
        else:
            int_dtype = ints[0]
        return _down(getattr(Wgpu, op)(**bound), int_dtype)

    method.__name__ = method.__qualname__ = op
    method.__signature__ = sig
    return classmethod(method)


SyncedWgpu = type("Synced[Wgpu]", (Backend,), {
    **{op: _forward(op) for op in op_names(Backend)},
    "__module__": __name__, "name": "wgpu", "wgpu": Wgpu,
    "__doc__": "Wgpu with NumPy arrays in and out (uploaded before each op, read back after).",
})
SyncedWgpu.__qualname__ = SyncedWgpu.__name__
