"""Flex's float reductions (burn-flex's ``float_sum``, ``float_sum_dim``, ``float_mean_dim``,
``float_max_dim``, ``float_argmax``, ...; kernels: :mod:`minidl.backends.flex.kernels.reduce`).

The reduced dim is kept with size 1; whole-tensor reductions return shape ``(1,)``, as burn.
float16 accumulates in float32. Flex also overrides the defaults ``mean``, ``mean_dim``,
``prod_dim``, ``max``, ``min`` and the ``*_with_indices`` pairs: each is one kernel call where
the default chains two or three ops (``prod_dim``'s default, ``exp(sum(log x))``, is also wrong
for negative values).
"""

from __future__ import annotations

from minidl.backends.flex.kernels import reduce as r
from minidl.backends.flex.kernels.copy import contiguous


class FlexReduceOps:
    """Reductions of Flex: one reduction kernel per op (rows, or column slabs, per thread)."""

    @classmethod
    def float_sum(cls, tensor):
        return r.sum(contiguous(tensor))

    @classmethod
    def float_sum_dim(cls, tensor, dim: int):
        return r.sum(contiguous(tensor), dim)

    @classmethod
    def float_mean(cls, tensor):
        return r.mean(contiguous(tensor))

    @classmethod
    def float_mean_dim(cls, tensor, dim: int):
        return r.mean(contiguous(tensor), dim)

    @classmethod
    def float_prod_dim(cls, tensor, dim: int):
        return r.prod(contiguous(tensor), dim)

    @classmethod
    def float_max(cls, tensor):
        return r.max(contiguous(tensor))

    @classmethod
    def float_min(cls, tensor):
        return r.min(contiguous(tensor))

    @classmethod
    def float_max_dim(cls, tensor, dim: int):
        return r.max(contiguous(tensor), dim)

    @classmethod
    def float_min_dim(cls, tensor, dim: int):
        return r.min(contiguous(tensor), dim)

    @classmethod
    def float_argmax(cls, tensor, dim: int):
        """int64 index of the first maximum (a NaN counts as the maximum, as torch)."""
        return r.argmax(contiguous(tensor), dim)

    @classmethod
    def float_argmin(cls, tensor, dim: int):
        return r.argmin(contiguous(tensor), dim)

    @classmethod
    def float_max_dim_with_indices(cls, tensor, dim: int):
        return r.max_with_indices(contiguous(tensor), dim)

    @classmethod
    def float_min_dim_with_indices(cls, tensor, dim: int):
        return r.min_with_indices(contiguous(tensor), dim)
