"""minidl.data: the seeded data loader (burn's DataLoaderBuilder + Batcher) and the digits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minidl import Device
from minidl.data import (
    DataLoaderBuilder,
    DigitsBatcher,
    DigitsDataset,
    InMemDataset,
    PartialDataset,
    ShuffledDataset,
    iter_dataset,
)

ROOT = Path(__file__).resolve().parents[2]


class ListBatcher:
    """Hands the items back as a list and remembers the device it was given (burn's TestBatcher)."""

    def __init__(self) -> None:
        self.devices: list[Device] = []

    def batch(self, items, device):
        self.devices.append(device)
        return list(items)


def loader(n: int, batch_size: int, seed: int | None = None):
    builder = DataLoaderBuilder(ListBatcher()).batch_size(batch_size)
    if seed is not None:
        builder = builder.shuffle(seed)
    return builder.build(InMemDataset(range(n)))


def test_unshuffled_loader_yields_items_in_order_with_a_partial_last_batch():
    batches = list(loader(10, 4))
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_num_batches_counts_the_partial_batch():
    assert len(loader(10, 4)) == 3 and loader(10, 4).num_items() == 10
    assert len(loader(8, 4)) == 2 and list(map(len, loader(8, 4))) == [4, 4]


def test_batch_size_larger_than_dataset_gives_one_partial_batch():
    assert list(loader(3, 8)) == [[0, 1, 2]]


def test_shuffled_epoch_is_a_permutation_and_each_epoch_differs():
    data = loader(50, 8, seed=3)
    first, second = (sum(list(data), []) for _ in range(2))
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second and first != list(range(50))


def test_same_seed_gives_the_same_sequence_of_orders():
    a, b = loader(30, 7, seed=11), loader(30, 7, seed=11)
    for _ in range(3):
        assert list(a) == list(b)
    assert list(loader(30, 7, seed=12)) != list(loader(30, 7, seed=11))


_ORDER_SCRIPT = """
import json
from minidl.data import DataLoaderBuilder, InMemDataset
class B:
    def batch(self, items, device):
        return list(items)
data = DataLoaderBuilder(B()).batch_size(5).shuffle(2024).build(InMemDataset(range(23)))
print(json.dumps([list(data) for _ in range(2)]))
"""


def test_seeded_order_is_reproducible_across_processes():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "random"}
    runs = [json.loads(subprocess.run([sys.executable, "-c", _ORDER_SCRIPT], env=env, check=True,
                                      capture_output=True, text=True).stdout) for _ in range(2)]
    data = loader(23, 5, seed=2024)
    here = [list(data) for _ in range(2)]
    assert runs[0] == runs[1] == here


@pytest.mark.parametrize("bad", [0, -3, 2.5, "4", True, None])
def test_bad_batch_size_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=r"DataLoaderBuilder.batch_size: batch_size must be a positive integer, found"):
        DataLoaderBuilder(ListBatcher()).batch_size(bad)


@pytest.mark.parametrize("bad", [-1, 1.5, "0"])
def test_bad_seed_is_refused(bad):
    with pytest.raises(ValueError, match=r"DataLoaderBuilder.shuffle: seed must be a non-negative integer"):
        DataLoaderBuilder(ListBatcher()).shuffle(bad)


def test_empty_dataset_is_refused_at_build():
    with pytest.raises(ValueError, match=r"the dataset is empty \(len 0\)"):
        DataLoaderBuilder(ListBatcher()).batch_size(4).build(InMemDataset([]))


def test_a_batcher_without_batch_and_a_dataset_without_get_are_refused():
    with pytest.raises(TypeError, match="batch\\(items, device\\)"):
        DataLoaderBuilder(object())
    with pytest.raises(TypeError, match="get\\(index\\) and len"):
        DataLoaderBuilder(ListBatcher()).build([1, 2, 3])


def test_batches_go_to_the_device_set_and_default_to_flex():
    batcher = ListBatcher()
    ad = Device.flex().autodiff()
    list(DataLoaderBuilder(batcher).batch_size(2).set_device(ad).build(InMemDataset(range(3))))
    assert all(d.is_autodiff() for d in batcher.devices) and len(batcher.devices) == 2
    other = ListBatcher()
    list(DataLoaderBuilder(other).build(InMemDataset(range(2))))
    assert other.devices == [Device.flex()] * 2 and not other.devices[0].is_autodiff()


def test_progress_counts_items_handed_out():
    it = loader(10, 4).iter()
    next(it)
    assert (it.progress().items_processed, it.progress().items_total) == (4, 10)
    list(it)
    assert it.progress().items_processed == 10


def test_to_device_forks_the_generator():
    data = loader(40, 40, seed=5)
    forked = data.to_device(Device.flex().autodiff())
    assert forked.device.is_autodiff()
    assert sorted(next(iter(forked))) == list(range(40)) and list(forked) != list(loader(40, 40, seed=5))


def test_dataset_transforms():
    base = InMemDataset(list("abcdef"))
    assert base.get(6) is None and base.get(-1) is None
    part = PartialDataset(base, 2, 5)
    assert list(iter_dataset(part)) == ["c", "d", "e"] and len(part) == 3
    with pytest.raises(ValueError, match="start <= end"):
        PartialDataset(base, 4, 2)
    shuffled = ShuffledDataset(base, np.random.default_rng(0))
    assert sorted(iter_dataset(shuffled)) == list("abcdef")


def test_digits_splits_are_disjoint_cover_everything_and_depend_on_the_seed():
    splits = {s: DigitsDataset(s) for s in ("train", "valid", "test")}
    assert {s: len(d) for s, d in splits.items()} == {"train": 1257, "valid": 270, "test": 270}
    keys = {s: {d.images[i].tobytes() + bytes([d.labels[i]]) for i in range(len(d))} for s, d in splits.items()}
    assert sum(len(k) for k in keys.values()) == len(set().union(*keys.values()))
    assert set(np.unique(splits["train"].labels)) == set(range(10))
    assert not np.array_equal(DigitsDataset.test(seed=1).labels, splits["test"].labels)
    assert np.array_equal(DigitsDataset.test(seed=0).labels, splits["test"].labels)
    with pytest.raises(ValueError, match="split must be one of"):
        DigitsDataset("training")


def test_digits_batcher_makes_nchw_float_images_and_int_targets():
    device = Device.flex()
    batch = next(iter(DataLoaderBuilder(DigitsBatcher()).batch_size(5).set_device(device)
                      .build(DigitsDataset.valid())))
    assert batch.images.shape == (5, 1, 8, 8) and batch.targets.shape == (5,)
    images = batch.images.to_numpy()
    assert images.dtype == np.float32 and 0.0 <= images.min() and images.max() <= 1.0
    assert batch.targets.to_numpy().dtype == np.int64
    assert np.array_equal(batch.targets.to_numpy(), DigitsDataset.valid().labels[:5])
