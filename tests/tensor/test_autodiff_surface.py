"""The autodiff surface of Tensor: backward/grad/grad_remove/require_grad/inner/from_inner,
delegating to Dispatch (and to the Autodiff decorator on an autodiff device)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl import Tensor, functional

from .support import DEVICES, T, close, load_device, randn, tt


@pytest.fixture(scope="module", params=[DEVICES[1], DEVICES[3]], ids=[DEVICES[1][0], DEVICES[3][0]])
def ad(request):
    """An autodiff device."""
    _, make = request.param
    return load_device(make)


def test_backward_on_a_plain_tensor_requires_autodiff(plain):
    with pytest.raises(RuntimeError, match="Requires autodiff tensor"):
        Tensor.ones([2], plain).sum().backward()


def test_plain_tensors_ignore_require_grad(plain):
    x = Tensor.ones([2], plain).require_grad()
    assert not x.is_require_grad()
    assert x.inner() is x


def test_backward_and_grad_match_torch(ad):
    a, w = randn((3, 4), 71), randn((4, 2), 72)
    x = T(a, ad).require_grad()
    weight = T(w, ad).require_grad()
    assert x.is_require_grad()
    loss = (x @ weight).tanh().sum()
    grads = loss.backward()
    ta, tw = tt(a).requires_grad_(), tt(w).requires_grad_()
    (ta @ tw).tanh().sum().backward()
    gx = x.grad(grads)
    assert gx.device == ad.inner()  # gradients live on the inner device
    close(gx, ta.grad, atol=1e-5)
    close(weight.grad_remove(grads), tw.grad, atol=1e-5)
    assert weight.grad(grads) is None  # removed


def test_linear_and_cross_entropy_backward(ad):
    a, w, b = randn((5, 3), 73), randn((3, 4), 74), randn((4,), 75)
    targets = np.array([0, 3, 1, 1, 2])
    weight, bias = T(w, ad).require_grad(), T(b, ad).require_grad()
    loss = functional.cross_entropy(functional.linear(T(a, ad), weight, bias), T(targets, ad))
    grads = loss.backward()
    tw, tb = tt(w).requires_grad_(), tt(b).requires_grad_()
    torch.nn.functional.cross_entropy(tt(a) @ tw + tb, tt(targets)).backward()
    close(weight.grad(grads), tw.grad, atol=1e-6)
    close(bias.grad(grads), tb.grad, atol=1e-6)


def test_detach_inner_from_inner(ad):
    x = T(randn((2, 2), 76), ad).require_grad()
    d = x.detach()  # as burn: a new leaf, cut from x's graph, that keeps x's require_grad
    grads = d.mul_scalar(2.0).sum().backward()
    assert x.grad(grads) is None
    close(d.grad(grads), np.full((2, 2), 2.0, np.float32))
    inner = x.inner()
    assert not inner.device.is_autodiff() and inner.device == ad
    lifted = Tensor.from_inner(inner, ad)
    assert lifted.device.is_autodiff()
    close(lifted, x.to_numpy())
    assert Tensor.from_inner(inner).device.is_autodiff()
    i = T(np.array([1, 2]), ad)
    assert not i.inner().device.is_autodiff()


def test_from_inner_with_require_grad_makes_a_tracked_leaf(ad):
    inner = T(randn((2, 2), 80), ad.inner())
    leaf = Tensor.from_inner(inner, ad, require_grad=True)
    assert leaf.is_require_grad() and not Tensor.from_inner(inner, ad).is_require_grad()
    grads = leaf.mul_scalar(3.0).sum().backward()
    close(leaf.grad(grads), np.full((2, 2), 3.0, np.float32))
    with pytest.raises(TypeError, match="Only a Float tensor can require grad"):
        Tensor.from_inner(T(np.array([1, 2]), ad.inner()), ad, require_grad=True)


def test_set_require_grad_false_stops_tracking(ad):
    x = T(randn((2,), 77), ad).require_grad().set_require_grad(False)
    assert not x.is_require_grad()


def test_plain_float_inputs_join_an_autodiff_graph_as_constants(ad):
    x = T(randn((2, 3), 78), ad).require_grad()
    data = T(randn((2, 3), 79), ad.inner())  # created on the plain twin of the device
    out = (x * data).sum()
    assert out.device.is_autodiff()
    close(x.grad(out.backward()), randn((2, 3), 79))
