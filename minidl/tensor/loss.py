"""Loss functions on Tensors (burn-nn's ``loss`` module, written functionally).

Each reduces to a shape-``[1]`` tensor (burn's whole-tensor reductions), composed from Tensor
ops, so on an autodiff device each step is recorded and ``loss.backward()`` works.
"""

from __future__ import annotations

import numpy as np

from minidl.backend.dtype import Kind
from minidl.tensor.activation import log_softmax
from minidl.tensor.check import fail, fmt_shape
from minidl.tensor.module_args import float_arg
from minidl.tensor.tensor import Tensor

_REDUCTIONS = ("mean", "sum")


def _targets(ops: str, targets, batch: int, classes: int) -> None:
    if not isinstance(targets, Tensor) or targets.kind is not Kind.INT:
        found = targets._describe() if isinstance(targets, Tensor) else type(targets).__name__
        fail(ops, "Argument targets must be an Int tensor of class indices.", f"Found {found}.", kind=True)
    if targets.shape != (batch,):
        fail(ops, "Argument targets must have shape [batch] (one class index per row of the input).",
             f"Expected [{batch}], found {fmt_shape(targets.shape)}.")
    if batch:
        # read on the host once: the labels come from the data, and two compares, two any()
        # and two reads back cost five times as much on every training step
        labels = targets.to_numpy()
        # one pass: as unsigned, a negative label is larger than any class count
        if int(labels.view(f"u{labels.itemsize}").max()) >= classes:
            low, high = int(labels.min()), int(labels.max())
            fail(ops, "Every target must be a class index in [0, classes).",
                 f"Expected 0 <= targets < {classes}, found min {low}, max {high}.")


def _scores(ops: str, scores, name: str) -> tuple[int, int]:
    float_arg(ops, scores, name)
    if scores.rank != 2:
        fail(ops, f"Argument {name} must have 2 dims [batch, classes].", f"Found shape {fmt_shape(scores.shape)}.")
    return scores.shape


def _weights(ops: str, weights, like: Tensor, classes: int) -> Tensor | None:
    """``weights`` as a Float tensor ``[classes]`` on ``like``'s device, checked: finite, >= 0."""
    if weights is None:
        return None
    if isinstance(weights, Tensor):
        float_arg(ops, weights, "weights")
        values = weights.into_data().array
    else:
        try:
            values = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError):
            fail(ops, "Argument weights must be a Float tensor or a sequence of numbers, one per class.",
                 f"Found {weights!r}.", kind=True)
        if values.dtype.kind not in "fiu" or any(isinstance(w, bool) for w in np.ravel(np.asarray(weights, object))):
            fail(ops, "Argument weights must hold numbers.", f"Found {weights!r}.", kind=True)
    if values.shape != (classes,):
        fail(ops, "Argument weights must have one weight per class.",
             f"Expected shape [{classes}], found {fmt_shape(values.shape)}.")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        fail(ops, "Every class weight must be finite and >= 0.", f"Found {values.tolist()}.")
    if isinstance(weights, Tensor):
        return weights.to_device(like.device) if weights.device != like.device else weights
    return Tensor.from_data(values.astype(like.dtype.numpy), like.device)


def _reduction(ops: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        fail(ops, "Argument reduction must be 'mean' or 'sum'.", f"Found {reduction!r}.")


def _nll(log_probs: Tensor, targets: Tensor, reduction: str, weights: Tensor | None) -> Tensor:
    """torch's ``nll_loss``: ``-w[t_i] * log_probs[i, t_i]``, summed, or divided by ``sum w[t_i]``
    (the batch size without weights) for ``"mean"``."""
    batch = log_probs.shape[0]
    index = targets.reshape((batch, 1))
    picked = log_probs.gather(1, index)
    if weights is None:
        total = picked.sum() if reduction == "sum" else picked.mean()
        return total.neg()
    w = weights.select(0, targets).reshape((batch, 1))
    total = picked.mul(w).sum().neg()
    return total if reduction == "sum" else total.div(w.sum())


def nll_loss(log_probs: Tensor, targets: Tensor, reduction: str = "mean", weights=None) -> Tensor:
    """Negative log-likelihood of ``log_probs`` ``[batch, classes]`` (log-probabilities, e.g. a
    ``log_softmax``) at the Int class indices ``targets`` ``[batch]`` — torch's ``F.nll_loss``
    (burn has no separate one). ``weights`` (one per class, torch's ``weight``) scale each
    row's term, and ``"mean"`` then divides by the summed weights of the targets, as torch."""
    batch, classes = _scores("nll_loss", log_probs, "log_probs")
    _targets("nll_loss", targets, batch, classes)
    _reduction("nll_loss", reduction)
    return _nll(log_probs, targets, reduction, _weights("nll_loss", weights, log_probs, classes))


def cross_entropy(logits: Tensor, targets: Tensor, reduction: str = "mean", weights=None,
                  smoothing: float | None = None) -> Tensor:
    """Cross entropy of ``logits`` ``[batch, classes]`` against Int class indices ``targets``
    ``[batch]``: ``-log_softmax(logits)[i, targets[i]]``, averaged (or summed) over the batch —
    torch's ``F.cross_entropy`` with class indices, built from log_softmax + gather.

    ``weights`` (burn's name; torch's ``weight``): one weight per class, as :func:`nll_loss`.
    ``smoothing`` (burn's name; torch's ``label_smoothing``) in ``[0, 1]``: the target puts
    ``1 - smoothing`` on the class and spreads ``smoothing`` evenly over all classes; torch's
    formula, ``(1 - ε) · nll + ε / C · Σ_c -w_c · log p_c`` (the sum normalised like the nll)."""
    batch, classes = _scores("cross_entropy", logits, "logits")
    _targets("cross_entropy", targets, batch, classes)
    _reduction("cross_entropy", reduction)
    w = _weights("cross_entropy", weights, logits, classes)
    eps = 0.0 if smoothing is None else smoothing
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0.0 <= eps <= 1.0:
        fail("cross_entropy", "Argument smoothing must be a number in [0, 1].", f"Found {smoothing!r}.",
             kind=isinstance(eps, bool) or not isinstance(eps, int | float))
    log_probs = log_softmax(logits, 1)
    nll = _nll(log_probs, targets, reduction, w)
    if eps == 0.0:
        return nll
    per_class = log_probs if w is None else log_probs.mul(w.reshape((1, classes)))
    smooth = per_class.sum().neg()
    if reduction == "mean":
        smooth = smooth.div_scalar(float(batch)) if w is None else \
            smooth.div(w.select(0, targets).sum())
    return nll.mul_scalar(1.0 - eps).add(smooth.mul_scalar(eps / classes))


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
