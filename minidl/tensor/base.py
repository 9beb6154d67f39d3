"""``TensorBase``: what a Tensor holds and the plumbing every op mixin shares (burn-tensor ``api/base.rs``).

A Tensor is a handle on a :class:`~minidl.dispatch.DispatchTensor` (``.primitive``) plus its
kind (Float, Int or Bool). burn encodes rank and kind in the type (``Tensor<B, D, K>``); here
the rank is read from the shape and the kind is a field, so every op starts by checking what a
Rust compiler would have checked, then calls the ``Dispatch`` op for its kind, named in full at
the call site (``Dispatch.float_add``, or ``self._by_kind(float=Dispatch.float_add,
int=Dispatch.int_add)`` for an op every kind has). No array math happens in this layer: it only
checks and normalizes arguments.

Every op mixin (``ArithmeticOps``, ``ShapeOps``, ...) inherits this class, and inherits the
mixins whose methods it calls, so the class a method comes from is where it is defined.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Self

from minidl.backend.dtype import DType, Kind
from minidl.dispatch import Device, DispatchTensor
from minidl.tensor.check import fail

_KIND_NAME = {Kind.FLOAT: "Float", Kind.INT: "Int", Kind.BOOL: "Bool"}
_new_object = object.__new__
#: The kinds as module globals, imported by the Tensor layer's modules. A speed trick kept on
#: purpose (ARCHITECTURE.md, "Where speed tricks may live"): every op reads them, and on Python
#: 3.11 an Enum member read as ``Kind.FLOAT`` cost 0.18-0.45 us against 0.02-0.08 us for a
#: module global (timeit), on a 4x4 add of about 3 us.
FLOAT, INT, BOOL = Kind.FLOAT, Kind.INT, Kind.BOOL
NUMERIC = (FLOAT, INT)


def kind_name(kind: Kind) -> str:
    """``Float``/``Int``/``Bool``, as burn names the kinds."""
    return _KIND_NAME[kind]


def by_kind(kind: Kind, float: Callable | None = None, int: Callable | None = None,
            bool: Callable | None = None) -> Callable:
    """The one of the Dispatch ops given (``float=Dispatch.float_add, int=Dispatch.int_add``)
    that serves ``kind``. Callers check the kind first, so a kind without an op is a bug."""
    op = float if kind is FLOAT else int if kind is INT else bool
    if op is None:
        raise TypeError(f"no Dispatch op for a {_KIND_NAME[kind]} tensor among those given")
    return op


class TensorBase:
    """The fields of a Tensor and the helpers its op mixins use (not used directly)."""

    __slots__ = ("primitive", "kind", "__weakref__")

    # NumPy must not treat a Tensor as an array operand: ``np.float32(2) * t`` then falls back
    # to ``Tensor.__rmul__`` instead of converting ``t`` and returning an ndarray.
    __array_ufunc__ = None

    def __init__(self, primitive: DispatchTensor, kind: Kind | None = None):
        if not isinstance(primitive, DispatchTensor):
            raise TypeError(
                f"Tensor(...) wraps a DispatchTensor, found {type(primitive).__name__}; "
                "to build a tensor from data use Tensor.from_data(data, device)"
            )
        self.primitive = primitive
        self.kind = DType.of(primitive.dtype).kind if kind is None else kind

    # ----- what a tensor is ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The sizes of the dims, as a tuple."""
        return tuple(self.primitive.backend_tensor.shape)

    def dims(self) -> list[int]:
        """The sizes of the dims, as a list (burn's ``dims()``)."""
        return list(self.primitive.backend_tensor.shape)

    @property
    def rank(self) -> int:
        """The number of dims (burn's const ``D``)."""
        return len(self.primitive.backend_tensor.shape)

    ndim = rank

    def numel(self) -> int:
        """The number of elements."""
        n = 1
        for s in self.primitive.backend_tensor.shape:
            n *= s
        return int(n)

    @property
    def dtype(self) -> DType:
        """The element type."""
        return DType.of(self.primitive.backend_tensor.dtype)

    @property
    def device(self) -> Device:
        """The device the tensor lives on (autodiff or not)."""
        return self.primitive.device

    # ----- plumbing shared by the mixins --------------------------------------------------
    def _by_kind(self, float: Callable | None = None, int: Callable | None = None,
                 bool: Callable | None = None) -> Callable:
        """The Dispatch op for this tensor's kind among those given (see :func:`by_kind`)."""
        return by_kind(self.kind, float, int, bool)

    def _wrap(self, primitive: DispatchTensor, kind: Kind | None = None) -> Self:
        """A tensor of this type around an op's result (``kind`` defaults to this tensor's).

        Every op ends here, so it skips ``__init__``'s check: the primitive comes from Dispatch
        (a speed trick, ARCHITECTURE.md, "Where speed tricks may live")."""
        out = _new_object(type(self))
        out.primitive = primitive
        out.kind = self.kind if kind is None else kind
        return out

    def _describe(self) -> str:
        return f"{_KIND_NAME[self.kind]} tensor ({self.dtype.value}, shape {list(self.shape)})"

    def _require(self, ops: str, *kinds: Kind, arg: str = "self") -> None:
        """Fail unless this tensor's kind is one of ``kinds``."""
        if self.kind not in kinds:
            wanted = " or ".join(_KIND_NAME[k] for k in kinds)
            hint = " Convert it with .float() first." if kinds == (FLOAT,) else ""
            fail(ops, f"Argument {arg} must be a {wanted} tensor.", f"Found a {self._describe()}.{hint}", kind=True)

    def _same_float_dtype(self, ops: str, other: Any, arg: str = "other") -> None:
        """Fail when two Float tensors have different dtypes.

        burn 0.22 has no float type promotion either, but does not always refuse the mix: an
        op built through burn-ir panics (``output_dtype`` in ``src/builder.rs`` at
        v0.22.0-pre.2), while plain burn-flex only ``debug_assert``s it (``src/ops/binary.rs``
        line 41), so a release build runs it. Without this check the backends silently return
        ``lhs``'s dtype (f32 + f64 → f32, f64 + f32 → f64): a result that depends on the order
        of the operands. Here the choice is the caller's, made visible with a cast."""
        if (self.kind is FLOAT and isinstance(other, TensorBase) and other.kind is FLOAT
                and other.primitive.backend_tensor.dtype != self.primitive.backend_tensor.dtype):
            fail(ops, f"Argument {arg} must have the dtype of self ({self.dtype.value}): minidl has no "
                 "float type promotion (burn 0.22's IR refuses the mix; plain burn-flex only "
                 "debug_asserts it).",
                 f"Found self {self.dtype.value} and {arg} {other.dtype.value}; cast one of them first, "
                 f"e.g. {arg}.cast({self.dtype!r}).", kind=True)

    def _same_kind(self, ops: str, other: Any, arg: str = "other") -> None:
        """Fail unless ``other`` is a Tensor of this tensor's kind (and, for Float, its dtype)."""
        if not isinstance(other, TensorBase):
            fail(ops, f"Argument {arg} must be a Tensor.", f"Found {type(other).__name__}.", kind=True)
        if other.kind is not self.kind:
            fail(
                ops,
                f"Argument {arg} must have the same kind as self ({_KIND_NAME[self.kind]}).",
                f"Found a {other._describe()}.",
                kind=True,
            )
        self._same_float_dtype(ops, other, arg)

    def _scalar(self, ops: str, value: Any, arg: str = "value"):
        """A Python scalar fit for this tensor's kind (float for Float, int for Int, ...)."""
        if isinstance(value, TensorBase) or not isinstance(value, numbers.Number):
            fail(ops, f"Argument {arg} must be a number.", f"Found {type(value).__name__}.", kind=True)
        if self.kind is FLOAT:
            # a capture's symbolic scalar (minidl.capture) is a float that remembers how it was
            # computed from the step's inputs: float() would forget it and freeze the value
            return value if type(value) is not float and getattr(value, "symbolic", False) else float(value)
        if self.kind is INT:
            if isinstance(value, numbers.Integral):
                return int(value)
            fail(
                ops,
                f"Argument {arg} must be an int for an Int tensor.",
                f"Found {value!r} ({type(value).__name__}). Convert the tensor with .float() first.",
                kind=True,
            )
        return bool(value)
