"""Between tensors and arrays: the backend array under a Tensor, and a step's result as a
flat list of tensors (and back), so the program sees arrays and the caller sees tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from minidl.capture.errors import CaptureError
from minidl.tensor import Tensor


def array_of(tensor: Tensor) -> np.ndarray:
    """The backend array under ``tensor`` (an autodiff tensor's ``inner``, unwrapped; a fusion
    handle's ``value``, which drains its stream when the tensor is pending)."""
    prim = tensor.primitive.backend_tensor
    while not isinstance(prim, np.ndarray):
        prim = prim.inner if hasattr(prim, "inner") else prim.value
    return prim


def leaf_of(tensor: Tensor) -> Any:
    """The backend primitive under ``tensor`` whatever the backend (a NumPy array on a CPU, a
    ``WgpuTensor`` on the GPU): an autodiff tensor's ``inner``, a fusion handle's ``value``
    (which drains its stream when the tensor is pending), unwrapped."""
    prim = tensor.primitive.backend_tensor
    while True:
        if hasattr(prim, "inner"):
            prim = prim.inner
        elif hasattr(prim, "pending"):
            prim = prim.value
        else:
            return prim


def flat_tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [t for v in value for t in flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flat_tensors(v)]
    if value is None:
        return []
    raise CaptureError(f"capture refused the step's result: a {type(value).__name__} is not a tensor "
                       f"(return tensors, or tuples, lists or dicts of them)")


def rebuild(value: Any, made: list[Tensor]) -> Any:
    if isinstance(value, Tensor):
        return made.pop(0)
    if isinstance(value, tuple | list):
        return type(value)(rebuild(v, made) for v in value)
    if isinstance(value, dict):
        return {k: rebuild(v, made) for k, v in value.items()}
    return None
