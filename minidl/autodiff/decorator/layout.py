"""Autodiff's reductions and layout/indexing ops (burn-autodiff ``ops/tensor.rs``, ``maxmin.rs``).

Index and mask arguments are inner int/bool primitives; they are handed to the steps, which
keep them when backward needs them.
"""

from __future__ import annotations

from minidl.autodiff.decorator import prim
from minidl.autodiff.ops import layout as lay
from minidl.autodiff.ops import reduce as red
from minidl.autodiff.record import finish, lift, record


class AutodiffLayoutOps:
    """Reductions, layout and indexing ops of ``Autodiff[B]``."""

    # ----- reductions -------------------------------------------------------------------------
    @classmethod
    def float_sum(cls, tensor):
        return record(cls, red.Sum(), tensor)

    @classmethod
    def float_sum_dim(cls, tensor, dim):
        return record(cls, red.SumDim(dim), tensor)

    @classmethod
    def float_mean(cls, tensor):
        return record(cls, red.Mean(), tensor)

    @classmethod
    def float_mean_dim(cls, tensor, dim):
        return record(cls, red.MeanDim(dim), tensor)

    @classmethod
    def float_prod_dim(cls, tensor, dim):
        return record(cls, red.ProdDim(dim), tensor)

    @classmethod
    def float_max_dim(cls, tensor, dim):
        return cls.float_max_dim_with_indices(tensor, dim)[0]

    @classmethod
    def float_min_dim(cls, tensor, dim):
        return cls.float_min_dim_with_indices(tensor, dim)[0]

    @classmethod
    def float_max_dim_with_indices(cls, tensor, dim):
        tensor = lift(tensor)
        out, indices = cls._inner.float_max_dim_with_indices(tensor.primitive, dim)
        return finish(cls, red.MaxDim(dim, indices), [tensor], out), indices

    @classmethod
    def float_min_dim_with_indices(cls, tensor, dim):
        tensor = lift(tensor)
        out, indices = cls._inner.float_min_dim_with_indices(tensor.primitive, dim)
        return finish(cls, red.MinDim(dim, indices), [tensor], out), indices

    # ----- layout -----------------------------------------------------------------------------
    @classmethod
    def float_reshape(cls, tensor, shape):
        return record(cls, lay.Reshape(shape), tensor)

    @classmethod
    def float_swap_dims(cls, tensor, dim1, dim2):
        return record(cls, lay.SwapDims(dim1, dim2), tensor)

    @classmethod
    def float_permute(cls, tensor, axes):
        return record(cls, lay.Permute(axes), tensor)

    @classmethod
    def float_flip(cls, tensor, axes):
        return record(cls, lay.Flip(axes), tensor)

    @classmethod
    def float_expand(cls, tensor, shape):
        return record(cls, lay.Expand(shape), tensor)

    @classmethod
    def float_slice(cls, tensor, slices):
        return record(cls, lay.Slice(slices), tensor)

    @classmethod
    def float_slice_assign(cls, tensor, slices, value):
        return record(cls, lay.SliceAssign(slices), tensor, value)

    @classmethod
    def float_cat(cls, tensors, dim):
        return record(cls, lay.Cat(dim), *tensors)

    # ----- indexing (indices and masks are inner primitives) ---------------------------------
    @classmethod
    def float_gather(cls, dim, tensor, indices):
        return record(cls, lay.Gather(dim, prim(indices)), tensor)

    @classmethod
    def float_scatter(cls, dim, tensor, indices, value):
        return record(cls, lay.Scatter(dim, prim(indices)), tensor, value)

    @classmethod
    def float_select(cls, tensor, dim, indices):
        return record(cls, lay.Select(dim, prim(indices)), tensor)

    @classmethod
    def float_select_assign(cls, tensor, dim, indices, value):
        return record(cls, lay.SelectAssign(dim, prim(indices)), tensor, value)

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        return record(cls, lay.MaskWhere(prim(mask)), tensor, value)

    @classmethod
    def float_mask_fill(cls, tensor, mask, value):
        return record(cls, lay.MaskFill(prim(mask), value), tensor)
