"""``minidl_book.conv_map``: the map's products are PyTorch's forward and gradients, its
conv sizes and padding_out the ones that reproduce them, and the 1-D tap table is the
conv's matrix read as taps."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as tf  # noqa: E402

from minidl_book import conv_map  # noqa: E402


@pytest.mark.parametrize("h, k, stride, padding", [(7, 2, 3, 0), (7, 2, 3, 1),
                                                    (8, 3, 2, 1), (5, 3, 1, 1)])
def test_the_map_is_torchs_forward_and_gradients(monkeypatch, h, k, stride, padding):
    monkeypatch.setattr(conv_map.plt, "show", lambda: None)
    rng = np.random.default_rng(h + k + stride)
    x = rng.integers(-3, 4, (h, h + 1)).astype(np.float32)
    w = rng.integers(-2, 3, (k, k)).astype(np.float32)
    tx = torch.tensor(x)[None, None].requires_grad_()
    tw = torch.tensor(w)[None, None].requires_grad_()
    y = tf.conv2d(tx, tw, stride=stride, padding=padding)
    g = rng.integers(-2, 3, y.shape[2:]).astype(np.float32)
    (y * torch.tensor(g)).sum().backward()
    m = conv_map.conv_map(x, w, g, stride, padding)
    conv_map.draw_conv_map(m)
    assert np.array_equal(m.out, y.detach().numpy()[0, 0])
    assert np.array_equal(m.d_w, tw.grad.numpy()[0, 0])
    assert np.array_equal(m.d_x, tx.grad.numpy()[0, 0])
    swapped = tf.conv2d(tx.detach(), torch.tensor(g)[None, None], dilation=stride,
                        padding=padding)[0, 0]
    assert tuple(swapped.shape) == m.weight_conv
    assert np.array_equal(swapped[:k, :k].numpy(), m.d_w)
    assert 0 <= m.padding_out < stride  # PyTorch's own limit for output_padding
    po_w = h + 1 + 2 * padding - ((g.shape[1] - 1) * stride + k)  # the columns'
    t = tf.conv_transpose2d(torch.tensor(g)[None, None], tw.detach(), stride=stride,
                            padding=padding, output_padding=(m.padding_out, po_w))
    assert np.array_equal(t.numpy()[0, 0], m.d_x)


def test_padding_out_and_covered_rows_of_the_pages_case():
    x = np.arange(1, 50, dtype=np.float32).reshape(7, 7)
    m = conv_map.conv_map(x, np.ones((2, 2)), np.ones((2, 2)), 3)
    assert (m.covered, m.padding_out, m.weight_conv) == (5, 2, (4, 4))
    assert m.patches.shape == (4, 4) and m.cols.shape == (4, 4)
    m8 = conv_map.conv_map(np.ones((8, 8)), np.ones((2, 2)), np.ones((3, 3)), 3)
    assert (m8.padding_out, m8.weight_conv) == (0, (2, 2))


@pytest.mark.parametrize("n, k, stride", [(7, 4, 3), (7, 2, 3), (9, 3, 2), (5, 1, 1)])
def test_tap_table_is_the_conv_matrix(n, k, stride):
    w = torch.tensor([10.0 ** t for t in range(k)])[None, None]  # tap t reads 10^t
    units = torch.eye(n)[:, None]  # one signal per pixel
    mat = tf.conv1d(units, w, stride=stride)[:, 0].T  # [outputs, pixels]
    taps = conv_map.tap_table(n, k, stride)
    want = np.where(mat.numpy() > 0, np.log10(np.maximum(mat.numpy(), 1)), -1)
    assert np.array_equal(taps, np.rint(want).astype(int))


def test_drawn_taps_reverse_down_a_shared_column(monkeypatch):
    monkeypatch.setattr(conv_map.plt, "show", lambda: None)
    taps = conv_map.draw_taps_1d(7, 4, 3)
    assert taps[:, 3].tolist() == [3, 0]  # pixel 3: w3 from out 0, w0 from out 1
    assert taps.tolist()[0][:4] == [0, 1, 2, 3] and taps[1, :3].tolist() == [-1] * 3


@pytest.mark.parametrize("n, k, s, d, p", [(7, 3, 2, 1, 1), (8, 3, 2, 2, 2),
                                           (6, 2, 1, 3, 1), (7, 4, 3, 1, 0)])
def test_tap_table_is_the_index_identity(n, k, s, d, p):
    # out[a] = sum_i x[s a + d i - p] w[i]: PyTorch's conv1d, one pixel at a time
    w = torch.tensor([10.0 ** t for t in range(k)])[None, None]
    mat = tf.conv1d(torch.eye(n)[:, None], w, stride=s, dilation=d, padding=p)[:, 0].T
    want = np.where(mat.numpy() > 0, np.log10(np.maximum(mat.numpy(), 1)), -1)
    assert np.array_equal(conv_map.tap_table(n, k, s, d, p), np.rint(want).astype(int))


def test_drawn_strip_is_its_padded_tap_table(monkeypatch):
    monkeypatch.setattr(conv_map.plt, "show", lambda: None)
    taps = conv_map.draw_taps_1d(7, 3, 2, padding=1)
    assert np.array_equal(taps, conv_map.tap_table(7, 3, 2, 1, 1))
    assert taps[:, 1].tolist() == [2, 0, -1, -1]  # x[1]: w[2] for out 0, w[0] for out 1
