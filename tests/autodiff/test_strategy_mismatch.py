"""One op, two autodiff devices with different checkpointing strategies: refused as burn's
``validate_checkpointing`` refuses it, both strategies named; a plain input takes the
autodiff input's strategy."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor

BURN_TEXT = "Autodiff strategy mismatch: {} vs {}. Tensors in the same operation must share a strategy."


@pytest.mark.parametrize("kind", ["ndarray", "flex"])
def test_mixing_checkpointing_strategies_in_one_op_is_refused(kind):
    plain = Device.ndarray() if kind == "ndarray" else Device.flex()
    keep, balanced = plain.autodiff(), plain.autodiff().gradient_checkpointing()
    a = Tensor.from_numpy(np.ones(3, np.float32), keep).require_grad()
    b = Tensor.from_numpy(np.ones(3, np.float32), balanced).require_grad()
    with pytest.raises(ValueError) as refused:
        a + b
    assert str(refused.value) == "float_add: " + BURN_TEXT.format("None", "Balanced")
    with pytest.raises(ValueError, match=r"float_mul: Autodiff strategy mismatch: Balanced vs None\."):
        b * a
    with pytest.raises(ValueError, match="Autodiff strategy mismatch: None vs Balanced"):
        Tensor.cat([a, a, b], 0)


def test_a_plain_input_takes_the_strategy_of_the_autodiff_one():
    balanced = Device.ndarray().autodiff().gradient_checkpointing()
    b = Tensor.from_numpy(np.ones(3, np.float32), balanced).require_grad()
    c = Tensor.from_numpy(np.full(3, 2.0, np.float32), Device.ndarray())
    for out in (b * c, c * b):
        assert out.device.checkpointing == "balanced"
    grads = (c * b).sum().backward()
    np.testing.assert_array_equal(b.grad(grads).to_numpy(), np.full(3, 2.0, np.float32))
