"""``vmath.vexp`` and ``vmath.vlog``, the branch-free exp and log of the unary and softmax
kernels, against correctly rounded references over the whole float range: normal, subnormal
and overflowing results, the clamps, +-0, +-inf, negatives and NaN; and through every kernel
that uses them (exp, sigmoid, log, softmax, log_softmax) against NumPy and torch, on this ISA
and on a true AVX2 build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from minidl.backends.flex.kernels import softmax, unary

ROOT = Path(__file__).resolve().parents[2]
INT = {np.float32: np.int32, np.float64: np.int64}
#: the exp argument range where results go from 0 through the subnormals to inf, per dtype
RANGE = {np.float32: (-110.0, 95.0), np.float64: (-760.0, 720.0)}


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between same-signed floats (inf is one past max)."""
    it = INT[a.dtype.type]
    return np.abs(a.view(it).astype(np.int64) - b.view(it).astype(np.int64))


def exact_exp(x: np.ndarray) -> np.ndarray:
    """exp(x) rounded once to x's dtype: float32 from float64, float64 from the x87 long double."""
    wide = np.float64 if x.dtype == np.float32 else np.longdouble
    with np.errstate(over="ignore"):
        return np.exp(x.astype(wide)).astype(x.dtype)


def grid(dtype, seed: int = 0) -> np.ndarray:
    lo, hi = RANGE[dtype]
    rng = np.random.default_rng(seed)
    parts = [rng.uniform(lo, hi, 200_000), rng.uniform(-1, 1, 50_000), np.linspace(lo, hi, 100_001)]
    return np.concatenate(parts).astype(dtype)


@pytest.mark.parametrize("dtype, limit", [(np.float32, 1), (np.float64, 2)])
def test_exp_is_within_an_ulp_or_two_of_the_rounded_exp_everywhere(dtype, limit):
    if dtype == np.float64 and np.finfo(np.longdouble).nmant < 60:
        pytest.skip("no extended long double for a float64 reference")
    x = grid(dtype)
    out = unary.unary("exp", x)
    assert out.dtype == dtype
    err = ulps(out, exact_exp(x))
    assert err.max() <= limit, f"{err.max()} ulp at x = {x[err.argmax()]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_special_values_and_the_ends_of_the_range(dtype):
    info = np.finfo(dtype)
    lo, hi = RANGE[dtype]
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, lo, hi, 1e30, -1e30,
                  np.log(info.max), np.log(info.smallest_normal), np.log(info.smallest_subnormal),
                  info.smallest_subnormal, -info.smallest_subnormal], dtype)  # fmt: skip
    with np.errstate(all="ignore"):
        ref = np.exp(x)
    out = unary.unary("exp", x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    finite = ~np.isnan(ref)
    assert (out[finite] >= 0).all()
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))
    assert ulps(out[finite], ref[finite]).max() <= 3  # NumPy's own float32 exp is 3 ulp off at worst
    assert out[0] == 1 and out[1] == 1 and out[3] == 0 and out[2] == np.inf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_subnormal_results_round_once(dtype):
    info = np.finfo(dtype)
    x = np.linspace(np.log(info.smallest_subnormal) - 1, np.log(info.smallest_normal) + 1, 20_001).astype(dtype)
    if dtype == np.float64 and np.finfo(np.longdouble).nmant < 60:
        pytest.skip("no extended long double for a float64 reference")
    out, ref = unary.unary("exp", x), exact_exp(x)
    assert ((out > 0) & (out < info.smallest_normal)).any()  # the grid does cover subnormals
    assert ulps(out, ref).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 16, 33, 1000, 70_000])  # tails, a vector, parallel chunks
