"""Loss functions on Tensors (burn-nn's ``loss`` module, written functionally).

Both reduce to a shape-``[1]`` tensor (burn's whole-tensor reductions), composed from Tensor
ops, so on an autodiff device each step is recorded and ``loss.backward()`` works.
"""

from __future__ import annotations

from minidl.backend.dtype import Kind
from minidl.tensor.activation import log_softmax
from minidl.tensor.check import fail, fmt_shape
from minidl.tensor.module_args import float_arg
from minidl.tensor.tensor import Tensor

_REDUCTIONS = ("mean", "sum")


def cross_entropy(logits: Tensor, targets: Tensor, reduction: str = "mean") -> Tensor:
    """Cross entropy of ``logits`` ``[batch, classes]`` against Int class indices ``targets``
    ``[batch]``: ``-log_softmax(logits)[i, targets[i]]``, averaged (or summed) over the batch —
    torch's ``F.cross_entropy`` with class indices, built from log_softmax + gather."""
    float_arg("cross_entropy", logits, "logits")
    if logits.rank != 2:
        fail("cross_entropy", "Argument logits must have 2 dims [batch, classes].",
             f"Found shape {fmt_shape(logits.shape)}.")
    if not isinstance(targets, Tensor) or targets.kind is not Kind.INT:
        found = targets._describe() if isinstance(targets, Tensor) else type(targets).__name__
        fail("cross_entropy", "Argument targets must be an Int tensor of class indices.", f"Found {found}.",
             kind=True)
    batch, classes = logits.shape
    if targets.shape != (batch,):
        fail("cross_entropy", "Argument targets must have shape [batch] (one class index per row of logits).",
             f"Expected [{batch}], found {fmt_shape(targets.shape)}.")
    if reduction not in _REDUCTIONS:
        fail("cross_entropy", "Argument reduction must be 'mean' or 'sum'.", f"Found {reduction!r}.")
    if batch and (targets.lower_elem(0).any().into_scalar() or targets.greater_equal_elem(classes).any().into_scalar()):
        fail("cross_entropy", "Every target must be a class index in [0, classes).",
             f"Expected 0 <= targets < {classes}, found min {targets.min().into_scalar()}, "
             f"max {targets.max().into_scalar()}.")
    picked = log_softmax(logits, 1).gather(1, targets.reshape((batch, 1)))
    total = picked.sum() if reduction == "sum" else picked.mean()
    return total.neg()


def mse(prediction: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean (or summed) squared error; the two shapes must be equal (no silent broadcasting)."""
    float_arg("mse", prediction, "prediction")
    float_arg("mse", target, "target")
    if prediction.shape != target.shape:
        fail("mse", "Arguments prediction and target must have the same shape.",
             f"Found prediction {fmt_shape(prediction.shape)}, target {fmt_shape(target.shape)}.")
    if reduction not in _REDUCTIONS:
        fail("mse", "Argument reduction must be 'mean' or 'sum'.", f"Found {reduction!r}.")
    diff = prediction.sub(target)
    squared = diff.mul(diff)
    return squared.sum() if reduction == "sum" else squared.mean()
