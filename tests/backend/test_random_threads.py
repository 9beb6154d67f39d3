"""Random draws from several threads at once: each draw gets numbers no other draw gets.

Flex's stream is counter-based (element ``i`` is a hash of ``(key, counter + i)``); a draw that
read the counter before another draw had advanced it would repeat that draw's numbers — four
threads drawing dropout masks used to get identical masks. The check here is stronger than
"the masks differ": the threaded draws, taken together, are exactly the draws one thread makes
after the same seed, in some order — no range of the stream used twice, none skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backend import Distribution, DType
from tests.racing import draws_from_threads

THREADS, DRAWS, SHAPE = 4, 12, (64, 33)  # 2112 elements: the serial kernel, the short window


def _threaded(B, device, distribution) -> list[bytes]:
    return draws_from_threads(
        lambda: np.asarray(B.float_random(SHAPE, distribution, DType.F32, device)).tobytes(), THREADS, DRAWS)


@pytest.mark.parametrize("distribution", [Distribution.bernoulli(0.5), Distribution.uniform(0.0, 1.0),
                                          Distribution.normal(0.0, 1.0)], ids=["bernoulli", "uniform", "normal"])
def test_concurrent_draws_use_disjoint_parts_of_the_stream(B, device, distribution):
    B.seed(device, 1234)
    threaded = _threaded(B, device, distribution)
    B.seed(device, 1234)
    sequential = [np.asarray(B.float_random(SHAPE, distribution, DType.F32, device)).tobytes()
                  for _ in range(THREADS * DRAWS)]
    assert len(set(threaded)) == THREADS * DRAWS, "two threads drew the same numbers"
    assert sorted(threaded) == sorted(sequential)


def test_first_draws_from_many_threads_share_one_unseeded_stream(B, device):
    # the stream is created on first use: two threads creating it at once must not make two
    # (each from its own entropy, one of them then lost), nor hand both the same start
    key = (B.name, 0)
    streams = getattr(B, "_streams", None)
    generators = getattr(B, "_generators", None)
    for table in (streams, generators):
        if table is not None:
            table.pop(key, None)
    masks = _threaded(B, device, Distribution.bernoulli(0.5))
    assert len(set(masks)) == len(masks)
