"""gemm: matmul and batched_matmul against float64 NumPy (NumPy only as the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backends.flex.kernels import gemm

from .helpers import FLOATS, assert_close


@pytest.fixture(autouse=True, scope="module", params=["small", "packed"])
def kernel_path(request):
    """Every test twice: as shipped (serial products skip packing), then with the packed gemm
    for all products, so both kernels meet the odd shapes and layouts below."""
    saved = gemm.SMALL_MAX_WORK
    if request.param == "packed":
        gemm.SMALL_MAX_WORK = 0
    yield request.param
    gemm.SMALL_MAX_WORK = saved


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


# The register tile is MR x NR (12 x 32 float32 on AVX-512, 6 x 16 on AVX2; half the columns for
# float64): shapes one below, at and one above whole tiles, and k past one or more KC chunks.
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m,k,n", [(11, 255, 31), (12, 256, 32), (13, 257, 33), (24, 600, 64),
                                   (6, 9, 16), (7, 513, 17), (37, 130, 95), (13, 2100, 33)])  # fmt: skip
def test_matmul_around_whole_register_tiles(rng, dtype, m, k, n):
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    assert_close(gemm.matmul(a, b), _ref(a, b), dtype, k)


def _layouts(rng, shape, dtype):
    """The same matrix as C-ordered, transposed (F-ordered) and strided views."""
    x = rng.standard_normal(shape).astype(dtype)
    big = np.zeros((shape[0] * 2, shape[1] * 3), dtype)
    big[::2, ::3] = x
    return {"c": x, "f": np.asfortranarray(x), "strided": big[::2, ::3]}


@pytest.mark.parametrize("la", ["c", "f", "strided"])
@pytest.mark.parametrize("lb", ["c", "f", "strided"])
def test_matmul_packs_any_strided_operand_without_a_copy_first(rng, la, lb):
    a = _layouts(rng, (45, 70), np.float32)[la]
    b = _layouts(rng, (70, 50), np.float32)[lb]
    assert_close(gemm.matmul(a, b), _ref(a, b), n=70)


@pytest.mark.parametrize("m,k,n", [(128, 784, 256), (784, 128, 256), (128, 256, 784)])
def test_matmul_mlp_training_shapes_with_transposed_operands(rng, m, k, n):
    # forward x @ W, then the backward's x.T @ dy and dy @ W.T (views, large enough for threads)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    for lhs, rhs in ((a, b), (np.ascontiguousarray(a.T).T, b), (a, np.ascontiguousarray(b.T).T)):
        assert_close(gemm.matmul(lhs, rhs), _ref(a, b), n=k)


def test_batched_matmul_reads_strided_batches(rng):
    a = rng.standard_normal((3, 40, 30)).astype(np.float32).transpose(0, 2, 1)  # [3, 30, 40]
    b = rng.standard_normal((6, 40, 20)).astype(np.float32)[::2]  # every other batch entry
    assert_close(gemm.batched_matmul(a, b), _ref(a, b), n=40)


def test_matmul_serial_and_parallel_agree(rng, monkeypatch):
    a = rng.standard_normal((150, 300)).astype(np.float32)
    b = rng.standard_normal((300, 170)).astype(np.float32)
    parallel = gemm.matmul(a, b)
    monkeypatch.setattr(gemm, "PARALLEL_MIN_WORK", 1 << 62)
    np.testing.assert_allclose(gemm.matmul(a, b), parallel, rtol=1e-6, atol=1e-6)
    assert_close(parallel, _ref(a, b), n=300)


def test_matmul_keeps_nan_and_inf(rng):
    a = rng.standard_normal((20, 30)).astype(np.float32)
    b = rng.standard_normal((30, 40)).astype(np.float32)
    a[3, 5] = np.nan
    b[7, 9] = np.inf
    out = gemm.matmul(a, b)
    ref = _ref(a, b)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))


_OTHER_ISA = """
import numpy as np
from minidl.backends.flex.kernels import gemm
r = np.random.default_rng(0)
for m, k, n in [(13, 300, 33), (7, 20, 17), (200, 260, 150), (128, 256, 10), (128, 10, 256),
                (17, 9, 8), (25, 40, 24)]:
    a, b = r.standard_normal((m, k)), r.standard_normal((k, n))
    for dt in (np.float32, np.float64):
        for lhs, rhs in ((a, b.T.copy().T), (a.T.copy().T, b)):  # B, then A, column-major
            got = gemm.matmul(lhs.astype(dt, order="K"), rhs.astype(dt, order="K"))
            err = np.abs(got - a @ b).max() / np.abs(a @ b).max()
            assert err < (1e-5 if dt == np.float32 else 1e-12), (m, k, n, dt, err)
