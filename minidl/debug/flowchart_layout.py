"""The layered layout behind :class:`~minidl.debug.flowchart.Flowchart`: sizes and positions.

Longest-path layers, barycenter ordering within a layer, long edges routed through virtual
points, then coordinates (x across layers, y along them; ``Flowchart`` turns them for ``LR``).
:class:`LayeredLayout` is the half of ``Flowchart`` that computes where things go; the other
half, in ``flowchart.py``, draws them as SVG.
"""

from __future__ import annotations

import textwrap
import unicodedata
from dataclasses import dataclass, field

FONT_SIZE = 13.0
CHAR_W = 0.61 * FONT_SIZE  # advance of a monospace glyph; wide (CJK) glyphs count twice
LINE_H = 1.35 * FONT_SIZE
PAD_X, PAD_Y = 12.0, 8.0
GAP_SIBLING = 28.0  # between two nodes of one layer
GAP_LAYER = 46.0  # between two layers
GAP_LAYER_LABELLED = 64.0  # between two layers when an edge between them has a label
MARGIN = 12.0
EDGE_LABEL_FONT = 12.0
#: The widest a chart is laid out, in px: the book's text column is 752 px (619 inside a
#: dropdown), and an SVG wider than its column is scaled down, text and all. Up to 752 px the
#: 13 px node text stays 13 px in the column (10.7 px at worst in a dropdown).
MAX_WIDTH = 752.0


def text_width(line: str, char_w: float = CHAR_W) -> float:
    """The drawn width of one line of monospace text (a wide, CJK glyph takes two cells)."""
    cells = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)
    return cells * char_w


@dataclass
class LayoutNode:
    """A box (or a virtual point a long edge bends through), with its layer, order and place."""

    id: str
    label: str
    shape: str
    align: str = "center"
    virtual: bool = False
    fill: str | None = None  # None: the theme's colours
    stroke: str | None = None
    wrap: int | None = None  # wrap centred lines longer than this (characters), at spaces
    layer: int = 0
    order: float = 0.0
    w: float = 0.0
    h: float = 0.0
    x: float = 0.0  # centre, in layout coordinates (x across layers, y along them)
    y: float = 0.0

    @property
    def lines(self) -> list[str]:
        """The drawn lines: the label's, each centred one wrapped at ``wrap`` characters
        (left-aligned labels are monospace columns and are never wrapped)."""
        lines = self.label.split("\n") if self.label else [""]
        if self.wrap is None or self.align == "left":
            return lines
        return [part for line in lines
                for part in (textwrap.wrap(line, self.wrap, break_long_words=False,
                                           break_on_hyphens=False) or [line]
                             if len(line) > self.wrap else [line])]


@dataclass
class LayoutEdge:
    """An arrow from ``a`` to ``b``; ``chain`` lists the points it passes once laid out."""

    a: str
    b: str
    label: str | None
    dashed: bool
    chain: list[str] = field(default_factory=list)  # a, virtual points..., b


def label_size(label: str) -> tuple[float, float]:
    """Width and height of an edge label's box."""
    lines = label.split("\n")
    w = max(text_width(line, 0.61 * EDGE_LABEL_FONT) for line in lines) + 8
    return w, len(lines) * 1.3 * EDGE_LABEL_FONT + 4


