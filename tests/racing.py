"""Draws made from several threads at once, for the tests that look for races in a random stream."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def draws_from_threads(draw: Callable[[], T], threads: int, draws: int) -> list[T]:
    """``draw()`` called ``draws`` times in each of ``threads`` threads started together (a
    barrier), with Python switching threads as often as it can, so a race shows up in every run,
    not one in three; every draw, thread by thread. An error in a thread fails the test."""
    start = threading.Barrier(threads)
    results: list[list[T]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []

    def work(slot: int) -> None:
        try:
            start.wait()
            for _ in range(draws):
                results[slot].append(draw())
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in workers:
            t.start()
        for t in workers:
            t.join(timeout=60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    return [d for slot in results for d in slot]
