"""The gemm for small products: no packing, B's rows and C's read and written with masked vectors.

Mirrors the small-matrix path of burn-flex's matmul (its ``gemm`` crate skips packing when the
operands fit in cache).

The packed gemm pays for its packing and its ``NR``-column strips: the MLP's ``h @ W2``
([128, 256] @ [256, 10]) fills one 32-column strip with 22 zero columns, and ``g @ W2.T``
(k = 10) spends more on packing B than on the product. Here, for products small enough to
stay on one thread, the register tile reads its operands where they lie:

* A through its strides (one broadcast value per tile row and step of ``k``), as in
  ``gemm_micro``;
* B's rows as vectors straight from B when its columns are contiguous, the last vector of a
  row masked to the columns that exist (so ``n = 10`` costs one 16-lane vector, not 32
  columns); any other B is first copied into a C-ordered scratch (k x n, no padding);
* C's rows with masked stores.

The tile is ``MR2 x NV2`` vectors, or ``MR1 x NV1`` when n fits one vector (more rows
instead: the registers the second vector column would take). A tile crossing C's last row is
computed from A's last rows and overwrites rows already written with the same values; C with
fewer rows than a tile runs in bands of 4 rows and single rows.

When A's columns are contiguous (a transposed view, the backward's ``h.T @ g``) and C has at
most ``NT_MAX`` columns, the product runs as C^T = B^T A^T: the vectors run down A's columns,
whole, and C^T is copied out (``_rows_t``).

Whole strips use plain loads and stores, a partial last strip masked ones: on AVX2 a runtime
mask in every step costs registers the tile needs.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._common import JIT_FAST
from .gemm_micro import VBYTES, address
from .isa import ISA

#: (rows, vectors) of the small kernel's tile when n needs two vectors or more / fits in one.
#: AVX-512: 12 x 2 or 16 x 1 of 32 zmm; AVX2: 6 x 2 or 12 x 1 of 16 ymm (+ B and a broadcast).
MR2, NV2, MR1, NV1 = (12, 2, 16, 1) if ISA == "avx512" else (6, 2, 12, 1)
#: The most columns of C computed as rows of C^T (A with contiguous columns, ``_rows_t``).
NT_MAX = max(MR1, MR2)


@intrinsic
def masked_tile(typingctx, kc, pa, ars, acs, pb, ldb, pc, ldc, ncols, mr, nv, like):
    """``C[0:mr, 0:ncols] = A @ B`` for one tile, every operand read through its address.

    Element ``(r, p)`` of A is at ``pa`` + ``r*ars + p*acs`` elements, row ``p`` of B at
    ``pb + p*ldb`` (contiguous), row ``r`` of C at ``pc + r*ldc``. ``mr`` x ``nv`` vectors of
    accumulators (both constants); only columns below ``ncols`` are loaded or stored.
    """
    if not (isinstance(mr, types.IntegerLiteral) and isinstance(nv, types.IntegerLiteral)
            and isinstance(like, types.Array)):  # fmt: skip
        return None
    rows, nvec = mr.literal_value, nv.literal_value
    i = types.intp
    sig = types.void(i, i, i, i, i, i, i, i, i, mr, nv, like)

    def codegen(context, builder, signature, args):
        kc_v, pa_v, ars_v, acs_v, pb_v, ldb_v, pc_v, ldc_v, nc_v = args[:9]
        fty = context.get_value_type(like.dtype)
        isz = context.get_abi_sizeof(fty)
        nl = VBYTES // isz
        vty = ir.VectorType(fty, nl)
        i1v = ir.VectorType(ir.IntType(1), nl)
        intp = context.get_value_type(types.intp)
        i32 = ir.IntType(32)
        mod = builder.module
        fma = cgutils.get_or_insert_function(mod, ir.FunctionType(vty, [vty] * 3),
                                             f"llvm.fma.v{nl}f{8 * isz}")  # fmt: skip
        ptr_t = vty.as_pointer()
        mload = cgutils.get_or_insert_function(
            mod, ir.FunctionType(vty, [ptr_t, i32, i1v, vty]), f"llvm.masked.load.v{nl}f{8 * isz}.p0")
        mstore = cgutils.get_or_insert_function(
            mod, ir.FunctionType(ir.VoidType(), [vty, ptr_t, i32, i1v]),
            f"llvm.masked.store.v{nl}f{8 * isz}.p0")  # fmt: skip

        def const(x):
            return ir.Constant(intp, x)

        # Lane masks in 32-bit lanes (one compare each), for a strip with fewer than nv * nl columns.
        vi32 = ir.VectorType(i32, nl)
        n32 = builder.trunc(nc_v, i32)
        splat_n = builder.shuffle_vector(builder.insert_element(ir.Constant(vi32, ir.Undefined), n32,
                                                                ir.Constant(i32, 0)),
                                         ir.Constant(vi32, ir.Undefined), ir.Constant(vi32, [0] * nl))  # fmt: skip
        masks = [builder.icmp_signed("<", ir.Constant(vi32, [v * nl + t for t in range(nl)]), splat_n)
                 for v in range(nvec)]  # fmt: skip
        a_base = builder.inttoptr(pa_v, fty.as_pointer())
        b_base = builder.inttoptr(pb_v, fty.as_pointer())
        c_base = builder.inttoptr(pc_v, fty.as_pointer())

        # A's row offsets pass through an empty asm statement, which LLVM cannot see through:
        # seeing them as multiples of one stride, it chains the rows' addresses (one dependent
        # add per row and step of k, 16 of them: twice the time of the step's FMAs).
        def opaque(x):
            return builder.asm(ir.FunctionType(intp, [intp]), "", "=r,0", [x], False)

        grp = [opaque(builder.mul(const(g), ars_v)) for g in range(0, rows, 4)]
        offs = [const(0)] + [opaque(builder.mul(const(s), ars_v)) for s in range(1, 4)]
        zero = ir.Constant(vty, [ir.Constant(fty, 0.0)] * nl)
        undef = ir.Constant(vty, ir.Undefined)
        bcast = ir.Constant(ir.VectorType(i32, nl), [0] * nl)
        align = ir.Constant(i32, isz)
        acc = [[cgutils.alloca_once_value(builder, zero) for _ in range(nvec)] for _ in range(rows)]

        def vec_ptr(row, v):
            return builder.bitcast(builder.gep(row, [const(v * nl)]), ptr_t)

        def tile(masked):
            # The reduction loop and C's stores; plain vectors unless the strip is partial.
            with cgutils.for_range(builder, kc_v) as loop:
                p = loop.index
                brow = builder.gep(b_base, [builder.mul(p, ldb_v)])
                if masked:
                    bv = [builder.call(mload, [vec_ptr(brow, v), align, masks[v], zero])
                          for v in range(nvec)]  # fmt: skip
                else:
                    bv = [builder.load(vec_ptr(brow, v), align=isz) for v in range(nvec)]
                arow = builder.gep(a_base, [builder.mul(p, acs_v)])
                bases = [builder.gep(arow, [g]) for g in grp]
                for r in range(rows):
                    x = builder.load(builder.gep(bases[r // 4], [offs[r % 4]]))
                    xv = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(i32, 0)),
                                                undef, bcast)  # fmt: skip
                    for v in range(nvec):
                        builder.store(builder.call(fma, [xv, bv[v], builder.load(acc[r][v])]), acc[r][v])
            for r in range(rows):
                crow = builder.gep(c_base, [builder.mul(const(r), ldc_v)])
                for v in range(nvec):
                    val = builder.load(acc[r][v])
                    if masked:
                        builder.call(mstore, [val, vec_ptr(crow, v), align, masks[v]])
                    else:
                        builder.store(val, vec_ptr(crow, v), align=isz)

        full = builder.icmp_signed(">=", nc_v, const(nvec * nl))
        with builder.if_else(full) as (then, otherwise):
            with then:
                tile(False)
            with otherwise:
                tile(True)
        return context.get_dummy_value()

    return sig, codegen


@njit(**JIT_FAST)
def _band(a, c, ldb, pb, ia, rows):
    # C[ia:ia+rows] = A[ia:ia+rows] @ B, strip after strip, with a tile of ``rows`` rows
    # (MR1 / MR2, or 4 or 1 when C has fewer rows than a whole tile).
    k = a.shape[1]
    n = c.shape[1]
    isz = c.itemsize
    one = n <= VBYTES // isz
    nr = (NV1 if one else NV2) * (VBYTES // isz)
    sa0, sa1 = a.strides[0] // isz, a.strides[1] // isz
    ldc = c.strides[0] // isz
    pa = address(a) + ia * sa0 * isz
    for j in range(0, n, nr):
        pc = address(c) + (ia * ldc + j) * isz
        if one:
            if rows == MR1:
                masked_tile(k, pa, sa0, sa1, pb + j * isz, ldb, pc, ldc, n - j, MR1, NV1, c)
            elif rows == 4:
                masked_tile(k, pa, sa0, sa1, pb + j * isz, ldb, pc, ldc, n - j, 4, NV1, c)
            else:
                masked_tile(k, pa, sa0, sa1, pb + j * isz, ldb, pc, ldc, n - j, 1, NV1, c)
        elif rows == MR2:
            masked_tile(k, pa, sa0, sa1, pb + j * isz, ldb, pc, ldc, n - j, MR2, NV2, c)
        elif rows == 4:
            masked_tile(k, pa, sa0, sa1, pb + j * isz, ldb, pc, ldc, n - j, 4, NV2, c)
        else:
            masked_tile(k, pa, sa0, sa1, pb + j * isz, ldb, pc, ldc, n - j, 1, NV2, c)


@njit(**JIT_FAST)
def _rows(a, c, ldb, pb):
    # C = A @ B for one batch entry, B's rows contiguous at address pb, ldb elements apart.
    # Bands of whole tiles, the last one moved up to end at C's last row (it rewrites a few
    # rows with the same values); fewer rows than a tile: bands of 4, then single rows.
    m = a.shape[0]
    mr = MR1 if c.shape[1] <= VBYTES // c.itemsize else MR2
    if m < mr:
        mr = 4 if m >= 4 else 1
    for i in range(0, m, mr):
        _band(a, c, ldb, pb, min(i, m - mr), mr)


@njit(**JIT_FAST)
def _rows_t(a, b, c, bt, ct):
    # C = A @ B as C^T = B^T @ A^T, for A with contiguous columns and n <= NT_MAX (``h.T @ g``):
    # the vectors then run down A's columns, whole, instead of along C's few columns. B^T is
    # copied into ``bt`` (one tile of rows, zero past n), C^T computed into ``ct``, copied out.
    m, k = a.shape
    n = c.shape[1]
    isz = c.itemsize
    two = n <= MR2  # the 2-vector tile's rows hold all of C's columns
    rows = MR2 if two else MR1
    nr = (NV2 if two else NV1) * (VBYTES // isz)
    for j in range(rows):
        for p in range(k):
            bt[j * k + p] = b[p, j] if j < n else 0
    a_addr, bt_addr, ct_addr = address(a), address(bt), address(ct)
    lda = a.strides[1] // isz
    for i in range(0, m, nr):
        pa, pc = a_addr + i * isz, ct_addr + i * isz
        if two:
            masked_tile(k, bt_addr, k, 1, pa, lda, pc, m, m - i, MR2, NV2, c)
        else:
            masked_tile(k, bt_addr, k, 1, pa, lda, pc, m, m - i, MR1, NV1, c)
    for j in range(n):
        crow = ct[j * m : (j + 1) * m]
        for i in range(m):
            c[i, j] = crow[i]


@njit(**JIT_FAST)
def gemm_small(a, b, c):
    """C[t] = A[t] @ B[t] on the calling thread, without packing (B copied only when its
    columns are not contiguous). ``a`` [batch, m, k] and ``b`` [batch, k, n] of any strides,
    ``c`` [batch, m, n] with contiguous rows."""
    batch, m, k = a.shape
    n = b.shape[2]
    isz = c.itemsize
    scratch = np.empty((k, n), c.dtype)
    transposed = n <= NT_MAX and a.strides[1] == isz and a.strides[2] != isz
    b_t = np.empty(NT_MAX * k if transposed else 0, c.dtype)
    c_t = np.empty(NT_MAX * m if transposed else 0, c.dtype)
    for t in range(batch):
        if transposed:
            _rows_t(a[t], b[t], c[t], b_t, c_t)
            continue
        bt = b[t]
        if bt.strides[1] == isz or n == 1:
            pb, ldb = address(bt), bt.strides[0] // isz
        else:
            for j in range(n):  # a transposed B: read down its contiguous columns
                col = bt[:, j]
                for p in range(k):
                    scratch[p, j] = col[p]
            pb, ldb = address(scratch), n
        _rows(a[t], c[t], ldb, pb)
