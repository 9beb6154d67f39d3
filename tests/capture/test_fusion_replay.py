"""Capture on ``Device.fusion().autodiff()``: the program is the fused kernels and Flex calls
the fusion stream ran, and a replay runs them with no stream in between (no plan lookup, no
search, no drain), equal to eager fusion and to eager flex."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device
from minidl.backends.flex.fusion import FusionFlex
from minidl.capture import capture
from minidl.fusion.ir import OperationIr, TensorIr
from minidl.fusion.kernel import BlockValues, elementwise_aliasable
from minidl.fusion.stream import Stream
from tests.capture.helpers import Trainer, batches, schedule

FUSION = Device.fusion().autodiff()
FLEX = Device.flex().autodiff()
# 100 like the flex test: an eager fusion step of this MLP costs a few ms, so the three
# 100-step runs of a case stay within seconds
STEPS = 100
RTOL = 1e-6
#: eager fusion against eager flex: the fused kernels contract a*b+c into one rounding where
#: Flex's separate ops round twice, so after 100 Adam steps a weight near zero differs by
#: ~1e-7 (tests/fusion compares the two devices with the same kind of tolerance)
FLEX_ATOL = 1e-6


def _eager(device: Device, optimizer: str, data: list) -> tuple[list, Trainer]:
    # the capture runs the step 3 times on its example arguments: the eager run does the same
    trainer = Trainer(optimizer, device=device)
    x0, y0 = data[0]
    losses = [trainer.step(x0, y0, schedule(0)).to_numpy() for _ in range(3)]
    losses += [trainer.step(x, y, schedule(i)).to_numpy() for i, (x, y) in enumerate(data[3:], 3)]
    return losses[3:], trainer


@pytest.mark.fusion_eager_policy
@pytest.mark.parametrize("policy", ["record_every_op", "as_shipped"])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_fusion_replays_equal_eager_fusion_and_eager_flex(optimizer, policy, monkeypatch):
    if policy == "record_every_op":
        monkeypatch.setattr(Stream, "eager_below", 0)
    data = batches(STEPS, device=FUSION)
    eager_losses, eager = _eager(FUSION, optimizer, data)
    flex_losses, flex = _eager(FLEX, optimizer, batches(STEPS, device=FLEX))

    trainer = Trainer(optimizer, device=FUSION)
    graph = capture(FUSION, trainer.step, *data[0], schedule(0), optimizers=[trainer.optim])
    # as shipped too: this model's tensors are all small, so eager fusion runs every op
    # eagerly on Flex, but a recorded run records every op (its Python is paid once), and the
    # replay launches their fused kernels; the device gets its policy back
    assert any(name.startswith("launch ") for name in graph.program.names)
    assert "eager_below" not in vars(FusionFlex.stream)
    before = FusionFlex.stream.counts()
    losses = [graph.replay(x, y, schedule(i)).to_numpy() for i, (x, y) in enumerate(data[3:], 3)]
    # the replay never touched the stream: nothing recorded, drained, launched or searched
    assert FusionFlex.stream.counts() == before

    np.testing.assert_allclose(np.concatenate(losses), np.concatenate(eager_losses), rtol=RTOL)
    np.testing.assert_allclose(np.concatenate(losses), np.concatenate(flex_losses), rtol=RTOL)
    # as shipped, eager fusion ran Flex's own kernels: it is as far from the replay as Flex is
    fused_atol = 1e-7 if policy == "record_every_op" else FLEX_ATOL
    for mine, fused, plain in zip(trainer.params(), eager.params(), flex.params()):
        np.testing.assert_allclose(mine, fused, rtol=RTOL, atol=fused_atol)
        np.testing.assert_allclose(mine, plain, rtol=RTOL, atol=FLEX_ATOL)
    assert graph.replays == STEPS - 3


def test_fusion_replay_draws_a_new_dropout_mask_and_reads_the_model_it_updates():
    (x, y), = batches(1, device=FUSION)
    trainer = Trainer("sgd", dropout=0.5, device=FUSION)
    graph = capture(FUSION, trainer.step, x, y, 0.0)
    losses = {float(graph.replay(x, y, 0.0).to_numpy()[0]) for _ in range(5)}
    assert len(losses) == 5
    start = trainer.params()
    graph.replay(x, y, 0.1)
    # the model's own tensors (fusion handles around the carried buffers) show the update
    assert all(not np.array_equal(a, b) for a, b in zip(start, trainer.params()))


def test_the_updates_write_the_carried_state_in_place():
    (x, y), = batches(1, device=FUSION)
    trainer = Trainer("adam", device=FUSION)
    graph = capture(FUSION, trainer.step, x, y, 0.01, optimizers=[trainer.optim])
    # Adam's fused update kernels take the parameters' and moments' buffers as outputs:
    # no copy of the state is left after the program
    assert "outs=(" in graph.program_text and "np.copyto" not in graph.program_text


def test_a_kernel_input_may_be_its_output_only_where_it_is_read_element_by_element():
    # from the IR: input p may become output q's buffer when p is first read by an op at or
    # before the op whose result q is (each element is loaded before it is stored)
    f32 = np.dtype(np.float32)
    a, b, s, t = (TensorIr(i, (4,), f32) for i in range(4))
    loads_first = [OperationIr("add", "float_add", (a, b), s)]
    assert elementwise_aliasable(BlockValues(loads_first), [0]) == {(0, 0), (1, 0)}
    store_first = [OperationIr("exp", "float_exp", (a,), s), OperationIr("add", "float_add", (s, b), t)]
    assert elementwise_aliasable(BlockValues(store_first), [0, 1]) == {(0, 0), (0, 1), (1, 1)}  # b after s


def test_a_matmul_blocks_epilogue_may_write_over_the_weight_it_updates_never_the_product():
    FusionFlex.sync()
    x, dh, w = (FusionFlex.stream.ready(np.ones(s, np.float32)) for s in ((4, 6), (4, 3), (6, 3)))
    grad = FusionFlex.float_matmul(FusionFlex.float_swap_dims(x, 0, 1), dh)
    new_w = FusionFlex.float_sub(w, FusionFlex.float_mul_scalar(grad, 0.5))
    del grad
    np.testing.assert_array_equal(new_w.value, np.full((6, 3), -1.0, np.float32))
    kernel = FusionFlex.stream.history[-1].plan.steps[-1].kernel
    assert kernel.name.startswith("matmul_") and not kernel.flat_inputs
    assert kernel.aliasable == {(2, 0)}  # w's buffer (input 2) may become new_w; x.T and dh never
    held = FusionFlex.float_matmul(FusionFlex.float_swap_dims(x, 0, 1), dh)
    also = FusionFlex.float_add_scalar(held, 1.0)
    np.testing.assert_array_equal(also.value, held.value + 1)
    kernel = FusionFlex.stream.history[-1].plan.steps[-1].kernel
    assert len(kernel.writes) == 2 and not any(q == kernel.writes.index(0) for _, q in kernel.aliasable)



