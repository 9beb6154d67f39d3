"""What a training loop needs beyond the model and the optimizer (burn-train, the part the
training chapter uses): the metrics ``LossMetric`` and ``AccuracyMetric``.

Layering: ``minidl.train`` may use ``minidl.tensor``, ``minidl.nn`` and what lies below; nothing
in minidl imports it (``book`` and ``debug`` may).
"""

from __future__ import annotations

from minidl.train.metric import (
    AccuracyInput,
    AccuracyMetric,
    LossInput,
    LossMetric,
    Metric,
    MetricEntry,
    NumericMetricState,
)

__all__ = ["AccuracyInput", "AccuracyMetric", "LossInput", "LossMetric", "Metric", "MetricEntry",
           "NumericMetricState"]
