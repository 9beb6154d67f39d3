"""conv2d's register-tiled micro-kernel: explicit SIMD vectors, sized per instruction set.

Left to itself, the loop vectorizer compiled conv2d's inner loop with 8-wide vectors on this
AVX-512 machine (LLVM's tuning for these CPUs prefers 256-bit vectors) and kept the
accumulators in memory, loading and storing them for every weight position: 85 GF/s on one
core, a third of the FMA peak. This module writes the inner loop itself, in LLVM IR through a
numba ``@intrinsic`` (compiled into the calling kernel, so ``cache=True`` holds): an
``MR x NV`` tile of accumulator vectors stays in registers for the whole reduction over the
weight positions r = (c, dy, dx); per r it loads ``NV`` vectors of the shifted source rows,
broadcasts ``MR`` packed weights and issues ``MR * NV`` fused multiply-adds. The results go
straight to the output with masked stores (the bias is the accumulators' initial value), so
the border columns of the padded grid are never written anywhere. burn-flex gets the same
choice of vector width from its SIMD crate's runtime dispatch.

The tile follows :data:`~.isa.ISA` (read at import, nothing compiled):

* AVX-512, 32 registers of 16 float32: 8 channels x 3 vectors = 24 accumulators + 3 source
  vectors + 1 broadcast (``WIDE``), or 4 x 6 when a group has at most 4 channels (``NARROW``);
* AVX2, 16 registers of 8: 4 x 3 = 12 accumulators + 3 + 1.

Note: ``NUMBA_CPU_NAME=haswell`` alone still compiles with the host's AVX-512 features (numba
takes them from the host when ``NUMBA_CPU_FEATURES`` is unset): ``isa.ISA`` says ``"avx2"``,
so these tiles are the AVX2 ones, but LLVM may use 32 registers. A true AVX2 build also sets
``NUMBA_CPU_FEATURES`` (the test of the AVX2 tiles does).

A vector *slot* is ``LANES`` consecutive output columns of one row (a row's last slot may be
partial: its store is masked). ``conv_tiles_serial`` / ``conv_tiles_parallel`` run (image,
group, tile of NV slots) tasks; per tile, every block of ``MR`` output channels reuses the same
source window (about 10 KiB for 16 channels, in L1) and the packed weights (in L1 too).
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._common import JIT
from .isa import ISA

LANES = 16 if ISA == "avx512" else 8  # float32 per vector register
# (channels MR, vector slots NV) of the two tiles: the wide one for Kg > 4, the narrow one for
# Kg <= 4 (fewer zero channels computed). Measured on one core, the bench conv: AVX-512 8x3
# 1.70 ms, 4x6 1.81, 6x4 1.85, 3x8 2.45; AVX2 (16 registers) 4x3 2.75 ms, 6x2 3.24, 3x4 4.3.
WIDE = (8, 3) if ISA == "avx512" else (4, 3)
NARROW = (4, 6) if ISA == "avx512" else (4, 3)
# The wide tile's channels with 2 slots: a plane whose output fits 2 vectors (the training
# chapter's 4x4 planes, 24 positions on the padded grid) would waste a third of the wide tile.
SHORT = (WIDE[0], 2)


def tile_shape(kg: int, nslots: int | None = None) -> tuple[int, int]:
    """The (MR, NV) tile that conv2d uses for ``kg`` output channels per group; given the
    vector slots of one plane (``nslots``), the wide tile or the short one, whichever computes
    fewer padding slots (the wide one on a tie)."""
    if kg <= 4:
        return NARROW
    if nslots is not None and -(-nslots // SHORT[1]) * SHORT[1] < -(-nslots // WIDE[1]) * WIDE[1]:
        return SHORT
    return WIDE


def _make_tile_fma(MR: int, NV: int):  # noqa: N803 (the tile constants, named as elsewhere)
    """The micro-kernel for an MR x NV tile, as a numba intrinsic (see ``_tile_fma_*``)."""

    def tile_fma(typingctx, src, qv, offs, wpk, bias, out, obase, cstride, dv, lanes, kn):
        sig = types.void(src, qv, offs, wpk, bias, out, obase, cstride, dv, lanes, kn)
        return sig, _codegen(MR, NV)

    tile_fma.__name__ = f"tile_fma_{MR}x{NV}"
    return intrinsic(tile_fma)


def _codegen(MR: int, NV: int):  # noqa: N803

    def codegen(context, builder, signature, args):
        src_v, qv_v, offs_v, wpk_v, bias_v, out_v, obase, cstride, dv_v, lanes_v, kn = args
        arr = [
            context.make_array(t)(context, builder, a) if isinstance(t, types.Array) else None
            for t, a in zip(signature.args, args)
        ]
        src_p, qv_p, offs_p, wpk_p, bias_p, out_p = (arr[i].data for i in range(6))
        dv_p, lanes_p = arr[8].data, arr[9].data
        f32, i64, i32, i1 = ir.FloatType(), ir.IntType(64), ir.IntType(32), ir.IntType(1)
        vty = ir.VectorType(f32, LANES)
        vptr = vty.as_pointer()
        mty = ir.VectorType(i1, LANES)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vty, [vty, vty, vty]), f"llvm.fma.v{LANES}f32"
        )
        mstore = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(ir.VoidType(), [vty, vptr, i32, mty]),
            f"llvm.masked.store.v{LANES}f32.p0",
        )
        c64 = lambda v: ir.Constant(i64, v)  # noqa: E731
        undef = ir.Constant(vty, ir.Undefined)
        splat0 = ir.Constant(ir.VectorType(i32, LANES), None)

        def bcast(val):
            return builder.shuffle_vector(builder.insert_element(undef, val, ir.Constant(i32, 0)),
                                          undef, splat0)  # fmt: skip

        nr = builder.extract_value(arr[2].shape, 0)
        qs = [builder.load(builder.gep(qv_p, [c64(v)])) for v in range(NV)]
        init = [bcast(builder.load(builder.gep(bias_p, [c64(i)]))) for i in range(MR)]
        pre = builder.basic_block
        loop = builder.append_basic_block("tile.loop")
        done = builder.append_basic_block("tile.done")
        builder.cbranch(builder.icmp_signed(">", nr, c64(0)), loop, done)

        builder.position_at_end(loop)
        r = builder.phi(i64)
        r.add_incoming(c64(0), pre)
        accs = [[builder.phi(vty) for _ in range(NV)] for _ in range(MR)]
        base = builder.gep(src_p, [builder.load(builder.gep(offs_p, [r]))])
        xs = [builder.load(builder.bitcast(builder.gep(base, [qs[v]]), vptr), align=4)
              for v in range(NV)]  # fmt: skip
        wrow = builder.gep(wpk_p, [builder.mul(r, c64(MR))])
        new = []
        for i in range(MR):
            wb = bcast(builder.load(builder.gep(wrow, [c64(i)])))
            new.append([builder.call(fma, [wb, xs[v], accs[i][v]]) for v in range(NV)])
        r1 = builder.add(r, c64(1))
        end = builder.basic_block
        r.add_incoming(r1, end)
        for i in range(MR):
            for v in range(NV):
                accs[i][v].add_incoming(init[i], pre)
                accs[i][v].add_incoming(new[i][v], end)
        builder.cbranch(builder.icmp_signed("<", r1, nr), loop, done)

        builder.position_at_end(done)
        res = [[builder.phi(vty) for _ in range(NV)] for _ in range(MR)]  # phis first
        for i in range(MR):
            for v in range(NV):
                res[i][v].add_incoming(init[i], pre)
                res[i][v].add_incoming(new[i][v], end)
        iota = ir.Constant(ir.VectorType(i64, LANES), list(range(LANES)))
        masks, dsts = [], []
        for v in range(NV):
            nl = builder.load(builder.gep(lanes_p, [c64(v)]))
            splat = builder.shuffle_vector(
                builder.insert_element(ir.Constant(ir.VectorType(i64, LANES), ir.Undefined), nl,
                                       ir.Constant(i32, 0)),
                ir.Constant(ir.VectorType(i64, LANES), ir.Undefined), splat0)  # fmt: skip
            masks.append(builder.icmp_signed("<", iota, splat))
            dsts.append(builder.load(builder.gep(dv_p, [c64(v)])))
        for i in range(MR):
            with builder.if_then(builder.icmp_signed("<", c64(i), kn)):
                row = builder.gep(out_p, [builder.add(obase, builder.mul(c64(i), cstride))])
                for v in range(NV):
                    p = builder.bitcast(builder.gep(row, [dsts[v]]), vptr)
                    builder.call(mstore, [res[i][v], p, ir.Constant(i32, 4), masks[v]])
        return context.get_dummy_value()

    return codegen


# For i < kn, v < NV: out[obase + i*cstride + dv[v] + l] = bias[i] + sum_r wpk[r*MR + i] *
# src[qv[v] + offs[r] + l] for the first lanes[v] lanes l of slot v (a masked store).
# src/wpk/bias/out: contiguous float32 1-D arrays (bias holds MR values, wpk R * MR);
# qv/dv/lanes: int64 [NV]. Every read is a whole vector and must stay inside src.
_tile_fma_wide = _make_tile_fma(*WIDE)
_tile_fma_narrow = _make_tile_fma(*NARROW)
_tile_fma_short = _make_tile_fma(*SHORT)


@njit(**JIT)
def _tiles(src_all, offs, wpk, biasp, out, qv, dv, lanes, nv, u0, u1):
    # Tasks u in [u0, u1): (image n, group g, tile t of nv vector slots; slot tables qv, dv,
    # lanes [ntile * nv] are the same for every image). MR is read off biasp.
    k_out = out.shape[1]
    groups, nkb, mr = biasp.shape
    wide = mr == WIDE[0] and nv == WIDE[1]
    short = mr == SHORT[0] and nv == SHORT[1]
    kg = k_out // groups
    cstride = out.shape[2] * out.shape[3]
    ntile = qv.shape[0] // nv
    flat = out.reshape(-1)
    for u in range(u0, u1):
        ng = u // ntile
        t = u - ng * ntile
        n = ng // groups
        g = ng - n * groups
        src = src_all[n, g]
        sl = slice(t * nv, t * nv + nv)
        for kb in range(nkb):
            obase = (n * k_out + g * kg + kb * mr) * cstride
            kn = min(mr, kg - kb * mr)
            if wide:
                _tile_fma_wide(src, qv[sl], offs, wpk[g, kb], biasp[g, kb], flat, obase,
                               cstride, dv[sl], lanes[sl], kn)  # fmt: skip
            elif short:
                _tile_fma_short(src, qv[sl], offs, wpk[g, kb], biasp[g, kb], flat, obase,
                                cstride, dv[sl], lanes[sl], kn)  # fmt: skip
            else:
                _tile_fma_narrow(src, qv[sl], offs, wpk[g, kb], biasp[g, kb], flat, obase,
                                 cstride, dv[sl], lanes[sl], kn)  # fmt: skip


@njit(**JIT)
def conv_tiles_serial(src_all, offs, wpk, biasp, out, qv, dv, lanes, nv):
    """out[n, k] = bias[k] + sum_r w[k, r] * src_all[n, g, offs[r] + q] on one thread.

    ``src_all`` [N, G, L] float32 source rows (shifted padded planes or im2col rows), long
    enough for whole-vector reads (``LANES`` floats of slack); ``wpk`` [G, ceil(Kg / MR), R * MR] and
    ``biasp`` [G, ceil(Kg / MR), MR] from ``pack``; ``out`` [N, K, OH, OW] C-contiguous;
    ``qv``, ``dv``, ``lanes`` the vector slots from ``slots``; the tile (MR, nv) is one of
    ``WIDE`` / ``SHORT`` / ``NARROW`` (``tile_shape``).
    """
    ntask = out.shape[0] * wpk.shape[0] * (qv.shape[0] // nv)
    _tiles(src_all, offs, wpk, biasp, out, qv, dv, lanes, nv, 0, ntask)


@njit(parallel=True, **JIT)
def conv_tiles_parallel(src_all, offs, wpk, biasp, out, qv, dv, lanes, nv, parts):
    """``conv_tiles_serial`` with the tasks cut into ``parts`` contiguous parts over threads."""
    ntask = out.shape[0] * wpk.shape[0] * (qv.shape[0] // nv)
    for part in prange(parts):
        _tiles(src_all, offs, wpk, biasp, out, qv, dv, lanes, nv, part * ntask // parts,
               (part + 1) * ntask // parts)  # fmt: skip


@functools.lru_cache(maxsize=256)
def slots(oh: int, ow: int, wrow: int, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The vector slots of one output plane, padded to whole tiles: per slot its start on the
    source grid (row oh at ``oh * wrow``), its start in the [OH, OW] plane, and its valid
    lanes (a row's last slot may be partial; padding slots have none). Kept per shape (a layer
    asks every step; the kernels only read them)."""
    per_row = -(-ow // LANES)
    col = np.arange(per_row) * LANES
    q = (np.arange(oh)[:, None] * wrow + col).reshape(-1)
    d = (np.arange(oh)[:, None] * ow + col).reshape(-1)
    n = np.broadcast_to(np.minimum(ow - col, LANES), (oh, per_row)).reshape(-1)
    pad = -len(q) % nv
    z = np.zeros(pad, np.int64)
    return (np.concatenate([q, z]).astype(np.int64), np.concatenate([d, z]).astype(np.int64),
            np.concatenate([n, z]).astype(np.int64))  # fmt: skip


@njit(**JIT)
def _pack_into(w3, bias, wpk, bpk):
    # wpk [G, nkb, R * MR] and bpk [G, nkb, MR] filled from w3 [G, Kg, R] and bias [G * Kg]
    groups, kg, r = w3.shape
    nkb, mr = bpk.shape[1], bpk.shape[2]
    for g in range(groups):
        for kb in range(nkb):
            dst = wpk[g, kb]
            for i in range(mr):
                k = kb * mr + i
                if k < kg:
                    bpk[g, kb, i] = bias[g * kg + k]
                    src = w3[g, k]
                    for q in range(r):
                        dst[q * mr + i] = src[q]
                else:
                    bpk[g, kb, i] = 0
                    for q in range(r):
                        dst[q * mr + i] = 0


def pack(w3: np.ndarray, bias: np.ndarray, MR: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    """w3 [G, Kg, R] as [G, ceil(Kg / MR), R * MR]: per block of MR channels, the MR weights of
    each position r side by side (zeros past Kg), the order the micro-kernel broadcasts them;
    and bias [G * Kg] as [G, ceil(Kg / MR), MR] (float32, both C-contiguous). One kernel call:
    NumPy's two zero fills, two slice copies and a transposing copy took 3-4 us a conv (three
    a training step of the digits CNN), more than the kernel's loop over a few thousand floats."""
    groups, kg, r = w3.shape
    nkb = (kg + MR - 1) // MR
    wpk = np.empty((groups, nkb, r * MR), np.float32)
    bpk = np.empty((groups, nkb, MR), np.float32)
    _pack_into(np.ascontiguousarray(w3, np.float32), np.ascontiguousarray(bias, np.float32).reshape(-1), wpk, bpk)
    return wpk, bpk
