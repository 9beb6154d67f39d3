"""Reductions (burn-tensor ``api/numeric.rs`` and ``stats``).

As in burn, a whole-tensor reduction returns shape ``[1]`` (there are no rank-0 tensors), and
a ``*_dim`` reduction keeps the reduced dim with size 1: ``[2, 3].sum_dim(1)`` is ``[2, 1]``.
``var`` is not a backend op: like burn's ``stats::var`` it is composed from ``mean_dim``,
``sub``, ``mul``, ``sum_dim`` and ``div_scalar``.
"""

from __future__ import annotations

from typing import Self

from minidl.dispatch import Dispatch
from minidl.tensor.arithmetic import ArithmeticOps
from minidl.tensor.base import BOOL, FLOAT, INT
from minidl.tensor.check import fail, fmt_shape, norm_dim
from minidl.tensor.conversion import ConversionOps


class ReductionOps(ArithmeticOps, ConversionOps):
    """``sum mean max min argmax argmin var`` and their ``_dim`` forms."""

    __slots__ = ()

    def _reduce_kind(self, ops: str) -> None:
        if self.kind is BOOL:
            fail(ops, "Argument self must be a Float or Int tensor.", f"Found a {self._describe()}. "
                 "Convert it with .int() first.", kind=True)

    def _reduce_dim(self, ops: str, dim: int) -> int:
        self._reduce_kind(ops)
        return norm_dim(ops, dim, self.rank, shape=self.shape)

    def _non_empty(self, ops: str) -> None:
        if self.numel() == 0:
            fail(ops, "Can't reduce an empty tensor.", f"Found shape {fmt_shape(self.shape)}.")

    def _flat(self) -> Self:
        return self.reshape((self.numel(),))

    # ----- sum / mean -----------------------------------------------------------------------
    def sum(self) -> Self:
        """Sum of every element, shape ``[1]`` (a Bool tensor counts its trues as Int)."""
        if self.kind is BOOL:
            return self.int().sum()
        op = self._by_kind(float=Dispatch.float_sum, int=Dispatch.int_sum)
        return self._wrap(op(self.primitive))

    def sum_dim(self, dim: int) -> Self:
        """Sum along ``dim``, kept with size 1."""
        dim = self._reduce_dim("sum_dim", dim)
        op = self._by_kind(float=Dispatch.float_sum_dim, int=Dispatch.int_sum_dim)
        return self._wrap(op(self.primitive, dim))

    def mean(self) -> Self:
        """Mean of every element, shape ``[1]`` (Float tensors)."""
        self._require("mean", FLOAT)
        return self._wrap(Dispatch.float_mean(self.primitive))

    def mean_dim(self, dim: int) -> Self:
        """Mean along ``dim``, kept with size 1."""
        self._require("mean_dim", FLOAT)
        dim = self._reduce_dim("mean_dim", dim)
        return self._wrap(Dispatch.float_mean_dim(self.primitive, dim))

    # ----- prod ----------------------------------------------------------------------------
    def prod(self) -> Self:
        """Product of every element, shape ``[1]`` (burn's ``prod``; 1 for an empty tensor)."""
        self._reduce_kind("prod")
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_prod(self.primitive))
        return self._flat().prod_dim(0)

    def prod_dim(self, dim: int) -> Self:
        """Product along ``dim``, kept with size 1 (burn's ``prod_dim``). Float runs the
        backend's ``float_prod_dim`` (one kernel on Flex); Int multiplies the slices in order,
        exactly (the backend has no int product)."""
        dim = self._reduce_dim("prod_dim", dim)
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_prod_dim(self.primitive, dim))
        shape = list(self.shape)
        shape[dim] = 1
        out = Dispatch.int_add_scalar(Dispatch.int_zeros(tuple(shape), self.dtype, self.device), 1)
        for i in range(self.shape[dim]):  # an empty dim leaves the product of nothing: 1
            part = Dispatch.int_slice(self.primitive, [slice(None)] * dim + [slice(i, i + 1)])
            out = Dispatch.int_mul(out, part)
        return self._wrap(out)

    # ----- max / min ------------------------------------------------------------------------
    def max(self) -> Self:
        """The largest element, shape ``[1]``."""
        self._reduce_kind("max")
        self._non_empty("max")
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_max(self.primitive))
        return self._flat().max_dim(0)

    def min(self) -> Self:
        """The smallest element, shape ``[1]``."""
        self._reduce_kind("min")
        self._non_empty("min")
        if self.kind is FLOAT:
            return self._wrap(Dispatch.float_min(self.primitive))
        return self._flat().min_dim(0)

    def max_dim(self, dim: int) -> Self:
        """The largest element along ``dim``, kept with size 1."""
        dim = self._reduce_dim("max_dim", dim)
        self._non_empty("max_dim")
        op = self._by_kind(float=Dispatch.float_max_dim, int=Dispatch.int_max_dim)
        return self._wrap(op(self.primitive, dim))

    def min_dim(self, dim: int) -> Self:
        """The smallest element along ``dim``, kept with size 1."""
        dim = self._reduce_dim("min_dim", dim)
        self._non_empty("min_dim")
        op = self._by_kind(float=Dispatch.float_min_dim, int=Dispatch.int_min_dim)
        return self._wrap(op(self.primitive, dim))

    def max_dim_with_indices(self, dim: int) -> tuple[Self, Self]:
        """``(max_dim(dim), argmax(dim))``."""
        dim = self._reduce_dim("max_dim_with_indices", dim)
        self._non_empty("max_dim_with_indices")
        if self.kind is FLOAT:
            values, indices = Dispatch.float_max_dim_with_indices(self.primitive, dim)
            return self._wrap(values), self._wrap(indices, INT)
        return self.max_dim(dim), self.argmax(dim)

    def min_dim_with_indices(self, dim: int) -> tuple[Self, Self]:
        """``(min_dim(dim), argmin(dim))``."""
        dim = self._reduce_dim("min_dim_with_indices", dim)
        self._non_empty("min_dim_with_indices")
        if self.kind is FLOAT:
            values, indices = Dispatch.float_min_dim_with_indices(self.primitive, dim)
            return self._wrap(values), self._wrap(indices, INT)
        return self.min_dim(dim), self.argmin(dim)

    def argmax(self, dim: int | None = None) -> Self:
        """Index (Int) of the largest element along ``dim``, kept with size 1; with no ``dim``,
        the index into the flattened tensor, shape ``[1]``."""
        if dim is None:
            return self._flat().argmax(0)
        dim = self._reduce_dim("argmax", dim)
        self._non_empty("argmax")
        op = self._by_kind(float=Dispatch.float_argmax, int=Dispatch.int_argmax)
        return self._wrap(op(self.primitive, dim), INT)

    def argmin(self, dim: int | None = None) -> Self:
        """Index (Int) of the smallest element along ``dim`` (or of the flattened tensor)."""
        if dim is None:
            return self._flat().argmin(0)
        dim = self._reduce_dim("argmin", dim)
        self._non_empty("argmin")
        op = self._by_kind(float=Dispatch.float_argmin, int=Dispatch.int_argmin)
        return self._wrap(op(self.primitive, dim), INT)

    # ----- variance: composed, as burn's stats::var ----------------------------------------
    def var(self, dim: int | None = None, correction: int = 1) -> Self:
        """Variance along ``dim`` (kept with size 1), dividing by ``n - correction``: 1 is the
        unbiased estimator (burn's ``var``), 0 the biased one (``var_bias``). Without ``dim``,
        over every element, shape ``[1]``."""
        return self.var_mean(dim, correction)[0]

    def var_bias(self, dim: int | None = None) -> Self:
        """The biased variance (divide by ``n``), burn's ``var_bias``."""
        return self.var_mean(dim, 0)[0]

    def var_mean(self, dim: int | None = None, correction: int = 1) -> tuple[Self, Self]:
        """``(var, mean)`` along ``dim`` — one mean shared by both (burn's ``var_mean``)."""
        self._require("var", FLOAT)
        if dim is None:
            return self._flat().var_mean(0, correction)
        dim = self._reduce_dim("var", dim)
        mean = self.mean_dim(dim)
        centered = self.sub(mean)
        # torch's rule: n - correction is clamped at 0, so an empty dim (or one no larger than the
        # correction) gives 0/0 = NaN, or inf when the squares sum above 0
        n = max(0, self.shape[dim] - correction)
        return centered.mul(centered).sum_dim(dim).div_scalar(float(n)), mean

    def var_mean_bias(self, dim: int | None = None) -> tuple[Self, Self]:
        """``(biased var, mean)`` along ``dim``."""
        return self.var_mean(dim, 0)
