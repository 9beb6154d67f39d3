"""``WgpuTensor``: the primitive of the ``Wgpu`` backend, a strided view of a device buffer
(cubecl's ``CubeTensor``: handle, shape, strides).

Every element takes 4 bytes: float32 as ``f32``, int32 as ``i32``, bool as ``u32`` (0 or 1);
WGSL has no 64-bit types, so the device refuses float64 and int64 (and float16, which needs a
feature not every adapter has). Layout ops (reshape of a contiguous view, permute, flip,
expand, slice) make a new view of the same buffer; strides may be negative (flip) or zero
(expand), as on Flex. The values come back to the host only through ``to_numpy`` (a sync).
"""

from __future__ import annotations

import numpy as np

from minidl.backend import DType

#: The dtypes the device stores, by NumPy dtype.
SUPPORTED = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_))
SUPPORTED_NAMES = "float32, int32 and bool"


#: How a tensor's values come back to the host: ``minidl.backends.wgpu.ops.read``, set when
#: that module loads (it imports this one, so this one cannot import it).
READ = None


def refuse_dtype(op: str, dtype) -> None:
    """Raise the device's dtype error: WGSL has 32-bit types only."""
    name = dtype.value if isinstance(dtype, DType) else np.dtype(dtype).name
    why = ("float16 needs an optional WGSL feature (shader-f16) not every adapter has" if name == "float16"
           else "WGSL has no 64-bit types")
    raise TypeError(f"{op}: dtype {name} is not supported on Device.wgpu(): {why}; "
                    f"the device supports {SUPPORTED_NAMES}")


def c_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


class WgpuTensor:
    """A view ``(buffer, shape, strides, offset)`` of 32-bit elements of ``dtype`` on ``index``."""

    __slots__ = ("buffer", "shape", "strides", "offset", "dtype", "index", "__weakref__")

    def __init__(self, buffer, shape, dtype, strides=None, offset: int = 0, index: int = 0):
        self.buffer = buffer
        self.shape = tuple(int(s) for s in shape)
        self.strides = c_strides(self.shape) if strides is None else tuple(int(s) for s in strides)
        self.offset = int(offset)
        self.dtype = np.dtype(dtype)
        self.index = index

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_contiguous(self) -> bool:
        """C-contiguous from ``offset`` (dims of size 1 may have any stride)."""
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def view(self, shape, strides, offset) -> WgpuTensor:
        return WgpuTensor(self.buffer, shape, self.dtype, strides, offset, self.index)

    def __array__(self, dtype=None, copy=None):
        # np.asarray(t): a read-back (the ops' read, installed by minidl.backends.wgpu.ops,
        # which imports this module), for tests and printing
        array = READ(self)
        return array if dtype is None else array.astype(dtype)

    def __repr__(self) -> str:
        return f"WgpuTensor(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, offset={self.offset})"
