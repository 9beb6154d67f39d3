"""Initializer: burn's formulas, the bounds of the nn-modules chapter's init experiment, the statistics of
every kind, the no-fan errors, reproducibility and draw order (lazy init)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minidl.dispatch import Device
from minidl.module import Initializer
from minidl.module.initializer import KAIMING_NO_FAN, XAVIER_NO_FAN
from minidl.nn import Conv2dConfig, LayerNormConfig, LinearConfig

from .support import arr, plain_device

N = 200_000  # draws for the statistics tests


def test_linear_256_64_weight_and_bias_stay_inside_one_sixteenth(kind):
    device = plain_device(kind)
    device.seed(1)
    linear = LinearConfig(256, 64).init(device)
    weight, bias = arr(linear.weight.val()), arr(linear.bias.val())
    bound = 1 / math.sqrt(256)
    assert bound == 0.0625
    assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
    assert np.abs(weight).max() >= 0.99 * bound  # 16384 draws reach the bound
    # only 64 bias draws: P(max < 0.9 * bound) = 0.9 ** 64 ~ 1e-3 — reaching within 1% would
    # fail about half the time, so check 10%
    assert np.abs(bias).max() >= 0.9 * bound


def test_conv2d_3_8_3x3_weight_stays_inside_one_over_sqrt_27(kind):
    device = plain_device(kind)
    device.seed(1)
    conv = Conv2dConfig((3, 8), (3, 3)).init(device)
    weight = arr(conv.weight.val())
    assert weight.shape == (8, 3, 3, 3)
    bound = 1 / math.sqrt(27)
    assert np.abs(weight).max() <= bound
    assert np.abs(weight).max() >= 0.95 * bound
    assert np.abs(arr(conv.bias.val())).max() <= bound


def test_conv2d_fan_in_divides_by_groups():
    conv = Conv2dConfig((4, 8), (3, 3)).with_groups(2).init(Device.ndarray())
    weight = arr(conv.weight.val())
    assert weight.shape == (8, 2, 3, 3)
    bound = 1 / math.sqrt(2 * 9)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 1 / math.sqrt(4 * 9)


def test_xavier_uniform_gain_one_on_linear_256_64_stays_inside_sqrt_6_over_320(kind):
    device = plain_device(kind)
    device.seed(1)
    linear = LinearConfig(256, 64).with_initializer(Initializer.XavierUniform(gain=1.0)).init(device)
    weight = arr(linear.weight.val())
    bound = math.sqrt(6 / 320)
    assert np.abs(weight).max() <= bound
    assert np.abs(weight).max() >= 0.99 * bound


def test_layer_norm_ignores_initializers_gamma_ones_beta_zeros():
    norm = LayerNormConfig(4).init(Device.ndarray())
    np.testing.assert_array_equal(arr(norm.gamma.val()), np.ones(4, np.float32))
    np.testing.assert_array_equal(arr(norm.beta.val()), np.zeros(4, np.float32))


def _draw(init: Initializer, fan_in=None, fan_out=None, shape=(N,)) -> np.ndarray:
    device = Device.ndarray()
    device.seed(7)
    return arr(init.init_with(shape, fan_in, fan_out, device).val()).astype(np.float64)


def _check_moments(values: np.ndarray, mean: float, var: float) -> None:
    std = math.sqrt(var)
    assert abs(values.mean() - mean) <= 5 * std / math.sqrt(values.size) + 1e-12
    assert values.var() == pytest.approx(var, rel=0.03)


@pytest.mark.parametrize("init, fan_in, fan_out, mean, var", [
    (Initializer.Uniform(-1.0, 3.0), None, None, 1.0, 16 / 12),
    (Initializer.Normal(mean=2.0, std=0.5), None, None, 2.0, 0.25),
    (Initializer.KaimingUniform(gain=2.0, fan_out_only=False), 50, 10, 0.0, 4.0 / 50),
    (Initializer.KaimingUniform(gain=1.0, fan_out_only=True), 50, 10, 0.0, 1.0 / 10),
    (Initializer.KaimingNormal(gain=2.0, fan_out_only=False), 50, 10, 0.0, 4.0 / 50),
    (Initializer.KaimingNormal(gain=1.0, fan_out_only=True), 50, 10, 0.0, 1.0 / 10),
    (Initializer.XavierUniform(gain=1.5), 30, 70, 0.0, 2.25 * 2 / 100),
    (Initializer.XavierNormal(gain=1.5), 30, 70, 0.0, 2.25 * 2 / 100),
], ids=lambda v: v.variant if isinstance(v, Initializer) else None)
def test_each_kind_matches_its_mean_and_variance(init, fan_in, fan_out, mean, var):
    values = _draw(init, fan_in, fan_out)
    _check_moments(values, mean, var)
    if init.variant in ("Uniform", "KaimingUniform", "XavierUniform"):
        a = init.bound(fan_in, fan_out)
        lo, hi = (init.min, init.max) if init.variant == "Uniform" else (-a, a)
        assert values.min() >= lo and values.max() <= hi


@pytest.mark.parametrize("init, value", [
    (Initializer.Constant(0.25), 0.25), (Initializer.Ones, 1.0), (Initializer.Zeros, 0.0)])
def test_constant_kinds_fill_every_element(init, value):
    np.testing.assert_array_equal(_draw(init, shape=(3, 4)), np.full((3, 4), value))


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (8, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal_times_gain(shape):
    q = _draw(Initializer.Orthogonal(gain=2.0), shape=shape).reshape(shape[0], -1)
    rows, cols = q.shape
    gram = q.T @ q if rows >= cols else q @ q.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-5)


def test_kaiming_without_fan_raises_burns_message():
    with pytest.raises(ValueError) as err:
        Initializer.KaimingUniform(gain=1.0, fan_out_only=False).init([2, 3], Device.ndarray())
    assert str(err.value) == "Can't use Kaiming initialization without specifying fan. Use init_with method."
    assert str(err.value) == KAIMING_NO_FAN
    with pytest.raises(ValueError, match="Kaiming"):
        Initializer.KaimingNormal(gain=1.0, fan_out_only=True).init_with([2], 5, None, Device.ndarray())


def test_xavier_without_fan_raises_the_same_message_with_xavier():
    for fans in [(None, None), (3, None), (None, 3)]:
        with pytest.raises(ValueError) as err:
            Initializer.XavierUniform(gain=1.0).init_with([2, 3], *fans, Device.ndarray())
        assert str(err.value) == XAVIER_NO_FAN
        assert str(err.value) == "Can't use Xavier initialization without specifying fan. Use init_with method."


def test_the_same_seed_gives_the_same_weights(kind):
    device = plain_device(kind)
    device.seed(123)
    a = arr(LinearConfig(8, 4).init(device).weight.val())
    device.seed(123)
    b = arr(LinearConfig(8, 4).init(device).weight.val())
    np.testing.assert_array_equal(a, b)


def test_draws_happen_in_the_order_of_first_val_not_of_creation():
    device = Device.ndarray()
    init = Initializer.Uniform(-1.0, 1.0)
    device.seed(5)
    first, second = init.init([16], device), init.init([16], device)
    a_first = arr(first.val())
    device.seed(5)
    first, second = init.init([16], device), init.init([16], device)
    b_second = arr(second.val())  # initialized first this time: it gets the first draw
    np.testing.assert_array_equal(a_first, b_second)


def test_params_want_grad_and_track_it_on_an_autodiff_device():
    plain = Initializer.Ones.init([2], Device.ndarray())
    assert plain.require_grad and not plain.val().is_require_grad()
    tracked = Initializer.Ones.init([2], Device.ndarray().autodiff())
    assert tracked.val().is_require_grad()
