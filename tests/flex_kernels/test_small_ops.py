"""The short paths of Flex's small ops (the MLP step's: ReLU's backward, bias adds, short-row
max with indices, gather/scatter with one index per row, tiny fills and expands) against torch
and against the general paths they stand in for: same values, dtypes, NaN/inf/-0.0 and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.backends.flex import Flex
from minidl.backends.flex.kernels import unary as un

from .helpers import FLOATS

SPECIAL = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0, 1e-45, -1e-45], np.float32)


def _relu_grad_torch(output: np.ndarray, grad: np.ndarray) -> np.ndarray:
    # torch's threshold_backward: grad where output > 0 ... exactly: zero where output <= 0
    return torch.where(torch.from_numpy(output) <= 0, 0.0, torch.from_numpy(grad)).numpy()


def _default_relu_backward(output, grad):
    return Flex.float_mask_fill(grad, Flex.float_lower_equal_elem(output, 0.0), 0.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(0,), (9,), (3, 3), (128, 256), (300, 257)])  # 300x257: parallel
def test_relu_backward_one_pass_matches_the_default_and_torch(dtype, shape):
    rng = np.random.default_rng(1)
    n = int(np.prod(shape))
    output = np.resize(SPECIAL, n).astype(dtype)
    rng.shuffle(output)
    output = output.reshape(shape)
    grad = rng.standard_normal(shape).astype(dtype)
    grad.flat[: min(n, 4)] = [np.nan, np.inf, -0.0, -np.inf][: min(n, 4)]
    got = Flex.relu_backward(output, grad)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(got, _default_relu_backward(output, grad))
    np.testing.assert_array_equal(got, _relu_grad_torch(output, grad))
    # a NaN output lets the gradient through; -0.0 and 0 zero it (with +0.0)
    if n >= len(SPECIAL):
        o = SPECIAL.astype(dtype)
        g = np.full(o.shape, -3.0, dtype)
        r = Flex.relu_backward(o, g)
        np.testing.assert_array_equal(r, np.where(o <= 0, 0.0, -3.0).astype(dtype))
        assert not np.signbit(r[o <= 0]).any()


def test_relu_backward_other_layouts_and_dtypes_take_the_default():
    rng = np.random.default_rng(2)
    output = rng.standard_normal((8, 6)).astype(np.float32)
    grad = rng.standard_normal((8, 6)).astype(np.float32)
    for o, g in [(output.T, grad.T), (output[:, ::2], grad[:, ::2]), (output, grad[:1]),
                 (output.astype(np.float16), grad.astype(np.float16)), (output.astype(np.float64), grad)]:
        assert un.relu_backward(o, g) is None  # not the one-pass case
        got = Flex.relu_backward(o, g)
        np.testing.assert_array_equal(got, _default_relu_backward(o, g))
        assert got.dtype == g.dtype
