"""100 replayed training steps equal 100 eager ones: losses and parameters, SGD and Adam,
with a changing learning rate and dropout drawing a new mask every step."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.capture import capture
from tests.capture.helpers import DEVICE, Trainer, batches, schedule

STEPS = 100
RTOL = 1e-6




@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_hundred_replays_equal_hundred_eager_steps(optimizer):
    data = batches(STEPS)
    # the capture runs the step 3 times on its example arguments: the eager run does the same
    x0, y0 = data[0]
    eager = Trainer(optimizer)
    eager_losses = [eager.step(x0, y0, schedule(0)).to_numpy() for _ in range(3)]
    eager_losses += [eager.step(x, y, schedule(i)).to_numpy() for i, (x, y) in enumerate(data[3:], 3)]

    trainer = Trainer(optimizer)
    graph = capture(DEVICE, trainer.step, x0, y0, schedule(0), optimizers=[trainer.optim])
    losses = [graph.replay(x, y, schedule(i)).to_numpy() for i, (x, y) in enumerate(data[3:], 3)]

    np.testing.assert_allclose(np.concatenate(losses), np.concatenate(eager_losses[3:]), rtol=RTOL)
    for mine, theirs in zip(trainer.params(), eager.params()):
        np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=1e-7)
    assert graph.replays == STEPS - 3


def test_dropout_draws_a_new_mask_every_replay():
    # the same batch and a zero learning rate: only the dropout mask can change the loss
    (x, y), = batches(1)
    trainer = Trainer("sgd", dropout=0.5)
    graph = capture(DEVICE, trainer.step, x, y, 0.0)
    losses = {float(graph.replay(x, y, 0.0).to_numpy()[0]) for _ in range(5)}
    assert len(losses) == 5


def test_adam_step_count_is_written_back_to_the_optimizer():
    (x, y), = batches(1)
    trainer = Trainer("adam")
    graph = capture(DEVICE, trainer.step, x, y, 0.01, optimizers=[trainer.optim])
    for _ in range(4):
        graph.replay(x, y, 0.01)
    times = {state.time for state in trainer.optim.states.values()}
    assert times == {3 + 4} and all(type(t) is int for t in times)


def test_flex_adam_writes_the_carried_state_in_place():
    # Flex's adam_step takes the parameter's and the moments' own buffers as its outputs
    # (its ``aliasable``): the program copies no state after the updates
    (x, y), = batches(1)
    trainer = Trainer("adam")
    graph = capture(DEVICE, trainer.step, x, y, 0.01, optimizers=[trainer.optim])
    text = graph.program_text
    assert "adam_step  # in place" in text and "np.copyto" not in text
