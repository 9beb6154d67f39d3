"""The counter-based RNG: reproducible streams, independent of threads, right moments."""

from __future__ import annotations

import numba
import numpy as np

from minidl.backends.flex.kernels.rng import RngState


def test_same_seed_same_stream_and_successive_calls_differ():
    r = RngState(42)
    a, b = r.uniform((1000,)), r.uniform((1000,))
    assert not np.array_equal(a, b)
    r.seed(42)
    np.testing.assert_array_equal(r.uniform((1000,)), a)
    np.testing.assert_array_equal(r.uniform((1000,)), b)
    assert r.counter == 2000


def test_different_seeds_differ():
    assert not np.array_equal(RngState(1).uniform((100,)), RngState(2).uniform((100,)))
    assert not np.array_equal(RngState(0).normal((100,)), RngState(1).normal((100,)))


def test_one_draw_equals_two_draws_of_its_halves():
    whole = RngState(9).uniform((10,))
    r = RngState(9)
    np.testing.assert_array_equal(np.concatenate([r.uniform((4,)), r.uniform((6,))]), whole)


def test_stream_does_not_depend_on_the_thread_count():
    big = RngState(3).normal((300_001,), dtype=np.float64)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = RngState(3).normal((300_001,), dtype=np.float64)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(big, one)
    np.testing.assert_array_equal(RngState(3).normal((11,), dtype=np.float64), big[:11])


def test_moments_are_within_statistical_tolerance():
    n = 400_000
    u = RngState(11).uniform((n,), -1.0, 3.0, np.float64)
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean() - 1.0) < 5 * np.sqrt(16 / 12 / n)
    assert abs(u.var() - 16 / 12) < 0.02
    z = RngState(12).normal((n,), 2.0, 3.0, np.float64)
    assert abs(z.mean() - 2.0) < 5 * 3 / np.sqrt(n)
    assert abs(z.std() - 3.0) < 0.02
    third = ((z - 2.0) / 3.0) ** 3
    assert abs(third.mean()) < 0.02
    b = RngState(13).bernoulli((n,), 0.3)
    assert set(np.unique(b)) <= {0.0, 1.0}
    assert abs(b.mean() - 0.3) < 5 * np.sqrt(0.21 / n)


def test_dtypes_and_shapes():
    r = RngState(0)
    assert r.uniform((2, 3)).shape == (2, 3) and r.uniform((2, 3)).dtype == np.float32
    assert r.normal((5,), dtype=np.float16).dtype == np.float16
    assert r.bernoulli((4,), 0.5, np.bool_).dtype == np.bool_
    assert r.uniform((0, 3)).shape == (0, 3)
    np.testing.assert_array_equal(r.bernoulli((50,), 0.0), 0)
    np.testing.assert_array_equal(r.bernoulli((50,), 1.0), 1)
