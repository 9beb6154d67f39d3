"""The default ``linear``: matmul + add, generic over the backend ``B`` (burn's ``modules/linear.rs``).

``y = x @ weight (+ bias)`` with ``weight`` shaped ``[d_input, d_output]`` — the transpose of
PyTorch's ``nn.Linear.weight``. Nothing here is fused: each step is a separate op of ``B``,
so on ``B = Dispatch`` each one is routed (and, on an autodiff device, recorded) on its own.
"""

from __future__ import annotations

import numpy as np


def linear(B, x, weight, bias=None):
    """``x @ weight + bias`` built from ``B.float_matmul``, ``B.float_reshape`` and ``B.float_add``."""
    out = B.float_matmul(x, weight)
    if bias is not None:
        rank = len(out.shape)
        bias = B.float_reshape(bias, (1,) * (rank - 1) + (bias.shape[0],))
        out = B.float_add(out, bias)
    return out


def linear_x_backward(B, weight, output_grad):
    """d loss / d x = grad @ weightᵀ."""
    return B.float_matmul(output_grad, B.float_transpose(weight))


def linear_weight_backward(B, x, output_grad):
    """d loss / d weight = Σ_batch xᵀ @ grad, summed over every leading dim."""
    d_in, d_out = x.shape[-1], output_grad.shape[-1]
    rows = int(np.prod(x.shape[:-1]))
    x2 = B.float_reshape(x, (rows, d_in))
    g2 = B.float_reshape(output_grad, (rows, d_out))
    return B.float_matmul(B.float_transpose(x2), g2)


def linear_bias_backward(B, output_grad):
    """d loss / d bias = grad summed over every leading dim."""
    d_out = output_grad.shape[-1]
    g2 = B.float_reshape(output_grad, (int(np.prod(output_grad.shape[:-1])), d_out))
    return B.float_reshape(B.float_sum_dim(g2, 0), (d_out,))
