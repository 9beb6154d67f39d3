"""Datasets: an indexable collection of items (burn-dataset's ``Dataset`` trait and the two
transforms the data loader uses, ``ShuffledDataset`` and ``PartialDataset``).

A dataset answers two questions, ``get(index)`` and ``len()``. Here ``get`` returns
``None`` past the end, as burn 0.21's ``get(index) -> Option<I>`` did, so a loader can walk a
dataset without knowing its length. burn 0.22's ``get`` returns ``Result<I, E>`` and panics
past the end (``Err`` is for a failed read of an index in range); minidl keeps 0.21's
contract.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

I_co = TypeVar("I_co", covariant=True)
I = TypeVar("I")  # noqa: E741 (burn's name for the item type)


@runtime_checkable
class Dataset(Protocol[I_co]):
    """What a data loader needs from a dataset (burn-dataset's ``Dataset<I>``)."""

    def get(self, index: int) -> I_co | None:
        """The item at ``index``, or ``None`` when ``index`` is past the end."""
        ...

    def __len__(self) -> int:
        """How many items there are."""
        ...


def iter_dataset(dataset: Dataset[I]) -> Iterator[I]:
    """Every item of ``dataset`` in index order (burn's ``DatasetIterator``)."""
    index = 0
    while (item := dataset.get(index)) is not None:
        yield item
        index += 1


class InMemDataset(Generic[I]):
    """A dataset held in a Python sequence (burn-dataset's ``InMemDataset``)."""

    def __init__(self, items: Sequence[I]):
        self.items = list(items)

    def get(self, index: int) -> I | None:
        """``items[index]`` for ``0 <= index < len``, else ``None``."""
        return self.items[index] if 0 <= index < len(self.items) else None

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"InMemDataset(len={len(self)})"


class ShuffledDataset(Generic[I]):
    """``dataset`` seen through a permutation of its indices (burn-dataset's
    ``ShuffledDataset``); the permutation is drawn from ``rng`` when it is built, which
    advances ``rng``."""

    def __init__(self, dataset: Dataset[I], rng: np.random.Generator):
        self.dataset = dataset
        self.indices = rng.permutation(len(dataset))

    def get(self, index: int) -> I | None:
        """The item at position ``index`` of the permutation, or ``None`` past the end."""
        if not 0 <= index < len(self.indices):
            return None
        return self.dataset.get(int(self.indices[index]))

    def __len__(self) -> int:
        return len(self.indices)


class PartialDataset(Generic[I]):
    """Items ``start`` (included) to ``end`` (excluded) of ``dataset`` (burn-dataset's
    ``PartialDataset``)."""

    def __init__(self, dataset: Dataset[I], start: int, end: int):
        if not 0 <= start <= end <= len(dataset):
            raise ValueError(
                f"PartialDataset: expected 0 <= start <= end <= len(dataset) = {len(dataset)}, "
                f"found start={start}, end={end}"
            )
        self.dataset, self.start, self.end = dataset, start, end

    def get(self, index: int) -> I | None:
        """Item ``start + index`` of the wrapped dataset, or ``None`` past ``end``."""
        if not 0 <= index < self.end - self.start:
            return None
        return self.dataset.get(self.start + index)

    def __len__(self) -> int:
        return self.end - self.start
