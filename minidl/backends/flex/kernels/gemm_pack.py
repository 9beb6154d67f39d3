"""The blocked gemm around the micro-kernel: packing, cache blocking, one block of C per task.

Mirrors the packing and cache blocking of burn-flex's matmul (the BLIS loop nest its ``gemm``
crate follows).

* **B** [k, n] is read where it lies (``B_IN_PLACE``: whole NR-column strips straight from
  its contiguous rows, a partial last strip packed) or packed into strips of ``NR`` columns,
  each strip ``k`` rows of ``NR`` contiguous values (zero past column ``n``), with
  whole-vector copies, or 16 x 16 register transposes when B is a transposed view
  (``gemm_vec``): by the task that uses them (``B_OWN``), whole by each worker for itself
  (``B_WORKER``), or once up front, shared by all tasks (``B_SHARED``).
* **A** [m, k] is read where it lies when its rows are contiguous (the micro-kernel takes A's
  strides). Otherwise (a transposed view whose rows are far apart, rows far enough apart
  that would evict each other from L1, any other strides) it is packed into MR-row
  micro-panels stored column by column, one ``KC`` chunk at a time: panel by panel right
  before use when a panel meets one run of strips, else the task's block up front.
* Loop nest per task and ``KC`` chunk: each MR-row panel of A (stays in L1) meets a run of
  ``SUB`` B strips (stay in L2), one register tile each; a last panel of fewer than MR rows
  takes a shorter tile (``micro_rows``).
* A task owns one block of C (runs of MR-row panels x runs of NR-column strips) of one batch
  entry, so tasks run on threads without races; the tasks are dealt out to the workers in
  contiguous runs, each taken from its own atomic counter (``_worker``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import JIT_FAST
from .gemm_micro import MR, NV, VBYTES, address, fetch_add, micro_rows, micro_tile
from .gemm_vec import copy_vectors, transpose_square
from .isa import ISA

#: The reduction chunk: an MR x KC panel of A (24 KiB of float32 on AVX2) stays in L1.
#: Longer chunks mean fewer passes over C (each pass misses cache on C's rows): measured on
#: AVX-512, 1 thread, KC 1024 vs 512: n = 2048 197 vs 184-192 GF/s, n = 1024 195 vs 188,
#: although the A panel then fills L1; on AVX2 the two were equal.
KC = 1024 if ISA == "avx512" else 512
#: B strips swept per A panel: SUB x KC x NR float32 (1 MiB on AVX-512, 256 KiB on AVX2) stays in L2.
SUB = 8


@njit(**JIT_FAST)
def nr_of(c):
    """Columns of the register tile for ``c``'s dtype: ``NV`` vectors of ``VBYTES // itemsize``."""
    return NV * (VBYTES // c.itemsize)


@njit(**JIT_FAST)
def pack_b_group(b, s0, s1, nr, out, off):
    """Pack the NR-column strips ``s0..s1`` of ``b`` [k, n] into ``out`` from ``off``, strip after
    strip, each ``k`` rows of ``nr`` values (zero past column ``n``)."""
    k, n = b.shape
    isz = out.itemsize
    nl = VBYTES // isz
    sb0, sb1 = b.strides[0] // isz, b.strides[1] // isz
    base = address(out) + off * isz
    b_addr = address(b)
    if sb1 == 1:  # rows of b are contiguous: whole-vector copies, one pass down the rows
        for p in range(k):
            row = b[p]
            for s in range(s0, s1):
                j0 = s * nr
                o = off + (s - s0) * k * nr + p * nr
                if j0 + nr <= n:
                    copy_vectors(base + ((s - s0) * k * nr + p * nr) * isz, b_addr + (p * sb0 + j0) * isz, NV, out)
                else:
                    for jj in range(nr):
                        out[o + jj] = row[j0 + jj] if j0 + jj < n else 0
    else:  # lanes x lanes blocks transposed in registers when b's columns are contiguous
        for s in range(s0, s1):
            j0 = s * nr
            o = off + (s - s0) * k * nr
            p_done = 0
            if sb0 == 1 and j0 + nr <= n:
                p_done = k - k % nl
                for p in range(0, p_done, nl):
                    for v in range(NV):
                        transpose_square(address(out) + (o + p * nr + v * nl) * isz, nr,
                                         b_addr + (p + (j0 + v * nl) * sb1) * isz, sb1, out)  # fmt: skip
            for p in range(p_done, k):
                row = b[p]
                for jj in range(nr):
                    out[o + p * nr + jj] = row[j0 + jj] if j0 + jj < n else 0


@njit(**JIT_FAST)
def pack_a_block(a, i0, i1, p0, p1, out):
    """Pack ``a[i0:i1, p0:p1]`` into MR-row micro-panels in ``out``, column by column, zero-padded.

    ``out`` needs one vector of elements past the panels. Whole vectors move the values where
    a vector holds a panel's MR rows (float32) and A has rows below the panel to read from (a
    lanes-row block, of which the panel keeps its MR rows: the extra lanes of each store are
    overwritten by the next column's, or lie past the panels): C-ordered rows by lanes x lanes register transposes, a transposed view (contiguous
    columns) by one vector per column. Measured, 1 thread, AVX-512: the MLP's x [128, 784]
    packed in 15 us (the element loop: 38), its x.T in 10 (36).
    """
    kc = p1 - p0
    m = i1 - i0
    isz = out.itemsize
    nl = VBYTES // isz
    npanel = (m + MR - 1) // MR
    sa0, sa1 = a.strides[0] // isz, a.strides[1] // isz
    a_addr, o_addr = address(a), address(out)
    rows_a = a.shape[0]
    if sa1 <= sa0:
        for q in range(npanel):
            base = q * kc * MR
            i = i0 + q * MR
            p_done = 0
            if sa1 == 1 and MR <= nl and i + nl <= rows_a and i + MR <= i1:
                p_done = kc - kc % nl
                for p in range(0, p_done, nl):
                    transpose_square(o_addr + (base + p * MR) * isz, MR,
                                     a_addr + (i * sa0 + p0 + p) * isz, sa0, out)  # fmt: skip
            for r in range(MR):
                if i + r < i1:
                    row = a[i + r, p0:p1]
                    for p in range(p_done, kc):
                        out[base + p * MR + r] = row[p]
                else:
                    for p in range(p_done, kc):
                        out[base + p * MR + r] = 0
    else:  # a is a transposed view: its columns are contiguous
        for q in range(npanel):
            base = q * kc * MR
            i = i0 + q * MR
            r_hi = min(MR, m - q * MR)
            if sa0 == 1 and MR <= nl and r_hi == MR and i + nl <= rows_a:
                for p in range(kc):
                    copy_vectors(o_addr + (base + p * MR) * isz, a_addr + (i + (p0 + p) * sa1) * isz, 1, out)
                continue
            for p in range(kc):
                col = a[i : i + r_hi, p0 + p]
                o = base + p * MR
                for r in range(r_hi):
                    out[o + r] = col[r]
                for r in range(r_hi, MR):
                    out[o + r] = 0


@njit(**JIT_FAST)
def _edge_tile(kc, pa, ars, acs, pb, ldb, c, i, ia, j, tile, first):
    # A tile crossing C's last row or column: computed into ``tile``, its part inside C
    # written. ``pa`` points at A row ``ia`` (== i unless A is read in place: then the tile
    # starts MR rows above the end).
    m, n = c.shape
    nr = tile.shape[1]
    micro_tile(kc, pa, ars, acs, pb, ldb, address(tile), nr, True, tile)
    for r in range(i, min(i + MR, m)):
        crow = c[r]
        trow = tile[r - ia]
        for jj in range(j, min(j + nr, n)):
            if first:
                crow[jj] = trow[jj - j]
            else:
                crow[jj] += trow[jj - j]


#: The shorter tiles for a last panel of fewer than MR rows (rows rounded up to one of them).
SHORT1, SHORT2 = (4, 8) if MR == 12 else (2, 4)


@njit(**JIT_FAST)
def _short_tile(kc, a_addr, sa0, sa1, direct_a, pa, pb, ldb, c, i, j, tile, first):
    # C rows i..m (fewer than MR) of the tile at column j, with the shortest tile that holds
    # them: read from A in place (rows ending at m when the tile would pass it) or from the
    # packed panel ``pa`` (zero rows past m), into C directly when it fits, else into ``tile``.
    m = c.shape[0]
    isz = c.itemsize
    nr = tile.shape[1]
    rows = m - i
    r = SHORT1 if rows <= SHORT1 else SHORT2
    ia = i
    if direct_a:
        ia = min(i, m - r)
        pa, ars, acs = a_addr + (ia * sa0) * isz, sa0, sa1
    else:
        ars, acs = 1, MR
    if r == rows:
        pc, ldc = address(c) + (i * c.strides[0] // isz + j) * isz, c.strides[0] // isz
    else:
        pc, ldc = address(tile), nr
    if r == SHORT1:
        micro_rows(kc, pa, ars, acs, pb, ldb, pc, ldc, first or r != rows, c, SHORT1)
    else:
        micro_rows(kc, pa, ars, acs, pb, ldb, pc, ldc, first or r != rows, c, SHORT2)
    if r != rows:
        for q in range(i, m):
            crow = c[q]
            trow = tile[q - ia]
            for jj in range(j, j + nr):
                if first:
                    crow[jj] = trow[jj - j]
                else:
                    crow[jj] += trow[jj - j]


#: How a task finds B's strips (``b_mode``): packed once up front into the shared part of the
#: scratch, packed by the task that uses them, read where they lie (B's rows contiguous; a
#: partial last strip packed by its task), or packed whole by each worker into its own slice
#: before its first task (a small B: no pass before the workers, no strips from the other core).
B_SHARED, B_OWN, B_IN_PLACE, B_WORKER = 0, 1, 2, 3


@njit(**JIT_FAST)
def block_task(a, b, bp, s_base, b_mode, c, i_lo, i_hi, s_lo, s_hi, ap, tile, direct_a):
    """C[i_lo:i_hi, strips s_lo..s_hi) = A @ B for one batch entry.

    ``a`` [m, k], ``b`` [k, n]. ``b_mode`` B_SHARED / B_OWN: B's strips are packed in ``bp``
    (from strip ``s_base`` on); B_IN_PLACE: whole strips are read from ``b`` (its rows
    contiguous), a partial last strip from ``bp``. ``direct_a``: the micro-kernel reads A
    where it lies (unit stride along one of its dims, m >= MR), else A is packed block by
    block into ``ap``. A tile that would cross C's last row is computed from the last MR rows
    of A when A is read in place, from zero padding when packed (a packed B is zero-padded),
    into the scratch ``tile``, and only its part inside C is written.

    Loop order (BLIS's, with A and B swapped because the vectors run along C's rows): for
    each chunk of k, each MR-row panel of A (kc x MR: stays in L1) meets a run of B strips
    (kc x NR each, ``SUB`` of them: stay in L2). Measured against the other order (one B
    strip in L1, A panels from L2): equal within noise, with fewer misses on C's rows.
    """
    m, k = a.shape
    n = c.shape[1]
    nr = nr_of(c)
    isz = c.itemsize
    sa0, sa1 = a.strides[0] // isz, a.strides[1] // isz
    sb0 = b.strides[0] // isz
    a_addr, ap_addr, bp_addr, b_addr = address(a), address(ap), address(bp), address(b)
    c_addr, ldc = address(c), c.strides[0] // isz
    nk = (k + KC - 1) // KC  # equal chunks: a short last one would pay C's update for little
    one_pass = s_hi - s_lo <= SUB
    for t in range(nk):
        p0 = t * k // nk
        p1 = (t + 1) * k // nk
        kc = p1 - p0
        first = t == 0
        if not direct_a and not one_pass:
            pack_a_block(a, i_lo, i_hi, p0, p1, ap)
        for s0 in range(s_lo, s_hi, SUB):
            for i in range(i_lo, i_hi, MR):
                if direct_a:
                    ia = min(i, m - MR)
                    pa, ars, acs = a_addr + (ia * sa0 + p0 * sa1) * isz, sa0, sa1
                elif one_pass:  # each panel packed right before its one run of strips
                    pack_a_block(a, i, min(i + MR, i_hi), p0, p1, ap)
                    ia = i
                    pa, ars, acs = ap_addr, 1, MR
                else:
                    ia = i
                    pa, ars, acs = ap_addr + (i - i_lo) * kc * isz, 1, MR
                for s in range(s0, min(s0 + SUB, s_hi)):
                    if b_mode != B_IN_PLACE:
                        pb, ldb = bp_addr + ((s - s_base) * k + p0) * nr * isz, nr
                    elif (s + 1) * nr <= n:
                        pb, ldb = b_addr + (p0 * sb0 + s * nr) * isz, sb0
                    else:
                        pb, ldb = bp_addr + p0 * nr * isz, nr
                    j = s * nr
                    if j + nr > n or (i + MR > m and m - i > SHORT2):
                        _edge_tile(kc, pa, ars, acs, pb, ldb, c, i, ia, j, tile, first)
                    elif i + MR > m:
                        _short_tile(kc, a_addr + p0 * sa1 * isz, sa0, sa1, direct_a, pa, pb, ldb, c, i, j,
                                    tile, first)  # fmt: skip
                    elif ars == 1:  # a constant row step: displacements, not a chain of adds
                        micro_tile(kc, pa, 1, acs, pb, ldb, c_addr + (i * ldc + j) * isz, ldc, first, c)
                    else:
                        micro_tile(kc, pa, ars, acs, pb, ldb, c_addr + (i * ldc + j) * isz, ldc, first, c)


#: B strips packed per pass down B's rows (8 strips of 32 float32 = 1 KiB of each row).
GROUP = 8


@njit(**JIT_FAST)
def _worker(a, b, c, buf, nti, ntj, w, nw, direct_a, b_mode, counters):
    # Tasks are (batch entry, row block, column block), the blocks splitting C's MR-row panels
    # into nti near-equal runs and its NR-column strips into ntj. The tasks are dealt out in
    # nw contiguous runs, one per worker, each with its own counter (``counters[8 * v]``, a
    # cache line apart): worker w takes tasks from its own run, then from the others' (a
    # worker that starts late, or shares its core with another process, loses tasks to the
    # others). On time, each worker writes the same rows of C call after call (they stay in
    # its L2, where the other core would have to fetch them). Its slice of the scratch holds
    # its packed A block and, with B_OWN (each strip used by one task only), the B strips of
    # its task, packed right before use (then still in L2, no separate packing pass), with
    # B_IN_PLACE the partial last strip, if its task has it.
    batch, m, k = a.shape
    n = c.shape[2]
    nr = nr_of(c)
    npan = (m + MR - 1) // MR
    ns = (n + nr - 1) // nr
    shared, asz, bsz = _scratch_parts(batch, m, n, k, nr, nti, ntj, direct_a, b_mode)
    base = _pages(shared) + w * _pages(asz + bsz)
    ap = buf[base : base + asz + 1]
    bw = buf[base + asz : base + asz + bsz + 1]
    tile = np.empty((MR, nr), c.dtype)
    ntask = batch * nti * ntj
    packed_for = -1  # the batch entry whose B this worker's slice holds (B_WORKER)
    for dv in range(nw):
        v = (w + dv) % nw
        lo = v * ntask // nw
        hi = (v + 1) * ntask // nw
        while True:
            t = lo + fetch_add(counters[8 * v : 8 * v + 1])
            if t >= hi:
                break
            bi = t // (nti * ntj)
            r = t - bi * nti * ntj
            ti = r // ntj
            tj = r - ti * ntj
            i_lo = ti * npan // nti * MR
            i_hi = min((ti + 1) * npan // nti * MR, m)
            s_lo = tj * ns // ntj
            s_hi = (tj + 1) * ns // ntj
            bp, s_base = bw, 0
            if b_mode == B_OWN:
                pack_b_group(b[bi], s_lo, s_hi, nr, bw, 0)
                s_base = s_lo
            elif b_mode == B_IN_PLACE and s_hi * nr > n:
                pack_b_group(b[bi], s_hi - 1, s_hi, nr, bw, 0)
            elif b_mode == B_WORKER and packed_for != bi:
                pack_b_group(b[bi], 0, ns, nr, bw, 0)
                packed_for = bi
            elif b_mode == B_SHARED:
                bp = buf[bi * ns * k * nr : (bi + 1) * ns * k * nr + 1]
            block_task(a[bi], b[bi], bp, s_base, b_mode, c[bi], i_lo, i_hi, s_lo, s_hi, ap, tile, direct_a)


@njit(**JIT_FAST)
def _scratch_parts(batch, m, n, k, nr, nti, ntj, direct_a, b_mode):
    # (shared packed B, one worker's A block, one worker's B strips), in elements; a packed A
    # block has one vector of slack after it (``pack_a_block``'s whole-vector stores).
    npan = (m + MR - 1) // MR
    ns = (n + nr - 1) // nr
    shared = batch * ns * k * nr if b_mode == B_SHARED else 0
    asz = 0 if direct_a else (npan + nti - 1) // nti * MR * kc_max(k) + VBYTES // 4
    bsz = 0
    if b_mode == B_OWN:
        bsz = (ns + ntj - 1) // ntj * k * nr
    elif b_mode == B_IN_PLACE and n % nr:
        bsz = k * nr
    elif b_mode == B_WORKER:
        bsz = ns * k * nr
    return shared, asz, bsz


#: Elements to which the shared part and each worker's slice of the scratch are rounded up
#: (4 KiB of float32): every worker's packed A and B then sit at the same offsets within a
#: page. Measured, 2 threads, x.T @ dh: with slices 186432 B apart (A and B at other page
#: offsets in worker 1) worker 1 ran 11-14 us longer than worker 0 on the same work, call
#: after call, whichever thread ran it (serially both halves took the same); rounded, the two
#: end within 1-2 us of each other.
PAGE = 1024


@njit(**JIT_FAST)
def _pages(x):
    return (x + PAGE - 1) // PAGE * PAGE


@njit(**JIT_FAST)
def kc_max(k):
    """The longest reduction chunk: k split into equal chunks of at most KC."""
    nk = (k + KC - 1) // KC
    return (k + nk - 1) // nk


@njit(**JIT_FAST)
def _pack_shared_b(b, buf, u, nr, ngroup, g):
    # Group u of g strips (batch entry u // ngroup) into the shared packed B.
    k, n = b.shape[1], b.shape[2]
    ns = (n + nr - 1) // nr
    bi = u // ngroup
    s0 = (u - bi * ngroup) * g
    pack_b_group(b[bi], s0, min(s0 + g, ns), nr, buf, (bi * ns + s0) * k * nr)


@njit(**JIT_FAST)
def gemm_serial(a, b, c, buf, nti, ntj, b_mode, direct_a):
    """C[t] = A[t] @ B[t] on the calling thread; ``buf`` is scratch of ``scratch_size(.., 1)``.

    ``a`` [batch, m, k] and ``b`` [batch, k, n] with any positive strides, ``c`` [batch, m, n]
    with contiguous rows; C split into ``nti`` x ``ntj`` blocks per batch entry (runs of MR-row
    panels x runs of NR-column strips); ``b_mode`` and ``direct_a`` as in :func:`block_task`
    (B_OWN when ``nti == 1``: each block packs its own strips; B_SHARED: packed once up front).
    """
    batch, k, n = b.shape
    nr = nr_of(c)
    ngroup = ((n + nr - 1) // nr + GROUP - 1) // GROUP
    if b_mode == B_SHARED:
        for u in range(batch * ngroup):
            _pack_shared_b(b, buf, u, nr, ngroup, GROUP)
    _worker(a, b, c, buf, nti, ntj, 0, 1, direct_a, b_mode, np.zeros(8, np.int64))


@njit(parallel=True, **JIT_FAST)
def gemm_parallel(a, b, c, buf, nti, ntj, nw, b_mode, direct_a):
    """``gemm_serial`` on ``nw`` workers: B strips packed over threads (B_SHARED, in groups of
    fewer strips when GROUP would leave a thread without one), then the workers take C blocks
    as ``_worker`` says, each with its own slice of ``buf``, sized by ``scratch_size(.., nw)``."""
    batch, k, n = b.shape
    nr = nr_of(c)
    ns = (n + nr - 1) // nr
    g = min(GROUP, max(1, -(-batch * ns // (2 * nw))))
    ngroup = (ns + g - 1) // g
    if b_mode == B_SHARED:
        for u in prange(batch * ngroup):
            _pack_shared_b(b, buf, u, nr, ngroup, g)
    counters = np.zeros(8 * nw, np.int64)
    for w in prange(nw):
        _worker(a, b, c, buf, nti, ntj, w, nw, direct_a, b_mode, counters)


def scratch_size(batch: int, m: int, n: int, k: int, nr: int, nti: int, ntj: int, nw: int,
                 direct_a: bool, b_mode: int) -> int:  # fmt: skip
    """Elements of scratch one call needs: the shared packed B, then each worker's slice."""
    shared, asz, bsz = _scratch_parts.py_func(batch, m, n, k, nr, nti, ntj, direct_a, b_mode)
    return _pages.py_func(shared) + nw * _pages.py_func(asz + bsz) + 2
