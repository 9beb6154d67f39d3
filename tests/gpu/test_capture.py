"""Capture on the fused GPU device (``Device.fusion_wgpu().autodiff()``): a captured step is
its dispatches, replayed in one compute pass with no minidl Python between them, and equals
the eager fused step it stands for.

Tolerance: none. A replay runs the same kernels, in the same order, on the same values as the
eager fused step (the same pipelines, the same parameter words, the random stream's counter
advanced as eagerly), so losses and parameters are compared bit for bit over several steps.
"""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.capture import CaptureError, capture
from tests.capture.helpers import Trainer, batches, schedule

from .capture_steps import CnnTrainer, cnn_batches, cnn_lr
from .support import needs_adapter

pytestmark = needs_adapter

FUSED = Device.fusion_wgpu().autodiff()


def rt():
    from minidl.backends.wgpu.runtime import runtime

    return runtime(0)


def _stream():
    from minidl.backends.wgpu.fusion import FusionWgpu

    return FusionWgpu.stream


def _eager(make, data: list, lr) -> tuple[list, object, int]:
    """The eager fused run a capture stands for (the capture's three runs on ``data[0]``
    first), and the dispatches of one eager fused step."""
    trainer = make()
    x0, y0 = data[0]
    losses = [trainer.step(x0, y0, lr(0)).to_numpy() for _ in range(3)]
    losses += [trainer.step(x, y, lr(i)).to_numpy() for i, (x, y) in enumerate(data[3:], 3)]
    counter = make()
    for _ in range(3):  # the last one counted: its plans are the steady ones
        with rt().record_dispatches() as made:
            loss = counter.step(x0, y0, lr(0))
            _stream().drain()  # the step's work, not the read's (a replay copies its outputs)
        loss.to_numpy()
    return losses[3:], trainer, len(made)


def _replays_equal_eager(make, data: list, lr, optimizers) -> tuple[object, int]:
    eager_losses, eager, eager_dispatches = _eager(make, data, lr)
    trainer = make()
    graph = capture(FUSED, trainer.step, *data[0], lr(0), optimizers=optimizers(trainer))
    before, dispatches = _stream().counts(), rt().dispatches
    losses = [graph.replay(x, y, lr(i)).to_numpy() for i, (x, y) in enumerate(data[3:], 3)]
    # every replay is the eager fused step's dispatches, and nothing went through the stream
    assert graph.dispatches == eager_dispatches
    assert rt().dispatches - dispatches == graph.dispatches * len(losses)
    assert _stream().counts() == before
    np.testing.assert_array_equal(np.concatenate(losses), np.concatenate(eager_losses))
    for mine, theirs in zip(trainer.params(), eager.params(), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert graph.replays == len(data) - 3
    return graph, eager_dispatches


@pytest.mark.parametrize("dropout", [0.0, 0.3])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_mlp_replays_equal_the_eager_fused_steps(optimizer, dropout):
    data = batches(10, device=FUSED)
    graph, dispatches = _replays_equal_eager(
        lambda: Trainer(optimizer, dropout=dropout, device=FUSED), data, schedule, lambda t: [t.optim])
    assert dispatches <= 30  # the fused MLP step: forward, backward and update in few kernels


def test_cnn_replays_equal_the_eager_fused_steps():
    graph, dispatches = _replays_equal_eager(
        lambda: CnnTrainer(FUSED), cnn_batches(6, FUSED), cnn_lr, lambda t: [t.optim])
    assert 50 <= dispatches <= 200 and "@compute" in graph.program_text


def test_each_replay_returns_new_tensors_and_the_model_sees_the_update():
    (x, y), = batches(1, device=FUSED)
    trainer = Trainer("sgd", dropout=0.5, device=FUSED)
    graph = capture(FUSED, trainer.step, x, y, 0.0)
    first = graph.replay(x, y, 0.0)
    kept = first.to_numpy()
    losses = {float(graph.replay(x, y, 0.0).to_numpy()[0]) for _ in range(4)}
    assert len(losses) == 4  # a new dropout mask each replay
    np.testing.assert_array_equal(first.to_numpy(), kept)  # not overwritten by later replays
    start = trainer.params()
    graph.replay(x, y, 0.1)
    assert all(not np.array_equal(a, b) for a, b in zip(start, trainer.params(), strict=True))


def test_a_host_read_or_a_frozen_host_value_is_refused():
    (x, y), = batches(1, device=FUSED)
    trainer = Trainer("sgd", dropout=0.0, device=FUSED)

    def reads(x, y, lr):
        loss = trainer.step(x, y, lr)
        loss.to_numpy()
        return loss

    with pytest.raises(CaptureError, match="read back to the host"):
        capture(FUSED, reads, x, y, 0.1)
    count = [0]

    def frozen(x, y):
        count[0] += 1
        return trainer.step(x, y, 0.1 / count[0])  # a learning rate the step computes itself

    with pytest.raises(CaptureError, match="parameter word"):
        capture(FUSED, frozen, x, y)


def test_the_eager_gpu_device_is_refused_naming_the_fused_one():
    (x, y), = batches(1, device=Device.wgpu().autodiff())
    trainer = Trainer("sgd", dropout=0.0, device=Device.wgpu().autodiff())
    with pytest.raises(CaptureError, match="fusion_wgpu"):
        capture(Device.wgpu().autodiff(), trainer.step, x, y, 0.1)


def test_a_replay_checks_its_arguments():
    (x, y), = batches(1, device=FUSED)
    trainer = Trainer("sgd", dropout=0.0, device=FUSED)
    graph = capture(FUSED, trainer.step, x, y, 0.1)
    from minidl.capture import ReplayMismatchError

    with pytest.raises(ReplayMismatchError, match="shape"):
        graph.replay(Tensor.from_numpy(np.zeros((3, 12), np.float32), FUSED), y, 0.1)
