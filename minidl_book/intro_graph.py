"""The intro's backward half: the graph ``Autodiff[Flex]`` records for ``layer(x).sum()``.

burn-dispatch has no ``linear`` forwarder (``// TODO: linear ops``), so the protocol's
default body runs with ``B = Dispatch`` and ``Autodiff`` records its three calls as three
steps, never its own one-step ``linear`` (burn-autodiff's ``LinearWithBias``,
``crates/burn-autodiff/src/ops/module.rs``).

- :func:`recorded_steps`: the truth, the step names ``debug.graph`` reads off the loss.
- :func:`forwarded_steps`: the same loss with the forwarder burn lacks set on ``Dispatch``
  (:func:`minidl_book.dispatch_linear.forwarding_linear`): one ``LinearWithBias``.
- :func:`steps_read`, :func:`same_steps`, :func:`steps_unclear`: how the checker reads the
  steps written in order, as a list of names or a string ("Matmul → Reshape → …",
  "float_matmul, float_reshape, …", PyTorch's "MatmulBackward0" spelling).
- :func:`backward_figure`: the recorded graph drawn as backward walks it, steps by name
  (no ids or kernels), the weight's gradient ``xᵀ·g`` on its arrow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from minidl import Tensor, debug
from minidl.autodiff.step import Step
from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart
from minidl.nn import Linear
from minidl_book.dispatch_linear import forwarding_linear
from minidl_book.tour_path import record_backward, walk_steps


def recorded_steps(layer: Linear, x: Tensor) -> tuple[str, ...]:
    """The steps ``Autodiff`` records for ``layer(x).sum()``, in the order recorded."""
    return tuple(debug.graph(layer(x).sum()).ops)


def forwarded_steps(layer: Linear, x: Tensor) -> tuple[str, ...]:
    """:func:`recorded_steps` with ``Dispatch.linear`` forwarded (the forwarder burn-dispatch
    leaves as a TODO), so that ``Autodiff``'s own one-step ``linear`` runs."""
    with forwarding_linear():
        return recorded_steps(layer, x)


def _step_names() -> set[str]:
    """Every step class of minidl's autodiff, casefolded ("matmul", "linearwithbias")."""
    names, todo = set(), [Step]
    while todo:
        for cls in todo.pop().__subclasses__():
            names.add(cls.__name__.casefold())
            todo.append(cls)
    return names


#: Words that name an op: minidl's steps, and the other names a reader may give one.
ALIASES = {"mm": "matmul", "gemm": "matmul", "linear": "linear", "addmm": "addmm",
           "t": "t", "transpose": "t", "broadcast": "broadcast",
           "unsqueeze": "unsqueeze", "view": "reshape", "bmm": "bmm", "sum_all": "sum"}
#: Words that name no recorded step ("Sum, backward", "Sum → ones"): a list item of
#: nothing but these (and ``FILLER``) is a wrong step, not a word to skip.
NOT_STEPS = {"backward", "ones", "grad", "grads", "gradient", "gradients", "seed"}
FILLER = {"the", "a", "its", "call", "pass", "step"}
OPS = _step_names()
#: Between two steps: a comma, an arrow, a new line, "then"; a clause that denies is dropped.
CLAUSE = re.compile(r"[,;:()\[\]|\n]|→|⇒|->|=>|>|\b(?:then|and|instead|but)\b")
DENIES = re.compile(r"\b(?:not|no|never|nor|without)\b|n't")


def _op(word: str) -> str | None:
    """The op ``word`` names, or ``None``: ``float_`` and PyTorch's ``Backward0`` dropped."""
    word = re.sub(r"backward\d*$", "", word.removeprefix("float_")) or word
    if word in OPS:
        return word
    return ALIASES.get(word)


def steps_read(prediction: Any) -> tuple[str, ...] | None:
    """The ops a written answer names, in order, casefolded; a clause that denies ("not one
    Linear") left out; a list item naming only what is no step ("backward") kept as
    ``"?backward"``, so that it is wrong; "view" read as reshape (PyTorch's name). ``None`` when it is no string or list of strings, or names no op."""
    if isinstance(prediction, list | tuple) and all(isinstance(p, str) for p in prediction):
        prediction = " → ".join(prediction)
    if not isinstance(prediction, str):
        return None
    text = re.sub(r"matrix\s+(?:multiply|multiplication|product)", "matmul",
                  prediction.casefold())
    ops: list[str] = []
    for clause in CLAUSE.split(text):
        if clause and not DENIES.search(clause):
            words = re.findall(r"[a-z][a-z0-9_]*", clause)
            ops += [op for w in words if (op := _op(w)) is not None]
            if set(words) & NOT_STEPS and set(words) <= NOT_STEPS | FILLER:
                ops.append("?" + " ".join(words))  # named as a step: never recorded
    return tuple(ops) if any(not op.startswith("?") for op in ops) else None


def same_steps(prediction: Any, truth: Sequence[str]) -> bool:
    """Right when the ops written are the recorded steps, in the order recorded."""
    return steps_read(prediction) == tuple(name.casefold() for name in truth)


def steps_unclear(prediction: Any) -> bool:
    """A string in which no op is named: the checker asks for the steps' names."""
    return isinstance(prediction, str) and steps_read(prediction) is None


def backward_figure(layer: Linear, x: Tensor) -> tuple[Flowchart, list[dict]]:
    """``layer(x).sum().backward()`` traced and drawn on its graph, the loss on top, and
    the steps it ran (:func:`minidl_book.tour_path.walk_steps`): each step by its name only
    (no node ids, no kernels: later chapters' words), an arrow that changes the gradient
    saying how; ``x``, not tracked, gets a dashed one."""
    loss = layer(x).sum()
    names = {"x": x, "weight": layer.weight.val(), "bias": layer.bias.val()}
    steps = walk_steps(record_backward(loss), loss, names)
    chart = Flowchart("TB", title="layer(x).sum().backward()")
    fill, stroke = COLORS["tensor"]
    chart.node("start", f"loss.backward()\ng = ones {list(steps[0]['grad'])}", shape="round",
               fill=fill, stroke=stroke)
    chart.edge("start", str(steps[0]["id"]))
    for s in steps:
        fill, stroke = COLORS["autodiff"]
        chart.node(str(s["id"]), s["op"], fill=fill, stroke=stroke)
        for parent, label, shape, tracked in s["edges"]:
            if isinstance(parent, str):
                fill, stroke = COLORS["nn"] if tracked else COLORS["user"]
                what = "a param" if tracked else "not tracked"
                chart.node(parent, f"{parent} {list(shape)}\n{what}", shape="round",
                           fill=fill, stroke=stroke)
            said = label if tracked and not label.startswith("[") else None  # a rule only
            chart.edge(str(s["id"]), str(parent), said, dashed=not tracked)
    return chart, steps
