"""How a Tensor call travels: every method reaches ``Dispatch.<kind>_<op>``, and the functional
``linear`` walks module.linear → linear_impl → the ModuleOps default on Dispatch → routed
matmul/reshape/add (the path the book traces)."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

from minidl import Tensor
from minidl import functional as F
from minidl.dispatch import ROUTE_LISTENERS

from .support import DEVICES, T, load_device, randn


@pytest.fixture
def routed():
    """The names of the ops Dispatch routes while the test runs."""
    seen: list[str] = []

    def listen(op, backend, args):
        seen.append(op)

    ROUTE_LISTENERS.append(listen)
    yield seen
    ROUTE_LISTENERS.remove(listen)


def test_each_method_calls_the_dispatch_op_of_its_kind(plain, routed):
    x = T(randn((2, 3)), plain)
    i = T(np.array([1, 2, 3]), plain)
    m = T(np.array([True, False]), plain)
    cases = [
        (lambda: x.exp(), ["float_exp"]),
        (lambda: x + x, ["float_add"]),
        (lambda: x.sum_dim(-1), ["float_sum_dim"]),
        (lambda: x.swap_dims(0, 1), ["float_swap_dims"]),
        (lambda: i + i, ["int_add"]),
        (lambda: i.sum(), ["int_sum"]),
        (lambda: i.greater_elem(1), ["int_greater_elem"]),
        (lambda: m.bool_not(), ["bool_not"]),
        (lambda: x.relu(), ["relu"]),
    ]
    for call, expected in cases:
        routed.clear()
        call()
        assert routed == expected


def test_linear_splits_into_routed_matmul_reshape_add(plain, routed):
    x, w, b = T(randn((2, 4)), plain), T(randn((4, 3)), plain), T(randn((3,)), plain)
    routed.clear()
    F.linear(x, w, b)
    assert routed == ["float_matmul", "float_reshape", "float_add"]  # Dispatch never forwards linear


def test_conv2d_and_layer_norm_are_forwarded_whole(plain, routed):
    x, w = T(randn((1, 2, 4, 4)), plain), T(randn((3, 2, 3, 3)), plain)
    y, g, b = T(randn((2, 4)), plain), T(randn((4,)), plain), T(randn((4,)), plain)
    routed.clear()
    F.conv2d(x, w)
    F.layer_norm(y, g, b)
    assert routed == ["conv2d", "layer_norm"]


@pytest.mark.parametrize("entry", [DEVICES[0], DEVICES[1], DEVICES[2]], ids=lambda d: d[0])
def test_linear_backtrace_runs_through_linear_impl_the_moduleops_default_and_dispatch(entry, monkeypatch):
    device = load_device(*entry[1:])
    from minidl.dispatch import plain_backend

    backend = plain_backend(device)
    original = backend.float_matmul
    frames: list[list[str]] = []

    def spy(cls, lhs, rhs):
        frames.append([f"{f.filename.split('minidl/')[-1]}:{f.name}" for f in traceback.extract_stack()])
        return original(lhs, rhs)

    monkeypatch.setattr(backend, "float_matmul", classmethod(spy))
    F.linear(T(randn((2, 4)), device), T(randn((4, 3)), device))
    stack = frames[0]
    order = ["tensor/module.py:linear", "tensor/module.py:linear_impl", "backend/module_ops.py:linear",
             "backend/modules/linear.py:linear", "float_tensor.py:float_matmul"]
    positions = [next(i for i, name in enumerate(stack) if name.endswith(step)) for step in order]
    assert positions == sorted(positions), stack


def test_module_functions_return_tensors_on_the_input_device(device):
    out = F.linear(T(randn((3,)), device), T(randn((3, 2)), device))
    assert isinstance(out, Tensor) and out.device == device and out.device.is_autodiff() == device.is_autodiff()
    assert out.shape == (2,)
