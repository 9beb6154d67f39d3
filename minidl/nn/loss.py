"""Losses as modules (burn-nn ``loss/``): ``CrossEntropyLoss`` (logits and class indices,
optional class weights and label smoothing), ``NllLoss`` (torch's) and ``MseLoss``. Each ``forward`` is one call to :mod:`minidl.tensor.loss`."""

from __future__ import annotations

from minidl.module import Module, config
from minidl.module.config import interval, non_negative, one_of
from minidl.tensor import Tensor
from minidl.tensor import loss as loss_ops

_REDUCTIONS = ("mean", "sum")


@config
class CrossEntropyLossConfig:
    """Config of :class:`CrossEntropyLoss`: ``reduction`` is ``"mean"`` (burn's only one) or
    ``"sum"``; ``weights`` (one per class, burn's field, torch's ``weight``) and ``smoothing``
    (in ``[0, 1]``, burn's field, torch's ``label_smoothing``) are off by default."""

    field_rules = {"reduction": one_of("mean", "sum"), "weights": non_negative, "smoothing": interval(0, 1)}

    reduction: str = "mean"
    weights: tuple[float, ...] | None = None
    smoothing: float | None = None

    def init(self) -> CrossEntropyLoss:
        """The loss (no params)."""
        s = self.smoothing
        weights = None if self.weights is None else tuple(float(w) for w in self.weights)
        return CrossEntropyLoss(self.reduction, weights, None if s is None else float(s))


class CrossEntropyLoss(Module):
    """Cross entropy of logits ``[batch, classes]`` against Int targets ``[batch]`` — PyTorch's
    ``nn.CrossEntropyLoss(weight, label_smoothing)`` with class indices (burn's
    ``CrossEntropyLoss`` with ``logits = true``). Returns a ``[1]`` tensor."""

    def __init__(self, reduction: str = "mean", weights: tuple[float, ...] | None = None,
                 smoothing: float | None = None):
        self.reduction = reduction
        self.weights = weights
        self.smoothing = smoothing

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        """The loss, shape ``[1]``."""
        return loss_ops.cross_entropy(logits, targets, self.reduction, self.weights, self.smoothing)


class NllLoss(Module):
    """Negative log-likelihood of log-probabilities ``[batch, classes]`` at Int targets
    ``[batch]`` (torch's ``nn.NLLLoss``; burn has none). Returns a ``[1]`` tensor."""

    def __init__(self, reduction: str = "mean", weights: tuple[float, ...] | None = None):
        self.reduction = reduction
        self.weights = weights

    def forward(self, log_probs: Tensor, targets: Tensor) -> Tensor:
        """The loss, shape ``[1]``."""
        return loss_ops.nll_loss(log_probs, targets, self.reduction, self.weights)


class MseLoss(Module):
    """Mean squared error (burn's ``MseLoss``); ``reduction`` is ``"mean"`` or ``"sum"``."""

    def forward(self, prediction: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
        """The loss, shape ``[1]``; the two shapes must match."""
        return loss_ops.mse(prediction, target, reduction)
