"""conv2d's loop-vectorized forward kernel, kept for float64 (float32 runs :mod:`.conv_tile`).

For one weight position r the inputs every output position needs form one contiguous slice
of the source rows (:mod:`.conv`); this kernel adds ``w[k, r] * slice_r`` into 4 output-channel
accumulator rows at once, 3 weight positions per pass. It is an element-wise loop, so LLVM's
loop vectorizer handles it with no horizontal sums; the 4 accumulator rows stay in L1, and the
``Wp - OW`` border columns are dropped when the rows are written out.
"""

from __future__ import annotations

from numba import njit, prange

from ._common import JIT_FAST

MRC = 4  # output channels per accumulator block
Q_TARGET = 1024  # output positions per accumulator row (4 rows x 1024 floats stay in L1)


@njit(**JIT_FAST)
def _accumulate(src, offs, w, k0, acc, q0, qb):
    """acc[i, :qb] = sum_r w[k0 + i, r] * src[q0 + offs[r] : q0 + offs[r] + qb], i < 4.

    Rows past the end of ``w`` are clamped to its last row (computed, never written out).
    Three weight positions per pass: 3 loads and 4 load/store pairs feed 12 multiply-adds.
    """
    nr = offs.shape[0]
    kl = w.shape[0] - 1
    w0 = w[k0]
    w1 = w[min(k0 + 1, kl)]
    w2 = w[min(k0 + 2, kl)]
    w3 = w[min(k0 + 3, kl)]
    a0 = acc[0]
    a1 = acc[1]
    a2 = acc[2]
    a3 = acc[3]
    for j in range(qb):
        a0[j] = 0
        a1[j] = 0
        a2[j] = 0
        a3[j] = 0
    r = 0
    while r + 3 <= nr:
        x0 = src[q0 + offs[r] : q0 + offs[r] + qb]
        x1 = src[q0 + offs[r + 1] : q0 + offs[r + 1] + qb]
        x2 = src[q0 + offs[r + 2] : q0 + offs[r + 2] + qb]
        u00, u01, u02 = w0[r], w0[r + 1], w0[r + 2]
        u10, u11, u12 = w1[r], w1[r + 1], w1[r + 2]
        u20, u21, u22 = w2[r], w2[r + 1], w2[r + 2]
        u30, u31, u32 = w3[r], w3[r + 1], w3[r + 2]
        for j in range(qb):
            v0 = x0[j]
            v1 = x1[j]
            v2 = x2[j]
            a0[j] += u00 * v0 + u01 * v1 + u02 * v2
            a1[j] += u10 * v0 + u11 * v1 + u12 * v2
            a2[j] += u20 * v0 + u21 * v1 + u22 * v2
            a3[j] += u30 * v0 + u31 * v1 + u32 * v2
        r += 3
    while r < nr:
        x0 = src[q0 + offs[r] : q0 + offs[r] + qb]
        u0, u1, u2, u3 = w0[r], w1[r], w2[r], w3[r]
        for j in range(qb):
            v0 = x0[j]
            a0[j] += u0 * v0
            a1[j] += u1 * v0
            a2[j] += u2 * v0
            a3[j] += u3 * v0
        r += 1


@njit(**JIT_FAST)
def _conv_task(src_all, offs, w3, bias, out, u, q_rows, wrow, acc):
    # Task u = (image n, group g, block of MRC output channels).
    n_img, k_out, oh_n, ow_n = out.shape
    groups, kg = w3.shape[0], w3.shape[1]
    nkb = (kg + MRC - 1) // MRC
    n = u // (groups * nkb)
    rem = u - n * groups * nkb
    g = rem // nkb
    k0 = (rem - g * nkb) * MRC
    src = src_all[n, g]
    w = w3[g]
    kn = min(MRC, kg - k0)
    for oh0 in range(0, oh_n, q_rows):
        nrows = min(q_rows, oh_n - oh0)
        _accumulate(src, offs, w, k0, acc, oh0 * wrow, nrows * wrow)
        for i in range(kn):
            k = g * kg + k0 + i
            bk = bias[k]
            arow = acc[i]
            for r in range(nrows):
                orow = out[n, k, oh0 + r]
                a_row = arow[r * wrow : r * wrow + ow_n]
                for j in range(ow_n):
                    orow[j] = a_row[j] + bk


@njit(**JIT_FAST)
def conv_serial(src_all, offs, w3, bias, out, q_rows, wrow, accs):
    """out[n, k] = bias[k] + sum_r w[k, r] * (shifted source rows), on one thread.

    ``src_all`` [N, G, L]: per (image, group) the flat source; ``offs`` [R]: where the row of
    weight position r starts in it; ``w3`` [G, Kg, R]; ``bias`` [K]; ``out`` [N, K, OH, OW];
    output row oh starts at ``oh * wrow`` in the source rows; ``q_rows`` rows per chunk;
    ``accs`` [parts, MRC, >= q_rows * wrow] accumulator rows, 64-byte aligned (``accs[0]``).
    """
    nkb = (w3.shape[1] + MRC - 1) // MRC
    for u in range(out.shape[0] * w3.shape[0] * nkb):
        _conv_task(src_all, offs, w3, bias, out, u, q_rows, wrow, accs[0])


@njit(parallel=True, **JIT_FAST)
def conv_parallel(src_all, offs, w3, bias, out, q_rows, wrow, accs):
    """``conv_serial`` with the (image, group, channel block) tasks cut into one contiguous
    part per thread, each with its own accumulator rows ``accs[part]``."""
    nkb = (w3.shape[1] + MRC - 1) // MRC
    ntask = out.shape[0] * w3.shape[0] * nkb
    parts = accs.shape[0]
    for part in prange(parts):
        for u in range(part * ntask // parts, (part + 1) * ntask // parts):
            _conv_task(src_all, offs, w3, bias, out, u, q_rows, wrow, accs[part])
