"""Flex's element-wise float ops: arithmetic with broadcasting (and the scalar forms),
unary math, comparisons, clamps, ``mask_where``/``mask_fill`` — each one call of a numba
kernel in :mod:`minidl.backends.flex.kernels.elementwise` (burn-flex's ``ops/tensor.rs``
element-wise section).

Flex also overrides several ``FloatTensorOps`` *defaults* (scalar forms, ``neg``, ``recip``,
``log1p``, the ``_elem`` comparisons, clamps, ``max_pair``): the default would build a scalar
tensor and run two or three kernels where one does (and ``log(x + 1)`` loses tiny ``x``).
Results take the dtype of ``lhs`` (the protocol's rule); when the kernel promoted (``lhs``
f32, ``rhs`` f64) the result is cast back.
"""

from __future__ import annotations

import math

import numpy as np

from minidl.backends.flex.kernels import elementwise as ew
from minidl.backends.flex.kernels.copy import cast, contiguous


def _like(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return out if out.dtype == dtype else cast(out, dtype)


def _unary(op: str, tensor: np.ndarray) -> np.ndarray:
    # the unary kernel runs over a flat contiguous array: a strided view is copied by numba
    return ew.unary(op, contiguous(tensor))


def _binary(op: str, lhs: np.ndarray, rhs) -> np.ndarray:
    return _like(ew.binary(op, lhs, rhs), lhs.dtype)


class FlexMathOps:
    """Element-wise float ops of Flex (kernels: ``binary``, ``unary``, ``compare``, ``where``,
    ``clamp``)."""

    # ----- arithmetic (NumPy broadcasting; a Python scalar takes lhs's dtype) ----------------
    @classmethod
    def float_add(cls, lhs, rhs):
        return _binary("add", lhs, rhs)

    @classmethod
    def float_sub(cls, lhs, rhs):
        return _binary("sub", lhs, rhs)

    @classmethod
    def float_mul(cls, lhs, rhs):
        return _binary("mul", lhs, rhs)

    @classmethod
    def float_div(cls, lhs, rhs):
        return _binary("div", lhs, rhs)

    @classmethod
    def float_powf(cls, lhs, rhs):
        return _binary("pow", lhs, rhs)

    @classmethod
    def float_add_scalar(cls, lhs, rhs: float):
        return ew.binary("add", lhs, float(rhs))

    @classmethod
    def float_sub_scalar(cls, lhs, rhs: float):
        return ew.binary("sub", lhs, float(rhs))

    @classmethod
    def float_mul_scalar(cls, lhs, rhs: float):
        return ew.binary("mul", lhs, float(rhs))

    @classmethod
    def float_div_scalar(cls, lhs, rhs: float):
        return ew.binary("div", lhs, float(rhs))

    @classmethod
    def float_powf_scalar(cls, lhs, rhs: float):
        return ew.binary("pow", lhs, float(rhs))

    @classmethod
    def float_max_pair(cls, lhs, rhs):
        """NaN-propagating maximum (torch.maximum)."""
        return _binary("maximum", lhs, rhs)

    @classmethod
    def float_min_pair(cls, lhs, rhs):
        """NaN-propagating minimum (torch.minimum)."""
        return _binary("minimum", lhs, rhs)

    @classmethod
    def float_clamp_min(cls, tensor, min: float):
        return ew.clamp(tensor, float(min), math.inf)

    @classmethod
    def float_clamp_max(cls, tensor, max: float):
        return ew.clamp(tensor, -math.inf, float(max))

    @classmethod
    def float_clamp(cls, tensor, min: float, max: float):
        return ew.clamp(tensor, float(min), float(max))

    # ----- unary math --------------------------------------------------------------------------
    @classmethod
    def float_neg(cls, tensor):
        return _unary("neg", tensor)

    @classmethod
    def float_recip(cls, tensor):
        return _unary("recip", tensor)

    @classmethod
    def float_exp(cls, tensor):
        return _unary("exp", tensor)

    @classmethod
    def float_log(cls, tensor):
        return _unary("log", tensor)

    @classmethod
    def float_log1p(cls, tensor):
        """``log(1 + x)`` accurate for tiny ``x`` (the default, ``log(x + 1)``, rounds ``1 + x``)."""
        return _unary("log1p", tensor)

    @classmethod
    def float_sqrt(cls, tensor):
        return _unary("sqrt", tensor)

    @classmethod
    def float_abs(cls, tensor):
        return _unary("abs", tensor)

    @classmethod
    def float_tanh(cls, tensor):
        return _unary("tanh", tensor)

    @classmethod
    def float_sin(cls, tensor):
        return _unary("sin", tensor)

    @classmethod
    def float_cos(cls, tensor):
        return _unary("cos", tensor)

    @classmethod
    def float_erf(cls, tensor):
        return _unary("erf", tensor)

    @classmethod
    def float_floor(cls, tensor):
        return _unary("floor", tensor)

    # ----- comparisons → bool primitives --------------------------------------------------------
    @classmethod
    def float_equal(cls, lhs, rhs):
        return ew.compare("eq", lhs, rhs)

    @classmethod
    def float_not_equal(cls, lhs, rhs):
        return ew.compare("ne", lhs, rhs)

    @classmethod
    def float_greater(cls, lhs, rhs):
        return ew.compare("gt", lhs, rhs)

    @classmethod
    def float_greater_equal(cls, lhs, rhs):
        return ew.compare("ge", lhs, rhs)

    @classmethod
    def float_lower(cls, lhs, rhs):
        return ew.compare("lt", lhs, rhs)

    @classmethod
    def float_lower_equal(cls, lhs, rhs):
        return ew.compare("le", lhs, rhs)

    @classmethod
    def float_equal_elem(cls, lhs, rhs: float):
        return ew.compare("eq", lhs, float(rhs))

    @classmethod
    def float_not_equal_elem(cls, lhs, rhs: float):
        return ew.compare("ne", lhs, float(rhs))

    @classmethod
    def float_greater_elem(cls, lhs, rhs: float):
        return ew.compare("gt", lhs, float(rhs))

    @classmethod
    def float_greater_equal_elem(cls, lhs, rhs: float):
        return ew.compare("ge", lhs, float(rhs))

    @classmethod
    def float_lower_elem(cls, lhs, rhs: float):
        return ew.compare("lt", lhs, float(rhs))

    @classmethod
    def float_lower_equal_elem(cls, lhs, rhs: float):
        return ew.compare("le", lhs, float(rhs))

    # ----- masks -------------------------------------------------------------------------------
    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        return _like(ew.where(mask, value, tensor), tensor.dtype)

    @classmethod
    def float_mask_fill(cls, tensor, mask, value: float):
        return ew.where(mask, float(value), tensor)
