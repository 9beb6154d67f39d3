"""The gemm micro-kernel: an MR x NR tile of C held in vector registers (the BLIS outer-product form).

Mirrors the register-blocked inner kernel of burn-flex's matmul (its SIMD crate's ``gemm``).

numba leaves LLVM's SLP vectorizer off and its loop vectorizer picks 256-bit vectors on Intel
AVX-512 CPUs (their "prefer 256-bit" tuning), so no plain numba loop gives a register tile of
zmm accumulators. This module writes the tile with explicit LLVM vector types instead, through a
numba ``@intrinsic``: at each step ``p`` of the reduction it loads ``NV`` vectors of a packed B
row, broadcasts each of the ``MR`` packed A values and does ``MR * NV`` fused multiply-adds into
accumulators that never leave registers. The intrinsic is inlined into the numba kernels that
call it, so they stay ``cache=True``.

The tile follows :data:`isa.ISA`: AVX-512 has 32 zmm registers of 16 float32: 12 x 2 vectors =
24 accumulators + 2 B vectors + 1 broadcast. AVX2 has 16 ymm registers of 8: 6 x 2 = 12
accumulators + 3 (the BLIS Haswell tile).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .isa import ISA

#: Rows of the register tile, vectors per tile row, and bytes per vector register.
MR, NV, VBYTES = (12, 2, 64) if ISA == "avx512" else (6, 2, 32)


def lanes(itemsize: int) -> int:
    """Elements per vector register for an element of ``itemsize`` bytes (16 float32 on AVX-512)."""
    return VBYTES // itemsize


def _vec_ptr(builder, ptr, vty):
    return builder.bitcast(ptr, vty.as_pointer())


@intrinsic
def micro_tile(typingctx, kc, ap, a0, bp, b0, c, ci, cj, first):
    """``C[ci:ci+MR, cj:cj+NR] (=|+=) Ap @ Bp`` for one packed A micro-panel and one B micro-panel.

    ``ap`` holds the A micro-panel from ``a0`` as ``kc`` groups of ``MR`` values (column ``p`` of
    the MR rows), ``bp`` the B micro-panel from ``b0`` as ``kc`` rows of ``NR = NV * lanes``
    values. ``c`` is 2-D with unit stride along its rows and the whole tile inside it.
    ``first`` overwrites C, otherwise the tile is added to it.
    """
    if not (isinstance(ap, types.Array) and isinstance(bp, types.Array) and isinstance(c, types.Array)):
        return None
    dtype = c.dtype
    sig = types.void(types.intp, ap, types.intp, bp, types.intp, c, types.intp, types.intp,
                     types.boolean)  # fmt: skip

    def codegen(context, builder, signature, args):
        kc_v, ap_v, a0_v, bp_v, b0_v, c_v, ci_v, cj_v, first_v = args
        fty = context.get_value_type(dtype)
        nl = VBYTES // context.get_abi_sizeof(fty)
        nr = NV * nl
        vty = ir.VectorType(fty, nl)
        intp = context.get_value_type(types.intp)
        a_arr = context.make_array(signature.args[1])(context, builder, ap_v)
        b_arr = context.make_array(signature.args[3])(context, builder, bp_v)
        c_arr = context.make_array(signature.args[5])(context, builder, c_v)
        a_base = builder.gep(a_arr.data, [a0_v])
        b_base = builder.gep(b_arr.data, [b0_v])
        suffix = f"v{nl}f{8 * context.get_abi_sizeof(fty)}"
        fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty] * 3),
                                             f"llvm.fma.{suffix}")  # fmt: skip
        zero = ir.Constant(vty, [ir.Constant(fty, 0.0)] * nl)
        undef = ir.Constant(vty, ir.Undefined)
        bcast_mask = ir.Constant(ir.VectorType(ir.IntType(32), nl), [0] * nl)
        acc = [[cgutils.alloca_once_value(builder, zero) for _ in range(NV)] for _ in range(MR)]
        row_bytes = cgutils.unpack_tuple(builder, c_arr.strides, 2)[0]
        row_step = builder.sdiv(row_bytes, ir.Constant(intp, context.get_abi_sizeof(fty)))
        c_base = builder.gep(c_arr.data, [builder.add(builder.mul(ci_v, row_step), cj_v)])
        rows = [builder.gep(c_base, [builder.mul(ir.Constant(intp, r), row_step)]) for r in range(MR)]
        # Ask for the C tile now: its rows are a page apart, and reading them only after the
        # loop stalls on memory once per tile (measured: a quarter of the time at n = 1024).
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0i8"
        )
        for r in range(MR):
            for off in range(0, NV * VBYTES, 64):
                ptr = builder.gep(builder.bitcast(rows[r], i8p), [ir.Constant(intp, off)])
                builder.call(prefetch, [ptr, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        with cgutils.for_range(builder, kc_v) as loop:
            p = loop.index
            brow = builder.gep(b_base, [builder.mul(p, ir.Constant(intp, nr))])
            bv = [builder.load(_vec_ptr(builder, builder.gep(brow, [ir.Constant(intp, v * nl)]), vty), align=4)
                  for v in range(NV)]  # fmt: skip
            acol = builder.gep(a_base, [builder.mul(p, ir.Constant(intp, MR))])
            for r in range(MR):
                x = builder.load(builder.gep(acol, [ir.Constant(intp, r)]))
                xv = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(ir.IntType(32), 0)),
                                            undef, bcast_mask)  # fmt: skip
                for v in range(NV):
                    builder.store(builder.call(fma, [xv, bv[v], builder.load(acc[r][v])]), acc[r][v])
        ptrs = [[_vec_ptr(builder, builder.gep(rows[r], [ir.Constant(intp, v * nl)]), vty) for v in range(NV)]
                for r in range(MR)]  # fmt: skip
        with builder.if_else(first_v) as (then, otherwise):
            with then:
                for r in range(MR):
                    for v in range(NV):
                        builder.store(builder.load(acc[r][v]), ptrs[r][v], align=4)
            with otherwise:
                for r in range(MR):
                    for v in range(NV):
                        old = builder.load(ptrs[r][v], align=4)
                        builder.store(builder.fadd(old, builder.load(acc[r][v])), ptrs[r][v], align=4)
        return context.get_dummy_value()

    return sig, codegen
