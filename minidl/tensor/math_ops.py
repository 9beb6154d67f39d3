"""Unary math and activations as Tensor methods (burn-tensor ``api/float.rs`` and ``activation``).

Transcendental ops (``exp``, ``log``, ``tanh``, ...) exist for Float tensors only, as in burn;
``abs``, ``sign`` and the clamps work on Int tensors too.
"""

from __future__ import annotations

from typing import Self

from minidl.dispatch import Dispatch
from minidl.tensor.arithmetic import ArithmeticOps
from minidl.tensor.base import FLOAT, INT
from minidl.tensor.check import fail
from minidl.tensor.comparison import ComparisonOps
from minidl.tensor.indexing import IndexingOps


class MathOps(IndexingOps, ComparisonOps, ArithmeticOps):
    """Element-wise unary ops: ``exp log log1p sqrt abs recip tanh sin cos erf floor sign``,
    activations ``sigmoid relu gelu leaky_relu``, and ``clamp``/``clamp_min``/``clamp_max``."""

    __slots__ = ()

    def exp(self) -> Self:
        """``e ** self``."""
        self._require("exp", FLOAT)
        return self._wrap(Dispatch.float_exp(self.primitive))

    def log(self) -> Self:
        """Natural logarithm."""
        self._require("log", FLOAT)
        return self._wrap(Dispatch.float_log(self.primitive))

    def log1p(self) -> Self:
        """``log(1 + self)``."""
        self._require("log1p", FLOAT)
        return self._wrap(Dispatch.float_log1p(self.primitive))

    def sqrt(self) -> Self:
        """Square root."""
        self._require("sqrt", FLOAT)
        return self._wrap(Dispatch.float_sqrt(self.primitive))

    def recip(self) -> Self:
        """``1 / self``."""
        self._require("recip", FLOAT)
        return self._wrap(Dispatch.float_recip(self.primitive))

    def tanh(self) -> Self:
        """Hyperbolic tangent."""
        self._require("tanh", FLOAT)
        return self._wrap(Dispatch.float_tanh(self.primitive))

    def sin(self) -> Self:
        """Sine."""
        self._require("sin", FLOAT)
        return self._wrap(Dispatch.float_sin(self.primitive))

    def cos(self) -> Self:
        """Cosine."""
        self._require("cos", FLOAT)
        return self._wrap(Dispatch.float_cos(self.primitive))

    def erf(self) -> Self:
        """The error function."""
        self._require("erf", FLOAT)
        return self._wrap(Dispatch.float_erf(self.primitive))

    def floor(self) -> Self:
        """Round down."""
        self._require("floor", FLOAT)
        return self._wrap(Dispatch.float_floor(self.primitive))

    def square(self) -> Self:
        """``self * self``."""
        return self.mul(self)

    def abs(self) -> Self:
        """Absolute value (Float or Int)."""
        self._require("abs", FLOAT, INT)
        op = self._by_kind(float=Dispatch.float_abs, int=Dispatch.int_abs)
        return self._wrap(op(self.primitive))

    def sign(self) -> Self:
        """-1, 0 or 1 by the sign of each element (Float or Int)."""
        self._require("sign", FLOAT, INT)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_sign(self.primitive))
        pos = self.greater_elem(0).int(self.dtype)
        neg = self.lower_elem(0).int(self.dtype)
        return pos.sub(neg)

    # ----- activations (the ActivationOps of the backend) ----------------------------------
    def sigmoid(self) -> Self:
        """``1 / (1 + e^-x)``."""
        self._require("sigmoid", FLOAT)
        return self._wrap(Dispatch.sigmoid(self.primitive))

    def relu(self) -> Self:
        """``max(x, 0)``."""
        self._require("relu", FLOAT)
        return self._wrap(Dispatch.relu(self.primitive))

    def gelu(self) -> Self:
        """The exact GELU ``x Φ(x)`` (torch's default)."""
        self._require("gelu", FLOAT)
        return self._wrap(Dispatch.gelu(self.primitive))

    def leaky_relu(self, negative_slope: float = 0.01) -> Self:
        """``x`` where positive, ``negative_slope * x`` elsewhere."""
        self._require("leaky_relu", FLOAT)
        return self._wrap(Dispatch.leaky_relu(self.primitive, float(negative_slope)))

    # ----- clamps ---------------------------------------------------------------------------
    def clamp(self, min: float, max: float) -> Self:
        """Every element limited to ``[min, max]``."""
        self._require("clamp", FLOAT, INT)
        lo, hi = self._scalar("clamp", min, "min"), self._scalar("clamp", max, "max")
        if lo > hi:
            fail("clamp", "Argument min must not exceed max.", f"Found min={min}, max={max}.")
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_clamp(self.primitive, lo, hi))
        return self.clamp_min(lo).clamp_max(hi)

    def clamp_min(self, min: float) -> Self:
        """Every element at least ``min``."""
        self._require("clamp_min", FLOAT, INT)
        lo = self._scalar("clamp_min", min, "min")
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_clamp_min(self.primitive, lo))
        return self.mask_fill(self.lower_elem(lo), lo)

    def clamp_max(self, max: float) -> Self:
        """Every element at most ``max``."""
        self._require("clamp_max", FLOAT, INT)
        hi = self._scalar("clamp_max", max, "max")
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_clamp_max(self.primitive, hi))
        return self.mask_fill(self.greater_elem(hi), hi)

    def max_pair(self, other: Self) -> Self:
        """Element-wise maximum of two tensors, broadcasting (torch's ``maximum``)."""
        self._check_binary("max_pair", other)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_max_pair(self.primitive, other.primitive))
        return self.mask_where(self.lower(other), other)

    def min_pair(self, other: Self) -> Self:
        """Element-wise minimum of two tensors, broadcasting (torch's ``minimum``)."""
        self._check_binary("min_pair", other)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_min_pair(self.primitive, other.primitive))
        return self.mask_where(self.greater(other), other)
