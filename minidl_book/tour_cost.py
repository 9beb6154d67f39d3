"""What the tour's linear hole costs, counted: the split path against one ``linear`` step.

burn-dispatch at v0.22.0-pre.2 has no ``linear`` forwarder (``ops/module.rs:733``), so on an
autodiff device the default body records ``Matmul``, ``Reshape`` and ``Add``. burn-autodiff's
own ``linear`` (``ops/module.rs:63``) records one ``LinearWithBias`` step that keeps ``x``
only when the weight is tracked and the weight only when ``x`` is. :func:`hole_cost` runs
the same layer both ways (the second with Dispatch's missing forwarder installed, as
:func:`minidl_book.dispatch_linear.forwarding_linear` does) and counts: steps recorded,
bytes the graph keeps for backward, calls routed through Dispatch, kernels launched in
forward and in the layer's backward. Counts only, no timings.
"""

from __future__ import annotations

from dataclasses import dataclass

from minidl import Tensor, debug
from minidl_book.dispatch_linear import forwarding_linear

__all__ = ["PathCost", "hole_cost", "measure", "cost_table"]

#: a shape check that hands the op on (``binary_same_shape``) computes nothing
_NOT_COMPUTING = {"binary_same_shape"}


@dataclass(frozen=True)
class PathCost:
    """One forward of a layer and the backward of its output's sum, counted."""

    steps: tuple[str, ...]
    bytes_kept: int
    routed: int
    forward_kernels: tuple[str, ...]
    backward_kernels: tuple[str, ...]


def _kernels(trace, within: set[str] | None = None) -> tuple[str, ...]:
    """The kernels the trace hit, minus shape checks; with ``within``, only those run
    under one of these frames (a step's ``backward``)."""
    names = []
    for hit in trace.hits:
        if not hit.name.startswith("kernel "):
            continue
        name = hit.name.removeprefix("kernel ").removesuffix(" [numba]")
        if name in _NOT_COMPUTING:
            continue
        if within is None or any(f.name in within for f in hit.frames):
            names.append(name)
    return tuple(names)


def measure(layer, x: Tensor) -> PathCost:
    """``layer(x)`` counted (the layer's lazy params are made first, outside the count),
    then ``layer(x).sum().backward()``, counting only the layer's steps' kernels."""
    layer(x)  # lazy init happens here, not in the count
    fwd = debug.trace(lambda: layer(x), breakpoints=[r"^kernel ", r"^Dispatch\."],
                      echo=False)
    y = fwd.result
    graph = debug.graph(y)
    loss = y.sum()
    bwd = debug.trace(lambda: loss.backward(), breakpoints=[r"^kernel "], echo=False)
    return PathCost(
        steps=tuple(graph.ops),
        bytes_kept=graph.memory,
        routed=sum(h.name.startswith("Dispatch.") for h in fwd.hits),
        forward_kernels=_kernels(fwd),
        backward_kernels=_kernels(bwd, {f"{op}.backward" for op in graph.ops}),
    )


def hole_cost(layer, x: Tensor) -> dict[str, PathCost]:
    """The same ``layer(x)`` as burn 0.22 runs it (``"split"``: Dispatch runs the default
    body) and with Dispatch forwarding ``linear`` (``"one step"``: Autodiff's linear)."""
    split = measure(layer, x)
    with forwarding_linear():
        one = measure(layer, x)
    return {"split": split, "one step": one}


def cost_table(costs: dict[str, PathCost]) -> str:
    """The counts side by side, one row per measure, one column per path."""
    rows = [
        ("steps recorded", lambda c: ", ".join(c.steps)),
        ("bytes kept", lambda c: f"{c.bytes_kept} B"),
        ("calls on Dispatch", lambda c: str(c.routed)),
        ("kernels, forward", lambda c: str(len(c.forward_kernels))),
        ("kernels, backward", lambda c: str(len(c.backward_kernels))),
    ]
    heads = list(costs)
    cells = [[what] + [fn(costs[h]) for h in heads] for what, fn in rows]
    widths = [max(len(r[i]) for r in cells + [[""] + heads]) for i in range(len(heads) + 1)]
    lines = ["  ".join(h.ljust(w) for h, w in zip([""] + heads, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)
