"""``capture(device, step, *args)`` and ``Graph.replay(*args)``: a step recorded once, then run
as its backend program alone, with no Tensor, Dispatch, Autodiff or optimizer Python between
the kernels (burn's ``burn::tensor::capture`` and ``Graph::replay``,
``crates/burn-tensor/src/tensor/api/graph.rs``).

burn records the closure's kernel launches into a CUDA/HIP graph and, on every other backend,
"simply re-executes the closure". On our CPU backends capture goes further: it records the
backend calls themselves (``Flex.float_matmul(a, b)``...) and replays those.

What changes between steps is declared, never frozen by accident:

- the step's Tensor arguments (the batch) are inputs, rebound by each replay after a guard
  on shape, dtype and device;
- its float arguments (the learning rate) are scalar inputs, tracked through the host
  arithmetic that uses them (:mod:`minidl.capture.scalar`);
- the optimizers passed in ``optimizers=`` have their host counters (Adam's step count)
  tracked the same way and written back after each replay;
- the model's parameters and the optimizer's moments are carried state: found by recording
  two runs (what the second reads from the first), updated in place in the arrays the model
  and optimizer hold, so those objects see each replay's values (and a checkpoint saves them);
- random draws (dropout) are replayed as calls to the backend's random ops, which advance its
  stream: every replay draws a new mask, the same one an eager run with the seed would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from minidl.backend.dtype import Kind
from minidl.capture.declared import recorded_runs, refuse_unreached, replay_env
from minidl.capture.errors import CaptureError, ReplayMismatchError
from minidl.capture.gpu_graph import GpuGraph, capture_gpu
from minidl.capture.launches import is_fusion, recorder_for
from minidl.capture.program import Program, build_program
from minidl.capture.recorder import root
from minidl.capture.scalar import Guard, SymbolicScalar, evaluate
from minidl.capture.tensors import array_of, flat_tensors, leaf_of, rebuild
from minidl.capture.verify import run_eager, run_verified
from minidl.dispatch import Device
from minidl.dispatch.route import backend_for
from minidl.dispatch.tensor import DispatchTensor
from minidl.tensor import Tensor

#: the device kinds whose capture records GPU dispatches (minidl.capture.gpu_graph)
GPU_KINDS = ("fusion_wgpu",)
_KINDS = {"f": Kind.FLOAT, "i": Kind.INT, "u": Kind.INT, "b": Kind.BOOL}


class _Spec:
    """What the capture saw at one argument position: a tensor (shape, dtype, device), a
    scalar input (its name), or a static value every replay must repeat."""

    def __init__(self, index: int, value: Any):
        self.index = index
        if isinstance(value, Tensor):
            self.role = "tensor"
            arr = leaf_of(value)
            self.shape, self.dtype, self.device = tuple(arr.shape), arr.dtype, value.device
            self.autodiff = value.device.is_autodiff()
        elif isinstance(value, float):
            self.role, self.name = "scalar", f"arg{index}"
        else:
            self.role, self.value = "static", value

    def check(self, value: Any) -> None:
        where = f"replay: argument {self.index}"
        if self.role == "tensor":
            if not isinstance(value, Tensor):
                raise ReplayMismatchError(f"{where} must be a Tensor like at capture, found {type(value).__name__}")
            arr = leaf_of(value)
            if tuple(arr.shape) != self.shape:
                raise ReplayMismatchError(
                    f"{where} has shape {list(arr.shape)}, the capture had {list(self.shape)}: a captured "
                    f"program is fixed to its shapes. Capture again for the new shape, or run this "
                    f"batch with graph.step_eagerly (minidl refuses, like TinyJit, instead of "
                    f"recapturing silently like torch.compile: a capture runs the step eagerly, and "
                    f"those runs train the model)")
            if arr.dtype != self.dtype:
                raise ReplayMismatchError(f"{where} has dtype {arr.dtype}, the capture had {self.dtype}")
            if value.device != self.device or value.device.is_autodiff() != self.autodiff:
                raise ReplayMismatchError(f"{where} is on {value.device}, the capture was on {self.device}")
        elif self.role == "scalar":
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ReplayMismatchError(f"{where} must be a number (the scalar input {self.name}), "
                                          f"found {type(value).__name__}")
        elif not (value is self.value or _same(value, self.value)):
            raise ReplayMismatchError(f"{where} is {value!r}, the capture had {self.value!r}: a "
                                      f"non-tensor, non-float argument is part of the program")


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


class _HostCounters:
    """The number fields of the optimizers' per-parameter states (Adam's ``time``): made
    symbolic for the recorded runs, then evaluated and written back after each replay."""

    def __init__(self, optimizers: Sequence[Any]):
        self.optimizers = list(optimizers)
        self.values: dict[str, float] = {}
        self.kinds: dict[str, type] = {}
        self.next: dict[str, Any] = {}
        self.where: dict[str, tuple[Any, Any, str]] = {}

    def symbolize(self, guards: list) -> None:
        for o, optim in enumerate(self.optimizers):
            for pid, state in list(optim.states.items()):
                if not dataclasses.is_dataclass(state):
                    continue
                changes = {}
                for f in dataclasses.fields(state):
                    value = getattr(state, f.name)
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        name = f"optimizers[{o}].{f.name}[{pid}]"
                        self.kinds.setdefault(name, int if isinstance(value, int) and
                                              not isinstance(value, float) else float)
                        self.values[name] = float(value)
                        self.where[name] = (optim, pid, f.name)
                        changes[f.name] = SymbolicScalar.input(name, float(value), guards)
                if changes:
                    optim.states[pid] = dataclasses.replace(state, **changes)

    def collect(self) -> None:
        """After a recorded run: the expressions of the new counts; concrete values go back."""
        for name, (optim, pid, field) in self.where.items():
            value = getattr(optim.states[pid], field)
            self.next[name] = value
            self.values[name] = float(value)
        self.write_back()

    def advance(self, env: dict[str, float]) -> None:
        for name, expr in self.next.items():
            self.values[name] = float(evaluate(expr, env))
        self.write_back()

    def read_back(self) -> None:
        """The counts the optimizers hold now (after an eager step advanced them)."""
        for name, (optim, pid, field) in self.where.items():
            self.values[name] = float(getattr(optim.states[pid], field))

    def write_back(self) -> None:
        for name, (optim, pid, field) in self.where.items():
            value = self.values[name]
            value = int(round(value)) if self.kinds[name] is int else value
            optim.states[pid] = _replaced(optim.states[pid], field, value)


def _replaced(state: Any, field: str, value: Any) -> Any:
    """``dataclasses.replace(state, **{field: value})``, for a dataclass without
    ``__post_init__`` or slots as a copy of its fields with one changed: a replay writes back
    every parameter's step count, and ``replace`` (its ``__init__`` rebuilt from keywords)
    cost 1.5 us each, 18 us of the CNN step's replay."""
    cls = type(state)
    if hasattr(cls, "__post_init__") or not hasattr(state, "__dict__"):
        return dataclasses.replace(state, **{field: value})
    new = object.__new__(cls)
    new.__dict__.update(state.__dict__)
    new.__dict__[field] = value
    return new


