"""The binary ops of Flex's element-wise kernels as named integer codes, and ``apply_binary``,
the scalar op every loop inlines (module-level ints are compile-time constants to numba, so a
loop's ``op`` branch is hoisted out of it).

Mirrors the per-op bodies of burn-flex's ``ops/binary.rs`` (``float_add`` ... ``float_powf``,
Rust's truncating integer division).
"""

from __future__ import annotations

from numba import njit, types
from numba.extending import overload

from ._common import JIT_EW

# The binary kernel's ops
ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM = range(7)
BINARY_OPS = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW, "maximum": MAXIMUM,
              "minimum": MINIMUM}  # fmt: skip


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
def apply_binary(op, x, y):
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
