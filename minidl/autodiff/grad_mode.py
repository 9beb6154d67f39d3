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


class _GradMode(threading.local):
    # a class attribute as the default: a thread that never entered no_grad() reads it without
    # the AttributeError that getattr(local, name, default) raises and catches on every op (a
    # speed trick, ARCHITECTURE.md, "Where speed tricks may live")
    enabled = True


#: This thread's grad mode: ``STATE.enabled`` (what :func:`is_grad_enabled` returns; the
#: recorder reads the field directly, it runs on every op).
STATE = _GradMode()


def is_grad_enabled() -> bool:
    """False inside a ``no_grad()`` block of this thread."""
    return STATE.enabled


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Ops inside record nothing; their outputs are untracked (``is_require_grad`` is False).

    Unlike moving to the inner device, the tensors keep their autodiff device; unlike
    ``detach()``, it applies to every op in the block. ``require_grad()`` still works inside.
    """
    previous = is_grad_enabled()
    STATE.enabled = False
    try:
        yield
    finally:
        STATE.enabled = previous
