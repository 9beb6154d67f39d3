"""Small broadcasts as one loop nest each: a bias row ``[1, n]`` or column ``[m, 1]`` over
``[m, n]``, and a per-channel ``[1, C, 1, 1]`` over an NCHW batch.

The general broadcast kernel (:mod:`.broadcast`) walks rows of a 3-D view and calls a small
function per row, which LLVM vectorizes; on small tensors that call per row is the cost. These
kernels keep the whole nest in one function, and give the general kernel's results to the
bit (the same inlined scalar op, ``apply_binary``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._common import JIT_EW, PARALLEL_MIN_ELEMS
from .binops import ADD, MUL, apply_binary


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
            orow[j] = apply_binary(op, ar[j], br[j])


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
            orow[j] = apply_binary(op, ar[j], y)


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
                orow[s] = apply_binary(op, ar[s], v)


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
                orow[s] = apply_binary(op, v, ar[s])


@njit(**JIT_EW)
def stat_broadcast(a, b, out, op):
    """out = a <op> b when ``b`` is a small statistic of ``a`` (both C-contiguous, one rank,
    ``out`` of a's shape): a column (``b`` = a's leading dims then 1s: [m, 1], [32, 8, 8, 1])
    or a per-channel value ([1, C, 1, 1]); False, computing nothing, otherwise (a row such as
    a bias [1, n] included: it stays on :func:`small_broadcast`'s path, the one the book's
    kernel traces show). The cases of :func:`small_broadcast` with the
    statistic on the right, decided here from the shapes: that function's Python (shape tests,
    three reshapes, ~2 us) cost more than the loop on BatchNorm's [32, 8, 8, 8] operands. The
    loops run over the flat arrays with the same scalar op, so the results are the same bits."""
    nd = a.ndim
    if b.ndim != nd or nd == 0 or not (a.flags.c_contiguous and b.flags.c_contiguous):
        return False
    sa, sb = a.shape, b.shape
    af, bf, of = a.ravel(), b.ravel(), out.ravel()
    k = nd  # column: sb = sa[:k] + 1s
    while k > 0 and sb[k - 1] == 1:
        k -= 1
    same = k < nd
    for d in range(k):
        if sb[d] != sa[d]:
            same = False
    if k > 0 and same:
        m = bf.shape[0]
        inner = of.shape[0] // m if m else 0
        for i in range(m):
            y = bf[i]
            base = i * inner
            for j in range(inner):
                of[base + j] = apply_binary(op, af[base + j], y)
        return True
    if nd < 3 or sb[0] != 1 or sb[1] != sa[1]:
        return False
    for d in range(2, nd):
        if sb[d] != 1:
            return False
    c = sa[1]
    if sa[0] == 0 or c == 0:
        return True
    s = of.shape[0] // (sa[0] * c)  # per-channel: [N, C, S]
    for n in range(sa[0]):
        for ch in range(c):
            y = bf[ch]
            base = (n * c + ch) * s
            for j in range(s):
                of[base + j] = apply_binary(op, af[base + j], y)
    return True


@njit(**JIT_EW)
def _column_rows(op, s, big, out, n, left):
    # out[i * n + j] = s[i] <op> big[i * n + j] (left) or big[i * n + j] <op> s[i]; the
    # callers pass n as a literal where they can, so LLVM unrolls the short row
    if left:
        for i in range(s.shape[0]):
            y = s[i]
            base = i * n
            for j in range(n):
                out[base + j] = apply_binary(op, y, big[base + j])
    else:
        for i in range(s.shape[0]):
            y = s[i]
            base = i * n
            for j in range(n):
                out[base + j] = apply_binary(op, big[base + j], y)


@njit(**JIT_EW)
def column_binary(op, s, big, out, n, left):
    """out = s <op> big (``left``) or big <op> s over flat C-contiguous ``big`` and ``out`` of
    rows of ``n``, ``s`` one value per row (a column statistic, such as the gradient of a mean
    over the last dim expanded back). Rows of 2, 4 or 8 get a loop of that literal length,
    which LLVM unrolls into one vector op: a row loop of unknown length ran its scalar
    remainder on BatchNorm's 4- and 8-wide rows (6.1 and 8.7 us for 8K and 16K floats through
    the copy of the expanded operand, 2.4 and 3.6 so). Each element is the same scalar op,
    so the results are the same bits as any other path."""
    if n == 4:
        _column_rows(op, s, big, out, 4, left)
    elif n == 8:
        _column_rows(op, s, big, out, 8, left)
    elif n == 2:
        _column_rows(op, s, big, out, 2, left)
    else:
        _column_rows(op, s, big, out, n, left)


#: ops whose operands may be swapped: IEEE add and mul commute (max and min do not, for NaN
#: and signed zeros), so a statistic on the left runs the same loop as one on the right
COMMUTING = (ADD, MUL)


def small_broadcast(code: int, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """``a <op> b`` in one loop nest when both are C-contiguous, of one rank, small, and one is
    the other's per-row statistic (shape ``[m, 1, 1]`` of ``[m, h, w]``: trailing 1s, a
    column), per-column one (leading 1s: a bias row) or per-channel one (``[1, C, 1, 1]``).
    None when no such path fits; the caller's general path then runs."""
    if a.size >= b.size:
        big, small, rhs = a, b, True
    else:
        big, small, rhs = b, a, False
    if big.size >= PARALLEL_MIN_ELEMS:
        return None
    shape, stat = big.shape, small.shape
    in_order = rhs or code in COMMUTING  # the kernels below compute big <op> stat
    k = _ones_from(stat)  # stat = shape[:k] + 1s: one value per row of M = prod(shape[:k])
    if in_order and 0 < k < len(shape) and stat[:k] == shape[:k]:
        m = math.prod(shape[:k])
        out = np.empty(shape, big.dtype)
        binary_col(big.reshape(m, -1), small.reshape(m, 1), out.reshape(m, -1), code)
        return out
    k = _ones_to(stat)  # stat = 1s + shape[k:]: one row shared by every leading index
    if in_order and 0 < k < len(shape) and stat[k:] == shape[k:]:
        n = math.prod(shape[k:])
        out = np.empty(shape, big.dtype)
        binary_row(big.reshape(-1, n), small.reshape(1, n), out.reshape(-1, n), code)
        return out
    if big.ndim >= 3 and _is_channel(shape, stat):
        n, c = shape[0], shape[1]
        out = np.empty(shape, big.dtype)
        if in_order:
            binary_channel(big.reshape(n, c, -1), small.reshape(c), out.reshape(n, c, -1), code)
        else:
            channel_binary(small.reshape(c), big.reshape(n, c, -1), out.reshape(n, c, -1), code)
        return out
    return None


def _ones_from(shape: tuple[int, ...]) -> int:
    """Where the trailing run of 1s of ``shape`` starts."""
    k = len(shape)
    while k and shape[k - 1] == 1:
        k -= 1
    return k


def _ones_to(shape: tuple[int, ...]) -> int:
    """Where the leading run of 1s of ``shape`` ends."""
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return k


def _is_channel(shape: tuple[int, ...], stat: tuple[int, ...]) -> bool:
    return stat[0] == 1 and stat[1] == shape[1] and all(d == 1 for d in stat[2:]) and shape != stat


def unexpand(x: np.ndarray) -> np.ndarray:
    """A broadcast view (stride 0 along a dim of size > 1) as the small array it repeats, when
    that is C-contiguous: ``expand([32, 8, 8, 1] -> [32, 8, 8, 8])`` back to [32, 8, 8, 1], so
    the small-broadcast paths take it instead of a copy through strides. Else ``x`` itself."""
    if x.flags.c_contiguous or 0 not in x.strides:
        return x
    y = x[tuple(slice(0, 1) if st == 0 and d > 1 else slice(None) for st, d in zip(x.strides, x.shape))]
    return y if y.flags.c_contiguous else x
