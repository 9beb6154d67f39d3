"""Softmax and log-softmax along one dimension, numerically stable.

Mirrors burn-flex's ``softmax`` / ``log_softmax`` (burn's activation defaults compute them from
``max_dim``, ``sub``, ``exp``, ``sum_dim``, ``div``/``log``; here each row is one kernel pass
set). The array is viewed as [outer, n, inner] with ``n`` the softmax dimension. For the last
dimension (``inner == 1``) each row is contiguous: max, then sum of ``exp(x - max)`` written
to the output, then one scaling pass. Otherwise the same three passes run over [n, inner]
slabs with the inner dimension as the vectorized loop. ``exp`` is :func:`.vmath.vexp` and the
row max :func:`.vmath.fmaximum`, so those loops vectorize too (libm's scalar exp and a scalar
compare-and-select max made them the cost: [128, 256] float32 110 -> 19 us, a [32, 64, 16, 16]
softmax over dim 1 1240 -> 335 us, 1 thread, AVX-512; AVX2 [128, 256] 142 -> 26).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._common import JIT_FAST, PARALLEL_MIN_ELEMS, compute_dtype
from .vmath import fmaximum, vexp


@njit(**JIT_FAST)
def _rows(x, out, log, lo, hi):
    # x, out [rows, n]: softmax of each row in lo..hi.
    n = x.shape[1]
    zero = np.zeros(1, out.dtype)[0]
    for i in range(lo, hi):
        row = x[i]
        orow = out[i]
        m = row[0]
        for j in range(n):
            m = fmaximum(m, row[j])  # a NaN propagates; vectorized, unlike a compare and select
        s = zero
        if log:
            for j in range(n):
                s += vexp(row[j] - m)
            shift = m + np.log(s)
            for j in range(n):
                orow[j] = row[j] - shift
        else:
            for j in range(n):
                e = vexp(row[j] - m)
                orow[j] = e
                s += e
            r = (zero + 1) / s  # typed 1: ``1 / s`` would be float64
            for j in range(n):
                orow[j] *= r


@njit(**JIT_FAST)
def _slab(x, out, log, o, acc):
    # x, out [outer, n, inner]: softmax over axis 1 of slab o; acc [2, inner] scratch.
    n, inner = x.shape[1], x.shape[2]
    mx = acc[0]
    sm = acc[1]
    one = np.ones(1, out.dtype)[0]
    first = x[o, 0]
    for k in range(inner):
        mx[k] = first[k]
        sm[k] = 0
    for a in range(n):
        r = x[o, a]
        for k in range(inner):
            v = r[k]
            mx[k] = v if (v > mx[k] or v != v) else mx[k]
    for a in range(n):
        r = x[o, a]
        orow = out[o, a]
        for k in range(inner):
            e = vexp(r[k] - mx[k])
            orow[k] = e
            sm[k] += e
    for k in range(inner):
        sm[k] = (mx[k] + np.log(sm[k])) if log else one / sm[k]
    for a in range(n):
        r = x[o, a]
        orow = out[o, a]
        for k in range(inner):
            orow[k] = (r[k] - sm[k]) if log else orow[k] * sm[k]


@njit(**JIT_FAST)
def softmax_serial(x, out, log):
    """Softmax (``log=False``) or log-softmax over axis 1 of x [outer, n, inner]."""
    if x.shape[2] == 1:
        # a reshape, not x[:, :, 0]: that view is typed non-contiguous and its row loops
        # then stay scalar (softmax [128, 256] f32, 1 thread: 136 us against 49 with the reshape)
        outer, n = x.shape[0], x.shape[1]
        _rows(x.reshape(outer, n), out.reshape(outer, n), log, 0, outer)
    else:
        acc = np.empty((2, x.shape[2]), out.dtype)
        for o in range(x.shape[0]):
            _slab(x, out, log, o, acc)


@njit(parallel=True, **JIT_FAST)
def softmax_parallel(x, out, log):
    """``softmax_serial`` with rows (or slabs) spread over threads."""
    outer = x.shape[0]
    if x.shape[2] == 1:
        x2 = x.reshape(outer, x.shape[1])
        o2 = out.reshape(outer, x.shape[1])
        blk = max(1, 16384 // max(1, x.shape[1]))
        for t in prange((outer + blk - 1) // blk):
            _rows(x2, o2, log, t * blk, min(t * blk + blk, outer))
    else:
        for o in prange(outer):
            acc = np.empty((2, x.shape[2]), out.dtype)
            _slab(x, out, log, o, acc)


def _run(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    if x.ndim == 0:
        x = x.reshape(1)
        return _run(x, 0, log).reshape(())
    dim = dim % x.ndim
    shape = x.shape
    cdt = compute_dtype(x.dtype)
    if cdt.kind != "f":
        cdt = np.dtype(np.float32)
    outer = math.prod(shape[:dim])
    inner = math.prod(shape[dim + 1 :])
    x3 = np.ascontiguousarray(x, dtype=cdt).reshape(outer, shape[dim], inner)
    out = np.empty(x3.shape, cdt)
    if out.size:
        kernel = softmax_parallel if out.size >= PARALLEL_MIN_ELEMS else softmax_serial
        kernel(x3, out, log)
    dt = x.dtype if x.dtype.kind == "f" else cdt
    return out.reshape(shape).astype(dt, copy=False)


def softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``; float16 computed in float32."""
    return _run(x, dim, False)


def log_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    """``x - max - log(sum(exp(x - max)))`` along ``dim``; float16 computed in float32."""
    return _run(x, dim, True)
