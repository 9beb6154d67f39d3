"""burn's ``data`` module (burn-core ``data::dataloader`` with burn-dataset's ``Dataset``):
datasets, batchers and the seeded data loader the training chapter uses.

- :class:`Dataset` (``get(index)``, ``len``), :class:`InMemDataset`,
  :class:`ShuffledDataset`, :class:`PartialDataset`;
- :class:`Batcher` (``batch(items, device)``), :class:`FixBatchStrategy`,
  :class:`BatchDataLoader`, :class:`DataLoaderBuilder`;
- :class:`DigitsDataset` / :class:`DigitsBatcher`: scikit-learn's bundled 8×8 digits.

Layering: ``minidl.data`` builds tensors (``minidl.tensor``) on a device; nothing below it
imports it.
"""

from __future__ import annotations

from minidl.data.dataloader import (
    BatchDataLoader,
    BatchDataLoaderIterator,
    Batcher,
    DataLoaderBuilder,
    FixBatchStrategy,
    Progress,
)
from minidl.data.dataset import Dataset, InMemDataset, PartialDataset, ShuffledDataset, iter_dataset
from minidl.data.digits import DigitsBatch, DigitsBatcher, DigitsDataset, DigitsItem, split_indices

__all__ = [
    "BatchDataLoader", "BatchDataLoaderIterator", "Batcher", "DataLoaderBuilder", "Dataset",
    "DigitsBatch", "DigitsBatcher", "DigitsDataset", "DigitsItem", "FixBatchStrategy",
    "InMemDataset", "PartialDataset", "Progress", "ShuffledDataset", "iter_dataset", "split_indices",
]
