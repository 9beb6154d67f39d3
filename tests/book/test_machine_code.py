"""The performance chapter's look at numba's machine code (minidl_book.machine_code): it must
count the multiply-adds of a loop right on tiny kernels whose code is known."""

import numpy as np
import pytest
from numba import njit

from minidl_book.build_gemm import tile_reference
from minidl_book.machine_code import hot_loop, inner_loops, stride_guards

ASM = """\
f:
\tmovq\t%rdi, %rax
.LBB0_2:
\tvmovups\t(%rsi,%rax,4), %zmm1
\tvfmadd213ps\t(%rdx,%rax,4), %zmm0, %zmm1
\tvmovups\t%zmm1, (%rdx,%rax,4)
\tvmovaps\t%xmm3, 16(%rsp)
\tprefetcht0\t64(%rsi)
\taddq\t$16, %rax
\tjne\t.LBB0_2
.LBB0_4:
\tvmovss\t(%rsi,%rax,4), %xmm1
\tvfmadd231ss\t%xmm1, %xmm0, %xmm2
\tvfmadd231ss\t%xmm1, %xmm0, %xmm3
\tjne\t.LBB0_4
.LBB0_6:
\taddq\t$1, %rax
\tjne\t.LBB0_6
\tretq
"""


def test_counts_a_known_listing():
    vec, scalar = inner_loops(ASM)  # the third loop holds no multiply-add
    assert vec.ops == {"vfmadd213ps zmm": 1} and vec.macs == 16 and vec.lanes == 16
    assert (vec.loads, vec.stores, vec.stack) == (2, 1, 1)  # the prefetch is no load
    assert scalar.ops == {"vfmadd231ss": 2} and scalar.macs == 2 and scalar.register == "scalar"
    assert (scalar.loads, scalar.stores) == (1, 0)


@njit(fastmath=True)
def axpy(x, y):  # y += 2 x: a loop along contiguous arrays, vectorized with FMAs
    for i in range(y.size):
        y[i] += np.float32(2) * x[i]


@njit(fastmath={"contract"})
def dot(x, y):  # a reduction without reassociation: LLVM may not vectorize it
    s = np.float32(0)
    for i in range(x.size):
        s += x[i] * y[i]
    return s


def test_a_vectorized_loop_is_counted_in_vector_lanes():
    x = np.ones(1024, np.float32)
    loop = hot_loop(axpy, x, x.copy())
    assert loop.lanes in (4, 8, 16) and loop.register in ("xmm", "ymm", "zmm")
    assert loop.macs == loop.lanes * sum(loop.ops.values())
    assert all(op.startswith("vfmadd") and "ps" in op for op in loop.ops)
    assert loop.stores >= 1  # y is written back every pass


def test_a_strict_reduction_stays_scalar():
    x = np.ones(1024, np.float32)
    loop = hot_loop(dot, x, x)
    assert loop.lanes == 1 and loop.register == "scalar"
    assert all(op.endswith("ss") for op in loop.ops) and loop.macs >= 1


def test_plain_functions_and_cached_kernels_are_compiled_for_inspection():
    from minidl_book import gemm_ladder  # cache=True: numba refuses to inspect cached code

    a = np.ones((12, 64), np.float32)
    b = np.ones((64, 64), np.float32)
    loop = hot_loop(gemm_ladder.packed, a, b, np.empty((12, 64), np.float32))
    assert loop.stores == 0 and loop.macs == gemm_ladder.MR * gemm_ladder.NR


@pytest.mark.parametrize("n", [8, 16])
def test_the_tiles_vector_copy_runs_only_for_one_column(n):
    a = np.ones((4, 32), np.float32)
    b = np.ones((32, n), np.float32)
    c = np.empty((4, n), np.float32)
    assert ("b", 1, False) in stride_guards(tile_reference, a, b, c)
    loop = hot_loop(tile_reference, a, b, c)  # a plain function: compiled as the checker does
    assert loop.lanes == 1 and loop.macs == 32
