"""The tensors chapter's "Which add overwrites grid?", run on a toy backend.

Mirrors burn-flex's in-place add at v0.22.0-pre.2 (``src/ops/binary.rs`` lines 88-93 and
354-358, ``is_unique()`` at ``src/tensor.rs`` lines 110-112) through the toy backend's
:func:`~minidl_book.toy_ownership.moved`. Each of the exercise's lines starts from a
:meth:`GridLines.new_grid`, a ``[3, 4]`` grid that is its buffer's one handle;
:meth:`GridLines.in_grid_buffer` says whether a result lives in the last new grid's buffer.
It watches that buffer through a weak reference, which is no handle, so watching does not
change the answer.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from minidl_book.toy_ownership import clone, moved

__all__ = ["GridLines"]


class GridLines:
    """The exercise's four lines on the backend ``B`` (a class of ``float_*`` ops)."""

    def __init__(self, B: type) -> None:
        self.B = B
        self._grid_buffer: weakref.ref | None = None

    def new_grid(self) -> Any:
        """A new ``[3, 4]`` grid holding ``arange(12)``: a buffer of its own, one handle."""
        g = self.B.float_from_data(np.arange(12, dtype=np.float32).reshape(3, 4))
        self._grid_buffer = weakref.ref(g.buffer)
        return g

    def ones(self) -> Any:
        """A ``[3, 4]`` tensor of ones."""
        return self.B.float_from_data(np.ones((3, 4), np.float32))

    def in_grid_buffer(self, out: Any) -> bool:
        """Whether ``out`` lives in the last new grid's buffer."""
        return self._grid_buffer is not None and out.buffer is self._grid_buffer()

    def lines(self) -> dict[str, Callable[[], Any]]:
        """The exercise's lines A-D, each from a new grid, as burn writes them."""
        B, new_grid, ones = self.B, self.new_grid, self.ones

        def line_b() -> Any:
            grid = new_grid()
            flat = B.float_reshape(clone(grid), [12])  # noqa: F841 - a second handle
            return B.float_add(moved(grid), ones())

        swap = B.float_swap_dims
        return {"A": lambda: B.float_add(moved(new_grid()), ones()), "B": line_b,
                "C": lambda: B.float_add(moved(ones()), new_grid()),
                "D": lambda: B.float_add(moved(swap(new_grid(), 0, 1)), swap(ones(), 0, 1))}

    def overwritten(self) -> frozenset[str]:
        """The letters whose sum lands in their grid's buffer."""
        return frozenset(k for k, line in self.lines().items()
                         if self.in_grid_buffer(line()))