print(gemm.MR, gemm.NR)
"""


@pytest.mark.parametrize(("cpu", "tile"), [("haswell", "6 16"), ("skylake-avx512", "12 32")])
def test_each_isa_tile_computes_the_right_product(cpu, tile):
    # Compiled for the named CPU (the AVX-512 tile only runs where the host has AVX-512).
    import os
    import subprocess
    import sys

    with open("/proc/cpuinfo") as f:
        if cpu != "haswell" and "avx512f" not in f.read():
            pytest.skip("host has no AVX-512")
    from minidl.backends.flex.kernels import isa

    build = isa.AVX2_BUILD if cpu == "haswell" else {"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": "+avx512f"}
    env = dict(os.environ, **build)  # a true build: a CPU name alone keeps the host's features
    out = subprocess.run([sys.executable, "-c", _OTHER_ISA], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == tile.split()


@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("la", ["c", "f"])
def test_matmul_reads_a_in_place_or_packed_alike(rng, monkeypatch, in_place, la):
    # Both ways of feeding A to the micro-kernel, at shapes with a partial last row panel.
    monkeypatch.setattr(gemm, "reads_a_in_place", lambda a: in_place)
    for m, k, n in [(13, 40, 33), (37, 600, 70), (130, 70, 40)]:
        a = _layouts(rng, (m, k), np.float32)[la]
        b = rng.standard_normal((k, n)).astype(np.float32)
        assert_close(gemm.matmul(a, b), _ref(a, b), n=k)


def test_batched_matmul_reads_broadcast_and_reversed_operands(rng):
    a = rng.standard_normal((4, 30, 50)).astype(np.float32)
    w = rng.standard_normal((50, 40)).astype(np.float32)
    wb = np.broadcast_to(w, (4, 50, 40))  # batch stride 0: one weight for every entry
    assert_close(gemm.batched_matmul(a, wb), _ref(a, wb), n=50)
    assert_close(gemm.batched_matmul(a[:, ::-1], wb.transpose(0, 2, 1).transpose(0, 2, 1)[:, ::-1]),
                 _ref(a[:, ::-1], wb[:, ::-1]), n=50)  # fmt: skip


# The small-product kernel (gemm_small): serial work, no packing, masked vectors for the last
# columns. Shapes around its tiles (16 x 1 / 12 x 2 vectors on AVX-512, 12 x 1 / 6 x 2 on
# AVX2; 4 and 1 rows below a tile), n around one and two vectors, tiny k, m below a tile.
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m,k,n", [(16, 1, 1), (17, 10, 15), (31, 255, 16), (33, 7, 17), (128, 256, 10),
                                   (128, 10, 256), (256, 128, 10), (40, 3, 31), (19, 64, 33),
                                   (12, 5, 8), (13, 33, 9), (100, 400, 47), (33, 20, 12),
                                   (19, 7, 1), (45, 64, 11), (70, 5, 6), (1, 50, 40), (3, 9, 17),
                                   (4, 30, 33), (7, 20, 10), (11, 64, 5), (15, 3, 64)])  # fmt: skip
@pytest.mark.parametrize("la", ["c", "f", "strided"])
@pytest.mark.parametrize("lb", ["c", "f", "strided"])
def test_small_products_take_the_unpacked_kernel_for_any_layout(rng, monkeypatch, dtype, m, k, n, la, lb):
    from minidl.backends.flex.kernels import gemm_small

    monkeypatch.setattr(gemm, "SMALL_MAX_WORK", 128**3 + 1)  # as shipped, in both passes
    calls = []
    real = gemm._any_layout
    monkeypatch.setattr(gemm, "_any_layout", lambda kern, dt: calls.append(kern) or real(kern, dt))
    a = _layouts(rng, (m, k), dtype)[la]
    b = _layouts(rng, (k, n), dtype)[lb]
    assert_close(gemm.matmul(a, b), _ref(a, b), dtype, k)
    assert calls == [gemm_small.gemm_small]  # all serial float products


def test_small_kernel_batched_broadcast_and_nan(rng):
    a = rng.standard_normal((3, 20, 12)).astype(np.float32)
    w = rng.standard_normal((12, 10)).astype(np.float32)
    wb = np.broadcast_to(w, (3, 12, 10))
    assert_close(gemm.batched_matmul(a, wb), _ref(a, wb), n=12)
    af = np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)  # columns contiguous
    assert_close(gemm.batched_matmul(af, wb), _ref(a, wb), n=12)  # C^T = B^T A^T per entry
    assert_close(gemm.batched_matmul(a, wb.transpose(0, 2, 1).copy().transpose(0, 2, 1)),
                 _ref(a, wb), n=12)  # fmt: skip
    a[1, 4, 3] = np.nan
    wt = w.copy()
    wt[5, 2] = np.inf
    out, ref = gemm.matmul(a[1], wt), _ref(a[1], wt)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))
