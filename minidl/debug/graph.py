"""``graph(tensor)``: the autodiff steps behind a tensor, as a table and as a drawing.

The recording itself belongs to :mod:`minidl.autodiff` (``minidl.autodiff.graph`` walks the
nodes: ids, parents, requirement, what each step saved). This wrapper accepts the same inputs
(a ``Tensor``, a ``DispatchTensor`` or an ``AutodiffTensor``), prints the same table, and adds
:meth:`GraphView.svg`: leaves at the top, each recorded step below its parents, drawn with
:mod:`minidl.debug.flowchart` — the picture of "separate matmul, reshape and add steps" that
the nn-modules chapter shows for a Linear on an autodiff device.
"""

from __future__ import annotations

from html import escape
from typing import Any

from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart

__trace_hide__ = True


class GraphView:
    """A :class:`minidl.autodiff.Graph` plus a drawing. Attribute access (``steps``, ``ops``,
    ``records``, ``root``, ``g[node_id]``) goes to the autodiff graph itself.

    ``names`` maps node ids to what the reader calls them (``weight``, ``bias``, ``x``): leaves
    print as ``leaf: weight`` and parents as ``#82 weight`` instead of bare ids.
    """

    def __init__(self, graph: Any, names: dict[int, str] | None = None):
        self.graph = graph
        self.names = dict(names or {})

    def label(self, node_id: int) -> str:
        """``#82 weight`` for a named node, ``#82`` otherwise."""
        name = self.names.get(node_id)
        return f"#{node_id} {name}" if name else f"#{node_id}"

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """node | step | parents | requirement | saved, with the names filled in."""
        out = []
        for r, row in zip(self.graph.records, self.graph._rows()):
            node, op, _, req, saved = row
            if r.op == "leaf" and r.id in self.names:
                op = f"leaf: {self.names[r.id]}"
            parents = ", ".join(self.label(p) for p in r.parents)
            out.append((node, op, parents, req, saved))
        return out

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
                name = self.names.get(r.id)
                label = f"{name}\n#{r.id} leaf, {req}" if name else f"#{r.id} leaf\n{req}"
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

    def _caption(self) -> str:
        first = str(self.graph).splitlines()[0]  # "graph of #N: k steps, keeping …"
        return first

    def __str__(self) -> str:
        if not self.names:
            return str(self.graph)
        header = ("node", "step", "parents", "requirement", "saved")
        rows = [header, *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = [self._caption()]
        for row in rows:
            lines.append("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4])
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        if not self.names and hasattr(self.graph, "_repr_html_"):
            table = self.graph._repr_html_()
        else:
            head = "".join(f"<th>{h}</th>" for h in ("node", "step", "parents", "requirement", "saved"))
            body = "".join(
                "<tr>" + "".join(f"<td style='text-align:left'>{escape(c)}</td>" for c in row) + "</tr>"
                for row in self.rows()
            )
            caption = f"<caption>{escape(self._caption())}</caption>"
            table = f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        return f'{table}<div style="overflow-x:auto">{self.svg()}</div>'


def _node_id(value: Any) -> int | None:
    """The autodiff node id behind a Tensor, DispatchTensor, AutodiffTensor or Param."""
    if hasattr(value, "val") and hasattr(value, "lazy_shape"):  # a Param: its current value
        value = value.val()
    for _ in range(8):  # Tensor → DispatchTensor → AutodiffTensor, duck-typed
        node = getattr(value, "node", None)
        if node is not None and hasattr(node, "id"):
            return node.id
        inner = getattr(value, "backend_tensor", None)
        value = inner if inner is not None else getattr(value, "primitive", None)
        if value is None:
            return None
    return None


def _names(names: Any) -> dict[int, str]:
    """``{node id: name}`` from a Module (its ``parameters()``) or a ``{name: tensor}`` dict."""
    if names is None:
        return {}
    if hasattr(names, "parameters") and callable(names.parameters):
        names = names.parameters()
    out = {}
    for name, value in dict(names).items():
        node_id = _node_id(value)
        if node_id is not None:
            out[node_id] = name
    return out


def graph(tensor: Any, names: Any = None) -> GraphView:
    """The autodiff graph behind ``tensor`` (Tensor, DispatchTensor or AutodiffTensor).

    ``names`` labels leaves: a module (its params are named as ``parameters()`` names them,
    ``weight``, ``bias``, ``fc.weight``) or a dict ``{name: tensor or Param}``, so the table
    reads ``leaf: weight`` rather than a bare node id. Raises ``TypeError`` for a tensor on a
    plain device (it records no graph).
    """
    try:
        from minidl.autodiff import graph as autodiff_graph
    except ImportError as err:  # pragma: no cover - the autodiff package is part of minidl
        raise ImportError("minidl.debug.graph needs minidl.autodiff") from err
    return GraphView(autodiff_graph(tensor), _names(names))
