"""The nn-modules chapter's pictures: the routes of layers down to Flex, and what the steps
of LayerNorm's default keep for backward beside PyTorch's one node.

``route_map`` traces each forward to the first Flex op it reaches and merges the backtraces
into one path picture (``minidl.debug.merge_paths``); ``steps_picture`` draws an autodiff
graph of ``LayerNorm`` (each step, the ones that keep a tensor for backward highlighted)
next to the one node PyTorch's ``layer_norm`` records.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from IPython.display import HTML, display

from minidl import debug
from minidl.debug.flowchart import Flowchart

__trace_hide__ = True

__all__ = ["FLEX_BOTTOM", "LAYER_NORM_STEPS", "route_map", "steps_picture"]

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
