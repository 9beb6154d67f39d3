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

__all__ = ["FORWARD_OPS", "apply_step", "chain", "chain_loss", "costs", "deep_block", "grads_both"]

START = np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32)
_rng = np.random.default_rng(1)
BLOCK_WS = [_rng.standard_normal((128, 128)).astype(np.float32) / 11 for _ in range(8)]
BLOCK_X = _rng.standard_normal((128, 128)).astype(np.float32)
FORWARD_OPS = ("float_sin", "float_tanh", "float_exp", "float_mul", "float_mul_scalar", "float_add")


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


def walk_trace(loss: Tensor) -> list[dict]:
    """The backward walk of ``loss`` in visit order, one row per node: its id, its step's
    name (``"leaf"`` for a leaf), the gradients that arrived (``(from id, values)`` each) and
    what its step sent (``(to id, values)`` each). The graph is retained, so ``loss.backward()``
    still runs afterwards."""
    from minidl.autodiff.checkpoint import Checkpointer
    from minidl.autodiff.engine import reachable
    from minidl.autodiff.step import State
    from minidl.backend.dtype import DType
    from minidl.dispatch import backend_for

    B = backend_for(loss.device)._inner
    root = loss.primitive.backend_tensor
    arrived = {root.node.id: [(None, np.ones(loss.shape))]}
    pending = {
        root.node.id: B.float_ones(
            root.shape, DType.of(root.inner.dtype), B.float_device(root.inner)
        )
    }
    checkpointer, rows = Checkpointer(B), []
    for node in reachable(root.node):
        grad, step = pending.pop(node.id, None), node.step
        row = {
            "id": node.id,
            "op": "leaf" if step is None else type(step).__name__,
            "in": arrived.get(node.id, []),
            "out": [],
        }
        if step is not None and grad is not None:
            outs = step.backward(B, grad, State(step, node, checkpointer))
            for parent, tracked, g in zip(step.inputs, step.tracked, outs, strict=True):
                if tracked and g is not None:
                    row["out"].append((parent.id, B.float_into_data(g).array))
                    arrived.setdefault(parent.id, []).append((node.id, B.float_into_data(g).array))
                    pending[parent.id] = (
                        g if parent.id not in pending else B.float_add(pending[parent.id], g)
                    )
            checkpointer.release(node)
        rows.append(row)
    return rows


def draw_walk(rows: list[dict]):
    """One line per visited node: what arrived (each term, then their sum) and what its
    step sent to which parent."""
    import matplotlib.pyplot as plt

    def fmt(a) -> str:
        return "[" + ", ".join(f"{v:.2f}" for v in np.ravel(a)) + "]"

    heights = [1 if len(r["in"]) < 2 else 0.6 * (len(r["in"]) + 1) + 0.2 for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.4 * sum(heights) + 0.6))
    ax.axis("off")
    ax.set(xlim=(0, 1), ylim=(sum(heights) + 0.2, -1))
    for x, head in (
        (0.0, "visit: node"),
        (0.2, "gradients that arrive (and their sum)"),
        (0.6, "its step sends (to: values)"),
    ):
        ax.text(0.0 + x, -0.5, head, weight="bold", fontsize=9)
    y = 0.0
    for k, (row, h) in enumerate(zip(rows, heights, strict=True)):
        ax.text(
            0.0, y, f"{k + 1}: #{row['id']} {row['op']}", fontsize=9, family="monospace", va="top"
        )
        lines = [
            "ones (the root)" if src is None else f"from #{src}: {fmt(g)}" for src, g in row["in"]
        ]
        if len(lines) > 1:
            lines.append(f"sum: {fmt(sum(g for _, g in row['in']))}")
        ax.text(0.2, y, "\n".join(lines), fontsize=8, family="monospace", va="top", linespacing=1.5)
        sent = "\n".join(f"#{p}: {fmt(g)}" for p, g in row["out"]) or "(a leaf: its sum is kept)"
        ax.text(0.6, y, sent, fontsize=8, family="monospace", va="top", linespacing=1.5)
        y += h
    plt.tight_layout()
    return fig
