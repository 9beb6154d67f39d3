"""Flex's random streams: ``float_random`` and ``seed`` on the counter-based generator of
:mod:`minidl.backends.flex.kernels.rng` (burn-flex's seeded ``float_random``).

A stream is a key (from the seed) and a counter: the value at position ``i`` is a hash of
``(key, i)``, so a kernel can fill any slice of the output on any thread and the numbers do not
depend on how the work was split. ``seed(device, n)`` restarts the stream of ``device`` (the
autodiff twin shares it: the key ignores autodiff); an unseeded device starts from OS entropy.
``int_random`` is the shared NumPy one of ``CpuHostOps``; ``seed`` restarts that stream too.
"""

from __future__ import annotations

import math
import secrets
from typing import ClassVar

import numpy as np

from minidl.backend import Distribution, DType
from minidl.backends.cpu_common import CpuHostOps
from minidl.backends.flex.kernels import elementwise as ew
from minidl.backends.flex.kernels.rng import RngState

Shape = tuple[int, ...]


class FlexRandomOps:
    """Seeded, reproducible random tensors of Flex."""

    name: ClassVar[str]
    _streams: ClassVar[dict[tuple[str, int], RngState]] = {}

    @classmethod
    def stream(cls, device) -> RngState:
        """The counter-based stream of ``device`` (started from OS entropy on first use)."""
        key = (cls.name, getattr(device, "index", 0))
        if key not in FlexRandomOps._streams:
            FlexRandomOps._streams[key] = RngState(secrets.randbits(63))
        return FlexRandomOps._streams[key]

    @classmethod
    def seed(cls, device, seed: int) -> None:
        """Restart the stream of ``device`` (and the NumPy stream ``int_random`` draws from)."""
        key = (cls.name, getattr(device, "index", 0))
        FlexRandomOps._streams[key] = RngState(int(seed))
        CpuHostOps.seed.__func__(cls, device, seed)

    @classmethod
    def float_random(cls, shape: Shape, distribution: Distribution, dtype: DType, device):
        rng, shape, dt = cls.stream(device), tuple(shape), dtype.numpy
        if distribution.name == "uniform":
            low, high = distribution.a, distribution.b
            sample = rng.uniform(shape, low, high, dt)
            # rounding to a narrower dtype can land on `high`: keep the interval half-open
            below = float(np.nextafter(dt.type(high), dt.type(low)))
            return ew.binary("minimum", sample, below) if math.isfinite(below) else sample
        if distribution.name == "normal":
            return rng.normal(shape, distribution.a, distribution.b, dt)
        if distribution.name == "bernoulli":
            return rng.bernoulli(shape, distribution.a, dt)
        raise ValueError(f"float_random: unknown distribution {distribution.name!r}")
