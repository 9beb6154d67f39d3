"""Matrix multiplication: a packed, register-blocked gemm in dot-product form.

Mirrors burn-flex's ``float_matmul`` / ``int_matmul`` (the gemm behind ``Linear``).

How it works (DESIGN §7 lists what was measured to matter):

* **Packing.** ``B`` [k, n] is copied *transposed* into a 64-byte aligned panel whose row
  length is padded to whole cache lines and never a multiple of 4 KiB (rows exactly 4 KiB
  apart share one L1 set and evict each other). Then ``C[i, j]`` is the dot product of row
  ``i`` of A and row ``j`` of Bt, both contiguous, so A is read in place. A ``B`` that is
  already a transposed view (F-contiguous) is not copied (unless its rows are 4 KiB apart).
* **Micro-kernel.** A 6 x 4 tile of C is 24 scalar accumulators written out straight. The loop
  over ``k`` is a reduction, so with ``fastmath`` ``reassoc`` LLVM vectorizes it: each scalar
  accumulator becomes one SIMD register (numba leaves SLP vectorization off, so this
  dot-product form is the shape that vectorizes). Rows are taken as 1-D slices: ``A[i, p]``
  inside ``prange`` compiles to gathers.
* **Blocking.** Tasks are (MC rows) x (NC columns) blocks of C of one batch entry; inside a
  task the reduction is split into chunks of at most ``KC`` so that an NC x KC panel of Bt
  stays in L2 while the six A rows stay in L1. Each task owns its block of C, so ``prange``
  over tasks is race-free. Long chunks amortise the horizontal sums of the accumulators.
* **Threads.** Below ``PARALLEL_MIN_WORK`` (m*n*k summed over the batch) everything runs on
  the calling thread: waking a second thread costs more than it saves.

Measured here: the packed kernel beat an i-k-j loop at every size from 16^3 up (the i-k-j
loop is kept for integer matrices only). No BLAS anywhere: ``np.dot``/``@`` inside numba would
call OpenBLAS, whose thread pool fights numba's on a 2-core machine.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT, JIT_FAST, aligned_empty, compute_dtype
from .isa import ISA

# The register tile follows the instruction set numba compiles for (``isa.ISA``, read at import,
# nothing compiled): every accumulator of the MR x NR tile is one vector register, and the NR
# rows of Bt plus one row of A are live beside them. AVX-512 has 32 registers: 6 x 4 = 24
# accumulators + 5. AVX2 has 16: 6 x 4 spills, 4 x 3 = 12 accumulators + 4 fits exactly.
MR, NR = (6, 4) if ISA == "avx512" else (4, 3)  # rows, columns of a micro tile
LANES = 16 if ISA == "avx512" else 8  # float32 per vector register (what LLVM vectorizes k by)
KC = 1024  # reduction chunk
MC = 96  # rows of C per task (a multiple of MR: 6 and 4 both divide it)
NC = 128 if NR == 4 else 120  # columns of C per task (a multiple of NR)
PARALLEL_MIN_WORK = 100**3  # m*n*k above which two threads pay for their wake-up


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
# Packing: B transposed into the rows of an aligned panel
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _transpose_strip(b, bt, j0, j1):
    # bt[j, :k] = b[:, j] for j in [j0, j1): a narrow strip keeps the destination rows in cache.
    k = b.shape[0]
    for p in range(k):
        brow = b[p]
        for j in range(j0, j1):
            bt[j, p] = brow[j]


@njit(**JIT)
def transpose_serial(b, bt):
    """``bt[t, :n, :k] = b[t].T`` for each batch entry of ``b`` [batch, k, n] (one thread)."""
    n = b.shape[2]
    for bi in range(b.shape[0]):
        for j0 in range(0, n, 16):
            _transpose_strip(b[bi], bt[bi], j0, min(j0 + 16, n))


@njit(parallel=True, **JIT)
def transpose_parallel(b, bt):
    """``bt[t, :n, :k] = b[t].T`` for each batch entry, 16-column strips over threads."""
    n = b.shape[2]
    nstrip = (n + 15) // 16
    for t in prange(b.shape[0] * nstrip):
        bi = t // nstrip
        j0 = (t - bi * nstrip) * 16
        _transpose_strip(b[bi], bt[bi], j0, min(j0 + 16, n))


# ---------------------------------------------------------------------------------------------
# The blocked dot-product kernel
# ---------------------------------------------------------------------------------------------


@njit(**JIT_FAST)
def block_task_6x4(a, bt, c, t, k, zero, tile):
    """Compute the (MC x NC) block number ``t`` of C = A @ Bt.T with 6 x 4 tiles (AVX-512).

    ``a`` is [m, >= k] and ``bt`` is [n, >= k] (B transposed), both with contiguous rows; only
    the first ``k`` columns are read. Past the last row of A or Bt the row index is clamped:
    the extra accumulators are computed from a duplicate row and never written out.
    """
    m, n = c.shape
    nic = (m + MC - 1) // MC
    jc = t // nic
    ic = t - jc * nic
    i_lo = ic * MC
    i_hi = min(i_lo + MC, m)
    j_lo = jc * NC
    j_hi = min(j_lo + NC, n)
    for p0 in range(0, k, KC):
        p1 = min(p0 + KC, k)
        first = p0 == 0
        for i0 in range(i_lo, i_hi, MR):
            a0 = a[i0, p0:p1]
            a1 = a[min(i0 + 1, m - 1), p0:p1]
            a2 = a[min(i0 + 2, m - 1), p0:p1]
            a3 = a[min(i0 + 3, m - 1), p0:p1]
            a4 = a[min(i0 + 4, m - 1), p0:p1]
            a5 = a[min(i0 + 5, m - 1), p0:p1]
            mr = min(MR, m - i0)
            for j0 in range(j_lo, j_hi, NR):
                b0 = bt[j0, p0:p1]
                b1 = bt[min(j0 + 1, n - 1), p0:p1]
                b2 = bt[min(j0 + 2, n - 1), p0:p1]
                b3 = bt[min(j0 + 3, n - 1), p0:p1]
                s00 = zero; s01 = zero; s02 = zero; s03 = zero  # noqa: E702
                s10 = zero; s11 = zero; s12 = zero; s13 = zero  # noqa: E702
                s20 = zero; s21 = zero; s22 = zero; s23 = zero  # noqa: E702
                s30 = zero; s31 = zero; s32 = zero; s33 = zero  # noqa: E702
                s40 = zero; s41 = zero; s42 = zero; s43 = zero  # noqa: E702
                s50 = zero; s51 = zero; s52 = zero; s53 = zero  # noqa: E702
                for p in range(p1 - p0):
                    y0 = b0[p]; y1 = b1[p]; y2 = b2[p]; y3 = b3[p]  # noqa: E702
                    x = a0[p]
                    s00 += x * y0; s01 += x * y1; s02 += x * y2; s03 += x * y3  # noqa: E702
                    x = a1[p]
                    s10 += x * y0; s11 += x * y1; s12 += x * y2; s13 += x * y3  # noqa: E702
                    x = a2[p]
                    s20 += x * y0; s21 += x * y1; s22 += x * y2; s23 += x * y3  # noqa: E702
                    x = a3[p]
                    s30 += x * y0; s31 += x * y1; s32 += x * y2; s33 += x * y3  # noqa: E702
                    x = a4[p]
                    s40 += x * y0; s41 += x * y1; s42 += x * y2; s43 += x * y3  # noqa: E702
                    x = a5[p]
                    s50 += x * y0; s51 += x * y1; s52 += x * y2; s53 += x * y3  # noqa: E702
                nr = min(NR, n - j0)
                if mr == MR and nr == NR:
                    c0 = c[i0]; c1 = c[i0 + 1]; c2 = c[i0 + 2]  # noqa: E702
                    c3 = c[i0 + 3]; c4 = c[i0 + 4]; c5 = c[i0 + 5]  # noqa: E702
                    if first:
                        c0[j0] = s00; c0[j0 + 1] = s01; c0[j0 + 2] = s02; c0[j0 + 3] = s03  # noqa: E702
                        c1[j0] = s10; c1[j0 + 1] = s11; c1[j0 + 2] = s12; c1[j0 + 3] = s13  # noqa: E702
                        c2[j0] = s20; c2[j0 + 1] = s21; c2[j0 + 2] = s22; c2[j0 + 3] = s23  # noqa: E702
                        c3[j0] = s30; c3[j0 + 1] = s31; c3[j0 + 2] = s32; c3[j0 + 3] = s33  # noqa: E702
                        c4[j0] = s40; c4[j0 + 1] = s41; c4[j0 + 2] = s42; c4[j0 + 3] = s43  # noqa: E702
                        c5[j0] = s50; c5[j0 + 1] = s51; c5[j0 + 2] = s52; c5[j0 + 3] = s53  # noqa: E702
                    else:
                        c0[j0] += s00; c0[j0 + 1] += s01; c0[j0 + 2] += s02; c0[j0 + 3] += s03  # noqa: E702
                        c1[j0] += s10; c1[j0 + 1] += s11; c1[j0 + 2] += s12; c1[j0 + 3] += s13  # noqa: E702
                        c2[j0] += s20; c2[j0 + 1] += s21; c2[j0 + 2] += s22; c2[j0 + 3] += s23  # noqa: E702
                        c3[j0] += s30; c3[j0 + 1] += s31; c3[j0 + 2] += s32; c3[j0 + 3] += s33  # noqa: E702
                        c4[j0] += s40; c4[j0 + 1] += s41; c4[j0 + 2] += s42; c4[j0 + 3] += s43  # noqa: E702
                        c5[j0] += s50; c5[j0 + 1] += s51; c5[j0 + 2] += s52; c5[j0 + 3] += s53  # noqa: E702
                else:
                    # Edge tile: park the accumulators, then write only the part inside C.
                    tile[0, 0] = s00; tile[0, 1] = s01; tile[0, 2] = s02; tile[0, 3] = s03  # noqa: E702
                    tile[1, 0] = s10; tile[1, 1] = s11; tile[1, 2] = s12; tile[1, 3] = s13  # noqa: E702
                    tile[2, 0] = s20; tile[2, 1] = s21; tile[2, 2] = s22; tile[2, 3] = s23  # noqa: E702
                    tile[3, 0] = s30; tile[3, 1] = s31; tile[3, 2] = s32; tile[3, 3] = s33  # noqa: E702
                    tile[4, 0] = s40; tile[4, 1] = s41; tile[4, 2] = s42; tile[4, 3] = s43  # noqa: E702
                    tile[5, 0] = s50; tile[5, 1] = s51; tile[5, 2] = s52; tile[5, 3] = s53  # noqa: E702
                    for r in range(mr):
                        crow = c[i0 + r]
                        for s in range(nr):
                            if first:
                                crow[j0 + s] = tile[r, s]
                            else:
                                crow[j0 + s] += tile[r, s]


@njit(**JIT_FAST)
def block_task_4x3(a, bt, c, t, k, zero, tile):
    """``block_task_6x4`` with 4 x 3 tiles: 12 accumulators, what AVX2's 16 registers hold."""
    m, n = c.shape
    nic = (m + MC - 1) // MC
    jc = t // nic
    ic = t - jc * nic
    i_lo = ic * MC
    i_hi = min(i_lo + MC, m)
    j_lo = jc * NC
    j_hi = min(j_lo + NC, n)
    for p0 in range(0, k, KC):
        p1 = min(p0 + KC, k)
        first = p0 == 0
        for i0 in range(i_lo, i_hi, 4):
            a0 = a[i0, p0:p1]
            a1 = a[min(i0 + 1, m - 1), p0:p1]
            a2 = a[min(i0 + 2, m - 1), p0:p1]
            a3 = a[min(i0 + 3, m - 1), p0:p1]
            mr = min(4, m - i0)
            for j0 in range(j_lo, j_hi, 3):
                b0 = bt[j0, p0:p1]
                b1 = bt[min(j0 + 1, n - 1), p0:p1]
                b2 = bt[min(j0 + 2, n - 1), p0:p1]
                s00 = zero; s01 = zero; s02 = zero  # noqa: E702
                s10 = zero; s11 = zero; s12 = zero  # noqa: E702
                s20 = zero; s21 = zero; s22 = zero  # noqa: E702
                s30 = zero; s31 = zero; s32 = zero  # noqa: E702
                for p in range(p1 - p0):
                    y0 = b0[p]; y1 = b1[p]; y2 = b2[p]  # noqa: E702
                    x = a0[p]
                    s00 += x * y0; s01 += x * y1; s02 += x * y2  # noqa: E702
                    x = a1[p]
                    s10 += x * y0; s11 += x * y1; s12 += x * y2  # noqa: E702
                    x = a2[p]
                    s20 += x * y0; s21 += x * y1; s22 += x * y2  # noqa: E702
                    x = a3[p]
                    s30 += x * y0; s31 += x * y1; s32 += x * y2  # noqa: E702
                tile[0, 0] = s00; tile[0, 1] = s01; tile[0, 2] = s02  # noqa: E702
                tile[1, 0] = s10; tile[1, 1] = s11; tile[1, 2] = s12  # noqa: E702
                tile[2, 0] = s20; tile[2, 1] = s21; tile[2, 2] = s22  # noqa: E702
                tile[3, 0] = s30; tile[3, 1] = s31; tile[3, 2] = s32  # noqa: E702
                nr = min(3, n - j0)
                for r in range(mr):
                    crow = c[i0 + r]
                    for s in range(nr):
                        if first:
                            crow[j0 + s] = tile[r, s]
                        else:
                            crow[j0 + s] += tile[r, s]


