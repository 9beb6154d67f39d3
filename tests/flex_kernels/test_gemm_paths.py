"""gemm: the packed kernel's ways of feeding A and B, its short last panel and its task runs.

Each path is forced (or driven directly through ``gemm_pack``) and compared with float64 NumPy:
B read in place (whole strips, a partial last strip, misaligned rows) or packed per task, per
worker or up front; A read in place or packed (C-ordered rows by register transposes, a
transposed view by whole vectors); a last row panel of fewer than MR rows; k over several KC
chunks (C accumulated); 1-3 workers taking tasks from each other's runs; both ISAs' builds.
"""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex.kernels import gemm, gemm_pack

from .helpers import FLOATS, assert_close

MR = gemm.MR


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def _offset(x: np.ndarray, elems: int) -> np.ndarray:
    """A copy of ``x`` whose data starts ``elems`` elements past a 64-byte boundary."""
    raw = np.empty(x.size + 64, x.dtype)
    base = (-raw.ctypes.data) % 64 // x.itemsize + elems
    out = raw[base : base + x.size].reshape(x.shape)
    out[...] = x
    return out


@pytest.fixture
def packed_only(monkeypatch):
    monkeypatch.setattr(gemm, "SMALL_MAX_WORK", 0)  # every float product takes the packed gemm


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("m,k,n", [(128, 784, 256), (128, 300, 250), (37, 70, 33), (MR + 1, 9, 31),
                                   (256, 2100, 64), (100, 129, 16)])  # fmt: skip
@pytest.mark.parametrize("off", [0, 1])
def test_b_read_in_place_or_packed_alike(rng, monkeypatch, packed_only, dtype, in_place, m, k, n, off):
    # In place: whole strips from B's rows, a partial last strip packed; ``off`` misaligns them.
    monkeypatch.setattr(gemm, "B_IN_PLACE_MAX_M", 1 << 30 if in_place else -1)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = _offset(rng.standard_normal((k, n)).astype(dtype), off)
    assert_close(gemm.matmul(a, b), _ref(a, b), dtype, k)
    assert_close(gemm.matmul(np.asfortranarray(a), b), _ref(a, b), dtype, k)


def test_which_operands_are_read_in_place():
    x = np.zeros((128, 784), np.float32)
    w = np.zeros((784, 256), np.float32)
    assert gemm.b_reads_in_place(w[None], 128)  # x @ W1: W1's rows, 1 KiB apart
    assert not gemm.b_reads_in_place(w[None], 784)  # many rows of C share a packed copy
    assert not gemm.b_reads_in_place(np.zeros((1, 64, 512), np.float32), 128)  # rows 2 KiB apart
    assert not gemm.b_reads_in_place(w.T[None], 128)  # columns contiguous: packed
    assert gemm.reads_a_in_place(x[None])  # C-ordered rows
    assert not gemm.reads_a_in_place(x.T[None])  # x.T: steps of k 3 KiB apart, packed
    assert gemm.reads_a_in_place(np.zeros((64, 100), np.float32).T[None])  # 256 B apart
    assert not gemm.reads_a_in_place(np.zeros((5, 100), np.float32)[None])  # m below a tile
    # rows exactly at the ISA's limit are packed, rows just below it are read in place
    limit = gemm.A_IN_PLACE_MAX_STRIDE // 4
    assert not gemm.reads_a_in_place(np.zeros((1, 16, limit), np.float32))
    assert gemm.reads_a_in_place(np.zeros((1, 16, limit - 16), np.float32))
    assert gemm.A_IN_PLACE_MAX_STRIDE == (8192 if gemm.ISA == "avx512" else 16384)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("la", ["c", "f"])
