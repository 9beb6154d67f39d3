"""Each guard of a replay and each refusal of a capture, with its message."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.capture import CaptureError, ReplayMismatchError, capture
from tests.capture.helpers import BATCH, DEVICE, IN, Trainer, batches


@pytest.fixture
def graph_and_batch():
    (x, y), = batches(1)
    trainer = Trainer("sgd")
    return capture(DEVICE, trainer.step, x, y, 0.01), x, y


def test_a_batch_of_another_shape_is_refused(graph_and_batch):
    graph, x, y = graph_and_batch
    small = Tensor.from_numpy(np.zeros((BATCH // 2, IN), np.float32), DEVICE)
    with pytest.raises(ReplayMismatchError, match=r"argument 0 has shape \[8, 12\], the capture had \[16, 12\].*TinyJit"):
        graph.replay(small, y, 0.01)


def test_another_dtype_is_refused(graph_and_batch):
    graph, x, y = graph_and_batch
    wide = Tensor.from_numpy(x.to_numpy().astype(np.float64), DEVICE)
    with pytest.raises(ReplayMismatchError, match="argument 0 has dtype float64, the capture had float32"):
        graph.replay(wide, y, 0.01)


def test_another_device_is_refused(graph_and_batch):
    graph, x, y = graph_and_batch
    plain = Tensor.from_numpy(x.to_numpy(), Device.flex())
    with pytest.raises(ReplayMismatchError, match=r"argument 0 is on Device.flex\(\), the capture was on"):
        graph.replay(plain, y, 0.01)


def test_a_scalar_input_must_stay_a_number(graph_and_batch):
    graph, x, y = graph_and_batch
    with pytest.raises(ReplayMismatchError, match="argument 2 must be a number"):
        graph.replay(x, y, "0.01")


def test_a_replayed_output_is_not_overwritten_by_the_next(graph_and_batch):
    graph, x, y = graph_and_batch
    first = graph.replay(x, y, 0.01)
    kept = first.to_numpy()
    graph.replay(x, y, 0.01)
    np.testing.assert_array_equal(first.to_numpy(), kept)


def test_the_state_is_updated_in_place_as_documented():
    (x, y), = batches(1)
    trainer = Trainer("sgd")
    graph = capture(DEVICE, trainer.step, x, y, 0.1)
    weight = next(iter(trainer.model.parameters().values())).val()
    before = weight.to_numpy()
    graph.replay(x, y, 0.1)
    assert not np.array_equal(weight.to_numpy(), before)  # the tensor taken earlier moved


def test_a_host_read_inside_the_step_is_refused():
    (x, y), = batches(1)
    trainer = Trainer("sgd")

    def step(x, y, lr):
        loss = trainer.step(x, y, lr)
        print(loss.into_scalar())
        return loss

    with pytest.raises(CaptureError, match=r"refused Tensor.into_scalar at test_guards_and_refusals.py:\d+ "
                                           r"\(backend op float_into_data\).*back to the host"):
        capture(DEVICE, step, x, y, 0.01)


def test_a_python_branch_on_a_tensor_is_refused():
    (x, y), = batches(1)
    trainer = Trainer("sgd")

    def step(x, y, lr):
        loss = trainer.step(x, y, lr)
        if loss > 1.0:  # bool() of a comparison: a host read
            return loss * 2.0
        return loss

    with pytest.raises(CaptureError, match=r"refused Tensor.__bool__ .*Python `if`"):
        capture(DEVICE, step, x, y, 0.01)


def test_an_undeclared_changing_host_scalar_is_refused():
    # Adam's bias correction 1 - beta ** t changes every step: without optimizers= it is frozen
    # (a call of Flex's fused Adam step, minidl/optim/fused.py, or of its tensor ops elsewhere)
    (x, y), = batches(1)
    trainer = Trainer("adam")
    with pytest.raises(CaptureError, match=r"(adam_step|float_div_scalar).*would be frozen into the capture.*optimizers="):
        capture(DEVICE, trainer.step, x, y, 0.01)


def test_a_learning_rate_read_as_a_closure_constant_is_refused():
    (x, y), = batches(1)
    trainer = Trainer("sgd")
    lrs = iter([0.1, 0.09, 0.08, 0.07])

    def step(x, y):
        return trainer.step(x, y, next(lrs))  # a schedule the capture cannot see

    with pytest.raises(CaptureError, match=r"float_mul_scalar.*0\.09.*0\.08.*learning rate from a schedule"):
        capture(DEVICE, step, x, y)


def test_a_scalar_input_turned_into_a_plain_float_is_refused():
    (x, y), = batches(1)
    trainer = Trainer("sgd")

    def step(x, y, lr):
        return trainer.step(x, y, float(np.float64(lr)))  # NumPy forgets where lr came from

    with pytest.raises(CaptureError, match="scalar input arg2 .*no backend call received a number computed from it"):
        capture(DEVICE, step, x, y, 0.01)


def test_a_branch_on_a_scalar_input_is_guarded():
    (x, y), = batches(1)
    trainer = Trainer("sgd")

    def step(x, y, lr):
        if lr > 0.05:  # a warm-up phase, say
            lr = lr * 0.5
        return trainer.step(x, y, lr)

    graph = capture(DEVICE, step, x, y, 0.01)
    graph.replay(x, y, 0.02)
    with pytest.raises(ReplayMismatchError, match=r"Python branch on a declared scalar \(\(?arg2 > 0.05\)? was False\)"):
        graph.replay(x, y, 0.1)


def test_a_step_that_changes_its_program_between_runs_is_refused():
    (x, y), = batches(1)
    trainer = Trainer("sgd")
    runs = []

    def step(x, y, lr):
        # warmup=0: the first recorded run takes a branch the next one does not (the tensor ops
        # of Adam's first step did, before Flex's fused Adam step made it one call like the rest)
        runs.append(len(runs))
        return trainer.step(x * 1.0 if len(runs) == 1 else x, y, lr)

    with pytest.raises(CaptureError, match="two runs of the step made different programs"):
        capture(DEVICE, step, x, y, 0.01, warmup=0)


def test_adams_first_step_recorded_with_warmup_0_replays_the_steady_step():
    # the fused step's first call has no moments; the program is built from the second run,
    # whose moments are state the first made, so replays match eager steps
    data = batches(3)
    trainer, eager = Trainer("adam", dropout=0.0), Trainer("adam", dropout=0.0)  # one random stream
    graph = capture(DEVICE, trainer.step, *data[0], 0.01, optimizers=[trainer.optim], warmup=0)
    for x, y in data:
        graph.replay(x, y, 0.01)
    for _ in range(2):
        eager.step(*data[0], 0.01)
    for x, y in data:
        eager.step(x, y, 0.01)
    for mine, theirs in zip(trainer.params(), eager.params()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)


def test_verify_compares_each_replay_with_the_eager_step():
    data = batches(4)
    trainer = Trainer("adam")
    graph = capture(DEVICE, trainer.step, *data[0], 0.01, optimizers=[trainer.optim], verify=True)
    for x, y in data:
        graph.replay(x, y, 0.01)
    eager = Trainer("adam")
    for _ in range(3):
        eager.step(*data[0], 0.01)
    for x, y in data:
        eager.step(x, y, 0.01)
    for mine, theirs in zip(trainer.params(), eager.params()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)


def test_verify_reports_a_replay_that_drifts():
    (x, y), = batches(1)
    trainer = Trainer("sgd")
    graph = capture(DEVICE, trainer.step, x, y, 0.01, verify=True)
    graph.program.namespace["c0"] = lambda a, b: a @ b * 1.01  # a broken kernel in the program
    with pytest.raises(CaptureError, match="verify: .* differs from the eager step: max relative error"):
        graph.replay(x, y, 0.01)
