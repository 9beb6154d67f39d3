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
def adam_kernel(param, grad, m1, m2, new_param, new_m1, new_m2, lr, b1, b2, eps, c1, c2, first):
    """The Adam update over C-contiguous arrays of one dtype and size (any rank: read flat).
    The scalars come as Python floats and are rounded to that dtype here, each once, as the
    tensor ops' scalars are (``1 - b1``, ``1 - b2`` taken in float64 first): Python floats
    are the cheapest arguments numba reads, where an array of them cost a NumPy call per step
    and each NumPy scalar argument microseconds. ``first`` ignores ``m1``/``m2`` (zero
    moments: the first step's ``g * (1 - b1)``)."""
    dt = np.empty(8, new_m1.dtype)  # each scalar stored in the dtype: the same rounding as NumPy's
    dt[0], dt[1], dt[2], dt[3], dt[4], dt[5], dt[6], dt[7] = lr, b1, b2, 1.0 - b1, 1.0 - b2, eps, c1, c2
    lr, b1, b2, d1, d2, eps, c1, c2 = dt[0], dt[1], dt[2], dt[3], dt[4], dt[5], dt[6], dt[7]
    param, grad, m1, m2 = param.ravel(), grad.ravel(), m1.ravel(), m2.ravel()  # views: C layout
    new_param, new_m1, new_m2 = new_param.ravel(), new_m1.ravel(), new_m2.ravel()
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
    element i: a captured step updates its carried state in place.

    Called once per parameter and step (12 times in the training chapter's CNN step), so the
    arrays go to the kernel as they are when they already are C-contiguous in ``param``'s
    dtype (the usual case), and the kernel reads them flat itself (a ``reshape`` each cost
    more than the update of a bias)."""
    dtype = param.dtype
    p, g = _operand(param, dtype), _operand(grad, dtype)
    first = moment_1 is None
    m1 = m2 = p  # never read at the first step
    if not first:
        m1, m2 = _operand(moment_1, dtype), _operand(moment_2, dtype)
    shape = param.shape
    if outs is None:
        new, new_m1, new_m2 = np.empty(shape, dtype), np.empty(shape, dtype), np.empty(shape, dtype)
    else:
        new, new_m1, new_m2 = (np.empty(shape, dtype) if o is None else _out(o, param) for o in outs)
    adam_kernel(p, g, m1, m2, new, new_m1, new_m2, float(lr), float(beta_1), float(beta_2),
                float(epsilon), float(correction_1), float(correction_2), first)
    return new, new_m1, new_m2


def _operand(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` C-contiguous in ``dtype``: itself when it already is (no call into NumPy)."""
    if x.dtype is dtype and x.flags.c_contiguous:
        return x
    return np.ascontiguousarray(x, dtype)


def _out(out: np.ndarray, param: np.ndarray) -> np.ndarray:
    if out.shape != param.shape or out.dtype != param.dtype or not out.flags.c_contiguous:
        raise ValueError(f"adam_step: an output buffer must be C-contiguous {param.dtype} of shape "
                         f"{param.shape}, found {out.dtype} {out.shape}")
    return out
