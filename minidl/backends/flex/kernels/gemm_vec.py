"""Vector moves for the gemm's packing: whole-register row copies and square transposes.

Mirrors the packing routines of burn-flex's matmul (its ``gemm`` crate packs with SIMD too).

A plain numba copy loop into a packed panel runs at 1-2 G elements/s here (its source and
destination may alias, so LLVM adds checks or leaves it scalar), which at the MLP's shapes
cost as much as the product itself. These intrinsics emit the loads and stores as explicit
vectors of the register width of :data:`isa.ISA`, like ``gemm_micro``; addresses come from
``gemm_micro.address``.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .gemm_micro import VBYTES


def _vector(context, dtype):
    fty = context.get_value_type(dtype)
    isz = context.get_abi_sizeof(fty)
    return fty, isz, ir.VectorType(fty, VBYTES // isz)


def _at(builder, addr, elems, isz, vty):
    # The vector at ``addr`` + ``elems`` elements (addresses are integers, offsets in elements).
    byte = builder.add(addr, builder.mul(elems, ir.Constant(addr.type, isz)))
    return builder.inttoptr(byte, vty.as_pointer())


@intrinsic
def copy_vectors(typingctx, dst, src, nvec, like):
    """Copy ``nvec`` (a constant) whole vectors of ``like``'s dtype from address ``src`` to ``dst``."""
    if not isinstance(nvec, types.IntegerLiteral) or not isinstance(like, types.Array):
        return None
    count = nvec.literal_value

    def codegen(context, builder, signature, args):
        d, s = args[0], args[1]
        _, isz, vty = _vector(context, like.dtype)
        nl = vty.count
        idx = [ir.Constant(d.type, v * nl) for v in range(count)]
        vals = [builder.load(_at(builder, s, i, isz, vty), align=isz) for i in idx]
        for i, val in zip(idx, vals, strict=True):
            builder.store(val, _at(builder, d, i, isz, vty), align=isz)
        return context.get_dummy_value()

    return types.void(types.intp, types.intp, nvec, like), codegen


@intrinsic
def transpose_square(typingctx, dst, ldd, src, lds, like):
    """``dst[p, t] = src[t, p]`` for one lanes x lanes block (16 x 16 float32 on AVX-512).

    ``src`` and ``dst`` are addresses; row ``t`` of the source is the ``lanes`` contiguous
    values ``lds * t`` elements on, row ``p`` of the destination ``ldd * p`` on. The transpose
    is log2(lanes) rounds of interleaving rows ``i`` and ``i + lanes/2`` (a perfect shuffle),
    which LLVM lowers to one two-source permute per vector and round.
    """
    if not isinstance(like, types.Array):
        return None

    def codegen(context, builder, signature, args):
        d, ldd_v, s, lds_v = args[0], args[1], args[2], args[3]
        _, isz, vty = _vector(context, like.dtype)
        nl = vty.count
        half = nl // 2
        rows = [builder.load(_at(builder, s, builder.mul(lds_v, ir.Constant(s.type, t)), isz, vty), align=isz)
                for t in range(nl)]  # fmt: skip
        i32 = ir.IntType(32)
        lo = ir.Constant(ir.VectorType(i32, nl), [x for i in range(half) for x in (i, nl + i)])
        hi = ir.Constant(ir.VectorType(i32, nl), [x for i in range(half, nl) for x in (i, nl + i)])
        for _ in range(nl.bit_length() - 1):
            new = []
            for i in range(half):
                new += [builder.shuffle_vector(rows[i], rows[i + half], lo),
                        builder.shuffle_vector(rows[i], rows[i + half], hi)]  # fmt: skip
            rows = new
        for p in range(nl):
            ptr = _at(builder, d, builder.mul(ldd_v, ir.Constant(d.type, p)), isz, vty)
            builder.store(rows[p], ptr, align=isz)
        return context.get_dummy_value()

    return types.void(types.intp, types.intp, types.intp, types.intp, like), codegen
