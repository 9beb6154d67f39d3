"""The intro's picture, its PyTorch column and its first exercise's experiment.

- :data:`BOXES`: the seven packages one ``Linear.forward`` crosses, each with its burn crate.
- :func:`torch_column`: what PyTorch does at each box, read from PyTorch itself (the
  dispatcher's keys of a parameter, the profiler's op tree of ``nn.Linear``).
- :func:`package_map`: the boxes and the numbered arrows of one forward, drawn as a
  :class:`~minidl.debug.flowchart.Flowchart` whose detour into a default op (steps 4 and 5)
  is orange; with ``pytorch``, each box also says what PyTorch does there.
- :func:`torch_op_tree`: the profiler's op tree of one call, with the profiler's own
  start/stop lines kept off the page.
- :func:`packages_on_the_path`, :func:`skipped_on_plain`: the first exercise's experiment.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import torch

from minidl import Device, Tensor, debug
from minidl.debug.flowchart import EDGE_COLOR, LABEL_BG, TEXT_COLOR, Flowchart
from minidl.nn import LinearConfig

Box = tuple[str, str, str, str]  # id, package in minidl, burn crate, what it holds

#: The seven packages of one Linear.forward, top to bottom.
BOXES: tuple[Box, ...] = (
    ("nn", "nn", "burn-nn", "Linear, Dropout, BatchNorm"),
    ("module", "module", "burn-core", "Module, Param, Config"),
    ("tensor", "tensor", "burn-tensor", "Tensor, functional ops"),
    ("dispatch", "dispatch", "burn-dispatch", "Device, Dispatch"),
    ("autodiff", "autodiff", "burn-autodiff", "Autodiff[B]: wraps B, records"),
    ("flex", "backends.flex", "burn-flex", "CPU backend, numba kernels"),
    ("backend", "backend", "burn-backend", "the Backend protocol, default ops"),
)

#: The arrows of one Linear.forward, numbered in call order: (from, to, label, dashed). Step 4
#: dips into a default op of the Backend protocol, which calls back up into Dispatch (step 5);
#: the dashed flex -> backend arrow is no call: Flex implements the protocol.
PATH = (
    ("nn", "module", "1 weight.val()", False),
    ("nn", "tensor", "2 linear(x, W, b)", False),
    ("tensor", "dispatch", "3 Dispatch.linear", False),
    ("dispatch", "backend", "4 ↓ default op", False),
    ("backend", "dispatch", "5 ↑ back up", False),
    ("dispatch", "autodiff", "6 by device", False),
    ("autodiff", "flex", "7 float_matmul", False),
    ("flex", "backend", "implements", True),
)


@contextmanager
def _quiet_stderr():
    """Send the process's stderr (file descriptor 2) to /dev/null: PyTorch's profiler writes
    its ``profiler_start``/``profiler_stop`` lines there, below Python."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def torch_op_tree(call: Callable[[], object]) -> dict[str, list[str]]:
    """Run ``call`` under ``torch.profiler``; each aten op's children, by name, in order
    (``""`` holds the top-level ops)."""
    with _quiet_stderr(), torch.profiler.profile() as prof:
        call()
    tree: dict[str, list[str]] = {}
    for event in prof.events():
        parent = event.cpu_parent.name if event.cpu_parent is not None else ""
        tree.setdefault(parent, []).append(event.name)
    return tree


def torch_column(linear: torch.nn.Linear, rows: torch.Tensor) -> dict[str, str]:
    """What PyTorch does at each box of :data:`BOXES` for ``linear(rows)``, read from PyTorch:
    the dispatcher's keys of the weight and the profiler's op tree of one forward."""
    keys = str(torch._C._dispatch_keys(linear.weight))  # DispatchKeySet(CPU, …, AutogradCPU…)
    named = [k for k in ("AutogradCPU", "CPU") if k in keys.split("(")[1].split(", ")]
    tree = torch_op_tree(lambda: linear(rows))
    composite = " + ".join(op.removeprefix("aten::") for op in tree["aten::linear"])
    in_addmm = [op.removeprefix("aten::") for op in tree["aten::addmm"]]
    bias = "copy_ bias" if "copy_" in in_addmm else "?"
    return {
        "nn": "nn.Linear",
        "module": "nn.Module, nn.Parameter",
        "tensor": "F.linear → aten::linear",
        "dispatch": f"the dispatcher, by keys: {', '.join(named)}",
        "autodiff": "autograd: the AutogradCPU key",
        "flex": f"aten CPU kernels; addmm: {bias}, then GEMM",
        "backend": f"composite ops: linear = {composite}",
    }


