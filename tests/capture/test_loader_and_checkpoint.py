"""A captured step fed by the data loader's batches, and the model and optimizer state
checkpointed between replays."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device
from minidl.capture import ReplayMismatchError, capture
from minidl.data import DataLoaderBuilder, DigitsBatcher, DigitsDataset
from minidl.nn import CrossEntropyLossConfig, LinearConfig, Relu, Sequential
from minidl.optim import AdamConfig
from minidl.train.checkpoint import optimizer_record
from tests.capture.helpers import DEVICE


class DigitsTrainer:
    def __init__(self, device=DEVICE):
        device.seed(11)
        self.model = Sequential(LinearConfig(64, 32).init(device), Relu(), LinearConfig(32, 10).init(device))
        for param in self.model.parameters().values():
            param.val()
        self.optim = AdamConfig().init()
        self.loss_fn = CrossEntropyLossConfig().init()

    def step(self, images, targets, lr):
        loss = self.loss_fn(self.model(images.flatten(1)), targets)
        self.model = self.optim.step(lr, self.model, loss.backward())
        return loss


def _loader(device=DEVICE):
    return (DataLoaderBuilder(DigitsBatcher()).batch_size(100).shuffle(0).set_device(device)
            .build(DigitsDataset("train", seed=0)))


def test_loader_batches_replay_like_eager_and_checkpoint_between_replays():
    batches = [(b.images, b.targets) for b in _loader()]
    full = [b for b in batches if b[0].shape[0] == 100]
    assert len(full) >= 5 and len(full) < len(batches)  # the last batch is smaller

    eager = DigitsTrainer()
    for _ in range(3):
        eager.step(*full[0], 1e-3)
    eager_losses = [eager.step(x, y, 1e-3).to_numpy() for x, y in full]

    captured = DigitsTrainer()
    graph = capture(DEVICE, captured.step, *full[0], 1e-3, optimizers=[captured.optim])
    losses = [graph.replay(x, y, 1e-3).to_numpy() for x, y in full]
    np.testing.assert_allclose(np.concatenate(losses), np.concatenate(eager_losses), rtol=1e-6)

    # the checkpoint written between replays holds what the eager run holds
    mine, mine_meta = optimizer_record(captured.optim, captured.model)
    theirs, theirs_meta = optimizer_record(eager.optim, eager.model)
    assert mine_meta == theirs_meta and sorted(mine) == sorted(theirs)
    for key in theirs:
        np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-6, atol=1e-9)
    times = {int(v) for k, v in mine.items() if k.endswith("/time")}
    assert times == {3 + len(full)}

    # the loader's last, smaller batch does not fit the captured program
    with pytest.raises(ReplayMismatchError, match="has shape"):
        graph.replay(*batches[-1], 1e-3)


@pytest.mark.parametrize("device", [DEVICE, Device.fusion().autodiff()], ids=["flex", "fusion"])
def test_the_last_smaller_batch_runs_eagerly_and_replays_continue_from_it(device):
    batches = [(b.images, b.targets) for b in _loader(device)]
    full, last = batches[:-1], batches[-1]
    assert last[0].shape[0] < full[0][0].shape[0]
    eager, captured = DigitsTrainer(device), DigitsTrainer(device)
    for _ in range(3):
        eager.step(*full[0], 1e-3)
    graph = capture(device, captured.step, *full[0], 1e-3, optimizers=[captured.optim])
    want, got = [], []
    for _ in range(2):  # the second epoch replays from the state the eager step left
        want += [eager.step(x, y, 1e-3).to_numpy() for x, y in batches]
        got += [graph.replay(x, y, 1e-3).to_numpy() for x, y in full]
        got.append(graph.step_eagerly(*last, 1e-3).to_numpy())
    np.testing.assert_allclose(np.concatenate(got), np.concatenate(want), rtol=1e-6)
    times = {s.time for s in captured.optim.states.values()}
    assert times == {3 + 2 * len(batches)}
