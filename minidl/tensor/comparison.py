"""Comparisons and boolean logic (burn-tensor ``api/numeric.rs`` comparisons and ``api/bool.rs``).

Comparisons return Bool tensors and broadcast; ``*_elem`` forms compare with a scalar. The
protocol gives each kind a few required comparisons (``equal``, ``greater``, ``lower``) and
builds the rest as defaults; the Int and Bool kinds have fewer, so the missing ones are
spelled here from the ones they have (``greater_equal = not lower``), the way burn's own
defaults are.
"""

from __future__ import annotations

import numbers
from typing import Any, Self

from minidl.backend.dtype import Kind
from minidl.dispatch import Dispatch
from minidl.tensor.base import TensorBase
from minidl.tensor.check import broadcast_shape, check_same_rank, norm_dim
from minidl.tensor.conversion import ConversionOps


class ComparisonOps(ConversionOps):
    """``equal``/``greater``/``lower`` (+ ``_equal``, ``_elem`` forms), operators, bool logic.

    Each comparison names its Dispatch ops: the Float one, and the Int one it is built from —
    the Int (and Bool) protocol lacks ``not_equal``, ``greater_equal`` and ``lower_equal``,
    which are the negation of ``equal``, ``lower`` and ``greater`` (``negate=True``). Bool
    tensors compare for (in)equality with ``bool_equal``; ordered, they compare as ints
    (False < True).
    """

    __slots__ = ()

    # ----- the shared machinery -------------------------------------------------------------
    def _compare(self, ops: str, other: Self | float, float_op, int_op, negate: bool = False,
                 bool_op=None) -> Self:
        self._same_kind(ops, other, "rhs")
        ls, rs = self.primitive.backend_tensor.shape, other.primitive.backend_tensor.shape
        if ls != rs:
            check_same_rank(ops, tuple(ls), tuple(rs))
            broadcast_shape(ops, tuple(ls), tuple(rs))
        lhs, rhs = self, other
        if self.kind is Kind.FLOAT:
            return self._wrap(float_op(lhs.primitive, rhs.primitive), Kind.BOOL)
        if self.kind is Kind.BOOL:
            if bool_op is None:
                lhs, rhs = self.int(), other.int()  # order on bools: False < True
            else:
                int_op = bool_op
        out = int_op(lhs.primitive, rhs.primitive)
        return self._wrap(Dispatch.bool_not(out) if negate else out, Kind.BOOL)

    def _compare_elem(self, ops: str, value: Any, float_op, int_op, negate: bool = False) -> Self:
        tensor = self.int() if self.kind is Kind.BOOL else self
        value = self._scalar(ops, value)
        if self.kind is Kind.BOOL:
            value = int(value)
        if tensor.kind is Kind.FLOAT:
            return self._wrap(float_op(tensor.primitive, value), Kind.BOOL)
        out = int_op(tensor.primitive, value)
        return self._wrap(Dispatch.bool_not(out) if negate else out, Kind.BOOL)

    # ----- tensor comparisons -------------------------------------------------------------------
    def equal(self, other: Self | float) -> Self:
        """``self == other`` element-wise (Bool tensor)."""
        if not isinstance(other, TensorBase):
            return self.equal_elem(other)
        return self._compare("equal", other, Dispatch.float_equal, Dispatch.int_equal,
                             bool_op=Dispatch.bool_equal)

    def not_equal(self, other: Self | float) -> Self:
        """``self != other``."""
        if not isinstance(other, TensorBase):
            return self.not_equal_elem(other)
        return self._compare("not_equal", other, Dispatch.float_not_equal, Dispatch.int_equal, negate=True,
                             bool_op=Dispatch.bool_equal)

    def greater(self, other: Self | float) -> Self:
        """``self > other``."""
        if not isinstance(other, TensorBase):
            return self.greater_elem(other)
        return self._compare("greater", other, Dispatch.float_greater, Dispatch.int_greater)

    def greater_equal(self, other: Self | float) -> Self:
        """``self >= other``."""
        if not isinstance(other, TensorBase):
            return self.greater_equal_elem(other)
        return self._compare("greater_equal", other, Dispatch.float_greater_equal, Dispatch.int_lower, negate=True)

    def lower(self, other: Self | float) -> Self:
        """``self < other``."""
        if not isinstance(other, TensorBase):
            return self.lower_elem(other)
        return self._compare("lower", other, Dispatch.float_lower, Dispatch.int_lower)

    def lower_equal(self, other: Self | float) -> Self:
        """``self <= other``."""
        if not isinstance(other, TensorBase):
            return self.lower_equal_elem(other)
        return self._compare("lower_equal", other, Dispatch.float_lower_equal, Dispatch.int_greater, negate=True)

    # ----- scalar comparisons (burn's *_elem) -------------------------------------------------
    def equal_elem(self, value: float) -> Self:
        """``self == value``."""
        return self._compare_elem("equal_elem", value, Dispatch.float_equal_elem, Dispatch.int_equal_elem)

    def not_equal_elem(self, value: float) -> Self:
        """``self != value``."""
        return self._compare_elem("not_equal_elem", value, Dispatch.float_not_equal_elem, Dispatch.int_equal_elem,
                                  negate=True)

    def greater_elem(self, value: float) -> Self:
        """``self > value``."""
        return self._compare_elem("greater_elem", value, Dispatch.float_greater_elem, Dispatch.int_greater_elem)

    def greater_equal_elem(self, value: float) -> Self:
        """``self >= value``."""
        return self._compare_elem("greater_equal_elem", value, Dispatch.float_greater_equal_elem,
                                  Dispatch.int_lower_elem, negate=True)

    def lower_elem(self, value: float) -> Self:
        """``self < value``."""
        return self._compare_elem("lower_elem", value, Dispatch.float_lower_elem, Dispatch.int_lower_elem)

    def lower_equal_elem(self, value: float) -> Self:
        """``self <= value``."""
        return self._compare_elem("lower_equal_elem", value, Dispatch.float_lower_equal_elem,
                                  Dispatch.int_greater_elem, negate=True)

    # ----- operators: comparisons return Bool tensors (so a Tensor hashes by identity) -----
    def __eq__(self, other: Any) -> Self:  # type: ignore[override]
        return self.equal(other) if _operand(other) else NotImplemented

    def __ne__(self, other: Any) -> Self:  # type: ignore[override]
        return self.not_equal(other) if _operand(other) else NotImplemented

    def __gt__(self, other: Any) -> Self:
        return self.greater(other) if _operand(other) else NotImplemented

    def __ge__(self, other: Any) -> Self:
        return self.greater_equal(other) if _operand(other) else NotImplemented

    def __lt__(self, other: Any) -> Self:
        return self.lower(other) if _operand(other) else NotImplemented

    def __le__(self, other: Any) -> Self:
        return self.lower_equal(other) if _operand(other) else NotImplemented

    __hash__ = object.__hash__

    # ----- bool logic -----------------------------------------------------------------------
    def _bool_operand(self, ops: str, other: Self) -> None:
        self._require(ops, Kind.BOOL)
        self._same_kind(ops, other, "rhs")
        ls, rs = self.primitive.backend_tensor.shape, other.primitive.backend_tensor.shape
        if ls != rs:
            check_same_rank(ops, tuple(ls), tuple(rs))
            broadcast_shape(ops, tuple(ls), tuple(rs))

    def bool_not(self) -> Self:
        """Logical not of a Bool tensor."""
        self._require("bool_not", Kind.BOOL)
        return self._wrap(Dispatch.bool_not(self.primitive))

    def bool_and(self, other: Self) -> Self:
        """Logical and, broadcasting."""
        self._bool_operand("bool_and", other)
        return self._wrap(Dispatch.bool_and(self.primitive, other.primitive))

    def bool_or(self, other: Self) -> Self:
        """Logical or, broadcasting."""
        self._bool_operand("bool_or", other)
        return self._wrap(Dispatch.bool_or(self.primitive, other.primitive))

    def bool_xor(self, other: Self) -> Self:
        """Logical exclusive or, broadcasting."""
        self._bool_operand("bool_xor", other)
        return self._wrap(Dispatch.bool_xor(self.primitive, other.primitive))

    def __invert__(self) -> Self:
        return self.bool_not()

    def __and__(self, other: Any) -> Self:
        return self.bool_and(other) if isinstance(other, TensorBase) else NotImplemented

    def __or__(self, other: Any) -> Self:
        return self.bool_or(other) if isinstance(other, TensorBase) else NotImplemented

    def __xor__(self, other: Any) -> Self:
        return self.bool_xor(other) if isinstance(other, TensorBase) else NotImplemented

    # ----- any / all --------------------------------------------------------------------------
    def _truth(self) -> Self:
        """This tensor as Bool: non-zero is true."""
        return self if self.kind is Kind.BOOL else self.not_equal_elem(0)

    def any(self) -> Self:
        """Whether any element is true (non-zero), as a shape-``[1]`` Bool tensor."""
        return self._wrap(Dispatch.bool_any(self._truth().primitive), Kind.BOOL)

    def all(self) -> Self:
        """Whether every element is true (non-zero), as a shape-``[1]`` Bool tensor."""
        return self._wrap(Dispatch.bool_all(self._truth().primitive), Kind.BOOL)

    def any_dim(self, dim: int) -> Self:
        """Whether any element along ``dim`` is true, keeping ``dim`` with size 1."""
        dim = norm_dim("any_dim", dim, self.rank, shape=self.shape)
        counts = Dispatch.int_sum_dim(Dispatch.bool_into_int(self._truth().primitive, self.device.settings().int_dtype), dim)
        return self._wrap(Dispatch.int_greater_elem(counts, 0), Kind.BOOL)

    def all_dim(self, dim: int) -> Self:
        """Whether every element along ``dim`` is true, keeping ``dim`` with size 1."""
        dim = norm_dim("all_dim", dim, self.rank, shape=self.shape)
        falses = Dispatch.bool_not(self._truth().primitive)
        counts = Dispatch.int_sum_dim(Dispatch.bool_into_int(falses, self.device.settings().int_dtype), dim)
        return self._wrap(Dispatch.int_equal_elem(counts, 0), Kind.BOOL)


def _operand(value: Any) -> bool:
    return isinstance(value, TensorBase | numbers.Number)
