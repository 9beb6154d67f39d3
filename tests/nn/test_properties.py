"""Properties (hypothesis): Same padding keeps ceil(size / stride) positions with the odd pad at
the end, Linear is ``x @ W + b`` for any shape, conv configs round-trip through JSON."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backend.options import ConvOptions
from minidl.dispatch import Device
from minidl.nn import Conv2dConfig, Initializer, LinearConfig, PaddingConfig2d
from minidl.nn.padding import same_padding

from .support import T, arr

SETTINGS = settings(deadline=None, max_examples=25)
PLAIN = Device.ndarray()


@SETTINGS
@given(kernel=st.integers(1, 6), stride=st.integers(1, 3), size=st.integers(1, 20), dilation=st.integers(1, 3))
def test_same_padding_keeps_ceil_size_over_stride_and_pads_the_end_more(kernel, stride, size, dilation):
    start, end = same_padding(kernel, stride, size, dilation)
    assert 0 <= end - start <= 1
    span = dilation * (kernel - 1) + 1
    out = (size + start + end - span) // stride + 1
    assert out == -(-size // stride)


def test_padding_pads_share_conv_options_order():
    """``PaddingConfig2d.pads`` and ``ConvOptions.pads`` answer in one order, (top, bottom,
    left, right) (burn's ``((top, bottom), (left, right))``); ``Explicit`` keeps burn's field
    order (top, left, bottom, right)."""
    assert PaddingConfig2d.Explicit(1, 2, 3, 4).pads(9, 9, (3, 3), (1, 1)) == (1, 3, 2, 4)
    same = PaddingConfig2d.Same.pads(6, 7, (4, 3), (1, 1))  # height: 1 + 2, width: 1 + 1
    assert same == (1, 2, 1, 1)
    top, bottom, left, right = same
    assert ConvOptions(padding=(top, left), padding_end=(bottom, right)).pads == same


@SETTINGS
@given(kh=st.integers(1, 4), kw=st.integers(1, 4), stride=st.integers(1, 2), h=st.integers(2, 9), w=st.integers(2, 9))
def test_conv2d_same_output_size(kh, kw, stride, h, w):
    conv = (Conv2dConfig((1, 2), (kh, kw)).with_stride((stride, stride))
            .with_padding(PaddingConfig2d.Same).init(PLAIN))
    out = conv(T(np.ones((1, 1, h, w)), PLAIN))
    assert out.shape == (1, 2, -(-h // stride), -(-w // stride))


@SETTINGS
@given(lead=st.lists(st.integers(1, 3), min_size=0, max_size=2), d_in=st.integers(1, 6), d_out=st.integers(1, 6),
       seed=st.integers(0, 1000))
def test_linear_is_x_at_weight_plus_bias(lead, d_in, d_out, seed):
    layer = LinearConfig(d_in, d_out).init(PLAIN)
    x = np.random.default_rng(seed).standard_normal((*lead, d_in)).astype(np.float32)
    out = arr(layer(T(x, PLAIN)))
    expected = x @ arr(layer.weight.val()) + arr(layer.bias.val())
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


pads = st.one_of(st.just(PaddingConfig2d.Valid), st.just(PaddingConfig2d.Same),
                 st.tuples(*[st.integers(0, 3)] * 4).map(lambda p: PaddingConfig2d.Explicit(*p)))
inits = st.one_of(st.just(Initializer.Zeros), st.floats(-2, 2).map(Initializer.Constant),
                  st.floats(0.1, 3).map(lambda g: Initializer.XavierUniform(gain=g)))


@SETTINGS
@given(c=st.tuples(st.integers(1, 8), st.integers(1, 8)), k=st.tuples(st.integers(1, 5), st.integers(1, 5)),
       padding=pads, init=inits, bias=st.booleans())
def test_conv2d_config_round_trips(c, k, padding, init, bias):
    cfg = Conv2dConfig(c, k).with_padding(padding).with_initializer(init).with_bias(bias)
    assert Conv2dConfig.from_json(cfg.to_json()) == cfg
