"""Steps of the unary math ops, ``cast`` and ``to_device``."""

from __future__ import annotations

import math

from minidl.autodiff.step import Step, zeros_like
from minidl.backend.dtype import DType


class Exp(Step):
    """``exp(x)``: ``grad * out``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_exp(tensor)

    def backward(self, B, grad, saved):
        return (B.float_mul(grad, saved["out"]),)


class Log(Step):
    """``ln(x)``: ``grad / x``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log(tensor)

    def backward(self, B, grad, saved):
        return (B.float_div(grad, saved["tensor"]),)


class Log1p(Step):
    """``ln(1 + x)``: ``grad / (1 + x)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log1p(tensor)

    def backward(self, B, grad, saved):
        return (B.float_div(grad, B.float_add_scalar(saved["tensor"], 1.0)),)


class Sqrt(Step):
    """``sqrt(x)``: ``grad / (2 out)``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_sqrt(tensor)

    def backward(self, B, grad, saved):
        return (B.float_div(grad, B.float_mul_scalar(saved["out"], 2.0)),)


class Abs(Step):
    """``|x|``: ``grad * sign(x)`` (zero at 0, as torch)."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_abs(tensor)

    def backward(self, B, grad, saved):
        return (B.float_mul(grad, B.float_sign(saved["tensor"])),)


class Tanh(Step):
    """``tanh(x)``: ``grad * (1 - out²)``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_tanh(tensor)

    def backward(self, B, grad, saved):
        out = saved["out"]
        return (B.float_mul(grad, B.float_add_scalar(B.float_neg(B.float_mul(out, out)), 1.0)),)


class Sin(Step):
    """``sin(x)``: ``grad * cos(x)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_sin(tensor)

    def backward(self, B, grad, saved):
        return (B.float_mul(grad, B.float_cos(saved["tensor"])),)


class Cos(Step):
    """``cos(x)``: ``-grad * sin(x)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_cos(tensor)

    def backward(self, B, grad, saved):
        return (B.float_neg(B.float_mul(grad, B.float_sin(saved["tensor"]))),)


class Erf(Step):
    """``erf(x)``: ``grad * 2/sqrt(pi) * exp(-x²)``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_erf(tensor)

    def backward(self, B, grad, saved):
        x = saved["tensor"]
        density = B.float_mul_scalar(B.float_exp(B.float_neg(B.float_mul(x, x))), 2.0 / math.sqrt(math.pi))
        return (B.float_mul(grad, density),)


class Floor(Step):
    """``floor(x)``: a zero gradient (piecewise constant)."""

    def forward(self, B, tensor):
        return B.float_floor(tensor)

    def backward(self, B, grad, saved):
        return (zeros_like(B, grad, self.shapes[0]),)


class Sign(Floor):
    """``sign(x)``: a zero gradient."""

    def forward(self, B, tensor):
        return B.float_sign(tensor)


class Cast(Step):
    """Convert to ``dtype``: the gradient is cast back to the input's dtype."""

    def __init__(self, dtype: DType, source: DType):
        super().__init__()
        self.dtype = dtype
        self.source = source

    def forward(self, B, tensor):
        return B.float_cast(tensor, self.dtype)

    def backward(self, B, grad, saved):
        return (B.float_cast(grad, self.source),)


class ToDevice(Step):
    """Move to ``device`` (same backend): the gradient moves back to ``source``."""

    def __init__(self, device, source):
        super().__init__()
        self.device = device
        self.source = source

    def forward(self, B, tensor):
        return B.float_to_device(tensor, self.device)

    def backward(self, B, grad, saved):
        return (B.float_to_device(grad, self.source),)
