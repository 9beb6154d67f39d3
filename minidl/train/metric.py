"""The metrics a training loop reports (burn-train's ``metric`` module: ``LossMetric``,
``AccuracyMetric`` and the ``NumericMetricState`` both are built on).

A metric is fed once per batch with ``update(input)``, which returns a
:class:`MetricEntry` for that batch, and keeps a running value over everything it was fed
since the last ``clear()``: the mean over items, each batch weighted by its size, so a
smaller last batch counts for what it holds. The formatted entry reads like burn's,
``epoch 97.41 % - batch 96.88 %`` (running value, then this batch's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from minidl.tensor import Tensor


@dataclass(frozen=True)
class MetricEntry:
    """One update's report: the metric's ``name``, the ``formatted`` line, and the values."""

    name: str
    formatted: str
    current: float
    running: float
    count: int


def _format(value: float, precision: int | None) -> str:
    return f"{value}" if precision is None else f"{value:.{precision}f}"


class NumericMetricState:
    """A running, count-weighted mean of per-batch values (burn-train's ``NumericMetricState``).

    ``update(value, count)`` adds ``value`` averaged over ``count`` units (the batch size);
    :meth:`value` is ``sum(value * count) / sum(count)``, NaN before the first update.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (the start of an epoch)."""
        self.sum, self.count = 0.0, 0
        self.current, self.current_count = math.nan, 0

    def update(self, value: float, count: int, name: str, unit: str | None = None,
               precision: int | None = None) -> MetricEntry:
        """Add one batch's ``value`` (a mean over ``count`` units) and return its entry."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{name}: the count of a metric update must be a positive integer, found {count!r}")
        value = float(value)
        self.sum += value * count
        self.count += count
        self.current, self.current_count = value, count
        running = self.value()
        suffix = f" {unit}" if unit else ""
        formatted = (f"epoch {_format(running, precision)}{suffix} - "
                     f"batch {_format(value, precision)}{suffix}")
        return MetricEntry(name, formatted, value, running, self.count)

    def value(self) -> float:
        """The running mean since the last :meth:`reset` (NaN if nothing was added)."""
        return self.sum / self.count if self.count else math.nan


class Metric:
    """What every metric has: a ``name``, ``update``, ``clear`` and a running ``value``."""

    NAME = ""

    def __init__(self) -> None:
        self.state = NumericMetricState()

    def name(self) -> str:
        """The name burn-train prints for this metric."""
        return self.NAME

    def clear(self) -> None:
        """Start over (burn's ``clear``, called at each epoch's end)."""
        self.state.reset()

    def value(self) -> float:
        """The running value since the last :meth:`clear`."""
        return self.state.value()


def _check_float(owner: str, field: str, tensor: Tensor, rank: int) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{owner}: {field} must be a minidl Tensor, found {type(tensor).__name__}")
    if len(tensor.shape) != rank:
        raise ValueError(f"{owner}: {field} must have rank {rank}, found shape {list(tensor.shape)}")


@dataclass(frozen=True)
class LossInput:
    """The input of :class:`LossMetric`: the loss of one batch (one value, a mean) and how
    many items it was averaged over."""

    loss: Tensor
    batch_size: int


class LossMetric(Metric):
    """The mean loss (burn-train's ``LossMetric``, named ``Loss``, two decimals)."""

    NAME = "Loss"

    def update(self, input: LossInput) -> MetricEntry:
        """Add one batch's mean loss, weighted by its batch size."""
        if not isinstance(input.loss, Tensor) or input.loss.numel() != 1:
            found = list(input.loss.shape) if isinstance(input.loss, Tensor) else type(input.loss).__name__
            raise ValueError(f"LossMetric: loss must be a one-element Tensor (a mean), found {found}")
        return self.state.update(float(input.loss.into_scalar()), input.batch_size, self.NAME, precision=2)


@dataclass(frozen=True)
class AccuracyInput:
    """The input of :class:`AccuracyMetric`: logits ``outputs`` ``[batch, classes]`` and Int
    ``targets`` ``[batch]``."""

    outputs: Tensor
    targets: Tensor


class AccuracyMetric(Metric):
    """The share of items whose arg-max class is the target, in percent (burn-train's
    ``AccuracyMetric``, named ``Accuracy``, unit ``%``, two decimals)."""

    NAME = "Accuracy"

    def update(self, input: AccuracyInput) -> MetricEntry:
        """Add one batch: ``100 * mean(argmax(outputs, 1) == targets)``, weighted by its size."""
        _check_float("AccuracyMetric", "outputs", input.outputs, 2)
        _check_float("AccuracyMetric", "targets", input.targets, 1)
        batch_size = input.outputs.shape[0]
        if input.targets.shape[0] != batch_size:
            raise ValueError(f"AccuracyMetric: targets must have shape [{batch_size}] like the outputs' batch, "
                             f"found {list(input.targets.shape)}")
        predicted = input.outputs.argmax(1).reshape(batch_size)
        correct = int(predicted.equal(input.targets).int().sum().into_scalar())
        return self.state.update(100.0 * correct / batch_size, batch_size, self.NAME, unit="%", precision=2)
