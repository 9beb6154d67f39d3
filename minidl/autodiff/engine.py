"""``backward``: walk the recorded steps from a root down to the leaves (burn-autodiff ``runtime``).

Steps run in decreasing node id (a topological order, since parents are created first). Each
step gets the sum of its output's gradients, returns one per input, and — unless the graph is
retained — is *consumed*: its saved arrays are freed and it is marked so, as burn's graph
server removes every step it executes. Calling backward a second time through the same steps
is an error here, with a message saying so; burn's traversal skips a removed step instead
(``graph/traversal.rs``), leaving the gradients below it out.
"""

from __future__ import annotations

from minidl.autodiff.checkpoint import Checkpointer
from minidl.autodiff.gradients import Gradients
from minidl.autodiff.node import Node, Requirement, walk
from minidl.autodiff.step import State
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend.dtype import DType

CONSUMED = (
    "backward(): the graph of this tensor was consumed by a previous backward() — like burn, "
    "backward frees every recorded step (GradInBackward node) it runs through, and step "
    "{step} (node #{node}) has already run. Run the forward pass again to record a new graph, "
    "or keep the graph with Autodiff[B].backward(tensor, retain_graph=True)."
)


def reachable(root: Node) -> list[Node]:
    """Every tracked node the root depends on, root included, in decreasing id order (the
    order backward runs them: :func:`~minidl.autodiff.node.walk` reversed).

    Raises ``RuntimeError`` when one of their steps was consumed by an earlier backward.
    """
    order = walk(root)[::-1]
    for node in order:
        if node.step is not None and node.step.consumed:
            raise RuntimeError(CONSUMED.format(step=type(node.step).__name__, node=node.id))
    return order


def _check_grads(step, input_grads) -> None:
    """Refuse a ``backward`` that does not return one gradient (or ``None``) per input."""
    name = type(step).__name__
    if not isinstance(input_grads, (tuple, list)):
        raise TypeError(
            f"{name}.backward returned {type(input_grads).__name__}: expected a tuple with one "
            f"gradient (or None) per input, {len(step.inputs)} here"
        )
    if len(input_grads) != len(step.inputs):
        raise ValueError(
            f"{name}.backward returned {len(input_grads)} gradient(s) for {len(step.inputs)} "
            f"input(s) {step.input_names(len(step.inputs))}: one per input, None for an untracked one"
        )


def backward(AD: type, root: AutodiffTensor, retain_graph: bool = False) -> Gradients:
    """Gradients of ``root`` (seeded with ones of its shape) for every ``Grad`` leaf under it."""
    grads = Gradients()
    if not root.node.tracked:
        return grads
    B = AD._inner
    order = reachable(root.node)
    prim = root.inner
    pending = {root.node.id: B.float_ones(root.shape, DType.of(prim.dtype), B.float_device(prim))}
    checkpointer = Checkpointer(B)
    for node in order:
        grad = pending.pop(node.id, None)
        step = node.step
        if step is None:
            if grad is not None and node.requirement is Requirement.GRAD:
                grads.register(node.id, grad, B)
            continue
        if grad is not None:
            input_grads = step.backward(B, grad, State(step, node, checkpointer))
            _check_grads(step, input_grads)
            for parent, tracked, dtype, g in zip(step.inputs, step.tracked, step.dtypes, input_grads, strict=True):
                if tracked and g is not None:
                    if g.dtype != dtype:  # a mixed-dtype op returns lhs's dtype; grads keep each input's
                        g = B.float_cast(g, DType.of(dtype))
                    current = pending.get(parent.id)
                    pending[parent.id] = g if current is None else B.float_add(current, g)
        checkpointer.release(node)
        if not retain_graph:
            step.consumed = True
            step.saved.clear()
    return grads
