"""Matrix multiplication: a packed gemm around a register-tile micro-kernel (BLIS's loop nest).

Mirrors burn-flex's ``float_matmul`` / ``int_matmul`` (the gemm behind ``Linear``).

How it works (ARCHITECTURE.md, "Performance facts", lists what was measured to matter):

* **Micro-kernel** (``gemm_micro``): an MR x NR tile of C in vector registers, updated by
  outer products, one packed row of B (NR values, ``NV`` vectors) against MR broadcast values
  of A per step of ``k``. numba cannot be coaxed into this from plain loops (its loop
  vectorizer picks 256-bit vectors on AVX-512 Intel CPUs, and SLP vectorization is off), so the
  tile is written with explicit LLVM vector types in a numba intrinsic; the tile shape comes
  from :data:`isa.ISA`.
* **Packing and blocking** (``gemm_pack``): B's contiguous rows are read where they lie when
  C has few rows (``b_reads_in_place``: the MLP's ``x @ W1`` no longer copies W1's 800 KB per
  call); otherwise B is packed into NR-column strips (straight from its strides: a
  transposed weight is transposed in registers while packed). A's contiguous rows are read
  where they lie; a transposed view with far-apart rows (``x.T``) and strided A are packed,
  with whole vectors, panel by panel right before use. An MR x KC panel of A stays in L1
  while it meets a run of B strips held in L2; a last panel of fewer than MR rows runs a
  shorter tile.
* **Threads**: C is cut into blocks (``_grid``), dealt out to the workers in one contiguous
  run each (a worker writes the same rows of C call after call); a worker done with its run
  takes tasks from the others', so a core that a neighbour keeps busy simply does fewer. A
  packed B is packed by each block for its own columns when C's rows form one block, whole
  by each worker for itself when small, else over the threads first. Each worker packs A
  into its own slice of one scratch buffer, kept per calling thread between calls (a fresh
  16 MiB buffer costs milliseconds of page faults); the slices start whole pages apart
  (``gemm_pack.PAGE``: a worker whose packed A and B lay at other page offsets ran 8-10%
  longer on the same work). Below ``PARALLEL_MIN_WORK`` (m*n*k
  summed over the batch) everything runs on the calling thread: waking a second thread
  costs more than it saves.
* **Small products** (below ``SMALL_MAX_WORK``, float): ``gemm_small``, no packing at all; B's
  rows are read in place with masked vectors, so a 10-column product costs one vector per
  row, not a 32-column strip; A with contiguous columns and few columns of C runs as C^T.
* **One compiled version** per dtype serves operands of every layout (``_any_layout``).

Measured (bench/gemm_isa.py, this 2-core Xeon, each contender in its own process, a machine
shared with other work, load 2-3): 2 threads, n = 1024 / 2048 1.05x / 1.08x OpenBLAS on
AVX-512, 0.95x / 0.97x on the AVX2 build (in the same runs the gemm before B in place, the
untangled micro-kernel and the workers' runs: 0.92x / 0.98x, 0.87x / 0.87x). The MLP step's two big
products, median / best, AVX-512: ``x @ W1`` 1 thread 278-284 / 243-258 us (torch 282-292 /
252-282), 2 threads 141-157 / 132-149 (torch 155-167 / 133-159); ``x.T @ dh`` 1 thread
274-280 / 244-265 (torch 258-268 / 251-252), 2 threads 166-175 / 146-163 (torch 134-143 /
129-137); with the slices on pages (load 3-3.5, alternating with the code before): 2 threads
p10 136-153 / best 132-146 (before 158-170 / 148-171; torch best 118 in the same bench run). The three small ones (n or k = 10, gemm_small) 0.7-1.2x torch on one thread (the
packed kernel: 0.3-0.4x).

No BLAS anywhere: ``np.dot``/``@`` inside numba would call OpenBLAS, whose thread pool fights
numba's on a 2-core machine. Integer matrices take a plain i-k-j loop.
"""

from __future__ import annotations

import functools
import threading

import numba
import numpy as np
from numba import njit, prange

from ._common import JIT, aligned_empty, compute_dtype
from .gemm_micro import MR, NV, VBYTES
from .gemm_pack import (
    B_IN_PLACE,
    B_OWN,
    B_SHARED,
    B_WORKER,
    KC,
    gemm_parallel,
    gemm_serial,
    scratch_size,
)
from .gemm_small import gemm_small
from .isa import ISA

