"""The ``Backend`` base: required vs default ops, mirroring burn-backend's traits.

A backend is a class whose ops are classmethods, so ``B.float_matmul(a, b)`` reads like
burn's ``B::float_matmul``. The op families (``FloatTensorOps``, ``ModuleOps``, ...) are mixins:
an op decorated with :func:`required` has no body a backend can inherit (burn: a trait method
without a default); every other op is a *default method* written with other ops of ``cls``, so
when it runs on ``Dispatch`` it calls ``Dispatch``'s ops — burn's "default with B = Dispatch".
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np

#: The primitive tensor types backends hand out. Dispatch wraps results of these types in a
#: ``DispatchTensor``; anything else (``TensorData``, shapes, bools) passes through unwrapped.
PRIMITIVE_TYPES: list[type] = [np.ndarray]


def required(fn):
    """Mark a protocol op as required: a concrete backend must define it (no default)."""
    fn.__required__ = True
    return classmethod(fn)


def default(fn):
    """Mark a protocol op as a default method (written with other ops of ``cls``)."""
    fn.__default__ = True
    return classmethod(fn)


class TensorData:
    """Host data read back from a backend (burn's ``TensorData``): a NumPy array, never wrapped."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def __repr__(self) -> str:
        return f"TensorData({self.array!r})"


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
        missing = [op for op in op_names(cls) if is_required(cls, op) and not _defined_below_protocol(cls, op)]
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


def _protocol_classes() -> tuple[type, ...]:
    from minidl.backend import ops_protocols

    return ops_protocols()


def _is_op(member: object) -> bool:
    func = getattr(member, "__func__", None)
    return isinstance(member, classmethod) and (
        hasattr(func, "__required__") or hasattr(func, "__default__")
    )


def op_names(cls: type) -> list[str]:
    """Every op name of the backend protocol that ``cls`` takes part in, in protocol order."""
    names: list[str] = []
    for proto in _protocol_classes():
        if issubclass(cls, proto):
            names.extend(n for n, v in proto.__dict__.items() if _is_op(v))
    return names


def protocol_of(op: str) -> type | None:
    """The protocol mixin (``FloatTensorOps``, ``ModuleOps``, ...) that declares ``op``."""
    for proto in _protocol_classes():
        if _is_op(proto.__dict__.get(op)):
            return proto
    return None


def is_required(cls: type, op: str) -> bool:
    """True when the protocol declares ``op`` without a default."""
    proto = protocol_of(op)
    return proto is not None and getattr(proto.__dict__[op].__func__, "__required__", False)


def _defined_below_protocol(cls: type, op: str) -> bool:
    for klass in cls.__mro__:
        if klass in _protocol_classes():
            return False
        if op in klass.__dict__:
            return True
    return False


def defines(cls: type, op: str) -> bool:
    """True when ``cls`` (or a backend class it inherits from, not a protocol) defines ``op``.

    False means calls to ``cls.op`` run the protocol's default method with ``B = cls``.
    """
    return _defined_below_protocol(cls, op)


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
