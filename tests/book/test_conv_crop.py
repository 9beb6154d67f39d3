"""``minidl_book.conv_crop``: the crop drawn is the full transposed conv without the
padding's ring, and it is PyTorch's ``x.grad`` of the padded conv."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from minidl_book import conv_crop  # noqa: E402


@pytest.mark.parametrize("pad", [1, 2])
def test_the_drawn_crop_is_torchs_input_gradient(monkeypatch, pad):
    monkeypatch.setattr(conv_crop.plt, "show", lambda: None)
    rng = np.random.default_rng(pad)
    w = rng.integers(-2, 3, (3, 3)).astype(np.float32)
    x = torch.zeros(1, 1, 4, 5, requires_grad=True)
    y = torch.nn.functional.conv2d(x, torch.tensor(w)[None, None], padding=pad)
    g = rng.integers(-2, 3, y.shape[2:]).astype(np.float32)
    (y * torch.tensor(g)).sum().backward()
    full = torch.nn.functional.conv_transpose2d(torch.tensor(g)[None, None],
                                                torch.tensor(w)[None, None])[0, 0]
    assert full.shape == (g.shape[0] + 2, g.shape[1] + 2)  # k - 1 more each way
    kept = conv_crop.draw_transpose_crop(g, w, full.numpy(), pad)
    assert kept.shape == (4, 5)
    assert np.array_equal(kept, x.grad.numpy()[0, 0])


def test_crop_drops_pad_rows_and_columns_each_side():
    full = np.arange(42).reshape(6, 7)
    assert np.array_equal(conv_crop.crop(full, 1), full[1:5, 1:6])
    assert conv_crop.crop(full, 2).shape == (2, 3)
    assert np.array_equal(conv_crop.crop(full, 0), full)
