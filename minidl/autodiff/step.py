"""``Step``: one recorded op, its forward and its backward side by side (burn's ``Backward`` trait).

A step class is named after its op (``Matmul``, ``Add``, ``Conv2dWithBias``) and has

* ``forward(self, B, *inputs)``: the op on the inner backend ``B`` — run once when the op is
  called, and again in backward when checkpointing chose to recompute instead of keeping;
* ``backward(self, B, grad, state)``: one gradient per input (``None`` for untracked ones),
  reading what the step kept through ``state`` (a :class:`State`: ``state["rhs"]``);
* ``saved``: the explicit mapping of what it keeps for backward (its checkpoints): input
  arrays, its output, or extra arrays such as indices and masks, so the book can print them.

What to keep is declared by ``saves`` (names of ``forward``'s inputs, or ``"out"``) or by
overriding :meth:`Step.keeps` when it depends on which inputs are tracked (burn's ``Mul``
keeps ``rhs`` only when ``lhs`` needs a gradient).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from minidl.autodiff.node import Node
from minidl.backend.dtype import DType

#: Attributes every step has; everything else set in ``__init__`` is an op parameter.
_BOOKKEEPING = frozenset({"saved", "inputs", "tracked", "shapes", "dtypes", "recomputable", "consumed"})


class Recompute:
    """A saved entry that holds no array: the value of ``node`` is recomputed in backward
    from its parents' recorded forward (balanced checkpointing, burn's ``Recompute`` action)."""

    __slots__ = ("node",)

    def __init__(self, node: Node):
        self.node = node

    def __repr__(self) -> str:
        return f"Recompute(#{self.node.id})"


class Step:
    """Base of the backward steps. Subclasses write ``forward`` and ``backward`` together.

    ``memory_bound`` steps (element-wise, reshapes and other layout ops, slices, select) are
    cheap to re-run: under balanced checkpointing they keep no computed array and recompute
    their inputs in backward. Compute-bound steps set it ``False``, as burn marks them
    ``.compute_bound()`` (burn-autodiff ``ops/tensor.rs`` and ``ops/module.rs`` at
    v0.22.0-pre.2): matmul, conv, pools, linear, every reduction (sum, mean, their ``_dim``
    forms, prod, max/min along a dim), gather/scatter, mask_where/mask_fill, cast and
    to_device. They keep what their backward needs, and their output stays cached as a value
    others recompute from.
    """

    memory_bound: ClassVar[bool] = True
    saves: ClassVar[tuple[str, ...]] = ()
    _names: ClassVar[dict[type, tuple[str, bool]]] = {}

    # What recording fills in (``finish`` in ops/base.py). Class-level defaults, so creating a
    # step (once per op call) sets one attribute instead of seven: a speed trick
    # (ARCHITECTURE.md, "Where speed tricks may live").
    inputs: tuple[Node, ...] = ()
    tracked: tuple[bool, ...] = ()
    shapes: tuple[tuple[int, ...], ...] = ()
    dtypes: tuple = ()
    recomputable: bool = False
    consumed: bool = False

    def __init__(self, **extra: Any):
        self.saved: dict[str, Any] = extra  # a fresh dict on every call already

    def forward(self, B: type, *inputs):
        """Run the op on the inner backend ``B``."""
        raise NotImplementedError

    def backward(self, B: type, grad, state: State) -> tuple:
        """Gradients for each input, given the output's ``grad`` (inner primitives)."""
        raise NotImplementedError

    def keeps(self, tracked: tuple[bool, ...]) -> tuple[str, ...]:
        """Names (``forward`` inputs or ``"out"``) to keep, given which inputs are tracked."""
        return self.saves

    @classmethod
    def input_names(cls, count: int) -> tuple[str, ...]:
        """The names of ``forward``'s tensor inputs (``tensors[0]``, ... for a variadic one)."""
        if cls not in Step._names:
            params = list(inspect.signature(cls.forward).parameters.values())[2:]
            variadic = bool(params) and params[-1].kind is inspect.Parameter.VAR_POSITIONAL
            Step._names[cls] = (tuple(p.name for p in params), variadic)
        names, variadic = Step._names[cls]
        if variadic:
            return tuple(f"{names[-1]}[{i}]" for i in range(count))
        return names

    def params(self) -> dict[str, Any]:
        """The op's parameters (``dim``, ``shape``, options, ...) for display."""
        return {k: v for k, v in vars(self).items() if k not in _BOOKKEEPING}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({params})"


class State:
    """What ``backward`` reads the step's ``saved`` mapping through (burn's ``ops.state``):
    ``state["rhs"]``, ``state["out"]``.

    A :class:`Recompute` entry (or ``"out"`` when the output was not kept) is recomputed by
    the checkpointer; anything else is returned as kept.
    """

    __slots__ = ("step", "node", "checkpointer")

    def __init__(self, step: Step, node: Node, checkpointer):
        self.step = step
        self.node = node
        self.checkpointer = checkpointer

    def __repr__(self) -> str:  # what a backtrace prints: the names it holds
        return f"State({', '.join(self.step.saved)})"

    def __contains__(self, name: object) -> bool:
        """``"rhs" in state``: whether ``state[name]`` will return a value (burn's
        ``Option<NodeId>`` fields of ``ops.state``, tested with ``rhs.is_some()``).

        Without it, Python's ``in`` falls back to ``__getitem__(0)`` and raises ``KeyError``.
        """
        if name in self.step.saved:
            return True
        return name == "out" and self.step.recomputable

    def __getitem__(self, name: str):
        saved = self.step.saved
        if name in saved:
            return self.checkpointer.resolve(saved[name])
        if name == "out" and self.step.recomputable:
            return self.checkpointer.value(self.node)
        raise KeyError(f"{type(self.step).__name__} did not keep {name!r} (it kept {sorted(saved)})")


# ----- helpers the steps share -----------------------------------------------------------
def sum_to_shape(B: type, grad, shape: tuple[int, ...]):
    """Sum a broadcast gradient back to ``shape``: over new leading dims and grown size-1 dims."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    extra = len(grad.shape) - len(shape)
    for dim in range(len(grad.shape)):
        target = 1 if dim < extra else shape[dim - extra]
        if target == 1 and grad.shape[dim] != 1:
            grad = B.float_sum_dim(grad, dim)
    return B.float_reshape(grad, shape)


def zeros_like(B: type, tensor, shape: tuple[int, ...] | None = None):
    """Zeros with ``tensor``'s dtype and device (and ``shape``, default ``tensor``'s)."""
    shape = tuple(tensor.shape) if shape is None else tuple(shape)
    return B.float_zeros(shape, DType.of(tensor.dtype), B.float_device(tensor))
