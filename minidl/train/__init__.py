"""What a training loop needs beyond the model and the optimizer (burn-train, the part the
training chapter uses): the metrics ``LossMetric`` and ``AccuracyMetric``, and checkpoints
(model record + config + optimizer state) to resume from.

Layering: ``minidl.train`` may use ``minidl.nn``, ``minidl.optim``, ``minidl.store`` and what
lies below; nothing in minidl imports it (``book`` and ``debug`` may).
"""

from __future__ import annotations

from minidl.train.checkpoint import (
    IncompleteCheckpointError,
    checkpoint_paths,
    delete_checkpoint,
    latest_complete_epoch,
    load_optimizer_record,
    optimizer_record,
    restore_checkpoint,
    save_checkpoint,
)
from minidl.train.metric import (
    AccuracyInput,
    AccuracyMetric,
    LossInput,
    LossMetric,
    Metric,
    MetricEntry,
    NumericMetricState,
)

__all__ = ["AccuracyInput", "AccuracyMetric", "IncompleteCheckpointError", "LossInput", "LossMetric",
           "Metric", "MetricEntry", "NumericMetricState", "checkpoint_paths", "delete_checkpoint",
           "latest_complete_epoch", "load_optimizer_record", "optimizer_record",
           "restore_checkpoint", "save_checkpoint"]
