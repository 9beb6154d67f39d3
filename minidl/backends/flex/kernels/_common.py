"""Shared helpers for the Flex kernels: fastmath flags, size thresholds, dtype handling, and
the wait policy of numba's worker threads (:func:`start_workers_passive`, run at import).

Nothing here compiles anything; it is imported by every kernel module.
"""

from __future__ import annotations

import math
import os
import sys

import numba
import numpy as np

#: the OpenMP wait policy numba's ``omp`` workers get unless the user set one (see below)
WAIT_POLICY = "PASSIVE"


def start_workers_passive() -> str:
    """Start numba's threading layer with passive OpenMP workers unless ``OMP_WAIT_POLICY`` is
    set; returns the policy it started with (``""`` when the layer had started already).

    numba's ``omp`` layer runs on the system's libgomp, whose workers spin for about 300,000
    rounds after every parallel region before they sleep. Beside a busy process on a 2-core
    machine a spinning worker takes the core the main thread needs, and every barrier then
    waits a scheduler slice: the MLP step measured 100x slower with two spinning threads than
    with passive ones on a loaded machine (``bench/under_load.py``, ``bench/README.md``,
    "Under load"). libgomp reads the policy once, when it loads, which numba does at its first
    parallel call or ``get_num_threads()``: so the variable is set only around that call and
    then removed, and another OpenMP runtime (torch's own libgomp) keeps its default.

    When torch was imported first, its own libgomp is loaded with global symbols, and numba's
    ``omp`` layer would bind to it (its policy read at ``import torch``: spinning; measured,
    CPU during a 20 ms sleep after a 1M-element parallel add, 2 threads: 3.75 ms against 0.04
    ms). So when a libgomp is mapped already, numba's layer is loaded with ``RTLD_DEEPBIND``
    (glibc's: a library's own dependencies before the global symbols): it binds the libgomp
    it links, the system's, which loads then and reads the policy (0.04 ms again; torch's
    workers keep theirs). Deep binding only then, since a library bound so also takes libc's
    ``malloc`` over a preloaded one's.
    """
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):
        return ""
    chosen = os.environ.get("OMP_WAIT_POLICY")
    if chosen is None:
        os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
    flags = sys.getdlopenflags()
    deepbind = getattr(os, "RTLD_DEEPBIND", 0) if _libgomp_mapped() else 0
    try:
        sys.setdlopenflags(flags | deepbind)
        numba.get_num_threads()  # loads the threading layer (and libgomp, which reads the policy)
    finally:
        sys.setdlopenflags(flags)
        if chosen is None:
            del os.environ["OMP_WAIT_POLICY"]
    return chosen or WAIT_POLICY


def _libgomp_mapped() -> bool:
    """Whether this process maps a libgomp already (torch's ``torch/lib/libgomp-<hash>.so.1``
    after ``import torch``); Linux only (elsewhere False)."""
    try:
        with open("/proc/self/maps") as maps:
            return any("libgomp" in line for line in maps)
    except OSError:
        return False


start_workers_passive()

# The fastmath subset that lets LLVM vectorize reductions (reassociation) and fuse
# multiply-adds, while keeping NaN/Inf semantics (no "nnan"/"ninf"): a NaN in the input must
# still come out as NaN (measured: an inner gemm loop 96 vs 11.7 GF/s, layer_norm 1.11 vs 4.28 ms with
# "reassoc" and without).
FASTMATH = {"reassoc", "contract", "arcp", "nsz"}

# Keyword sets for ``@njit``. ``error_model="numpy"``: a float division by zero gives inf/nan
# as in NumPy instead of raising, and, measured, lets LLVM vectorize loops that divide (with
# Python's error model every division carries a zero check: 0.92 ms vs 0.16 ms for 1M floats).
JIT = {"cache": True, "error_model": "numpy"}
JIT_FAST = {"cache": True, "error_model": "numpy", "fastmath": FASTMATH}
# Element-wise kernels have no reductions to reassociate: only fused multiply-adds, so each
# result stays within one rounding of the unfused one (no approximate reciprocals).
JIT_EW = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}

# Parallel element-wise work only pays from about 64K elements (measured on an AVX-512
# machine, 2 threads; ARCHITECTURE.md, "Performance facts"):
# a parallel region costs 2-3 us awake and milliseconds after an idle spell.
PARALLEL_MIN_ELEMS = 1 << 16


#: The float dtypes a kernel takes as they are (float16 is computed in float32): the float paths
#: of the kernels' wrappers test ``dtype in FLOATS``.
FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


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


def merge_dims(shape: tuple[int, ...], arrays) -> tuple[list[int], list[list[int]]] | None:
    """The 3-D form of ``arrays`` (each already of ``shape``, e.g. broadcast views): the 3-D
    shape and, per array, its three strides in bytes; None when more than three dims remain.

    Adjacent dims merge where *every* array's strides allow it (``stride[j] == stride[i] *
    shape[i]``, NumPy's own rule, so a reshape to this form is a view); size-1 dims drop out.
    Same-shape contiguous operands merge to one dim, a bias row to two, a per-channel scale of
    an NCHW tensor to three. The copy and the broadcasting element-wise kernels share this.
    """
    groups: list[list[int]] = []
    for i in (d for d, s in enumerate(shape) if s != 1):
        if groups:
            j = groups[-1][-1]
            if all(a.strides[j] == a.strides[i] * shape[i] for a in arrays):
                groups[-1].append(i)
                continue
        groups.append([i])
    if len(groups) > 3:
        return None
    lead = [1] * (3 - len(groups))
    shape3 = lead + [math.prod(shape[i] for i in g) for g in groups]
    strides3 = [[0] * len(lead) + [a.strides[g[-1]] for g in groups] for a in arrays]
    return shape3, strides3
