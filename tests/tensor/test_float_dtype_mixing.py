"""Two different float dtypes in one op are refused (minidl has no float type promotion; burn
0.22's burn-ir ``output_dtype`` refuses the mix, plain burn-flex only debug_asserts it), in either order,
naming both dtypes and saying to cast; the result never depends on the operands' order."""

from __future__ import annotations

import numpy as np
import pytest

import minidl
from minidl import Tensor, TensorKindError

from .support import T, randn

PAIRS = [(np.float32, np.float64), (np.float64, np.float32), (np.float16, np.float32), (np.float32, np.float16)]

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "remainder": lambda a, b: a % b, "powf": lambda a, b: a.powf(b),
    "max_pair": lambda a, b: a.max_pair(b), "min_pair": lambda a, b: a.min_pair(b),
    "equal": lambda a, b: a.equal(b), "greater": lambda a, b: a > b, "lower_equal": lambda a, b: a <= b,
    "matmul": lambda a, b: a.reshape((2, 2)) @ b.reshape((2, 2)),
    "mask_where": lambda a, b: a.mask_where(a > 0, b),
    "cat": lambda a, b: Tensor.cat([a, b], 0),
    "slice_assign": lambda a, b: a.slice_assign([slice(0, 4)], b),
    "select_assign": lambda a, b: a.select_assign(0, Tensor.from_data([0, 1, 2, 3], a.device), b),
    "scatter": lambda a, b: a.scatter(0, Tensor.from_data([0, 1, 2, 3], a.device), b),
}  # fmt: skip


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("lhs_dtype, rhs_dtype", PAIRS, ids=lambda d: np.dtype(d).name)
def test_two_float_dtypes_in_one_op_are_refused_naming_both(device, op, lhs_dtype, rhs_dtype):
    a, b = T(randn((4,), 1, lhs_dtype), device, lhs_dtype), T(randn((4,), 2, rhs_dtype), device, rhs_dtype)
    with pytest.raises(TensorKindError, match="no float type promotion") as err:
        BINARY[op](a, b)
    message = str(err.value)
    assert np.dtype(lhs_dtype).name in message and np.dtype(rhs_dtype).name in message, message
    assert "cast" in message
    BINARY[op](a, b.cast(minidl.DType.of(lhs_dtype)))  # the same dtype on both sides is fine


def test_scalars_and_same_dtypes_keep_the_tensors_dtype(device):
    for dtype in (np.float16, np.float32, np.float64):
        if not device.settings().supports(minidl.DType.of(dtype)):
            continue  # Device.wgpu() holds float32 only (its refusals: tests/gpu)
        a = T(randn((3,), 3, dtype), device, dtype)
        assert (a + a).dtype.numpy == dtype
        assert (a * 2.5).dtype.numpy == dtype
        assert (2.5 - a).dtype.numpy == dtype
