"""The digits data set: 1,797 handwritten digits as 8×8 images, shipped inside scikit-learn
(``sklearn.datasets.load_digits`` reads a file bundled in the package: nothing is
downloaded). The counterpart of burn-dataset's ``MnistDataset``, small enough to train a CNN
on in seconds on a CPU.

- :class:`DigitsItem` — one image (``[8, 8]`` float32 in ``[0, 1]``) and its label;
- :class:`DigitsDataset` — ``train()`` / ``valid()`` / ``test()``: a fixed split of one
  seeded permutation (70 / 15 / 15 %), so the three never share an image;
- :class:`DigitsBatcher` — a list of items → :class:`DigitsBatch` (images
  ``[batch, 1, 8, 8]``, Int targets ``[batch]``) on a device (the ``MnistBatcher`` of burn's
  examples).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from minidl.dispatch import Device
from minidl.tensor import Tensor

SPLITS = ("train", "valid", "test")
FRACTIONS = {"valid": 0.15, "test": 0.15}


@dataclass(frozen=True)
class DigitsItem:
    """One digit: ``image`` ``[8, 8]`` float32 in ``[0, 1]``, ``label`` in ``0..9``."""

    image: np.ndarray
    label: int


@dataclass(frozen=True)
class DigitsBatch:
    """A batch: ``images`` ``[batch, 1, 8, 8]`` (Float) and ``targets`` ``[batch]`` (Int)."""

    images: Tensor
    targets: Tensor


@functools.lru_cache(maxsize=1)
def _arrays() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits  # the bundled file; imported only when used

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)  # pixel values are 0..16
    images.setflags(write=False)
    labels = digits.target.astype(np.int64)
    labels.setflags(write=False)
    return images, labels


def split_indices(n: int, seed: int) -> dict[str, np.ndarray]:
    """Indices of the three splits of ``n`` items: one permutation drawn with ``seed``, cut
    into train (70 %), valid (15 %) and test (15 %)."""
    order = np.random.default_rng(seed).permutation(n)
    n_valid, n_test = (int(round(FRACTIONS[s] * n)) for s in ("valid", "test"))
    n_train = n - n_valid - n_test
    return {"train": order[:n_train], "valid": order[n_train:n_train + n_valid],
            "test": order[n_train + n_valid:]}


class DigitsDataset:
    """One split of the digits (burn-dataset's ``MnistDataset`` shape: ``train()``, ``test()``,
    plus ``valid()``); ``seed`` fixes which image goes to which split."""

    def __init__(self, split: str, seed: int = 0):
        if split not in SPLITS:
            raise ValueError(f"DigitsDataset: split must be one of {SPLITS}, found {split!r}")
        images, labels = _arrays()
        index = split_indices(len(labels), seed)[split]
        self.split, self.seed = split, seed
        self.images, self.labels = images[index], labels[index]

    @staticmethod
    def train(seed: int = 0) -> DigitsDataset:
        """The training split (70 % of the images)."""
        return DigitsDataset("train", seed)

    @staticmethod
    def valid(seed: int = 0) -> DigitsDataset:
        """The validation split (15 %)."""
        return DigitsDataset("valid", seed)

    @staticmethod
    def test(seed: int = 0) -> DigitsDataset:
        """The test split (15 %)."""
        return DigitsDataset("test", seed)

    def get(self, index: int) -> DigitsItem | None:
        """Item ``index``, or ``None`` past the end."""
        if not 0 <= index < len(self.labels):
            return None
        return DigitsItem(self.images[index], int(self.labels[index]))

    def __len__(self) -> int:
        return len(self.labels)

    def __repr__(self) -> str:
        return f"DigitsDataset({self.split!r}, seed={self.seed}, len={len(self)})"


class DigitsBatcher:
    """Stacks :class:`DigitsItem` s into a :class:`DigitsBatch` on the loader's device."""

    def batch(self, items: list[DigitsItem], device: Device) -> DigitsBatch:
        """Images ``[len(items), 1, 8, 8]`` and targets ``[len(items)]`` on ``device``."""
        images = np.stack([item.image for item in items])[:, None]
        targets = np.array([item.label for item in items], dtype=np.int64)
        return DigitsBatch(Tensor.from_numpy(images, device), Tensor.from_numpy(targets, device))
