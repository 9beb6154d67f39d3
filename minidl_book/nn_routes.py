"""The nn-modules chapter's pictures: the routes of layers down to Flex, and what the steps
of LayerNorm's default keep for backward beside PyTorch's one node.

``trace_route`` runs one forward under ``debug.trace`` and records every Flex op it reaches
(and, on an autodiff device, the steps its output's graph holds); ``route_chart`` draws
several such routes as a grid, ``per_row`` side by side in one chart per row, one column
per route, every box read from the recorded frames. ``route_map`` merges backtraces into one path picture
(``minidl.debug.merge_paths``); ``steps_picture`` draws an autodiff graph of ``LayerNorm``
(each step, the ones that keep a tensor for backward highlighted) next to the one node
PyTorch's ``layer_norm`` records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from IPython.display import HTML, display

from minidl import debug
from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart

__trace_hide__ = True

__all__ = ["FLEX_BOTTOM", "LAYER_NORM_STEPS", "Route", "RouteGrid", "args_at", "model_chart",
           "route_chart", "route_map",
           "steps_picture", "trace_route"]

#: the Flex ops at the bottom of the chapter's routes: the first one a forward reaches
FLEX_BOTTOM = r"^Flex\.(layer_norm|conv2d|float_matmul|float_mean_dim)$"

#: what each step of the LayerNorm default computes, in the order it runs
LAYER_NORM_STEPS = {
    "MeanDim": "mean", "Sub": "x - mean", "Mul": "(x - mean)²", "MeanDim'": "var",
    "AddScalar": "var + eps", "Sqrt": "std", "Div": "x̂", "Reshape": "gamma [1, d]",
    "Mul'": "x̂ · gamma", "Reshape'": "beta [1, d]", "Add": "out",
}

_KEEPS = ("#FFE0B2", "#FB8C00")
_PASSES = ("#F5F5F5", "#BDBDBD")
_LEAF = ("#E3F2FD", "#1E88E5")


def route_map(forwards: dict[str, Callable[[], object]], title: str) -> dict:
    """Run each forward under ``debug.trace`` (quietly) until the first Flex op of
    :data:`FLEX_BOTTOM`, display the backtraces merged into one picture and return the
    traces by name."""
    traces = {name: debug.trace(fn, breakpoints=FLEX_BOTTOM, echo=False)
              for name, fn in forwards.items()}
    display(debug.merge_paths(*traces.values(), kernels=False, title=title))
    return traces


@dataclass
class Route:
    """One forward's way down, as a trace recorded it.

    ``above``: the frames from the layer's ``forward`` down to the first Flex op, outermost
    first, each ``(name, note)`` (a note marks a protocol default); ``flex_ops``: every Flex op
    the forward entered, in order; ``kernels``: the numba kernels those ops ran; ``steps``: the
    ops of the graph's steps on an autodiff device (``None`` on a plain one)."""

    layer: str
    device: str
    above: list[tuple[str, str]]
    flex_ops: list[str]
    kernels: list[str]
    steps: list[str] | None
    result: object


def trace_route(layer, x) -> Route:
    """Run ``layer(x)`` under ``debug.trace`` with a breakpoint on every Flex op (the layer's
    params drawn first, so the route is the forward's own)."""
    for param in layer.parameters().values():
        param.val()
    t = debug.trace(lambda: layer(x), breakpoints=r"^Flex\.\w+$", echo=False)
    first = t.first()
    above = [(f.name, f.note) for f in reversed(first.frames[1:]) if f.library]
    forward = f"{type(layer).__name__}.forward"
    above = above[[name for name, _ in above].index(forward):]
    device = x.device
    steps = debug.graph(t.result).ops if device.is_autodiff() else None
    return Route(type(layer).__name__, str(device), above, [h.name for h in t.hits],
                 [k for h in t.hits for k in h.kernels], steps, t.result)


def args_at(fn: Callable[[], object], op: str) -> tuple[object, str]:
    """Run ``fn`` under ``debug.trace`` with a breakpoint on ``op`` (a name such as
    ``"Flex.layer_norm"``); return its result and the arguments the first hit received."""
    t = debug.trace(fn, breakpoints=f"^{re.escape(op)}$", echo=False)
    return t.result, t.first().frames[0].args


def _kernel(name: str) -> str:
    return name.removeprefix("kernel ").removesuffix(" [numba]")


