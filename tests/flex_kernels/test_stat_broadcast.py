"""BatchNorm's small shapes on their kernel-side fast paths (issue 38): a statistic on the
right of a binary op (a column or a per-channel value) decided inside ``binary_same_shape``,
and sums/means over a dim followed only by 1s, each checked bit for bit against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex.kernels import elementwise as ew
from minidl.backends.flex.kernels import reduce as R
from minidl.backends.flex.kernels.binops import ADD, DIV, MAXIMUM, MUL, SUB
from minidl.backends.flex.kernels.broadcast_rows import stat_broadcast

OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
       "maximum": np.maximum}  # fmt: skip
CODES = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "maximum": MAXIMUM}

# (a's shape, the statistic's shape): BatchNorm2d's per-channel [1, C, 1, 1], its means over
# the trailing dims ([N, C, 1, 1], [N, C, H, 1]) and a plain column [m, 1]
STATS = [((32, 8, 8, 8), (1, 8, 1, 1)), ((32, 8, 8, 8), (32, 8, 1, 1)),
         ((32, 8, 8, 8), (32, 8, 8, 1)), ((5, 7), (5, 1)), ((2, 3, 1, 1), (1, 3, 1, 1))]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shapes", STATS, ids=str)
def test_statistic_on_the_right_matches_numpy_bit_for_bit(shapes, op, dtype):
    if dtype is np.int32 and op == "div":
        pytest.skip("integer division: burn's truncation, tested with the int ops")
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shapes[0]) * 10).astype(dtype)
    b = (rng.standard_normal(shapes[1]) * 10).astype(dtype)
    if op == "div":
        b[b == 0] = 1
    out = np.empty_like(a)
    assert stat_broadcast(a, b, out, CODES[op])  # taken by the kernel, not Python
    np.testing.assert_array_equal(out, OPS[op](a, b))
    np.testing.assert_array_equal(ew.binary(op, a, b), OPS[op](a, b))  # the path binary takes


@pytest.mark.parametrize("shapes", [((4, 3), (1, 3)), ((32, 8, 8, 8), (1, 1, 1, 8)),
                                    ((4, 3), (4, 3, 1)), ((6, 4, 2, 2), (1, 4, 2, 1))], ids=str)
def test_other_broadcasts_fall_through_computing_nothing(shapes):
    # a row (a bias [1, n]) stays on small_broadcast's path, the one the book's kernel traces
    # show; other shapes too: False, and `out` untouched
    a = np.ones(shapes[0], np.float32)
    b = np.ones(shapes[1], np.float32)
    out = np.full(shapes[0], 7.0, np.float32)
    assert not stat_broadcast(a, b, out, ADD)
    assert (out == 7.0).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((32, 8, 8, 1), 2), ((32, 8, 1, 1), 0), ((2048, 8), 1),
                                       ((512, 4), 1), ((128, 10), 1), ((32, 8, 8, 8), 3)])
def test_small_sums_and_means_match_numpy(shape, dim, dtype):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    tol = 1e-6 if dtype is np.float32 else 1e-13
    np.testing.assert_allclose(R.sum(x, dim), x.sum(dim, keepdims=True), rtol=tol, atol=tol)
    np.testing.assert_allclose(R.mean(x, dim), x.mean(dim, keepdims=True), rtol=tol, atol=tol)
    assert R.mean(x, dim).dtype == dtype
