"""Autodiff's arithmetic: binary ops (broadcasting), scalar forms, neg, recip, clamp, matmul.

burn-autodiff ``ops/tensor.rs``: each op records one step, and the step (forward and
backward side by side) is declared here next to the override that records it. Binary steps
sum their gradients back to each input's shape (:func:`sum_to_shape`), which is how
broadcasting is undone.
"""

from __future__ import annotations

from minidl.autodiff.ops.base import AutodiffOpsBase, record
from minidl.autodiff.step import Step, sum_to_shape


class Add(Step):
    """``lhs + rhs``: the gradient passes to both, summed back to their shapes. Keeps nothing."""

    def forward(self, B, lhs, rhs):
        return B.float_add(lhs, rhs)

    def backward(self, B, grad, state):
        return sum_to_shape(B, grad, self.shapes[0]), sum_to_shape(B, grad, self.shapes[1])


class Sub(Step):
    """``lhs - rhs``: ``grad`` and ``-grad``. Keeps nothing."""

    def forward(self, B, lhs, rhs):
        return B.float_sub(lhs, rhs)

    def backward(self, B, grad, state):
        rhs = sum_to_shape(B, B.float_neg(grad), self.shapes[1]) if self.tracked[1] else None
        return sum_to_shape(B, grad, self.shapes[0]), rhs


class Mul(Step):
    """lhs * rhs: the gradients are grad * rhs and grad * lhs; keeps rhs
    only if lhs is tracked and lhs only if rhs is (burn's Mul)."""

    def forward(self, B, lhs, rhs):
        return B.float_mul(lhs, rhs)

    def keeps(self, tracked):
        kept = ()
        if tracked[0]:  # lhs needs grad * rhs
            kept += ("rhs",)
        if tracked[1]:  # rhs needs grad * lhs
            kept += ("lhs",)
        return kept

    def backward(self, B, grad, state):
        lhs = rhs = None
        if self.tracked[0]:
            lhs = B.float_mul(grad, state["rhs"])
            lhs = sum_to_shape(B, lhs, self.shapes[0])
        if self.tracked[1]:
            rhs = B.float_mul(grad, state["lhs"])
            rhs = sum_to_shape(B, rhs, self.shapes[1])
        return lhs, rhs


class Div(Step):
    """``lhs / rhs``: ``grad / rhs`` and ``-grad * lhs / rhs²``."""

    def forward(self, B, lhs, rhs):
        return B.float_div(lhs, rhs)

    def keeps(self, tracked):
        return ("lhs", "rhs") if tracked[1] else ("rhs",)

    def backward(self, B, grad, state):
        rhs = state["rhs"]
        d_lhs = sum_to_shape(B, B.float_div(grad, rhs), self.shapes[0]) if self.tracked[0] else None
        d_rhs = None
        if self.tracked[1]:
            value = B.float_div(B.float_mul(grad, state["lhs"]), B.float_mul(rhs, rhs))
            d_rhs = sum_to_shape(B, B.float_neg(value), self.shapes[1])
        return d_lhs, d_rhs


class Powf(Step):
    """``lhs ** rhs``: ``grad * rhs * lhs^(rhs-1)`` and ``grad * lhs^rhs * ln(lhs)``."""

    saves = ("lhs", "rhs")

    def forward(self, B, lhs, rhs):
        return B.float_powf(lhs, rhs)

    def backward(self, B, grad, state):
        lhs, rhs = state["lhs"], state["rhs"]
        d_lhs = d_rhs = None
        if self.tracked[0]:
            power = B.float_powf(lhs, B.float_sub_scalar(rhs, 1.0))
            d_lhs = sum_to_shape(B, B.float_mul(grad, B.float_mul(rhs, power)), self.shapes[0])
        if self.tracked[1]:
            value = B.float_mul(B.float_powf(lhs, rhs), B.float_log(lhs))
            d_rhs = sum_to_shape(B, B.float_mul(grad, value), self.shapes[1])
        return d_lhs, d_rhs


class AddScalar(Step):
    """``tensor + c``: the gradient passes through."""

    def __init__(self, rhs: float):
        super().__init__()
        self.rhs = rhs

    def forward(self, B, tensor):
        return B.float_add_scalar(tensor, self.rhs)

    def backward(self, B, grad, state):
        return (grad,)


class SubScalar(AddScalar):
    """``tensor - c``: the gradient passes through."""

    def forward(self, B, tensor):
        return B.float_sub_scalar(tensor, self.rhs)


class MulScalar(AddScalar):
    """``tensor * c``: ``grad * c``."""

    def forward(self, B, tensor):
        return B.float_mul_scalar(tensor, self.rhs)

    def backward(self, B, grad, state):
        return (B.float_mul_scalar(grad, self.rhs),)


class DivScalar(AddScalar):
    """``tensor / c``: ``grad / c``."""

    def forward(self, B, tensor):
        return B.float_div_scalar(tensor, self.rhs)

    def backward(self, B, grad, state):
        return (B.float_div_scalar(grad, self.rhs),)


