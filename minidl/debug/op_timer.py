"""``BackendOpTimer``: where a step's time goes, split into the backend's ops and the rest.

The performance chapter uses it on a training step: every public op of a backend class
(``Flex``: ``float_matmul``, ``float_add``, ...) is wrapped for the duration of a ``with``
block, and each call's CPU time is added to its op's total. Only the outermost backend call
counts (a ``linear`` that calls ``float_matmul`` is one entry), so the totals add up, and
whatever the block spent outside them is the stack's own Python: Tensor checks, Dispatch,
recording and walking the graph, the optimizer's bookkeeping.

No burn counterpart: burn's tracing happens in its profiling tools, outside the crates.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from minidl.backend.op_patch import BackendOpPatch


class BackendOpTimer(BackendOpPatch):
    """Times every public op of ``backend`` (a backend class such as ``Flex``) while active.

    ``with BackendOpTimer(Flex) as timer: step()`` leaves, in ``timer.seconds`` and
    ``timer.calls``, the CPU time and the number of calls per op name; ``timer.total()`` is
    their sum. The class is restored on exit, also after an exception. With ``record=[]`` the
    list also receives ``(op, args, kwargs)`` of every outermost call, in order, so the same
    backend work can be replayed without the stack above it (``bench/stack.py`` does).
    """

    def __init__(self, backend: type, clock: Callable[[], float] = time.thread_time,
                 record: list[tuple[Callable, tuple, dict]] | None = None):
        super().__init__(backend)
        self.clock = clock
        self.record = record
        self.seconds: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()

    def _wrap(self, name: str, fn: Callable) -> classmethod:
        timer = self

        def timed(cls, *args: Any, **kwargs: Any) -> Any:
            if timer._depth:  # inside another timed op: counted there
                return fn(*args, **kwargs)
            timer._depth += 1
            start = timer.clock()
            try:
                out = fn(*args, **kwargs)
            finally:
                timer.seconds[name] += timer.clock() - start
                timer.calls[name] += 1
                timer._depth -= 1
            if timer.record is not None:
                timer.record.append((fn, args, kwargs))
            return out

        timed.__name__ = name
        return classmethod(timed)

    def total(self) -> float:
        """CPU seconds spent inside the backend's ops (outermost calls only)."""
        return sum(self.seconds.values())

    def grouped(self, groups: dict[str, Callable[[str], bool]]) -> dict[str, float]:
        """Seconds per group: each op goes to the first group whose test accepts its name."""
        out = dict.fromkeys(groups, 0.0)
        for name, seconds in self.seconds.items():
            for group, accepts in groups.items():
                if accepts(name):
                    out[group] += seconds
                    break
        return out
