"""minidl.train metrics: burn-train's LossMetric and AccuracyMetric, count-weighted means."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.train import AccuracyInput, AccuracyMetric, LossInput, LossMetric, NumericMetricState

DEV = Device.flex()


def F(a) -> Tensor:
    return Tensor.from_numpy(np.asarray(a, dtype=np.float32), DEV)


def I(a) -> Tensor:  # noqa: E743
    return Tensor.from_numpy(np.asarray(a, dtype=np.int64), DEV)


def test_accuracy_matches_burns_own_test_case():
    metric = AccuracyMetric()
    outputs = F([[0.0, 0.2, 0.8], [1.0, 2.0, 0.5], [0.4, 0.1, 0.2], [0.6, 0.7, 0.2]])
    entry = metric.update(AccuracyInput(outputs, I([2, 2, 1, 1])))
    assert metric.value() == 50.0 and entry.current == 50.0 and metric.name() == "Accuracy"
    assert entry.formatted == "epoch 50.00 % - batch 50.00 %"


def test_accuracy_is_weighted_by_batch_size_across_batches():
    metric = AccuracyMetric()
    eye = np.eye(3, dtype=np.float32)
    metric.update(AccuracyInput(F(eye[[0, 1, 2, 0]]), I([0, 1, 2, 0])))   # 4 of 4
    entry = metric.update(AccuracyInput(F(eye[[1]]), I([0])))            # 0 of 1
    assert entry.current == 0.0 and metric.value() == pytest.approx(80.0)  # 4 of 5, not (100+0)/2
    assert entry.formatted == "epoch 80.00 % - batch 0.00 %"


def test_accuracy_against_numpy_on_random_logits():
    rng = np.random.default_rng(0)
    metric = AccuracyMetric()
    correct = total = 0
    for size in (16, 16, 7):
        logits, targets = rng.standard_normal((size, 10)), rng.integers(0, 10, size)
        metric.update(AccuracyInput(F(logits), I(targets)))
        correct += int(np.sum(logits.astype(np.float32).argmax(1) == targets))
        total += size
    assert metric.value() == pytest.approx(100 * correct / total)


def test_loss_metric_is_the_item_weighted_mean_and_clear_resets():
    metric = LossMetric()
    metric.update(LossInput(F(2.0), 3))
    entry = metric.update(LossInput(F(1.0), 1))
    assert metric.value() == pytest.approx((2.0 * 3 + 1.0) / 4) and entry.formatted == "epoch 1.75 - batch 1.00"
    assert metric.name() == "Loss"
    metric.clear()
    assert math.isnan(metric.value())


def test_bad_metric_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="LossMetric: loss must be a one-element Tensor"):
        LossMetric().update(LossInput(F([1.0, 2.0]), 2))
    with pytest.raises(ValueError, match=r"AccuracyMetric: outputs must have rank 2, found shape \[3\]"):
        AccuracyMetric().update(AccuracyInput(F([1.0, 2.0, 3.0]), I([0, 1, 2])))
    with pytest.raises(ValueError, match=r"AccuracyMetric: targets must have shape \[2\]"):
        AccuracyMetric().update(AccuracyInput(F(np.eye(2)), I([0, 1, 1])))
    with pytest.raises(ValueError, match="count of a metric update must be a positive integer"):
        NumericMetricState().update(1.0, 0, "Loss")