def capture(device: Device, step: Callable[..., Any], *args: Any, optimizers: Sequence[Any] = (),
            warmup: int = 1, verify: bool = False) -> Graph | GpuGraph:
    """Capture ``step(*args)`` on ``device`` for replay (burn's ``capture(device, closure)``).

    Runs the step eagerly ``warmup`` times, then twice more while recording its backend calls
    (every run is a real step: it trains, as burn's warm-up runs do). Tensor arguments are the
    inputs each replay rebinds; float arguments are scalar inputs; pass the optimizers whose
    states hold host counters (Adam) in ``optimizers``. ``verify=True`` makes every replay also
    run the eager step and compare (slow: for debugging a capture).
    """
    backend = backend_for(device.inner())
    specs = [_Spec(i, a) for i, a in enumerate(args)]
    if device.kind == "wgpu":
        raise CaptureError("capture: on the GPU, capture the fused device, Device.fusion_wgpu() (its "
                           "kernels mark the declared scalars a replay recomputes; eager Wgpu's do not)")
    if device.kind in GPU_KINDS:  # the dispatches, replayed in one pass: see gpu_graph.py
        if verify:
            raise CaptureError("capture: verify=True is not available on a GPU device")
        return capture_gpu(device, backend, step, args, specs, _HostCounters(optimizers), warmup)
    for _ in range(warmup):
        step(*args)
    guards: list[Guard] = []
    counters = _HostCounters(optimizers)
    input_ids = {id(array_of(a)): f"in{k}" for k, a in
                 enumerate(a for a, s in zip(args, specs) if s.role == "tensor")}
    readable = {id(root(array_of(a))) for a, s in zip(args, specs) if s.role == "tensor"}
    recorders, result = recorded_runs(step, args, specs, counters, guards,
                                      lambda: recorder_for(backend, readable))
    runs = [r.calls for r in recorders]
    outputs = [array_of(t) for t in flat_tensors(result)]
    n_inputs = len(input_ids)
    program = build_program(runs[0], runs[1], input_ids, n_inputs, outputs)
    refuse_unreached(specs, [s.text for s in program.scalars], guards)
    unique = {(g.text, g.result): g for g in guards}
    return Graph(device, step, specs, program, list(unique.values()), counters, result, backend,
                 verify)


