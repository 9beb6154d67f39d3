"""``no_grad()``: a PyTorch-style switch that stops recording (no burn counterpart).

burn's way to run without a graph is to compute on the inner device (``tensor.inner()``,
``module.valid()``): the tensors are then plain backend tensors and no autodiff code runs at
all. ``no_grad()`` is for PyTorch habits: tensors stay on the autodiff device (so they still
mix with tracked ones), every op still goes through ``Autodiff[B]``, but nothing is recorded
and every result is untracked (requirement ``None``). It is per thread, like PyTorch's.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_STATE = threading.local()


def is_grad_enabled() -> bool:
    """False inside a ``no_grad()`` block of this thread."""
    return getattr(_STATE, "enabled", True)


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Ops inside record nothing; their outputs are untracked (``is_require_grad`` is False).

    Unlike moving to the inner device, the tensors keep their autodiff device; unlike
    ``detach()``, it applies to every op in the block. ``require_grad()`` still works inside.
    """
    previous = is_grad_enabled()
    _STATE.enabled = False
    try:
        yield
    finally:
        _STATE.enabled = previous
