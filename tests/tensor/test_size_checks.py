"""Tensor-layer sizes: ``repeat`` is one copy (a stride-0 expand, then one reshape), matches
torch's ``repeat`` (values and gradient), and a huge ``repeat``/``repeat_dim``/``expand``/
``zeros`` is refused at once with a ``TensorTooLargeError`` naming the op and the shape."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from minidl import Device, Tensor
from minidl.backend.limits import TensorTooLargeError

from .support import T, close, randn, tt


@pytest.mark.parametrize("reps", [(2, 3), (1, 1), (3, 1, 2), (0, 2), (2, 0), (1, 4)])
def test_repeat_matches_torch_for_every_kind(device, reps):
    a = randn((2, 3), 11)
    close(T(a, device).repeat(*reps), tt(a).repeat(*reps))
    close(T(a > 0, device).repeat(*reps), tt(a > 0).repeat(*reps))
    close(T(np.arange(6).reshape(2, 3), device).repeat(*reps), torch.arange(6).reshape(2, 3).repeat(*reps))


@pytest.mark.parametrize("make", [Device.ndarray().autodiff, Device.flex().autodiff])
def test_repeat_gradient_matches_torch(make):
    a, w = randn((2, 3), 12), randn((4, 2, 9), 13)
    x = T(a, make()).require_grad()
    grads = (x.repeat(4, 1, 3) * T(w, x.device)).sum().backward()
    t = tt(a).requires_grad_()
    (t.repeat(4, 1, 3) * tt(w)).sum().backward()
    close(x.grad(grads), t.grad, atol=1e-5)


def test_repeat_runs_one_copy_not_one_per_dim(monkeypatch):
    from minidl.backends.flex import Flex

    calls = []
    for op in ("float_cat", "float_repeat_dim", "float_reshape"):
        original = getattr(Flex, op)
        monkeypatch.setattr(Flex, op, classmethod(lambda cls, *a, _o=original, _n=op, **k: calls.append(_n) or _o(*a, **k)))
    x = Tensor.from_data(randn((2, 3), 14), Device.flex())
    out = x.repeat(2, 3, 4)
    assert out.shape == (2, 6, 12)
    assert "float_cat" not in calls and "float_repeat_dim" not in calls, calls
    assert calls.count("float_reshape") == 2, calls  # the view in, and the one copy out


@pytest.mark.parametrize("call", [
    lambda x: x.repeat(10**6, 10**6),
    lambda x: x.repeat_dim(0, 10**12),
    lambda x: x.expand((10**7, 10**7, 3)),
    lambda x: Tensor.zeros((10**6, 10**6), x.device),
    lambda x: Tensor.ones((10**13,), x.device),
], ids=["repeat", "repeat_dim", "expand", "zeros", "ones"])
def test_huge_results_are_refused_before_any_work(device, call):
    x = T(randn((1, 3), 15), device)
    start = time.perf_counter()
    with pytest.raises(TensorTooLargeError, match=r"needs .* more than the .* limit") as err:
        call(x)
    assert time.perf_counter() - start < 1.0
    assert isinstance(err.value, MemoryError) and isinstance(err.value, ValueError)


def test_a_huge_broadcast_is_refused_before_the_backend_allocates_it(device):
    a, b = Tensor.zeros((10**6, 1), device), Tensor.zeros((1, 10**6), device)
    for op in (lambda: a + b, lambda: a * b, lambda: a > b, lambda: a.max_pair(b)):
        with pytest.raises(TensorTooLargeError, match=r"broadcast result.*\(1000000, 1000000\)"):
            op()
