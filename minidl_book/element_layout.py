"""A NumPy array's layout counted in elements, as the tensors chapter counts it (burn-flex's
``Layout`` keeps strides and offsets in elements, not bytes)."""

from __future__ import annotations

import numpy as np

__all__ = ["element_offset", "element_strides"]


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """An array's strides in elements instead of bytes."""
    return tuple(s // array.itemsize for s in array.strides)


def element_offset(view: np.ndarray, buffer: np.ndarray) -> int:
    """Where ``view``'s element ``[0, 0, ...]`` sits in ``buffer``, in elements."""
    start = view.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]
    return start // buffer.itemsize