#: The micro-kernel of this process's instruction set (resolved when gemm_* first compile).
block_task = block_task_6x4 if (MR, NR) == (6, 4) else block_task_4x3


@njit(**JIT_FAST)
def gemm_serial(a, bt, c, k):
    """C[t] = A[t] @ Bt[t].T over the first ``k`` columns of A and Bt, on the calling thread.

    ``a`` [batch, m, >=k], ``bt`` [batch, n, >=k], ``c`` [batch, m, n]; rows contiguous.
    """
    batch, m, n = c.shape
    ntasks = ((m + MC - 1) // MC) * ((n + NC - 1) // NC)
    tile = np.empty((MR, NR), c.dtype)
    zero = np.zeros(1, c.dtype)[0]
    for bi in range(batch):
        for t in range(ntasks):
            block_task(a[bi], bt[bi], c[bi], t, k, zero, tile)


@njit(parallel=True, **JIT_FAST)
def gemm_parallel(a, bt, c, k):
    """C[t] = A[t] @ Bt[t].T like ``gemm_serial``, (batch entry, C block) tasks over threads."""
    batch, m, n = c.shape
    ntasks = ((m + MC - 1) // MC) * ((n + NC - 1) // NC)
    zero = np.zeros(1, c.dtype)[0]
    for u in prange(batch * ntasks):
        bi = u // ntasks
        tile = np.empty((MR, NR), c.dtype)
        block_task(a[bi], bt[bi], c[bi], u - bi * ntasks, k, zero, tile)


# ---------------------------------------------------------------------------------------------
# Python wrappers
# ---------------------------------------------------------------------------------------------


def _padded_ld(k: int, itemsize: int) -> int:
    per_line = 64 // itemsize
    ld = (k + per_line - 1) // per_line * per_line
    if (ld * itemsize) % 4096 == 0:
        ld += per_line
    return ld


def _gemm3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """C = A @ B for 3-D C-contiguous A [batch, m, k], C [batch, m, n]; B C- or F-ordered rows."""
    batch, m, k = a.shape
    n = b.shape[2]
    if c.size == 0:
        return
    if k == 0:
        c[...] = 0
        return
    parallel = batch * m * n * k >= PARALLEL_MIN_WORK
    if c.dtype.kind != "f":
        b = np.ascontiguousarray(b)
        (ikj_parallel if parallel else ikj_serial)(a, b, c)
        return
    isz = a.dtype.itemsize
    # Rows of A and of Bt all exactly 4 KiB apart would fight for the same L1 sets (measured at
    # n = 2048: 69 vs 87 GF/s); padding one side is enough, and B is copied anyway.
    aliased = (k * isz) % 4096 == 0
    bt = b.transpose(0, 2, 1)
    if not bt.flags.c_contiguous:
        bt = aligned_empty((batch, n, _padded_ld(k, isz)), a.dtype)
        (transpose_parallel if parallel else transpose_serial)(b, bt)
    elif aliased:
        bt_pad = aligned_empty((batch, n, _padded_ld(k, isz)), a.dtype)
        bt_pad[:, :, :k] = bt
        bt = bt_pad
    (gemm_parallel if parallel else gemm_serial)(a, bt, c, k)


def _rhs(b: np.ndarray, dt: np.dtype) -> np.ndarray:
    # A matrix whose transpose is C-contiguous is kept as is: the gemm wants B transposed.
    if b.dtype == dt and b.swapaxes(-1, -2).flags.c_contiguous:
        return b
    return np.ascontiguousarray(b, dtype=dt)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` for 2-D arrays [m, k] @ [k, n] -> [m, n], without BLAS.

    float32/float64 run the packed gemm (float16 is computed in float32 and cast back);
    integer dtypes run the i-k-j loop. ``a`` is made C-contiguous if it is not; ``b`` may be
    C- or F-contiguous (a transposed weight is used without a copy). ``out``, when given, must
    be an [m, n] array of the input dtype; it is written and returned.
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
    dt = compute_dtype(a.dtype)
    a_c = np.ascontiguousarray(a, dtype=dt)
    b_c = _rhs(b, dt)
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

    The caller broadcasts batch dimensions (both batches must be equal). Same dtype rules as
    ``matmul``; all batch entries run in one kernel call (one parallel region).
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
    a_c = np.ascontiguousarray(a, dtype=dt)
    b_c = _rhs(b, dt)
    c = np.empty((a.shape[0], a.shape[1], b.shape[2]), dt)
    _gemm3(a_c, b_c, c)
    return c.astype(a.dtype, copy=False)
