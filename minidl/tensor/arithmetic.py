"""Element-wise arithmetic, ``matmul`` and the Python operators (burn-tensor ``api/numeric.rs``).

Binary ops broadcast like NumPy; both sides must have the same kind (burn's types enforce it;
here it is checked). ``x + 2`` calls ``add_scalar``; ``2 - x`` is ``neg(x) + 2``. On Int
tensors ``/`` is burn's integer division (rounding toward zero), not Python's true division.
"""

from __future__ import annotations

import numbers
from typing import Any, Self

from minidl.dispatch import Dispatch
from minidl.tensor.base import BOOL, FLOAT, INT, NUMERIC, TensorBase
from minidl.tensor.check import broadcast_shape, check_same_rank, fail, fmt_shape
from minidl.tensor.creation import CreationOps
from minidl.tensor.shape_ops import ShapeOps


class ArithmeticOps(ShapeOps, CreationOps):
    """``add``/``sub``/``mul``/``div``/``remainder``/``pow*``/``neg``/``matmul`` and operators."""

    __slots__ = ()

    # ----- shared checks ------------------------------------------------------------------
    def _check_binary(self, ops: str, other: Self) -> None:
        """Check ``self <ops> other``: the kinds match and are numeric, Float dtypes match, the
        shapes broadcast. Runs on every binary op, so the common case costs one test per rule."""
        kind = self.kind
        if kind is BOOL or not isinstance(other, TensorBase) or other.kind is not kind:
            self._require(ops, *NUMERIC)
            self._same_kind(ops, other, "rhs")
        lhs, rhs = self.primitive.backend_tensor, other.primitive.backend_tensor
        if lhs.dtype is not rhs.dtype:  # NumPy's dtypes are singletons: equal ones are the same
            self._same_float_dtype(ops, other, "rhs")
        ls, rs = lhs.shape, rhs.shape
        if ls != rs:
            check_same_rank(ops, tuple(ls), tuple(rs))
            broadcast_shape(ops, tuple(ls), tuple(rs))

    def _int_scalar_tensor(self, value: int) -> Self:
        """A ``[1, ..., 1]`` Int tensor holding ``value`` (the Int protocol has no ``*_scalar``
        for every op, so some scalar forms go through a broadcast tensor)."""
        zeros = Dispatch.int_zeros((1,) * max(self.rank, 1), self.dtype, self.device)
        return self._wrap(Dispatch.int_add_scalar(zeros, value))

    # ----- tensor ∘ tensor ------------------------------------------------------------------
    def add(self, other: Self | float) -> Self:
        """``self + other``, broadcasting (a number calls :meth:`add_scalar`)."""
        if not isinstance(other, TensorBase):
            return self.add_scalar(other)
        return self.__add__(other)  # the operator holds the body (the hot path)

    def sub(self, other: Self | float) -> Self:
        """``self - other``, broadcasting."""
        if not isinstance(other, TensorBase):
            return self.sub_scalar(other)
        return self.__sub__(other)  # the operator holds the body (the hot path)

    def mul(self, other: Self | float) -> Self:
        """``self * other``, broadcasting."""
        if not isinstance(other, TensorBase):
            return self.mul_scalar(other)
        return self.__mul__(other)  # the operator holds the body (the hot path)

    def div(self, other: Self | float) -> Self:
        """``self / other``, broadcasting (Int: division rounding toward zero, as burn)."""
        if not isinstance(other, TensorBase):
            return self.div_scalar(other)
        return self.__truediv__(other)  # the operator holds the body (the hot path)

    def remainder(self, other: Self | float) -> Self:
        """``self % other`` with the sign of the divisor (Python's and torch.remainder's rule)."""
        if not isinstance(other, TensorBase):
            return self.remainder_scalar(other)
        self._check_binary("remainder", other)
        if self.kind is INT:
            return self._wrap(Dispatch.int_remainder(self.primitive, other.primitive))
        # float: a - floor(a / b) * b, the FloatTensorOps default spelled with tensors
        quotient = Dispatch.float_floor(Dispatch.float_div(self.primitive, other.primitive))
        return self._wrap(Dispatch.float_sub(self.primitive, Dispatch.float_mul(quotient, other.primitive)))

    def powf(self, other: Self | float) -> Self:
        """``self ** other`` element-wise for Float tensors."""
        if not isinstance(other, TensorBase):
            return self.powf_scalar(other)
        self._require("powf", FLOAT)
        self._check_binary("powf", other)
        return self._wrap(Dispatch.float_powf(self.primitive, other.primitive))

    # ----- tensor ∘ scalar ------------------------------------------------------------------
    def add_scalar(self, value: float) -> Self:
        """``self + value``."""
        self._require("add_scalar", *NUMERIC)
        op = self._by_kind(float=Dispatch.float_add_scalar, int=Dispatch.int_add_scalar)
        return self._wrap(op(self.primitive, self._scalar("add_scalar", value)))

    def sub_scalar(self, value: float) -> Self:
        """``self - value``."""
        self._require("sub_scalar", *NUMERIC)
        op = self._by_kind(float=Dispatch.float_sub_scalar, int=Dispatch.int_sub_scalar)
        return self._wrap(op(self.primitive, self._scalar("sub_scalar", value)))

    def mul_scalar(self, value: float) -> Self:
        """``self * value``."""
        self._require("mul_scalar", *NUMERIC)
        op = self._by_kind(float=Dispatch.float_mul_scalar, int=Dispatch.int_mul_scalar)
        return self._wrap(op(self.primitive, self._scalar("mul_scalar", value)))

    def div_scalar(self, value: float) -> Self:
        """``self / value`` (Int: rounding toward zero)."""
        self._require("div_scalar", *NUMERIC)
        value = self._scalar("div_scalar", value)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_div_scalar(self.primitive, value))
        return self._wrap(Dispatch.int_div(self.primitive, self._int_scalar_tensor(value).primitive))

    def remainder_scalar(self, value: float) -> Self:
        """``self % value`` with the sign of ``value``."""
        self._require("remainder_scalar", *NUMERIC)
        value = self._scalar("remainder_scalar", value)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_remainder_scalar(self.primitive, value))
        return self._wrap(Dispatch.int_remainder(self.primitive, self._int_scalar_tensor(value).primitive))

    def powf_scalar(self, value: float) -> Self:
        """``self ** value`` for a float exponent (Float tensors)."""
        self._require("powf_scalar", FLOAT)
        return self._wrap(Dispatch.float_powf_scalar(self.primitive, float(value)))

    def powi_scalar(self, value: int) -> Self:
        """``self ** value`` for an int exponent; on Int tensors by repeated squaring (exact)."""
        self._require("powi_scalar", *NUMERIC)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            fail("powi_scalar", "Argument value must be an int.", f"Found {value!r}.", kind=True)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_powf_scalar(self.primitive, float(value)))
        if value < 0:
            fail("powi_scalar", "An Int tensor needs a non-negative exponent.", f"Found value={value}.")
        result, base, n = self.ones_like(), self, int(value)
        while n:
            if n & 1:
                result = result.mul(base)
            n >>= 1
            if n:
                base = base.mul(base)
        return result

    def neg(self) -> Self:
        """``-self``."""
        self._require("neg", *NUMERIC)
        op = self._by_kind(float=Dispatch.float_neg, int=Dispatch.int_neg)
        return self._wrap(op(self.primitive))

    # ----- matmul ---------------------------------------------------------------------------
    def matmul(self, other: Self) -> Self:
        """Matrix product over the last two dims; batch dims broadcast. 1-D operands follow
        torch (a vector on the left gets a row dim, on the right a column dim, both removed
        afterwards); vector @ vector gives shape ``[1]`` (burn has no rank-0 tensors)."""
        self._require("matmul", FLOAT, arg="lhs")
        self._same_kind("matmul", other, "rhs")
        ls, rs = self.shape, other.shape
        if not ls or not rs:
            fail("matmul", "Both operands need at least 1 dim.", f"Found lhs {fmt_shape(ls)}, rhs {fmt_shape(rs)}.")
        lhs, rhs = self, other
        if len(ls) == 1:
            lhs = lhs.reshape((1, ls[0]))
        if len(rs) == 1:
            rhs = rhs.reshape((rs[0], 1))
        l2, r2 = lhs.shape, rhs.shape
        if l2[-1] != r2[-2]:
            fail(
                "matmul",
                f"The inner dimension of matmul should be the same, but got {l2[-1]} and {r2[-2]}.",
                f"Expected lhs.shape[-1] == rhs.shape[-2]; found lhs shape {fmt_shape(ls)}, "
                f"rhs shape {fmt_shape(rs)}.",
            )
        batch = broadcast_shape("matmul", l2[:-2], r2[:-2], ("lhs batch dims", "rhs batch dims"))
        rank = len(batch) + 2
        if len(l2) < rank:
            lhs = lhs.reshape((1,) * (rank - len(l2)) + l2)
        if len(r2) < rank:
            rhs = rhs.reshape((1,) * (rank - len(r2)) + r2)
        out = self._wrap(Dispatch.float_matmul(lhs.primitive, rhs.primitive))
        if len(ls) == 1 and len(rs) == 1:
            return out.reshape((1,))
        if len(ls) == 1:
            return out.reshape(out.shape[:-2] + out.shape[-1:])
        if len(rs) == 1:
            return out.reshape(out.shape[:-1])
        return out

    # ----- operators ------------------------------------------------------------------------
    # A speed trick (ARCHITECTURE.md, "Where speed tricks may live"): the four operators hold
    # the body themselves, Tensor first, so ``a + b`` is one Python call above Dispatch; the
    # methods (``add``, ...) call them.
    def __add__(self, other: Any) -> Self:
        if isinstance(other, TensorBase):  # the common case first; the body lives here, not in the method
            self._check_binary("add", other)
            op = Dispatch.float_add if self.kind is FLOAT else Dispatch.int_add
            return self._wrap(op(self.primitive, other.primitive))
        return self.add_scalar(other) if _is_number(other) else NotImplemented

    def __radd__(self, other: Any) -> Self:
        return self.add_scalar(other) if _is_number(other) else NotImplemented

    def __sub__(self, other: Any) -> Self:
        if isinstance(other, TensorBase):  # the common case first; the body lives here, not in the method
            self._check_binary("sub", other)
            op = Dispatch.float_sub if self.kind is FLOAT else Dispatch.int_sub
            return self._wrap(op(self.primitive, other.primitive))
        return self.sub_scalar(other) if _is_number(other) else NotImplemented

    def __rsub__(self, other: Any) -> Self:
        return self.neg().add_scalar(other) if _is_number(other) else NotImplemented

    def __mul__(self, other: Any) -> Self:
        if isinstance(other, TensorBase):  # the common case first; the body lives here, not in the method
            self._check_binary("mul", other)
            op = Dispatch.float_mul if self.kind is FLOAT else Dispatch.int_mul
            return self._wrap(op(self.primitive, other.primitive))
        return self.mul_scalar(other) if _is_number(other) else NotImplemented

    def __rmul__(self, other: Any) -> Self:
        return self.mul_scalar(other) if _is_number(other) else NotImplemented

    def __truediv__(self, other: Any) -> Self:
        if isinstance(other, TensorBase):  # the common case first; the body lives here, not in the method
            self._check_binary("div", other)
            op = Dispatch.float_div if self.kind is FLOAT else Dispatch.int_div
            return self._wrap(op(self.primitive, other.primitive))
        return self.div_scalar(other) if _is_number(other) else NotImplemented

    def __rtruediv__(self, other: Any) -> Self:
        if not _is_number(other):
            return NotImplemented
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_recip(self.primitive)).mul_scalar(other)
        return self.full_like(self._scalar("div", other)).div(self)

    def __mod__(self, other: Any) -> Self:
        return self.remainder(other) if _operand(other) else NotImplemented

    def __pow__(self, other: Any) -> Self:
        if isinstance(other, TensorBase):
            return self.powf(other)
        if not _is_number(other):
            return NotImplemented
        if self.kind is INT or isinstance(other, numbers.Integral):
            if isinstance(other, numbers.Integral) and not isinstance(other, bool):
                return self.powi_scalar(int(other))
        return self.powf_scalar(other)

    def __rpow__(self, other: Any) -> Self:
        if not _is_number(other):
            return NotImplemented
        self._require("pow", FLOAT)
        return self.full_like(float(other)).powf(self)

    def __matmul__(self, other: Any) -> Self:
        return self.matmul(other) if isinstance(other, TensorBase) else NotImplemented

    def __neg__(self) -> Self:
        return self.neg()

    def __pos__(self) -> Self:
        return self


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number)


def _operand(value: Any) -> bool:
    # a Tensor first: the common case, and cheaper than the Number ABC's check
    return isinstance(value, TensorBase) or isinstance(value, numbers.Number)
