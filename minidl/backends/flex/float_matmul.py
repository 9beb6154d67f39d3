"""Flex's ``float_matmul``: batched, with broadcast batch dims, on the packed numba gemm
(burn-flex's ``float_matmul``; kernel: :mod:`minidl.backends.flex.kernels.gemm`).

No BLAS: ``np.matmul``/``@`` would run OpenBLAS, whose thread pool fights numba's on a 2-core
machine (DESIGN §7). Three shapes of call:

- the right side has no batch (a ``Linear`` weight): every batch row of the left side is one
  row of a single 2-D gemm, ``[batch*m, k] @ [k, n]`` — one kernel call, and a transposed
  weight (``linear_x_backward``) is read in place, not copied;
- both sides carry the same batch: one ``batched_matmul`` call;
- batch dims broadcast: the broadcast operand is materialized by the copy kernel first.
"""

from __future__ import annotations

import numpy as np

from minidl.backends.flex.kernels import gemm
from minidl.backends.flex.kernels.copy import cast, contiguous, copy_into


def _batched(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``x`` [..., r, c] broadcast to ``batch + (r, c)`` as a 3-D array [prod(batch), r, c]."""
    r, c = x.shape[-2:]
    nb = int(np.prod(batch, dtype=np.int64))
    if x.shape[:-2] == batch:
        if x.ndim == 3:
            return x  # the gemm wrapper keeps a transposed (F-ordered) rhs as it is
        try:
            return np.reshape(x, (nb, r, c), copy=False)
        except ValueError:
            return contiguous(x).reshape(nb, r, c)
    out = np.empty(batch + (r, c), x.dtype)
    copy_into(x, out)
    return out.reshape(nb, r, c)


def _rhs(b: np.ndarray) -> np.ndarray:
    # The gemm reads B transposed: a C-ordered B is packed by a numba kernel, a transposed view
    # is used as it is; any other layout is made contiguous here by the copy kernel.
    if b.flags.c_contiguous or b.swapaxes(-1, -2).flags.c_contiguous:
        return b
    return contiguous(b)


def matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``lhs @ rhs`` over the last two dims, batch dims broadcast (NumPy's rules), lhs's dtype."""
    if lhs.ndim < 2 or rhs.ndim < 2:
        raise ValueError(f"float_matmul: expected rank >= 2, found {lhs.shape} @ {rhs.shape}")
    m, k = lhs.shape[-2:]
    if rhs.shape[-2] != k:
        raise ValueError(f"float_matmul: inner dims differ: {lhs.shape} @ {rhs.shape}")
    if rhs.dtype != lhs.dtype:
        rhs = cast(rhs, lhs.dtype)
    n = rhs.shape[-1]
    batch = tuple(np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2]))
    if all(b == 1 for b in rhs.shape[:-2]) and lhs.shape[:-2] == batch:
        rows = int(np.prod(batch, dtype=np.int64)) * m
        try:
            a2 = np.reshape(lhs, (rows, k), copy=False)
        except ValueError:
            a2 = contiguous(lhs).reshape(rows, k)
        out = gemm.matmul(contiguous(a2), _rhs(rhs.reshape(k, n)))
    else:
        a3 = contiguous(_batched(lhs, batch))
        out = gemm.batched_matmul(a3, _rhs(_batched(rhs, batch)))
    return out.reshape(batch + (m, n))
