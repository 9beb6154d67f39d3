"""Shared helpers of the fusion tests: the fusion backend and a fresh view of its stream."""

from __future__ import annotations

import numpy as np

from minidl.backends.flex.fusion import FusionFlex
from minidl.debug import fusion_plan
from minidl.dispatch import Device
from minidl.tensor import Tensor

FUSION = Device.fusion()


def on(array, device=FUSION, grad: bool = False) -> Tensor:
    """A float32 tensor on ``device`` holding ``array``."""
    t = Tensor.from_data(np.asarray(array, dtype=np.float32), device)
    return t.require_grad() if grad else t


def randn(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def last_plan():
    """The plan of the fusion stream's last execution."""
    return fusion_plan()


def pending_ops() -> int:
    """How many ops wait in the stream."""
    return len(FusionFlex.stream.ops)
