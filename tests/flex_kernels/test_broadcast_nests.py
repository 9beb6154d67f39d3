"""The binary kernel's row nests (one loop nest per broadcast pattern of the last dim) and the
reshape-only 3-D grouping of C-contiguous operands, against NumPy: every pattern (full rows,
a single value per row on either side or both), broadcasts along the first dims, ranks above
three, the serial and the parallel split (short rows in blocks, long rows in chunks), integer
division, NaN-propagating maximum, and stride-0 rows that reach the kernel as views."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex.kernels import broadcast as bc
from minidl.backends.flex.kernels import operands

PAIRS = [
    ((2, 3, 4, 5), (1, 3, 1, 1)),  # NCHW + per-channel bias: full rows, one value per row
    ((1, 3, 1, 1), (2, 3, 4, 5)),  # the bias on the left
    ((2, 3, 4, 5), (2, 1, 4, 5)),  # full rows broadcast along dim 1
    ((2, 3, 4, 5), (1, 1, 1, 5)),  # a row broadcast over everything
    ((2, 3, 4, 5), (1, 1, 1, 1)),  # one value
    ((2, 3, 4, 1), (1, 3, 1, 1)),  # both a single value per row
    ((2, 3, 4, 5), (2, 1, 4, 1)),  # four groups: the general path
    ((3, 2, 5, 7, 3), (1, 2, 1, 1, 1)),  # five dims, odd sizes
    ((5, 7, 9), (5, 1, 9)),  # three dims, padded path
    ((4, 64, 16, 16), (1, 64, 1, 1)),  # parallel, short rows in blocks
    ((2, 3, 9000), (2, 3, 1)),  # parallel, rows longer than a chunk
    ((1, 70000, 1), (1, 1, 1)),  # parallel, single-value rows
]


def _operands(sa, sb, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-50, 50, sa).astype(dtype)
        b = rng.integers(1, 9, sb).astype(dtype) * rng.choice([-1, 1], sb).astype(dtype)
        return a, b
    return rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)


@pytest.mark.parametrize("sa, sb", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_binary_of_every_pattern_matches_numpy(sa, sb, op, dtype):
    a, b = _operands(sa, sb, dtype)
    want = getattr(np, {"div": "divide", "sub": "subtract", "mul": "multiply"}.get(op, op))(a, b)
    out = bc.binary(op, a, b)
    assert out.dtype == dtype and out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-6 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("sa, sb", PAIRS[:8], ids=[f"{a}-{b}" for a, b in PAIRS[:8]])
def test_int_division_truncates_in_every_pattern(sa, sb):
    a, b = _operands(sa, sb, np.int64)
    want = np.trunc(a / b).astype(np.int64)
    np.testing.assert_array_equal(bc.binary("div", a, b), want)
    np.testing.assert_array_equal(bc.binary("sub", b, a), b - a)


def test_maximum_propagates_nan_through_the_nests():
    a = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((1, 3, 1, 1)).astype(np.float32)
    a[0, 1, 2, 3] = np.nan
    b[0, 2, 0, 0] = np.nan
    for x, y in ((a, b), (b, a)):
        np.testing.assert_array_equal(bc.binary("maximum", x, y), np.maximum(x, y))
        np.testing.assert_array_equal(bc.binary("minimum", x, y), np.minimum(x, y))


@pytest.mark.parametrize("n", [1, 5, 300])
def test_stride_zero_rows_and_strided_operands(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((3, 4, n)).astype(np.float32)
    col = np.broadcast_to(rng.standard_normal((3, 4, 1)).astype(np.float32), (3, 4, n))  # stride 0
    np.testing.assert_allclose(bc.binary("sub", a, col), a - col, rtol=1e-6)
    np.testing.assert_allclose(bc.binary("sub", col, a), col - a, rtol=1e-6)
    wide = rng.standard_normal((3, 4, 2 * n)).astype(np.float32)[..., ::2]  # strided rows
    np.testing.assert_allclose(bc.binary("mul", wide, a[:1]), wide * a[:1], rtol=1e-6)
    out = np.empty((3, 4, n), np.float32)
    bc.binary_serial(col, col, out, bc.ADD)  # both rows one value, the last dim n long
    np.testing.assert_allclose(out, col + col, rtol=1e-6)


@pytest.mark.parametrize("shape, shapes, want3, want", [
    ((2, 3, 4, 5), [(2, 3, 4, 5), (1, 3, 1, 1)], (2, 3, 20), [(2, 3, 20), (1, 3, 1)]),
    ((2, 3, 4, 5), [(2, 3, 4, 5), (3, 4, 5)], (1, 2, 60), [(1, 2, 60), (1, 1, 60)]),
    ((6, 1, 4, 5), [(1, 1, 4, 5), (6, 1, 1, 1)], (1, 6, 20), [(1, 1, 20), (1, 6, 1)]),
    ((2, 3, 4, 5), [(2, 3, 4, 5), (2, 1, 4, 1)], None, None),
])  # fmt: skip
def test_grouped_views_are_reshapes_of_the_operands(shape, shapes, want3, want):
    arrays = [np.arange(np.prod(s), dtype=np.float32).reshape(s) for s in shapes]
    grouped = operands.grouped_views(shape, arrays)
    if want3 is None:
        assert grouped is None
        return
    shape3, views = grouped
    assert shape3 == want3 and [v.shape for v in views] == want
    assert all(np.shares_memory(v, a) for v, a in zip(views, arrays))
    full = [np.broadcast_to(v, shape3).reshape(shape) for v in views]
    for f, a in zip(full, arrays):
        np.testing.assert_array_equal(f, np.broadcast_to(a, shape))
