"""Adam's update of one parameter as one pass over its elements (torch's ``Adam(fused=True)``).

burn has no fused optimizer kernel: burn-optim's Adam (``adam.rs``) is tensor ops, and so is
minidl's (:func:`minidl.optim.adam.adaptive_update`, fourteen ops per parameter). On the
training chapter's CNN (12 small parameters) those ops cost more Python than arithmetic, so
Flex offers the whole rule as one kernel, :func:`adam_step`, that the optimizer calls when
the parameter lives on Flex (a **speed trick**, ``minidl/optim/fused.py``). It computes what
the tensor ops compute, in the same order and in the parameter's dtype:

    m1 = m1 * b1 + g * (1 - b1);   m2 = m2 * b2 + g * g * (1 - b2)
    new = p - (m1 / c1) / (sqrt(m2 / c2) + eps) * lr        (c1 = 1 - b1^t, c2 = 1 - b2^t)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._common import JIT_EW

CHUNK = 256  # elements per pass of adam_kernel (3 local buffers of 1 KiB in float32)


@njit(**JIT_EW)
def adam_kernel(param, grad, m1, m2, new_param, new_m1, new_m2, scalars, first):
    """The Adam update over flat arrays of one dtype. ``scalars`` holds, in that dtype, ``lr``,
    ``b1``, ``b2``, ``1 - b1``, ``1 - b2`` (each rounded once, as the tensor ops' scalars are),
    ``eps`` and the corrections ``c1``, ``c2`` (one array: numba reads an array's type at
    once, where each NumPy scalar argument costs microseconds); ``first`` ignores
    ``m1``/``m2`` (zero moments: the first step's ``g * (1 - b1)``)."""
    lr, b1, b2, d1, d2, eps, c1, c2 = (scalars[0], scalars[1], scalars[2], scalars[3], scalars[4],
                                       scalars[5], scalars[6], scalars[7])
    # Chunks computed into local buffers, then stored: an output may be its own input (a
    # captured step updates in place), and LLVM's vector loop checks that inputs and outputs
    # do not overlap, running its scalar loop when they do (4x slower, one AVX-512 core).
    n = param.shape[0]
    ta, tb, tp = np.empty(CHUNK, new_m1.dtype), np.empty(CHUNK, new_m1.dtype), np.empty(CHUNK, new_m1.dtype)
    for i0 in range(0, n, CHUNK):
        m = min(CHUNK, n - i0)
        gs, ps = grad[i0 : i0 + m], param[i0 : i0 + m]
        if first:
            for j in range(m):
                g = gs[j]
                a = g * d1
                b = g * g * d2
                ta[j] = a
                tb[j] = b
                tp[j] = ps[j] - (a / c1) / (np.sqrt(b / c2) + eps) * lr
        else:
            m1s, m2s = m1[i0 : i0 + m], m2[i0 : i0 + m]
            for j in range(m):
                g = gs[j]
                a = m1s[j] * b1 + g * d1
                b = m2s[j] * b2 + g * g * d2
                ta[j] = a
                tb[j] = b
                tp[j] = ps[j] - (a / c1) / (np.sqrt(b / c2) + eps) * lr
        o1, o2, op = new_m1[i0 : i0 + m], new_m2[i0 : i0 + m], new_param[i0 : i0 + m]
        for j in range(m):
            o1[j] = ta[j]
            o2[j] = tb[j]
            op[j] = tp[j]


def adam_step(param: np.ndarray, grad: np.ndarray, moment_1: np.ndarray | None,
              moment_2: np.ndarray | None, lr: float, beta_1: float, beta_2: float,
              epsilon: float, correction_1: float, correction_2: float, outs: tuple | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(new param, new moment_1, new moment_2)`` of one Adam step (moments ``None`` at the
    first step), new C-contiguous arrays of ``param``'s shape and dtype (float32 or float64;
    the other arrays are read in that dtype). The corrections are ``1 - beta ** t``.

    ``outs``: per result, a C-contiguous array of ``param``'s shape and dtype to write it into
    instead (``None``: a new one); it may be that result's own input (``param`` for the new
    parameter, a moment for its new value), which the kernel reads at element i before writing
    element i: a captured step updates its carried state in place."""
    dtype = param.dtype
    p, g = np.ascontiguousarray(param).reshape(-1), np.ascontiguousarray(grad, dtype).reshape(-1)
    first = moment_1 is None
    m1 = m2 = p  # never read at the first step
    if not first:
        m1 = np.ascontiguousarray(moment_1, dtype).reshape(-1)
        m2 = np.ascontiguousarray(moment_2, dtype).reshape(-1)
    outs = outs or (None, None, None)
    new, new_m1, new_m2 = (np.empty(param.shape, dtype) if o is None else _out(o, param) for o in outs)
    scalars = np.array([float(lr), float(beta_1), float(beta_2), 1.0 - float(beta_1), 1.0 - float(beta_2),
                        float(epsilon), float(correction_1), float(correction_2)], dtype)
    adam_kernel(p, g, m1, m2, new.reshape(-1), new_m1.reshape(-1), new_m2.reshape(-1), scalars, first)
    return new, new_m1, new_m2


def _out(out: np.ndarray, param: np.ndarray) -> np.ndarray:
    if out.shape != param.shape or out.dtype != param.dtype or not out.flags.c_contiguous:
        raise ValueError(f"adam_step: an output buffer must be C-contiguous {param.dtype} of shape "
                         f"{param.shape}, found {out.dtype} {out.shape}")
    return out
