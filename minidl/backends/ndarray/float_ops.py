"""NdArray's float ops in plain NumPy: the readable reference for every float op of the protocol
(burn-ndarray's ``ops/tensor.rs``).

Each op is one short NumPy expression. Two helpers carry the dtype rules: :func:`compute` lifts
float16 to float32 (NumPy's own float16 kernels accumulate in float16, so a sum of 70 000 ones
overflows), and :func:`like` casts a result back to the dtype the op must return.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from minidl.backend import Distribution, DType
from minidl.backend.limits import check_cat, check_size
from minidl.backends.cpu_common import (
    INDEX_DTYPE,
    gather,
    nonempty_dim,
    scatter_add,
    select,
    select_add,
    slice_assign,
    whole,
)

Shape = tuple[int, ...]


def compute(tensor: np.ndarray) -> np.ndarray:
    """``tensor`` in the dtype arithmetic runs in: float16 → float32, others unchanged."""
    return tensor.astype(np.float32) if tensor.dtype == np.float16 else tensor


def like(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``result`` cast (without a copy when it already matches) to ``dtype``."""
    return np.asarray(result).astype(dtype, copy=False)


def _unary(fn, tensor: np.ndarray) -> np.ndarray:
    # NaN and inf are values like any other here (torch does not warn about log(0) either)
    with np.errstate(all="ignore"):
        return like(fn(compute(tensor)), tensor.dtype)