@pytest.mark.parametrize("k", [40, 2100])
def test_last_panel_of_fewer_than_mr_rows(rng, monkeypatch, packed_only, dtype, in_place, la, k):
    # m = q * MR + r for every r (the shorter tiles, or a full tile into scratch); k = 2100
    # runs several KC chunks, so the short tiles also add into C.
    monkeypatch.setattr(gemm, "reads_a_in_place", lambda a: in_place)
    for m in [2 * MR + r for r in range(MR)] + [128, 784 % 97 + MR]:
        a = rng.standard_normal((m, k)).astype(dtype)
        a = a if la == "c" else np.asfortranarray(a)
        b = rng.standard_normal((k, 40)).astype(dtype)
        assert_close(gemm.matmul(a, b), _ref(a, b), dtype, k)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("transposed", [False, True])
def test_pack_a_block_matches_the_panels_it_describes(rng, dtype, transposed):
    # Any block (offset rows and columns, a partial last panel): MR-row panels, column by
    # column, zero past the block's rows, whatever the vector stores wrote past each column.
    src = rng.standard_normal((70, 300) if not transposed else (300, 70)).astype(dtype)
    a = src.T if transposed else src
    for i0, i1, p0, p1 in [(0, 70, 0, 300), (5, 53, 17, 290), (MR, 2 * MR, 0, 16), (60, 70, 3, 40)]:
        kc, npan = p1 - p0, -(-(i1 - i0) // MR)
        out = np.full(npan * MR * kc + 64, np.nan, dtype)
        gemm_pack.pack_a_block(a, i0, i1, p0, p1, out)
        want = np.zeros((npan * MR, kc), dtype)
        want[: i1 - i0] = a[i0:i1, p0:p1]
        got = out[: npan * MR * kc].reshape(npan, kc, MR).transpose(0, 2, 1).reshape(npan * MR, kc)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("b_mode", ["B_SHARED", "B_OWN", "B_IN_PLACE", "B_WORKER"])
@pytest.mark.parametrize("nw", [1, 2, 3])
@pytest.mark.parametrize("grid", [(1, 1), (1, 3), (4, 1), (3, 2)])
def test_every_b_mode_on_any_grid_and_worker_count(rng, b_mode, nw, grid):
    # The workers start from their own runs of tasks and take from the others' (nw > the
    # threads numba has just runs some workers one after another on the same thread).
    mode = getattr(gemm_pack, b_mode)
    nti, ntj = grid  # (B_OWN on more row blocks packs a strip once per task: slower, right)
    batch, m, k, n = 2, 5 * MR + 3, 150, 3 * gemm.NR + 5
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((batch, k, n)).astype(np.float32)
    c = np.full((batch, m, n), np.nan, np.float32)
    direct = gemm.reads_a_in_place(a)
    buf = np.zeros(gemm.scratch_size(batch, m, n, k, gemm.NR, nti, ntj, nw, direct, mode), np.float32)
    gemm._any_layout(gemm_pack.gemm_parallel, np.dtype(np.float32))(a, b, c, buf, nti, ntj, nw, mode, direct)
    assert_close(c, _ref(a, b), n=k)


@pytest.mark.parametrize("b_mode", ["B_SHARED", "B_OWN", "B_IN_PLACE", "B_WORKER"])
@pytest.mark.parametrize("nw", [1, 2, 3])
@pytest.mark.parametrize("ta", [False, True])
def test_worker_slices_start_on_pages_and_stay_in_the_scratch(rng, b_mode, nw, ta):
    # Each worker's slice (packed A, then B strips) starts a whole number of PAGEs from the
    # scratch's start, after the shared part; nothing is written past scratch_size.
    mode = getattr(gemm_pack, b_mode)
    batch, m, k, n = 1, 7 * MR + 5, 130, 4 * gemm.NR + 3
    a = rng.standard_normal((batch, k, m)).astype(np.float32).transpose(0, 2, 1) if ta else \
        rng.standard_normal((batch, m, k)).astype(np.float32)  # fmt: skip
    b = rng.standard_normal((batch, k, n)).astype(np.float32)
    nti, ntj = 3, 2
    direct = gemm.reads_a_in_place(a)
    shared, asz, bsz = gemm_pack._scratch_parts.py_func(batch, m, n, k, gemm.NR, nti, ntj, direct, mode)
    page = gemm_pack.PAGE
    step = gemm_pack._pages.py_func(asz + bsz)
    start = gemm_pack._pages.py_func(shared)
    size = gemm.scratch_size(batch, m, n, k, gemm.NR, nti, ntj, nw, direct, mode)
    assert start % page == 0 and step % page == 0 and step >= asz + bsz
    assert start >= shared and start + nw * step <= size
    store = np.full(size + 64, -7.0, np.float32)
    c = np.full((batch, m, n), np.nan, np.float32)
    gemm._any_layout(gemm_pack.gemm_parallel, np.dtype(np.float32))(a, b, c, store[:size], nti, ntj, nw, mode, direct)
    assert_close(c, _ref(a, b), n=k)
    assert (store[size:] == -7.0).all()


@pytest.mark.parametrize("threads", [1, 2])
def test_mlp_products_keep_nan_and_inf_on_the_new_paths(rng, monkeypatch, threads):
    if threads == 1:
        monkeypatch.setattr(gemm, "PARALLEL_MIN_WORK", 1 << 62)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    w = rng.standard_normal((784, 256)).astype(np.float32)
    dh = rng.standard_normal((128, 256)).astype(np.float32)
    x[127, 3] = np.nan  # in the short last panel of x @ W1
    w[5, 255] = np.inf
    for lhs, rhs in ((x, w), (x.T, dh), (dh, w.T)):
        out, ref = gemm.matmul(lhs, rhs), _ref(lhs, rhs)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
        np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))
        finite = np.isfinite(ref)
        np.testing.assert_allclose(out[finite], ref[finite], rtol=1e-4, atol=1e-3)


