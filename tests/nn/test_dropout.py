"""Dropout: the three conditions (flag on, autodiff input, prob != 0). The nn-modules chapter's six-line
puzzle and the train-vs-inference chapter's eight-line table must give burn's pattern: either no element
dropped (max 1) or about half (max 2)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.dispatch import Device
from minidl.nn import BatchNormConfig, DropoutConfig, LinearConfig, Sequential
from minidl.tensor import Tensor

from .support import T, arr, plain_device

N = 10_000
HALF = (N // 2 - 250, N // 2 + 250)  # 5 standard deviations of Binomial(10000, 0.5)


def _zeros_and_max(dropout, device: Device) -> tuple[int, float]:
    out = dropout(Tensor.ones((1, N), device=device))
    values = arr(out)
    return int((values == 0).sum()), float(values.max())


def _assert_pattern(zeros: int, maximum: float, drops: bool) -> None:
    if drops:
        assert HALF[0] <= zeros <= HALF[1] and maximum == 2.0, (zeros, maximum)
    else:
        assert zeros == 0 and maximum == 1.0, (zeros, maximum)


# the nn-modules chapter's puzzle: (label, device kind, autodiff, how the dropout is prepared, drops?)
PUZZLE = [
    ("flex", "flex", False, lambda d: d, False),
    ("flex.autodiff()", "flex", True, lambda d: d, True),
    ("flex.autodiff(), dropout.valid()", "flex", True, lambda d: d.valid(), False),
    ("flex.autodiff(), dropout.freeze()", "flex", True, lambda d: d.freeze(), False),
    ("ndarray", "ndarray", False, lambda d: d, False),  # burn's experiment's "second device kind" (Metal)
    ("ndarray.autodiff()", "ndarray", True, lambda d: d, True),
]


@pytest.mark.parametrize("label, kind, autodiff, prepare, drops", PUZZLE, ids=[p[0] for p in PUZZLE])
def test_dropout_drops_only_on_an_autodiff_device_in_training_mode(label, kind, autodiff, prepare, drops):
    device = plain_device(kind)
    if autodiff:
        device = device.autodiff()
    device.seed(0)
    dropout = prepare(DropoutConfig(0.5).init())
    _assert_pattern(*_zeros_and_max(dropout, device), drops)


# the train-vs-inference chapter's table: (label, prepare, input autodiff?, drops?, training flag)
TABLE = [
    ("fresh, autodiff input", lambda d: d, True, True, True),
    ("fresh, plain input", lambda d: d, False, False, True),
    ("valid(), autodiff input", lambda d: d.valid(), True, False, False),
    ("valid(), plain input", lambda d: d.valid(), False, False, False),
    ("valid().train(), autodiff input", lambda d: d.valid().train(), True, True, True),
    ("no_grad(), autodiff input", lambda d: d.clone().no_grad(), True, True, True),
    ("freeze(), autodiff input", lambda d: d.clone().freeze(), True, False, False),
    ("train() on fresh, plain input", lambda d: d.clone().train(), False, False, True),
]


@pytest.mark.parametrize("label, prepare, autodiff_input, drops, training", TABLE, ids=[t[0] for t in TABLE])
def test_dropout_drops_when_training_and_its_input_is_on_an_autodiff_device(kind, label, prepare, autodiff_input, drops, training):
    plain = plain_device(kind)
    ad = plain.autodiff()
    ad.seed(0)
    dropout = prepare(DropoutConfig(0.5).init())
    assert dropout.training.is_enabled() == training
    _assert_pattern(*_zeros_and_max(dropout, ad if autodiff_input else plain), drops)


def test_dropout_on_plain_device_returns_input(plain):
    x = Tensor.ones((2, 3), device=plain)
    assert DropoutConfig(0.9).init()(x) is x


def test_dropout_with_zero_prob_returns_input_even_while_training(ad):
    x = Tensor.ones((2, 3), device=ad)
    assert DropoutConfig(0.0).init()(x) is x


def test_kept_elements_are_scaled_by_one_over_keep_probability(ad):
    ad.seed(3)
    values = arr(DropoutConfig(0.25).init()(Tensor.ones((1, N), device=ad)))
    kept = values[values != 0]
    np.testing.assert_allclose(kept, 4.0 / 3.0, rtol=1e-6)
    assert 0.2 < (values == 0).mean() < 0.3


def test_gradient_flows_only_through_kept_elements(ad):
    ad.seed(4)
    x = Tensor.ones((1, 1000), device=ad).require_grad()
    out = DropoutConfig(0.5).init()(x)
    grad = arr(x.grad(out.sum().backward()))
    np.testing.assert_array_equal(grad, arr(out))  # d(out)/dx is the scaled mask: 0 or 2


def test_dropout_after_an_autodiff_layer_drops_even_for_plain_data(kind):
    # the train-vs-inference chapter's "mixed" experiment: the data is plain, but Linear's output is on the autodiff device
    plain = plain_device(kind)
    ad = plain.autodiff()
    ad.seed(0)
    model = Sequential(LinearConfig(4, 1000).init(ad), BatchNormConfig(1000).init(ad), DropoutConfig(0.5).init())
    out = model(T(np.arange(32, dtype=np.float32).reshape(8, 4) / 10, plain))
    assert out.device.is_autodiff()
    zeros = int((arr(out) == 0).sum())
    assert 4000 - 200 <= zeros <= 4000 + 200
    assert np.any(arr(model[1].running_mean.value_sync()) != 0)
