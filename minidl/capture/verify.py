"""``run_verified``: one replay checked against the eager step it stands for.

For debugging a capture (``capture(..., verify=True)``): the state (carried arrays, host
counters, the backend's random streams) is saved, the replay runs, the state is put back and
the eager step runs on the same inputs while recorded; outputs and new state must agree to
``rtol``. The eager run's new state arrays become the graph's buffers, so the model and the
optimizer, which the eager step just rebound to them, and the graph stay the same arrays.
No burn counterpart (burn's replay is unchecked); ``torch.compile`` has none either.

``run_eager`` is the other eager run a graph makes: the step on arguments its program does
not fit (a loader's last, smaller batch), after which the graph carries the state that run
left, so replays continue from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minidl.capture.errors import CaptureError
from minidl.capture.launches import recorder_for
from minidl.capture.program import _paths
from minidl.capture.recorder import root
from minidl.capture.tensors import array_of, flat_tensors

RTOL = 1e-5


def _streams(backend: type) -> list[tuple[Any, int]]:
    return [(s, s.counter) for s in getattr(backend, "_streams", {}).values()]


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / (np.abs(b) + 1e-12))) if a.size else 0.0


def _eager_recorded(graph: Any, args: tuple) -> tuple[Any, list]:
    """``graph.step(*args)`` run eagerly while recorded; its result and its calls."""
    readable = {id(root(array_of(a))) for a, s in zip(args, graph.specs) if s.role == "tensor"}
    recorder = recorder_for(graph.device_backend, readable)
    with recorder:
        result = graph.step(*args)
        recorder.finish()
    if list(map(_kind, recorder.calls)) != [_kind(name) for name in graph.program.names]:
        raise CaptureError(f"the eager step made a different program than the capture "
                           f"({len(recorder.calls)} calls, the capture {len(graph.program.names)})")
    return result, recorder.calls


def _kind(call: Any) -> str:
    # a fused kernel's name carries its shapes: another batch size launches other kernels
    name = call if isinstance(call, str) else call.name
    return "launch" if name.startswith("launch ") else name


def _state_made_by(program: Any, calls: list) -> list[np.ndarray]:
    return [dict(_paths(calls[j].out, ""))[path] for j, path in program.positions]


def run_eager(graph: Any, args: tuple) -> Any:
    """Run the step eagerly on ``args`` (any shapes the step takes) and make the arrays it
    left in the model and optimizer the graph's carried state, the host counters what the
    optimizer now holds."""
    result, calls = _eager_recorded(graph, args)
    graph.program.rebind(_state_made_by(graph.program, calls))
    graph.counters.read_back()
    return result


def run_verified(graph: Any, args: tuple, env: dict[str, float]) -> Any:
    """Replay, then run the eager step from the same state, compare, keep the eager state."""
    program = graph.program
    saved = [s.copy() for s in program.state]
    counters = dict(graph.counters.values)
    streams = _streams(graph.backend)
    result = graph._run(args, env)
    replayed_state = [s.copy() for s in program.state]
    replayed_out = [t.to_numpy() for t in flat_tensors(result)]
    for buf, old in zip(program.state, saved):
        np.copyto(buf, old)
    graph.counters.values = counters
    graph.counters.write_back()
    for stream, counter in streams:
        stream.counter = counter
    eager, calls = _eager_recorded(graph, args)
    graph.counters.values = counters
    graph.counters.advance(env)
    new_state = _state_made_by(program, calls)
    for k, (mine, theirs) in enumerate(zip(replayed_state, new_state)):
        if _rel(mine, theirs) > RTOL:
            raise CaptureError(f"verify: state {k} (shape {list(theirs.shape)}, made by call "
                               f"{program.positions[k][0]} {program.names[program.positions[k][0]]}) "
                               f"differs from the eager step: max relative error {_rel(mine, theirs):.2e}")
    for k, (mine, t) in enumerate(zip(replayed_out, flat_tensors(eager))):
        if _rel(mine, t.to_numpy()) > RTOL:
            raise CaptureError(f"verify: output {k} differs from the eager step: max relative error "
                               f"{_rel(mine, t.to_numpy()):.2e}")
    program.rebind(new_state)
    return result
