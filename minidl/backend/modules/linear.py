"""The default ``linear``: matmul + add, generic over the backend ``B`` (burn's ``modules/linear.rs``
at v0.22.0-pre.2, including its matmul transform policy).

``y = x @ weight (+ bias)`` with ``weight`` shaped ``[d_input, d_output]`` — the transpose of
PyTorch's ``nn.Linear.weight``. Nothing here is fused: each step is a separate op of ``B``,
so on ``B = Dispatch`` each one is routed (and, on an autodiff device, recorded) on its own.
"""

from __future__ import annotations

import numpy as np

from minidl.backend.modules.matmul_policy import MergeBatches, matmul_transform


def linear(B, x, weight, bias=None):
    """``x @ weight + bias``, burn's default body. The matmul transform policy
    (burn_std's ``MatmulTransformPolicy``, :mod:`.matmul_policy`) picks a branch:

    - ``MergeBatches(rows)``: reshape ``x`` to ``[rows, d_in]``, matmul, reshape
      the bias to ``[1, d_out]``, add, reshape back to ``[..., d_out]``.
    - ``Keep``: reshape the weight and the bias with leading 1s up to ``x``'s
      rank (none when the rank matches), matmul, add. A 2-D ``x`` runs
      matmul, reshape (of the bias), add.
    """
    shape = tuple(x.shape)
    ndims = len(shape)
    action = matmul_transform(shape, weight.shape)
    if isinstance(action, MergeBatches):
        d_in, d_out = shape[-1], weight.shape[1]
        out = B.float_matmul(B.float_reshape(x, (action.rows, d_in)), weight)
        if bias is not None:
            out = B.float_add(out, B.float_reshape(bias, (1, d_out)))
        return B.float_reshape(out, shape[:-1] + (d_out,))
    out = B.float_matmul(x, _unsqueeze_leading(B, weight, ndims))
    if bias is None:
        return out
    return B.float_add(out, _unsqueeze_leading(B, bias, ndims))


def _unsqueeze_leading(B, tensor, target_ndims):
    """Prepend size-1 dims up to ``target_ndims`` (burn's ``unsqueeze_leading``)."""
    shape = tuple(tensor.shape)
    if len(shape) >= target_ndims:
        return tensor
    return B.float_reshape(tensor, (1,) * (target_ndims - len(shape)) + shape)


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
