"""What the search chooses, checked from the plan: layer_norm's default in one kernel, linear's
bias add and activation fused into the matmul kernel, a reshape splitting a chain, the plan
store reused by a second identical step, and the bytes fusion saves."""

from __future__ import annotations

import numpy as np
import torch

from minidl.backends.flex.fusion import FusionFlex
from minidl.tensor import module as F

from .helpers import last_plan, on, randn

LAYER_NORM_DEFAULT = ["sum_dim", "div_scalar", "sub", "mul", "sum_dim", "div_scalar", "add_scalar", "sqrt",
                      "div", "mul", "add"]


def test_layer_norm_records_the_defaults_primitive_ops_and_runs_them_in_at_most_two_kernels():
    FusionFlex.sync()  # nothing an earlier test left pending joins this plan
    x, g, b = randn(3, 16, 32), randn(4, 32), randn(5, 32)
    out = F.layer_norm(on(x), on(g), on(b), 1e-5).to_numpy()
    plan = last_plan()
    assert [op.kind for op in plan.record.ops] == LAYER_NORM_DEFAULT
    assert 1 <= len(plan.kernels) <= 2 and all(blk.fuser for blk in plan.blocks)
    want = torch.nn.functional.layer_norm(torch.tensor(x), (32,), torch.tensor(g), torch.tensor(b), 1e-5)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-5, atol=1e-5)


def test_linear_fuses_the_bias_add_and_the_activation_into_the_matmul_kernel():
    x, w, b = randn(6, 8, 16), randn(7, 16, 24), randn(8, 24)
    y = F.linear(on(x), on(w), on(b))
    out = y.to_numpy()
    plan = last_plan()
    assert [(blk.fuser, blk.kinds) for blk in plan.blocks] == [("matmul", ["matmul", "add"])]
    np.testing.assert_allclose(out, x @ w + b, rtol=1e-5, atol=1e-5)
    act = F.linear(on(x), on(w), on(b)).gelu().to_numpy()
    blocks = last_plan().blocks
    assert len(blocks) == 1 and blocks[0].fuser == "matmul" and blocks[0].kinds[:2] == ["matmul", "add"]
    want = torch.nn.functional.gelu(torch.tensor(x @ w + b)).numpy()
    np.testing.assert_allclose(act, want, rtol=1e-5, atol=1e-5)


def test_a_reshape_in_the_middle_of_a_chain_fuses_through():
    FusionFlex.sync()
    x = on(randn(9, 4, 6))
    y = ((x * 2.0 + 1.0).abs()).reshape((6, 4))
    z = ((y - 0.5) * y).exp()
    out = z.to_numpy()
    plan = last_plan()
    assert len(plan.kernels) == 1 and plan.blocks[0].kinds == [
        "mul_scalar", "add_scalar", "abs", "reshape", "sub_scalar", "mul", "exp"]
    y_want = np.abs(randn(9, 4, 6) * 2 + 1).reshape(6, 4)
    np.testing.assert_allclose(out, np.exp((y_want - 0.5) * y_want), rtol=1e-5)


def test_a_broadcast_input_after_a_reshape_starts_a_new_block():
    FusionFlex.sync()
    x, b = on(randn(12, 4, 6)), on(randn(13, 1, 4))
    out = ((x * 2.0).reshape((6, 4)) + b).to_numpy()  # b broadcast: the flat walk cannot hold it
    plan = last_plan()
    assert [blk.kinds for blk in plan.blocks] == [["mul_scalar", "reshape"], ["add"]]
    np.testing.assert_allclose(out, (randn(12, 4, 6) * 2).reshape(6, 4) + randn(13, 1, 4), rtol=1e-6)


def test_a_second_identical_step_reuses_the_stored_plan_without_searching():
    x, w = randn(10, 4, 8), randn(11, 8, 8)

    def step(scale: float):
        return (F.linear(on(x), on(w)) * scale).relu().sum_dim(1).to_numpy()

    step(1.0)
    searches = FusionFlex.stream.processor.searches
    out = step(2.0)  # same structure, new scalar: passed at launch, no new search or kernel
    assert FusionFlex.stream.processor.searches == searches
    assert not last_plan().searched
    np.testing.assert_allclose(out, np.maximum(x @ w * 2.0, 0).sum(1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_eight_element_wise_ops_become_one_kernel_that_moves_far_fewer_bytes():
    x = on(randn(12, 64, 64))
    y = ((((x * 1.5 + 0.5).relu().abs() - 0.25) * 2.0).exp() + 1.0).sqrt()
    y.to_numpy()
    plan = last_plan()
    assert len(plan.record.ops) >= 8 and len(plan.kernels) == 1
    assert plan.bytes_fused * 4 < plan.bytes_eager
    assert "elemwise_muls_adds" in plan.kernels[0]
    assert "njit(cache=True" in plan.source(0)
