"""gemm: matmul and batched_matmul against float64 NumPy (NumPy only as the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backends.flex.kernels import gemm

from .helpers import FLOATS, assert_close


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "m,k,n",
    [(1, 1, 1), (1, 7, 1), (7, 5, 3), (6, 4, 4), (13, 17, 9), (64, 64, 64), (200, 300, 170),
     (301, 257, 129), (5, 1000, 3), (1000, 3, 5), (97, 1024, 33), (256, 256, 256)],
)  # fmt: skip
def test_matmul_matches_numpy_on_square_and_odd_shapes(rng, dtype, m, k, n):
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    assert_close(gemm.matmul(a, b), _ref(a, b), dtype, k)


@settings(deadline=None, max_examples=15)
@given(
    m=st.integers(1, 70),
    k=st.integers(1, 70),
    n=st.integers(1, 70),
    dtype=st.sampled_from(FLOATS),
    seed=st.integers(0, 2**31),
)
def test_matmul_random_shapes(m, k, n, dtype, seed):
    r = np.random.default_rng(seed)
    a = r.standard_normal((m, k)).astype(dtype)
    b = r.standard_normal((k, n)).astype(dtype)
    assert_close(gemm.matmul(a, b), _ref(a, b), dtype, k)


def test_matmul_reads_transposed_and_strided_inputs(rng):
    a = rng.standard_normal((40, 30)).astype(np.float32)
    w = rng.standard_normal((50, 30)).astype(np.float32)
    assert_close(gemm.matmul(a, w.T), _ref(a, w.T), n=30)  # F-contiguous rhs, used as is
    assert_close(gemm.matmul(a.T[::2], a), _ref(a.T[::2], a), n=40)  # strided lhs


def test_matmul_with_k_a_multiple_of_4kib_rows(rng):
    # k * 4 bytes = 4 KiB: the panels are padded so rows do not share L1 sets.
    a = rng.standard_normal((20, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 12)).astype(np.float32)
    assert_close(gemm.matmul(a, b), _ref(a, b), n=1024)


def test_matmul_empty_and_zero_inner_dimension():
    assert gemm.matmul(np.zeros((0, 3), np.float32), np.zeros((3, 4), np.float32)).shape == (0, 4)
    out = gemm.matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32))
    assert out.shape == (2, 3) and not out.any()


def test_matmul_out_parameter_and_float16(rng):
    a = rng.standard_normal((9, 8)).astype(np.float32)
    b = rng.standard_normal((8, 7)).astype(np.float32)
    out = np.empty((9, 7), np.float32)
    assert gemm.matmul(a, b, out=out) is out
    assert_close(out, _ref(a, b), n=8)
    h = gemm.matmul(a.astype(np.float16), b.astype(np.float16))
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, _ref(a, b), rtol=1e-2, atol=2e-2)


def test_matmul_integers_are_exact(rng):
    a = rng.integers(-50, 50, (13, 11)).astype(np.int64)
    b = rng.integers(-50, 50, (11, 6)).astype(np.int64)
    np.testing.assert_array_equal(gemm.matmul(a, b), a @ b)


def test_matmul_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"inner dimensions differ: \(2, 3\) @ \(4, 5\)"):
        gemm.matmul(np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))
    with pytest.raises(TypeError, match="dtypes differ"):
        gemm.matmul(np.zeros((2, 3), np.float32), np.zeros((3, 5), np.float64))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch,m,k,n", [(1, 3, 4, 5), (7, 9, 6, 5), (4, 64, 48, 33), (3, 130, 120, 110)])
def test_batched_matmul_matches_numpy(rng, dtype, batch, m, k, n):
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((batch, k, n)).astype(dtype)
    assert_close(gemm.batched_matmul(a, b), _ref(a, b), dtype, k)
    bt = np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1)  # per-batch F-ordered
    assert_close(gemm.batched_matmul(a, bt), _ref(a, b), dtype, k)


def test_batched_matmul_rejects_mismatched_batches():
    with pytest.raises(ValueError, match="shapes do not match"):
        gemm.batched_matmul(np.zeros((2, 3, 4), np.float32), np.zeros((3, 4, 5), np.float32))
