"""Comparisons and boolean logic (burn-tensor ``api/numeric.rs`` comparisons and ``api/bool.rs``).

Comparisons return Bool tensors and broadcast; ``*_elem`` forms compare with a scalar. The
protocol gives each kind a few required comparisons (``equal``, ``greater``, ``lower``) and
builds the rest as defaults; the Int and Bool kinds have fewer, so the missing ones are
spelled here from the ones they have (``greater_equal = not lower``), the way burn's own
defaults are.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

from minidl.backend.dtype import DEFAULT_INT, Kind
from minidl.dispatch import Dispatch
from minidl.tensor.base import TensorBase
from minidl.tensor.check import broadcast_shape, check_same_rank, norm_dim

if TYPE_CHECKING:
    from minidl.tensor.tensor import Tensor

# comparisons the Int and Bool protocols lack → (the op they are built from, negated)
_DERIVED = {"not_equal": "equal", "greater_equal": "lower", "lower_equal": "greater"}


class ComparisonOps:
    """``equal``/``greater``/``lower`` (+ ``_equal``, ``_elem`` forms), operators, bool logic."""

    __slots__ = ()

    # ----- the generic machinery ------------------------------------------------------------
    def _compare(self, op: str, other: Tensor | float) -> Tensor:
        if not isinstance(other, TensorBase):
            return self._compare_elem(op, other)
        self._same_kind(op, other, "rhs")
        ls, rs = self.primitive.primitive.shape, other.primitive.primitive.shape
        if ls != rs:
            check_same_rank(op, tuple(ls), tuple(rs))
            broadcast_shape(op, tuple(ls), tuple(rs))
        lhs, rhs = self, other
        if self.kind is Kind.BOOL and op != "equal" and op != "not_equal":
            lhs, rhs = self.int(), other.int()  # order on bools: False < True
        if lhs.kind is Kind.FLOAT:
            return self._wrap(getattr(Dispatch, f"float_{op}")(lhs.primitive, rhs.primitive), Kind.BOOL)
        base = _DERIVED.get(op, op)
        out = lhs._op(base)(lhs.primitive, rhs.primitive)
        return self._wrap(Dispatch.bool_not(out) if op in _DERIVED else out, Kind.BOOL)

    def _compare_elem(self, op: str, value: Any) -> Tensor:
        name = f"{op}_elem"
        if self.kind is Kind.BOOL:
            return self.int()._compare_elem(op, int(self._scalar(name, value)))
        value = self._scalar(name, value)
        if self.kind is Kind.FLOAT:
            return self._wrap(getattr(Dispatch, f"float_{name}")(self.primitive, value), Kind.BOOL)
        out = getattr(Dispatch, f"int_{_DERIVED.get(op, op)}_elem")(self.primitive, value)
        return self._wrap(Dispatch.bool_not(out) if op in _DERIVED else out, Kind.BOOL)

    # ----- tensor comparisons -------------------------------------------------------------------
    def equal(self, other: Tensor | float) -> Tensor:
        """``self == other`` element-wise (Bool tensor)."""
        return self._compare("equal", other)

    def not_equal(self, other: Tensor | float) -> Tensor:
        """``self != other``."""
        return self._compare("not_equal", other)

    def greater(self, other: Tensor | float) -> Tensor:
        """``self > other``."""
        return self._compare("greater", other)

    def greater_equal(self, other: Tensor | float) -> Tensor:
        """``self >= other``."""
        return self._compare("greater_equal", other)

    def lower(self, other: Tensor | float) -> Tensor:
        """``self < other``."""
        return self._compare("lower", other)

    def lower_equal(self, other: Tensor | float) -> Tensor:
        """``self <= other``."""
        return self._compare("lower_equal", other)

    # ----- scalar comparisons (burn's *_elem) -------------------------------------------------
    def equal_elem(self, value: float) -> Tensor:
        """``self == value``."""
        return self._compare_elem("equal", value)

    def not_equal_elem(self, value: float) -> Tensor:
        """``self != value``."""
        return self._compare_elem("not_equal", value)

    def greater_elem(self, value: float) -> Tensor:
        """``self > value``."""
        return self._compare_elem("greater", value)

    def greater_equal_elem(self, value: float) -> Tensor:
        """``self >= value``."""
        return self._compare_elem("greater_equal", value)

    def lower_elem(self, value: float) -> Tensor:
        """``self < value``."""
        return self._compare_elem("lower", value)

    def lower_equal_elem(self, value: float) -> Tensor:
        """``self <= value``."""
        return self._compare_elem("lower_equal", value)

    # ----- operators: comparisons return Bool tensors (so a Tensor hashes by identity) -----
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self.equal(other) if _operand(other) else NotImplemented

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self.not_equal(other) if _operand(other) else NotImplemented

    def __gt__(self, other: Any) -> Tensor:
        return self.greater(other) if _operand(other) else NotImplemented

    def __ge__(self, other: Any) -> Tensor:
        return self.greater_equal(other) if _operand(other) else NotImplemented

    def __lt__(self, other: Any) -> Tensor:
        return self.lower(other) if _operand(other) else NotImplemented

    def __le__(self, other: Any) -> Tensor:
        return self.lower_equal(other) if _operand(other) else NotImplemented

    __hash__ = object.__hash__

    # ----- bool logic -----------------------------------------------------------------------
    def _bool_operand(self, ops: str, other: Tensor) -> None:
        self._require(ops, Kind.BOOL)
        self._same_kind(ops, other, "rhs")
        ls, rs = self.primitive.primitive.shape, other.primitive.primitive.shape
        if ls != rs:
            check_same_rank(ops, tuple(ls), tuple(rs))
            broadcast_shape(ops, tuple(ls), tuple(rs))

    def bool_not(self) -> Tensor:
        """Logical not of a Bool tensor."""
        self._require("bool_not", Kind.BOOL)
        return self._wrap(Dispatch.bool_not(self.primitive))

    def bool_and(self, other: Tensor) -> Tensor:
        """Logical and, broadcasting."""
        self._bool_operand("bool_and", other)
        return self._wrap(Dispatch.bool_and(self.primitive, other.primitive))

    def bool_or(self, other: Tensor) -> Tensor:
        """Logical or, broadcasting."""
        self._bool_operand("bool_or", other)
        return self._wrap(Dispatch.bool_or(self.primitive, other.primitive))

    def bool_xor(self, other: Tensor) -> Tensor:
        """Logical exclusive or, broadcasting."""
        self._bool_operand("bool_xor", other)
        return self._wrap(Dispatch.bool_xor(self.primitive, other.primitive))

    def __invert__(self) -> Tensor:
        return self.bool_not()

    def __and__(self, other: Any) -> Tensor:
        return self.bool_and(other) if isinstance(other, TensorBase) else NotImplemented

    def __or__(self, other: Any) -> Tensor:
        return self.bool_or(other) if isinstance(other, TensorBase) else NotImplemented

    def __xor__(self, other: Any) -> Tensor:
        return self.bool_xor(other) if isinstance(other, TensorBase) else NotImplemented

    # ----- any / all --------------------------------------------------------------------------
    def _truth(self) -> Tensor:
        """This tensor as Bool: non-zero is true."""
        return self if self.kind is Kind.BOOL else self.not_equal_elem(0)

    def any(self) -> Tensor:
        """Whether any element is true (non-zero), as a shape-``[1]`` Bool tensor."""
        return self._wrap(Dispatch.bool_any(self._truth().primitive), Kind.BOOL)

    def all(self) -> Tensor:
        """Whether every element is true (non-zero), as a shape-``[1]`` Bool tensor."""
        return self._wrap(Dispatch.bool_all(self._truth().primitive), Kind.BOOL)

    def any_dim(self, dim: int) -> Tensor:
        """Whether any element along ``dim`` is true, keeping ``dim`` with size 1."""
        dim = norm_dim("any_dim", dim, self.rank, shape=self.shape)
        counts = Dispatch.int_sum_dim(Dispatch.bool_into_int(self._truth().primitive, DEFAULT_INT), dim)
        return self._wrap(Dispatch.int_greater_elem(counts, 0), Kind.BOOL)

    def all_dim(self, dim: int) -> Tensor:
        """Whether every element along ``dim`` is true, keeping ``dim`` with size 1."""
        dim = norm_dim("all_dim", dim, self.rank, shape=self.shape)
        falses = Dispatch.bool_not(self._truth().primitive)
        counts = Dispatch.int_sum_dim(Dispatch.bool_into_int(falses, DEFAULT_INT), dim)
        return self._wrap(Dispatch.int_equal_elem(counts, 0), Kind.BOOL)


def _operand(value: Any) -> bool:
    return isinstance(value, TensorBase | numbers.Number)
