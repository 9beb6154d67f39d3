"""One op, two autodiff devices with different checkpointing strategies: refused as burn's
``validate_checkpointing`` refuses it, both strategies named; a plain input takes the
autodiff input's strategy."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.dispatch.route import validate_checkpointing

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


def test_validate_checkpointing_lets_a_plain_device_pass_as_burns_promotes_it():
    """burn-dispatch's validate_checkpointing: (None, Some(s)) => Some(s), no panic (src/device.rs
    at v0.22.0-pre.2 and main). Only two autodiff devices can mismatch."""
    balanced = Device.flex().autodiff().gradient_checkpointing()
    for plain in (Device.flex(), Device.ndarray()):
        validate_checkpointing("float_add", plain, balanced)
        validate_checkpointing("float_add", balanced, plain)
    validate_checkpointing("float_add", Device.flex(), Device.flex())
    with pytest.raises(ValueError, match="float_add: Autodiff strategy mismatch: None vs Balanced"):
        validate_checkpointing("float_add", Device.flex().autodiff(), balanced)
