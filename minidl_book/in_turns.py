"""Timing contenders *in turns*: one call (or block of calls) of each, round after round, so
the noise of a shared machine falls on all of them alike; each keeps its best round.

Mirrors no burn piece: it is the book's and ``bench/``'s stopwatch. numba runs on one thread
while it times, so no contender borrows more cores than its neighbour.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

__all__ = ["best_in_turns"]


def best_in_turns(contenders: Mapping[str, Callable[[], object]], rounds: int = 5,
                  steps: int = 1, clock: Callable[[], float] = time.perf_counter,
                  pause: float = 0.0) -> dict[str, float]:
    """Each contender's best seconds per call over ``rounds`` rounds of ``steps`` calls, read
    on ``clock`` (wall time by default; ``time.thread_time`` for one thread's CPU time), after
    one warm-up call each; ``pause`` seconds of sleep after each contender's turn."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for fn in contenders.values():
            fn()
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(rounds):
            for name, fn in contenders.items():
                start = clock()
                for _ in range(steps):
                    fn()
                best[name] = min(best[name], (clock() - start) / steps)
                if pause:
                    time.sleep(pause)
        return best
    finally:
        numba.set_num_threads(threads)