class Graph:
    """A captured step (burn's ``Graph``). ``replay(*args)`` runs the recorded backend program
    with the new arguments and returns the step's result as fresh tensors on the inner device.

    Each replay returns new output arrays (a result is never overwritten by the next replay),
    but the carried state is updated in place: a parameter tensor taken from the model before
    a replay shows the values after it (copy it with ``to_numpy()`` to keep it), as the output
    buffers of a CUDA graph do.
    """

    def __init__(self, device: Device, step: Callable, specs: list[_Spec], program: Program,
                 guards: list[Guard], counters: _HostCounters, result: Any, backend: type, verify: bool):
        self.device, self.step, self.specs, self.program = device, step, specs, program
        self.guards, self.counters, self._template = guards, counters, result
        #: the device's backend (``Flex``, ``Fusion[Flex]``) and the one the program calls
        self.device_backend = backend
        self.backend = backend.inner_backend() if is_fusion(backend) else backend
        # a result goes back to the caller as the device's primitive (a ready fusion handle)
        self._wrap = backend.stream.ready if is_fusion(backend) else (lambda arr: arr)
        self.verify = verify
        self.replays = 0
        self._inner = device.inner()
        texts = {}
        for sym in program.scalars:
            texts.setdefault(sym.text, sym)
        self._scalar_index = [list(texts).index(s.text) for s in program.scalars]
        self._scalar_exprs = [s.expr for s in texts.values()]

    @property
    def program_text(self) -> str:
        """The generated replay function: one line per backend call."""
        return self.program.source

    @property
    def calls(self) -> int:
        """How many backend calls one replay makes."""
        return self.program.calls

    def replay(self, *args: Any) -> Any:
        """Run the captured program on ``args`` (same structure as at capture)."""
        env = replay_env(self.specs, self.counters, self.guards, args)
        if self.verify:
            return self._verified(args, env)
        return self._run(args, env)

    def step_eagerly(self, *args: Any) -> Any:
        """Run the step eagerly on arguments its program does not fit (the data loader's
        last, smaller batch); replays then continue from the state it left. The step must
        make the same sequence of backend calls (only the shapes may differ)."""
        return run_eager(self, args)

    def _run(self, args: Sequence[Any], env: dict[str, float]) -> Any:
        arrays = [array_of(a) for a, s in zip(args, self.specs) if s.role == "tensor"]
        values = [f(env) for f in self._scalar_exprs]
        scalars = [values[k] for k in self._scalar_index]
        outs = self.program.fn(*arrays, *scalars)
        if self.counters.next:
            self.counters.advance(env)
        self.replays += 1
        inner = self._inner
        wrap = self._wrap
        made = [Tensor(DispatchTensor(wrap(o), inner), _KINDS[o.dtype.kind]) for o in outs]
        return rebuild(self._template, made)

    def _verified(self, args: Sequence[Any], env: dict[str, float]) -> Any:
        return run_verified(self, args, env)
