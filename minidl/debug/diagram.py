"""Path diagrams: a backtrace drawn the way the burn book draws its call paths (``flowchart TB``).

One box per frame, outermost at the top, arrows downwards; boxes are coloured by the layer
they belong to (nn, tensor, dispatch, autodiff, backend, kernel — the layers of ARCHITECTURE.md), protocol
default bodies are drawn with round corners, and a legend names the colours. Several traces
(Linear, Conv2d, LayerNorm) merge into one picture like the first flowchart of the burn book's nn-modules chapter: frames with
the same name become one box. Rendering is :mod:`minidl.debug.flowchart` (pure Python SVG), so
the picture shows inline in a notebook and in the built site without any JavaScript.
"""

from __future__ import annotations

import re
from html import escape

from minidl.debug.flowchart import FONT_FAMILY, Flowchart
from minidl.debug.frames import Frame, Hit

__trace_hide__ = True

#: fill and stroke of each layer's boxes
COLORS: dict[str, tuple[str, str]] = {
    "user": ("#F4F4F4", "#9E9E9E"),
    "nn": ("#E8F5E9", "#43A047"),
    "tensor": ("#E3F2FD", "#1E88E5"),
    "dispatch": ("#FFF3E0", "#FB8C00"),
    "autodiff": ("#F3E5F5", "#8E24AA"),
    "backend": ("#FFEBEE", "#E53935"),
    "kernel": ("#FFFDE7", "#C49000"),
}


def layer_of_name(name: str) -> str:
    """A layer for a bare name (when only names are given): ``Dispatch.x`` → dispatch, …"""
    if name.startswith("kernel "):
        return "kernel"
    if name.startswith("Dispatch") or name.endswith("[Dispatch]"):
        return "dispatch"
    if name.startswith("Autodiff") or "[Autodiff" in name:
        return "autodiff"
    if name.startswith(("Flex", "NdArray")) or name.endswith(("[Flex]", "[NdArray]")):
        return "backend"
    if name.startswith(("module.", "Tensor.")):
        return "tensor"
    if name.endswith((".forward", ".__call__")):
        return "nn"
    return "user"


class _Step:
    __slots__ = ("name", "layer", "note", "where")

    def __init__(self, name: str, layer: str, note: str = "", where: str = ""):
        self.name, self.layer, self.note, self.where = name, layer, note, where


def _steps_of_hit(hit: Hit, kernels: bool, library_only: bool, hops_only: bool = True) -> list[_Step]:
    frames: list[Frame] = [
        f for f in reversed(hit.frames)
        if (f.library or not library_only) and (f.hop or not hops_only or f.index == 0)
    ]
    steps = [_Step(f.name, f.layer, f.note, f"{f.path}:{f.line}") for f in frames]
    if kernels:
        steps += [_Step(k, "kernel") for k in hit.kernels if k not in {s.name for s in steps}]
    return steps


def _paths(source, hit: int, kernels: bool, library_only: bool, hops_only: bool) -> list[list[_Step]]:
    """Normalize what :func:`path_diagram` accepts into lists of steps (outermost first)."""
    if isinstance(getattr(source, "hits", None), list):  # a Trace (which imports this module)
        if not source.hits:
            raise ValueError("the trace has no hits: nothing to draw")
        return [_steps_of_hit(source.hits[hit], kernels, library_only, hops_only)]
    if isinstance(source, Hit):
        return [_steps_of_hit(source, kernels, library_only, hops_only)]
    items = list(source)
    if items and all(isinstance(x, str) for x in items):
        return [[_Step(n, layer_of_name(n)) for n in items]]
    if items and all(isinstance(x, Frame) for x in items):  # a backtrace: innermost first
        return [[_Step(f.name, f.layer, f.note, f"{f.path}:{f.line}") for f in reversed(items)]]
    out: list[list[_Step]] = []
    for item in items:
        out.extend(_paths(item, hit, kernels, library_only, hops_only))
    return out


