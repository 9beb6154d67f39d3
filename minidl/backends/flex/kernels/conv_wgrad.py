"""conv2d's weight gradient (float32) as a register-tiled kernel over the forward's source rows.

``grad_w[k, r] = sum_n sum_q grad_out[n, k, q] * src[n, offs[r] + q]``: for stride 1 the source
of weight position r = (c, dy, dx) is a shifted view of the zero-padded input planes (the
forward's trick, :mod:`.conv`), so the input is not copied; strided convolutions use the
im2col rows. The im2col + batched gemm this replaces wrote 9x the input (19 MB for the bench
shape) and ran at 0.3x torch.

Each image's output gradient is first transposed to ``got[q, k]`` (zeros past Kg). The
micro-kernel
(a numba ``@intrinsic``, explicit SIMD vectors as in :mod:`.conv_tile`) then keeps an
``NR x KV`` tile of accumulator vectors in registers (NR weight positions x KV vectors of
channels): per output pixel q it loads KV vectors of ``got``, broadcasts NR source values
and issues ``NR * KV`` fused multiply-adds (only real output columns: a border column of the
source may hold an inf that must not meet a zero); the tile is added into a per-thread buffer at the end, and the
threads' buffers are summed once. Measured on one core, the bench shape (AVX-512): this form
2.1 ms, the lane-sum form with vectors over q (4 x 5 tile, masked tails) 2.63 ms, im2col +
gemm 5.8 ms.

Tiles: AVX-512 8 x 2 (16 accumulators, 32 channels per block); AVX2 6 x 2 (12 of 16
registers, 16 channels per block).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._common import JIT
from .conv_tile import LANES
from .isa import ISA

NR, KV = (8, 2) if ISA == "avx512" else (6, 2)  # weight positions x channel vectors per tile
KB = KV * LANES  # channels per block


def _codegen(context, builder, signature, args):
    _, _, r0, _, nrows, ncols, wrow, kp, koff, _ = args
    arr = [
        context.make_array(t)(context, builder, a) if isinstance(t, types.Array) else None
        for t, a in zip(signature.args, args)
    ]
    src_p, offs_p, got_p, acc_p = arr[0].data, arr[1].data, arr[3].data, arr[9].data
    f32, i64, i32 = ir.FloatType(), ir.IntType(64), ir.IntType(32)
    vty = ir.VectorType(f32, LANES)
    vptr = vty.as_pointer()
    fma = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vty, vty, vty]), f"llvm.fma.v{LANES}f32"
    )
    c64 = lambda v: ir.Constant(i64, v)  # noqa: E731
    zero = ir.Constant(vty, None)
    undef = ir.Constant(vty, ir.Undefined)
    splat0 = ir.Constant(ir.VectorType(i32, LANES), None)
    xrows = [builder.gep(src_p, [builder.load(builder.gep(offs_p, [builder.add(r0, c64(j))]))])
             for j in range(NR)]  # fmt: skip
    gbase = builder.gep(got_p, [koff])
    pre = builder.basic_block
    head = builder.append_basic_block("wgrad.row")
    inner = builder.append_basic_block("wgrad.col")
    tail = builder.append_basic_block("wgrad.rowend")
    done = builder.append_basic_block("wgrad.done")
    ok = builder.and_(builder.icmp_signed(">", nrows, c64(0)), builder.icmp_signed(">", ncols, c64(0)))
    builder.cbranch(ok, head, done)

    # Rows oh of the output: the source row starts at oh * wrow, the gradient row at oh * ncols
    # (only real output columns are visited: a border column of x may hold an inf).
    builder.position_at_end(head)
    oh = builder.phi(i64)
    oh.add_incoming(c64(0), pre)
    acc_row = [[builder.phi(vty) for _ in range(KV)] for _ in range(NR)]
    xr = [builder.gep(xrows[j], [builder.mul(oh, wrow)]) for j in range(NR)]
    gr = builder.gep(gbase, [builder.mul(builder.mul(oh, ncols), kp)])
    builder.branch(inner)

    builder.position_at_end(inner)
    ow = builder.phi(i64)
    ow.add_incoming(c64(0), head)
    accs = [[builder.phi(vty) for _ in range(KV)] for _ in range(NR)]
    grow = builder.gep(gr, [builder.mul(ow, kp)])
    gs = [builder.load(builder.bitcast(builder.gep(grow, [c64(v * LANES)]), vptr), align=4)
          for v in range(KV)]  # fmt: skip
    new = []
    for j in range(NR):
        x = builder.load(builder.gep(xr[j], [ow]))
        xb = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(i32, 0)),
                                    undef, splat0)  # fmt: skip
        new.append([builder.call(fma, [xb, gs[v], accs[j][v]]) for v in range(KV)])
    ow1 = builder.add(ow, c64(1))
    ow.add_incoming(ow1, inner)
    for j in range(NR):
        for v in range(KV):
            accs[j][v].add_incoming(acc_row[j][v], head)
            accs[j][v].add_incoming(new[j][v], inner)
    builder.cbranch(builder.icmp_signed("<", ow1, ncols), inner, tail)

    builder.position_at_end(tail)
    oh1 = builder.add(oh, c64(1))
    oh.add_incoming(oh1, tail)
    for j in range(NR):
        for v in range(KV):
            acc_row[j][v].add_incoming(zero, pre)
            acc_row[j][v].add_incoming(new[j][v], tail)
    builder.cbranch(builder.icmp_signed("<", oh1, nrows), head, done)

    builder.position_at_end(done)
    res = [[builder.phi(vty) for _ in range(KV)] for _ in range(NR)]  # phis first
    for j in range(NR):
        for v in range(KV):
            res[j][v].add_incoming(zero, pre)
            res[j][v].add_incoming(new[j][v], tail)
            p = builder.bitcast(builder.gep(acc_p, [c64((j * KV + v) * LANES)]), vptr)
            builder.store(builder.fadd(builder.load(p, align=4), res[j][v]), p, align=4)
    return context.get_dummy_value()


@intrinsic
def _tile(typingctx, src, offs, r0, got, nrows, ncols, wrow, kp, koff, acc):
    # acc[(j*KV + v)*LANES + l] += sum over oh < nrows, ow < ncols of
    # src[offs[r0 + j] + oh*wrow + ow] * got[(oh*ncols + ow)*kp + koff + v*LANES + l]:
    # src/got/acc contiguous float32 1-D, offs int64 [>= r0 + NR].
    return types.void(src, offs, r0, got, nrows, ncols, wrow, kp, koff, acc), _codegen


def _transpose_codegen(context, builder, signature, args):
    _, s0, sstride, _, d0, dstride = args
    src_p = context.make_array(signature.args[0])(context, builder, args[0]).data
    dst_p = context.make_array(signature.args[3])(context, builder, args[3]).data
    i64, i32 = ir.IntType(64), ir.IntType(32)
    vptr = ir.VectorType(ir.FloatType(), LANES).as_pointer()
    rows = []
    for i in range(LANES):
        off = builder.add(s0, builder.mul(sstride, ir.Constant(i64, i)))
        rows.append(builder.load(builder.bitcast(builder.gep(src_p, [off]), vptr), align=4))
    # Butterfly: at block size b, rows i and i + b swap their off-diagonal b x b blocks; after
    # b = LANES/2, ..., 1 the block is transposed (LANES * log2(LANES) two-source shuffles).
    b = LANES // 2
    while b:
        lo = ir.Constant(ir.VectorType(i32, LANES),
                         [lane if not lane & b else LANES + lane - b for lane in range(LANES)])
        hi = ir.Constant(ir.VectorType(i32, LANES),
                         [lane + b if not lane & b else LANES + lane for lane in range(LANES)])
        new = list(rows)
        for i in range(LANES):
            if not i & b:
                new[i] = builder.shuffle_vector(rows[i], rows[i + b], lo)
                new[i + b] = builder.shuffle_vector(rows[i], rows[i + b], hi)
        rows = new
        b //= 2
    for i in range(LANES):
        off = builder.add(d0, builder.mul(dstride, ir.Constant(i64, i)))
        builder.store(rows[i], builder.bitcast(builder.gep(dst_p, [off]), vptr), align=4)
    return context.get_dummy_value()


@intrinsic
def _transpose_block(typingctx, src, s0, sstride, dst, d0, dstride):
    # dst[d0 + j*dstride + i] = src[s0 + i*sstride + j] for i, j < LANES (float32 1-D arrays).
    return types.void(src, s0, sstride, dst, d0, dstride), _transpose_codegen


@njit(**JIT)
def _transpose(go, got, t0, t1):
    # got[n, g, q, k] = go[n, g, k, q] (q = oh*OW + ow); 0 for k >= Kg. Whole LANES x LANES
    # blocks go through registers (a scalar copy cost 0.5 ms for the bench shape).
    groups, kg, nq = go.shape[1], go.shape[2], go.shape[3] * go.shape[4]
    kp = got.shape[3]
    kf, qf = kg // LANES * LANES, nq // LANES * LANES
    for t in range(t0, t1):
        n = t // groups
        g = t - n * groups
        src = go[n, g].reshape(-1)
        dst = got[n, g].reshape(-1)
        for k0 in range(0, kf, LANES):
            for q0 in range(0, qf, LANES):
                _transpose_block(src, k0 * nq + q0, nq, dst, q0 * kp + k0, kp)
        for q in range(nq):
            row = dst[q * kp : q * kp + kp]
            for k in range(kf if q < qf else 0, kg):
                row[k] = src[k * nq + q]
            for k in range(kg, kp):
                row[k] = 0


@njit(**JIT)
def _images(go, src_all, offs, got, wrow, acc, t0, t1):
    # Tasks t in [t0, t1): (image n, group g); acc [G, nrb, nkb, NR*KV*LANES] accumulates.
    groups, kp = got.shape[1], got.shape[3]
    oh_n, ow_n = go.shape[3], go.shape[4]
    nrb, nkb = acc.shape[1], acc.shape[2]
    for t in range(t0, t1):
        n = t // groups
        g = t - n * groups
        _transpose(go, got, t, t + 1)  # just before its use: the image's got stays in L2
        src = src_all[n, g]
        gt = got[n, g].reshape(-1)
        for rb in range(nrb):
            for kb in range(nkb):
                _tile(src, offs, rb * NR, gt, oh_n, ow_n, wrow, kp, kb * KB, acc[g, rb, kb])


@njit(parallel=True, **JIT)
def wgrad_parallel(go, src_all, offs, got, wrow, accs):
    """Weight-gradient partial sums into ``accs[part]`` [G, nrb, nkb, NR*KV*LANES], the
    (image, group) pairs cut into one contiguous share per part. ``go`` [N, G, Kg, OH, OW];
    ``src_all`` [N, G, L] the source rows (output row oh at ``oh * wrow``); ``offs`` [nrb*NR]
    (padded with zeros); ``got`` [N, G, OH*OW, nkb*KB] scratch for the transposed ``go``."""
    parts = accs.shape[0]
    ntask = go.shape[0] * go.shape[1]
    for p in prange(parts):
        _images(go, src_all, offs, got, wrow, accs[p], p * ntask // parts,
                (p + 1) * ntask // parts)  # fmt: skip


@njit(**JIT)
def wgrad_serial(go, src_all, offs, got, wrow, accs):
    """``wgrad_parallel`` on the calling thread (``accs`` has one part)."""
    _images(go, src_all, offs, got, wrow, accs[0], 0, go.shape[0] * go.shape[1])


def weight_grad(
    go: np.ndarray,
    src: np.ndarray,
    offs: np.ndarray,
    wrow: int,
    cg_r: tuple[int, int],
    parts: int,
) -> np.ndarray:
    """grad_w [G, Kg, R] from ``go`` [N, G, Kg, OH, OW] (float32, C-contiguous) and the source
    rows ``src`` [N, G, L] with their offsets ``offs`` [R] (or already padded with zeros to
    whole blocks of ``NR``); ``cg_r`` = (Kg, R)."""
    n, groups, kg, oh, ow = go.shape
    r = cg_r[1]
    nkb, nrb = -(-kg // KB), -(-r // NR)
    if len(offs) != nrb * NR:  # conv2d's planned offsets come padded already
        offs = np.concatenate([offs, np.zeros(nrb * NR - r, np.int64)])
    got = np.empty((n, groups, oh * ow, nkb * KB), np.float32)
    accs = np.zeros((parts, groups, nrb, nkb, NR * KV * LANES), np.float32)
    (wgrad_parallel if parts > 1 else wgrad_serial)(go, src, offs, got, wrow, accs)
    s = (accs[0] if parts == 1 else accs.sum(axis=0)).reshape(groups, nrb, nkb, NR, KB)  # one part: no sum
    gw_t = s.transpose(0, 1, 3, 2, 4).reshape(groups, nrb * NR, nkb * KB)[:, :r, :kg]
    return gw_t.transpose(0, 2, 1)
