"""conv_tiled: burn-flex's tiled im2col + gemm, its path choice, and the timing helper."""

import numpy as np
import pytest
import torch

from minidl_book import conv_tiled


@pytest.mark.parametrize("shape", [(3, 1, 8, 8), (2, 3, 5, 7), (1, 2, 30, 30)])
@pytest.mark.parametrize("tile", [7, 512])
def test_tiled_matches_torch(shape, tile):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((4, shape[1], 3, 2)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    got = conv_tiled.conv2d_tiled(x, w, b, (1, 1), tile=tile)
    want = torch.nn.functional.conv2d(*map(torch.from_numpy, (x, w, b)), padding=1)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
    no_bias = conv_tiled.conv2d_tiled(x, w, None, (0, 0), tile=tile)
    want0 = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w))
    np.testing.assert_allclose(no_bias, want0.numpy(), rtol=1e-5, atol=1e-5)


def test_tile_bytes():
    assert conv_tiled.tile_bytes((8, 1, 3, 3)) == 512 * 9 * 4
    assert conv_tiled.tile_bytes((8, 2, 3, 3), tile=10, itemsize=8) == 10 * 18 * 8


def test_burn_flex_path_in_its_order():
    path = conv_tiled.burn_flex_path
    assert path((512, 1, 8, 8), (8, 1, 3, 3), padding=(1, 1)) == "small-channel"
    assert path((1, 64, 8, 8), (32, 64, 1, 1)) == "1x1"
    assert path((1, 64, 8, 8), (32, 64, 1, 1), padding=(1, 1)) == "tiled im2col + gemm"
    assert path((1, 8, 8, 8), (8, 1, 3, 3), groups=8) == "depthwise"
    assert path((1, 1, 8, 8), (1, 1, 3, 3)) == "depthwise"  # checked before small-channel
    assert path((1, 4, 8, 8), (16, 4, 3, 3)) == "small-channel"
    assert path((1, 5, 8, 8), (16, 5, 3, 3)) == "tiled im2col + gemm"
    assert path((1, 4, 8, 8), (17, 4, 3, 3)) == "tiled im2col + gemm"
    assert path((1, 4, 8, 8), (8, 2, 3, 3), groups=2) == "tiled im2col + gemm"
    assert path((1, 32, 1, 100), (8, 32, 1, 3)) == "direct"
    assert path((1, 32, 1, 100), (8, 32, 1, 3), padding=(0, 1)) == "tiled im2col + gemm"


def test_best_seconds_keeps_the_best_round():
    calls = []
    best = conv_tiled.best_seconds({"a": lambda: calls.append("a"),
                                    "b": lambda: calls.append("b")}, rounds=3, pause=0)
    assert calls == ["a", "b"] * 4  # a warm-up each, then alternating rounds
    assert set(best) == {"a", "b"} and all(0 <= t < 0.1 for t in best.values())
