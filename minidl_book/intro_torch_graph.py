"""The intro's fourth exercise: the graph PyTorch's autograd records for the same Linear.

``torch.nn.Linear`` is a composite op (``aten::linear`` = ``t`` then ``addmm``), and autograd
records below it: ``layer_t(x_t).sum()`` leaves ``SumBackward0 → AddmmBackward0 →
TBackward0``, each param ending in an ``AccumulateGrad`` (the leaf's gradient slot, as a
leaf of minidl's graph; not a step). The question says so. In burn the analogue of the
missing one-step node is burn-autodiff's ``LinearWithBias``, never reached through
burn-dispatch (``// TODO: linear ops``).

- :func:`torch_linear`: PyTorch's ``Linear`` with a minidl layer's weights (transposed).
- :func:`torch_graph`: the nodes, read by walking ``grad_fn.next_functions`` from the loss.
- :func:`same_torch_graph`: the checker's compare, the nodes named in record order or from
  the loss back, with :func:`minidl_book.intro_graph.steps_read`'s spellings.
- :func:`minidl_chart`, :func:`torch_chart`, :func:`both_graphs`: the two graphs side by
  side, node names only (no kernels, no ids).
"""

from __future__ import annotations

from typing import Any

import torch

from minidl import Tensor
from minidl.autodiff.node import walk
from minidl.autodiff.tensor import autodiff_tensor_of
from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart
from minidl.nn import Linear
from minidl_book.intro_graph import steps_read

#: Autograd's leaf accumulator: a param's gradient slot, not a recorded step.
LEAF = "AccumulateGrad"


def torch_linear(layer: Linear) -> torch.nn.Linear:
    """``torch.nn.Linear`` holding ``layer``'s weight (transposed: ``[d_out, d_in]``) and
    bias."""
    w = layer.weight.val().to_numpy()
    theirs = torch.nn.Linear(*w.shape)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(w.T.copy()))
        theirs.bias.copy_(torch.from_numpy(layer.bias.val().to_numpy()))
    return theirs


def _walk(fn: Any) -> list[tuple[Any, list[Any]]]:
    """Each autograd node under ``fn``, from the loss back (depth first, each once), with
    the nodes it passes gradients to (``None``: an input that needs none, such as x)."""
    out, seen, todo = [], set(), [fn]
    while todo:
        node = todo.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        below = [n for n, _ in node.next_functions]
        out.append((node, below))
        todo = [n for n in below if n is not None] + todo
    return out


def torch_graph(layer: Linear, x: Tensor) -> tuple[str, ...]:
    """The nodes autograd records for ``torch_linear(layer)(x).sum()``, from the loss back,
    ``AccumulateGrad`` left out."""
    loss = torch_linear(layer)(torch.from_numpy(x.to_numpy())).sum()
    names = [node.name().rsplit("::", 1)[-1] for node, _ in _walk(loss.grad_fn)]
    return tuple(n for n in names if n != LEAF)


def same_torch_graph(prediction: Any, truth: tuple[str, ...]) -> bool:
    """Right when the nodes written are ``truth``'s, in record order or from the loss back
    ("t, addmm, sum", "SumBackward0 → AddmmBackward0 → TBackward0")."""
    said, want = steps_read(prediction), steps_read(list(truth))
    return said is not None and want is not None and said in (want, want[::-1])


class Beside:
    """Flowcharts drawn side by side (a page shows its HTML)."""

    def __init__(self, *charts: Flowchart) -> None:
        self.charts = charts

    def _repr_html_(self) -> str:
        cells = "".join(f"<div style='margin-right:32px'>{c.svg()}</div>" for c in self.charts)
        return f"<div style='display:flex;align-items:flex-start;overflow-x:auto'>{cells}</div>"


_STEP, _LEAF, _USER = COLORS["autodiff"], COLORS["nn"], COLORS["user"]


def minidl_chart(layer: Linear, x: Tensor) -> Flowchart:
    """minidl's graph of ``layer(x).sum()`` from the loss's node down to the inputs, step
    names only. A dashed arrow: an input no gradient goes to (x)."""
    chart = Flowchart("TB", title="minidl's graph of layer(x).sum()")
    names = {"x": x, "weight": layer.weight.val(), "bias": layer.bias.val()}
    named = {autodiff_tensor_of(t).node.id: n for n, t in names.items()}
    chart.node("loss", "minidl: loss", shape="round", fill=_USER[0], stroke=_USER[1])
    nodes = sorted(walk(autodiff_tensor_of(layer(x).sum()).node), key=lambda n: -n.id)
    chart.edge("loss", str(nodes[0].id))
    for node in (n for n in nodes if n.step is not None):
        chart.node(str(node.id), type(node.step).__name__, fill=_STEP[0], stroke=_STEP[1])
        for parent, tracked in zip(node.step.inputs, node.step.tracked):
            if parent.id in named:
                name = named[parent.id]
                fill, stroke = _LEAF if tracked else _USER
                chart.node(name, f"{name} {list(names[name].shape)}", shape="round",
                           fill=fill, stroke=stroke)
                chart.edge(str(node.id), name, dashed=not tracked)
            else:
                chart.edge(str(node.id), str(parent.id))
    return chart


def torch_chart(layer: Linear, x: Tensor) -> Flowchart:
    """PyTorch's graph of the same loss, walked from ``grad_fn``: its nodes, each param's
    ``AccumulateGrad`` drawn as the param's leaf, x (``None``: no gradient) dashed."""
    chart = Flowchart("TB", title="PyTorch's graph of layer_t(x_t).sum()")
    theirs = torch_linear(layer)
    loss = theirs(torch.from_numpy(x.to_numpy())).sum()
    params = {id(theirs.weight): "weight", id(theirs.bias): "bias"}
    walked = _walk(loss.grad_fn)
    ids = {id(node): f"t{k}" for k, (node, _) in enumerate(walked)}
    chart.node("loss", "PyTorch: loss", shape="round", fill=_USER[0], stroke=_USER[1])
    chart.edge("loss", "t0")
    for node, below in walked:
        name = node.name().rsplit("::", 1)[-1]
        if name == LEAF:
            p = node.variable
            chart.node(ids[id(node)], f"{params[id(p)]} {list(p.shape)}\n{LEAF}",
                       shape="round", fill=_LEAF[0], stroke=_LEAF[1])
            continue
        chart.node(ids[id(node)], name, fill=_STEP[0], stroke=_STEP[1])
        for n in below:
            if n is None:
                chart.node("x", f"x {list(x.shape)}", shape="round", fill=_USER[0],
                           stroke=_USER[1])
            chart.edge(ids[id(node)], "x" if n is None else ids[id(n)], dashed=n is None)
    return chart


def both_graphs(layer: Linear, x: Tensor) -> Beside:
    """The graphs of ``layer(x).sum()`` in minidl (left) and PyTorch (right)."""
    return Beside(minidl_chart(layer, x), torch_chart(layer, x))
