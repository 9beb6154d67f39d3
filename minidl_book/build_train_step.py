"""Build exercise of the training chapter: one training step, checked against PyTorch.

The reader writes ``train_step(model, adam, images, targets) -> (model, loss)``: the
forward, the mean cross-entropy, ``backward()``, ``GradientsParams.from_grads`` and
``adam.step`` at the chapter's learning rate, returning the **new** model. The checker draws
the digits CNN (dropout 0) and its PyTorch twin from the same weights (``tr.twins``), runs
the reader's step and PyTorch's (``zero_grad``, ``backward``, ``step``, Adam with burn's
eps) over the same first batches, and compares each step's loss (relative gap) and every
weight after each step. Each planted slip gets its own reason: the old model returned
(``adam.step``'s result dropped), a fresh Adam in every step, a loss that is not one number
(backward of a non-scalar seeds every element with 1), the sum of the losses
differentiated instead of their mean (only Adam's eps sees the scale), no graph
(``model.valid()`` in the step).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.nn import CrossEntropyLossConfig
from minidl.optim import AdamConfig, GradientsParams
from minidl.tensor.activation import log_softmax
from minidl_book import training_run as tr
from minidl_book.harness import run_check
from minidl_book.verdict import Verdict
from minidl_book.workloads import DigitsCnnConfig

__all__ = ["LOSS_RTOL", "PLANTED", "WEIGHT_ATOL", "TrainStepExercise", "train_step"]

#: relative |loss gap| a step may have (the chapter's 5-epoch twin run stays within it)
LOSS_RTOL = 1e-5
#: largest |weight gap| after a few steps (float32 rounding)
WEIGHT_ATOL = 1e-5
#: not compared: BatchNorm cancels them, so their gradients are rounding noise and Adam
#: turns each framework's noise into its own steps (the chapter's drift section)
DRIFTING = ("conv1.bias", "conv2.bias")

loss_fn = CrossEntropyLossConfig().init()


def train_step(model, adam, images, targets):
    loss = loss_fn(model(images), targets)
    grads = GradientsParams.from_grads(loss.backward(), model)
    model = adam.step(3e-3, model, grads)  # a new model
    return model, loss


# ----- planted slips -------------------------------------------------------------------------
def old_model(model, adam, images, targets):
    """Steps, but returns the model it was given (the optimizer's result dropped)."""
    loss = loss_fn(model(images), targets)
    adam.step(3e-3, model, GradientsParams.from_grads(loss.backward(), model))
    return model, loss


def fresh_adam(model, adam, images, targets):
    """A new Adam in every step: zero moments, step count 1 each time."""
    loss = loss_fn(model(images), targets)
    grads = GradientsParams.from_grads(loss.backward(), model)
    return AdamConfig().init().step(3e-3, model, grads), loss


def per_example(model, adam, images, targets):
    """backward() of the 32 per-image losses (a non-scalar), and those returned."""
    log_p = log_softmax(model(images), 1)
    losses = -log_p.gather(1, targets.reshape([-1, 1]))  # one per image: [32, 1]
    grads = GradientsParams.from_grads(losses.backward(), model)
    return adam.step(3e-3, model, grads), losses


def summed(model, adam, images, targets):
    """The sum of the batch's losses differentiated, their mean reported."""
    loss = loss_fn(model(images), targets)
    grads = GradientsParams.from_grads((loss * float(images.shape[0])).backward(), model)
    return adam.step(3e-3, model, grads), loss


def no_graph(model, adam, images, targets):
    """The forward through ``valid()``: no graph, no gradient, nothing moves."""
    loss = loss_fn(model.valid()(images.inner()), targets.inner())
    return adam.step(3e-3, model, GradientsParams()), loss


#: name → (wrong step, a phrase its verdict must contain)
PLANTED = {
    "the old model returned": (old_model, "new model"),
    "a fresh Adam each step": (fresh_adam, "state"),
    "backward of a non-scalar": (per_example, "one number"),
    "the summed loss differentiated": (summed, "mean"),
    "no graph (valid())": (no_graph, "training mode"),
}


def _as_float(loss: Any) -> tuple[float | None, str]:
    """The loss as a Python float, or None and why not."""
    if isinstance(loss, Tensor):
        if int(np.prod(loss.shape)) != 1:
            return None, f"a tensor of shape {list(loss.shape)}"
        return float(loss.to_numpy().reshape(())), ""
    if isinstance(loss, float | int | np.floating):
        return float(loss), ""
    return None, f"a {type(loss).__name__}"


class TrainStepExercise:
    """Checks ``train_step(model, adam, images, targets) -> (model, loss)`` over ``steps``
    batches against the PyTorch twin."""

    title = "one training step, against PyTorch"

    def __init__(self, device: Device, steps: int = 4):
        self.device, self.steps, self.attempts = device, steps, 0
        self.cfg = DigitsCnnConfig().with_dropout(0.0)
        batches = tr.loader(tr.datasets()[0], device, tr.SEED)
        self.batches = [b for _, b in zip(range(steps), batches)]
        _, twin = tr.twins(self.cfg, Device.flex())
        adam = torch.optim.Adam(twin.parameters(), lr=tr.LR, eps=AdamConfig().epsilon)
        self.expected, self.weights = [], []
        for batch in self.batches:
            self.expected += tr.torch_epoch(twin, adam, [batch])
            self.weights.append({p: tr.twin_param(twin, p).copy()
                                 for p in self.cfg.init(Device.flex()).parameters()})

    def find_failure(self, solution: Any) -> Verdict | None:
        model, _ = tr.twins(self.cfg, self.device)  # the twin's initial weights
        adam = AdamConfig().init()
        for i, batch in enumerate(self.batches):
            step = i + 1
            before = {p: v.val().to_numpy() for p, v in model.parameters().items()}
            try:
                out = solution(model, adam, batch.images, batch.targets)
                new, loss = out
            except Exception as err:  # noqa: BLE001 - the reader's code raised: a verdict
                return Verdict(False, "error", f"step {step}: train_step raised "
                               f"{type(err).__name__}: {err}", "", hints=[
                                   "Return two things: (the new model, the loss)."])
            value, what = _as_float(loss)
            if value is None:
                return Verdict(False, "value", f"step {step}: the loss is {what}, not one "
                               "number. backward() of a tensor of many values seeds each "
                               "with 1: the gradient of their sum.", "", hints=[
                                   "Call backward() on the batch's mean loss, as "
                                   "CrossEntropyLoss returns it, and return that."])
            expected = self.expected[i]
            if abs(value - expected) > LOSS_RTOL * abs(expected):
                return Verdict(False, "value", f"step {step}'s loss is {value:.6f}, "
                               f"PyTorch's {expected:.6f}" + (
                                   " on the same weights and batch: the forward or the loss "
                                   "differs." if step == 1 else "."), "", hints=[
                                   "loss_fn(model(images), targets), the model in training "
                                   "mode on the autodiff device."])
            params = new.parameters() if hasattr(new, "parameters") else {}
            if params and all(np.array_equal(v.val().to_numpy(), before[p])
                              for p, v in params.items()):
                return Verdict(False, "value", f"after step {step} no weight has moved: "
                               "the model returned is the one passed in, or it had no graph "
                               "to take gradients from.", "", hints=[
                                   "adam.step returns a new model (the old one is left as "
                                   "it was): return that one.",
                                   "The forward must run on the autodiff device, in "
                                   "training mode (not through valid())."])
            gaps = {p: float(np.abs(v.val().to_numpy() - self.weights[i][p]).max())
                    for p, v in params.items() if p not in DRIFTING}
            worst = max(gaps, key=gaps.get) if gaps else None
            if worst is None or gaps[worst] > WEIGHT_ATOL:
                far = worst or "the model"
                hint = ("Step 1 of Adam is lr · g / (|g| + eps): only eps sees the "
                        "gradient's scale, and the params whose |g| is near eps show it. Is "
                        "the loss you called backward() on the batch mean, as PyTorch's "
                        "cross_entropy is? (And is the learning rate 3e-3?)" if step == 1 else
                        "Step 1 was right, this one is not: Adam's update reads the "
                        "moments and step count it keeps. Step with the adam passed in, "
                        "not a new one, so its state carries over.")
                return Verdict(False, "value", f"after step {step}, {far} differs from "
                               "PyTorch's by "
                               f"{gaps.get(worst, float('nan')):.1e}.", "", hints=[hint])
            model = new
        return None

    def check(self, solution: Any = ...) -> Verdict:
        """Check the reader's ``train_step``; print the verdict."""
        return run_check(self, solution, lambda: (
            f"✓ {self.title}: {self.steps} steps, every loss within {LOSS_RTOL:.0e} of "
            f"PyTorch's (relative), every weight within {WEIGHT_ATOL:.0e}."))

    def solution(self, name: str | None = None):
        """Print the reference solution (renamed to ``name``) and check it."""
        source = inspect.getsource(train_step).rstrip()
        if name:
            source = source.replace("def train_step(", f"def {name}(", 1)
        print(source)
        verdict = self.find_failure(train_step)
        if verdict is not None:
            raise RuntimeError(f"{self.title}: the reference solution fails: {verdict.text}")
        print(f"\n✓ The reference solution passes ({self.steps} steps against PyTorch).")
        return train_step