def _binary(fn, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    # NumPy broadcasting; the result takes lhs's dtype (the protocol's rule)
    with np.errstate(all="ignore"):
        return like(fn(compute(lhs), compute(rhs)), lhs.dtype)


# NumPy has no erf; Python's math.erf, element by element, is slow but correctly rounded, which
# is what a reference backend wants (Flex computes it in a numba kernel).
_erf = np.frompyfunc(math.erf, 1, 1)


class NdArrayFloatOps:
    """Float tensor ops of the NdArray backend. Scalar forms, ``neg``, ``mean``, clamps and the
    other default methods of ``FloatTensorOps`` are inherited from the protocol, as in burn; the
    pure layout ops (views) come from ``CpuViewOps``."""

    # ----- creation and conversion --------------------------------------------------------
    @classmethod
    def float_random(cls, shape: Shape, distribution: Distribution, dtype: DType, device):
        """Samples from the device's PCG64 stream (see ``CpuHostOps.generator``), drawn in float64
        and cast to ``dtype``."""
        check_size("float_random", shape, dtype.numpy)
        rng, shape = cls.generator(device), tuple(shape)
        if distribution.name == "uniform":
            low, high = distribution.a, distribution.b
            sample = like(rng.uniform(low, high, shape), dtype.numpy)
            # rounding to a narrower dtype can land on `high`: keep the interval half-open
            return np.minimum(sample, np.nextafter(dtype.numpy.type(high), dtype.numpy.type(low)))
        if distribution.name == "normal":
            return like(rng.normal(distribution.a, distribution.b, shape), dtype.numpy)
        if distribution.name == "bernoulli":
            return like(rng.random(shape) < distribution.a, dtype.numpy)
        raise ValueError(f"float_random: unknown distribution {distribution.name!r}")

    @classmethod
    def float_cast(cls, tensor, dtype: DType):
        return tensor.astype(dtype.numpy)

    @classmethod
    def float_into_int(cls, tensor, dtype: DType):
        """Truncation toward zero (what ``astype`` does, as Rust's ``as``)."""
        return tensor.astype(dtype.numpy)

    # ----- element-wise arithmetic --------------------------------------------------------
    @classmethod
    def float_add(cls, lhs, rhs):
        return _binary(np.add, lhs, rhs)

    @classmethod
    def float_sub(cls, lhs, rhs):
        return _binary(np.subtract, lhs, rhs)

    @classmethod
    def float_mul(cls, lhs, rhs):
        return _binary(np.multiply, lhs, rhs)

    @classmethod
    def float_div(cls, lhs, rhs):
        return _binary(np.divide, lhs, rhs)

    @classmethod
    def float_powf(cls, lhs, rhs):
        return _binary(np.power, lhs, rhs)

    # ----- unary math ---------------------------------------------------------------------
    @classmethod
    def float_exp(cls, tensor):
        return _unary(np.exp, tensor)

    @classmethod
    def float_log(cls, tensor):
        return _unary(np.log, tensor)

    @classmethod
    def float_sqrt(cls, tensor):
        return _unary(np.sqrt, tensor)

    @classmethod
    def float_abs(cls, tensor):
        return np.abs(tensor)

    @classmethod
    def float_tanh(cls, tensor):
        return _unary(np.tanh, tensor)

    @classmethod
    def float_sin(cls, tensor):
        return _unary(np.sin, tensor)

    @classmethod
    def float_cos(cls, tensor):
        return _unary(np.cos, tensor)

    @classmethod
    def float_erf(cls, tensor):
        return like(_erf(tensor.astype(np.float64)).astype(np.float64), tensor.dtype)

    @classmethod
    def float_floor(cls, tensor):
        return np.floor(tensor)

    # ----- comparisons → bool primitives ----------------------------------------------------
    @classmethod
    def float_equal(cls, lhs, rhs):
        return np.equal(lhs, rhs)

    @classmethod
    def float_greater(cls, lhs, rhs):
        return np.greater(lhs, rhs)

    @classmethod
    def float_lower(cls, lhs, rhs):
        return np.less(lhs, rhs)

    # ----- matmul -------------------------------------------------------------------------
    @classmethod
    def float_matmul(cls, lhs, rhs):
        """``np.matmul``: the last two dims multiply, the leading (batch) dims broadcast."""
        return _binary(np.matmul, lhs, rhs)

    # ----- reductions (the reduced dim stays, with size 1) ----------------------------------
    @classmethod
    def float_sum(cls, tensor):
        return whole(np.sum(compute(tensor)), tensor.dtype)

    @classmethod
    def float_sum_dim(cls, tensor, dim: int):
        with np.errstate(all="ignore"):
            return like(np.sum(compute(tensor), axis=dim, keepdims=True), tensor.dtype)

    @classmethod
    def float_max_dim(cls, tensor, dim: int):
        nonempty_dim("float_max_dim", tensor, dim)
        return np.max(tensor, axis=dim, keepdims=True)

    @classmethod
    def float_min_dim(cls, tensor, dim: int):
        nonempty_dim("float_min_dim", tensor, dim)
        return np.min(tensor, axis=dim, keepdims=True)

    @classmethod
    def float_argmax(cls, tensor, dim: int):
        nonempty_dim("float_argmax", tensor, dim)
        return np.argmax(tensor, axis=dim, keepdims=True).astype(INDEX_DTYPE, copy=False)

    @classmethod
    def float_argmin(cls, tensor, dim: int):
        nonempty_dim("float_argmin", tensor, dim)
        return np.argmin(tensor, axis=dim, keepdims=True).astype(INDEX_DTYPE, copy=False)

    # ----- layout that moves elements (the views are CpuViewOps', shared with Flex) ------------
    @classmethod
    def float_slice_assign(cls, tensor, slices: Sequence[slice], value):
        return slice_assign(tensor, slices, value)

    @classmethod
    def float_cat(cls, tensors: Sequence, dim: int):
        check_cat("float_cat", tensors, dim)
        return like(np.concatenate(list(tensors), axis=dim), tensors[0].dtype)

    @classmethod
    def float_gather(cls, dim: int, tensor, indices):
        return gather(dim, tensor, indices, "float_gather")

    @classmethod
    def float_scatter(cls, dim: int, tensor, indices, value):
        return like(scatter_add(dim, compute(tensor), indices, compute(value), "float_scatter"), tensor.dtype)

    @classmethod
    def float_select(cls, tensor, dim: int, indices):
        return select(tensor, dim, indices, "float_select")

    @classmethod
    def float_select_assign(cls, tensor, dim: int, indices, value):
        return like(select_add(compute(tensor), dim, indices, compute(value), "float_select_assign"), tensor.dtype)

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        return like(np.where(mask, value, tensor), tensor.dtype)

    @classmethod
    def float_mask_fill(cls, tensor, mask, value: float):
        return like(np.where(mask, value, tensor), tensor.dtype)
