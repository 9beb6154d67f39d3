"""Dropout from four threads at once: every thread's masks are its own —
none repeats another's — and together they are exactly the masks one thread draws after the
same seed, so threading changes which thread gets which mask, never the stream."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.nn import DropoutConfig

THREADS, DRAWS = 4, 10


@pytest.mark.parametrize("make", [Device.flex().autodiff, Device.ndarray().autodiff], ids=["flex", "ndarray"])
def test_dropout_masks_drawn_by_four_threads_are_disjoint_parts_of_the_stream(make):
    device = make()
    layer = DropoutConfig(0.5).init()
    ones = Tensor.ones((32, 65), device)

    def mask() -> bytes:
        return (layer.forward(ones).to_numpy() != 0).tobytes()

    device.seed(7)
    start, masks, errors = threading.Barrier(THREADS), [], []

    def work():
        try:
            start.wait()
            for _ in range(DRAWS):
                masks.append(mask())
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: a race shows up in every run, not 1 in 3
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    device.seed(7)
    sequential = [mask() for _ in range(THREADS * DRAWS)]
    assert len(set(masks)) == THREADS * DRAWS, "two threads drew the same dropout mask"
    assert sorted(masks) == sorted(sequential)
    assert 0.4 < np.frombuffer(b"".join(masks), dtype=bool).mean() < 0.6
