"""The autodiff chapter's measuring machinery, kept off the page.

* :func:`chain` and :func:`deep_block`: the two checkpointing workloads (an element-wise chain;
  matmuls with residual element-wise units between them);
* :func:`costs`: what a graph keeps, the peak NumPy allocation through forward + backward
  (``tracemalloc``), the forward ops backward re-runs (``debug.coverage``), the best backward
  time;
* :func:`grads_both`: the gradients of ``sum(out * w)`` for every input, in minidl and PyTorch;
* :func:`apply_step`: run a reader's unary ``Step`` class on a tensor (recorded on an autodiff
  device, forward only on a plain one), so ``gradcheck`` can test it.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import torch

from minidl import Device, Tensor, debug
from minidl.autodiff import graph_memory

__all__ = ["FORWARD_OPS", "apply_step", "chain", "chain_loss", "costs", "deep_block",
           "grads_both"]

START = np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32)
_rng = np.random.default_rng(1)
BLOCK_WS = [_rng.standard_normal((128, 128)).astype(np.float32) / 11 for _ in range(8)]
BLOCK_X = _rng.standard_normal((128, 128)).astype(np.float32)
FORWARD_OPS = ("float_sin", "float_tanh", "float_exp", "float_mul", "float_mul_scalar",
               "float_add")


def chain(x: Tensor, length: int) -> Tensor:
    """``length`` rounds: sin, a product with x, exp of a half (two ops), tanh, again."""
    y = x
    for i in range(length):
        kind = i % 4
        if kind == 0:
            y = y.sin()
        elif kind == 1:
            y = y * x
        elif kind == 2:
            y = (y * 0.5).exp()
        else:
            y = y.tanh()
    return y


def chain_loss(dev: Device) -> Tensor:
    """The chain of 40 rounds (50 element-wise ops: ``(y * 0.5).exp()`` is two) from a
    tracked [128, 128] leaf, summed."""
    return chain(Tensor.from_numpy(START, dev).require_grad(), 40).sum()


def deep_block(dev: Device) -> Tensor:
    """Eight rounds of ``h @ w`` (w tracked) and two residual units
    ``h = tanh(sin(h) * 0.5) + h``, summed to a loss."""
    h = Tensor.from_numpy(BLOCK_X, dev)
    for w in BLOCK_WS:
        h = h @ Tensor.from_numpy(w, dev).require_grad()
        for _ in range(2):
            h = ((h.sin() * 0.5).tanh()) + h
    return h.sum()


def costs(build: Callable[[Device], Tensor], dev: Device) -> dict:
    """Kept bytes, peak bytes through forward + backward, Flex forward calls made during
    backward, best-of-three backward seconds."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    loss = build(dev)
    kept = graph_memory(loss)
    loss.backward()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    loss = build(dev)
    calls = debug.coverage(lambda: loss.backward())
    forward_calls = sum(calls.count("Flex", op) for op in FORWARD_OPS)
    best = float("inf")
    for _ in range(3):
        loss = build(dev)
        t0 = time.perf_counter()
        loss.backward()
        best = min(best, time.perf_counter() - t0)
    return {"kept": kept, "peak": peak, "forward_calls": forward_calls, "seconds": best}


def grads_both(fn_ours, fn_theirs, shapes: dict, seed: int = 0) -> dict:
    """``{input name: (minidl gradient, torch gradient)}`` of ``sum(out * w)`` with fixed
    random ``w``, from the same random inputs (name → shape)."""
    ad = Device.flex().autodiff()
    rng = np.random.default_rng(seed)
    arrays = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    ours = {n: Tensor.from_numpy(a, ad).require_grad() for n, a in arrays.items()}
    theirs = {n: torch.from_numpy(a).requires_grad_(True) for n, a in arrays.items()}
    out, t_out = fn_ours(*ours.values()), fn_theirs(*theirs.values())
    w = rng.standard_normal(t_out.shape).astype(np.float32)
    grads = (out * Tensor.from_numpy(w, ad)).sum().backward()
    (t_out * torch.from_numpy(w)).sum().backward()
    return {n: (ours[n].grad(grads), theirs[n].grad) for n in shapes}


def apply_step(step_cls: type, x: Tensor) -> Tensor:
    """``step_cls`` (a unary ``Step``) applied to ``x``: recorded in the graph on an autodiff
    device (as an op Autodiff overrides would be), its forward alone on a plain device."""
    from minidl.dispatch import backend_for
    from minidl.dispatch.tensor import DispatchTensor
    from minidl_book.harness import attach_step

    B = backend_for(x.device)
    if x.device.is_autodiff():
        out = attach_step(B, step_cls(), x.primitive.backend_tensor)
    else:
        out = step_cls().forward(B, x.primitive.backend_tensor)
    return Tensor(DispatchTensor(out, x.device))
