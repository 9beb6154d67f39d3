"""``FloatTensorOps``: the float tensor ops of the backend protocol (burn-backend ``ops/tensor.rs``).

Required ops are the ones a backend must write; the rest are default methods built from other
ops of the same backend ``cls``. Every op takes and returns the backend's primitives.
Shapes are tuples of ints; ``dim`` is a non-negative axis (the Tensor layer normalizes it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backend.base import TensorData, default, required
from minidl.backend.distribution import Distribution
from minidl.backend.dtype import DType
from minidl.backend.limits import check_size, repeat_shapes

Shape = tuple[int, ...]


class FloatTensorOps:
    """Float tensor ops. ``lhs``/``rhs``/``tensor`` are float primitives of the backend."""

    # ----- creation and data -------------------------------------------------------------
    @required
    def float_from_data(cls, data: np.ndarray, device):
        """A float primitive holding a copy of ``data`` (already a float NumPy array)."""

    @required
    def float_into_data(cls, tensor) -> TensorData:
        """Read a float primitive back to the host, as an array of its own (a copy the caller
        may write to: ``Tensor.to_numpy`` hands it out as is)."""

    @required
    def float_random(cls, shape: Shape, distribution: Distribution, dtype: DType, device):
        """A tensor sampled from ``distribution`` with the device's seeded generator."""

    @required
    def seed(cls, device, seed: int) -> None:
        """Restart the random stream of ``device`` (burn's ``B::seed``)."""

    @default
    def float_zeros(cls, shape: Shape, dtype: DType, device):
        check_size("float_zeros", shape, dtype.numpy)
        return cls.float_full(shape, 0.0, dtype, device)

    @default
    def float_ones(cls, shape: Shape, dtype: DType, device):
        check_size("float_ones", shape, dtype.numpy)
        return cls.float_full(shape, 1.0, dtype, device)

    @default
    def float_full(cls, shape: Shape, fill_value: float, dtype: DType, device):
        check_size("float_full", shape, dtype.numpy)
        return cls.float_from_data(np.full(shape, fill_value, dtype=dtype.numpy), device)

    @required
    def float_device(cls, tensor):
        """The device a primitive lives on."""

    @required
    def float_to_device(cls, tensor, device):
        """Move a primitive to another device of the same backend."""

    @required
    def float_cast(cls, tensor, dtype: DType):
        """Convert to another float dtype."""

    @required
    def float_into_int(cls, tensor, dtype: DType):
        """Truncate to an int primitive."""

    # ----- autodiff hooks (no-ops on a backend without autodiff) -------------------------
    @default
    def float_detach(cls, tensor):
        return tensor

    @default
    def float_require_grad(cls, tensor):
        return tensor

    @default
    def float_set_require_grad(cls, tensor, require_grad: bool):
        return tensor

    @default
    def float_is_require_grad(cls, tensor) -> bool:
        return False

    # ----- element-wise arithmetic (broadcasting) -----------------------------------------
    @required
    def float_add(cls, lhs, rhs):
        """``lhs + rhs`` with NumPy broadcasting."""

    @required
    def float_sub(cls, lhs, rhs):
        """``lhs - rhs``."""

    @required
    def float_mul(cls, lhs, rhs):
        """``lhs * rhs``."""

    @required
    def float_div(cls, lhs, rhs):
        """``lhs / rhs``."""

    @required
    def float_powf(cls, lhs, rhs):
        """``lhs ** rhs`` element-wise."""

    @default
    def float_add_scalar(cls, lhs, rhs: float):
        return cls.float_add(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_sub_scalar(cls, lhs, rhs: float):
        return cls.float_sub(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_mul_scalar(cls, lhs, rhs: float):
        return cls.float_mul(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_div_scalar(cls, lhs, rhs: float):
        return cls.float_div(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_powf_scalar(cls, lhs, rhs: float):
        # torch computes x ** 0.5 as sqrt(x) and x ** -0.5 as 1 / sqrt(x): they differ from C's
        # pow at -inf (sqrt gives NaN, pow inf) and at -0.0 (sqrt keeps the sign)
        if rhs == 0.5:
            return cls.float_sqrt(lhs)
        if rhs == -0.5:
            return cls.float_recip(cls.float_sqrt(lhs))
        return cls.float_powf(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_remainder_scalar(cls, lhs, rhs: float):
        # a - floor(a / b) * b, Python's sign convention (as burn and torch.remainder)
        quotient = cls.float_floor(cls.float_div_scalar(lhs, rhs))
        return cls.float_sub(lhs, cls.float_mul_scalar(quotient, rhs))

    @default
    def float_neg(cls, tensor):
        return cls.float_mul_scalar(tensor, -1.0)

    @default
    def float_recip(cls, tensor):
        return cls.float_div(cls._scalar_like(tensor, 1.0), tensor)

    @default
    def float_max_pair(cls, lhs, rhs):
        # take rhs where it is larger or NaN: a NaN on either side wins (torch.maximum)
        return cls.float_mask_where(lhs, cls.bool_or(cls.float_lower(lhs, rhs), _is_nan(cls, rhs)), rhs)

    @default
    def float_min_pair(cls, lhs, rhs):
        return cls.float_mask_where(lhs, cls.bool_or(cls.float_greater(lhs, rhs), _is_nan(cls, rhs)), rhs)

    @default
    def float_clamp_min(cls, tensor, min: float):
        return cls.float_mask_fill(tensor, cls.float_lower_elem(tensor, min), min)

    @default
    def float_clamp_max(cls, tensor, max: float):
        return cls.float_mask_fill(tensor, cls.float_greater_elem(tensor, max), max)

    @default
    def float_clamp(cls, tensor, min: float, max: float):
        return cls.float_clamp_max(cls.float_clamp_min(tensor, min), max)

    @classmethod
    def _scalar_like(cls, tensor, value: float):
        """A shape-[1]*rank tensor holding ``value`` on ``tensor``'s device and dtype."""
        rank = len(tensor.shape)
        dtype = DType.of(tensor.dtype)
        return cls.float_full((1,) * rank, value, dtype, cls.float_device(tensor))

    # ----- unary math ---------------------------------------------------------------------
    @required
    def float_exp(cls, tensor):
        """``e ** x``."""

    @required
    def float_log(cls, tensor):
        """Natural logarithm."""

    @default
    def float_log1p(cls, tensor):
        return cls.float_log(cls.float_add_scalar(tensor, 1.0))

    @required
    def float_sqrt(cls, tensor):
        """Square root."""

    @required
    def float_abs(cls, tensor):
        """Absolute value."""

    @required
    def float_tanh(cls, tensor):
        """Hyperbolic tangent."""

    @required
    def float_sin(cls, tensor):
        """Sine."""

    @required
    def float_cos(cls, tensor):
        """Cosine."""

    @required
    def float_erf(cls, tensor):
        """The error function (used by the exact GELU)."""

    @required
    def float_floor(cls, tensor):
        """Round down."""

    @default
    def float_sign(cls, tensor):
        dtype = DType.of(tensor.dtype)  # keep the input's float dtype (not bool_into_float's F32)
        pos = cls.bool_into_float(cls.float_greater_elem(tensor, 0.0), dtype)
        neg = cls.bool_into_float(cls.float_lower_elem(tensor, 0.0), dtype)
        return cls.float_sub(pos, neg)

    # ----- comparisons (return bool primitives) -------------------------------------------
    @required
    def float_equal(cls, lhs, rhs):
        """``lhs == rhs`` element-wise, broadcasting."""

    @required
    def float_greater(cls, lhs, rhs):
        """``lhs > rhs``."""

    @required
    def float_lower(cls, lhs, rhs):
        """``lhs < rhs``."""

    @default
    def float_not_equal(cls, lhs, rhs):
        return cls.bool_not(cls.float_equal(lhs, rhs))

    @default
    def float_greater_equal(cls, lhs, rhs):
        # not ``not(lhs < rhs)``: with a NaN both are false, and so must ``>=`` be
        return cls.bool_or(cls.float_greater(lhs, rhs), cls.float_equal(lhs, rhs))

    @default
    def float_lower_equal(cls, lhs, rhs):
        return cls.bool_or(cls.float_lower(lhs, rhs), cls.float_equal(lhs, rhs))

    @default
    def float_equal_elem(cls, lhs, rhs: float):
        return cls.float_equal(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_not_equal_elem(cls, lhs, rhs: float):
        return cls.bool_not(cls.float_equal_elem(lhs, rhs))

    @default
    def float_greater_elem(cls, lhs, rhs: float):
        return cls.float_greater(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_greater_equal_elem(cls, lhs, rhs: float):
        return cls.bool_or(cls.float_greater_elem(lhs, rhs), cls.float_equal_elem(lhs, rhs))

    @default
    def float_lower_elem(cls, lhs, rhs: float):
        return cls.float_lower(lhs, cls._scalar_like(lhs, rhs))

    @default
    def float_lower_equal_elem(cls, lhs, rhs: float):
        return cls.bool_or(cls.float_lower_elem(lhs, rhs), cls.float_equal_elem(lhs, rhs))

    # ----- matmul -------------------------------------------------------------------------
    @required
    def float_matmul(cls, lhs, rhs):
        """Batched matrix product over the last two dims; batch dims broadcast."""

    # ----- reductions ---------------------------------------------------------------------
    @required
    def float_sum(cls, tensor):
        """Sum of all elements, shape ``[1]``."""

    @required
    def float_sum_dim(cls, tensor, dim: int):
        """Sum along ``dim``, keeping it with size 1 (as burn does)."""

    @default
    def float_mean(cls, tensor):
        n = int(np.prod(tensor.shape))
        return cls.float_div_scalar(cls.float_sum(tensor), float(n))

    @default
    def float_mean_dim(cls, tensor, dim: int):
        return cls.float_div_scalar(cls.float_sum_dim(tensor, dim), float(tensor.shape[dim]))

    @default
    def float_prod(cls, tensor):
        flat = cls.float_reshape(tensor, (int(np.prod(tensor.shape)),))
        return cls.float_prod_dim(flat, 0)

    @default
    def float_prod_dim(cls, tensor, dim: int):
        # one multiply per slice along `dim`, in order: exact, and right for negative values,
        # zeros and NaN (exp(sum(log x)) is NaN for any negative x)
        shape = tuple(tensor.shape)
        out = cls.float_full(shape[:dim] + (1,) + shape[dim + 1 :], 1.0, DType.of(tensor.dtype),
                             cls.float_device(tensor))
        for i in range(shape[dim]):
            part = cls.float_slice(tensor, [slice(None)] * dim + [slice(i, i + 1)])
            out = cls.float_mul(out, part)
        return out

    @required
    def float_max_dim(cls, tensor, dim: int):
        """Maximum along ``dim``, kept with size 1."""

    @required
    def float_min_dim(cls, tensor, dim: int):
        """Minimum along ``dim``, kept with size 1."""

    @required
    def float_argmax(cls, tensor, dim: int):
        """Index (int primitive) of the maximum along ``dim``, kept with size 1."""

    @required
    def float_argmin(cls, tensor, dim: int):
        """Index of the minimum along ``dim``, kept with size 1."""

    @default
    def float_max(cls, tensor):
        flat = cls.float_reshape(tensor, (int(np.prod(tensor.shape)),))
        return cls.float_max_dim(flat, 0)

    @default
    def float_min(cls, tensor):
        flat = cls.float_reshape(tensor, (int(np.prod(tensor.shape)),))
        return cls.float_min_dim(flat, 0)

    @default
    def float_max_dim_with_indices(cls, tensor, dim: int):
        return cls.float_max_dim(tensor, dim), cls.float_argmax(tensor, dim)

    @default
    def float_min_dim_with_indices(cls, tensor, dim: int):
        return cls.float_min_dim(tensor, dim), cls.float_argmin(tensor, dim)

    # ----- layout -------------------------------------------------------------------------
    @required
    def float_reshape(cls, tensor, shape: Shape):
        """Same elements, new shape (row-major order)."""

    @required
    def float_swap_dims(cls, tensor, dim1: int, dim2: int):
        """Exchange two axes."""

    @required
    def float_permute(cls, tensor, axes: Sequence[int]):
        """Reorder axes."""

    @required
    def float_flip(cls, tensor, axes: Sequence[int]):
        """Reverse the order of elements along ``axes``."""

    @required
    def float_expand(cls, tensor, shape: Shape):
        """Broadcast to ``shape`` (size-1 dims grow, new leading dims appear)."""

    @required
    def float_slice(cls, tensor, slices: Sequence[slice]):
        """A sub-tensor: one Python ``slice`` per leading dim (steps allowed, > 0)."""

    @required
    def float_slice_assign(cls, tensor, slices: Sequence[slice], value):
        """A copy of ``tensor`` with the region ``slices`` replaced by ``value``."""

    @required
    def float_cat(cls, tensors: Sequence, dim: int):
        """Concatenate along ``dim``."""

    @required
    def float_gather(cls, dim: int, tensor, indices):
        """``out[i][j] = tensor[i][indices[i][j]]`` along ``dim`` (torch.gather)."""

    @required
    def float_scatter(cls, dim: int, tensor, indices, value):
        """A copy of ``tensor`` with ``value`` *added* at ``indices`` along ``dim`` (burn's scatter sums)."""

    @required
    def float_select(cls, tensor, dim: int, indices):
        """Pick whole slices along ``dim`` by a 1-D int ``indices`` (index_select)."""

    @required
    def float_select_assign(cls, tensor, dim: int, indices, value):
        """A copy of ``tensor`` with ``value`` added into the slices ``indices`` along ``dim``."""

    @required
    def float_mask_where(cls, tensor, mask, value):
        """Where ``mask`` is true take ``value``, else ``tensor`` (broadcasting)."""

    @required
    def float_mask_fill(cls, tensor, mask, value: float):
        """Where ``mask`` is true put the scalar ``value``."""

    @default
    def float_repeat_dim(cls, tensor, dim: int, times: int):
        # one copy, not a cat of `times` copies: [.., n, ..] -> [.., 1, n, ..] expanded (a
        # stride-0 view) to [.., times, n, ..], reshaped (the one copy) to [.., times * n, ..]
        shapes = repeat_shapes("float_repeat_dim", tensor.shape, dim, times, tensor.dtype)
        return cls.float_reshape(cls.float_expand(cls.float_reshape(tensor, shapes[0]), shapes[1]), shapes[2])

    @default
    def float_transpose(cls, tensor):
        rank = len(tensor.shape)
        return cls.float_swap_dims(tensor, rank - 2, rank - 1)


def _is_nan(cls, tensor):
    """A bool primitive, true where ``tensor`` is NaN (the one value not equal to itself)."""
    return cls.float_not_equal(tensor, tensor)

