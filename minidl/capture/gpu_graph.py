"""``capture`` on the fused GPU device (``Device.fusion_wgpu()``, autodiff or not):
the step recorded as the dispatches the runtime makes, replayed as one pass of them (burn's
``capture`` on CUDA/HIP, ``crates/burn-tensor/src/tensor/api/graph.rs``, which records the
closure's kernel launches into a device graph).

The recording is the runtime's own: every dispatch of the two recorded runs, with its
buffers and the words a replay recomputes (:class:`~minidl.backends.wgpu.runtime.Dispatched`);
on ``Fusion[Wgpu]`` those are the fused kernels and the eager ops of the stream's plans, the
stream drained before and at the end of each run. What the CPU capture declares is declared
the same way (:mod:`minidl.capture.graph`): tensor arguments are inputs, float arguments
scalar inputs, the optimizers' host counters tracked; a read back to the host inside the step
is refused (but an index check's: a replay does not check indices again), and so is an
upload whose data differ between the runs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from minidl.backend.dtype import Kind
from minidl.capture.declared import recorded_runs, refuse_unreached, replay_env
from minidl.capture.errors import CaptureError, ReplayMismatchError
from minidl.capture.gpu_program import GpuProgram, raw
from minidl.capture.scalar import Guard
from minidl.capture.tensors import flat_tensors, leaf_of, rebuild
from minidl.dispatch.tensor import DispatchTensor
from minidl.tensor import Tensor

_KINDS = {"f": Kind.FLOAT, "i": Kind.INT, "u": Kind.BOOL, "b": Kind.BOOL}


class GpuRecorder:
    """Records one run's dispatches; refuses host reads (but of the declared inputs) and keeps
    the uploads, which must be the same in both runs."""

    def __init__(self, rt: Any, stream: Any, readable: set[int]):
        self.rt, self.stream, self.readable = rt, stream, readable
        self.uploads: list[bytes] = []

    def __enter__(self) -> GpuRecorder:
        if self.stream is not None:
            self.stream.drain(reason="capture: before a recorded run")
        rt, recorder = self.rt, self
        self._made = rt.record_dispatches()
        self.dispatches = self._made.__enter__()
        read, upload = rt.read, rt.upload

        def reading(buffer, nbytes: int, check: bool = False) -> bytes:
            if not check and id(getattr(buffer, "raw", buffer)) not in recorder.readable:
                raise CaptureError(
                    "capture refused a read back to the host inside the step: a replay runs no "
                    "Python, so what the host did with the value would be frozen at its capture "
                    "value. Return the tensor from the step and read it after replay() instead.")
            return read(buffer, nbytes, check)

        def uploading(array, op: str = "upload"):
            recorder.uploads.append(bytes(memoryview(array).cast("B")) if array.nbytes else b"")
            return upload(array, op)

        rt.read, rt.upload = reading, uploading
        return self

    def finish(self) -> None:
        """The end of the step: the stream drained, so its last blocks belong to this run."""
        if self.stream is not None:
            self.stream.drain(reason="capture: end of the step")

    def __exit__(self, *exc: Any) -> None:
        del self.rt.read, self.rt.upload  # the class's methods again
        self._made.__exit__(*exc)


def capture_gpu(device: Any, backend: type, step: Callable[..., Any], args: Sequence[Any],
                specs: list, counters: Any, warmup: int) -> GpuGraph:
    """:func:`minidl.capture.capture` on a GPU device (``specs`` and ``counters`` made there)."""
    from minidl.backends.wgpu.runtime import runtime

    rt = runtime(getattr(device, "index", 0))
    stream = getattr(backend, "stream", None)
    for _ in range(warmup):
        step(*args)
    guards: list[Guard] = []
    inputs = [leaf_of(a) for a, s in zip(args, specs) if s.role == "tensor"]
    readable = {id(raw(t)) for t in inputs}
    recorders, result = recorded_runs(step, args, specs, counters, guards,
                                      lambda: GpuRecorder(rt, stream, readable))
    runs = [list(r.dispatches) for r in recorders]
    uploads = [r.uploads for r in recorders]
    if uploads[0] != uploads[1]:
        raise CaptureError("capture refused: the step uploads host data that differ between two runs "
                           "(host data made inside the step would be frozen: pass it as an input)")
    outputs = [leaf_of(t) for t in flat_tensors(result)]
    program = GpuProgram(rt, runs[0], runs[1], inputs, outputs)
    refuse_unreached(specs, [w[2].text for _, w in program.symbols if w[0] == "scalar"], guards)
    unique = {(g.text, g.result): g for g in guards}
    return GpuGraph(device, step, specs, program, list(unique.values()), counters, result, backend)


class GpuGraph:
    """A captured step on the GPU (burn's ``Graph``): ``replay(*args)`` runs its dispatches in
    one pass and returns the step's result as new tensors. As on the CPU, the carried state
    is updated where the model and optimizer hold it, and each replay's outputs are new."""

    def __init__(self, device: Any, step: Callable, specs: list, program: GpuProgram,
                 guards: list[Guard], counters: Any, result: Any, backend: type):
        self.device, self.step, self.specs, self.program = device, step, specs, program
        self.guards, self.counters, self._template = guards, counters, result
        self.device_backend = self.backend = backend
        self._wrap = backend.stream.ready if hasattr(backend, "stream") else (lambda t: t)
        self._inner = device.inner()
        self.replays = 0
        weakref.finalize(self, program.rt.unpin, [*program.temporaries, *program._owned])

    @property
    def dispatches(self) -> int:
        """How many dispatches one replay makes (all in one compute pass)."""
        return len(self.program.plan)

    calls = dispatches

    @property
    def program_text(self) -> str:
        """One line per dispatch: its kernel's entry line and workgroups."""
        lines = []
        for k, (source, (_, _, groups)) in enumerate(zip(self.program.sources, self.program.plan, strict=True)):
            entry = source[source.index("@compute"):].splitlines()[0]
            lines.append(f"{k:4d} {entry}  groups={groups}")
        return "\n".join(lines)

    def replay(self, *args: Any) -> Any:
        """Run the captured dispatches on ``args`` (same structure as at capture)."""
        env = replay_env(self.specs, self.counters, self.guards, args)
        inputs = [leaf_of(a) for a, s in zip(args, self.specs) if s.role == "tensor"]
        for k, t in enumerate(inputs):
            if not t.is_contiguous():
                raise ReplayMismatchError(f"replay: tensor input {k} is a strided view (pass a contiguous one)")
        outs = self.program.run(inputs, env)
        if self.counters.next:
            self.counters.advance(env)
        self.replays += 1
        made = [Tensor(DispatchTensor(self._wrap(o), self._inner), _KINDS[o.dtype.kind]) for o in outs]
        return rebuild(self._template, made)
