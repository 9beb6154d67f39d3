"""Shared helpers for the Flex kernels: fastmath flags, size thresholds, dtype handling.

Nothing here compiles anything; it is imported by every kernel module.
"""

from __future__ import annotations

import math

import numpy as np

# The fastmath subset that lets LLVM vectorize reductions (reassociation) and fuse
# multiply-adds, while keeping NaN/Inf semantics (no "nnan"/"ninf"): a NaN in the input must
# still come out as NaN (DESIGN §7: reductions 8x faster with "reassoc").
FASTMATH = {"reassoc", "contract", "arcp", "nsz"}

# Keyword sets for ``@njit``. ``error_model="numpy"``: a float division by zero gives inf/nan
# as in NumPy instead of raising, and, measured, lets LLVM vectorize loops that divide (with
# Python's error model every division carries a zero check: 0.92 ms vs 0.16 ms for 1M floats).
JIT = {"cache": True, "error_model": "numpy"}
JIT_FAST = {"cache": True, "error_model": "numpy", "fastmath": FASTMATH}
# Element-wise kernels have no reductions to reassociate: only fused multiply-adds, so each
# result stays within one rounding of the unfused one (no approximate reciprocals).
JIT_EW = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}

# Parallel element-wise work only pays from about 64K elements on this machine (DESIGN §7):
# a parallel region costs 2-3 us awake and milliseconds after an idle spell.
PARALLEL_MIN_ELEMS = 1 << 16

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a kernel computes in: float16 is computed in float32 (numba has no f16 math)."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


def as_compute(x: np.ndarray) -> np.ndarray:
    """``x`` as a C-contiguous array in its compute dtype (a no-op for contiguous f32/f64)."""
    return np.ascontiguousarray(x, dtype=compute_dtype(x.dtype))


def aligned_empty(
    shape: tuple[int, ...], dtype: np.dtype, align: int = 64, force: bool = False
) -> np.ndarray:
    """``np.empty`` whose data starts on an ``align``-byte boundary (a cache line).

    Packed gemm panels are read with 64-byte vector loads; a load that straddles two cache
    lines costs twice, so the packing buffers are aligned.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < 4096 and not force:
        return np.empty(shape, dtype)  # a few cache lines: alignment does not matter
    buf = np.empty(nbytes + align, np.uint8)
    off = (-buf.__array_interface__["data"][0]) % align  # (.ctypes.data costs microseconds)
    return buf[off : off + nbytes].view(dtype).reshape(shape)


def check_float(name: str, x: np.ndarray) -> None:
    """Raise a clear error unless ``x`` is a float32/float64 array."""
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name}: expected a float32 or float64 array, found {x.dtype}")
