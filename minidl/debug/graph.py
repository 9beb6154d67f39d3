"""``graph(tensor)``: the autodiff steps behind a tensor, as a table and as a drawing.

The recording itself belongs to :mod:`minidl.autodiff` (``minidl.autodiff.graph`` walks the
nodes: ids, parents, requirement, what each step saved). This wrapper accepts the same inputs
(a ``Tensor``, a ``DispatchTensor`` or an ``AutodiffTensor``), prints the same table, and adds
:meth:`GraphView.svg`: leaves at the top, each recorded step below its parents, drawn with
:mod:`minidl.book.flowchart` — the picture of "separate matmul, reshape and add steps" that
seed 000 describes for a Linear on an autodiff device.
"""

from __future__ import annotations

from html import escape
from typing import Any

from minidl.book.flowchart import Flowchart
from minidl.debug.diagram import COLORS

__trace_hide__ = True


class GraphView:
    """A :class:`minidl.autodiff.Graph` plus a drawing. Attribute access (``steps``, ``ops``,
    ``records``, ``root``, ``g[node_id]``) goes to the autodiff graph itself."""

    def __init__(self, graph: Any):
        self.graph = graph

    def __getattr__(self, name: str) -> Any:
        return getattr(self.graph, name)

    def __getitem__(self, node_id: int):
        return self.graph[node_id]

    def chart(self, saved: bool = True) -> Flowchart:
        """The flowchart: one box per node (``#3 Matmul``), arrows from parents to children."""
        fc = Flowchart("TB", title=f"graph of #{self.graph.root}")
        for r in self.graph.records:
            req = str(r.requirement)
            if r.op == "leaf":
                label = f"#{r.id} leaf\n{req}"
                fill, stroke = COLORS["nn"] if req == "Grad" else COLORS["user"]
                fc.node(str(r.id), label, shape="round", fill=fill, stroke=stroke)
                continue
            label = f"#{r.id} {r.op}"
            if saved and r.saved:
                label += "\nsaved: " + ", ".join(r.saved)
            elif r.consumed:
                label += "\n(consumed)"
            fill, stroke = COLORS["autodiff"]
            fc.node(str(r.id), label, fill=fill, stroke=stroke)
        for r in self.graph.records:
            for p in r.parents:
                fc.edge(str(p), str(r.id))
        return fc

    def svg(self, saved: bool = True) -> str:
        """The graph drawn as SVG (leaves on top, the result at the bottom)."""
        return self.chart(saved).svg()

    def __str__(self) -> str:
        return str(self.graph)

    def __repr__(self) -> str:
        return str(self.graph)

    def _repr_html_(self) -> str:
        table = self.graph._repr_html_() if hasattr(self.graph, "_repr_html_") else f"<pre>{escape(str(self))}</pre>"
        return f'{table}<div style="overflow-x:auto">{self.svg()}</div>'


def graph(tensor: Any) -> GraphView:
    """The autodiff graph behind ``tensor`` (Tensor, DispatchTensor or AutodiffTensor).

    Raises ``TypeError`` for a tensor on a plain device (it records no graph).
    """
    try:
        from minidl.autodiff import graph as autodiff_graph
    except ImportError as err:  # pragma: no cover - the autodiff package is part of minidl
        raise ImportError("minidl.debug.graph needs minidl.autodiff") from err
    return GraphView(autodiff_graph(tensor))