def test_exp_and_sigmoid_of_odd_sizes_match_torch(dtype, n):
    x = (np.random.default_rng(n).standard_normal(n) * 30).astype(dtype)
    x[:: max(1, n // 5)] = np.nan
    t = torch.from_numpy(x)
    np.testing.assert_allclose(unary.unary("exp", x), torch.exp(t).numpy(), rtol=2e-6 if dtype == np.float32 else 1e-14)
    # torch's 1 / (1 + exp(-x)) overflows to 0 where the true result is a float32 subnormal
    np.testing.assert_allclose(unary.unary("sigmoid", x), torch.sigmoid(t).numpy(),
                               rtol=2e-6 if dtype == np.float32 else 1e-14, atol=1.2e-38)  # fmt: skip


def test_sigmoid_saturates_without_nan():
    x = np.array([-1e4, -200.0, -90.0, 0.0, 90.0, 200.0, 1e4, np.inf, -np.inf], np.float32)
    out = unary.unary("sigmoid", x)
    assert not np.isnan(out).any()
    # torch's 1 / (1 + exp(-x)) gives 0 at -90, where the rounded result is the subnormal e**-90
    exact = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    np.testing.assert_array_equal(out, exact)
    assert out[2] > 0 and torch.sigmoid(torch.from_numpy(x)).numpy()[2] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, dim", [((128, 10), -1), ((3, 257), 1), ((4, 33, 5), 1), ((2, 3, 17, 9), 1)])
def test_softmax_kernels_with_vexp_match_torch(dtype, shape, dim):
    x = (np.random.default_rng(1).standard_normal(shape) * 20).astype(dtype)
    t = torch.from_numpy(x)
    # log_softmax near 0 is x - shift with |x| ~ 20: an absolute error of an ulp of 20
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-13}
    np.testing.assert_allclose(softmax.softmax(x, dim), torch.softmax(t, dim).numpy(), **tol)
    np.testing.assert_allclose(softmax.log_softmax(x, dim), torch.log_softmax(t, dim).numpy(), **tol)


def positive_floats(dtype, seed: int = 0) -> np.ndarray:
    """Random bit patterns of every positive finite float (subnormals included), plus [0.5, 2]."""
    it = INT[dtype]
    rng = np.random.default_rng(seed)
    x = rng.integers(1, np.iinfo(it).max, 300_000).astype(it).view(dtype)
    x = x[np.isfinite(x)]
    info = np.finfo(dtype)
    edges = np.array([info.smallest_subnormal, info.smallest_normal, info.max, 1, 2, 0.5], dtype)
    return np.concatenate([x, rng.uniform(0.5, 2, 50_000).astype(dtype), edges])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_is_within_an_ulp_of_the_rounded_log_everywhere(dtype):
    if dtype == np.float64 and np.finfo(np.longdouble).nmant < 60:
        pytest.skip("no extended long double for a float64 reference")
    x = positive_floats(dtype)
    wide = np.float64 if dtype == np.float32 else np.longdouble
    out = unary.unary("log", x)
    err = ulps(out, np.log(x.astype(wide)).astype(dtype))
    assert out.dtype == dtype and err.max() <= 1, f"{err.max()} ulp at x = {x[err.argmax()]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_special_values(dtype):
    x = np.array([0.0, -0.0, -1.0, -np.finfo(dtype).smallest_subnormal, np.inf, -np.inf, np.nan,
                  1.0], dtype)  # fmt: skip
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(unary.unary("log", x), np.log(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 33, 70_000])
def test_log_of_odd_sizes_matches_torch(dtype, n):
    x = np.abs(np.random.default_rng(n).standard_normal(n) * 100).astype(dtype)
    x[:: max(1, n // 4)] = 0
    np.testing.assert_allclose(unary.unary("log", x), torch.log(torch.from_numpy(x)).numpy(),
                               rtol=2e-7 if dtype == np.float32 else 1e-15)  # fmt: skip


_OTHER_ISA = """
import numpy as np
from minidl.backends.flex.kernels import unary
for dt, lo, hi, wide in ((np.float32, -110, 95, np.float64), (np.float64, -760, 720, np.longdouble)):
    x = np.linspace(lo, hi, 100_001).astype(dt)
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(wide)).astype(dt)
    it = np.int32 if dt == np.float32 else np.int64
    out = unary.unary("exp", x)
    print(np.abs(out.view(it).astype(np.int64) - ref.view(it).astype(np.int64)).max())
    y = np.concatenate([np.geomspace(np.finfo(dt).smallest_subnormal, np.finfo(dt).max, 100_001),
                        np.linspace(0.5, 2, 10_001)]).astype(dt)
    ref = np.log(y.astype(wide)).astype(dt)
    out = unary.unary("log", y)
    print(np.abs(out.view(it).astype(np.int64) - ref.view(it).astype(np.int64)).max())
"""


def test_exp_and_log_are_as_accurate_on_a_true_avx2_build():
    from minidl.backends.flex.kernels import isa

    env = dict(os.environ, **isa.AVX2_BUILD, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _OTHER_ISA], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    exp32, log32, exp64, log64 = (int(v) for v in out.stdout.split())
    assert exp32 <= 1 and exp64 <= 2 and log32 <= 1 and log64 <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 5, 16, 257])
def test_softmax_row_max_propagates_nan_and_handles_infinities(dtype, n):
    # the row max is vmath.fmaximum (llvm.maximum): a NaN anywhere in a row makes the row NaN,
    # as torch; an inf dominates; an all -inf row is NaN, as torch
    x = np.random.default_rng(n).standard_normal((4, n)).astype(dtype)
    x[0, n // 2] = np.nan
    x[1, -1] = np.inf
    x[2, :] = -np.inf
    t = torch.from_numpy(x)
    for ours, theirs in ((softmax.softmax, torch.softmax), (softmax.log_softmax, torch.log_softmax)):
        np.testing.assert_allclose(ours(x, -1), theirs(t, -1).numpy(), rtol=1e-5, atol=1e-6)


def test_softmax_row_max_is_a_vector_reduction():
    import numba
    from numba import types

    from minidl.backends.flex.kernels._common import JIT_FAST

    for dt in (types.float32, types.float64):
        sig = (types.Array(dt, 2, "C"),) * 2 + (types.boolean, types.int64, types.int64)
        fresh = numba.njit(sig, **{**JIT_FAST, "cache": False})(softmax._rows.py_func)
        llvm = next(iter(fresh.inspect_llvm().values()))
        assert "llvm.maximum.v" in llvm, f"{dt}: the row max is not vectorized"
