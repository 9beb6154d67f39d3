"""The fusion chapter's probes, each run on a clean stream.

Every probe starts by draining the stream (no op left pending from an earlier cell can join
its segment) and records under a setting it chooses itself, so an exercise gives the same
answer whether it runs in page order, alone, or again: :func:`clean` is that start,
:func:`fresh_store` adds an empty plan store (nothing searched before counts as seen).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from minidl import Device, debug
from minidl.backends.fusion import FusionFlex
from minidl.backends.fusion.plan import ExecutionPlanStore
from minidl.backends.fusion.stream import EAGER_BELOW

__all__ = ["EAGER_BELOW", "clean", "cnn_step_counts", "fresh_store", "cnn_step_ms", "kernel_text", "kernels_in",
           "recorded_in_a_step"]


@contextmanager
def clean(eager_below: int = 0) -> Iterator[Any]:
    """Drain the stream, then record with ``eager_below`` (0: every op, burn's way; the
    shipped :data:`EAGER_BELOW`: small ops on ready tensors run at once) for the block."""
    stream = FusionFlex.stream
    FusionFlex.sync()
    own = vars(stream).get("eager_below")
    stream.eager_below = eager_below
    try:
        yield stream
    finally:
        FusionFlex.sync()
        if own is None:
            del stream.eager_below
        else:
            stream.eager_below = own


@contextmanager
def fresh_store() -> Iterator[Any]:
    """:func:`clean`, with an empty plan store for the block (the old one comes back)."""
    with clean() as stream:
        processor = stream.processor
        kept = processor.store
        processor.store = ExecutionPlanStore()
        try:
            yield stream
        finally:
            FusionFlex.sync()
            processor.store = kept


def kernels_in(fn: Callable[[], Any]) -> int:
    """Generated kernels launched by ``fn()`` on a clean stream, every drain counted."""
    with clean() as stream:
        start = stream.executions
        fn()
    return sum(len(p.kernels) for p in debug.fusion_history(since=start))


def kernel_text(source: str) -> str:
    """The sequential kernel of a generated file (``kernel_par`` is the same loop with
    ``prange``), without the file's imports."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def kernel_seq"))
    return "\n".join(lines[start - 1:]).rstrip()


def cnn_step_counts(step_number: int = 2) -> tuple[dict[str, int], list]:
    """A fresh training-chapter CNN on ``Device.fusion().autodiff()``, every op recorded, on an
    empty plan store: the stream's counts during its ``step_number``-th step (Adam's step of
    that number) and the plans of that step's drains."""
    from minidl_book.workloads import minidl_cnn_step

    with fresh_store() as stream:
        step = minidl_cnn_step(Device.fusion().autodiff())
        for _ in range(step_number - 1):
            step()
        before = stream.counts()
        step()
        after = stream.counts()
        plans = debug.fusion_history(since=before["drains"])
        pending = len(stream.ops)
    return {**{k: after[k] - before[k] for k in after}, "pending": pending}, plans


def recorded_in_a_step(build: Callable[[Device], Any], steps: int = 2) -> int:
    """Ops the shipped device records in the ``steps``-th step of ``build``'s workload."""
    with clean(EAGER_BELOW) as stream:
        step = build(Device.fusion().autodiff())
        for _ in range(steps - 1):
            step()
        before = stream.counts()["recorded"]
        step()
        return stream.counts()["recorded"] - before


def cnn_step_ms(rounds: int = 4, steps: int = 8) -> dict[str, float]:
    """Milliseconds per CNN step (best block) on ``flex().autodiff()``, on
    ``fusion().autodiff()`` recording every op, and on it as shipped: one thread's CPU time
    (numba on one thread), timed in turns (each round runs a block of each)."""
    import time

    import numba

    from minidl_book.workloads import minidl_cnn_step

    settings = {"flex": (Device.flex().autodiff(), EAGER_BELOW),
                "every op": (Device.fusion().autodiff(), 0),
                "shipped": (Device.fusion().autodiff(), EAGER_BELOW)}
    runs = {}
    for name, (device, eager_below) in settings.items():
        with clean(eager_below):
            runs[name] = minidl_cnn_step(device)
            runs[name]()
            runs[name]()
    best = dict.fromkeys(settings, float("inf"))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for _ in range(rounds):
            for name, (_, eager_below) in settings.items():
                with clean(eager_below):
                    t0 = time.thread_time()
                    for _ in range(steps):
                        runs[name]()
                    best[name] = min(best[name], (time.thread_time() - t0) / steps * 1e3)
    finally:
        numba.set_num_threads(threads)
    return best
