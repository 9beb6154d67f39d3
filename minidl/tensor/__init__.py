"""burn-tensor: the ``Tensor`` users hold, its checks, and the functional ops.

- :class:`Tensor` (``tensor.py``, built from the op mixins in this package);
- :mod:`~minidl.tensor.check`: ``TensorCheck`` and ``assert_shape`` (burn's ``assert_shape!``);
- :mod:`~minidl.tensor.module`: functional layer ops (burn-tensor's ``module.rs``: ``linear``,
  ``conv2d``, ``layer_norm``, ...), :mod:`~minidl.tensor.activation` and :mod:`~minidl.tensor.loss`;
  :mod:`~minidl.tensor.functional` gathers the three, like ``torch.nn.functional``.
"""

from __future__ import annotations

from minidl.backend.distribution import Distribution
from minidl.backend.dtype import DType, Kind
from minidl.tensor import activation, functional, loss, module
from minidl.tensor.check import (
    TensorCheck,
    TensorCheckError,
    TensorKindError,
    assert_shape,
)
from minidl.tensor.tensor import Tensor

__all__ = [
    "DType",
    "Distribution",
    "Kind",
    "Tensor",
    "TensorCheck",
    "TensorCheckError",
    "TensorKindError",
    "activation",
    "assert_shape",
    "functional",
    "loss",
    "module",
]
