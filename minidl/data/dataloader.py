"""Data loaders: batches of a dataset, optionally shuffled with a seed (burn-core's
``data::dataloader``: ``DataLoaderBuilder``, ``Batcher``, ``FixBatchStrategy``,
``BatchDataLoader``).

::

    loader = DataLoaderBuilder(batcher).batch_size(32).shuffle(seed=0).set_device(device).build(dataset)
    for batch in loader:          # one epoch; each new iteration draws a new order
        ...

As in burn, the loader owns ONE random generator seeded once by ``shuffle(seed)``; every new
iteration (``iter(loader)``) draws the next permutation from it, so epoch 1, 2, 3 see
different orders and the whole sequence of orders is fixed by the seed. The generator is
NumPy's PCG64: its bit stream is fixed by the seed, so the same seed gives the same orders in
any process with the same NumPy version; ``Generator.permutation``'s output is not promised
across NumPy versions (NEP 19). Items are batched in order of the (shuffled) dataset,
``batch_size`` at a time; the last batch holds what is left and may be smaller.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np

from minidl.data.dataset import Dataset, ShuffledDataset
from minidl.dispatch import Device

I = TypeVar("I")  # noqa: E741 (burn's names: I the item, O the batch)
O = TypeVar("O")
I_contra = TypeVar("I_contra", contravariant=True)
O_co = TypeVar("O_co", covariant=True)


class Batcher(Protocol[I_contra, O_co]):
    """Turns a list of items into one batch on a device (burn's ``Batcher<B, I, O>``)."""

    def batch(self, items: list[I_contra], device: Device) -> O_co:
        """The batch made of ``items`` (never empty), with its tensors on ``device``."""
        ...


def _check_batch_size(batch_size: object) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, found {batch_size!r}")
    return int(batch_size)


class FixBatchStrategy(Generic[I]):
    """Collects items until ``batch_size`` of them are there (burn's ``FixBatchStrategy``)."""

    def __init__(self, batch_size: int):
        self.batch_size = _check_batch_size(batch_size)
        self.items: list[I] = []

    def add(self, item: I) -> None:
        """Add one item."""
        self.items.append(item)

    def batch(self, force: bool) -> list[I] | None:
        """The collected items if there are ``batch_size`` of them, or any at all when
        ``force`` (the end of the dataset); otherwise ``None``."""
        if len(self.items) < self.batch_size and not force:
            return None
        items, self.items = self.items, []
        return items or None

    def clone_dyn(self) -> FixBatchStrategy[I]:
        """A new, empty strategy with the same batch size."""
        return FixBatchStrategy(self.batch_size)


@dataclass(frozen=True)
class Progress:
    """How far an iteration is: ``items_processed`` of ``items_total`` (burn's ``Progress``)."""

    items_processed: int
    items_total: int


class BatchDataLoaderIterator(Generic[I, O]):
    """One pass over the dataset, one batch per ``next`` (burn's ``BatchDataloaderIterator``)."""

    def __init__(self, strategy: FixBatchStrategy[I], dataset: Dataset[I], batcher: Batcher[I, O],
                 device: Device):
        self.current_index = 0
        self.strategy, self.dataset, self.batcher, self.device = strategy, dataset, batcher, device

    def __iter__(self) -> BatchDataLoaderIterator[I, O]:
        return self

    def __next__(self) -> O:
        while (item := self.dataset.get(self.current_index)) is not None:
            self.current_index += 1
            self.strategy.add(item)
            items = self.strategy.batch(False)
            if items is not None:
                return self.batcher.batch(items, self.device)
        items = self.strategy.batch(True)
        if items is not None:
            return self.batcher.batch(items, self.device)
        raise StopIteration

    def progress(self) -> Progress:
        """Items handed out so far, of the dataset's total."""
        return Progress(self.current_index, len(self.dataset))


class BatchDataLoader(Generic[I, O]):
    """Batches of a dataset, in a new seeded order at each iteration when built with a seed
    (burn's ``BatchDataLoader``). Build one with :class:`DataLoaderBuilder`."""

    def __init__(self, strategy: FixBatchStrategy[I], dataset: Dataset[I], batcher: Batcher[I, O],
                 device: Device, rng: np.random.Generator | None):
        self.strategy, self.dataset, self.batcher, self.device, self.rng = strategy, dataset, batcher, device, rng

    def iter(self) -> BatchDataLoaderIterator[I, O]:
        """A new pass over the data. With a seed, the dataset is shuffled first, which
        advances the loader's generator: the next pass gets another order."""
        dataset = self.dataset if self.rng is None else ShuffledDataset(self.dataset, self.rng)
        return BatchDataLoaderIterator(self.strategy.clone_dyn(), dataset, self.batcher, self.device)

    def __iter__(self) -> Iterator[O]:
        return self.iter()

    def num_items(self) -> int:
        """How many items one pass hands out (burn's ``num_items``)."""
        return len(self.dataset)

    def num_batches(self) -> int:
        """How many batches one pass hands out, the last one possibly partial."""
        return -(-len(self.dataset) // self.strategy.batch_size)

    def __len__(self) -> int:
        return self.num_batches()

    def to_device(self, device: Device) -> BatchDataLoader[I, O]:
        """The same loader handing out batches on ``device``; its generator is a fork of
        this one's (a child stream, as burn's ``rng.fork()``), so the two orders differ."""
        rng = None if self.rng is None else self.rng.spawn(1)[0]
        return BatchDataLoader(self.strategy.clone_dyn(), self.dataset, self.batcher, device, rng)

    def __repr__(self) -> str:
        order = "in order" if self.rng is None else "shuffled"
        return (f"BatchDataLoader(items={self.num_items()}, batch_size={self.strategy.batch_size}, "
                f"batches={self.num_batches()}, {order}, device={self.device})")


class DataLoaderBuilder(Generic[I, O]):
    """Configures and builds a :class:`BatchDataLoader` (burn's ``DataLoaderBuilder``).

    ``DataLoaderBuilder(batcher).batch_size(n).shuffle(seed).set_device(device).build(dataset)``;
    each setter returns the builder. Without ``batch_size`` the batches hold one item and
    without ``set_device`` they go to ``Device.default()``, as in burn. burn's
    ``num_workers`` (background loading threads) has no counterpart: items here are
    in-memory arrays and batching them is cheap next to a training step.
    """

    def __init__(self, batcher: Batcher[I, O]):
        if not callable(getattr(batcher, "batch", None)):
            raise TypeError(f"DataLoaderBuilder: the batcher must have a batch(items, device) method, "
                            f"found {type(batcher).__name__}")
        self.batcher = batcher
        self._batch_size = 1
        self._seed: int | None = None
        self._device: Device | None = None

    def batch_size(self, batch_size: int) -> DataLoaderBuilder[I, O]:
        """Batches of ``batch_size`` items (a positive integer); the last may be smaller."""
        try:
            self._batch_size = _check_batch_size(batch_size)
        except ValueError as error:
            raise ValueError(f"DataLoaderBuilder.batch_size: {error}") from None
        return self

    def shuffle(self, seed: int) -> DataLoaderBuilder[I, O]:
        """Shuffle at every iteration, the orders drawn from one generator seeded with ``seed``."""
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"DataLoaderBuilder.shuffle: seed must be a non-negative integer, found {seed!r}")
        self._seed = int(seed)
        return self

    def set_device(self, device: Device) -> DataLoaderBuilder[I, O]:
        """The device the batcher puts each batch on."""
        if not isinstance(device, Device):
            raise TypeError(f"DataLoaderBuilder.set_device: expected a Device, found {type(device).__name__}")
        self._device = device
        return self

    def build(self, dataset: Dataset[I]) -> BatchDataLoader[I, O]:
        """The loader over ``dataset`` (which must hold at least one item)."""
        if not callable(getattr(dataset, "get", None)) or not hasattr(dataset, "__len__"):
            raise TypeError(f"DataLoaderBuilder.build: the dataset must have get(index) and len(), "
                            f"found {type(dataset).__name__}")
        if len(dataset) == 0:
            raise ValueError("DataLoaderBuilder.build: the dataset is empty (len 0): there is nothing to batch")
        rng = None if self._seed is None else np.random.default_rng(self._seed)
        device = self._device if self._device is not None else Device.default()
        return BatchDataLoader(FixBatchStrategy(self._batch_size), dataset, self.batcher, device, rng)
