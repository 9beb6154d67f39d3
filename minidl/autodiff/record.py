"""Recording an op: run its forward, and if any input is tracked, attach its step to a new node.

burn's ``OpsPrep``: ``prepare([nodes]).memory_bound().stateful()`` → ``Tracked`` or
``UnTracked``. Here :func:`finish` does both halves: decide tracked vs untracked, then fill
the step's ``saved`` mapping according to the checkpointing strategy.
"""

from __future__ import annotations

from typing import Any

from minidl.autodiff.grad_mode import is_grad_enabled
from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.step import Recompute, Step
from minidl.autodiff.tensor import AutodiffTensor

#: The checkpointing strategies: ``None`` keeps what each step declares; ``"balanced"`` makes
#: memory-bound steps keep no computed array (burn's ``BalancedCheckpointing``).
STRATEGIES = (None, "balanced")

_NONE = Requirement.NONE
_GRAD_IN_BACKWARD = Requirement.GRAD_IN_BACKWARD


def lift(value: Any) -> AutodiffTensor:
    """An ``AutodiffTensor`` as is; an inner float primitive as an untracked constant."""
    if isinstance(value, AutodiffTensor):
        return value
    return AutodiffTensor.untracked(value)


def record(AD: type, step: Step, *inputs: Any) -> AutodiffTensor:
    """Run ``step.forward`` on ``AD``'s inner backend and record it (see :func:`finish`)."""
    tensors = [lift(t) for t in inputs]
    out = step.forward(AD._inner, *[t.primitive for t in tensors])
    return finish(AD, step, tensors, out)


def finish(AD: type, step: Step, inputs: list[AutodiffTensor], out: Any) -> AutodiffTensor:
    """Wrap the forward result ``out``; record ``step`` when some input is tracked.

    Nothing is recorded when no input is tracked or inside ``no_grad()``: the result is then an
    untracked tensor and ``step`` (with whatever it saved) is dropped.
    """
    nodes = tuple([t.node for t in inputs])
    tracked = tuple([n.requirement is not _NONE for n in nodes])
    if True not in tracked or not is_grad_enabled():
        return AutodiffTensor.untracked(out)
    step.inputs = nodes
    step.tracked = tracked
    step.shapes = tuple([tuple(t.primitive.shape) for t in inputs])
    step.dtypes = tuple([t.primitive.dtype for t in inputs])
    names = step.input_names(len(inputs))
    saved = step.saved
    if step.memory_bound and AD.checkpointing == "balanced":
        # keep nothing computed: an input made by another recomputable step is recomputed in
        # backward; leaves, constants and outputs of compute-bound steps are kept (as burn).
        step.recomputable = True
        for name, tensor in zip(names, inputs):
            parent = tensor.node.step
            recompute = parent is not None and parent.recomputable
            saved[name] = Recompute(tensor.node) if recompute else tensor.primitive
    else:
        for name in step.keeps(tracked):
            saved[name] = out if name == "out" else inputs[names.index(name)].primitive
    parents = tuple([n for n, t in zip(nodes, tracked) if t])
    return AutodiffTensor(out, Node(_GRAD_IN_BACKWARD, parents, step))
