"""Small broadcasts as one loop nest each: a bias row ``[1, n]`` or column ``[m, 1]`` over
``[m, n]``, and a per-channel ``[1, C, 1, 1]`` over an NCHW batch.

The general broadcast kernel (:mod:`.broadcast`) walks rows of a 3-D view and calls a small
function per row, which LLVM vectorizes; on small tensors that call per row is the cost. These
kernels keep the whole nest in one function, and give the general kernel's results to the
bit (the same inlined scalar op, ``binop``).
"""

from __future__ import annotations

import math

from numba import njit

from ._common import JIT_EW, PARALLEL_MIN_ELEMS
from .binops import binop


@njit(**JIT_EW)
def binary_row(a, b, out, op):
    """out[i, j] = a[i, j] <op> b[0, j] for 2-D a, out [m, n] and b [1, n] (a bias row): one
    loop nest, the row loop inlined. Through ``binary_serial`` each row was a call of its own
    (~25 ns: a [128, 10] + [1, 10] add 5.7 us vs 0.6 us, [128, 256] + [1, 256] 8.6 vs 3.6)."""
    br = b[0]
    n = out.shape[1]
    for i in range(out.shape[0]):
        ar = a[i]
        orow = out[i]
        for j in range(n):
            orow[j] = binop(op, ar[j], br[j])


@njit(**JIT_EW)
def binary_col(a, b, out, op):
    """out[i, j] = a[i, j] <op> b[i, 0] for 2-D a, out [m, n] and b [m, 1] (a per-row max or
    sum subtracted from logits); as ``binary_row``."""
    n = out.shape[1]
    for i in range(out.shape[0]):
        ar = a[i]
        orow = out[i]
        y = b[i, 0]
        for j in range(n):
            orow[j] = binop(op, ar[j], y)


@njit(**JIT_EW)
def binary_channel(a, y, out, op):
    """out[n, c, s] = a[n, c, s] <op> y[c] for a, out [N, C, S] and y [C]: a per-channel
    statistic over an NCHW batch (BatchNorm's mean, variance and affine), one loop nest.
    Through ``binary_serial`` each (n, c) row was a call of its own: [32, 8, 8, 8] * [1, 8, 1, 1]
    took 26 us, 4 here."""
    for n in range(out.shape[0]):
        for c in range(out.shape[1]):
            ar = a[n, c]
            orow = out[n, c]
            v = y[c]
            for s in range(orow.shape[0]):
                orow[s] = binop(op, ar[s], v)


@njit(**JIT_EW)
def channel_binary(y, a, out, op):
    """out[n, c, s] = y[c] <op> a[n, c, s]: ``binary_channel`` with the operands the other way
    round, for the ops that do not commute (LLVM vectorizes this loop less well: ~3x slower)."""
    for n in range(out.shape[0]):
        for c in range(out.shape[1]):
            ar = a[n, c]
            orow = out[n, c]
            v = y[c]
            for s in range(orow.shape[0]):
                orow[s] = binop(op, v, ar[s])


def channel_operand(a: tuple[int, ...], b: tuple[int, ...]) -> bool | None:
    """True when b is a per-channel [1, C, 1, ...] operand of a small a [N, C, ...], False when
    a is one of b, None otherwise."""
    for big, small, rhs in ((a, b, True), (b, a, False)):
        if (small[0] == 1 and small[1] == big[1] and all(d == 1 for d in small[2:])
                and math.prod(big) < PARALLEL_MIN_ELEMS and big != small):
            return rhs
    return None