class LayeredLayout:
    """Layout of a flowchart's ``_nodes`` (id → :class:`LayoutNode`) and ``_edges``
    (:class:`LayoutEdge`) in its ``direction``; :meth:`_layout` is the entry point."""

    direction: str
    _nodes: dict[str, LayoutNode]
    _edges: list[LayoutEdge]
    # -- layout ---------------------------------------------------------------------------

    def _layers(self) -> dict[str, int]:
        """Longest-path layering; edges closing a cycle are ignored for layering."""
        succ: dict[str, list[str]] = {k: [] for k in self._nodes}
        for e in self._edges:
            succ[e.a].append(e.b)
        state: dict[str, int] = {}  # 1 = on stack, 2 = done
        back: set[tuple[str, str]] = set()
        order: list[str] = []

        def visit(root: str) -> None:
            stack = [(root, iter(succ[root]))]
            state[root] = 1
            while stack:
                v, it = stack[-1]
                for w in it:
                    if state.get(w) == 1:
                        back.add((v, w))
                    elif w not in state:
                        state[w] = 1
                        stack.append((w, iter(succ[w])))
                        break
                else:
                    state[v] = 2
                    order.append(v)
                    stack.pop()

        for k in self._nodes:
            if k not in state:
                visit(k)
        layer = {k: 0 for k in self._nodes}
        for v in reversed(order):  # topological order of the DAG without back edges
            for w in succ[v]:
                if (v, w) not in back and w != v:
                    layer[w] = max(layer[w], layer[v] + 1)
        return layer

    def _layout(self) -> tuple[list[list[LayoutNode]], list[LayoutEdge], dict[str, LayoutNode]]:
        layer = self._layers()
        nodes: dict[str, LayoutNode] = {}
        for k, n in self._nodes.items():
            n.layer = layer[k]
            nodes[k] = n
        edges: list[LayoutEdge] = []
        for i, e in enumerate(self._edges):
            e = LayoutEdge(e.a, e.b, e.label, e.dashed)
            la, lb = nodes[e.a].layer, nodes[e.b].layer
            e.chain = [e.a]
            step = 1 if lb >= la else -1
            for j, lv in enumerate(range(la + step, lb, step)):
                vid = f"\0v{i}.{j}"
                nodes[vid] = LayoutNode(vid, "", "box", virtual=True, layer=lv)
                e.chain.append(vid)
            e.chain.append(e.b)
            edges.append(e)

        n_layers = max((n.layer for n in nodes.values()), default=-1) + 1
        layers: list[list[LayoutNode]] = [[] for _ in range(n_layers)]
        for n in nodes.values():
            layers[n.layer].append(n)

        up: dict[str, list[str]] = {k: [] for k in nodes}
        down: dict[str, list[str]] = {k: [] for k in nodes}
        for e in edges:
            for p, q in zip(e.chain, e.chain[1:]):
                if p == q:
                    continue
                hi, lo = (p, q) if nodes[p].layer < nodes[q].layer else (q, p)
                down[hi].append(lo)
                up[lo].append(hi)

        for row in layers:
            for i, n in enumerate(row):
                n.order = float(i)
        # barycenter ordering: a few sweeps down and up
        for sweep in range(8):
            rng = range(1, n_layers) if sweep % 2 == 0 else range(n_layers - 2, -1, -1)
            nbrs = up if sweep % 2 == 0 else down
            for li in rng:
                row = layers[li]
                for n in row:
                    ns = nbrs[n.id]
                    if ns:
                        n.order = sum(nodes[m].order for m in ns) / len(ns)
                row.sort(key=lambda n: n.order)
                for i, n in enumerate(row):
                    n.order = float(i)

        self._measure(nodes)
        self._place(layers, nodes, up, down, edges)
        limit = getattr(self, "_pack_width", None)
        if limit:
            self._pack(nodes, edges, limit)
        return layers, edges, nodes

    @staticmethod
    def _pack(nodes: dict[str, LayoutNode], edges: list[LayoutEdge], limit: float) -> None:
        """Lay unconnected parts (lanes drawn side by side) out in rows, each part whole,
        in as few rows as keep the chart within ``limit`` across (else one part a row)."""
        root = {k: k for k in nodes}

        def find(k: str) -> str:
            while root[k] != k:
                root[k] = root[root[k]]
                k = root[k]
            return k

        for e in edges:
            for p, q in zip(e.chain, e.chain[1:]):
                root[find(p)] = find(q)
        parts: dict[str, list[LayoutNode]] = {}
        for k, n in nodes.items():
            parts.setdefault(find(k), []).append(n)
        if len(parts) < 2:
            return
        boxes = []  # (left, top, width, depth, nodes), in the order the layout gave
        for ns in parts.values():
            left, top = min(n.x - n.w / 2 for n in ns), min(n.y - n.h / 2 for n in ns)
            boxes.append((left, top, max(n.x + n.w / 2 for n in ns) - left,
                          max(n.y + n.h / 2 for n in ns) - top, ns))
        boxes.sort(key=lambda b: b[0])
        for n_rows in range(2, len(boxes) + 1):  # fewest rows, parts shared out evenly
            per_row = -(-len(boxes) // n_rows)
            rows = [boxes[i:i + per_row] for i in range(0, len(boxes), per_row)]
            widest = max(sum(b[2] for b in row) + GAP_SIBLING * (len(row) - 1) for row in rows)
            if widest + 2 * MARGIN <= limit:
                break
        y = MARGIN
        for row in rows:
            x = MARGIN
            for left, top, w, _, ns in row:
                for n in ns:
                    n.x += x - left
                    n.y += y - top
                x += w + GAP_SIBLING
            y += max(b[3] for b in row) + 1.5 * GAP_LAYER

    def _measure(self, nodes: dict[str, LayoutNode]) -> None:
        for n in nodes.values():
            if n.virtual:
                n.w, n.h = 8.0, LINE_H
                continue
            tw = max(text_width(line) for line in n.lines)
            th = len(n.lines) * LINE_H
            w, h = tw + 2 * PAD_X, th + 2 * PAD_Y
            if n.shape == "diamond":  # the text box must fit inside the rhombus
                w, h = tw + th * 1.6 + 2 * PAD_X, th + tw * 0.35 + 2 * PAD_Y
                h = min(h, th + 90.0)
            if self.direction == "LR":
                w, h = h, w  # layout runs in (across, along) coordinates
            n.w, n.h = w, h

    def _place(self, layers, nodes, up, down, edges) -> None:
        # along the flow: stack layers
        gaps = [GAP_LAYER] * len(layers)  # room for edge labels on the first leg
        for e in edges:
            if e.label and e.a != e.b:
                li = min(nodes[e.chain[0]].layer, nodes[e.chain[1]].layer)
                w, h = label_size(e.label)
                along = w if self.direction == "LR" else h
                gaps[li] = max(gaps[li], GAP_LAYER_LABELLED, along + 36.0)
        y = MARGIN
        for li, row in enumerate(layers):
            depth = max((n.h for n in row), default=0.0)
            for n in row:
                n.y = y + depth / 2
            y += depth + gaps[li]

        # across the flow: pack, then pull each node towards its neighbours' mean
        for row in layers:
            x = 0.0
            for n in row:
                n.x = x + n.w / 2
                x += n.w + GAP_SIBLING

        def settle(row: list[LayoutNode], want: dict[str, float]) -> None:
            for n in row:
                n.x = want.get(n.id, n.x)
            for i in range(1, len(row)):  # push right to remove overlaps
                lo = row[i - 1].x + (row[i - 1].w + row[i].w) / 2 + GAP_SIBLING
                row[i].x = max(row[i].x, lo)
            for i in range(len(row) - 2, -1, -1):  # then pull back left where possible
                hi = row[i + 1].x - (row[i + 1].w + row[i].w) / 2 - GAP_SIBLING
                row[i].x = min(row[i].x, max(hi, want.get(row[i].id, row[i].x)))

        for sweep in range(9):  # odd: the last sweep goes down, children under parents
            down_sweep = sweep % 2 == 0
            for row in layers[1:] if down_sweep else layers[-2::-1]:
                want: dict[str, float] = {}
                for n in row:
                    # real nodes follow one side per sweep; virtual points sit between both
                    # ends, so long edges bend gently instead of dragging nodes sideways
                    ms = up[n.id] + down[n.id] if n.virtual else (up if down_sweep else down)[n.id]
                    if ms:
                        want[n.id] = sum(nodes[m].x for m in ms) / len(ms)
                settle(row, want)
        left = min((n.x - n.w / 2 for n in nodes.values()), default=0.0)
        for n in nodes.values():
            n.x += MARGIN - left
