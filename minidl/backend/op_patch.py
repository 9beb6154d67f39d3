"""Wrap every public op of a backend class for the length of a ``with`` block.

Two tools watch a backend from outside without changing it: the capture recorder
(:mod:`minidl.capture.recorder`, which keeps each outermost call for a replay) and the
debug op timer (:class:`minidl.debug.op_timer.BackendOpTimer`). Both replace each op of the
class (``Flex.float_matmul``, module ops and their backward ops included) with a wrapper and
put the originals back on exit, also after an exception. This base does that part once; a
subclass writes only ``_wrap``. burn has no counterpart: Rust cannot patch a type's methods,
so its profilers hook the backend's own event stream instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Public names of a backend class that are not ops (state, random streams, its name). Every
#: other public callable is an entry point, module ops and their backward ops included (a
#: conv2d's backward kernels run from the autodiff layer, not inside a float op).
NOT_OPS = frozenset({"ad_enabled", "generator", "seed", "rng_state", "stream", "name"})


def entry_points(backend: type) -> list[str]:
    """Every public callable of ``backend`` that is not in :data:`NOT_OPS`: its protocol ops and
    the module ops' backward ops (unlike :func:`minidl.backend.protocol.op_names`, which lists the
    protocol's ops only)."""
    names = [n for n in dir(backend) if not n.startswith("_") and n not in NOT_OPS]
    return [n for n in names if callable(getattr(backend, n))]


class BackendOpPatch:
    """A context manager that swaps each op of ``backend`` for ``self._wrap(name, op)``.

    ``_depth`` counts nested op calls, so a subclass can act on outermost calls only (an op
    that calls another op of the same backend runs both wrappers)."""

    def __init__(self, backend: type):
        self.backend = backend
        self._saved: dict[str, Any] = {}
        self._depth = 0

    def _wrap(self, name: str, fn: Callable) -> classmethod:
        raise NotImplementedError

    def __enter__(self):
        for name in entry_points(self.backend):
            self._saved[name] = self.backend.__dict__.get(name)
            # the bound classmethod, so a subclass's override keeps its own cls
            setattr(self.backend, name, self._wrap(name, getattr(self.backend, name)))
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, original in self._saved.items():
            if original is None:  # inherited: drop the wrapper to uncover the base's op
                delattr(self.backend, name)
            else:
                setattr(self.backend, name, original)
        self._saved.clear()
