"""Module ops with a dedicated Autodiff step (conv1d/2d, conv_transpose2d, pools, interpolate,
embedding, linear): values and gradients against torch on random options."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ad_helpers import INNER, ad, leaf, value, weighted_loss
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.autodiff import graph
from minidl.backend import ConvOptions, ConvTransposeOptions, InterpolateOptions, PoolOptions

SETTINGS = settings(max_examples=12, deadline=None)


def compare(AD, ours_fn, theirs_fn, arrays, tracked=None, rng=None):
    """Run both sides on float32 copies of ``arrays``; compare values and every gradient."""
    rng = rng or np.random.default_rng(0)
    tracked = tracked or [True] * len(arrays)
    arrays = [a.astype(np.float32) for a in arrays]
    leaves = [leaf(AD, a, grad=g) for a, g in zip(arrays, tracked)]
    out = ours_fn(*leaves)
    weights = rng.standard_normal(out.shape)
    grads = AD.backward(weighted_loss(AD, out, weights))

    theirs_in = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, tracked)]
    theirs = theirs_fn(*theirs_in)
    (theirs * torch.from_numpy(weights).float()).sum().backward()

    np.testing.assert_allclose(value(AD, out), theirs.detach().numpy(), rtol=1e-5, atol=1e-5)
    for ours_leaf, torch_in, g in zip(leaves, theirs_in, tracked):
        if g:
            np.testing.assert_allclose(AD.grad(ours_leaf, grads), torch_in.grad.numpy(), rtol=1e-5, atol=1e-5)
        else:
            assert AD.grad(ours_leaf, grads) is None
    return out


@st.composite
def conv2d_setup(draw):
    groups = draw(st.sampled_from([1, 2]))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))  # top, left, bottom, right
    h = draw(st.integers(max(1, dilation[0] * (kernel[0] - 1) + 1 - pads[0] - pads[2]), 6))
    w = draw(st.integers(max(1, dilation[1] * (kernel[1] - 1) + 1 - pads[1] - pads[3]), 6))
    options = ConvOptions(stride=stride, padding=pads[:2], dilation=dilation, groups=groups, padding_end=pads[2:])
    return (draw(st.integers(1, 2)), c_in, h, w), (c_out, c_in // groups, *kernel), options, draw(st.booleans())


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(setup=conv2d_setup(), seed=st.integers(0, 2**31))
def test_conv2d_gradients_match_torch(inner, setup, seed):
    AD = ad(inner)
    x_shape, w_shape, options, with_bias = setup
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    if with_bias:
        arrays.append(rng.standard_normal(w_shape[0]))
    top, bottom, left, right = options.pads

    def theirs(x, w, b=None):
        return F.conv2d(F.pad(x, (left, right, top, bottom)), w, b, options.stride, 0, options.dilation, options.groups)

    out = compare(AD, lambda x, w, b=None: AD.conv2d(x, w, b, options), theirs, arrays, rng=rng)
    assert graph(out).ops[0] == ("Conv2dWithBias" if with_bias else "Conv2dNoBias")


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(seed=st.integers(0, 2**31), stride=st.integers(1, 2), padding=st.integers(0, 2),
       padding_end=st.integers(0, 2), dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]))
def test_conv1d_gradients_match_torch(inner, seed, stride, padding, padding_end, dilation, groups):
    AD = ad(inner)
    rng = np.random.default_rng(seed)
    c_in, c_out, k = 2 * groups, 2 * groups, 3
    length = dilation * (k - 1) + 1 + int(rng.integers(0, 4))
    arrays = [rng.standard_normal((2, c_in, length)), rng.standard_normal((c_out, c_in // groups, k)),
              rng.standard_normal(c_out)]

    def theirs(x, w, b):
        return F.conv1d(F.pad(x, (padding, padding_end)), w, b, stride, 0, dilation, groups)

    out = compare(AD, lambda x, w, b: AD.conv1d(x, w, b, stride, padding, dilation, groups, padding_end),
                  theirs, arrays, rng=rng)
    assert graph(out).ops == ["Conv1dWithBias"]


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(seed=st.integers(0, 2**31), stride=st.integers(1, 3), padding=st.integers(0, 1),
       dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]), with_bias=st.booleans(), data=st.data())
def test_conv_transpose2d_gradients_match_torch(inner, seed, stride, padding, dilation, groups, with_bias, data):
    AD = ad(inner)
    rng = np.random.default_rng(seed)
    padding_out = data.draw(st.integers(0, stride - 1), label="padding_out")
    c_in, c_out_per_group = 2 * groups, int(rng.integers(1, 3))
    arrays = [rng.standard_normal((2, c_in, 3, 4)), rng.standard_normal((c_in, c_out_per_group, 2, 3))]
    if with_bias:
        arrays.append(rng.standard_normal(c_out_per_group * groups))
    options = ConvTransposeOptions(stride=stride, padding=padding, padding_out=padding_out, dilation=dilation,
                                   groups=groups)

    def theirs(x, w, b=None):
        return F.conv_transpose2d(x, w, b, stride, padding, padding_out, groups, dilation)

    out = compare(AD, lambda x, w, b=None: AD.conv_transpose2d(x, w, b, options), theirs, arrays, rng=rng)
    assert graph(out).ops == ["ConvTranspose2dWithBias" if with_bias else "ConvTranspose2dNoBias"]


@st.composite
def pool_setup(draw, dilation: bool):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2)))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if dilation else (1, 1)
    h = draw(st.integers(dil[0] * (kernel[0] - 1) + 1, 7))
    w = draw(st.integers(dil[1] * (kernel[1] - 1) + 1, 7))
    options = PoolOptions(kernel, stride, padding, dil, count_include_pad=draw(st.booleans()))
    return (2, 3, h, w), options


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(setup=pool_setup(dilation=True), seed=st.integers(0, 2**31))
def test_max_pool2d_gradients_match_torch(inner, setup, seed):
    AD = ad(inner)
    shape, o = setup
    rng = np.random.default_rng(seed)
    out = compare(AD, lambda x: AD.max_pool2d(x, o),
                  lambda x: F.max_pool2d(x, o.kernel_size, o.stride, o.padding, o.dilation),
                  [rng.standard_normal(shape)], rng=rng)
    assert graph(out).ops == ["MaxPool2d"]


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(setup=pool_setup(dilation=False), seed=st.integers(0, 2**31))
def test_avg_pool2d_gradients_match_torch(inner, setup, seed):
    AD = ad(inner)
    shape, o = setup
    rng = np.random.default_rng(seed)
    out = compare(AD, lambda x: AD.avg_pool2d(x, o),
                  lambda x: F.avg_pool2d(x, o.kernel_size, o.stride, o.padding, count_include_pad=o.count_include_pad),
                  [rng.standard_normal(shape)], rng=rng)
    assert graph(out).ops == ["AvgPool2d"]


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(h=st.integers(1, 7), w=st.integers(1, 7), oh=st.integers(1, 4), ow=st.integers(1, 4),
       seed=st.integers(0, 2**31))
def test_adaptive_avg_pool2d_gradients_match_torch(inner, h, w, oh, ow, seed):
    AD = ad(inner)
    rng = np.random.default_rng(seed)
    compare(AD, lambda x: AD.adaptive_avg_pool2d(x, (oh, ow)), lambda x: F.adaptive_avg_pool2d(x, (oh, ow)),
            [rng.standard_normal((2, 2, h, w))], rng=rng)


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(h=st.integers(1, 5), w=st.integers(1, 5), oh=st.integers(1, 8), ow=st.integers(1, 8),
       mode=st.sampled_from(["nearest", "bilinear"]), seed=st.integers(0, 2**31))
def test_interpolate_gradients_match_torch(inner, h, w, oh, ow, mode, seed):
    AD = ad(inner)
    rng = np.random.default_rng(seed)
    extra = {"align_corners": False} if mode == "bilinear" else {}
    out = compare(AD, lambda x: AD.interpolate(x, (oh, ow), InterpolateOptions(mode)),
                  lambda x: F.interpolate(x, size=(oh, ow), mode=mode, **extra),
                  [rng.standard_normal((2, 2, h, w))], rng=rng)
    assert graph(out).ops == ["Interpolate"]


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(n=st.integers(1, 6), d=st.integers(1, 4), index_shape=st.lists(st.integers(1, 3), min_size=1, max_size=2),
       seed=st.integers(0, 2**31))
def test_embedding_gradients_match_torch(inner, n, d, index_shape, seed):
    AD = ad(inner)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n, index_shape).astype(np.int64)
    out = compare(AD, lambda wt: AD.embedding(wt, indices), lambda wt: F.embedding(torch.from_numpy(indices), wt),
                  [rng.standard_normal((n, d))], rng=rng)
    assert graph(out).ops == ["Embedding"]


@pytest.mark.parametrize("inner", INNER)
@SETTINGS
@given(lead=st.lists(st.integers(1, 3), min_size=1, max_size=3), d_in=st.integers(1, 5), d_out=st.integers(1, 5),
       with_bias=st.booleans(), tracked=st.lists(st.booleans(), min_size=3, max_size=3), seed=st.integers(0, 2**31))
def test_linear_step_gradients_match_torch(inner, lead, d_in, d_out, with_bias, tracked, seed):
    """``Autodiff[B].linear`` called directly: one step, gradients as torch's (W is [d_in, d_out])."""
    AD = ad(inner)
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((*lead, d_in)), rng.standard_normal((d_in, d_out))]
    if with_bias:
        arrays.append(rng.standard_normal(d_out))
    tracked = tracked[: len(arrays)]
    if not any(tracked):
        tracked[0] = True

    def theirs(x, w, b=None):
        return F.linear(x, w.T, b)

    out = compare(AD, lambda x, w, b=None: AD.linear(x, w, b), theirs, arrays, tracked=tracked, rng=rng)
    assert graph(out).ops == ["LinearWithBias" if with_bias else "LinearNoBias"]
