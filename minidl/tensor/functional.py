"""Every functional op in one namespace, like ``torch.nn.functional``: the layer ops of
:mod:`minidl.tensor.module`, the activations and the losses. ``minidl.functional`` is this module.
"""

from __future__ import annotations

from minidl.tensor.activation import gelu, leaky_relu, log_softmax, relu, sigmoid, softmax, tanh
from minidl.tensor.loss import cross_entropy, mse
from minidl.tensor.module import (
    adaptive_avg_pool2d,
    attention,
    avg_pool2d,
    batch_norm,
    batch_norm_train,
    conv1d,
    conv2d,
    conv_transpose2d,
    embedding,
    interpolate,
    layer_norm,
    layer_norm_impl,
    linear,
    linear_impl,
    max_pool2d,
    max_pool2d_with_indices,
)

__all__ = [
    "adaptive_avg_pool2d",
    "attention",
    "avg_pool2d",
    "batch_norm",
    "batch_norm_train",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "cross_entropy",
    "embedding",
    "gelu",
    "interpolate",
    "layer_norm",
    "layer_norm_impl",
    "leaky_relu",
    "linear",
    "linear_impl",
    "log_softmax",
    "max_pool2d",
    "max_pool2d_with_indices",
    "mse",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
]
