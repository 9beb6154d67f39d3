"""Recording a step on a fusion device as what that device launches on its inner backend.

``Fusion[Flex]`` runs a step as a stream of recorded ops, drained at sync points into fused
numba kernels (a plan's :class:`~minidl.fusion.plan.Launch`) and Flex calls (the ops
no fuser takes). :class:`FusionRecorder` records exactly those: it patches ``Flex`` like the
plain :class:`~minidl.capture.recorder.Recorder` and, for the length of the run, the one entry
point every fused kernel goes through, ``Launch.run``. A replay then calls the generated
kernels and the Flex ops in the order the stream ran them, on the same arrays: no stream, no
plan lookup, no search and no drain (the drains were only where the eager run had to stop
recording; in the program they are nothing). The stream is drained before each recorded run
(unrecorded: the warm-up's pending tail) and once at its end (recorded: the last block, the
optimizer's update, belongs to this step), so each run is one whole step.

burn's counterpart: on CUDA and HIP, ``capture`` records the kernel launches of the closure
into a device graph (``crates/burn-tensor/src/tensor/api/graph.rs``); on a CPU backend burn
re-executes the closure. This is the CPU version of the CUDA graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minidl.capture.recorder import Call, Recorder, user_frame
from minidl.fusion.plan import Launch


def launcher(launch: Launch) -> Callable[..., tuple[np.ndarray, ...]]:
    """A function running ``launch``'s kernel: ``f(*inputs, *scalars, outs=None)`` returns its
    new output arrays. ``outs`` may give, per output, an existing buffer to write instead (the
    carried state an update rewrites in place); ``None`` entries are allocated."""
    function, outputs, sizes, n_in = launch.function, launch.outputs, launch.sizes, len(launch.inputs)
    flat = launch.kernel.flat_inputs

    def launch_kernel(*args: Any, outs: tuple | None = None) -> tuple[np.ndarray, ...]:
        made = tuple(np.empty(shape, dtype) if outs is None or outs[k] is None else outs[k]
                     for k, (_, shape, dtype) in enumerate(outputs))
        inputs = [a.reshape(-1) for a in args[:n_in]] if flat else args[:n_in]
        function(*inputs, *[o.reshape(-1) for o in made], *args[n_in:], *sizes)
        return made

    launch_kernel.__name__ = launch.kernel.name
    #: the input positions that may be an output's buffer when their shapes are equal
    #: (program.py asks before updating carried state in place): the kernel's own answer
    launch_kernel.aliasable = launch.kernel.aliasable
    return launch_kernel


class FusionRecorder(Recorder):
    """Records a run on ``fusion`` (a ``Fusion[B]`` class): the outermost calls to ``B``'s
    ops and every fused kernel launch, as :class:`Call`s named ``launch <kernel>``."""

    def __init__(self, fusion: type, readable: set[int]):
        super().__init__(fusion.inner_backend(), readable)
        self.fusion = fusion
        self._launchers: dict[int, Callable] = {}
        self._run: Any = None
        self._every_op: Any = None

    def _launcher(self, launch: Launch) -> Callable:
        fn = self._launchers.get(id(launch))
        if fn is None:
            fn = self._launchers[id(launch)] = launcher(launch)
        return fn

    def __enter__(self) -> FusionRecorder:
        stream = self.fusion.stream
        stream.drain(reason="capture: before a recorded run")
        # record every op, small ones too: a recorded run's Python is paid once, and the
        # replay then runs their fused kernels instead of one Flex call per small op
        self._every_op = stream.recording_every_op()
        self._every_op.__enter__()
        super().__enter__()
        recorder, original = self, Launch.run

        def run(launch: Launch, values: list, scalars: list) -> None:
            fn = recorder._launcher(launch)
            inputs = [values[i] for i in launch.inputs]
            taken = scalars[launch.scalars]
            # the kernel gets plain floats; the Call keeps a symbolic scalar as it came
            out = fn(*inputs, *[float(s) for s in taken])
            for (tid, _, _), arr in zip(launch.outputs, out, strict=True):
                values[tid] = arr
            recorder.calls.append(Call(f"launch {launch.kernel.name}", fn, (*inputs, *taken), {},
                                       out, user_frame()))

        self._run = original
        Launch.run = run
        return self

    def finish(self) -> None:
        """The end of the step: drain the stream, so its last blocks are recorded in this run."""
        self.fusion.stream.drain(reason="capture: end of the step")

    def __exit__(self, *exc: Any) -> None:
        Launch.run = self._run
        self._every_op.__exit__(*exc)
        super().__exit__(*exc)


def is_fusion(backend: type) -> bool:
    """Whether ``backend`` is a ``Fusion[B]`` class (a stream over an inner backend)."""
    return hasattr(backend, "inner_backend") and hasattr(backend, "stream")


def recorder_for(backend: type, readable: set[int]) -> Recorder:
    """The recorder of a run on ``backend``: Flex calls on Flex, launches and Flex calls on
    ``Fusion[Flex]``."""
    return FusionRecorder(backend, readable) if is_fusion(backend) else Recorder(backend, readable)
