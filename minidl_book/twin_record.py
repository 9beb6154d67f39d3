"""The PyTorch twin's side of the training chapter's ``fit``, and the numbers it files.

Mirrors no burn piece: burn-train's ``Learner`` records metrics per step and per epoch; this
record keeps the same kind of numbers for a run whose loop the chapter writes out, plus the
PyTorch twin's epoch on the very batches minidl trained on. ``fit`` calls three methods:
:meth:`TwinRecord.loss` after each step, :meth:`TwinRecord.epoch` after each epoch and
:meth:`TwinRecord.finish` at the end.
"""

from __future__ import annotations

import numpy as np
import torch

from minidl import Tensor
from minidl_book import training_run as tr
from minidl_book.workloads import DigitsCnn


class TwinRecord:
    """The twin with its own Adam (burn's ``lr`` and ``eps``, PyTorch's update) and the
    run's record: per-step losses of both, per-epoch validation accuracies of both and each
    param's largest |minidl − PyTorch| weight gap."""

    def __init__(self, twin: torch.nn.Module, lr: float = tr.LR, eps: float = 1e-5) -> None:
        self.twin = twin
        self.adam = torch.optim.Adam(twin.parameters(), lr=lr, eps=eps)
        self.run: dict = {key: [] for key in
                          ("loss", "torch_loss", "valid", "torch_valid", "param_gap")}
        self.steps_per_epoch = 0

    def loss(self, loss: Tensor) -> None:
        """File one minidl step's loss."""
        self.run["loss"].append(float(loss.into_scalar()))

    def epoch(self, model: DigitsCnn, batches: list) -> None:
        """The twin's epoch on ``batches`` (minidl's, in minidl's order), then both
        validation accuracies and the weight gaps."""
        run, twin = self.run, self.twin
        run["torch_loss"] += tr.torch_epoch(twin, self.adam, batches)
        self.steps_per_epoch = len(batches)
        valid_set = tr.datasets()[1]
        run["valid"].append(tr.accuracy(model.valid(), valid_set))
        run["torch_valid"].append(tr.torch_accuracy(twin, valid_set))
        run["param_gap"].append({
            path: float(np.max(np.abs(p.val().to_numpy() - tr.twin_param(twin, path))))
            for path, p in model.parameters().items()})

    def finish(self, model: DigitsCnn) -> dict:
        """The record as the chapter's figures read it: losses as arrays, the largest gap
        per epoch, the trained model and twin."""
        run = self.run
        run["loss"], run["torch_loss"] = np.array(run["loss"]), np.array(run["torch_loss"])
        run["weight_gap"] = [max(gaps.values()) for gaps in run["param_gap"]]
        run.update(model=model, twin=self.twin, steps_per_epoch=self.steps_per_epoch)
        return run
