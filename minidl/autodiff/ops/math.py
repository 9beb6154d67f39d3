"""Autodiff's unary math: exp, log, log1p, sqrt, abs, tanh, sin, cos, erf, floor, sign.

burn-autodiff ``ops/tensor.rs``: one step per op, declared here beside the override that
records it.
"""

from __future__ import annotations

import math

from minidl.autodiff.ops.base import AutodiffOpsBase, record
from minidl.autodiff.step import Step, zeros_like


class Exp(Step):
    """``exp(x)``: ``grad * out``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_exp(tensor)

    def backward(self, B, grad, state):
        return (B.float_mul(grad, state["out"]),)


class Log(Step):
    """``ln(x)``: ``grad / x``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log(tensor)

    def backward(self, B, grad, state):
        return (B.float_div(grad, state["tensor"]),)


class Log1p(Step):
    """``ln(1 + x)``: ``grad / (1 + x)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log1p(tensor)

    def backward(self, B, grad, state):
        return (B.float_div(grad, B.float_add_scalar(state["tensor"], 1.0)),)


class Sqrt(Step):
    """``sqrt(x)``: ``grad / (2 out)``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_sqrt(tensor)

    def backward(self, B, grad, state):
        return (B.float_div(grad, B.float_mul_scalar(state["out"], 2.0)),)


class Abs(Step):
    """``|x|``: ``grad * sign(x)`` (zero at 0, as torch)."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_abs(tensor)

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.float_sign(state["tensor"])),)


class Tanh(Step):
    """``tanh(x)``: ``grad * (1 - out²)``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_tanh(tensor)

    def backward(self, B, grad, state):
        out = state["out"]
        return (B.float_mul(grad, B.float_add_scalar(B.float_neg(B.float_mul(out, out)), 1.0)),)


class Sin(Step):
    """``sin(x)``: ``grad * cos(x)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_sin(tensor)

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.float_cos(state["tensor"])),)


class Cos(Step):
    """``cos(x)``: ``-grad * sin(x)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_cos(tensor)

    def backward(self, B, grad, state):
        return (B.float_neg(B.float_mul(grad, B.float_sin(state["tensor"]))),)


class Erf(Step):
    """``erf(x)``: ``grad * 2/sqrt(pi) * exp(-x²)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_erf(tensor)

    def backward(self, B, grad, state):
        x = state["tensor"]
        density = B.float_mul_scalar(B.float_exp(B.float_neg(B.float_mul(x, x))), 2.0 / math.sqrt(math.pi))
        return (B.float_mul(grad, density),)


class Floor(Step):
    """``floor(x)``: a zero gradient (piecewise constant)."""

    def forward(self, B, tensor):
        return B.float_floor(tensor)

    def backward(self, B, grad, state):
        return (zeros_like(B, grad, self.shapes[0]),)


class Sign(Floor):
    """``sign(x)``: a zero gradient."""

    def forward(self, B, tensor):
        return B.float_sign(tensor)


class AutodiffMathOps(AutodiffOpsBase):
    """Unary math of ``Autodiff[B]``: each records its step."""

    # ----- unary math -------------------------------------------------------------------
    @classmethod
    def float_exp(cls, tensor):
        return record(cls, Exp(), tensor)

    @classmethod
    def float_log(cls, tensor):
        return record(cls, Log(), tensor)

    @classmethod
    def float_log1p(cls, tensor):
        return record(cls, Log1p(), tensor)

    @classmethod
    def float_sqrt(cls, tensor):
        return record(cls, Sqrt(), tensor)

    @classmethod
    def float_abs(cls, tensor):
        return record(cls, Abs(), tensor)

    @classmethod
    def float_tanh(cls, tensor):
        return record(cls, Tanh(), tensor)

    @classmethod
    def float_sin(cls, tensor):
        return record(cls, Sin(), tensor)

    @classmethod
    def float_cos(cls, tensor):
        return record(cls, Cos(), tensor)

    @classmethod
    def float_erf(cls, tensor):
        return record(cls, Erf(), tensor)

    @classmethod
    def float_floor(cls, tensor):
        return record(cls, Floor(), tensor)

    @classmethod
    def float_sign(cls, tensor):
        return record(cls, Sign(), tensor)
