"""``minidl_book.conv_swap``: the tiles drawn after the swap are where
``swap_dims(0, 1)`` puts each plane (a plane holding 10 n + channel)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from minidl import Device, Tensor  # noqa: E402
from minidl_book.conv_swap import draw_swap  # noqa: E402


@pytest.mark.parametrize("n, c, o", [(2, 2, 2), (3, 2, 1), (1, 3, 2)])
def test_the_drawn_tiles_are_swap_dims(n, c, o, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda: None)
    drawn = draw_swap(n, c, o, stride=2, dilation=1)
    for name, second in (("x", c), ("g", o)):
        planes = np.add.outer(10 * np.arange(n), np.arange(second))  # [n, second]
        t = Tensor.from_numpy(planes[:, :, None, None].astype(np.float32), Device.flex())
        swapped = t.swap_dims(0, 1).to_numpy()[:, :, 0, 0]  # [second, n]
        labels = drawn[name]  # [second][n] of (n, channel)
        assert labels.shape == (second, n, 2)
        assert np.array_equal(swapped, 10 * labels[..., 0] + labels[..., 1])