LANES = VBYTES // 4  # float32 per vector register
NR = NV * LANES  # float32 columns of the register tile
#: Rows of C per task at most: 192 on AVX-512 (a packed MC x KC block of A sits in L2), 384 on
#: AVX2, where A of a large product is read in place (``A_IN_PLACE_MAX_STRIDE``) and a taller
#: block streams the shared packed B fewer times. Measured, AVX2 (Zen 3, 1 thread, one process
#: alternating the variants): n = 2048 0.91x -> 0.95-0.96x OpenBLAS, n = 4096 0.92x -> 0.97x,
#: the MLP's products unchanged.
MC = 16 * MR if ISA == "avx512" else 64 * MR
#: Bytes between A's rows up to which the micro-kernel reads C-ordered A in place. On AVX-512
#: (Rocket Lake, 48 KiB L1) rows 8 KiB apart evicted each other; on AVX2 (Zen 3, 32 KiB L1)
#: reading [2048, 2048] in place beat packing it (with ``MC`` above: 0.91x -> 0.96x OpenBLAS).
A_IN_PLACE_MAX_STRIDE = 8192 if ISA == "avx512" else 16384
#: m*n*k from which two threads pay for their wake-up. n = 128 stays serial: measured, 28 us on
#: one thread vs 22 us on two when both cores are free, and a parallel region whose second
#: thread is descheduled (a neighbour on the other core) waits milliseconds for it.
PARALLEL_MIN_WORK = 128**3 + 1
#: m*n*k (summed over the batch) below which a float product skips packing (``gemm_small``).
#: Measured, 1 thread, AVX-512: the unpacked kernel ran 1.15-10x the packed one at every
#: serial shape tried (n = 10..256, k = 3..8000; most at large k with few rows, whose packed A
#: panels are mostly padding), and the MLP's 10-column products 2-3x.
SMALL_MAX_WORK = 128**3 + 1

#: The most rows of C for which B's contiguous rows are read in place rather than packed.
#: Measured, 1 thread, AVX-512, k = 784, n = 256 (B's rows 1 KiB apart): in place / packed
#: m = 64 136 / 162 us, 128 262 / 276, 256 499 / 530, 384 764 / 745; at n = 1024 (rows 4 KiB
#: apart, hence the stride rule) 3638 / 1602 us at m = 128.
B_IN_PLACE_MAX_M = 256
#: The largest packed B that each worker packs whole for itself (``gemm_pack.B_WORKER``)
#: rather than the workers packing it together in a pass of its own before the product.
B_WORKER_MAX_BYTES = 512 * 1024

__all__ = ["ISA", "KC", "MC", "MR", "NR", "LANES", "matmul", "batched_matmul"]

