"""What a capture declares, handled the same way on every device: the two recorded runs get
the declared scalar inputs and the host counters as symbols; each declared scalar input must
reach the program; each replay's arguments must fit the capture and take the Python branches
it took (the guards), giving the environment the program's expressions read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from minidl.capture.errors import CaptureError, ReplayMismatchError
from minidl.capture.scalar import Guard, SymbolicScalar


def recorded_runs(step: Callable[..., Any], args: Sequence[Any], specs: Sequence[Any], counters: Any,
                  guards: list[Guard], make_recorder: Callable[[], Any]) -> tuple[list[Any], Any]:
    """Run ``step`` twice, each run inside a new recorder (``make_recorder()``), the declared
    scalars passed as symbols and the host counters made symbolic; the two recorders and the
    second run's result."""
    recorders, result = [], None
    for _ in range(2):
        call_args = [SymbolicScalar.input(s.name, a, guards) if s.role == "scalar" else a
                     for a, s in zip(args, specs)]
        counters.symbolize(guards)
        recorder = make_recorder()
        try:
            with recorder:
                result = step(*call_args)
                recorder.finish()
        finally:
            counters.collect()
        recorders.append(recorder)
    return recorders, result


def refuse_unreached(specs: Sequence[Any], texts: Sequence[str], guards: Sequence[Guard]) -> None:
    """Refuse a declared scalar input that no recorded call received a number computed from
    (``texts``: the expressions the program recomputes)."""
    reached = " ".join(texts) + " " + " ".join(g.text for g in guards)
    for s in specs:
        if s.role == "scalar" and s.name not in reached:
            raise CaptureError(
                f"capture refused the scalar input {s.name} (argument {s.index}): no backend call "
                f"received a number computed from it. The step turned it into a plain number first "
                f"(float(), math.*, NumPy) or did not use it; a replay would freeze its capture value")


def replay_env(specs: Sequence[Any], counters: Any, guards: Sequence[Guard], args: Sequence[Any]) -> dict[str, float]:
    """The arguments checked against the capture's, then the environment of this replay (the
    host counters and the declared scalars), every guard holding in it."""
    if len(args) != len(specs):
        raise ReplayMismatchError(f"replay: {len(args)} arguments, the capture had {len(specs)}")
    for spec, value in zip(specs, args):
        spec.check(value)
    env = dict(counters.values)
    for spec, value in zip(specs, args):
        if spec.role == "scalar":
            env[spec.name] = float(value)
    for guard in guards:
        if not guard.holds(env):
            raise ReplayMismatchError(
                f"replay: at capture the step took a Python branch on a declared scalar "
                f"({guard.text} was {guard.result}); with these inputs it goes the other way, "
                f"and the recorded program is only the branch taken. Capture again")
    return env
