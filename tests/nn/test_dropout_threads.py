"""Dropout from four threads at once: every thread's masks are its own —
none repeats another's — and together they are exactly the masks one thread draws after the
same seed, so threading changes which thread gets which mask, never the stream."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.nn import DropoutConfig
from tests.racing import draws_from_threads

THREADS, DRAWS = 4, 10


@pytest.mark.parametrize("make", [Device.flex().autodiff, Device.ndarray().autodiff], ids=["flex", "ndarray"])
def test_dropout_masks_drawn_by_four_threads_are_disjoint_parts_of_the_stream(make):
    device = make()
    layer = DropoutConfig(0.5).init()
    ones = Tensor.ones((32, 65), device)

    def mask() -> bytes:
        return (layer.forward(ones).to_numpy() != 0).tobytes()

    device.seed(7)
    masks = draws_from_threads(mask, THREADS, DRAWS)
    device.seed(7)
    sequential = [mask() for _ in range(THREADS * DRAWS)]
    assert len(set(masks)) == THREADS * DRAWS, "two threads drew the same dropout mask"
    assert sorted(masks) == sorted(sequential)
    assert 0.4 < np.frombuffer(b"".join(masks), dtype=bool).mean() < 0.6
