"""The intro's pictures and its first exercise's experiment.

- :func:`package_map`: the packages one ``Linear.forward`` crosses, drawn as a
  :class:`~minidl.debug.flowchart.Flowchart`; with ``chapters``, each box carries the names of
  the chapters that explain it.
- :func:`packages_on_the_path`: trace one forward down to its gemm kernel and list the minidl
  packages its frames belong to, in order of first appearance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from minidl import Device, Tensor, debug
from minidl.debug.flowchart import Flowchart
from minidl.nn import LinearConfig

Box = tuple[str, str, str, str]  # id, package in minidl, burn crate, what it holds

#: The arrows of one Linear.forward, numbered in call order: (from, to, label, dashed). Step 4
#: dips into a default op of the Backend protocol, which calls back up into Dispatch (step 5);
#: the dashed flex -> backend arrow is no call: Flex implements the protocol.
PATH = (
    ("nn", "module", "1 weight.val()", False),
    ("nn", "tensor", "2 linear(x, W, b)", False),
    ("tensor", "dispatch", "3 Dispatch.linear", False),
    ("dispatch", "backend", "4 default op", False),
    ("backend", "dispatch", "5 back up", False),
    ("dispatch", "autodiff", "6 by device", False),
    ("autodiff", "flex", "7 float_matmul", False),
    ("flex", "backend", "implements", True),
)


def package_map(boxes: Sequence[Box], chapters: Mapping[str, str] | None = None) -> Flowchart:
    """The seven boxes and the numbered arrows of one forward; ``chapters`` maps a box id to
    the names of the chapters that explain that box (printed under what it holds)."""
    title = "The packages one Linear.forward crosses"
    if chapters:
        title += ", with the chapters that explain each"
    chart = Flowchart("TB", title=title)
    for key, package, crate, holds in boxes:
        label = f"minidl.{package:<15}{crate}\n{holds}"
        if chapters and chapters.get(key):
            label += "\n" + chapters[key]
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