def _boxes(route: Route, named: bool = True) -> list[tuple[str, str]]:
    """The column of one route: (colour key, label) per box, top to bottom; with ``named``
    off, the steps and the Flex ops are counted, not named."""
    names = [name for name, _ in route.above]
    first = next(i for i, n in enumerate(names) if n.startswith("Dispatch."))
    module = names[:first]
    dispatch = [n for n in names[first:] if n.startswith("Dispatch.")]
    boxes = [("nn", "\n".join(module)), ("dispatch", "\n".join(dispatch))]
    ad = [(n, note) for n, note in route.above if n.startswith("Autodiff[")]
    if not ad:
        boxes.append(("none", "no Autodiff: no graph"))
    else:
        name, note = ad[0]
        label = name + ("\n(the ModuleOps default)" if note else "")
        n = len(route.steps or [])
        label += f"\nrecords {n} step{'s' * (n != 1)}" + (":" if named else "")
        line = ""
        for op in route.steps if named and route.steps else []:
            if line and len(line) + len(op) + 2 > 27:
                label += "\n" + line + ","
                line = ""
            line = f"{line}, {op}" if line else op
        boxes.append(("autodiff", label + ("\n" + line if line else "")))
    ops = list(dict.fromkeys(route.flex_ops))
    if len(ops) == 1:
        # the op's own kernel ran (its name, e.g. conv_tiles_serial, is left off)
        stem = ops[0].removeprefix("Flex.").rstrip("0123456789d")
        assert any(stem in _kernel(k) for k in route.kernels), route.kernels
        boxes.append(("backend", f"{ops[0]}\nruns Flex's numba kernel"))
    else:
        own = "Flex." + dispatch[0].removeprefix("Dispatch.")
        assert own not in ops, own
        boxes.append(("backend", f"{len(route.flex_ops)} Flex ops, one per step;\n"
                      f"{own} not entered"))
    return boxes


class RouteGrid:
    """Route charts shown one under the other (each a row of routes side by side)."""

    def __init__(self, charts: list[Flowchart]) -> None:
        self.charts = charts

    def _repr_html_(self) -> str:
        return "".join(f"<div style='margin-bottom:8px'>{c.svg()}</div>"
                       for c in self.charts)


def route_chart(routes: dict, title: str | None = None, unnamed: tuple = (),
                per_row: int = 2) -> RouteGrid:
    """Draw ``routes`` (:class:`Route` by any key) as a grid: ``per_row`` routes side by
    side in each row, one column each, headed ``"<layer>, <device>"``: the layer's frames,
    Dispatch, Autodiff (or its absence) and what Flex ran. The routes whose keys are in
    ``unnamed`` count their steps without naming them (a build-it below asks for them)."""
    items = list(routes.items())
    charts = []
    for start in range(0, len(items), per_row):
        row = items[start:start + per_row]
        chart = Flowchart("TB", title=title)
        for c, (route_key, route) in enumerate(row):
            device = route.device.removeprefix("Device.")
            chart.node(f"c{c}h", f"{route.layer}, {device}", shape="round",
                       fill="#FFFFFF", stroke="#616161")
            prev, skipped = f"c{c}h", False
            for r, (key, label) in enumerate(_boxes(route,
                                                    named=route_key not in unnamed)):
                nid = f"c{c}_{r}"
                if key == "none":
                    chart.node(nid, label, fill="#FFFFFF", stroke=COLORS["user"][1])
                else:
                    fill, stroke = COLORS[key]
                    chart.node(nid, label, align="left", fill=fill, stroke=stroke)
                chart.edge(prev, nid, dashed=key == "none" or skipped)
                prev, skipped = nid, key == "none"
        charts.append(chart)
    return RouteGrid(charts)


