"""burn's in-place rule on the toy backend: who holds a buffer.

Mirrors burn-flex at v0.22.0-pre.2. A ``FlexTensor`` keeps its buffer behind an
``Arc<Bytes>`` (``src/tensor.rs`` line 20); ``#[derive(Clone)]`` makes a clone one more
handle on the same buffer. ``is_unique()`` is ``Arc::strong_count(&self.data) == 1``
(``src/tensor.rs`` lines 110-112). The f32 add/sub/mul/div (``src/ops/binary.rs`` lines
88-93; ``binary_op_typed`` for the other floats, lines 354-358) write the result into the
lhs's buffer and return the lhs when the lhs is unique and ``contiguous_offsets()`` is
``Some((0, _))`` for it (strides exactly row order, offset 0: ``src/layout.rs`` lines
103-125; a broadcast lhs, expanded at line 43, has a stride 0), and the rhs is contiguous.
The toy's ``zip_op`` reads any rhs through its strides, so the toy asks nothing of the rhs.

Python cannot move a name, so :func:`moved` spells burn's by-value call: a toy op writes in
place only into an lhs handed over that way (a ``Tensor`` never does, so minidl's tensors are
never overwritten). :func:`handles` reads the count from Python's own reference count of
the buffer, which counts holders as ``Arc::strong_count`` does, after a garbage collection:
a reference cycle that is garbage (a recursive closure of a reader's ``read_view`` that
captured the buffer) holds it until collected, and is no handle; :func:`clone` is burn's
``clone()``: a second handle, no data copied.
"""

from __future__ import annotations

import gc
import sys
from typing import Any, NamedTuple

__all__ = ["Moved", "clone", "handles", "moved", "taken", "writes_in_place"]


class Moved(NamedTuple):
    """A primitive handed to an op by value (Rust's move): the caller gives up its handle."""

    tensor: Any


def moved(tensor: Any) -> Moved:
    """``tensor`` passed by value, as every burn op takes its operands."""
    return Moved(tensor)


def taken(tensor: Any) -> Any:
    """The primitive itself, whether it was handed over by :func:`moved` or not."""
    return tensor.tensor if isinstance(tensor, Moved) else tensor


def clone(tensor: Any) -> Any:
    """burn's ``FlexTensor::clone``: a new handle on the same buffer, no data copied."""
    t = taken(tensor)
    return type(t)(t.buffer, t.offset, t.shape, t.strides)


def handles(tensor: Any) -> int:
    """How many handles hold the tensor's buffer (``Arc::strong_count``): Python's
    reference count of the buffer, less the one this call's argument takes, once garbage
    cycles (which hold the buffer but are no handle) are collected."""
    buffer = taken(tensor).buffer
    gc.collect()
    return sys.getrefcount(buffer) - 2  # less this call's argument and ``buffer``


def _row_order_from_zero(t: Any) -> bool:
    """burn-flex's ``contiguous_offsets() == Some((0, _))``: row-order strides, offset 0."""
    step, strides = 1, []
    for n in reversed(t.shape):
        strides.append(step)
        step *= n
    return t.offset == 0 and tuple(t.strides) == tuple(reversed(strides))


def writes_in_place(lhs: Any, out_shape: tuple) -> bool:
    """burn-flex's in-place test for an element-wise op's lhs: handed over by value, its
    buffer's only handle, contiguous from offset 0, and not broadcast to ``out_shape``."""
    return (isinstance(lhs, Moved) and handles(lhs) == 1
            and _row_order_from_zero(lhs.tensor)
            and tuple(out_shape) == tuple(lhs.tensor.shape))
