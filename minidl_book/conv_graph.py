"""The conv-backward chapter's experiment: conv2d left to autodiff, op by op.

``from_basic_ops(device)`` installs the nn-modules chapter's conv2d from basic ops
(:func:`minidl_book.build_conv2d.conv2d`: pad by cat, one slice per tap, cat, permute,
reshape, matmul) as the ``conv2d`` of the backend ``device`` dispatches to, for the block
only. On ``Device.flex().autodiff()`` that backend is ``Autodiff[Flex]``, so each of those ops
is recorded as its own step and autodiff differentiates the convolution by itself, the way
a framework without a dedicated conv step would. :func:`backward_calls` counts the inner
backend's calls one backward makes, :func:`backward_seconds` times one backward (CPU time,
best of N), and :func:`draw_graphs` draws the two graphs side by side, the arrays each keeps
drawn to scale.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator

import matplotlib.pyplot as plt

from minidl.backends.flex.backend import Flex
from minidl.debug.op_timer import BackendOpTimer
from minidl.dispatch.route import backend_for
from minidl_book import build_conv2d

__all__ = ["backward_calls", "backward_seconds", "draw_graphs", "from_basic_ops"]


@contextlib.contextmanager
def from_basic_ops(device) -> Iterator[None]:
    """Inside the block, ``conv2d`` on ``device`` runs as basic ops (each one recorded as a
    step on an autodiff device) instead of the backend's own conv2d."""
    backend = backend_for(device)
    saved = vars(backend).get("conv2d")
    backend.conv2d = classmethod(build_conv2d.conv2d)
    try:
        yield
    finally:
        if saved is not None:
            backend.conv2d = saved
        else:
            del backend.conv2d


def backward_calls(out) -> tuple[dict, int]:
    """``(grads, calls)``: the gradients of ``out.sum()`` and the number of outermost Flex
    calls its backward made for the steps behind ``out`` (a ``conv2d_x_backward`` that runs a
    transposed conv inside counts once); the calls of the sum's own backward, counted on a
    detached copy of ``out``, are left out."""
    copy, loss = out.detach().require_grad().sum(), out.sum()
    with BackendOpTimer(Flex) as alone:
        copy.backward()
    with BackendOpTimer(Flex) as timer:
        grads = loss.backward()
    return grads, sum(timer.calls.values()) - sum(alone.calls.values())


def backward_seconds(make_out: Callable, grads_of: tuple, repeats: int = 7) -> float:
    """The least CPU time (``time.process_time``) over ``repeats`` runs of one backward of
    ``make_out().sum()``, the gradients of the tensors ``grads_of`` read out to numpy (so a
    lazy backend has run them); each run records a fresh forward, untimed."""
    best = float("inf")
    for _ in range(repeats):
        out = make_out()
        out.to_numpy()  # the forward done before the clock starts
        loss = out.sum()
        start = time.process_time()
        grads = loss.backward()
        for t in grads_of:
            t.grad(grads).to_numpy()
        best = min(best, time.process_time() - start)
    return best


def _kept(view) -> list[tuple[str, str, float]]:
    """(step, saved name, KiB) of every array a graph keeps, from its records' text."""
    out = []
    for r in view.records:
        for name, text in r.saved.items():
            kib = float(re.search(r"\(([\d.]+) KiB\)", text).group(1))
            shape = re.search(r"\[[\d, ]+\]", text).group(0)
            out.append((r.op, f"{name} {shape}", kib))
    return out


def draw_graphs(one, basic, names: dict[str, str] | None = None) -> dict:
    """The one-step graph (left) beside the graph of basic ops (right): each recorded step a
    box, in the order recorded, the steps that keep arrays in red, and under each graph the
    arrays it keeps for backward as squares whose areas are their bytes (one scale for both).
    ``one`` and ``basic`` are :func:`minidl.debug.graph` views; ``names`` renames saved
    entries (``{"lhs": "patches"}``). Returns ``{"one": [...], "basic": [...]}``, the kept
    arrays drawn, as (step, label, KiB)."""
    names = names or {}
    kept = {"one": _kept(one), "basic": _kept(basic)}
    fig, ax = plt.subplots(figsize=(7.5, 5.4))
    unit = max(k for _, _, k in kept["one"])  # the side-1 square: the one step's largest
    ops_one, ops_basic = list(one.ops), list(basic.ops)
    savers = {op for op, _, _ in kept["basic"]} | {op for op, _, _ in kept["one"]}

    def chain(ops, x0, per_row, width):
        for k, op in enumerate(ops):
            col, row = k % per_row, k // per_row
            face = "#FFCDD2" if op in savers else "#ECEFF1"
            ax.add_patch(plt.Rectangle((x0 + col * width, row * 0.55), width - 0.08, 0.45,
                                       facecolor=face, edgecolor="#90A4AE", lw=0.6))
            ax.text(x0 + col * width + (width - 0.08) / 2, row * 0.55 + 0.23, op,
                    ha="center", va="center", fontsize=8)
        return (len(ops) - 1) // per_row + 1

    def squares(items, x0, y0):
        x = x0
        for _op, label, kib in items:
            side = (kib / unit) ** 0.5 * 1.05
            ax.add_patch(plt.Rectangle((x, y0), side, side, facecolor="#EF9A9A",
                                       edgecolor="#B71C1C", lw=0.8))
            copies = round((kib / unit) ** 0.5)
            if copies > 1 and copies**2 * unit == kib:  # tiles the size of the unit
                for q in range(1, copies):
                    at = q * side / copies
                    ax.plot([x + at, x + at], [y0, y0 + side], color="#B71C1C", lw=0.5,
                            ls="--")
                    ax.plot([x, x + side], [y0 + at, y0 + at], color="#B71C1C", lw=0.5,
                            ls="--")
                ax.text(x + side / 2, y0 + side / 2, f"{copies**2} tiles the size of x",
                        ha="center", va="center", fontsize=8, color="#B71C1C",
                        bbox={"facecolor": "#EF9A9A", "edgecolor": "none"})
            name, shape = label.split(" ", 1)
            ax.text(x + side / 2, y0 + side + 0.12, f"{names.get(name, name)}\n{shape}"
                    f"\n{kib:g} KiB", ha="center", va="top", fontsize=8)
            x += max(side, 1.0) + 0.3
        return x

    ax.text(0, -0.35, "one recorded step", fontsize=8.5,
            fontweight="bold")
    rows_one = chain(ops_one, 0, 1, 2.2)
    ax.text(3.2, -0.35, f"conv2d from basic ops: {len(ops_basic)} steps, in order",
            fontsize=8.5, fontweight="bold")
    rows_basic = chain(ops_basic, 3.2, 6, 1.12)
    y_one, y_basic = rows_one * 0.55 + 0.55, rows_basic * 0.55 + 0.55
    total = {k: sum(kib for _, _, kib in v) for k, v in kept.items()}
    ax.text(0, y_one + 0.15, f"keeps {total['one']:g} KiB:", fontsize=8, va="top")
    squares(kept["one"], 0, y_one + 0.45)
    ax.text(3.2, y_basic + 0.15, f"keeps {total['basic']:g} KiB (the Matmul's operands):",
            fontsize=8, va="top")
    squares(kept["basic"][::-1], 3.2, y_basic + 0.45)
    ax.axvline(2.75, color="#B0BEC5", lw=0.8)
    ax.set_xlim(-0.1, 3.2 + 6 * 1.12 + 0.1)
    ax.set_ylim(y_basic + 0.45 + 1.05 * (total["basic"] / unit) ** 0.5 + 0.3, -0.7)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return kept
