"""The binary kernel's ops and its row loops: the scalar ops (``_bin``, integer ``_div``), the
loops over one chunk of a row (``_rows_vv``, ``_rows_vs``, ``_rows_sv``) and the row nests that
run rows of a 3-D output in one loop nest per broadcast pattern (``_binary_rows``).

Split out of :mod:`.broadcast` (which holds the tasks, the parallel split and the wrappers) so
each file keeps one job; :mod:`.broadcast` re-exports these names.
"""

from __future__ import annotations

from numba import njit, types
from numba.extending import overload

from ._common import JIT_EW

# The binary kernel's ops
ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM = range(7)
BINARY_OPS = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW, "maximum": MAXIMUM,
              "minimum": MINIMUM}  # fmt: skip

# ---------------------------------------------------------------------------------------------
# Scalar ops (inlined into the loops)
# ---------------------------------------------------------------------------------------------


def _div(x, y):
    """x / y; for integers truncating toward zero, as Rust's ``/`` (burn's ``int_div``)."""


@overload(_div, jit_options={"inline": "always"})
def _div_impl(x, y):
    # Chosen when the kernel is typed, so an integer kernel never promotes to float.
    if isinstance(x, types.Integer):

        def int_div(x, y):
            if y == 0:
                return x * 0
            q = x // y
            if (x % y != 0) and ((x < 0) != (y < 0)):
                q += 1
            return q

        return int_div
    return lambda x, y: x / y


@njit(inline="always", **JIT_EW)
def _bin(op, x, y):
    if op == ADD:
        return x + y
    if op == SUB:
        return x - y
    if op == MUL:
        return x * y
    if op == DIV:
        return _div(x, y)
    if op == POW:
        return x**y
    if op == MAXIMUM:
        # NaN-propagating maximum, like torch.maximum / np.maximum
        return x if (x > y or x != x) else y
    # MINIMUM
    return x if (x < y or x != x) else y


# The loops over one chunk of a row. Each is its own small (not inlined) function: with all four
# loops of a task and the seven-way ``op`` branch in one body, LLVM neither hoisted the branch
# nor vectorized a single loop (measured on AVX-512: a scalar multiply of 200K floats 99 us
# before, 19 us so split). Loops run over slices from 0: an index that may be negative makes
# numba add a wraparound check per access, and that alone stops LLVM from vectorizing.


@njit(**JIT_EW)
def _rows_vv(op, ar, br, orow):
    for j in range(orow.shape[0]):
        orow[j] = _bin(op, ar[j], br[j])


@njit(**JIT_EW)
def _rows_vs(op, ar, y, orow):
    for j in range(orow.shape[0]):
        orow[j] = _bin(op, ar[j], y)


@njit(**JIT_EW)
def _rows_sv(op, x, br, orow):
    for j in range(orow.shape[0]):
        orow[j] = _bin(op, x, br[j])


# Row nests: rows lo..hi of the [d0, d1] grid of a 3-D output, one loop nest per broadcast
# pattern of the last dim (both operands full rows, or one a single value per row), the row
# loop inline and the row index stepped, not divided. Through ``_binary_task`` each row cost
# ~40 ns (locate's divisions, two row views, a call): a [32, 64, 16, 16] + [1, 64, 1, 1] add
# ran 148 us on 1 thread, the bare copy of its data 148, but [8, 64, 16, 16] 29.5 vs 10.


@njit(inline="always", **JIT_EW)
def _pick(x, i0, i1):
    # row (i0, i1) of an operand whose size-1 dims broadcast
    return x[i0 if x.shape[0] > 1 else 0, i1 if x.shape[1] > 1 else 0]


@njit(**JIT_EW)
def _nest_vv(op, a, b, out, lo, hi):
    d1, n = out.shape[1], out.shape[2]
    i0, i1 = lo // d1, lo % d1
    for _ in range(lo, hi):
        ar, br, orow = _pick(a, i0, i1), _pick(b, i0, i1), out[i0, i1]
        for j in range(n):
            orow[j] = _bin(op, ar[j], br[j])
        i1 += 1
        if i1 == d1:
            i0, i1 = i0 + 1, 0


@njit(**JIT_EW)
def _nest_vs(op, a, b, out, lo, hi):
    d1, n = out.shape[1], out.shape[2]
    i0, i1 = lo // d1, lo % d1
    for _ in range(lo, hi):
        ar, y, orow = _pick(a, i0, i1), _pick(b, i0, i1)[0], out[i0, i1]
        for j in range(n):
            orow[j] = _bin(op, ar[j], y)
        i1 += 1
        if i1 == d1:
            i0, i1 = i0 + 1, 0


@njit(inline="always", **JIT_EW)
def _nest_sv_op(op, a, b, out, lo, hi):
    d1, n = out.shape[1], out.shape[2]
    i0, i1 = lo // d1, lo % d1
    for _ in range(lo, hi):
        x, br, orow = _pick(a, i0, i1)[0], _pick(b, i0, i1), out[i0, i1]
        for j in range(n):
            orow[j] = _bin(op, x, br[j])
        i1 += 1
        if i1 == d1:
            i0, i1 = i0 + 1, 0


@njit(**JIT_EW)
def _nest_sv(op, a, b, out, lo, hi):
    # One nest per op, each with the op a constant: with the op a variable LLVM kept this loop
    # scalar (its seven-way branch was not hoisted, unlike the other nests'; a call of _rows_sv
    # per row instead cost ~25 ns a row): [8, 64, 256] 47 vs 11 us.
    if op == ADD:
        _nest_sv_op(ADD, a, b, out, lo, hi)
    elif op == SUB:
        _nest_sv_op(SUB, a, b, out, lo, hi)
    elif op == MUL:
        _nest_sv_op(MUL, a, b, out, lo, hi)
    elif op == DIV:
        _nest_sv_op(DIV, a, b, out, lo, hi)
    elif op == POW:
        _nest_sv_op(POW, a, b, out, lo, hi)
    elif op == MAXIMUM:
        _nest_sv_op(MAXIMUM, a, b, out, lo, hi)
    else:
        _nest_sv_op(MINIMUM, a, b, out, lo, hi)


@njit(**JIT_EW)
def _binary_rows(a, b, out, op, lo, hi):
    # rows lo..hi through the nest of their pattern; a last dim of size 1 or stride 0 (a
    # broadcast view that stayed one) is a single value per row
    a_one = a.shape[2] == 1 or a.strides[2] == 0
    b_one = b.shape[2] == 1 or b.strides[2] == 0
    if a_one and not b_one:
        _nest_sv(op, a, b, out, lo, hi)
    elif b_one and not a_one:
        _nest_vs(op, a, b, out, lo, hi)
    elif not a_one:
        _nest_vv(op, a, b, out, lo, hi)
    else:
        d1 = out.shape[1]
        for r in range(lo, hi):
            i0, i1 = r // d1, r % d1
            out[i0, i1, :] = _bin(op, _pick(a, i0, i1)[0], _pick(b, i0, i1)[0])
