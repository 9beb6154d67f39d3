"""The cases the build-it checkers draw: float32 arrays of finite, normal values.

One strategy for every checker, so their cases differ only in shapes and bounds, never in how an
array is made. (Hypothesis is the checkers' random-case engine; burn's own tests use fixed cases.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st


def float32_arrays(bound: float) -> Callable[..., st.SearchStrategy[np.ndarray]]:
    """A maker of float32 array strategies with values in ``[-bound, bound]``.

    The maker takes a shape as arguments or as one sequence: ``arrays(2, 3)`` or
    ``arrays([2, 3])``. No NaN, infinity or subnormal is drawn: the checkers compare values, and
    a subnormal flushed to zero by one kernel and kept by another is not the reader's error.
    """
    value = st.floats(-bound, bound, width=32, allow_nan=False, allow_subnormal=False)

    def arrays(*shape: int | Sequence[int]) -> st.SearchStrategy[np.ndarray]:
        dims = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        size = int(np.prod(dims))
        return st.lists(value, min_size=size, max_size=size).map(
            lambda v: np.array(v, dtype=np.float32).reshape(dims))

    return arrays
