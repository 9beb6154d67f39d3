"""Random distributions for ``float_random``, mirroring burn's ``Distribution`` enum."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """A distribution to sample tensors from. Build one with the static constructors."""

    name: str
    a: float = 0.0
    b: float = 1.0

    @staticmethod
    def default() -> Distribution:
        """Uniform on [0, 1), burn's ``Distribution::Default``."""
        return Distribution("uniform", 0.0, 1.0)

    @staticmethod
    def uniform(low: float, high: float) -> Distribution:
        """Uniform on [low, high)."""
        if not low < high:
            raise ValueError(f"Distribution.uniform: expected low < high, found low={low}, high={high}")
        return Distribution("uniform", float(low), float(high))

    @staticmethod
    def normal(mean: float, std: float) -> Distribution:
        """Normal with the given mean and standard deviation."""
        if not std >= 0:
            raise ValueError(f"Distribution.normal: expected std >= 0, found {std}")
        return Distribution("normal", float(mean), float(std))

    @staticmethod
    def bernoulli(prob: float) -> Distribution:
        """1 with probability ``prob``, else 0."""
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"Distribution.bernoulli: expected prob in [0, 1], found {prob}")
        return Distribution("bernoulli", float(prob))

    # burn spells them as enum variants; keep those names too.
    Uniform = uniform
    Normal = normal
    Bernoulli = bernoulli
    Default = default
