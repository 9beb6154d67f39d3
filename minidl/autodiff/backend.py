"""``Autodiff[B]``: the backend decorator (burn-autodiff ``backend.rs``).

``autodiff_backend(Flex, None)`` builds, once, a class named ``Autodiff[Flex]`` whose float
primitive is an :class:`AutodiffTensor` wrapping Flex's, the way burn monomorphizes
``Autodiff<Flex>``. It subclasses the protocol ``Backend`` — not ``Flex`` — so an op it does
not override runs the protocol's default with ``cls = Autodiff[Flex]``: the default splits into
ops that each record a step (``layer_norm`` becomes mean_dim, sub, mul, ...).
"""

from __future__ import annotations

from typing import Any

from minidl.autodiff import engine
from minidl.autodiff.checkpoint import STRATEGIES
from minidl.autodiff.gradients import Gradients
from minidl.autodiff.ops.activation import AutodiffActivationOps
from minidl.autodiff.ops.arithmetic import AutodiffArithmeticOps
from minidl.autodiff.ops.base import prim
from minidl.autodiff.ops.bool_tensor import AutodiffBoolOps
from minidl.autodiff.ops.int_tensor import AutodiffIntOps
from minidl.autodiff.ops.layout import AutodiffLayoutOps
from minidl.autodiff.ops.math import AutodiffMathOps
from minidl.autodiff.ops.module import AutodiffModuleOps
from minidl.autodiff.ops.reduce import AutodiffReduceOps
from minidl.autodiff.ops.tensor import AutodiffTensorOps
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend import Backend


class Autodiff(
    AutodiffTensorOps,
    AutodiffArithmeticOps,
    AutodiffMathOps,
    AutodiffReduceOps,
    AutodiffLayoutOps,
    AutodiffActivationOps,
    AutodiffModuleOps,
    AutodiffIntOps,
    AutodiffBoolOps,
    Backend,
):
    """The autodiff decorator. ``Autodiff[Flex]`` (or ``Autodiff[Flex, "balanced"]`` for
    balanced gradient checkpointing) is the concrete backend for an inner backend.

    Its ops come from the families in :mod:`minidl.autodiff.ops` (one file each, the step
    classes beside the overrides that record them); an op none of them overrides runs the
    protocol default of ``Backend`` with ``cls = Autodiff[B]``. Besides the protocol ops it
    has burn's ``AutodiffBackend`` methods: :meth:`from_inner`, :meth:`inner`,
    :meth:`backward`, :meth:`grad`, :meth:`grad_remove`.
    """

    abstract = True
    name = "autodiff"

    def __class_getitem__(cls, item: Any) -> type:
        if isinstance(item, tuple):
            return autodiff_backend(*item)
        return autodiff_backend(item)

    @classmethod
    def ad_enabled(cls) -> bool:
        return True

    @classmethod
    def inner_backend(cls) -> type:
        """The decorated backend ``B``."""
        return cls._inner

    # ----- burn's AutodiffBackend ----------------------------------------------------------
    @classmethod
    def from_inner(cls, tensor: Any) -> AutodiffTensor:
        """Lift an inner float primitive: a new leaf that does not require grad."""
        return AutodiffTensor.untracked(tensor)

    @classmethod
    def inner(cls, tensor: Any) -> Any:
        """The inner primitive, outside any graph."""
        return prim(tensor)

    @classmethod
    def backward(cls, tensor: AutodiffTensor, retain_graph: bool = False) -> Gradients:
        """Run backward from ``tensor`` (seeded with ones) and return the leaves' gradients.

        As in burn, this consumes the graph: each step that runs frees what it saved, and a
        second ``backward`` through the same steps raises ``RuntimeError`` ("the graph of
        this tensor was consumed by a previous backward()"). ``retain_graph=True`` (PyTorch's
        option; burn has none) keeps the steps so backward can run again.
        """
        return engine.backward(cls, tensor, retain_graph)

    @classmethod
    def grad(cls, tensor: AutodiffTensor, grads: Gradients) -> Any | None:
        """The gradient of ``tensor`` in ``grads`` (an inner primitive) or ``None``."""
        return grads.get(tensor)

    @classmethod
    def grad_remove(cls, tensor: AutodiffTensor, grads: Gradients) -> Any | None:
        """Take the gradient of ``tensor`` out of ``grads``."""
        return grads.remove(tensor)


_CACHE: dict[tuple[type, str | None], type] = {}


def autodiff_backend(inner: type, checkpointing: str | None = None) -> type:
    """The ``Autodiff[inner]`` class for a checkpointing strategy (``None`` or ``"balanced"``),
    made on first use and cached: one class per (inner backend, strategy)."""
    if checkpointing not in STRATEGIES:
        raise ValueError(f"autodiff: unknown checkpointing strategy {checkpointing!r}, expected one of {STRATEGIES}")
    if getattr(inner, "ad_enabled", lambda: False)():
        raise RuntimeError("Only first-order autodiff is supported: the inner backend is already autodiff")
    key = (inner, checkpointing)
    cls = _CACHE.get(key)
    if cls is None:
        inner_name = getattr(inner, "name", inner.__name__.lower())
        label = inner.__name__ if checkpointing is None else f"{inner.__name__}, {checkpointing!r}"
        cls = type(
            f"Autodiff[{label}]",
            (Autodiff,),
            {
                "__module__": __name__,
                "__doc__": f"Autodiff decorating {inner.__name__} (checkpointing: {checkpointing}).",
                "_inner": inner,
                "checkpointing": checkpointing,
                "name": f"autodiff<{inner_name}>" if checkpointing is None else f"autodiff<{inner_name}, {checkpointing}>",
            },
        )
        cls.__qualname__ = cls.__name__
        _CACHE[key] = cls
    return cls