_OTHER_ISA = """
import numpy as np
from minidl.backends.flex.kernels import gemm
gemm.SMALL_MAX_WORK = 0
r = np.random.default_rng(0)
for serial in (True, False):
    gemm.PARALLEL_MIN_WORK = 1 << 62 if serial else 1
    for m, k, n, ta in [(128, 784, 256, 0), (784, 128, 256, 1), (128, 256, 784, 0), (26, 40, 33, 0),
                        (27, 1100, 20, 1), (29, 60, 70, 0), (7 * gemm.MR + 5, 50, 64, 1)]:
        a, b = r.standard_normal((m, k)), r.standard_normal((k, n))
        for dt in (np.float32, np.float64):
            lhs = a.astype(dt) if not ta else a.T.astype(dt).copy().T
            got = gemm.matmul(lhs, b.astype(dt))
            err = np.abs(got - a @ b).max() / np.abs(a @ b).max()
            assert err < (1e-5 if dt == np.float32 else 1e-12), (m, k, n, ta, dt, serial, err)
print(gemm.MR, gemm.NR)
"""


@pytest.mark.parametrize(("cpu", "tile"), [("haswell", "6 16"), ("skylake-avx512", "12 32")])
def test_each_isa_build_takes_the_new_paths_right(cpu, tile):
    # The MLP shapes (B in place, A packed from a transposed view, short last panels: m = 128
    # is 10 x 12 + 8 rows on AVX-512, 21 x 6 + 2 on AVX2), serial and threaded, per build.
    import os
    import subprocess
    import sys

    with open("/proc/cpuinfo") as f:
        if cpu != "haswell" and "avx512f" not in f.read():
            pytest.skip("host has no AVX-512")
    from minidl.backends.flex.kernels import isa

    build = isa.AVX2_BUILD if cpu == "haswell" else {"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": "+avx512f"}
    env = dict(os.environ, **build)
    out = subprocess.run([sys.executable, "-c", _OTHER_ISA], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == tile.split()
