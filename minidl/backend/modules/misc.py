"""Defaults for embedding, conv1d (through conv2d) and attention, generic over ``B``."""

from __future__ import annotations

import math

import numpy as np

from minidl.backend.options import ConvOptions


def embedding(B, weights, indices):
    """Rows of ``weights`` [n, d] picked by int ``indices`` of any shape → ``indices.shape + [d]``."""
    flat = B.int_reshape(indices, (int(np.prod(indices.shape)),))
    rows = B.float_select(weights, 0, flat)
    return B.float_reshape(rows, tuple(indices.shape) + (weights.shape[1],))


def embedding_backward(B, weights, output_grad, indices):
    """Gradient of ``embedding`` w.r.t. the weights: grads added into the picked rows."""
    n, d = weights.shape
    flat = B.int_reshape(indices, (int(np.prod(indices.shape)),))
    grad = B.float_reshape(output_grad, (int(np.prod(indices.shape)), d))
    zeros = B.float_zeros((n, d), _dtype(B, weights), B.float_device(weights))
    return B.float_select_assign(zeros, 0, flat, grad)


def _dtype(B, tensor):
    from minidl.backend.dtype import DType

    return DType.of(tensor.dtype)


def conv1d(B, x, weight, bias, stride: int, padding: int, dilation: int, groups: int,
           padding_end: int | None = None):
    """conv1d as a conv2d with a height of 1 (burn's default ``conv1d`` does the same)."""
    n, c, length = x.shape
    out_c, c_per_group, k = weight.shape
    x4 = B.float_reshape(x, (n, c, 1, length))
    w4 = B.float_reshape(weight, (out_c, c_per_group, 1, k))
    options = ConvOptions(
        stride=(1, stride), padding=(0, padding), dilation=(1, dilation), groups=groups,
        padding_end=(0, padding if padding_end is None else padding_end),
    )
    out = B.conv2d(x4, w4, bias, options)
    return B.float_reshape(out, (n, out_c, out.shape[-1]))


def attention(B, query, key, value, mask=None):
    """Scaled dot-product attention: softmax(q kᵀ / sqrt(d) + mask) v; ``mask`` (bool, true =
    masked out) is filled with -inf before the softmax."""
    d = query.shape[-1]
    scores = B.float_mul_scalar(B.float_matmul(query, B.float_transpose(key)), 1.0 / math.sqrt(d))
    if mask is not None:
        scores = B.float_mask_fill(scores, mask, -math.inf)
    weights = B.softmax(scores, len(scores.shape) - 1)
    return B.float_matmul(weights, value)