# ---------------------------------------------------------------------------------------------
# The i-k-j loop (integer matrices)
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _ikj(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        crow = c[i]
        arow = a[i]
        for j in range(n):
            crow[j] = 0
        for p in range(k):
            aip = arow[p]
            brow = b[p]
            for j in range(n):
                crow[j] += aip * brow[j]


@njit(**JIT)
def ikj_serial(a, b, c):
    """C[t] = A[t] @ B[t] for each batch entry t by the i-k-j loop (used for integers)."""
    for t in range(a.shape[0]):
        _ikj(a[t], b[t], c[t])


@njit(parallel=True, **JIT)
def ikj_parallel(a, b, c):
    """C[t] = A[t] @ B[t] by the i-k-j loop, (batch entry, row block) pairs over threads."""
    batch, m = a.shape[0], a.shape[1]
    nblk = (m + 15) // 16
    for t in prange(batch * nblk):
        bi = t // nblk
        i0 = (t - bi * nblk) * 16
        i1 = min(i0 + 16, m)
        _ikj(a[bi, i0:i1], b[bi], c[bi, i0:i1])


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------

_scratch = threading.local()


def _buffer(size: int, dtype: np.dtype) -> np.ndarray:
    # One growing, aligned scratch buffer per calling thread and dtype, reused across calls.
    key = np.dtype(dtype).str
    bufs = _scratch.__dict__.setdefault("bufs", {})
    buf = bufs.get(key)
    if buf is None or buf.size < size:
        buf = aligned_empty((max(size, 1 << 14),), dtype, force=True)
        bufs[key] = buf
    return buf


@functools.lru_cache(maxsize=256)
def _grid(batch: int, m: int, n: int, nr: int, nw: int, split_rows: bool = False) -> tuple[int, int]:
    """(row blocks, column blocks) of C per batch entry for ``nw`` workers.

    Row blocks hold at most MC rows (a packed A block stays in L2). The tasks are dealt out
    to the workers in contiguous runs, which a worker that finishes first takes from (see
    ``gemm_pack._worker``), so with threads the grid wants a few tasks per worker, each
    still of several tiles. Among those grids the one whose runs finish first on equal
    workers wins; a column split counts a little against (each column block reads or packs
    its A again), and so does a row split with ``split_rows`` (B read in place: each row block
    streams its strips of B again; measured, 2 threads, x @ W1: 1 x 4 blocks 118 us, 3 x 3
    135). C whose rows fit one block is kept whole unless ``split_rows``: otherwise its
    blocks pack their own B strips, which a row split would repeat.
    """
    panels, strips = -(-m // MR), -(-n // nr)
    rows0 = -(-panels // (MC // MR))
    tiles = batch * panels * strips
    want = 1 if nw == 1 else min(4 * nw, max(2 * nw, tiles // 32), tiles)  # tasks of >= 32 tiles
    best = None
    rows_max = 1 if rows0 == 1 and not split_rows else min(panels, max(rows0, want))
    for rows in range(rows0, rows_max + 1):
        for cols in range(1, min(strips, max(want, 1)) + 1):
            ntask = batch * rows * cols
            if ntask < want:
                continue
            run = [0] * nw
            for t in range(ntask):  # the runs of tasks the workers start from
                ti, tj = (t % (rows * cols)) // cols, t % cols
                run[t * nw // ntask] += ((ti + 1) * panels // rows - ti * panels // rows) * (
                    (tj + 1) * strips // cols - tj * strips // cols)
            extra = 0.03 * (cols - 1) + (0.05 * (rows - 1) if split_rows else 0.0)
            key = (max(run) * (1 + extra), ntask)
            if best is None or key < best[0]:
                best = (key, rows, cols)
    if best is None:
        return rows0, 1
    return best[1], best[2]


def _unit(x: np.ndarray, dim: int) -> bool:
    return x.strides[dim] == x.itemsize or x.shape[dim] == 1


def reads_a_in_place(a: np.ndarray) -> bool:
    """Whether the micro-kernel reads A [batch, m, k] where it lies rather than packed.

    In place needs A's rows contiguous (unit stride along k) and m of at least one register
    tile. Measured: reading in place wins (no packing) until A's rows are 8 KiB or more apart,
    where they start to evict each other from L1 (same cache sets; ``A_IN_PLACE_MAX_STRIDE``);
    then A is packed. A
    transposed view (unit stride along m) is read in place only while its steps of k are less
    than 1 KiB apart: each step is a row of the original, and rows far apart cost a DTLB
    entry each. Measured, 1 thread, AVX-512, in place / packed: [784, k] (x.T, 3 KiB) @
    [k, 256] k = 128 253 / 242 us, 512 1235 / 987; a [1024, 1024] transposed (4 KiB) 29 /
    11.5 ms; [64, 1000] (256 B) @ [1000, 64] 44 / 58 us.
    """
    batch, m, k = a.shape
    if m < MR:
        return False
    if _unit(a, 2):
        return a.strides[1] < A_IN_PLACE_MAX_STRIDE
    return _unit(a, 1) and a.strides[2] < 1024


def b_reads_in_place(b: np.ndarray, m: int) -> bool:
    """Whether the tasks read B [batch, k, n]'s strips where they lie, for C with ``m`` rows.

    In place when B's rows are contiguous, C has at most ``B_IN_PLACE_MAX_M`` rows (few
    panels of A would share a packed copy) and B's rows are not a multiple of 2 KiB apart
    (they would fall into the same few L1 sets). Otherwise B is packed: by each block for its
    own columns when C's rows form one block (no strip is shared), else once up front.
    """
    return m <= B_IN_PLACE_MAX_M and _unit(b, 2) and b.strides[1] % 2048 != 0


def _gemm3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """C = A @ B for 3-D A [batch, m, k] and B [batch, k, n] of any strides into C [batch, m, n]."""
    batch, m, k = a.shape
    n = b.shape[2]
    if c.size == 0:
        return
    if k == 0:
        c[...] = 0
        return
    parallel = batch * m * n * k >= PARALLEL_MIN_WORK
    if batch * m * n * k < SMALL_MAX_WORK and c.dtype.kind == "f":
        _any_layout(gemm_small, c.dtype)(a, b, c)
        return
    if c.dtype.kind != "f":
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        (ikj_parallel if parallel else ikj_serial)(a, b, c)
        return
    nr = NV * (VBYTES // c.dtype.itemsize)
    nw = numba.get_num_threads() if parallel else 1
    b_in_place = b_reads_in_place(b, m)
    nti, ntj = _grid(batch, m, n, nr, nw, b_in_place)
    direct_a = reads_a_in_place(a)
    if b_in_place:
        b_mode = B_IN_PLACE
    elif nti == 1:
        b_mode = B_OWN
    elif nw > 1 and -(-n // nr) * nr * k * c.itemsize <= B_WORKER_MAX_BYTES:
        b_mode = B_WORKER
    else:
        b_mode = B_SHARED
    buf = _buffer(scratch_size(batch, m, n, k, nr, nti, ntj, nw, direct_a, b_mode), c.dtype)
    if nw > 1:
        _any_layout(gemm_parallel, c.dtype)(a, b, c, buf, nti, ntj, nw, b_mode, direct_a)
    else:
        _any_layout(gemm_serial, c.dtype)(a, b, c, buf, nti, ntj, b_mode, direct_a)


_compiled: dict[tuple[object, np.dtype], object] = {}
_compile_lock = threading.Lock()


def _any_layout(kernel, dtype: np.dtype):
    """``kernel`` compiled once per dtype for A and B of any layout, then kept to that version.

    numba would otherwise compile the whole gemm again for every combination of C-ordered,
    transposed and strided A and B (measured: ~5 s each with a cold cache, and an MLP's
    forward and backward passes meet three of them). The packing and the micro-kernel read A
    and B through their strides anyway, so one 'A'-layout version serves them all. Compiled
    on first use (or loaded from numba's cache), never at import.
    """
    ready = _compiled.get((kernel, dtype))  # a dict look-up: small products feel every 0.1 us
    if ready is not None:
        return ready
    with _compile_lock:
        if (kernel, dtype) not in _compiled:
            nb = numba.from_dtype(dtype)
            any3 = numba.types.Array(nb, 3, "A", readonly=True)  # takes writeable arrays too
            sig = (any3, any3, numba.types.Array(nb, 3, "C"))
            if kernel is not gemm_small:
                ints = (numba.types.intp,) * (4 if kernel is gemm_parallel else 3)
                sig += (numba.types.Array(nb, 1, "C"),) + ints + (numba.types.boolean,)
            kernel.disable_compile(False)
            kernel.compile(sig)
            kernel.disable_compile(True)  # C-, F-ordered and read-only operands take this version
            _compiled[(kernel, dtype)] = kernel
    return kernel


def _operand(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    # Any non-negative strides are packed or read as they lie (a broadcast batch dim, stride 0,
    # too); only a dtype change (float16) or a negative stride makes a copy.
    if x.dtype == dt and min(x.strides) >= 0:
        return x
    return np.ascontiguousarray(x, dtype=dt)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` for 2-D arrays [m, k] @ [k, n] -> [m, n], without BLAS.

    float32/float64 run the packed gemm (float16 is computed in float32 and cast back);
    integer dtypes run the i-k-j loop. Both operands may have any strides (a transposed
    weight or activation is packed straight from where it lies, not copied first). ``out``,
    when given, must be an [m, n] array of the input dtype; it is written and returned.
    """
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"matmul: expected 2-D arrays, found shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: dtypes differ: {a.dtype} and {b.dtype}")
    shape = (a.shape[0], b.shape[1])
    if out is not None and (out.shape != shape or out.dtype != a.dtype):
        raise ValueError(
            f"matmul: out must be {a.dtype} of shape {shape}, found {out.dtype} {out.shape}"
        )
    m, k = a.shape
    if (out is None and a.dtype.char in "fd" and m * shape[1] * k < SMALL_MAX_WORK
            and min(a.strides) >= 0 and min(b.strides) >= 0):  # fmt: skip
        # A small float product (the MLP's layers): straight to its kernel, skipping the
        # checks below, which cost about a tenth of its time.
        c = np.empty((1,) + shape, a.dtype)
        _any_layout(gemm_small, a.dtype)(a[None], b[None], c)
        return c[0]
    dt = compute_dtype(a.dtype)
    a_c, b_c = _operand(a, dt), _operand(b, dt)
    if out is not None and out.dtype == dt and out.flags.c_contiguous:
        _gemm3(a_c[None], b_c[None], out[None])
        return out
    c = np.empty(shape, dt)
    _gemm3(a_c[None], b_c[None], c[None])
    if out is not None:
        out[...] = c
        return out
    return c.astype(a.dtype, copy=False)


def batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for 3-D arrays [batch, m, k] @ [batch, k, n] -> [batch, m, n], without BLAS.

    The caller broadcasts batch dimensions (both batches must be equal; a broadcast view with
    batch stride 0 is read without a copy). Same dtype and stride rules as ``matmul``; all
    batch entries run in one kernel call (one parallel region).
    """
    if a.ndim != 3 or b.ndim != 3:
        raise ValueError(
            f"batched_matmul: expected 3-D arrays, found shapes {a.shape} and {b.shape}"
        )
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"batched_matmul: shapes do not match: {a.shape} @ {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"batched_matmul: dtypes differ: {a.dtype} and {b.dtype}")
    dt = compute_dtype(a.dtype)
    c = np.empty((a.shape[0], a.shape[1], b.shape[2]), dt)
    _gemm3(_operand(a, dt), _operand(b, dt), c)
    return c.astype(a.dtype, copy=False)