class PowfScalar(AddScalar):
    """``tensor ** c``: ``grad * c * tensor^(c-1)``. Keeps ``tensor``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_powf_scalar(tensor, self.rhs)

    def backward(self, B, grad, state):
        power = B.float_powf_scalar(state["tensor"], self.rhs - 1.0)
        return (B.float_mul(grad, B.float_mul_scalar(power, self.rhs)),)


class RemainderScalar(AddScalar):
    """``tensor mod c`` = ``tensor - floor(tensor / c) * c``: the gradient passes through."""

    def forward(self, B, tensor):
        return B.float_remainder_scalar(tensor, self.rhs)


class Neg(Step):
    """``-tensor``: ``-grad``."""

    def forward(self, B, tensor):
        return B.float_neg(tensor)

    def backward(self, B, grad, state):
        return (B.float_neg(grad),)


class Recip(Step):
    """``1 / tensor``: ``-grad * out²``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.float_recip(tensor)

    def backward(self, B, grad, state):
        out = state["out"]
        return (B.float_neg(B.float_mul(grad, B.float_mul(out, out))),)


class Clamp(Step):
    """``clamp(tensor, min, max)`` (either bound may be ``None``): the gradient passes where
    ``min <= tensor <= max`` and is zero outside (torch's convention at the bounds)."""

    saves = ("tensor",)

    def __init__(self, min: float | None, max: float | None):
        super().__init__()
        self.min = min
        self.max = max

    def forward(self, B, tensor):
        if self.min is None:
            return B.float_clamp_max(tensor, self.max)
        if self.max is None:
            return B.float_clamp_min(tensor, self.min)
        return B.float_clamp(tensor, self.min, self.max)

    def backward(self, B, grad, state):
        tensor = state["tensor"]
        outside = None
        if self.min is not None:
            outside = B.float_lower_elem(tensor, self.min)
        if self.max is not None:
            above = B.float_greater_elem(tensor, self.max)
            outside = above if outside is None else B.bool_or(outside, above)
        return (B.float_mask_fill(grad, outside, 0.0),)


class Matmul(Step):
    """``lhs @ rhs`` (batched, batch dims broadcast): ``grad @ rhsᵀ`` and ``lhsᵀ @ grad``.
    Compute-bound: keeps ``rhs`` if ``lhs`` is tracked and ``lhs`` if ``rhs`` is."""

    memory_bound = False

    def forward(self, B, lhs, rhs):
        return B.float_matmul(lhs, rhs)

    def keeps(self, tracked):
        kept = ()
        if tracked[0]:  # lhs needs grad * rhs
            kept += ("rhs",)
        if tracked[1]:  # rhs needs grad * lhs
            kept += ("lhs",)
        return kept

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if self.tracked[0]:
            d_lhs = sum_to_shape(B, B.float_matmul(grad, B.float_transpose(state["rhs"])), self.shapes[0])
        if self.tracked[1]:
            d_rhs = sum_to_shape(B, B.float_matmul(B.float_transpose(state["lhs"]), grad), self.shapes[1])
        return d_lhs, d_rhs


class AutodiffArithmeticOps(AutodiffOpsBase):
    """Arithmetic and matmul of ``Autodiff[B]``: each records its step."""

    # ----- arithmetic -------------------------------------------------------------------
    @classmethod
    def float_add(cls, lhs, rhs):
        return record(cls, Add(), lhs, rhs)

    @classmethod
    def float_sub(cls, lhs, rhs):
        return record(cls, Sub(), lhs, rhs)

    @classmethod
    def float_mul(cls, lhs, rhs):
        return record(cls, Mul(), lhs, rhs)

    @classmethod
    def float_div(cls, lhs, rhs):
        return record(cls, Div(), lhs, rhs)

    @classmethod
    def float_powf(cls, lhs, rhs):
        return record(cls, Powf(), lhs, rhs)

    @classmethod
    def float_add_scalar(cls, lhs, rhs):
        return record(cls, AddScalar(rhs), lhs)

    @classmethod
    def float_sub_scalar(cls, lhs, rhs):
        return record(cls, SubScalar(rhs), lhs)

    @classmethod
    def float_mul_scalar(cls, lhs, rhs):
        return record(cls, MulScalar(rhs), lhs)

    @classmethod
    def float_div_scalar(cls, lhs, rhs):
        return record(cls, DivScalar(rhs), lhs)

    @classmethod
    def float_powf_scalar(cls, lhs, rhs):
        return record(cls, PowfScalar(rhs), lhs)

    @classmethod
    def float_remainder_scalar(cls, lhs, rhs):
        return record(cls, RemainderScalar(rhs), lhs)

    @classmethod
    def float_neg(cls, tensor):
        return record(cls, Neg(), tensor)

    @classmethod
    def float_recip(cls, tensor):
        return record(cls, Recip(), tensor)

    @classmethod
    def float_clamp_min(cls, tensor, min):
        return record(cls, Clamp(min, None), tensor)

    @classmethod
    def float_clamp_max(cls, tensor, max):
        return record(cls, Clamp(None, max), tensor)

    @classmethod
    def float_clamp(cls, tensor, min, max):
        return record(cls, Clamp(min, max), tensor)

    @classmethod
    def float_matmul(cls, lhs, rhs):
        return record(cls, Matmul(), lhs, rhs)
