"""Build exercise of the training chapter: resume a run from its checkpoint.

The reader writes ``resume(ckpt_dir, epoch, device)``, which returns ``(model, adam,
loader)`` ready for epoch ``epoch + 1``: the model and Adam's state restored from the
checkpoint the run saved, the loader moved past the ``epoch`` epochs already run, and the
device's random stream seeded as the chapter's loop seeds it at the start of an epoch. The
checker scrambles the device's stream, calls ``resume``, runs the chapter's loop body for
the next epoch (or its first ``steps`` batches), and compares those losses bit for bit with the
uninterrupted run's. Each planted slip gets its own reason: a weight that is not the
checkpoint's, a loader still at epoch 1, a first loss that differs on the right batch (the
dropout masks: the device not seeded), a first loss right and the second wrong (a fresh
Adam), a model in inference mode (returned through ``valid()``).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np

from minidl import Device
from minidl.data import DigitsDataset
from minidl.nn import CrossEntropyLossConfig
from minidl.optim import AdamConfig, GradientsParams
from minidl.store import load_model
from minidl.train import checkpoint_paths, restore_checkpoint, save_checkpoint
from minidl_book import training_run as tr
from minidl_book.harness import run_check, show_solution
from minidl_book.verdict import Verdict
from minidl_book.workloads import DigitsCnnConfig

__all__ = ["PLANTED", "ResumeExercise", "exercise", "resume", "uninterrupted"]


def resume(ckpt_dir: Path, epoch: int, device: Device):
    """Model, Adam and loader ready for epoch ``epoch + 1``, the device seeded for it."""
    adam = AdamConfig().init()
    model = restore_checkpoint(ckpt_dir, epoch, DigitsCnnConfig, device, adam)
    loader = tr.loader(DigitsDataset("train", seed=0), device, seed=0)  # the run's
    for _ in range(epoch):
        loader.iter()  # each pass draws one epoch's order: skip the epochs trained
    device.seed(epoch + 1)  # the loop seeds each epoch with its number
    return model, adam, loader


# ----- planted slips -------------------------------------------------------------------------
def fresh_adam(ckpt_dir: Path, epoch: int, device: Device):
    adam = AdamConfig().init()
    model = load_model(DigitsCnnConfig, checkpoint_paths(ckpt_dir, epoch)["model"], device)
    loader = tr.loader(tr.datasets()[0], device, seed=0)
    for _ in range(epoch):
        loader.iter()
    device.seed(epoch + 1)
    return model, adam, loader


def loader_not_advanced(ckpt_dir: Path, epoch: int, device: Device):
    adam = AdamConfig().init()
    model = restore_checkpoint(ckpt_dir, epoch, DigitsCnnConfig, device, adam)
    device.seed(epoch + 1)
    return model, adam, tr.loader(tr.datasets()[0], device, seed=0)


def not_seeded(ckpt_dir: Path, epoch: int, device: Device):
    adam = AdamConfig().init()
    model = restore_checkpoint(ckpt_dir, epoch, DigitsCnnConfig, device, adam)
    loader = tr.loader(tr.datasets()[0], device, seed=0)
    for _ in range(epoch):
        loader.iter()
    return model, adam, loader


def returned_valid(ckpt_dir: Path, epoch: int, device: Device):
    """Returns the model in inference mode: dropout off, no graph to train through."""
    model, adam, loader = resume(ckpt_dir, epoch, device)
    return model.valid(), adam, loader


def seeded_with_epoch(ckpt_dir: Path, epoch: int, device: Device):
    """Seeds with the number of the epoch saved, not of the one to run."""
    model, adam, loader = resume(ckpt_dir, epoch, device)
    device.seed(epoch)
    return model, adam, loader


#: name → (wrong resume, a phrase its verdict must contain)
PLANTED = {
    "a fresh Adam": (fresh_adam, "optimizer"),
    "the loader not advanced": (loader_not_advanced, "order"),
    "the device not seeded": (not_seeded, "dropout"),
    "seeded with the saved epoch": (seeded_with_epoch, "wrong epoch"),
    "the model returned through valid()": (returned_valid, "valid()"),
}


# ----- the uninterrupted run and the checker -------------------------------------------------
def run_steps(model, adam, loader, steps: int):
    """The chapter's loop body over the loader's next pass: losses, batch targets, model."""
    loss_fn = CrossEntropyLossConfig().init()
    losses, targets = [], []
    for batch in itertools.islice(loader, steps):
        loss = loss_fn(model(batch.images), batch.targets)
        losses.append(float(loss.into_scalar()))
        targets.append(batch.targets.to_numpy())
        model = adam.step(tr.LR, model, GradientsParams.from_grads(loss.backward(), model))
    return losses, targets, model


def uninterrupted(ckpt_dir: Path, epochs: int, device: Device) -> dict:
    """The chapter's loop for ``epochs`` epochs (the loader's and the device's seeds as
    there), a checkpoint after each: ``{"loss": every step's, "steps_per_epoch": n}``."""
    cfg = DigitsCnnConfig()
    model, adam = cfg.init(device), AdamConfig().init()
    loader, losses = tr.loader(tr.datasets()[0], device, seed=0), []
    for epoch in range(1, epochs + 1):
        device.seed(epoch)
        epoch_losses, _, model = run_steps(model, adam, loader, len(loader))
        losses += epoch_losses
        save_checkpoint(ckpt_dir, epoch, model, cfg, adam)
    return {"loss": losses, "steps_per_epoch": len(loader)}


class ResumeExercise:
    """Checks ``resume(ckpt_dir, epoch, device) -> (model, adam, loader)``."""

    title = "resume from a checkpoint"

    def __init__(self, ckpt_dir: Path, epoch: int, losses, steps_per_epoch: int,
                 device: Device, steps: int | None = None):
        steps = steps or steps_per_epoch  # one whole epoch by default
        self.ckpt_dir, self.epoch, self.device, self.steps = Path(ckpt_dir), epoch, device, steps
        start = epoch * steps_per_epoch
        self.expected = [float(v) for v in losses[start:start + steps]]
        ref = tr.loader(tr.datasets()[0], Device.flex(), seed=0)
        orders = [[b.targets.to_numpy() for b in ref] for _ in range(epoch + 1)]
        self.first_order, self.order = orders[0][:steps], orders[epoch][:steps]
        self.attempts = 0

    def find_failure(self, solution: Any) -> Verdict | None:
        epoch, nxt = self.epoch, self.epoch + 1
        self.device.seed(987_654_321)  # wherever a notebook may have left the stream
        try:
            out = solution(self.ckpt_dir, epoch, self.device)
            model, adam, loader = out
        except Exception as err:  # noqa: BLE001 - the reader's code raised: a verdict
            return Verdict(False, "error", f"resume raised {type(err).__name__}: {err}", "",
                           hints=["Return the three things the loop needs: (model, adam, "
                                  "loader)."])
        saved = load_model(DigitsCnnConfig, checkpoint_paths(self.ckpt_dir, epoch)["model"],
                           Device.flex()).parameters()
        for path, param in model.parameters().items():
            if not np.array_equal(param.val().to_numpy(), saved[path].val().to_numpy()):
                return Verdict(False, "value", f"{path} is not the checkpoint of epoch "
                               f"{epoch}'s weight.", "", hints=[
                                   "Load the model from the checkpoint directory, epoch "
                                   f"{epoch}: restore_checkpoint does it."])
        inference = [path for path, param in model.parameters().items()
                     if not param.lazy_device().is_autodiff()]
        if inference:
            return Verdict(False, "value", f"{inference[0]} is not on an autodiff device: the "
                           "model is in inference mode (dropout off, no graph to train "
                           "through).", "", hints=[
                               "valid() is for evaluation. Return the model as "
                               "restore_checkpoint builds it on the autodiff device."])
        losses, targets, _ = run_steps(model, adam, loader, self.steps)
        if not all(np.array_equal(a, b) for a, b in zip(targets, self.order)):
            stale = all(np.array_equal(a, b) for a, b in zip(targets, self.first_order))
            return Verdict(False, "value", "The loader hands out "
                           + ("epoch 1's order" if stale else "another order")
                           + f", not epoch {nxt}'s.", "", hints=[
                               "The loader's generator draws one order per pass: a new "
                               f"loader must make {epoch} pass{'es' * (epoch != 1)} (loader.iter()) before "
                               f"the run's epoch {nxt}."])
        if losses[0] != self.expected[0] and self._first_loss(epoch) == losses[0]:
            return Verdict(False, "value", f"Epoch {nxt}'s first loss is the one the device "
                           f"gives when seeded with {epoch}: seeded, but for the wrong "
                           "epoch.", "", hints=[
                               f"The loop seeds each epoch with its own number: epoch {nxt} "
                               f"runs after ad.seed({nxt})."])
        if losses[0] != self.expected[0]:
            return Verdict(False, "value", f"Epoch {nxt}'s first loss is {losses[0]!r}, the "
                           f"uninterrupted run's {self.expected[0]!r}, on the same batch and "
                           "weights: the forward's dropout masks differ.", "", hints=[
                               "The masks come from the device's random stream. Seed it as "
                               "the chapter's loop does at the start of each epoch "
                               "(ad.seed(epoch), epochs counted from 1)."])
        if losses != self.expected:
            step = next(i for i, (a, b) in enumerate(zip(losses, self.expected)) if a != b)
            return Verdict(False, "value", f"The first loss is right, step {step + 1}'s is "
                           f"{losses[step]!r} where the uninterrupted run has "
                           f"{self.expected[step]!r}: the first update differs.", "", hints=[
                               "Adam's update reads its moments and step count: the "
                               "optimizer must get its state from the checkpoint too "
                               "(restore_checkpoint(..., optimizer) fills it)."])
        return None

    def _first_loss(self, seed: int) -> float:
        """The first loss of the next epoch from the saved weights, the device seeded with
        ``seed`` (what an off-by-one seed gives)."""
        model = load_model(DigitsCnnConfig, checkpoint_paths(self.ckpt_dir, self.epoch)["model"],
                           self.device)
        loader = tr.loader(tr.datasets()[0], self.device, seed=0)
        for _ in range(self.epoch):
            loader.iter()
        self.device.seed(seed)
        losses, _, _ = run_steps(model, AdamConfig().init(), loader, 1)
        return losses[0]

    def check(self, solution: Any = ...) -> Verdict:
        """Check the reader's ``resume``; print the verdict."""
        return run_check(self, solution, lambda: (
            f"✓ {self.title}: epoch {self.epoch + 1}'s first {self.steps} losses equal "
            "the uninterrupted run's, bit for bit."))

    def solution(self, name: str | None = None):
        """Show the reference solution (renamed to ``name``) and check it."""
        return show_solution(self, resume, name, f"✓ The reference solution passes (epoch {self.epoch + 1}, {self.steps} steps).")


def exercise(ckpt_dir: Path, epoch: int, run: dict, device: Device,
             steps: int | None = None) -> ResumeExercise:
    """The checker, against ``run`` (the chapter's ``fit`` record, checkpoints in ``ckpt_dir``)."""
    return ResumeExercise(ckpt_dir, epoch, run["loss"], run["steps_per_epoch"], device, steps)

