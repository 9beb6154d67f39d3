"""The blocked gemm around the micro-kernel: packing A and B, and one block of C per task.

Mirrors the packing and cache blocking of burn-flex's matmul (the BLIS loop nest its ``gemm``
crate follows).

* **B** [k, n] is packed once per call into strips of ``NR`` columns, each strip ``k`` rows of
  ``NR`` contiguous values (zero past column ``n``): the micro-kernel reads a ``KC x NR`` piece
  of a strip as one stream, and that piece (32 KiB on AVX-512) stays in L1 while the kernel
  walks down the A block.
* **A** [m, k] is packed per task and per ``KC`` chunk into micro-panels of ``MR`` rows, stored
  column by column (``MR`` values per step of ``k``, zero past row ``m``): one ``MC x KC``
  block, read from L2.
* Both are read through their strides, so a transposed or strided operand (``x.T`` in a
  backward pass) is packed straight from where it lies, without a transpose copy first. numba
  compiles a layout-specific copy for C-contiguous inputs, which it vectorizes.
* A task owns one (``mc`` rows) x (``nc`` columns) block of C of one batch entry, so tasks run
  on threads without races; the packed B is shared by all of them.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT_FAST
from .gemm_micro import MR, NV, VBYTES, micro_tile

#: The reduction chunk: a KC x NR piece of a B strip is what stays in L1.
KC = 256


@njit(**JIT_FAST)
def nr_of(c):
    """Columns of the register tile for ``c``'s dtype: ``NV`` vectors of ``VBYTES // itemsize``."""
    return NV * (VBYTES // c.itemsize)


@njit(**JIT_FAST)
def pack_b_strip(b, s, nr, out, off):
    """Pack columns ``[s*nr, s*nr + nr)`` of ``b`` [k, n] into ``out[off : off + k*nr]`` (k rows of nr)."""
    k, n = b.shape
    j0 = s * nr
    w = min(nr, n - j0)
    if b.strides[1] <= b.strides[0]:  # rows of b are contiguous-ish: walk them
        for p in range(k):
            row = b[p]
            o = off + p * nr
            for jj in range(w):
                out[o + jj] = row[j0 + jj]
            for jj in range(w, nr):
                out[o + jj] = 0
    else:  # b is a transposed view: walk its columns
        for jj in range(w):
            col = b[:, j0 + jj]
            for p in range(k):
                out[off + p * nr + jj] = col[p]
        for jj in range(w, nr):
            for p in range(k):
                out[off + p * nr + jj] = 0


@njit(**JIT_FAST)
def pack_a_block(a, i0, i1, p0, p1, out):
    """Pack ``a[i0:i1, p0:p1]`` into MR-row micro-panels in ``out``, column by column, zero-padded."""
    kc = p1 - p0
    m = i1 - i0
    npanel = (m + MR - 1) // MR
    if a.strides[1] <= a.strides[0]:
        for q in range(npanel):
            base = q * kc * MR
            for r in range(MR):
                i = i0 + q * MR + r
                if i < i1:
                    row = a[i, p0:p1]
                    for p in range(kc):
                        out[base + p * MR + r] = row[p]
                else:
                    for p in range(kc):
                        out[base + p * MR + r] = 0
    else:  # a is a transposed view: its columns are contiguous
        for q in range(npanel):
            base = q * kc * MR
            r_hi = min(MR, m - q * MR)
            for p in range(kc):
                col = a[i0 + q * MR : i0 + q * MR + r_hi, p0 + p]
                o = base + p * MR
                for r in range(r_hi):
                    out[o + r] = col[r]
                for r in range(r_hi, MR):
                    out[o + r] = 0


@njit(**JIT_FAST)
def block_task(a, bp, c, i_lo, i_hi, s_lo, s_hi, ap, tile):
    """C[i_lo:i_hi, strips s_lo..s_hi) = A @ B for one batch entry, B already packed in ``bp``.

    ``a`` [m, k] any strides; ``bp`` the packed strips of B (``k*nr`` values each); ``ap`` room
    for one packed MC x KC block of A; ``tile`` an MR x NR scratch for tiles at C's edges.
    """
    m, k = a.shape
    n = c.shape[1]
    nr = nr_of(c)
    for p0 in range(0, k, KC):
        p1 = min(p0 + KC, k)
        kc = p1 - p0
        first = p0 == 0
        pack_a_block(a, i_lo, i_hi, p0, p1, ap)
        for s in range(s_lo, s_hi):
            j = s * nr
            boff = s * k * nr + p0 * nr
            for i in range(i_lo, i_hi, MR):
                aoff = (i - i_lo) * kc
                if i + MR <= m and j + nr <= n:
                    micro_tile(kc, ap, aoff, bp, boff, c, i, j, first)
                else:
                    micro_tile(kc, ap, aoff, bp, boff, tile, 0, 0, True)
                    for r in range(min(MR, m - i)):
                        crow = c[i + r]
                        for jj in range(min(nr, n - j)):
                            if first:
                                crow[j + jj] = tile[r, jj]
                            else:
                                crow[j + jj] += tile[r, jj]


@njit(**JIT_FAST)
def _pack_b_one(b, buf, u, ns, nr, bsz):
    bi = u // ns
    s = u - bi * ns
    pack_b_strip(b[bi], s, nr, buf, bi * bsz + s * b.shape[1] * nr)


@njit(**JIT_FAST)
def _worker(a, c, buf, mc, ncs, w, nw):
    # Tasks are (batch entry, row block, column block) in that order; worker w of nw takes one
    # contiguous run of them and packs A into its own part of the scratch.
    batch, m, k = a.shape
    n = c.shape[2]
    nr = nr_of(c)
    ns = (n + nr - 1) // nr
    bsz = ns * k * nr
    nti = (m + mc - 1) // mc
    ntj = (ns + ncs - 1) // ncs
    ntask = batch * nti * ntj
    asz = (mc + MR - 1) // MR * MR * min(KC, k)
    ap = buf[batch * bsz + w * asz : batch * bsz + (w + 1) * asz]
    tile = np.empty((MR, nr), c.dtype)
    for t in range(w * ntask // nw, (w + 1) * ntask // nw):
        bi = t // (nti * ntj)
        r = t - bi * nti * ntj
        ti = r // ntj
        tj = r - ti * ntj
        block_task(a[bi], buf[bi * bsz : (bi + 1) * bsz], c[bi], ti * mc, min(ti * mc + mc, m),
                   tj * ncs, min(tj * ncs + ncs, ns), ap, tile)  # fmt: skip


@njit(**JIT_FAST)
def gemm_serial(a, b, c, buf, mc, ncs):
    """C[t] = A[t] @ B[t] on the calling thread; ``buf`` is scratch of ``scratch_size(.., 1)``.

    ``a`` [batch, m, k] and ``b`` [batch, k, n] with any strides, ``c`` [batch, m, n] with
    contiguous rows; tasks of ``mc`` rows x ``ncs`` strips of ``NR`` columns.
    """
    batch, k, n = b.shape
    nr = nr_of(c)
    ns = (n + nr - 1) // nr
    for u in range(batch * ns):
        _pack_b_one(b, buf, u, ns, nr, ns * k * nr)
    _worker(a, c, buf, mc, ncs, 0, 1)


@njit(parallel=True, **JIT_FAST)
def gemm_parallel(a, b, c, buf, mc, ncs, nw):
    """``gemm_serial`` on ``nw`` workers: B strips packed over threads, then each worker its
    share of the C blocks (a static split: tasks are equal, and each worker packs A into its
    own slice of ``buf``, sized by ``scratch_size(.., nw)``)."""
    batch, k, n = b.shape
    nr = nr_of(c)
    ns = (n + nr - 1) // nr
    for u in prange(batch * ns):
        _pack_b_one(b, buf, u, ns, nr, ns * k * nr)
    for w in prange(nw):
        _worker(a, c, buf, mc, ncs, w, nw)


def scratch_size(batch: int, m: int, n: int, k: int, nr: int, mc: int, nw: int) -> int:
    """Elements of scratch one call needs: packed B for every batch entry, one A block per worker."""
    strips = -(-n // nr)
    return batch * strips * k * nr + nw * (-(-mc // MR) * MR) * min(KC, k)
