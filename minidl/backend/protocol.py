"""Reading the backend protocol back: which ops exist, which are required, who defines one.

burn-backend's traits are checked by rustc: an ``impl Backend`` that misses a required method
does not compile. Here :class:`BackendBase` does the check when a concrete backend class is
defined, and the functions below answer the questions the book and ``minidl.debug`` ask
(``op_names``, ``is_required``, ``defines``, ``defining_class``, ``signature``).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from minidl.backend.activation_ops import ActivationOps
from minidl.backend.bool_ops import BoolTensorOps
from minidl.backend.float_ops import FloatTensorOps
from minidl.backend.int_ops import IntTensorOps
from minidl.backend.module_ops import ModuleOps

_PROTOCOLS: tuple[type, ...] = (FloatTensorOps, IntTensorOps, BoolTensorOps, ActivationOps, ModuleOps)


class BackendBase:
    """Root of every backend class. Subclasses set ``name``; abstract ones set ``abstract = True``.

    Defining a concrete backend that leaves a required op undefined raises ``TypeError`` naming
    the op, the way rustc refuses an ``impl`` that misses a required trait method.
    """

    name: ClassVar[str] = "backend"
    abstract: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("abstract", False):
            return
        cls.abstract = False
        missing = [op for op in op_names(cls) if is_required(cls, op) and not defines(cls, op)]
        if missing:
            raise TypeError(
                f"backend {cls.__name__} does not implement required op(s): {', '.join(missing)}"
            )

    @classmethod
    def ad_enabled(cls) -> bool:
        """Whether this backend records a graph for backward (burn's ``B::ad_enabled``)."""
        return False

    def __class_getitem__(cls, item):  # pragma: no cover - only for readable typing
        return cls


def ops_protocols() -> tuple[type, ...]:
    """The op families, in the order the book's tables list them."""
    return _PROTOCOLS


def _is_op(member: object) -> bool:
    func = getattr(member, "__func__", None)
    return isinstance(member, classmethod) and (
        hasattr(func, "__required__") or hasattr(func, "__default__")
    )


def op_names(cls: type) -> list[str]:
    """Every op name of the backend protocol that ``cls`` takes part in, in protocol order."""
    names: list[str] = []
    for proto in ops_protocols():
        if issubclass(cls, proto):
            names.extend(n for n, v in proto.__dict__.items() if _is_op(v))
    return names


def protocol_of(op: str) -> type | None:
    """The protocol mixin (``FloatTensorOps``, ``ModuleOps``, ...) that declares ``op``."""
    for proto in ops_protocols():
        if _is_op(proto.__dict__.get(op)):
            return proto
    return None


def is_required(cls: type, op: str) -> bool:
    """True when ``cls`` must implement ``op``: one of the op families ``cls`` takes part in
    declares it without a default."""
    proto = protocol_of(op)
    return (
        proto is not None
        and issubclass(cls, proto)
        and getattr(proto.__dict__[op].__func__, "__required__", False)
    )


def defines(cls: type, op: str) -> bool:
    """True when ``cls`` (or a backend class it inherits from, not a protocol) defines ``op``.

    False means calls to ``cls.op`` run the protocol's default method with ``B = cls``.
    """
    for klass in cls.__mro__:
        if klass in ops_protocols():
            return False
        if op in klass.__dict__:
            return True
    return False


def defining_class(cls: type, op: str) -> type | None:
    """The class in ``cls``'s MRO whose body holds the ``op`` that ``cls.op`` runs."""
    for klass in cls.__mro__:
        if op in klass.__dict__:
            return klass
    return None


def signature(op: str) -> inspect.Signature:
    """The protocol signature of ``op`` (without ``cls``)."""
    proto = protocol_of(op)
    if proto is None:
        raise KeyError(f"no backend op named {op!r}")
    sig = inspect.signature(proto.__dict__[op].__func__)
    return sig.replace(parameters=list(sig.parameters.values())[1:])
