"""Size checks done before an op starts its work: a tensor that could never fit in memory is
refused at once, with the op, the shape and the size in the message.

Without the check, ``repeat_dim(0, 10**12)`` or ``zeros([60000] * 3)`` would run for a while
and end in NumPy's own ``MemoryError`` (or swap the machine); torch's CPU allocator refuses
the same request at once ("you tried to allocate N bytes"), and burn's allocator panics. The
limit is the machine's physical memory, or ``MINIDL_MAX_TENSOR_BYTES`` when set (tests and
shared machines set it lower); it is read on every check of a tensor larger than a page, so a
test may change it.

``TensorTooLargeError`` is both a ``MemoryError`` (what it is) and a ``ValueError`` (the
request was wrong before anything was allocated), so code catching either sees it.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence

import numpy as np

ENV = "MINIDL_MAX_TENSOR_BYTES"
#: Tensors up to a page are never refused, so their creation skips reading the environment
#: (about 1 us warm, several after the big kernels of a step have evicted the caches): a speed
#: trick (ARCHITECTURE.md, "Where speed tricks may live").
SMALL_BYTES = 4096


class TensorTooLargeError(MemoryError, ValueError):
    """A tensor larger than the memory limit was requested; raised before any work."""


@functools.cache  # read on every tensor creation; the machine's memory does not change
def physical_memory() -> int:
    """Bytes of physical memory (``sysconf``), or 2**40 where the platform does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 2**40


def max_tensor_bytes() -> int:
    """The largest tensor an op may create: ``MINIDL_MAX_TENSOR_BYTES`` or physical memory."""
    value = os.environ.get(ENV)
    if value is None:
        return physical_memory()
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{ENV}: expected an integer number of bytes, found {value!r}") from None


def check_size(op: str, shape: Sequence[int], dtype) -> int:
    """The element count of ``shape``, after checking a ``dtype`` tensor of that shape fits
    under :func:`max_tensor_bytes`; raises :class:`TensorTooLargeError` naming ``op``."""
    sizes = [int(s) for s in shape]
    if sizes and min(sizes) < 0:
        raise ValueError(f"{op}: expected sizes >= 0, found shape {tuple(sizes)}")
    count = math.prod(sizes)
    itemsize = dtype.itemsize if isinstance(dtype, np.dtype) else np.dtype(dtype).itemsize
    if count * itemsize <= SMALL_BYTES:  # a training step makes a few such seeds and zeros
        return count
    limit = max_tensor_bytes()
    if count * itemsize > limit:
        raise TensorTooLargeError(
            f"{op}: a tensor of shape {tuple(sizes)} ({np.dtype(dtype).name}) needs "
            f"{_bytes(count * itemsize)}, more than the {_bytes(limit)} limit "
            f"(physical memory, or {ENV}); refused before any work"
        )
    return count


Shape = tuple[int, ...]


def repeat_shapes(op: str, shape: Shape, dim: int, times: int, dtype) -> tuple[Shape, Shape, Shape]:
    """The three shapes of a one-copy ``repeat_dim``: ``shape`` with a 1 inserted before
    ``dim``, that 1 grown to ``times``, and the result (``times * shape[dim]`` at ``dim``); the
    result's size checked first (:func:`check_size`)."""
    shape = tuple(shape)
    if not isinstance(times, (int, np.integer)) or isinstance(times, bool) or times < 0:
        raise ValueError(f"{op}: expected times to be an int >= 0, found {times!r}")
    out = shape[:dim] + (shape[dim] * int(times),) + shape[dim + 1 :]
    check_size(op, out, dtype)
    return shape[:dim] + (1,) + shape[dim:], shape[:dim] + (int(times),) + shape[dim:], out


def check_cat(op: str, tensors: Sequence, dim: int) -> None:
    """Check the result of concatenating ``tensors`` along ``dim`` fits (:func:`check_size`)."""
    if not tensors:
        raise ValueError(f"{op}: expected at least one tensor, found none")
    first = tuple(tensors[0].shape)
    total = sum(int(t.shape[dim]) for t in tensors)
    check_size(op, first[:dim] + (total,) + first[dim + 1 :], tensors[0].dtype)


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover
