"""``BackendOpTimer``: times a backend's ops while active, counts nested calls once, and puts
the backend class back as it was."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex import Flex
from minidl.debug.op_timer import BackendOpTimer
from minidl.dispatch import Device
from minidl.nn import LinearConfig
from minidl.tensor import Tensor


def test_counts_each_outermost_op_call():
    x = np.ones((3, 4), np.float32)
    with BackendOpTimer(Flex) as timer:
        Flex.float_add(x, x)
        Flex.float_add(x, x)
        Flex.float_matmul(x, x.T)
    assert timer.calls["float_add"] == 2
    assert timer.calls["float_matmul"] == 1
    assert timer.total() == pytest.approx(sum(timer.seconds.values()))
    assert timer.total() > 0


def test_an_op_called_inside_another_counts_once():
    # Flex's linear may call float_matmul: only the outer call is an entry
    device = Device.flex()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.ones((3, 4), np.float32), device)
    with BackendOpTimer(Flex) as timer:
        layer(x)
    nested = timer.calls["float_matmul"] + timer.calls["linear"]
    assert nested >= 1
    assert timer.calls["linear"] == 0 or timer.calls["float_matmul"] == 0


def test_records_the_outermost_calls_in_order_for_a_replay():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    calls: list = []
    with BackendOpTimer(Flex, record=calls) as timer:
        y = Flex.float_add(x, x)
        z = Flex.float_matmul(y, x.T)
    assert [fn.__name__ for fn, _, _ in calls] == ["float_add", "float_matmul"]
    assert len(calls) == sum(timer.calls.values())
    replayed = [fn(*args, **kwargs) for fn, args, kwargs in calls]  # the class is restored by now
    np.testing.assert_array_equal(replayed[0], y)
    np.testing.assert_array_equal(replayed[1], z)


def test_restores_the_class_even_after_an_error():
    before = {name: Flex.__dict__.get(name) for name in ("float_add", "float_exp", "relu")}
    with pytest.raises(RuntimeError), BackendOpTimer(Flex):
        assert Flex.__dict__.get("float_add") is not before["float_add"]
        raise RuntimeError("boom")
    after = {name: Flex.__dict__.get(name) for name in before}
    assert after == before
    x = np.ones(3, np.float32)
    assert np.array_equal(Flex.float_add(x, x), x + x)


def test_grouped_puts_each_op_in_its_first_matching_group():
    timer = BackendOpTimer(Flex)
    timer.seconds.update({"float_matmul": 2.0, "float_add": 1.0, "relu": 0.5})
    groups = timer.grouped({"matmul": lambda op: "matmul" in op, "rest": lambda op: True})
    assert groups == {"matmul": 2.0, "rest": 1.5}


def test_module_backward_ops_are_timed_not_left_to_the_stack():
    # a conv2d's backward kernels are Flex ops the autodiff layer calls directly: were they
    # not wrapped, their time would be counted as the stack's own Python
    from minidl.nn import Conv2dConfig

    device = Device.flex().autodiff()
    conv = Conv2dConfig((1, 2), (3, 3)).init(device)
    x = Tensor.from_numpy(np.ones((2, 1, 5, 5), np.float32), device)
    with BackendOpTimer(Flex) as timer:
        conv(x).sum().backward()
    assert timer.calls["conv2d"] == 1
    assert timer.calls["conv2d_weight_backward"] == 1
    assert "seed" not in timer.seconds and "stream" not in timer.seconds
