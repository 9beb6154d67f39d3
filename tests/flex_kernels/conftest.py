"""Fixtures of the Flex kernel tests (each kernel against NumPy or torch)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

# The kernels are cached by numba; keep the cache inside the project (ARCHITECTURE.md, "Conventions").
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(__file__).resolve().parents[2] / ".numba_cache"))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
