"""Build exercise of the train-and-inference chapter: BatchNorm's ``RunningState``, one thread.

burn's ``RunningState`` (burn-core ``module/param/running.rs``) keeps a folded value and, per
thread, a *pending* update. ``update(v)`` first folds this thread's pending value in if it has
one, then stores ``v`` as pending; ``value()`` returns the folded value and folds nothing (so it
can be one update behind); ``value_sync()`` folds this thread's pending value, then returns the
folded one; ``clone()`` shares the state (burn's derived ``Clone`` copies the ``Arc``s). With
one thread, folding is taking the pending value (the average of one).

The reader writes that class. The checker drives it with a generated sequence of calls (on the
state and on clones of it) and compares every value read with what minidl's own
``RunningState`` returns for the same calls. The first case is the chapter's: two training
forwards of batches 0 and 1, read through ``value()`` and ``value_sync()``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.module import RunningState
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.modes import batch

__all__ = ["PLANTED", "MyRunningState", "exercise"]


class MyRunningState:
    """One thread's RunningState: a folded value and at most one pending update."""

    def __init__(self, value: Tensor):
        self.folded = value
        self.pending = None

    def update(self, value: Tensor) -> None:
        if self.pending is not None:  # a second update folds the first in
            self.folded = self.pending
        self.pending = value

    def value(self) -> Tensor:
        return self.folded  # folds nothing: may be one update behind

    def value_sync(self) -> Tensor:
        if self.pending is not None:
            self.folded, self.pending = self.pending, None
        return self.folded

    def clone(self):
        return self  # clones share the statistics


# ----- planted wrong solutions ---------------------------------------------------------------
class EagerValue(MyRunningState):
    """value() folds too: never stale, unlike burn's."""

    def value(self) -> Tensor:
        return self.value_sync()


class Overwrites(MyRunningState):
    """update() replaces the pending value instead of folding it in first."""

    def update(self, value: Tensor) -> None:
        self.pending = value


class SyncForgets(MyRunningState):
    """value_sync() drops the pending update instead of folding it."""

    def value_sync(self) -> Tensor:
        self.pending = None
        return self.folded


class CopyingClone(MyRunningState):
    """clone() copies, as PyTorch's deepcopy does."""

    def clone(self) -> MyRunningState:
        copy = type(self)(self.folded)
        copy.pending = self.pending
        return copy


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "value() folds eagerly": (EagerValue, "value"),
    "update overwrites the pending value": (Overwrites, "value"),
    "value_sync forgets the pending value": (SyncForgets, "value"),
    "clone copies": (CopyingClone, "value"),
}


# ----- the driver and its reference ----------------------------------------------------------
def running_state_run(solution, case: dict) -> dict:
    """Build ``solution(initial)`` as state ``s0`` and make the case's calls; output every value
    read (``value()`` / ``value_sync()``), named by its call."""
    dev = Device.flex()
    states = {"s0": solution(Tensor.from_numpy(case["initial"], dev))}
    reads = {}
    for number, (call, (name, op, arg)) in enumerate(zip(case["calls"], case["_ops"],
                                                         strict=True), 1):
        state = states[name]
        if op == "update":
            state.update(Tensor.from_numpy(arg, dev))
        elif op == "clone":
            states[arg] = state.clone()
        else:
            reads[f"call {number}, {call}"] = getattr(state, op)()
    return reads


def _reference(case: dict) -> dict:
    return running_state_run(RunningState, case)


def _call(name: str, op: str, arg) -> str:
    if op == "update":
        numbers = (np.format_float_positional(v, unique=True, trim="0") for v in arg)
        return f"{name}.update([{', '.join(numbers)}])"
    if op == "clone":
        return f"{arg} = {name}.clone()"
    return f"{name}.{op}()"


def _case(initial: np.ndarray, ops: list[tuple[str, str, object]]) -> dict:
    return {"initial": initial, "calls": [_call(*op) for op in ops], "_ops": ops}


def _build(draw_ops: tuple[int, list[tuple[str, int, int]]]) -> dict:
    channels, steps = draw_ops
    rng = np.random.default_rng(len(steps) * 31 + channels)
    names, ops = ["s0"], []
    for op, pick, number in steps:
        name = names[pick % len(names)]
        if op == "update":
            ops.append((name, op, np.float32(number) + rng.integers(0, 9, channels)
                        .astype(np.float32) / 4))
        elif op == "clone":
            names.append(f"s{len(names)}")
            ops.append((name, op, names[-1]))
        else:
            ops.append((name, op, None))
    ops.append(("s0", "value", None))  # every case ends reading the first state twice
    ops.append(("s0", "value_sync", None))
    return _case(np.zeros(channels, dtype=np.float32), ops)


def _cases() -> st.SearchStrategy:
    step = st.tuples(st.sampled_from(["update", "update", "value", "value_sync", "clone"]),
                     st.integers(0, 3), st.integers(1, 9))
    return st.tuples(st.integers(1, 3), st.lists(step, min_size=1, max_size=7)).map(_build)


def chapter_cases() -> list[dict]:
    """The chapter's two forwards of batches 0 and 1 (their running-mean updates), then a
    forward on a clone."""
    m0 = (0.1 * batch(0).mean(axis=0)).astype(np.float32)
    m1 = (0.9 * m0 + 0.1 * batch(1).mean(axis=0)).astype(np.float32)
    zeros = np.zeros(3, dtype=np.float32)
    stale = [("s0", "update", m0), ("s0", "value", None), ("s0", "update", m1),
             ("s0", "value", None), ("s0", "value_sync", None), ("s0", "value", None)]
    clone = [("s0", "clone", "s1"), ("s1", "update", m0), ("s0", "value_sync", None)]
    return [_case(zeros, stale), _case(zeros, clone)]


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``MyRunningState`` class."""
    return BuildExercise(
        "BatchNorm's RunningState on one thread: update, value, value_sync, clone",
        cases=_cases(),
        run=running_state_run,
        references=[Reference("minidl.module.RunningState", _reference, rtol=0, atol=0)],
        rules=Rules(no_data=True, no_numpy=True),
        hints={
            "value": [
                "Replay the calls on paper with two slots, folded and pending: which slot "
                "does each call read, and which does it change?",
                "update() folds a pending value in before it stores the new one; value() "
                "changes nothing; value_sync() folds, then reads.",
                "A forward on a clone must move the original: what does clone() return?",
            ],
            "error": "The checker calls MyRunningState(tensor), then state.update(tensor), "
            "state.value(), state.value_sync() and state.clone(); the two reads return "
            "a Tensor.",
            "rule": "Store the tensors you are given; nothing needs their numbers.",
        },
        reference_solution=MyRunningState,
        examples=chapter_cases(),
        max_examples=max_examples,
        order=("initial", "calls"),
    )