class PathDiagram:
    """An SVG picture of one or more call paths. ``svg()`` gives the markup; notebooks and the
    built book display it inline (``_repr_svg_`` / ``_repr_html_``); ``names`` lists the boxes."""

    def __init__(self, chart: Flowchart, layers: list[str], legend: bool = True):
        self.chart = chart
        self.layers = layers
        self.legend = legend

    @property
    def names(self) -> list[str]:
        """The qualified names drawn, one per box."""
        return [label.split("\n", 1)[0] for label in self.chart.nodes.values()]

    def svg(self) -> str:
        """The whole picture (flowchart plus legend) as one ``<svg>`` element."""
        svg = self.chart.svg()
        if not self.legend or not self.layers:
            return svg
        head = re.match(r'<svg[^>]*width="([\d.]+)" height="([\d.]+)" viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
        if head is None:  # pragma: no cover - the renderer always writes these attributes
            return svg
        w, h = float(head.group(3)), float(head.group(4))
        items, x = [], 12.0
        for layer in self.layers:
            fill, stroke = COLORS.get(layer, COLORS["user"])
            items.append(
                f'<rect x="{x:.1f}" y="{h + 4:.1f}" width="14" height="14" rx="2" fill="{fill}" stroke="{stroke}"/>'
                f'<text x="{x + 19:.1f}" y="{h + 15:.1f}" font-size="12" fill="#333">{escape(layer)}</text>'
            )
            x += 19 + 7.6 * len(layer) + 18
        width, height = max(w, x), h + 26
        legend = f'<g class="legend" font-family="{escape(FONT_FAMILY)}">{"".join(items)}</g>'
        start = svg.index(">") + 1
        header = re.sub(
            r'width="[\d.]+" height="[\d.]+" viewBox="0 0 [\d.]+ [\d.]+"',
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.1f} {height:.1f}"',
            svg[:start], count=1,
        )
        body = svg[start:].rsplit("</svg>", 1)[0]
        return f"{header}{body}{legend}</svg>"

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        return f'<div class="minidl-path" style="overflow-x:auto">{self.svg()}</div>'

    def save(self, path: str) -> None:
        """Write the SVG to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg())

    def __repr__(self) -> str:
        return f"<PathDiagram: {' → '.join(self.names)}>"


def path_diagram(source: object, hit: int = 0, detail: bool = False,
                 kernels: bool = True, library_only: bool = True, hops_only: bool = True,
                 title: str | None = None, legend: bool = True) -> PathDiagram:
    """Draw call paths top to bottom, one box per frame, coloured by layer.

    Args:
        source: a :class:`Trace` (its hit number ``hit``), a :class:`Hit`, a backtrace (list of
            :class:`Frame`, innermost first), a list of names (outermost first), or a list of
            any of these — several paths are merged, frames with the same name and note drawn once.
        detail: add ``file:line`` under each name.
        kernels: draw the numba kernels a stopped function called, below it.
        library_only: leave out frames outside minidl (the caller's lambda, a test).
        hops_only: draw only the layers' entry points (see :class:`Frame`), not helpers.
        title: an accessible title for the SVG.
    """
    paths = _paths(source, hit, kernels, library_only, hops_only)
    chart = Flowchart("TB", title=title)
    # keyed by name *and* note: a generated forwarder and a default body can share a name
    # (``Dispatch.linear``), and each box must say what ran
    ids: dict[tuple[str, str], str] = {}
    used: list[str] = []
    edges: set[tuple[str, str]] = set()
    for steps in paths:
        prev = None
        for step in steps:
            key = (step.name, step.note)
            if key not in ids:
                ids[key] = f"f{len(ids)}"
                label = step.name
                if step.note:
                    label += f"\n({step.note})"
                if detail and step.where:
                    label += f"\n{step.where}"
                fill, stroke = COLORS.get(step.layer, COLORS["user"])
                shape = "round" if step.note else "box"
                chart.node(ids[key], label, shape=shape, fill=fill, stroke=stroke)
                if step.layer not in used:
                    used.append(step.layer)
            node = ids[key]
            if prev is not None and (prev, node) not in edges:
                edges.add((prev, node))
                chart.edge(prev, node)
            prev = node
    order = [layer for layer in COLORS if layer in used]
    return PathDiagram(chart, order, legend)


def merge_paths(*sources, **kw) -> PathDiagram:
    """Several traces in one picture (the nn-modules chapter's Linear / Conv2d / LayerNorm flowchart)."""
    return path_diagram(list(sources), **kw)
