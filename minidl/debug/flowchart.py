"""A pure-Python SVG flowchart renderer, in the style of mermaid ``flowchart TB``.

The burn book draws every call path as a mermaid flowchart, for example::

    flowchart TB
      lin["Linear forward"] --> flin["module linear"]
      flin --> dlin["Dispatch linear (default)"]

and the train/inference chapter draws the decision "flag on? → input on an autodiff
device? → drop or pass through" with ``yes``/``no`` edge labels. Mermaid needs a JavaScript
runtime (from a CDN, which an offline book cannot load); graphviz needs a ``dot`` binary.
This module draws the same pictures with nothing but Python: a layered layout (longest-path
layers, barycenter ordering, long edges routed through virtual points) written out as one
self-contained ``<svg>`` element. In a notebook a :class:`Flowchart` displays itself.

A chart is laid out to fit the book's text column (``MAX_WIDTH``, 752 px: the column;
619 px inside a dropdown), because a wider SVG is scaled down and its 13 px text
with it (a 1270 px chart showed 7 px text). When the natural layout is wider, :meth:`svg`
wraps long centred labels at spaces, stacks unconnected lanes (columns drawn side by
side) in rows, then turns the chart (``LR`` as ``TB``, or the other way), and keeps the
first layout that fits (else the narrowest);
``Flowchart(..., fit=False)`` draws exactly as asked.

>>> fc = Flowchart()
>>> fc.node("lin", "Linear.forward").node("flin", "module.linear")
Flowchart(direction='TB', nodes=2, edges=0)
>>> _ = fc.edge("lin", "flin")
>>> fc.svg().startswith("<svg")
True

:meth:`Flowchart.chain` draws a call path from a list of frames (outermost first).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from html import escape

from minidl.debug.flowchart_layout import (
    EDGE_LABEL_FONT,
    FONT_SIZE,
    LINE_H,
    MARGIN,
    MAX_WIDTH,
    PAD_X,
    LayeredLayout,
    LayoutEdge,
    LayoutNode,
    label_size,
)

__all__ = ["Flowchart", "from_edges"]

SHAPES = ("box", "round", "diamond")
DIRECTIONS = ("TB", "LR")

# mermaid's default theme
NODE_FILL, NODE_STROKE, EDGE_COLOR = "#ECECFF", "#9370DB", "#333333"
LABEL_BG, TEXT_COLOR = "#E8E8E8", "#222222"
FONT_FAMILY = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"


class Flowchart(LayeredLayout):
    """A directed graph drawn as an SVG flowchart (mermaid ``flowchart TB``/``LR``).

    Build it with :meth:`node` and :meth:`edge` (both return ``self``, so calls chain); an
    edge to an unknown id creates a box labelled with the id, as mermaid does. Labels may
    hold several lines (``"\\n"``); they are drawn in a monospace font with spaces kept,
    so aligned text (``frame #4: …``) stays aligned. Get the picture with :meth:`svg`;
    notebooks and jupyter-book display the object directly.

    Args:
        direction: ``"TB"`` (top to bottom, the burn book's choice) or ``"LR"`` (left to right).
            The preferred direction: a chart wider than ``MAX_WIDTH`` this way may be drawn
            the other way (see the module docstring).
        title: optional accessible title (an SVG ``<title>``).
        fit: wrap labels and turn the chart when needed to stay within ``MAX_WIDTH``, so
            the text is never shrunk below ~11 px on the page; ``False`` draws as asked.
    """

    def __init__(self, direction: str = "TB", title: str | None = None, fit: bool = True) -> None:
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        self.direction = direction
        self.title = title
        self.fit = fit
        self._nodes: dict[str, LayoutNode] = {}
        self._edges: list[LayoutEdge] = []

    # -- building -------------------------------------------------------------------------

    def node(
        self, id: str, label: str | None = None, shape: str = "box", align: str = "center",
        fill: str | None = None, stroke: str | None = None,
    ) -> Flowchart:
        """Add (or relabel) node ``id``.

        ``shape`` is ``"box"``, ``"round"`` or ``"diamond"``; ``align="left"`` keeps the
        lines of a multi-line label flush left (for columns of monospace text); ``fill`` and
        ``stroke`` override the theme's colours for this node (path diagrams colour by layer).
        """
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
        if align not in ("center", "left"):
            raise ValueError(f"align must be 'center' or 'left', got {align!r}")
        text = str(id) if label is None else str(label)
        self._nodes[str(id)] = LayoutNode(str(id), text, shape, align, fill=fill, stroke=stroke)
        return self

    def edge(self, a: str, b: str, label: str | None = None, dashed: bool = False) -> Flowchart:
        """Add an arrow ``a --> b`` (``a -.-> b`` when ``dashed``), optionally labelled."""
        for end in (a, b):
            if str(end) not in self._nodes:
                self.node(str(end))
        self._edges.append(LayoutEdge(str(a), str(b), None if label is None else str(label), dashed))
        return self

    @classmethod
    def chain(
        cls, labels: Sequence[str], direction: str = "TB", shape: str = "box", **kw: object
    ) -> Flowchart:
        """A straight call path: one node per label, each calling the next.

        Use it for a backtrace printed outermost frame first (``Linear.forward`` →
        ``module.linear`` → … → ``Flex.float_matmul``).
        """
        fc = cls(direction=direction, **kw)  # type: ignore[arg-type]
        ids = [f"n{i}" for i in range(len(labels))]
        for i, text in zip(ids, labels):
            fc.node(i, text, shape=shape, align="left" if "\n" in text else "center")
        for a, b in zip(ids, ids[1:]):
            fc.edge(a, b)
        return fc

    @property
    def nodes(self) -> dict[str, str]:
        """Node ids mapped to their labels, in insertion order."""
        return {k: n.label for k, n in self._nodes.items()}

    @property
    def edges(self) -> list[tuple[str, str, str | None]]:
        """The edges as ``(a, b, label)`` triples, in insertion order."""
        return [(e.a, e.b, e.label) for e in self._edges]

    def __repr__(self) -> str:
        return (
            f"Flowchart(direction={self.direction!r}, nodes={len(self._nodes)}, "
            f"edges={len(self._edges)})"
        )

    # -- drawing --------------------------------------------------------------------------

    def _box(self, n: LayoutNode) -> tuple[float, float, float, float]:
        """Centre and size of a node in screen coordinates."""
        return (*self._pt(n.x, n.y), *self._pt(n.w, n.h))

    def _width(self, nodes: dict[str, LayoutNode]) -> float:
        return max((self._box(n)[0] + self._box(n)[2] / 2 for n in nodes.values()), default=0) + MARGIN

    def _fitted(self) -> tuple[str, int | None, bool]:
        """The (direction, wrap, pack) to draw with: the first of a few tries whose layout
        is at most ``MAX_WIDTH`` wide (long labels wrapped, side-by-side lanes stacked in
        rows, the chart turned), else the narrowest."""
        asked = self.direction
        if not getattr(self, "fit", True):
            return asked, None, False
        other = "TB" if asked == "LR" else "LR"
        tries = [(asked, None, False), (asked, 32, False), (asked, 24, False),
                 (asked, None, True), (asked, 24, True), (other, None, False),
                 (other, 32, False), (other, 24, False), (other, None, True),
                 (asked, 16, True), (other, 16, True)]
        best: tuple[float, str, int | None, bool] | None = None
        for direction, wrap, pack in tries:
            if pack and direction != "TB":  # LR parts already stack top to bottom
                continue
            with self._drawn_as(direction, wrap, pack):
                width = self._width(self._layout()[2])
            if width <= MAX_WIDTH:
                return direction, wrap, pack
            if best is None or width < best[0] - 1:
                best = (width, direction, wrap, pack)
        assert best is not None
        return best[1:]

    @contextmanager
    def _drawn_as(self, direction: str, wrap: int | None = None, pack: bool = False) -> Iterator[None]:
        """Lay out and draw as ``direction``, labels wrapped at ``wrap``, unconnected parts
        packed in rows when ``pack``; then restore the chart as built."""
        asked = self.direction
        self.direction = direction
        self._pack_width = MAX_WIDTH if pack else None
        for n in self._nodes.values():
            n.wrap = wrap
        try:
            yield
        finally:
            self.direction = asked
            self._pack_width = None
            for n in self._nodes.values():
                n.wrap = None

    def svg(self) -> str:
        """Render the chart as one self-contained ``<svg>`` element (a string), laid out to
        fit ``MAX_WIDTH`` when it can (see the module docstring)."""
        uid = "mdfc-" + hashlib.sha1(self._key().encode()).hexdigest()[:10]
        with self._drawn_as(*self._fitted()):
            return self._draw(uid)

    def _draw(self, uid: str) -> str:
        layers, edges, nodes = self._layout()
        shown = [n for n in nodes.values() if not n.virtual]
        right = max((self._box(n)[0] + self._box(n)[2] / 2 for n in nodes.values()), default=0)
        bottom = max((self._box(n)[1] + self._box(n)[3] / 2 for n in nodes.values()), default=0)
        width, height = right + MARGIN, bottom + MARGIN

        out: list[str] = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="minidl-flowchart" id="{uid}" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.1f} {height:.1f}" '
            f'role="img" style="max-width:100%;height:auto" font-family="{escape(FONT_FAMILY)}" font-size="{FONT_SIZE:g}">',
        ]
        if self.title:
            out.append(f"<title>{escape(self.title)}</title>")
        out.append(
            f'<defs><marker id="{uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{EDGE_COLOR}"/></marker></defs>'
        )
        labels: list[str] = []
        ports = self._ports(edges, nodes)
        for i, e in enumerate(edges):
            path, mid = self._edge_path(i, e, nodes, ports)
            dash = ' stroke-dasharray="5 4"' if e.dashed else ""
            out.append(
                f'<path class="edge" data-from="{escape(e.a)}" data-to="{escape(e.b)}" '
                f'd="{path}" fill="none" stroke="{EDGE_COLOR}" stroke-width="1.4"{dash} '
                f'marker-end="url(#{uid}-arrow)"/>'
            )
            if e.label:
                labels.append(self._edge_label(e.label, mid))
        for n in shown:
            out.append(self._node_svg(n))
        out.extend(labels)  # on top of nodes and edges
        out.append("</svg>")
        return "\n".join(out)

    def _key(self) -> str:
        parts = [self.direction]
        parts += [f"{n.id}|{n.label}|{n.shape}|{n.fill}|{n.stroke}" for n in self._nodes.values()]
        parts += [f"{e.a}>{e.b}|{e.label}|{e.dashed}" for e in self._edges]
        return "\n".join(parts)

    def _ports(self, edges: list[LayoutEdge], nodes: dict[str, LayoutNode]) -> dict[tuple[int, int], float]:
        """Spread the ends of several edges along one side of a box (layout x offsets).

        Keyed by (edge index, 0 for the start or 1 for the end); diamonds keep one
        point per direction, like mermaid.
        """
        sides: dict[tuple[str, bool], list[tuple[float, int, int]]] = {}
        for i, e in enumerate(edges):
            if e.a == e.b:
                continue
            for end, (k, nb) in enumerate(((e.chain[0], e.chain[1]), (e.chain[-1], e.chain[-2]))):
                n, m = nodes[k], nodes[nb]
                if n.shape == "diamond":
                    continue
                sides.setdefault((k, m.y < n.y), []).append((m.x, i, end))
        ports: dict[tuple[int, int], float] = {}
        for (k, _), ends in sides.items():
            if len(ends) < 2:
                continue
            n = nodes[k]
            ends.sort()
            span = min(n.w * 0.7, 18.0 * (len(ends) - 1))
            for j, (_, i, end) in enumerate(ends):
                ports[(i, end)] = n.x - span / 2 + span * j / (len(ends) - 1)
        return ports

    @staticmethod
    def _anchor(
        n: LayoutNode, toward: tuple[float, float], port: float | None = None
    ) -> tuple[float, float]:
        """Where a line from ``n`` towards ``toward`` leaves its outline (layout coordinates)."""
        cx, cy, w, h = n.x, n.y, n.w, n.h
        if port is not None:  # leave from the top or bottom side at the given x
            return port, cy + (h / 2 if toward[1] > cy else -h / 2)
        dx, dy = toward[0] - cx, toward[1] - cy
        if n.virtual or (dx == 0 and dy == 0):
            return cx, cy
        if n.shape == "diamond":
            t = 1 / (abs(dx) / (w / 2) + abs(dy) / (h / 2))
        else:
            inf = float("inf")
            t = min(w / 2 / abs(dx) if dx else inf, h / 2 / abs(dy) if dy else inf)
        return cx + dx * t, cy + dy * t

    def _pt(self, x: float, y: float) -> tuple[float, float]:
        """Layout (across, along) to screen coordinates."""
        return (y, x) if self.direction == "LR" else (x, y)

    def _edge_path(
        self, i: int, e: LayoutEdge, nodes: dict[str, LayoutNode], ports: dict[tuple[int, int], float]
    ) -> tuple[str, tuple[float, float]]:
        a, b = nodes[e.a], nodes[e.b]
        if e.a == e.b:  # self loop: a small ear beside the node
            cx, cy, w, h = (*self._pt(a.x, a.y), *self._pt(a.w, a.h))
            x0, y0, y1 = cx + w / 2, cy - h / 4, cy + h / 4
            d = (
                f"M{x0:.1f},{y0:.1f} C{x0 + 40:.1f},{y0 - 10:.1f} "
                f"{x0 + 40:.1f},{y1 + 10:.1f} {x0 + 2:.1f},{y1:.1f}"
            )
            return d, (x0 + 30, cy)
        pts = [(nodes[k].x, nodes[k].y) for k in e.chain]
        start = self._anchor(a, pts[1], ports.get((i, 0)))
        end = self._anchor(b, pts[-2], ports.get((i, 1)))
        pts = [self._pt(*p) for p in (start, *pts[1:-1], end)]
        if len(pts) == 2:
            d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f} L{pts[1][0]:.1f},{pts[1][1]:.1f}"
        else:  # smooth through the virtual points (Catmull-Rom as cubic Béziers)
            d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
            ext = [pts[0], *pts, pts[-1]]
            for j in range(1, len(ext) - 2):
                p0, p1, p2, p3 = ext[j - 1], ext[j], ext[j + 1], ext[j + 2]
                c1 = (p1[0] + (p2[0] - p0[0]) / 6, p1[1] + (p2[1] - p0[1]) / 6)
                c2 = (p2[0] - (p3[0] - p1[0]) / 6, p2[1] - (p3[1] - p1[1]) / 6)
                d += f" C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} {p2[0]:.1f},{p2[1]:.1f}"
        p, q = pts[0], pts[1]  # label on the first leg, where the decision is taken
        return d, ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)

    def _edge_label(self, label: str, at: tuple[float, float]) -> str:
        lines = label.split("\n")
        w, h = label_size(label)
        lh = 1.3 * EDGE_LABEL_FONT
        x, y = at
        rect = (
            f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'rx="3" fill="{LABEL_BG}" fill-opacity="0.92"/>'
        )
        text = self._text(lines, x, y, lh, EDGE_LABEL_FONT)
        return f'<g class="edge-label">{rect}{text}</g>'

    def _text(
        self, lines: list[str], x: float, y: float, lh: float, size: float, anchor: str = "middle"
    ) -> str:
        top = y - (len(lines) - 1) * lh / 2
        spans = "".join(
            f'<tspan x="{x:.1f}" y="{top + i * lh:.1f}">{escape(line, quote=False)}</tspan>'
            for i, line in enumerate(lines)
        )
        return (
            f'<text text-anchor="{anchor}" dominant-baseline="central" font-size="{size:g}" '
            f'fill="{TEXT_COLOR}" xml:space="preserve" style="white-space: pre">{spans}</text>'
        )

    def _node_svg(self, n: LayoutNode) -> str:
        cx, cy, w, h = self._box(n)
        style = f'fill="{n.fill or NODE_FILL}" stroke="{n.stroke or NODE_STROKE}" stroke-width="1.3"'
        if n.shape == "diamond":
            pts = f"{cx:.1f},{cy - h / 2:.1f} {cx + w / 2:.1f},{cy:.1f} {cx:.1f},{cy + h / 2:.1f} {cx - w / 2:.1f},{cy:.1f}"
            shape = f'<polygon points="{pts}" {style}/>'
        else:
            r = min(h / 2, 16.0) if n.shape == "round" else 3.0
            shape = (
                f'<rect x="{cx - w / 2:.1f}" y="{cy - h / 2:.1f}" width="{w:.1f}" '
                f'height="{h:.1f}" rx="{r:.1f}" {style}/>'
            )
        if n.align == "left" and n.shape != "diamond":
            text = self._text(n.lines, cx - w / 2 + PAD_X, cy, LINE_H, FONT_SIZE, "start")
        else:
            text = self._text(n.lines, cx, cy, LINE_H, FONT_SIZE)
        return f'<g class="node" data-id="{escape(n.id)}">{shape}{text}</g>'

    # -- notebook display -----------------------------------------------------------------

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        # Inline SVG (not an <img>): selectable text, and the page's offline fonts apply.
        return f'<div class="minidl-flowchart-wrap" style="overflow-x:auto">{self.svg()}</div>'

    def save(self, path: str) -> None:
        """Write the SVG to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg())


def from_edges(
    edges: Iterable[tuple[str, str] | tuple[str, str, str]],
    labels: dict[str, str] | None = None,
    direction: str = "TB",
) -> Flowchart:
    """Build a chart from ``(a, b)`` or ``(a, b, edge_label)`` pairs and optional node labels."""
    fc = Flowchart(direction)
    for k, text in (labels or {}).items():
        fc.node(k, text)
    for e in edges:
        fc.edge(*e)
    return fc
