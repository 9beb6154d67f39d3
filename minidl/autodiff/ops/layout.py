"""Autodiff's layout and indexing ops: reshape, swap_dims, permute, flip, expand, slice,
slice_assign, cat, gather, scatter, select, select_assign, mask_where, mask_fill.

burn-autodiff ``ops/tensor.rs``. Index and mask arguments are inner int/bool primitives; the
steps that need them in backward keep them in ``saved`` (they count as memory the graph
holds, like burn's saved state).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.autodiff.ops.base import AutodiffOpsBase, prim, record
from minidl.autodiff.step import Step, sum_to_shape, zeros_like


class Reshape(Step):
    """New shape: the gradient is reshaped back."""

    def __init__(self, shape: tuple[int, ...]):
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, B, tensor):
        return B.float_reshape(tensor, self.shape)

    def backward(self, B, grad, state):
        return (B.float_reshape(grad, self.shapes[0]),)


class SwapDims(Step):
    """Exchange two axes: the gradient is swapped back."""

    def __init__(self, dim1: int, dim2: int):
        super().__init__()
        self.dim1 = dim1
        self.dim2 = dim2

    def forward(self, B, tensor):
        return B.float_swap_dims(tensor, self.dim1, self.dim2)

    def backward(self, B, grad, state):
        return (B.float_swap_dims(grad, self.dim1, self.dim2),)


class Permute(Step):
    """Reorder axes: the gradient gets the inverse permutation."""

    def __init__(self, axes: Sequence[int]):
        super().__init__()
        self.axes = tuple(axes)

    def forward(self, B, tensor):
        return B.float_permute(tensor, self.axes)

    def backward(self, B, grad, state):
        return (B.float_permute(grad, tuple(int(a) for a in np.argsort(self.axes))),)


class Flip(Step):
    """Reverse along ``axes``: the gradient is flipped back."""

    def __init__(self, axes: Sequence[int]):
        super().__init__()
        self.axes = tuple(axes)

    def forward(self, B, tensor):
        return B.float_flip(tensor, self.axes)

    def backward(self, B, grad, state):
        return (B.float_flip(grad, self.axes),)


class Expand(Step):
    """Broadcast to ``shape``: the gradient is summed back to the input's shape."""

    def __init__(self, shape: tuple[int, ...]):
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, B, tensor):
        return B.float_expand(tensor, self.shape)

    def backward(self, B, grad, state):
        return (sum_to_shape(B, grad, self.shapes[0]),)


class Slice(Step):
    """A sub-tensor: the gradient is written into zeros of the input's shape."""

    def __init__(self, slices: Sequence[slice]):
        super().__init__()
        self.slices = list(slices)

    def forward(self, B, tensor):
        return B.float_slice(tensor, self.slices)

    def backward(self, B, grad, state):
        return (B.float_slice_assign(zeros_like(B, grad, self.shapes[0]), self.slices, grad),)


class SliceAssign(Slice):
    """Replace a region by ``value``: ``tensor`` gets the gradient outside the region,
    ``value`` the gradient inside it."""

    def forward(self, B, tensor, value):
        return B.float_slice_assign(tensor, self.slices, value)

    def backward(self, B, grad, state):
        d_tensor = d_value = None
        if self.tracked[0]:
            d_tensor = B.float_slice_assign(grad, self.slices, zeros_like(B, grad, self.shapes[1]))
        if self.tracked[1]:
            d_value = sum_to_shape(B, B.float_slice(grad, self.slices), self.shapes[1])
        return d_tensor, d_value


class Cat(Step):
    """Concatenate along ``dim``: each input gets its slice of the gradient."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, B, *tensors):
        return B.float_cat(list(tensors), self.dim)

    def backward(self, B, grad, state):
        grads, start = [], 0
        for shape, tracked in zip(self.shapes, self.tracked):
            end = start + shape[self.dim]
            region = [slice(None)] * self.dim + [slice(start, end)]
            grads.append(B.float_slice(grad, region) if tracked else None)
            start = end
        return tuple(grads)


class Gather(Step):
    """``out[..i..] = tensor[..indices[..i..]..]`` along ``dim``: the gradient is scattered
    (added) back to the gathered positions. Keeps the indices."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, dim: int, indices):
        super().__init__(indices=indices)
        self.dim = dim

    def forward(self, B, tensor):
        return B.float_gather(self.dim, tensor, self.saved["indices"])

    def backward(self, B, grad, state):
        zeros = zeros_like(B, grad, self.shapes[0])
        return (B.float_scatter(self.dim, zeros, state["indices"], grad),)


