"""The routing facts on Flex: which class defines which module op, and the path a
``linear`` call takes on a plain flex device (burn: ``linear`` is a ModuleOps default that
Dispatch does not forward, so it decomposes into routed matmul / reshape / add)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backend import ModuleOps, defines, defining_class
from minidl.backends.flex import Flex
from minidl.debug import trace
from minidl.dispatch import Device, Dispatch
from minidl.tensor import Tensor, module

LINEAR_OPS = ["linear", "linear_x_backward", "linear_weight_backward", "linear_bias_backward"]
#: The ModuleOps defaults the book's tables show Flex inheriting.
FLEX_INHERITS = [*LINEAR_OPS, "batch_norm", "batch_norm_train", "embedding", "conv1d"]


def _flex(shape, seed=0) -> Tensor:
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(data, device=Device.flex())


def test_flex_defines_layer_norm_and_conv2d_but_not_linear():
    assert defines(Flex, "layer_norm") and defines(Flex, "conv2d")
    assert not defines(Flex, "linear")


@pytest.mark.parametrize("op", FLEX_INHERITS)
def test_flex_leaves_linear_norms_embedding_and_conv1d_to_the_module_ops_default(op):
    assert not defines(Flex, op)
    assert defining_class(Flex, op) is ModuleOps


def test_dispatch_forwards_conv2d_and_layer_norm_but_not_linear():
    assert defines(Dispatch, "conv2d") and defines(Dispatch, "layer_norm")
    for op in LINEAR_OPS:
        assert not defines(Dispatch, op), op
        assert defining_class(Dispatch, op) is ModuleOps, op


def test_linear_on_a_plain_flex_device_reaches_flex_float_matmul_through_the_default(monkeypatch):
    calls = []
    inner = Flex.float_matmul.__func__

    def spy(cls, lhs, rhs):
        calls.append((cls, lhs.shape, rhs.shape))
        return inner(cls, lhs, rhs)

    monkeypatch.setattr(Flex, "float_matmul", classmethod(spy))
    x, w, b = _flex((5, 3)), _flex((3, 2), 1), _flex((2,), 2)
    out = module.linear(x, w, b)
    assert calls == [(Flex, (5, 3), (3, 2))]
    expected = x.to_numpy() @ w.to_numpy() + b.to_numpy()
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-5, atol=1e-6)


def test_the_linear_trace_passes_dispatch_linear_the_default_then_flex_matmul():
    x, w = _flex((4, 3)), _flex((3, 2), 1)
    t = trace(lambda: module.linear(x, w), breakpoints=[r"^Flex\.float_matmul$", r"^Flex\.linear$"],
              echo=False)
    assert t.breakpoints[0].hits == 1
    assert t.breakpoints[1].hits == 0  # Flex has no linear of its own
    chain = t.chain()
    assert chain[-1] == "Flex.float_matmul"
    assert "Dispatch.linear" in chain and "Dispatch.float_matmul" in chain
    assert chain.index("Dispatch.linear") < chain.index("Dispatch.float_matmul")


def test_layer_norm_on_a_plain_flex_device_runs_flex_layer_norm_and_no_mean():
    x, gamma, beta = _flex((3, 8)), _flex((8,), 1), _flex((8,), 2)
    t = trace(lambda: module.layer_norm(x, gamma, beta, 1e-5),
              breakpoints=[r"^Flex\.layer_norm$", r"^Flex\.float_mean_dim$"], echo=False)
    assert t.breakpoints[0].hits == 1 and t.breakpoints[1].hits == 0
    assert t.chain()[-2:] == ["Dispatch.layer_norm", "Flex.layer_norm"]
