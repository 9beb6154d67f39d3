"""conv2d's weight gradient as register-tiled dot products (float32), without im2col for stride 1.

``grad_w[k, r] = sum_n sum_q grad_out[n, k, q] * src[n, offs[r] + q]``: for stride 1 the source
of weight position r = (c, dy, dx) is a shifted view of the zero-padded input planes (the
forward's trick, :mod:`.conv`), so nothing is copied; strided convolutions use the im2col rows.
The im2col + batched gemm it replaces wrote 9x the input (19 MB for the bench shape) and ran
at 0.3x torch.

The micro-kernel (a numba ``@intrinsic``, explicit SIMD vectors as in :mod:`.conv_tile`) keeps
an ``MK x NR`` tile of (channel, weight position) accumulator vectors in registers over every
vector slot of an image (``conv_tile.slots``: a row's last slot is partial, its gradient lanes
are loaded masked with zeros), then adds them into a per-thread buffer; the lanes and the
threads' buffers are summed once at the end. Per slot: ``MK`` gradient loads, ``NR`` source
loads, ``MK * NR`` fused multiply-adds. AVX-512: 4 x 5 (20 accumulators + 9 operands of 32
registers); AVX2: 3 x 3 (9 + 6 of 16).
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

MK, NR = (4, 5) if ISA == "avx512" else (3, 3)  # channels x weight positions per tile


def _codegen(context, builder, signature, args):
    go_v, krows_v, src_v, offs_v, r0, qv_v, dv_v, lanes_v, acc_v = args
    arr = [
        context.make_array(t)(context, builder, a) if isinstance(t, types.Array) else None
        for t, a in zip(signature.args, args)
    ]
    go_p, krows_p, src_p, offs_p = arr[0].data, arr[1].data, arr[2].data, arr[3].data
    qv_p, dv_p, lanes_p, acc_p = arr[5].data, arr[6].data, arr[7].data, arr[8].data
    f32, i64, i32, i1 = ir.FloatType(), ir.IntType(64), ir.IntType(32), ir.IntType(1)
    vty = ir.VectorType(f32, LANES)
    vptr = vty.as_pointer()
    mty = ir.VectorType(i1, LANES)
    m32 = ir.VectorType(i32, LANES)
    mvptr = m32.as_pointer()
    fma = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vty, vty, vty]), f"llvm.fma.v{LANES}f32"
    )
    mload = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vptr, i32, mty, vty]), f"llvm.masked.load.v{LANES}f32.p0"
    )
    c64 = lambda v: ir.Constant(i64, v)  # noqa: E731
    zero = ir.Constant(vty, None)

    grows = [builder.gep(go_p, [builder.load(builder.gep(krows_p, [c64(i)]))]) for i in range(MK)]
    xrows = [builder.gep(src_p, [builder.load(builder.gep(offs_p, [builder.add(r0, c64(j))]))])
             for j in range(NR)]  # fmt: skip
    nslot = builder.extract_value(arr[5].shape, 0)
    pre = builder.basic_block
    loop = builder.append_basic_block("wgrad.loop")
    done = builder.append_basic_block("wgrad.done")
    builder.cbranch(builder.icmp_signed(">", nslot, c64(0)), loop, done)

    builder.position_at_end(loop)
    s = builder.phi(i64)
    s.add_incoming(c64(0), pre)
    accs = [[builder.phi(vty) for _ in range(NR)] for _ in range(MK)]
    q = builder.load(builder.gep(qv_p, [s]))
    d = builder.load(builder.gep(dv_p, [s]))
    # The slot's lane mask, a row of int32 -1/0 (``lane_masks``): one vector load, which AVX2's
    # vmaskmovps takes as it is (a mask from bits was built lane by lane there: 8.5 vs x ms).
    mrow = builder.bitcast(builder.gep(lanes_p, [builder.mul(s, c64(LANES))]), mvptr)
    mask = builder.icmp_signed("<", builder.load(mrow, align=4), ir.Constant(m32, None))
    gs = [builder.call(mload, [builder.bitcast(builder.gep(grows[i], [d]), vptr),
                               ir.Constant(i32, 4), mask, zero]) for i in range(MK)]  # fmt: skip
    # Both operands masked: a lane past the row must add 0 * 0, never 0 * (a neighbour's inf).
    xs = [builder.call(mload, [builder.bitcast(builder.gep(xrows[j], [q]), vptr),
                               ir.Constant(i32, 4), mask, zero]) for j in range(NR)]  # fmt: skip
    new = [[builder.call(fma, [gs[i], xs[j], accs[i][j]]) for j in range(NR)] for i in range(MK)]
    s1 = builder.add(s, c64(1))
    end = builder.basic_block
    s.add_incoming(s1, end)
    for i in range(MK):
        for j in range(NR):
            accs[i][j].add_incoming(zero, pre)
            accs[i][j].add_incoming(new[i][j], end)
    builder.cbranch(builder.icmp_signed("<", s1, nslot), loop, done)

    builder.position_at_end(done)
    res = [[builder.phi(vty) for _ in range(NR)] for _ in range(MK)]  # phis first
    for i in range(MK):
        for j in range(NR):
            res[i][j].add_incoming(zero, pre)
            res[i][j].add_incoming(new[i][j], end)
            p = builder.bitcast(builder.gep(acc_p, [c64((i * NR + j) * LANES)]), vptr)
            builder.store(builder.fadd(builder.load(p, align=4), res[i][j]), p, align=4)
    return context.get_dummy_value()


@intrinsic
def _dot_tile(typingctx, go, krows, src, offs, r0, qv, dv, lanes, acc):
    # acc[(i*NR + j)*LANES : +LANES] += lane sums over the slots s of
    # go[krows[i] + dv[s] + l] * src[offs[r0 + j] + qv[s] + l] for the lanes l set in the
    # mask row lanes[s*LANES : (s+1)*LANES] (``lane_masks``; the other lanes read 0).
    # go/src/acc: contiguous float32 1-D; krows: int64 [MK]; offs: int64 [>= r0 + NR].
    return types.void(go, krows, src, offs, r0, qv, dv, lanes, acc), _codegen


@njit(**JIT)
def _wgrad_images(go_all, src_all, offs, qv, dv, lanes, acc, t0, t1):
    # Tasks t in [t0, t1): (image n, group g); acc [G, nkb, nrb, MK*NR*LANES] accumulates.
    groups, nkb, nrb = acc.shape[0], acc.shape[1], acc.shape[2]
    kg = go_all.shape[2]
    cstride = go_all.shape[3]
    krows = np.empty(MK, np.int64)
    for t in range(t0, t1):
        n = t // groups
        g = t - n * groups
        go = go_all[n, g].reshape(-1)
        src = src_all[n, g]
        for kb in range(nkb):
            for i in range(MK):
                krows[i] = min(kb * MK + i, kg - 1) * cstride  # rows past Kg: clamped, dropped
            for rb in range(nrb):
                _dot_tile(go, krows, src, offs, rb * NR, qv, dv, lanes, acc[g, kb, rb])


@njit(parallel=True, **JIT)
def wgrad_parallel(go_all, src_all, offs, qv, dv, lanes, accs):
    """Accumulate conv2d's weight-gradient lane sums into ``accs[part]`` for a contiguous share
    of the (image, group) pairs per part; ``go_all`` [N, G, Kg, OH*OW] the output gradient,
    ``src_all`` [N, G, L] the source rows with ``LANES`` floats of slack, ``offs`` [nrb*NR]
    (padded with zeros), ``qv``/``dv`` the slots of one [OH, OW] plane and ``lanes`` their
    masks (``lane_masks``)."""
    parts = accs.shape[0]
    ntask = go_all.shape[0] * go_all.shape[1]
    for part in prange(parts):
        _wgrad_images(go_all, src_all, offs, qv, dv, lanes, accs[part],
                      part * ntask // parts, (part + 1) * ntask // parts)  # fmt: skip


@njit(**JIT)
def wgrad_serial(go_all, src_all, offs, qv, dv, lanes, accs):
    """``wgrad_parallel`` on the calling thread (``accs`` has one part)."""
    _wgrad_images(go_all, src_all, offs, qv, dv, lanes, accs[0], 0,
                  go_all.shape[0] * go_all.shape[1])  # fmt: skip


def lane_masks(lanes: np.ndarray) -> np.ndarray:
    """Per slot, the mask of its first ``lanes`` lanes: a flat int32 [S * LANES] of -1 / 0."""
    return -(np.arange(LANES) < lanes[:, None]).astype(np.int32).reshape(-1)


def finish(accs: np.ndarray, kg: int, r: int) -> np.ndarray:
    """The weight gradient [G, Kg, R] from the parts' lane sums [parts, G, nkb, nrb, MK*NR*L]."""
    parts, groups, nkb, nrb, _ = accs.shape
    s = accs.sum(axis=0).reshape(groups, nkb, nrb, MK, NR, LANES).sum(axis=-1)
    return s.transpose(0, 1, 3, 2, 4).reshape(groups, nkb * MK, nrb * NR)[:, :kg, :r]