class Scatter(Gather):
    """``tensor`` with ``value`` added at ``indices`` along ``dim``: ``tensor`` gets the whole
    gradient, ``value`` the gradient gathered at ``indices``."""

    def forward(self, B, tensor, value):
        return B.float_scatter(self.dim, tensor, self.saved["indices"], value)

    def backward(self, B, grad, state):
        d_value = B.float_gather(self.dim, grad, state["indices"]) if self.tracked[1] else None
        return grad, d_value


class Select(Gather):
    """Whole slices along ``dim`` picked by 1-D ``indices``: the gradient is added back into
    the picked slices (a repeated index gets the sum)."""

    memory_bound = True  # burn: .memory_bound()

    def forward(self, B, tensor):
        return B.float_select(tensor, self.dim, self.saved["indices"])

    def backward(self, B, grad, state):
        zeros = zeros_like(B, grad, self.shapes[0])
        return (B.float_select_assign(zeros, self.dim, state["indices"], grad),)


class SelectAssign(Gather):
    """``tensor`` with ``value`` added into the slices ``indices``: ``tensor`` gets the whole
    gradient, ``value`` the selected slices of it."""

    memory_bound = True  # burn: .memory_bound()

    def forward(self, B, tensor, value):
        return B.float_select_assign(tensor, self.dim, self.saved["indices"], value)

    def backward(self, B, grad, state):
        d_value = B.float_select(grad, self.dim, state["indices"]) if self.tracked[1] else None
        return grad, d_value


class MaskWhere(Step):
    """``value`` where ``mask`` is true, else ``tensor``: each gets the gradient of the
    positions it supplied, summed back to its shape. Keeps the mask."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, mask):
        super().__init__(mask=mask)

    def forward(self, B, tensor, value):
        return B.float_mask_where(tensor, self.saved["mask"], value)

    def backward(self, B, grad, state):
        mask = state["mask"]
        d_tensor = d_value = None
        if self.tracked[0]:
            d_tensor = sum_to_shape(B, B.float_mask_fill(grad, mask, 0.0), self.shapes[0])
        if self.tracked[1]:
            d_value = sum_to_shape(B, B.float_mask_fill(grad, B.bool_not(mask), 0.0), self.shapes[1])
        return d_tensor, d_value


class MaskFill(Step):
    """The scalar ``value`` where ``mask`` is true: the gradient is zero there. Keeps the mask."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, mask, value: float):
        super().__init__(mask=mask)
        self.value = value

    def forward(self, B, tensor):
        return B.float_mask_fill(tensor, self.saved["mask"], self.value)

    def backward(self, B, grad, state):
        return (sum_to_shape(B, B.float_mask_fill(grad, state["mask"], 0.0), self.shapes[0]),)


class AutodiffLayoutOps(AutodiffOpsBase):
    """Layout and indexing ops of ``Autodiff[B]``."""

    # ----- layout -----------------------------------------------------------------------
    @classmethod
    def float_reshape(cls, tensor, shape):
        return record(cls, Reshape(shape), tensor)

    @classmethod
    def float_swap_dims(cls, tensor, dim1, dim2):
        return record(cls, SwapDims(dim1, dim2), tensor)

    @classmethod
    def float_permute(cls, tensor, axes):
        return record(cls, Permute(axes), tensor)

    @classmethod
    def float_flip(cls, tensor, axes):
        return record(cls, Flip(axes), tensor)

    @classmethod
    def float_expand(cls, tensor, shape):
        return record(cls, Expand(shape), tensor)

    @classmethod
    def float_slice(cls, tensor, slices):
        return record(cls, Slice(slices), tensor)

    @classmethod
    def float_slice_assign(cls, tensor, slices, value):
        return record(cls, SliceAssign(slices), tensor, value)

    @classmethod
    def float_cat(cls, tensors, dim):
        return record(cls, Cat(dim), *tensors)

    # ----- indexing (indices and masks are inner primitives) ----------------------------
    @classmethod
    def float_gather(cls, dim, tensor, indices):
        return record(cls, Gather(dim, prim(indices)), tensor)

    @classmethod
    def float_scatter(cls, dim, tensor, indices, value):
        return record(cls, Scatter(dim, prim(indices)), tensor, value)

    @classmethod
    def float_select(cls, tensor, dim, indices):
        return record(cls, Select(dim, prim(indices)), tensor)

    @classmethod
    def float_select_assign(cls, tensor, dim, indices, value):
        return record(cls, SelectAssign(dim, prim(indices)), tensor, value)

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        return record(cls, MaskWhere(prim(mask)), tensor, value)

    @classmethod
    def float_mask_fill(cls, tensor, mask, value):
        return record(cls, MaskFill(prim(mask), value), tensor)
