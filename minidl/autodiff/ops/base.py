"""Recording an op: run its forward, and if any input is tracked, attach its step to a new node.

burn-autodiff ``ops/base.rs``: ``OpsPrep``, ``prepare([nodes]).memory_bound().stateful()`` →
``Tracked`` or ``UnTracked``. Here :func:`record` runs the step's forward on the inner backend
and :func:`finish` does both halves of burn's preparation: decide tracked vs untracked, then
fill the step's ``saved`` mapping according to the checkpointing strategy.

:class:`AutodiffOpsBase` is what every op family of ``Autodiff[B]`` (the other modules of this
package) inherits: the inner backend ``_inner`` and the checkpointing strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, ClassVar

from minidl.autodiff.grad_mode import STATE as GRAD_MODE
from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.step import Recompute, Step
from minidl.autodiff.tensor import AutodiffTensor

_NONE = Requirement.NONE
_GRAD_IN_BACKWARD = Requirement.GRAD_IN_BACKWARD


class AutodiffOpsBase:
    """The base of Autodiff's op families: ``cls._inner`` is the decorated backend ``B`` and
    ``cls.checkpointing`` the strategy (``None`` or ``"balanced"``); both are set on the
    concrete ``Autodiff[B]`` class that :func:`~minidl.autodiff.backend.autodiff_backend` makes."""

    _inner: ClassVar[type]
    checkpointing: ClassVar[str | None] = None


def plain_device(device: Any) -> Any:
    """``device`` without its autodiff flag (``device.inner()`` for an autodiff device): the
    device to hand the inner backend.

    Autodiff[B]'s device is B's device (as in burn); Dispatch may pass its autodiff twin.
    """
    is_autodiff = getattr(device, "is_autodiff", None)
    return device.inner() if is_autodiff is not None and is_autodiff() else device


def prim(tensor: Any) -> Any:
    """The inner primitive of an ``AutodiffTensor`` (an inner primitive is returned as is)."""
    return tensor.inner if isinstance(tensor, AutodiffTensor) else tensor


def lift(value: Any) -> AutodiffTensor:
    """An ``AutodiffTensor`` as is; an inner float primitive as an untracked constant."""
    if type(value) is AutodiffTensor:  # the common case, cheaper than isinstance
        return value
    return AutodiffTensor.untracked(value)


def record(AD: type, step: Step, *inputs: Any) -> AutodiffTensor:
    """Run ``step.forward`` on ``AD``'s inner backend and record it (see :func:`finish`)."""
    if len(inputs) == 1:  # most ops take one or two tensors; spelled out, see finish
        (x,) = inputs
        tensors = (x if type(x) is AutodiffTensor else lift(x),)
        out = step.forward(AD._inner, tensors[0].inner)
    elif len(inputs) == 2:
        lhs, rhs = inputs
        tensors = (lhs if type(lhs) is AutodiffTensor else lift(lhs),
                   rhs if type(rhs) is AutodiffTensor else lift(rhs))
        out = step.forward(AD._inner, tensors[0].inner, tensors[1].inner)
    else:
        tensors = tuple([t if type(t) is AutodiffTensor else lift(t) for t in inputs])
        out = step.forward(AD._inner, *[t.inner for t in tensors])
    return finish(AD, step, tensors, out)


def finish(AD: type, step: Step, inputs: Sequence[AutodiffTensor], out: Any) -> AutodiffTensor:
    """Wrap the forward result ``out``; record ``step`` when some input is tracked.

    Nothing is recorded when no input is tracked or inside ``no_grad()``: the result is then an
    untracked tensor and ``step`` (with whatever it saved) is dropped.
    """
    # A speed trick kept on purpose (ARCHITECTURE.md, "Where speed tricks may live"): every op comes through
    # here, and the fields are spelled out for one and two inputs. The plain form (one
    # comprehension per field, here and in ``record``) measured Autodiff[Flex].float_add of a
    # 4x4 at 6.4 us against 3.6 us (best of bench/stack.py --quick, Python 3.11): on 3.11 each
    # comprehension is a function call, and together they cost more than the add recorded.
    count = len(inputs)
    if count == 1:
        a = inputs[0]
        nodes = (a.node,)
        tracked = (nodes[0].tracked,)
    elif count == 2:
        a, b = inputs
        nodes = (a.node, b.node)
        tracked = (nodes[0].tracked, nodes[1].tracked)
    else:
        nodes = tuple([t.node for t in inputs])
        tracked = tuple([n.tracked for n in nodes])
    if True not in tracked or not GRAD_MODE.enabled:
        return AutodiffTensor(out, Node(_NONE))
    step.inputs = nodes
    step.tracked = tracked
    if count == 1:
        step.shapes = (a.shape,)
        step.dtypes = (a.dtype,)
    elif count == 2:
        step.shapes = (a.shape, b.shape)
        step.dtypes = (a.dtype, b.dtype)
    else:
        step.shapes = tuple([t.shape for t in inputs])
        step.dtypes = tuple([t.dtype for t in inputs])
    saved = step.saved
    if step.memory_bound and AD.checkpointing == "balanced":
        # keep nothing computed: an input made by another recomputable step is recomputed in
        # backward; leaves, constants and outputs of compute-bound steps are kept (as burn).
        step.recomputable = True
        for name, tensor in zip(step.input_names(count), inputs):
            parent = tensor.node.step
            recompute = parent is not None and parent.recomputable
            saved[name] = Recompute(tensor.node) if recompute else tensor.inner
    else:
        for name in step.keeps(tracked):  # most element-wise steps keep nothing
            if name == "out":
                saved[name] = out
            else:  # an input, found by its name in forward's signature
                saved[name] = inputs[step.input_names(count).index(name)].inner
    parents = nodes if False not in tracked else tuple(compress(nodes, tracked))
    return AutodiffTensor(out, Node(_GRAD_IN_BACKWARD, parents, step))
