"""conv2d's weight gradient (float32) for few channels or small planes: vectors over the output
positions, the images looped inside the tile.

``grad_w[k, r] = sum_n sum_q grad_out[n, k, q] * src[n, offs[r] + q]``. :mod:`.conv_wgrad`
puts the channels in the vector lanes (32 per block on AVX-512): the training chapter's conv1
(8 channels, R = 9 weight positions, 8x8 planes) filled a quarter of its lanes and 9 of its 16
weight positions, and transposed every image's gradient with scalar stores, 84 us a call
against torch's 60 us. Here the lanes run over the output positions instead, as in the
forward's flat slots (:mod:`.conv`): on the source grid (OH rows of ``wrow`` positions, end to
end), ``LANES`` positions a slot. The output gradient is first laid out on the same grid
(zeros at the border columns and past the end, channels padded to a multiple of ``KR``).

The micro-kernel (a numba ``@intrinsic``, as :mod:`.conv_tile`) keeps a ``KR x RR`` tile of
accumulator vectors (``KR`` channels x ``RR`` weight positions) in registers over every image
and slot: per slot it loads ``KR`` gradient vectors and, per weight position, one source vector
with the slot's mask (lanes on a border column or past the grid are not read: the source there
is the neighbouring row's value, and an inf times the gradient's zero would be NaN), then
``KR * RR`` fused multiply-adds. Each task (group, channel block, weight-position block) owns
its accumulators, so the threads share nothing; the lanes are summed at the end.

Tiles: AVX-512 8 x 3 (24 accumulators + 8 gradient vectors + 1 source); AVX2 4 x 2 (8 + 4 + 1
of 16 registers). conv2d uses it when :mod:`.conv_wgrad` would fill at most a quarter of its
lanes (``Kg * 4 <= KB``): one AVX-512 core, the CNN's conv1, 81 -> 20 us; its conv2 (16
channels, R = 72, 4x4 planes) stays on :mod:`.conv_wgrad` (48 us there, 74 here).
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._common import JIT
from .conv_tile import LANES
from .isa import ISA

# channels x weight positions per tile. Measured on one AVX-512 core, the CNN's conv1 (K = 8,
# R = 9): 8 x 3 4.3 us, 4 x 3 4.6, 4 x 4 5.4, 4 x 6 9.5 (LLVM spilled accumulators), 2 x 6 7.9.
KR, RR = (8, 3) if ISA == "avx512" else (4, 2)


def _codegen(context, builder, signature, args):
    _, offs_v, r0, _, koff, qpad, _, _, _, _ = args
    arr = [
        context.make_array(t)(context, builder, a) if isinstance(t, types.Array) else None
        for t, a in zip(signature.args, args)
    ]
    src_p, offs_p, gg_p = arr[0].data, arr[1].data, arr[3].data
    xq_p, gq_p, mask_p, acc_p = arr[6].data, arr[7].data, arr[8].data, arr[9].data
    ntask = builder.extract_value(arr[6].shape, 0)
    f32, i64, i32, i1 = ir.FloatType(), ir.IntType(64), ir.IntType(32), ir.IntType(1)
    vty = ir.VectorType(f32, LANES)
    vptr = vty.as_pointer()
    mty = ir.VectorType(i1, LANES)
    ity = ir.VectorType(i32, LANES)
    fma = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vty, vty, vty]), f"llvm.fma.v{LANES}f32"
    )
    mload = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(vty, [vptr, i32, mty, vty]),
        f"llvm.masked.load.v{LANES}f32.p0",
    )
    c64 = lambda v: ir.Constant(i64, v)  # noqa: E731
    zero = ir.Constant(vty, None)
    izero = ir.Constant(ity, None)
    xoffs = [builder.load(builder.gep(offs_p, [builder.add(r0, c64(j))])) for j in range(RR)]
    pre = builder.basic_block
    loop = builder.append_basic_block("wgflat.loop")
    done = builder.append_basic_block("wgflat.done")
    builder.cbranch(builder.icmp_signed(">", ntask, c64(0)), loop, done)

    builder.position_at_end(loop)
    t = builder.phi(i64)
    t.add_incoming(c64(0), pre)
    accs = [[builder.phi(vty) for _ in range(RR)] for _ in range(KR)]
    gbase = builder.gep(gg_p, [builder.add(builder.load(builder.gep(gq_p, [t])), koff)])
    gs = [
        builder.load(
            builder.bitcast(builder.gep(gbase, [builder.mul(qpad, c64(i))]), vptr), align=4
        )
        for i in range(KR)
    ]
    mrow = builder.bitcast(builder.gep(mask_p, [builder.mul(t, c64(LANES))]), ity.as_pointer())
    m = builder.icmp_signed("!=", builder.load(mrow, align=4), izero)
    xbase = builder.gep(src_p, [builder.load(builder.gep(xq_p, [t]))])
    new = [[None] * RR for _ in range(KR)]
    for j in range(RR):
        p = builder.bitcast(builder.gep(xbase, [xoffs[j]]), vptr)
        xv = builder.call(mload, [p, ir.Constant(i32, 4), m, zero])
        for i in range(KR):
            new[i][j] = builder.call(fma, [gs[i], xv, accs[i][j]])
    t1 = builder.add(t, c64(1))
    end = builder.basic_block
    t.add_incoming(t1, end)
    for i in range(KR):
        for j in range(RR):
            accs[i][j].add_incoming(zero, pre)
            accs[i][j].add_incoming(new[i][j], end)
    builder.cbranch(builder.icmp_signed("<", t1, ntask), loop, done)

    builder.position_at_end(done)
    res = [[builder.phi(vty) for _ in range(RR)] for _ in range(KR)]  # phis first
    for i in range(KR):
        for j in range(RR):
            res[i][j].add_incoming(zero, pre)
            res[i][j].add_incoming(new[i][j], end)
            p = builder.bitcast(builder.gep(acc_p, [c64((i * RR + j) * LANES)]), vptr)
            builder.store(builder.fadd(builder.load(p, align=4), res[i][j]), p, align=4)
    return context.get_dummy_value()


@intrinsic
def _tile(typingctx, src, offs, r0, gg, koff, qpad, xq, gq, mask, acc):
    # acc[(i*RR + j)*LANES + l] += sum over t of gg[gq[t] + koff + i*qpad + l] *
    # (src[xq[t] + offs[r0 + j] + l] if mask[t*LANES + l] else 0): src/gg/acc contiguous
    # float32 1-D, offs/xq/gq int64, mask int32 [len(xq) * LANES].
    return types.void(src, offs, r0, gg, koff, qpad, xq, gq, mask, acc), _codegen


@njit(**JIT)
def _grid(go, gg, wrow):
    # gg[n, g, k, oh*wrow + ow] = go[n, g, k, oh, ow] for k < Kg, ow < OW; 0 elsewhere.
    n_img, groups, kg, oh_n, ow_n = go.shape
    kp, qpad = gg.shape[2], gg.shape[3]
    for n in range(n_img):
        for g in range(groups):
            for k in range(kp):
                row = gg[n, g, k]
                if k >= kg:
                    for q in range(qpad):
                        row[q] = 0
                    continue
                plane = go[n, g, k]
                for oh in range(oh_n):
                    d = row[oh * wrow : oh * wrow + wrow]
                    s = plane[oh]
                    for ow in range(ow_n):
                        d[ow] = s[ow]
                    for ow in range(ow_n, wrow):
                        d[ow] = 0
                for q in range(oh_n * wrow, qpad):
                    row[q] = 0


@njit(**JIT)
def _tasks(src, offs, gg, xq, gq, mask, acc, u0, u1):
    # Tasks u in [u0, u1): (group g, channel block kb, weight-position block rb).
    nkb, nrb = acc.shape[1], acc.shape[2]
    qpad = gg.shape[3]
    flat_src = src.reshape(-1)
    flat_gg = gg.reshape(-1)
    for u in range(u0, u1):
        g = u // (nkb * nrb)
        rem = u - g * nkb * nrb
        kb = rem // nrb
        rb = rem - kb * nrb
        _tile(flat_src, offs, rb * RR, flat_gg, kb * KR * qpad, qpad, xq[g], gq[g], mask,
              acc[g, kb, rb])  # fmt: skip


@njit(**JIT)
def wgrad_flat_serial(go, src, offs, gg, wrow, xq, gq, mask, acc):
    """The weight gradient's lane partial sums into ``acc`` [G, nkb, nrb, KR*RR*LANES] (zeros
    on entry) on one thread. ``go`` [N, G, Kg, OH, OW]; ``src`` [N, G, L] the source rows (C-
    contiguous; output row oh at ``oh * wrow``); ``offs`` [nrb*RR] (padded with zeros); ``gg``
    [N, G, nkb*KR, qpad] scratch for the gradient on the grid; ``xq``, ``gq``, ``mask`` from
    ``slot_tables``."""
    _grid(go, gg, wrow)
    _tasks(src, offs, gg, xq, gq, mask, acc, 0, acc.shape[0] * acc.shape[1] * acc.shape[2])


@njit(parallel=True, **JIT)
def wgrad_flat_parallel(go, src, offs, gg, wrow, xq, gq, mask, acc, parts):
    """``wgrad_flat_serial`` with the tasks cut into ``parts`` contiguous parts over threads."""
    _grid(go, gg, wrow)
    ntask = acc.shape[0] * acc.shape[1] * acc.shape[2]
    for p in prange(parts):
        _tasks(src, offs, gg, xq, gq, mask, acc, p * ntask // parts, (p + 1) * ntask // parts)


@functools.lru_cache(maxsize=256)
def slot_tables(n_img: int, groups: int, src_len: int, kp: int, qpad: int, oh: int, ow: int,
                wrow: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Per group and (image, slot) pair t: where the slot starts in the flat source (``xq``
    [G, T]) and in the flat grid gradient (``gq`` [G, T]), and per t the lanes that hold an
    output position (``mask`` [T * LANES] int32). Kept per shape (the kernels only read them)."""
    ns = qpad // LANES
    q = np.arange(qpad)
    valid = ((q % wrow) < ow) & (q < oh * wrow)
    mask = np.tile(valid.astype(np.int32), n_img)
    n, s = np.divmod(np.arange(n_img * ns), ns)
    g = np.arange(groups)[:, None]
    xq = (n * groups + g) * src_len + s * LANES
    gq = (n * groups + g) * kp * qpad + s * LANES
    return xq.astype(np.int64), gq.astype(np.int64), mask


