"""Two helpers of the modules chapter's optimizer section: the one autodiff call its
hand-written SGD needs, and a measure of the memory a step allocates.

An optimizer computes each new weight on the inner device (a gradient lives there, and
arithmetic there records no graph), then lifts the result back onto the autodiff device as
a **new leaf that tracks its gradient**, so the next forward builds a fresh graph from it.
burn writes that lift ``Tensor::from_inner(t).require_grad()``; minidl's optimizer does it
for every param of every step (``minidl/optim/base.py``).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from minidl import Tensor

__all__ = ["Allocated", "allocations", "fresh_leaf"]


def fresh_leaf(values: Tensor) -> Tensor:
    """``values`` (a tensor on a plain, inner device) as a new leaf on the matching
    autodiff device that tracks its gradient: ``Tensor.from_inner(values,
    require_grad=True)``."""
    return Tensor.from_inner(values, require_grad=True)


@dataclass
class Allocated:
    """What the block of :func:`allocations` allocated, in MiB: ``new`` is still held after
    it, ``peak`` the most held at once during it."""

    new: float = 0.0
    peak: float = 0.0


@contextmanager
def allocations() -> Iterator[Allocated]:
    """Measure the Python-heap memory (NumPy's arrays included: Flex keeps its tensors in
    NumPy) the ``with`` block allocates, with :mod:`tracemalloc`; the numbers are filled in
    when the block ends."""
    mem = Allocated()
    tracemalloc.start()
    try:
        yield mem
        new, peak = tracemalloc.get_traced_memory()
        mem.new, mem.peak = new / 2**20, peak / 2**20
    finally:
        tracemalloc.stop()