#: The detour's colour: the arrows of steps 4 and 5, and their labels.
DETOUR = "#D9730D"


class PathMap(Flowchart):
    """A :class:`Flowchart` whose detour arrows (labels ``4 …``, ``5 …``) are drawn orange,
    the labels of steps 4 and 6 side by side on one level (6 no longer reads above 4)."""

    def _edge_path(self, i, e, nodes, ports):  # noqa: ANN001, ANN202 - Flowchart's signature
        d, mid = super()._edge_path(i, e, nodes, ports)
        share = {"4 ": 0.55, "6 ": 0.82}.get((e.label or "")[:2])
        if share is not None:  # steps 4 and 6 side by side, one level, apart
            a, b = nodes[e.chain[0]], nodes[e.chain[1]]  # the first leg
            p = self._pt(*self._anchor(a, (b.x, b.y), ports.get((i, 0))))
            q = self._pt(*(self._anchor(b, (a.x, a.y), ports.get((i, 1))) if b.id == e.b
                           else (b.x, b.y)))
            mid = (p[0] + share * (q[0] - p[0]), p[1] + share * (q[1] - p[1]))
        return d, mid

    def svg(self) -> str:
        out = super().svg()
        for a, b, label, _ in PATH:
            if label[:2] in ("4 ", "5 "):
                out = re.sub(
                    rf'(<path class="edge" data-from="{a}" data-to="{b}" [^>]*?)stroke="{EDGE_COLOR}"'
                    rf'( stroke-width="1.4")',
                    rf'\1stroke="{DETOUR}"\2', out)
                out = re.sub(rf'(<g class="edge-label"><rect [^>]*?)fill="{LABEL_BG}"'
                             rf'([^>]*/><text [^>]*?)fill="{TEXT_COLOR}"([^>]*><tspan [^>]*>'
                             rf'{re.escape(label)}<)',
                             r'\1fill="#FBE3CC"\2fill="#8A4200"\3', out)
        return out


def package_map(
    boxes: Sequence[Box] = BOXES, pytorch: Mapping[str, str] | bool | None = None
) -> Flowchart:
    """The seven boxes and the numbered arrows of one forward; ``pytorch`` maps a box id to
    what PyTorch does there (printed as a last line, ``torch: …``), or is ``True``: then
    :func:`torch_column` reads it from a fresh ``nn.Linear(4, 2)`` on a ``[3, 4]`` input."""
    if pytorch is True:
        pytorch = torch_column(torch.nn.Linear(4, 2), torch.zeros(3, 4))
    title = "The packages one Linear.forward crosses"
    if pytorch:
        title += ", and what PyTorch does at each"
    chart = PathMap("TB", title=title)
    for key, package, crate, holds in boxes:
        label = f"minidl.{package:<15}{crate}\n{holds}"
        if pytorch and pytorch.get(key):
            label += f"\ntorch: {pytorch[key]}"
        chart.node(key, label, align="left")
    for a, b, label, dashed in PATH:
        chart.edge(a, b, label, dashed=dashed)
    return chart


def packages_on_the_path(device: Device, rows: np.ndarray) -> list[str]:
    """Trace one ``Linear(4, 2)`` forward on ``device`` down to the gemm kernel; the minidl
    packages of its frames (``minidl.backends.flex`` for Flex), each once, outermost first."""
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(rows, device)
    layer(x)  # draw the params first: the trace below sees the forward only
    hit = debug.trace(lambda: layer(x), breakpoints=r"^kernel gemm", echo=False).first()
    names: list[str] = []
    for frame in reversed(hit.frames):
        if frame.library:
            parts = frame.path.split("/")[1:-1]  # minidl/backends/flex/… → backends.flex
            package = ".".join(parts[:2]) if parts[0] == "backends" else parts[0]
            if f"minidl.{package}" not in names:
                names.append(f"minidl.{package}")
    return names


def skipped_on_plain(rows: np.ndarray) -> str:
    """The one package a forward on ``Device.flex()`` skips that one on its autodiff twin
    crosses."""
    on_autodiff = packages_on_the_path(Device.flex().autodiff(), rows)
    on_plain = packages_on_the_path(Device.flex(), rows)
    (skipped,) = sorted(set(on_autodiff) - set(on_plain))
    return skipped
