"""The element-wise row loops compile to packed SIMD instructions (a regression test).

With all the row loops of a task and the op branch in one function body, LLVM vectorized
none of them: the binary kernel's assembly held no packed instruction, and a scalar
multiply of 200K floats ran 5x slower. Each row loop now sits in a small function of its
own. This compiles those functions again without numba's cache (``inspect_asm`` shows
nothing for cached code) and looks for packed float32 instructions on 256- or 512-bit
registers, for whatever instruction set numba targets here.
"""

from __future__ import annotations

import re

import numba
import pytest
from numba import types

from minidl.backends.flex.kernels import broadcast, elementwise, softmax, unary
from minidl.backends.flex.kernels._common import JIT_EW, JIT_FAST

F32 = types.Array(types.float32, 1, "C")
F64 = types.Array(types.float64, 1, "C")
B1 = types.Array(types.boolean, 1, "C")
I64 = types.int64
#: Packed float32 arithmetic, compares or blends on ymm/zmm registers (moves do not count: a
#: scalar loop moves vectors too, for spills and copies).
PACKED = re.compile(r"\bv(add|sub|mul|div|max|min|sqrt|cmp\w*|blendv|blendm|fn?madd\w*|and|andn|or|xor)ps"
                    r"\s+[^\n]*%[yz]mm")


def _asm(kernel, signature, options=JIT_EW) -> str:
    fresh = numba.njit(signature, **{**options, "cache": False})(kernel.py_func)
    return next(iter(fresh.inspect_asm().values()))


@pytest.mark.parametrize(
    "kernel, signature",
    [
        (broadcast._rows_vv, (I64, F32, F32, F32)),
        (broadcast._rows_vs, (I64, F32, types.float32, F32)),
        (broadcast._rows_sv, (I64, types.float32, F32, F32)),
        (broadcast._where_rows, (B1, I64, F32, I64, F32, I64, F32)),
        (elementwise._compare_vv, (I64, F32, F32, B1)),
        (unary._cheap_rows, (F32, F32, I64)),
        (unary._vmath_rows, (F32, F32, I64)),
    ],
    ids=["binary", "binary-scalar-rhs", "binary-scalar-lhs", "where", "compare", "unary-cheap",
         "unary-vmath"],
)
def test_row_loop_is_vectorized(kernel, signature):
    asm = _asm(kernel, signature)
    assert PACKED.search(asm), f"{kernel.py_func.__name__}: no packed float32 arithmetic"


def test_the_check_tells_a_scalar_loop_apart():
    # an 18-way branch with libm calls in one loop: LLVM keeps it scalar, and the check says so
    assert not PACKED.search(_asm(unary._libm_rows, (F32, F32, I64)))


#: Packed float64 multiply-adds on ymm/zmm registers (vexp's polynomial).
PACKED_FMA_PD = re.compile(r"\bvfn?madd\w*pd\s+[^\n]*%[yz]mm")
PACKED_FMA_PS = re.compile(r"\bvfn?madd\w*ps\s+[^\n]*%[yz]mm")


def test_vexp_loops_are_vectorized_for_float64_and_inside_softmax():
    # vexp's polynomial is packed in the unary loop for float64 too, and in softmax's row
    # kernel, compiled with reassoc (vexp keeps its own flags: the rounding trick survives)
    assert PACKED_FMA_PD.search(_asm(unary._vmath_rows, (F64, F64, I64)))
    rows = (types.Array(types.float32, 2, "C"),) * 2 + (types.boolean, I64, I64)
    assert PACKED_FMA_PS.search(_asm(softmax._rows, rows, JIT_FAST))
