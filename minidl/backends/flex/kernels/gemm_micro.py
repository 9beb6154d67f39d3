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
def address(typingctx, arr):
    """The address of ``arr``'s first element, as an integer (what ``micro_tile`` is given)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, context.get_value_type(types.intp))

    return types.intp(arr), codegen


@intrinsic
def fetch_add(typingctx, counter):
    """Atomically ``counter[0] += 1`` (an int64 array) and return the old value.

    The gemm's workers take their next task from this counter, so a worker whose core is
    busy with something else simply takes fewer tasks.
    """
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        ptr = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.atomic_rmw("add", ptr, ir.Constant(ir.IntType(64), 1), "monotonic")

    return types.int64(counter), codegen


@intrinsic(prefer_literal=True)
def micro_tile(typingctx, kc, pa, ars, acs, pb, ldb, pc, ldc, first, like):
    """``C[0:MR, 0:NR] (=|+=) A @ B`` for one MR x kc piece of A and kc x NR piece of B.

    ``pa``, ``pb`` and ``pc`` are addresses (from :func:`address`) of the pieces' first
    elements, of ``like``'s dtype. Element ``(r, p)`` of A is at ``pa`` + ``r*ars + p*acs``
    elements (packed: ``ars=1, acs=MR``; a transposed view read in place: ``ars=1, acs=lda``;
    C-ordered rows: ``ars=lda, acs=1``); row ``p`` of B is the ``NR = NV * lanes`` contiguous
    values at ``pb`` + ``p*ldb`` elements, row ``r`` of C those at ``pc + r*ldc``. ``first``
    overwrites C, otherwise the tile is added to it. Only integers come in (no array), so a
    tile costs no reference counting. A literal ``ars`` (the packed panel's 1) becomes
    constant displacements; any other reaches the rows through three group bases and three
    offsets that LLVM cannot see through (seen as multiples of one stride, it chains the 12
    rows' addresses: 12 dependent adds per step of k, as long as the step's 24 FMAs).
    """
    if not isinstance(like, types.Array):
        return None
    ars_lit = ars.literal_value if isinstance(ars, types.IntegerLiteral) else None
    i = types.intp
    sig = types.void(i, i, ars if ars_lit is not None else i, i, i, i, i, i, types.boolean, like)
    return sig, _tile_codegen(MR, ars_lit, like.dtype)


@intrinsic(prefer_literal=True)
def micro_rows(typingctx, kc, pa, ars, acs, pb, ldb, pc, ldc, first, like, rows):
    """:func:`micro_tile` with ``rows`` (a literal below MR) rows of A and C instead of MR: the
    last panel of a C whose rows are not a multiple of MR (the MLP's m = 128 = 10 x 12 + 8)
    then computes fewer rows of padding."""
    if not (isinstance(like, types.Array) and isinstance(rows, types.IntegerLiteral)):
        return None
    i = types.intp
    sig = types.void(i, i, i, i, i, i, i, i, types.boolean, like, rows)
    return sig, _tile_codegen(rows.literal_value, None, like.dtype)


def _tile_codegen(mr, ars_lit, dtype):
    # The code of one mr x NR tile (``micro_tile``'s description); ``ars_lit``: a literal row
    # step of A, or None.
    def codegen(context, builder, signature, args):
        kc_v, pa_v, ars_v, acs_v, pb_v, ldb_v, pc_v, ldc_v, first_v = args[:9]
        fty = context.get_value_type(dtype)
        isz = context.get_abi_sizeof(fty)
        nl = VBYTES // isz
        vty = ir.VectorType(fty, nl)
        intp = context.get_value_type(types.intp)

        def const(x):
            return ir.Constant(intp, x)

        b_base = builder.inttoptr(pb_v, fty.as_pointer())
        # A's rows: a literal ``ars`` gives constant displacements from one pointer per step;
        # otherwise each step's three group bases pass through an empty asm statement, which
        # LLVM cannot see through, and the rows are at three offsets from them (left visible,
        # LLVM chains the rows' addresses, or keeps 12 offsets and spills them).
        def opaque(x):
            return builder.asm(ir.FunctionType(intp, [intp]), "", "=r,0", [x], False)

        if ars_lit is None:
            grp = [opaque(builder.mul(const(g * isz), ars_v)) for g in range(0, mr, 4)]
            offs = [None] + [opaque(builder.mul(const(t * isz), ars_v)) for t in range(1, 4)]
        else:
            grp = [const(g * ars_lit * isz) for g in range(0, mr, 4)]
            offs = [None] + [const(t * ars_lit * isz) for t in range(1, 4)]
        fp = fty.as_pointer()
        fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty] * 3),
                                             f"llvm.fma.v{nl}f{8 * isz}")  # fmt: skip
        zero = ir.Constant(vty, [ir.Constant(fty, 0.0)] * nl)
        undef = ir.Constant(vty, ir.Undefined)
        bcast_mask = ir.Constant(ir.VectorType(ir.IntType(32), nl), [0] * nl)
        acc = [[cgutils.alloca_once_value(builder, zero) for _ in range(NV)] for _ in range(mr)]
        c_base = builder.inttoptr(pc_v, fty.as_pointer())
        c_rows = [builder.gep(c_base, [builder.mul(const(r), ldc_v)]) for r in range(mr)]
        if PREFETCH_C:
            _prefetch_rows(builder, c_rows, intp)
        with cgutils.for_range(builder, kc_v) as loop:
            p = loop.index
            brow = builder.gep(b_base, [builder.mul(p, ldb_v)])
            if B_AHEAD:
                ahead = builder.gep(brow, [builder.mul(const(B_AHEAD), ldb_v)])
                _prefetch_rows(builder, [ahead], intp, write=False)
            bv = [builder.load(_vec_ptr(builder, builder.gep(brow, [const(v * nl)]), vty), align=isz)
                  for v in range(NV)]  # fmt: skip
            arow = builder.add(pa_v, builder.mul(p, builder.mul(acs_v, const(isz))))
            if ars_lit is None:
                bases = [opaque(builder.add(arow, g)) for g in grp]
            else:
                bases = [builder.add(arow, g) for g in grp]
            for r in range(mr):
                at = bases[r // 4] if r % 4 == 0 else builder.add(bases[r // 4], offs[r % 4])
                x = builder.load(builder.inttoptr(at, fp))
                xv = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(ir.IntType(32), 0)),
                                            undef, bcast_mask)  # fmt: skip
                for v in range(NV):
                    builder.store(builder.call(fma, [xv, bv[v], builder.load(acc[r][v])]), acc[r][v])
        ptrs = [[_vec_ptr(builder, builder.gep(c_rows[r], [const(v * nl)]), vty) for v in range(NV)]
                for r in range(mr)]  # fmt: skip
        with builder.if_else(first_v) as (then, otherwise):
            with then:
                for r in range(mr):
                    for v in range(NV):
                        builder.store(builder.load(acc[r][v]), ptrs[r][v], align=isz)
            with otherwise:
                for r in range(mr):
                    for v in range(NV):
                        old = builder.load(ptrs[r][v], align=isz)
                        builder.store(builder.fadd(old, builder.load(acc[r][v])), ptrs[r][v], align=isz)
        return context.get_dummy_value()

    return codegen


#: Prefetch the C tile before the reduction loop (measured with C far out of cache: 205 vs
#: 191 GF/s at kc = 256 when adding to C, 98 vs 27 at kc = 64 when overwriting it).
PREFETCH_C = True
#: Prefetch the B row this many steps of k ahead: B streams from L2 (measured, 1 thread,
#: n = 2048: 184 vs 177 GF/s; 0 turns it off).
B_AHEAD = 16


def _prefetch_rows(builder, rows, intp, write=True):
    # Ask for the C tile before the loop: its rows are far apart, and reading them only after
    # the loop would stall on memory once per tile.
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0i8"
    )
    for row in rows:
        for off in range(0, NV * VBYTES, 64):
            ptr = builder.gep(builder.bitcast(row, i8p), [ir.Constant(intp, off)])
            builder.call(fn, [ptr, ir.Constant(i32, int(write)), ir.Constant(i32, 3), ir.Constant(i32, 1)])
