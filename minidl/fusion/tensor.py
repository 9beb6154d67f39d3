"""``FusionTensor``: the primitive of ``Fusion[B]``, a handle whose value may not exist yet
(burn-fusion's ``FusionTensor``).

A handle has an id, a shape and a dtype from the moment its op is recorded; ``value`` (the
inner backend's primitive) appears when the stream it belongs to is executed. Reading it is
a *sync point*: it drains the stream.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minidl.fusion.ir import TensorIr


class FusionTensor:
    """A lazy tensor handle. ``pending`` while its op waits in the stream; ``value`` runs the
    stream if needed and returns the inner primitive (a NumPy array for ``Fusion[Flex]``)."""

    __slots__ = ("id", "shape", "dtype", "stream", "ir", "_value", "__weakref__")

    # ``stream`` is a Stream (not imported here: the imports stay one-way)
    def __init__(self, stream: Any, tid: int, shape: tuple[int, ...], dtype: np.dtype, value: Any = None,
                 ir: TensorIr | None = None):
        self.stream = stream
        self.id = tid
        self.shape = shape
        self.dtype = dtype
        self._value = value
        #: a pending result's description in the stream's current segment (None for a leaf)
        self.ir = ir

    @property
    def pending(self) -> bool:
        """True while the op that produces this tensor has not run."""
        return self._value is None

    @property
    def value(self) -> Any:
        """The inner primitive; drains the stream first when the tensor is pending."""
        if self._value is None:
            self.stream.drain(reason=f"read of t{self.ir.id}")
            if self._value is None:  # pragma: no cover - a failed execution leaves it unset
                raise RuntimeError(f"fusion: t{self.id} was not produced by the stream's execution")
        return self._value

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(handle)``: the value as a NumPy array (a sync point)."""
        value = np.asarray(self.value)
        return value if dtype is None else value.astype(dtype)

    def __repr__(self) -> str:
        state = "pending" if self.pending else "ready"
        return f"FusionTensor(t{self.id}, {self.dtype.name}{list(self.shape)}, {state})"


def small_value(t: Any, limit: int) -> Any:
    """``t``'s inner primitive when it exists and has fewer than ``limit`` elements, else None.

    ``Fusion[B]`` runs an op eagerly on ``B`` when every input has such a value: recording
    it would cost more than the memory traffic fusing it could save."""
    if type(t) is FusionTensor:
        value = t._value
        return value if value is not None and value.size < limit else None
    return t if isinstance(t, np.ndarray) and t.size < limit else None  # an inner primitive (Synced[B])
