"""``RunningState``: a module value updated during forward, shared by clones (burn-core
``module/param/running.rs``).

BatchNorm's running mean and variance live here. burn keeps them in ``Arc<Mutex<..>>`` so a
forward that only borrows the module (``&self``) can update them, and so that threads running
forward on clones of one model feed the same statistics. The semantics are burn's:

- ``update(v)`` stores ``v`` for the CURRENT THREAD; if this thread already had a pending
  value, the pending values of all threads are first folded (averaged) into the value;
- ``value()`` returns the folded value — which can be ONE UPDATE STALE (burn's doc: "The
  current value might be outdated by one update");
- ``value_sync()`` folds first if this thread has a pending value, then returns the value;
- ``clone()`` (and ``Module.clone``, and the map-based modes ``no_grad``/``freeze``/...) keep
  the SAME state object; ``Module.valid()`` and ``Module.train()`` build a fresh one (same id)
  from the synced value, as burn's ``RunningState::valid`` / ``from_inner`` do.
"""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING

from minidl.module.param import new_param_id

if TYPE_CHECKING:
    from minidl.tensor import Tensor


_THREAD_IDS = itertools.count(1)
_THREAD_IDS_LOCK = threading.Lock()
_THIS_THREAD = threading.local()


def current_thread_id() -> int:
    """An id for the calling thread that no other thread ever gets, for the life of the process.

    burn keys pending updates by ``std::thread::ThreadId``, which is never reused. CPython's
    ``threading.get_ident()`` is: a thread started after another one exited often gets the dead
    thread's ident, and would then fold that thread's pending update as if it were its own. A
    counter handed out once per thread (kept in a ``threading.local``) has burn's guarantee.
    """
    ident = getattr(_THIS_THREAD, "id", None)
    if ident is None:
        with _THREAD_IDS_LOCK:
            ident = next(_THREAD_IDS)
        _THIS_THREAD.id = ident
    return ident


class RunningState:
    """A tensor updated in forward passes, averaged over threads. See the module docstring."""

    __slots__ = ("id", "_value", "_pending", "_lock")

    def __init__(self, value: Tensor, id: str | None = None):
        self.id = new_param_id() if id is None else str(id)
        self._value = value
        self._pending: dict[int, Tensor] = {}
        self._lock = threading.Lock()

    @staticmethod
    def new(value: Tensor) -> RunningState:
        """A fresh state (new id) holding ``value`` (burn's ``RunningState::new``)."""
        return RunningState(value)

    @staticmethod
    def with_id(id: str, value: Tensor) -> RunningState:
        """A fresh state with a given id (burn's ``RunningState::with_id``)."""
        return RunningState(value, id)

    def update(self, value: Tensor) -> None:
        """Store ``value`` for this thread; fold first if this thread already had one."""
        thread = current_thread_id()
        with self._lock:
            if thread in self._pending:
                self._fold()
            self._pending[thread] = value

    def value(self) -> Tensor:
        """The folded value — possibly one update stale (see the module docstring)."""
        with self._lock:
            return self._value

    def value_sync(self) -> Tensor:
        """Fold this thread's pending update (with the other threads'), then return the value."""
        with self._lock:
            if current_thread_id() in self._pending:
                self._fold()
            return self._value

    def sync(self) -> None:
        """Fold every pending update, whichever thread made it (what ``valid()`` and records do)."""
        with self._lock:
            if self._pending:
                self._fold()

    def has_pending(self) -> bool:
        """Whether an update waits to be folded."""
        with self._lock:
            return bool(self._pending)

    def clone(self) -> RunningState:
        """The same object: clones share running statistics, as burn's ``Arc`` does."""
        return self

    def fresh(self, value: Tensor | None = None) -> RunningState:
        """A new, unshared state with the same id (``value`` defaults to the synced value)."""
        if value is None:
            self.sync()
            value = self._value
        return RunningState(value, self.id)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the value."""
        return tuple(self._value.shape)

    def _fold(self) -> None:
        values = list(self._pending.values())
        self._pending.clear()
        total = values[0]
        for other in values[1:]:
            total = total + other.to_device(total.device)
        self._value = total if len(values) == 1 else total / float(len(values))

    def __repr__(self) -> str:
        pending = f", {len(self._pending)} pending" if self._pending else ""
        return f"RunningState(id={self.id}, shape={list(self.shape)}{pending})"
