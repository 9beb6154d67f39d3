"""Functional layer ops (burn-tensor's module.rs) against torch.nn.functional: linear, convs,
pools, embedding, norms, interpolate, attention; and their argument checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from minidl import TensorCheckError, TensorKindError
from minidl import functional as F

from .support import T, close, ints, randn, tt


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_uses_d_input_by_d_output_weights(device, shape, with_bias):
    a, w, b = randn(shape, 81), randn((4, 5), 82), randn((5,), 83)
    out = F.linear(T(a, device), T(w, device), T(b, device) if with_bias else None)
    # torch's weight is [d_output, d_input]: pass the transpose
    expected = TF.linear(tt(a), tt(w).T, tt(b) if with_bias else None)
    close(out, expected, atol=1e-5)


def test_linear_errors(plain):
    with pytest.raises(TensorCheckError) as err:
        F.linear(T(randn((2, 5)), plain), T(randn((4, 3)), plain))
    text = str(err.value)
    assert "Operation: 'linear'" in text and "[.., 4]" in text and "found [2, 5]" in text
    with pytest.raises(TensorCheckError, match="bias must have shape \\[d_output\\].*\\[3\\].*\\[4\\]"):
        F.linear(T(randn((2, 4)), plain), T(randn((4, 3)), plain), T(randn((4,)), plain))
    with pytest.raises(TensorKindError, match="input must be a Float tensor"):
        F.linear(T(ints((2, 4), 0, 3), plain), T(randn((4, 3)), plain))


CONV2D_CASES = [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
    dict(stride=1, padding=(0, 2, 1, 0), dilation=1, groups=1),  # (top, bottom, left, right)
    dict(stride=(1, 3), padding=(2, 1, 0, 3), dilation=(2, 1), groups=4),
    dict(stride=1, padding="same", dilation=2, groups=1),
]


@pytest.mark.parametrize("case", CONV2D_CASES, ids=[str(i) for i in range(len(CONV2D_CASES))])
def test_conv2d_matches_torch(device, case):
    groups = case["groups"]
    x, w, b = randn((2, 4, 9, 8), 84), randn((8, 4 // groups, 3, 2), 85), randn((8,), 86)
    out = F.conv2d(T(x, device), T(w, device), T(b, device), **case)
    padding = case["padding"]
    tx = tt(x)
    if isinstance(padding, tuple) and len(padding) == 4:
        top, bottom, left, right = padding
        tx, padding = TF.pad(tx, (left, right, top, bottom)), 0
    expected = TF.conv2d(tx, tt(w), tt(b), stride=case["stride"], padding=padding,
                         dilation=case["dilation"], groups=groups)
    close(out, expected, rtol=1e-4, atol=1e-5)


def test_conv2d_on_a_non_contiguous_input(device):
    x, w = randn((2, 3, 6, 7), 87), randn((4, 3, 3, 3), 88)
    view = T(x, device).swap_dims(2, 3)  # [2, 3, 7, 6], not contiguous
    close(F.conv2d(view, T(w, device)), TF.conv2d(tt(x).transpose(2, 3), tt(w)), rtol=1e-4, atol=1e-5)


def test_conv2d_checks_channels_groups_and_sizes(plain):
    x = T(randn((2, 4, 5, 5)), plain)
    with pytest.raises(TensorCheckError) as err:
        F.conv2d(x, T(randn((6, 3, 3, 3)), plain), groups=1)
    text = str(err.value)
    assert "Operation: 'conv2d'" in text and "input channels" in text and "found 4" in text
    with pytest.raises(TensorCheckError, match="must have 4 dims"):
        F.conv2d(T(randn((4, 5, 5)), plain), T(randn((6, 4, 3, 3)), plain))
    with pytest.raises(TensorCheckError, match="one value per output channel.*\\[6\\].*\\[4\\]"):
        F.conv2d(x, T(randn((6, 4, 3, 3)), plain), T(randn((4,)), plain))
    with pytest.raises(TensorCheckError, match="smaller than the \\(dilated\\) kernel"):
        F.conv2d(x, T(randn((6, 4, 3, 3)), plain), dilation=3)
    with pytest.raises(TensorCheckError, match="divisible by groups"):
        F.conv2d(T(randn((1, 6, 4, 4)), plain), T(randn((4, 2, 1, 1)), plain), groups=3)


@pytest.mark.parametrize(("stride", "padding", "dilation", "groups"), [(1, 0, 1, 1), (2, 1, 2, 2), (3, (2, 0), 1, 1)])
def test_conv1d_matches_torch(device, stride, padding, dilation, groups):
    x, w, b = randn((2, 4, 11), 89), randn((6, 4 // groups, 3), 90), randn((6,), 91)
    out = F.conv1d(T(x, device), T(w, device), T(b, device), stride, padding, dilation, groups)
    tx, pad = tt(x), padding
    if isinstance(padding, tuple):
        tx, pad = TF.pad(tx, padding), 0
    close(out, TF.conv1d(tx, tt(w), tt(b), stride, pad, dilation, groups), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("stride", "padding", "padding_out", "dilation", "groups"),
                         [(1, 0, 0, 1, 1), (2, 1, 1, 1, 2), ((2, 3), (0, 1), (1, 2), (1, 2), 1)])
def test_conv_transpose2d_matches_torch(device, stride, padding, padding_out, dilation, groups):
    x, w, b = randn((2, 4, 5, 4), 92), randn((4, 6 // groups, 3, 2), 93), randn((6,), 94)
    out = F.conv_transpose2d(T(x, device), T(w, device), T(b, device), stride, padding, padding_out,
                             dilation, groups)
    expected = TF.conv_transpose2d(tt(x), tt(w), tt(b), stride, padding, padding_out, groups, dilation)
    close(out, expected, rtol=1e-4, atol=1e-5)


def test_conv_transpose2d_checks(plain):
    with pytest.raises(TensorCheckError, match="weight.shape\\[0\\]"):
        F.conv_transpose2d(T(randn((1, 3, 4, 4)), plain), T(randn((4, 2, 3, 3)), plain))


@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation"), [(2, None, 0, 1), (3, 2, 1, 1), ((3, 2), (1, 2), (1, 0), (2, 1))])
def test_max_pool2d_matches_torch(device, kernel, stride, padding, dilation):
    x = randn((2, 3, 9, 8), 95)
    out = F.max_pool2d(T(x, device), kernel, stride, padding, dilation)
    expected, indices = TF.max_pool2d(tt(x), kernel, stride, padding, dilation, return_indices=True)
    close(out, expected)
    out, idx = F.max_pool2d_with_indices(T(x, device), kernel, stride, padding, dilation)
    close(out, expected)
    close(idx, indices)


@pytest.mark.parametrize(("kernel", "stride", "padding", "include"), [(2, None, 0, True), (3, 2, 1, True), (3, (2, 1), 1, False)])
def test_avg_pool2d_matches_torch(device, kernel, stride, padding, include):
    x = randn((2, 3, 8, 7), 96)
    out = F.avg_pool2d(T(x, device), kernel, stride, padding, count_include_pad=include)
    close(out, TF.avg_pool2d(tt(x), kernel, stride, padding, count_include_pad=include), atol=1e-6)


@pytest.mark.parametrize("size", [(1, 1), (3, 2), (4, 5)])
def test_adaptive_avg_pool2d_matches_torch(device, size):
    x = randn((2, 3, 7, 9), 97)
    close(F.adaptive_avg_pool2d(T(x, device), size), TF.adaptive_avg_pool2d(tt(x), size), atol=1e-6)


def test_pool_checks(plain):
    x = T(randn((2, 3, 4, 4)), plain)
    with pytest.raises(TensorCheckError, match="at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(TensorCheckError, match="must have 4 dims"):
        F.avg_pool2d(T(randn((3, 4, 4)), plain), 2)
    with pytest.raises(TensorCheckError, match="smaller than the \\(dilated\\) kernel"):
        F.max_pool2d(x, 5)


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("size", [(8, 6), (3, 2)])
def test_interpolate_matches_torch(device, mode, size):
    x = randn((2, 3, 5, 4), 98)
    expected = TF.interpolate(tt(x), size=size, mode=mode, **({"align_corners": False} if mode == "bilinear" else {}))
    close(F.interpolate(T(x, device), size, mode), expected, atol=1e-5)


def test_embedding_matches_torch(device):
    w, idx = randn((10, 4), 99), ints((2, 3), 0, 10)
    close(F.embedding(T(w, device), T(idx, device)), TF.embedding(tt(idx), tt(w)))
    with pytest.raises(TensorKindError, match="indices must be an Int tensor"):
        F.embedding(T(w, device), T(idx.astype(np.float32), device))


def test_layer_norm_matches_torch(device):
    x, g, b = randn((2, 3, 6), 100, scale=3.0), randn((6,), 101), randn((6,), 102)
    close(F.layer_norm(T(x, device), T(g, device), T(b, device), 1e-5),
          TF.layer_norm(tt(x), (6,), tt(g), tt(b), 1e-5), atol=1e-5)
    close(F.layer_norm(T(x, device), T(g, device)), TF.layer_norm(tt(x), (6,), tt(g)), atol=1e-5)
    with pytest.raises(TensorCheckError, match="gamma must have shape.*\\[6\\].*\\[5\\]"):
        F.layer_norm(T(x, device), T(randn((5,)), device))


def test_batch_norm_with_given_and_batch_statistics(device):
    x = randn((4, 3, 5, 2), 103, scale=2.0)
    g, b, mean, var = randn((3,), 104), randn((3,), 105), randn((3,), 106), np.abs(randn((3,), 107)) + 0.5
    out = F.batch_norm(T(x, device), T(g, device), T(b, device), T(mean, device), T(var, device), 1e-5)
    close(out, TF.batch_norm(tt(x), tt(mean), tt(var), tt(g), tt(b), False, 0.1, 1e-5), atol=1e-5)
    out, batch_mean, batch_var = F.batch_norm_train(T(x, device), T(g, device), T(b, device), 1e-5)
    rm, rv = torch.zeros(3), torch.ones(3)
    close(out, TF.batch_norm(tt(x), rm, rv, tt(g), tt(b), True, 1.0, 1e-5), atol=1e-5)
    close(batch_mean, tt(x).mean((0, 2, 3)), atol=1e-6)
    close(batch_var, tt(x).var((0, 2, 3), correction=0), atol=1e-5)  # biased, as burn
    with pytest.raises(TensorCheckError, match="one value per channel"):
        F.batch_norm(T(x, device), None, None, T(randn((4,)), device), T(var, device))


@pytest.mark.parametrize("with_mask", [False, True])
def test_attention_matches_torch(device, with_mask):
    q, k, v = randn((2, 3, 4, 8), 108), randn((2, 3, 5, 8), 109), randn((2, 3, 5, 6), 110)
    mask = np.zeros((4, 5), bool)
    mask[:, -2:] = True
    mask[0, 0] = True
    out = F.attention(T(q, device), T(k, device), T(v, device), T(mask, device) if with_mask else None)
    # torch's boolean attn_mask marks what takes part: the opposite of burn's
    expected = TF.scaled_dot_product_attention(tt(q), tt(k), tt(v), attn_mask=tt(~mask) if with_mask else None)
    close(out, expected, atol=1e-5)


def test_attention_checks(plain):
    q = T(randn((2, 4, 8)), plain)
    with pytest.raises(TensorCheckError, match="last dim of query and key"):
        F.attention(q, T(randn((2, 5, 7)), plain), T(randn((2, 5, 6)), plain))
    with pytest.raises(TensorKindError, match="mask must be a Bool tensor"):
        F.attention(q, q, q, T(randn((4, 4)), plain))


def test_functional_ops_surface_device_mismatches_from_dispatch(plain):
    from minidl import Device

    x = T(randn((1, 2, 4, 4)), plain)
    w = T(randn((3, 2, 3, 3)), Device.ndarray(1))
    with pytest.raises(ValueError, match="conv2d: Input tensor weight is on the wrong device"):
        F.conv2d(x, w)


def test_conv2d_names_every_padding_form_it_accepts(plain):
    x, w = T(randn((1, 2, 5, 5)), plain), T(randn((3, 2, 3, 3)), plain)
    with pytest.raises(TensorCheckError, match="\\(top, bottom, left, right\\), 'valid' or 'same'.*\\(1, 2, 3\\)"):
        F.conv2d(x, w, padding=(1, 2, 3))
    close(F.conv2d(x, w, padding="valid"), TF.conv2d(tt(randn((1, 2, 5, 5))), tt(randn((3, 2, 3, 3)))), atol=1e-5)
