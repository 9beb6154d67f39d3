"""The op families of ``Autodiff[B]``, one mixin per file; combined in :mod:`minidl.autodiff.backend`.

Each override either records a step (``record(cls, Step(...), inputs...)``) or goes straight
to the inner backend ``cls._inner`` (creation, comparisons, int and bool ops).
"""

from __future__ import annotations

from typing import Any

from minidl.autodiff.tensor import AutodiffTensor


def inner_device(device: Any) -> Any:
    """The device to hand the inner backend: ``device.inner()`` for an autodiff device.

    Autodiff[B]'s device is B's device (as in burn); Dispatch may pass its autodiff twin.
    """
    is_autodiff = getattr(device, "is_autodiff", None)
    return device.inner() if is_autodiff is not None and is_autodiff() else device


def prim(tensor: Any) -> Any:
    """The inner primitive of an ``AutodiffTensor`` (an inner primitive is returned as is)."""
    return tensor.primitive if isinstance(tensor, AutodiffTensor) else tensor