def _what(ops: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for op in ops:
        key = op + "'" if op in seen else op
        seen.add(op)
        out.append(LAYER_NORM_STEPS.get(key, op))
    return out


def _names_of(graph) -> dict[int, str]:
    """Node id → what it holds: the leaves as named, each step as it is in the recipe."""
    steps = [r for r in graph.records if r.op != "leaf"]
    names = {r.id: graph.names.get(r.id, f"#{r.id}") for r in graph.records if r.op == "leaf"}
    names.update({r.id: w for r, w in zip(steps, _what([r.op for r in steps]))})
    return names


def _kept(record, names: dict[int, str]) -> list[str]:
    """The tensors a step keeps, named by what they hold (``lhs``/``rhs``: its parents,
    ``out``: itself)."""
    where = {"lhs": record.parents[0], "rhs": record.parents[-1], "out": record.id}
    return list(dict.fromkeys(names.get(where.get(k, -1), k) for k in record.saved))


def _ours(graph) -> Flowchart:
    names = _names_of(graph)
    fc = Flowchart("TB", title="LayerNorm's default on flex().autodiff()")
    for r in graph.records:
        if r.op == "leaf":
            fc.node(str(r.id), names[r.id], shape="round", fill=_LEAF[0], stroke=_LEAF[1])
            continue
        kept = _kept(r, names)
        label = f"{r.op}: {names[r.id]}" + (f"\nkeeps {', '.join(kept)}" if kept else "")
        fill, stroke = _KEEPS if kept else _PASSES
        fc.node(str(r.id), label, fill=fill, stroke=stroke)
    for r in graph.records:
        for p in dict.fromkeys(r.parents):
            fc.edge(str(p), str(r.id))
    return fc


def _theirs(saved: list[str]) -> Flowchart:
    fc = Flowchart("TB", title="PyTorch's layer_norm")
    for leaf in ("x", "weight", "bias"):
        fc.node(leaf, leaf, shape="round", fill=_LEAF[0], stroke=_LEAF[1])
    fc.node("node", "NativeLayerNormBackward0\nkeeps " + ",\n".join(saved),
            fill=_KEEPS[0], stroke=_KEEPS[1])
    for leaf in ("x", "weight", "bias"):
        fc.edge(leaf, "node")
    return fc


def steps_picture(graph, torch_saved: list[str]) -> None:
    """Display ``graph`` (``debug.graph`` of a LayerNorm output, leaves named) beside the one
    node PyTorch records, keeping ``torch_saved``; orange: a step that keeps tensors."""
    cells = "".join(f"<div style='margin-right:24px'>{chart.svg()}</div>"
                    for chart in (_ours(graph), _theirs(torch_saved)))
    legend = ("orange: keeps tensors for backward; grey: keeps nothing; blue: a leaf")
    display(HTML(f"<div style='display:flex;align-items:flex-start;overflow-x:auto'>{cells}"
                 f"</div><p style='font-size:80%'>{escape(legend)}</p>"))


def _runs_at(route: Route) -> str:
    """Where the layer's own op gets its body on this route: Autodiff's (or the protocol's
    default there), the default at Dispatch, or (a layer of plain tensor ops) the Flex
    ops it ran."""
    dispatch = [(n, note) for n, note in route.above if n.startswith("Dispatch.")]
    op = dispatch[0][0].removeprefix("Dispatch.")
    for name, note in route.above if not op.startswith("float_") else ():
        if name.startswith("Autodiff[") and name.endswith(f".{op}"):
            return name + (" (ModuleOps default)" if note else "")
    if dispatch[0][1]:
        return f"{dispatch[0][0]} (ModuleOps default)"
    ops = (op.removeprefix("Flex.") for op in route.flex_ops)
    return "Flex: " + ", ".join(dict.fromkeys(op for op in ops if op.startswith("float_")))


def model_chart(stages: list[tuple[str, Route | None, dict]], title: str) -> Flowchart:
    """One model's forward as a column of boxes, top to bottom: per stage its name, where
    its op's body ran (read from its :class:`Route`), the steps it recorded, and the
    gradients its params received (``{param name: shape}``); a stage without a route (a
    reshape, the loss) is a plain round box."""
    fc = Flowchart("TB", title=title)
    prev = None
    for i, (name, route, grads) in enumerate(stages):
        if route is None:
            fc.node(f"s{i}", name, shape="round", fill="#FFFFFF", stroke="#616161")
        else:
            steps = route.steps or []
            recorded = (", ".join(steps) if len(steps) <= 3
                        else f"{len(steps)} steps ({steps[0]} … {steps[-1]})")
            lines = [name, f"runs at {_runs_at(route)}", f"records {recorded}"]
            shapes = ", ".join(f"{k} {list(v)}" for k, v in grads.items())
            lines.append(f"backward → {shapes}" if shapes else "backward → no params")
            fill, stroke = COLORS["autodiff"]
            fc.node(f"s{i}", "\n".join(lines), align="left", fill=fill, stroke=stroke)
        if prev is not None:
            fc.edge(prev, f"s{i}")
        prev = f"s{i}"
    return fc