def weight_grad(
    go: np.ndarray,
    src: np.ndarray,
    offs: np.ndarray,
    wrow: int,
    cg_r: tuple[int, int],
    parts: int,
) -> np.ndarray:
    """grad_w [G, Kg, R] from ``go`` [N, G, Kg, OH, OW] (float32, C-contiguous) and the source
    rows ``src`` [N, G, L] (C-contiguous) with their offsets ``offs`` [R] (or already padded
    with zeros to whole blocks of ``RR``); ``cg_r`` = (Kg, R)."""
    n, groups, kg, oh, ow = go.shape
    r = cg_r[1]
    nkb, nrb = -(-kg // KR), -(-r // RR)
    qpad = -(-(oh * wrow) // LANES) * LANES
    if len(offs) != nrb * RR:  # conv2d's planned offsets come padded already
        offs = np.concatenate([offs, np.zeros(nrb * RR - r, np.int64)])
    xq, gq, mask = slot_tables(n, groups, src.shape[2], nkb * KR, qpad, oh, ow, wrow)
    gg = np.empty((n, groups, nkb * KR, qpad), np.float32)
    acc = np.zeros((groups, nkb, nrb, KR * RR * LANES), np.float32)
    parts = min(parts, groups * nkb * nrb)
    if parts > 1:
        wgrad_flat_parallel(go, src, offs, gg, wrow, xq, gq, mask, acc, parts)
    else:
        wgrad_flat_serial(go, src, offs, gg, wrow, xq, gq, mask, acc)
    s = acc.reshape(groups, nkb, nrb, KR, RR, LANES).sum(axis=-1)
    return s.transpose(0, 1, 3, 2, 4).reshape(groups, nkb * KR, nrb * RR)[:, :kg, :r]
