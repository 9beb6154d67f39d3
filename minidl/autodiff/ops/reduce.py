"""Autodiff's reductions: sum, mean (whole and along a dim), prod_dim, max/min along a dim.

burn-autodiff ``ops/tensor.rs`` and ``ops/maxmin.rs``. Reductions keep the reduced dim with
size 1 (whole-tensor ones return shape ``[1]``), so their backward only has to reshape and
expand the gradient back to the input's shape. ``max_dim``/``min_dim`` run the inner
backend's ``*_with_indices`` and keep the indices for backward.
"""

from __future__ import annotations

import math

import numpy as np

from minidl.autodiff.ops.base import AutodiffOpsBase, finish, lift, record
from minidl.autodiff.step import Step, zeros_like
from minidl.backend.dtype import DType


def _expand(B, grad, shape):
    """Broadcast a reduced gradient (size-1 dims, or shape ``[1]``) back to ``shape``."""
    if len(grad.shape) != len(shape):
        grad = B.float_reshape(grad, (1,) * len(shape))
    return B.float_expand(grad, tuple(shape))


class Sum(Step):
    """Sum of all elements: the gradient is spread to every element."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def forward(self, B, tensor):
        return B.float_sum(tensor)

    def backward(self, B, grad, state):
        return (_expand(B, grad, self.shapes[0]),)


class SumDim(Step):
    """Sum along ``dim``: the gradient is expanded along ``dim``."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, B, tensor):
        return B.float_sum_dim(tensor, self.dim)

    def backward(self, B, grad, state):
        return (_expand(B, grad, self.shapes[0]),)


class Mean(Step):
    """Mean of all elements: ``grad / n`` to every element."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def forward(self, B, tensor):
        return B.float_mean(tensor)

    def backward(self, B, grad, state):
        n = float(math.prod(self.shapes[0]))
        return (_expand(B, B.float_div_scalar(grad, n), self.shapes[0]),)


class MeanDim(SumDim):
    """Mean along ``dim``: ``grad / size(dim)`` expanded along ``dim``."""

    def forward(self, B, tensor):
        return B.float_mean_dim(tensor, self.dim)

    def backward(self, B, grad, state):
        size = float(self.shapes[0][self.dim])
        return (_expand(B, B.float_div_scalar(grad, size), self.shapes[0]),)


class ProdDim(SumDim):
    """Product along ``dim``: ``grad * out / x``; where an element is 0 that ratio is 0 / 0, so
    the gradient is then the product of the *other* elements of the row (torch's answer),
    computed slice by slice."""

    saves = ("tensor", "out")

    def forward(self, B, tensor):
        return B.float_prod_dim(tensor, self.dim)

    def backward(self, B, grad, state):
        x, dim = state["tensor"], self.dim
        grad = _expand(B, grad, self.shapes[0])
        if not _has_zero(B, x):
            return (B.float_mul(grad, B.float_div(state["out"], x)),)
        n = x.shape[dim]
        others = []
        for i in range(n):  # the product of every slice but the i-th
            parts = [B.float_slice(x, [slice(None)] * dim + [slice(j, j + 1)]) for j in range(n) if j != i]
            if parts:
                others.append(B.float_prod_dim(B.float_cat(parts, dim), dim))
            else:  # a dim of size 1: the product of nothing is 1
                shape = tuple(x.shape[:dim]) + (1,) + tuple(x.shape[dim + 1:])
                others.append(B.float_ones(shape, DType.of(x.dtype), B.float_device(x)))
        return (B.float_mul(grad, B.float_cat(others, dim)),)


def _has_zero(B, x) -> bool:
    """Whether any element of the primitive ``x`` is 0 (one read back to the host)."""
    return bool(np.asarray(B.bool_into_data(B.bool_any(B.float_equal_elem(x, 0.0))).array).reshape(-1)[0])


class MaxDim(Step):
    """Maximum along ``dim``: the gradient goes to the arg-max position. Keeps the indices.
    On ties the arg-max (first) position gets it all (burn too; torch's ``max_dim`` also
    picks one, its whole-tensor ``max()`` spreads it evenly)."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, dim: int, indices):
        super().__init__(indices=indices)
        self.dim = dim

    def forward(self, B, tensor):
        return B.float_max_dim(tensor, self.dim)

    def backward(self, B, grad, state):
        zeros = zeros_like(B, grad, self.shapes[0])
        return (B.float_scatter(self.dim, zeros, state["indices"], grad),)


class MinDim(MaxDim):
    """Minimum along ``dim``: the gradient goes to the arg-min position. Keeps the indices."""

    def forward(self, B, tensor):
        return B.float_min_dim(tensor, self.dim)


class AutodiffReduceOps(AutodiffOpsBase):
    """Reductions of ``Autodiff[B]``."""

    # ----- reductions -------------------------------------------------------------------
    @classmethod
    def float_sum(cls, tensor):
        return record(cls, Sum(), tensor)

    @classmethod
    def float_sum_dim(cls, tensor, dim):
        return record(cls, SumDim(dim), tensor)

    @classmethod
    def float_mean(cls, tensor):
        return record(cls, Mean(), tensor)

    @classmethod
    def float_mean_dim(cls, tensor, dim):
        return record(cls, MeanDim(dim), tensor)

    @classmethod
    def float_prod_dim(cls, tensor, dim):
        return record(cls, ProdDim(dim), tensor)

    @classmethod
    def float_max_dim(cls, tensor, dim):
        return cls.float_max_dim_with_indices(tensor, dim)[0]

    @classmethod
    def float_min_dim(cls, tensor, dim):
        return cls.float_min_dim_with_indices(tensor, dim)[0]

    @classmethod
    def float_max_dim_with_indices(cls, tensor, dim):
        tensor = lift(tensor)
        out, indices = cls._inner.float_max_dim_with_indices(tensor.inner, dim)
        return finish(cls, MaxDim(dim, indices), [tensor], out), indices

    @classmethod
    def float_min_dim_with_indices(cls, tensor, dim):
        tensor = lift(tensor)
        out, indices = cls._inner.float_min_dim_with_indices(tensor.inner, dim)
        return finish(cls, MinDim(dim, indices), [tensor], out), indices
