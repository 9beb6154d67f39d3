"""burn-nn: the layers. Each is an ``XxxConfig`` (a ``@config``) whose ``init`` builds the
``Xxx`` module; ``forward`` checks shapes and calls one functional op of
:mod:`minidl.tensor.module` (Dropout uses the tensor API, BatchNorm also updates its running
statistics)."""

from __future__ import annotations

from minidl.module import Initializer
from minidl.nn.activation import (
    Gelu,
    LeakyRelu,
    LeakyReluConfig,
    Relu,
    Sigmoid,
    Silu,
    Softmax,
    Softplus,
    SoftplusConfig,
    Tanh,
)
from minidl.nn.adaptive_avg_pool2d import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig
from minidl.nn.avg_pool2d import AvgPool2d, AvgPool2dConfig
from minidl.nn.batch_norm import BatchNorm, BatchNormConfig
from minidl.nn.conv1d import Conv1d, Conv1dConfig
from minidl.nn.conv2d import Conv2d, Conv2dConfig
from minidl.nn.conv_transpose2d import ConvTranspose2d, ConvTranspose2dConfig
from minidl.nn.dropout import Dropout, DropoutConfig
from minidl.nn.embedding import Embedding, EmbeddingConfig
from minidl.nn.layer_norm import LayerNorm, LayerNormConfig
from minidl.nn.linear import Linear, LinearConfig, LinearLayout
from minidl.nn.loss import CrossEntropyLoss, CrossEntropyLossConfig, MseLoss, NllLoss
from minidl.nn.max_pool2d import MaxPool2d, MaxPool2dConfig
from minidl.nn.padding import PaddingConfig1d, PaddingConfig2d
from minidl.nn.pool1d import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool1dConfig,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool1dConfig,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool2dConfig,
    AvgPool1d,
    AvgPool1dConfig,
    MaxPool1d,
    MaxPool1dConfig,
)
from minidl.nn.sequential import Sequential

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool1dConfig",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool2dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "BatchNorm",
    "BatchNormConfig",
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "Gelu",
    "Initializer",
    "LayerNorm",
    "LayerNormConfig",
    "LeakyRelu",
    "LeakyReluConfig",
    "Linear",
    "LinearConfig",
    "LinearLayout",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
    "MseLoss",
    "NllLoss",
    "PaddingConfig1d",
    "PaddingConfig2d",
    "Relu",
    "Sequential",
    "Sigmoid",
    "Silu",
    "Softmax",
    "Softplus",
    "SoftplusConfig",
    "Tanh",
]
