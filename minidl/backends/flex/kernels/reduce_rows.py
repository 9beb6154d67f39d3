"""Short-row reduction kernels for the small work of :mod:`.reduce`: a plain row sum, and the
extreme of each row with its position in one pass (``max_with_indices``, ``min_with_indices``).

Mirrors the small cases of burn-flex's ``float_sum_dim`` and ``float_max_dim_with_indices``
(a [batch, classes] logits tensor). The general kernels of :mod:`.reduce` take the op as an
argument and branch on it per row: on rows of 10 values that cost four times the sum itself
(a [128, 10] row sum 1.84 us vs 0.46 us, measured on AVX-512), so the short rows get their
own loops.
"""

from __future__ import annotations

from numba import njit, prange

from ._common import JIT, JIT_FAST

ARGMAX, ARGMIN = 0, 1


@njit(**JIT_FAST)
def row_sum_serial(x, out, zero):
    """out[i] = sum of x[i, :] for x [rows, n], ``zero`` of x's dtype (the reduction loop
    vectorizes: reassoc). Rows of 8 and 4 (BatchNorm's first mean over the width of an 8x8 or
    4x4 plane) are summed pairwise, written out: the loop's vector body never runs on so few
    values, and [2048, 8] took 3.1 us, 1.6 so ([2048, 4]: 3.7 us, 0.8)."""
    n = x.shape[1]
    if n == 8:
        for i in range(x.shape[0]):
            r = x[i]
            out[i] = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        return
    if n == 4:
        for i in range(x.shape[0]):
            r = x[i]
            out[i] = (r[0] + r[1]) + (r[2] + r[3])
        return
    for i in range(x.shape[0]):
        r = x[i]
        s = zero
        for j in range(r.shape[0]):
            s += r[j]
        out[i] = s


@njit(**JIT)
def divide_rows(out, count):
    """out[i] /= count (an integer), rounded as NumPy's ``out / count`` in out's dtype (a
    mean's last step). For float32 the quotient is taken in float64 and rounded once more:
    that double rounding gives the correctly rounded float32 quotient (53 >= 2 * 24 + 2)."""
    for i in range(out.shape[0]):
        out[i] = out[i] / count


@njit(**JIT)  # no fastmath here: the callers' flags reach what they inline (``arcp`` would
def row_sums(x, out, zero, count):  # multiply by a rounded 1 / count); the sum keeps its own
    """``row_sum_serial``, then each sum divided by ``count`` unless it is 0 (a mean: one
    kernel call where a sum and NumPy's divide were two)."""
    row_sum_serial(x, out, zero)
    if count:
        divide_rows(out, count)


@njit(**JIT_FAST)
def _extreme_rows(x, vals, idx, op, lo, hi):
    # vals[i], idx[i] = the first extreme of row i and its position (the first NaN wins): one
    # pass where max() then argmax() made two, each with its own views and output
    n = x.shape[1]
    for i in range(lo, hi):
        r = x[i]
        m = r[0]
        best = 0
        for j in range(1, n):
            if m != m:
                break
            v = r[j]
            if (v > m if op == ARGMAX else v < m) or v != v:
                m = v
                best = j
        vals[i] = m
        idx[i] = best


@njit(**JIT_FAST)
def extreme_rows_serial(x, vals, idx, op):
    """``(max, argmax)`` (op ARGMAX) or ``(min, argmin)`` of each row of x [rows, n], n >= 1."""
    _extreme_rows(x, vals, idx, op, 0, x.shape[0])


@njit(parallel=True, **JIT_FAST)
def extreme_rows_parallel(x, vals, idx, op):
    """``extreme_rows_serial`` with blocks of 64 rows spread over threads."""
    rows = x.shape[0]
    for t in prange((rows + 63) // 64):
        hi = t * 64 + 64
        _extreme_rows(x, vals, idx, op, t * 64, hi if hi < rows else rows)
