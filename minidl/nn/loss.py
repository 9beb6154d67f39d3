"""Losses as modules (burn-nn ``loss/``): ``CrossEntropyLoss`` (logits and class indices) and
``MseLoss``. Each ``forward`` is one call to :mod:`minidl.tensor.loss`."""

from __future__ import annotations

from minidl.module import Module, config
from minidl.tensor import Tensor
from minidl.tensor import loss as loss_ops

_REDUCTIONS = ("mean", "sum")


@config
class CrossEntropyLossConfig:
    """Config of :class:`CrossEntropyLoss`: ``reduction`` is ``"mean"`` (burn's only one) or
    ``"sum"``."""

    reduction: str = "mean"

    def init(self) -> CrossEntropyLoss:
        """The loss (no params)."""
        if self.reduction not in _REDUCTIONS:
            raise ValueError(f"CrossEntropyLossConfig: reduction must be 'mean' or 'sum', got {self.reduction!r}")
        return CrossEntropyLoss(self.reduction)


class CrossEntropyLoss(Module):
    """Cross entropy of logits ``[batch, classes]`` against Int targets ``[batch]`` — PyTorch's
    ``nn.CrossEntropyLoss()`` with class indices (burn's ``CrossEntropyLoss`` with
    ``logits = true``). Returns a ``[1]`` tensor."""

    def __init__(self, reduction: str = "mean"):
        self.reduction = reduction

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        """The loss, shape ``[1]``."""
        return loss_ops.cross_entropy(logits, targets, self.reduction)


class MseLoss(Module):
    """Mean squared error (burn's ``MseLoss``); ``reduction`` is ``"mean"`` or ``"sum"``."""

    def forward(self, prediction: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
        """The loss, shape ``[1]``; the two shapes must match."""
        return loss_ops.mse(prediction, target, reduction)
