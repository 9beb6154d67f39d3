"""The tour's linear hole, drawn: each call the default body makes back into Dispatch.

burn-dispatch has no forwarder for ``linear`` (``ops/module.rs``: ``// TODO: linear ops`` at
v0.22.0-pre.2), so ``Dispatch::linear`` runs burn-backend's default body
(``backend/ops/modules/linear.rs``) with ``B = Dispatch``. Each op that body calls on ``B``
goes through Dispatch again, and on an autodiff device records one step of its own.
:func:`body_calls` reads those calls off a recorded trace; :func:`hole_chart` draws them as
three arrows fanning out of the body, each down to its Step and its kernel.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass, field

from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart
from minidl.debug.trace import Trace

__all__ = ["BREAKPOINTS", "BodyCall", "body_calls", "hole_chart", "sources_beside"]

#: Breakpoints for :func:`body_calls`: Dispatch's float ops and every step's forward.
BREAKPOINTS = [r"^Dispatch\.float_", r"^[A-Z]\w*\.forward$"]

_BODY = "minidl/backend/modules/"  # the protocol's default bodies (burn-backend)


@dataclass
class BodyCall:
    """One call the default body made on ``B = Dispatch``: ``op`` (``"float_matmul"``), the
    body's frame that made it, the target ``shape`` of a reshape, the step it recorded and
    the kernels that computed."""

    op: str
    caller: str
    shape: tuple[int, ...] | None = None
    step: str | None = None
    kernels: list[str] = field(default_factory=list)


_SHAPE_ARG = re.compile(r"shape=\(([\d, ]*)\)")


def _kernel(name: str) -> str:
    return name.removeprefix("kernel ").removesuffix(" [numba]")


def body_calls(trace: Trace) -> list[BodyCall]:
    """The calls on Dispatch made from inside a default body, in call order, read from a
    trace with :data:`BREAKPOINTS`. ``binary_same_shape``, which compares two shapes and
    returns when they differ, is not counted as a kernel that computed."""
    calls: list[BodyCall] = []
    for hit in trace.hits:
        caller = hit.frames[1] if len(hit.frames) > 1 else None
        if hit.name.startswith("Dispatch.") and caller and caller.path.startswith(_BODY):
            computed = [_kernel(k) for k in hit.kernels]
            if len(computed) > 1:  # a first try that handed the op on
                computed = [k for k in computed if k != "binary_same_shape"]
            shape = _SHAPE_ARG.search(hit.frames[0].args or "")
            calls.append(BodyCall(
                hit.name.removeprefix("Dispatch."), caller.name,
                tuple(int(n) for n in shape.group(1).split(",") if n.strip()) if shape
                else None, kernels=computed))
        elif calls and hit.name.endswith(".forward") and calls[-1].step is None \
                and f"Dispatch.{calls[-1].op}" in [f.name for f in hit.frames]:
            calls[-1].step = hit.name.removesuffix(".forward")
    return calls


def hole_chart(calls: list[BodyCall], title: str | None = None) -> Flowchart:
    """The default body on top, one arrow per call on ``B`` down to ``Dispatch``, numbered
    in call order, then the step ``Autodiff[Flex]`` recorded for it and the kernel ``Flex``
    ran (or none)."""
    chart = Flowchart("TB", title=title)
    fill, stroke = COLORS["backend"]
    chart.node("body", "Dispatch.linear: no forwarder\nlinear.linear[Dispatch]\n"
               "the default body, B = Dispatch", shape="round", fill=fill, stroke=stroke)
    for i, call in enumerate(calls):
        fill, stroke = COLORS["dispatch"]
        chart.node(f"d{i}", f"call {i + 1}: B.{call.op}\nDispatch.{call.op}",
                   fill=fill, stroke=stroke)
        chart.edge("body", f"d{i}")
        fill, stroke = COLORS["autodiff"]
        chart.node(f"a{i}", f"Autodiff[Flex]\nrecords Step {call.step}",
                   fill=fill, stroke=stroke)
        chart.edge(f"d{i}", f"a{i}")
        fill, stroke = COLORS["kernel"]
        ran = ", ".join(call.kernels) if call.kernels else "no kernel"
        chart.node(f"k{i}", f"Flex.{call.op}\n{ran}", fill=fill, stroke=stroke)
        chart.edge(f"a{i}", f"k{i}")
    return chart


def _body(fn, fold: str | None = None) -> list[str]:
    """``fn``'s source without its docstring, dedented; the body of an ``if`` whose test
    names ``fold`` (``"MergeBatches"``) becomes one ``...`` line."""
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source).body[0]
    lines = source.splitlines()
    cuts = []
    first = tree.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        cuts.append((first.lineno - 1, first.end_lineno, None))
    for node in ast.walk(tree):
        if fold and isinstance(node, ast.If) and fold in ast.unparse(node.test):
            start, end = node.body[0].lineno - 1, node.body[-1].end_lineno
            indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
            cuts.append((start, end, f"{indent}...  (not taken on this page)"))
    for start, end, keep in sorted(cuts, reverse=True):
        lines[start:end] = [keep] if keep else []
    return lines


def sources_beside(mine, *default, fold: str | None = None) -> str:
    """The sources one under the other, each group under a rule naming it: ``mine`` (the
    functional linear on Tensors, shown as ``my_linear``) and ``default`` (the default body
    on ``B``'s ops, and its helpers), with ``fold``'s branch as one line (:func:`_body`)."""
    out = []
    for fns, what in (((mine,), "my_linear, the book's: Tensor ops"),
                      (default, "the default body: B's ops (burn-backend linear.rs)")):
        out.append(f"# ── {what} ".ljust(74, "─"))
        for fn in fns:
            lines = [ln.split("  #")[0].rstrip() for ln in _body(fn, fold)]
            if fn is mine:
                lines[0] = lines[0].replace(f"def {fn.__name__}(", "def my_linear(", 1)
            out += lines + [""]
    return "\n".join(out).rstrip()
