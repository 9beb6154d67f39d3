"""Autodiff through the Tensor layer: ``loss.backward()``, ``x.grad(grads)``, the functional
ops as a user calls them, and the ways to run without a graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ad_helpers import INNER, spy_linear

from minidl import Device, Tensor
from minidl.autodiff import graph, no_grad
from minidl.dispatch import backend_for
from minidl.tensor import activation, loss, module


def device(inner: str) -> Device:
    return getattr(Device, inner)().autodiff()


def param(array, dev) -> Tensor:
    return Tensor.from_data(np.asarray(array, dtype=np.float32), dev).require_grad()


@pytest.mark.parametrize("inner", INNER)
def test_linear_layer_records_three_steps_and_never_reaches_autodiff_linear(inner, monkeypatch):
    dev = device(inner)
    calls = spy_linear(monkeypatch, backend_for(dev))
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.standard_normal((4, 3)).astype(np.float32), dev)
    w, b = param(rng.standard_normal((3, 2)), dev), param(rng.standard_normal(2), dev)
    y = module.linear(x, w, b)
    assert graph(y).ops == ["Matmul", "Reshape", "Add"]
    assert calls == []
    grads = y.sum().backward()
    np.testing.assert_allclose(w.grad(grads).to_numpy(), x.to_numpy().T @ np.ones((4, 2)), rtol=1e-5)
    np.testing.assert_allclose(b.grad(grads).to_numpy(), [4.0, 4.0])


@pytest.mark.parametrize("inner", INNER)
def test_mlp_with_cross_entropy_matches_torch(inner):
    dev = device(inner)
    rng = np.random.default_rng(1)
    arrays = {"w1": rng.standard_normal((5, 8)), "b1": rng.standard_normal(8),
              "w2": rng.standard_normal((8, 3)), "b2": rng.standard_normal(3)}
    data = rng.standard_normal((6, 5)).astype(np.float32)
    targets = rng.integers(0, 3, 6)

    params = {k: param(v, dev) for k, v in arrays.items()}
    x = Tensor.from_data(data, dev)
    hidden = activation.gelu(module.linear(x, params["w1"], params["b1"]))
    logits = module.linear(hidden, params["w2"], params["b2"])
    value = loss.cross_entropy(logits, Tensor.from_data(targets, dev))
    grads = value.backward()

    theirs = {k: torch.tensor(v.astype(np.float32), requires_grad=True) for k, v in arrays.items()}
    t_hidden = F.gelu(torch.from_numpy(data) @ theirs["w1"] + theirs["b1"])
    t_loss = F.cross_entropy(t_hidden @ theirs["w2"] + theirs["b2"], torch.from_numpy(targets))
    t_loss.backward()

    np.testing.assert_allclose(value.to_numpy(), [t_loss.item()], rtol=1e-5)
    for name, tensor in params.items():
        grad = tensor.grad(grads)
        assert not grad.device.is_autodiff()
        np.testing.assert_allclose(grad.to_numpy(), theirs[name].grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("inner", INNER)
def test_tensor_autodiff_surface(inner):
    dev = device(inner)
    x = param([1.0, 2.0, 3.0], dev)
    assert x.is_require_grad()
    y = (x * x).exp()
    assert not y.is_require_grad()
    grads = y.sum().backward()
    expected = 2 * np.array([1.0, 2.0, 3.0]) * np.exp(np.array([1.0, 4.0, 9.0]))
    np.testing.assert_allclose(x.grad(grads).to_numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(x.grad_remove(grads).to_numpy(), expected, rtol=1e-5)
    assert x.grad(grads) is None
    assert not x.detach().detach().set_require_grad(False).is_require_grad()


@pytest.mark.parametrize("inner", INNER)
def test_tensor_backward_twice_and_on_a_plain_device(inner):
    dev = device(inner)
    x = param([1.0, 2.0], dev)
    total = (x * 3.0).sum()
    total.backward()
    with pytest.raises(RuntimeError, match="consumed by a previous backward"):
        total.backward()
    with pytest.raises(RuntimeError, match="Requires autodiff tensor"):
        Tensor.from_data(np.ones(2, dtype=np.float32), dev.inner()).sum().backward()


@pytest.mark.parametrize("inner", INNER)
def test_inner_device_and_no_grad_both_run_without_a_graph(inner):
    dev = device(inner)
    x = param([0.5, -1.0], dev)
    plain = x.inner().exp()  # burn's way (what valid() uses): no autodiff code at all
    assert not plain.device.is_autodiff()
    with no_grad():  # PyTorch's habit: same device, nothing recorded
        quiet = x.exp()
    assert quiet.device.is_autodiff() and graph(quiet).ops == []
    np.testing.assert_allclose(quiet.to_numpy(), plain.to_numpy())
    assert graph(x.exp()).ops == ["Exp"]


def test_no_grad_is_exported_at_the_top_level_for_pytorch_habits():
    import minidl

    assert minidl.no_grad is no_grad
