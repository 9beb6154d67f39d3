"""Where the graph lives: minidl's nodes own their steps; burn's ``AutodiffServer`` keeps
them in one map keyed by ``NodeId`` (burn-autodiff ``runtime/server.rs:31-35``).

:data:`BURN_LINES` cites burn's source for the chapter's figure (``tests/book`` checks every
line against the mirror at :data:`TAG`); :func:`steps_alive` measures, live, which steps a
loop of forwards without backward leaves behind; :func:`figure` draws the two panels.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from minidl.autodiff.node import Node, walk

#: The burn tag the citations are read at.
TAG = "v0.22.0-pre.2"
#: ``(path under crates/burn-autodiff/src/, first line, last line, text each range holds)``.
BURN_LINES: tuple[tuple[str, int, int, str], ...] = (
    ("runtime/server.rs", 31, 35, "steps: HashMap<NodeId, StepBoxed>"),
    ("runtime/server.rs", 31, 35, "memory_management: GraphMemoryManagement"),
    ("runtime/server.rs", 52, 60, "self.steps.insert(node_id, step)"),
    ("runtime/server.rs", 69, 69, "self.steps.remove(&node_id)"),
    ("graph/traversal.rs", 41, 41, "steps.remove(&id)"),
    ("runtime/server.rs", 89, 101, ".free_unavailable_nodes("),
    ("runtime/memory_management.rs", 264, 269, "Arc::strong_count(key) > 1"),
    ("runtime/graph.rs", 127, 127, "GraphCleaner::cleanup_orphaned_entries()"),
    ("graph/node.rs", 41, 45, "pub parents: Vec<Parent>"),
    ("checkpoint/builder.rs", 75, 80, "If no explicit action ever asks for the child's"),
)


def _steps(root: Node) -> list[Any]:
    return [node.step for node in walk(root) if node.step is not None]


def steps_alive(forward: Callable[[], Any], times: int) -> tuple[int, int]:
    """Run ``forward`` (it returns a tensor on an autodiff device) ``times`` times, keeping
    only the last result, as ``loss = forward()`` in a loop does, and never call backward.
    Returns ``(steps still alive, steps recorded)``, read with weak references."""
    refs: list[weakref.ref] = []
    loss = None
    for _ in range(times):
        loss = forward()
        refs += [weakref.ref(s) for s in _steps(loss.primitive.backend_tensor.node)]
    gc.collect()
    alive = sum(r() is not None for r in refs)
    del loss
    return alive, len(refs)


def _box(axis, x: float, y: float, text: str, fill: str, size: int = 8) -> None:
    axis.text(x, y, text, ha="center", va="center", fontsize=size, family="monospace",
              bbox={"boxstyle": "round", "fc": fill, "ec": "0.4"})


def _arrow(axis, start: tuple[float, float], end: tuple[float, float],
           color: str = "0.3", style: str = "-") -> None:
    axis.annotate("", xy=end, xytext=start, arrowprops={
        "arrowstyle": "->", "color": color, "lw": 1.2, "ls": style})


def figure(root: Node, names: dict[int, str]) -> Figure:
    """Two panels for the graph behind ``root`` (a live minidl node): minidl's nodes, each
    holding its step and what the step saved; burn's nodes (id, parents, order) and the
    server's ``steps`` map that holds the same steps by id."""
    nodes = [n for n in walk(root) if n.step is not None][::-1]  # root first
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.6, 0.7 + 0.75 * len(nodes)))
    ys = [0.8 - 0.27 * k for k in range(len(nodes))]
    for axis in (left, right):
        axis.set_xlim(0, 1)
        axis.set_ylim(ys[-1] - 0.2, 1.0)
        axis.axis("off")
    left.set_title("minidl: each node owns its step", fontsize=10)
    right.set_title("burn: steps sit in the server, by NodeId", fontsize=10)
    for node, y in zip(nodes, ys, strict=True):
        step = node.step
        saved = ", ".join(step.saved) or "nothing"
        parents = ", ".join(names.get(p.id, f"#{p.id}") for p in node.parents)
        _box(left, 0.2, y, f"node #{node.id}\nparents {parents}", "#E3F2FD")
        _box(left, 0.7, y, f"step {type(step).__name__}\nsaved: {saved}", "#FFF3E0")
        _arrow(left, (0.37, y), (0.53, y))
        _box(right, 0.17, y, f"Node #{node.id}\nparents {parents}", "#E3F2FD")
    top, bottom = ys[0] + 0.11, ys[-1] - 0.11
    right.add_patch(plt.Rectangle((0.4, bottom), 0.58, top - bottom, fc="#FAFAFA",
                                  ec="0.4"))
    right.text(0.69, top - 0.02, "AutodiffServer", ha="center", va="top", fontsize=8,
               family="monospace")
    for node, y in zip(nodes, ys, strict=True):
        right.text(0.44, y, f"steps[#{node.id}] = {type(node.step).__name__}",
                   va="center", fontsize=8, family="monospace",
                   bbox={"boxstyle": "round", "fc": "#FFF3E0", "ec": "0.4"})
        _arrow(right, (0.31, y), (0.43, y), "tab:blue", "--")
    right.text(0.69, bottom - 0.06, "+ actions_builder, memory_management", ha="center",
               fontsize=7, family="monospace", color="0.3")
    fig.tight_layout()
    return fig


__all__ = ["BURN_LINES", "TAG", "figure", "steps_alive"]
