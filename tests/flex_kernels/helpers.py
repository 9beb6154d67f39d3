"""Tolerances and comparison helpers of the Flex kernel tests."""

from __future__ import annotations

import numpy as np

FLOATS = [np.float32, np.float64]


def tol(dtype, n: int = 1) -> dict:
    """rtol/atol for a result that sums ``n`` terms: float32 ~1e-5 relative with an atol that
    grows with the reduction length; float64 tight."""
    if np.dtype(dtype) == np.float64:
        return {"rtol": 1e-10, "atol": 1e-12 * max(1, n)}
    return {"rtol": 1e-5, "atol": 4e-6 * max(1.0, float(np.sqrt(n)))}


def assert_close(got, ref, dtype=np.float32, n: int = 1) -> None:
    """``got`` equals the float64 reference ``ref`` within :func:`tol` (shapes equal too)."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), **tol(dtype, n))
