"""``build_gpu_program``: two recorded runs of a step on the GPU become its dispatches, ready to
replay in one compute pass (burn's ``burn::tensor::capture`` on CUDA/HIP: a device graph).

A WebGPU command buffer runs once, so a replay encodes again, but nothing is decided then:
each dispatch's pipeline, bind group and workgroup grid are made here, once, and a replay is
a loop of three encoder calls per dispatch (``set_pipeline``, ``set_bind_group``,
``dispatch_workgroups``) in one pass and one submit, with no minidl Python between them.

Every buffer a dispatch of the second run binds is, by what the runs did to it:

- written earlier in the second run: a *temporary*, rewritten by every replay (the program
  owns it: the runtime's pool never hands it out again);
- a declared input's buffer (the batch): read from the program's copy, which each replay
  fills from its arguments first;
- last written by dispatch ``j`` of the *first* run (output ``q``): *carried state* (a
  parameter, a moment). The program reads it from a buffer of its own, ``S``, into which each
  replay copies what dispatch ``j`` wrote, after the pass: the model and the optimizer hold
  that output buffer, so they see every update;
- none of these: a *constant*, read from a snapshot taken now.

Each dispatch's ``p`` words must be equal in both runs except those the runtime marks as
recomputed (:class:`~minidl.backends.wgpu.runtime.Dispatched`): a declared scalar, evaluated
per replay, or the random stream's counter, advanced per call as an eager run advances it.
Any other difference is a host value the step computes every time: refused, as on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minidl.capture.errors import CaptureError


def raw(t: Any) -> Any:
    """The wgpu buffer under a ``WgpuTensor`` (a pooled block's, or an upload's own)."""
    return getattr(t.buffer, "raw", t.buffer)


def _refuse(i: int, what: str) -> None:
    raise CaptureError(f"capture refused dispatch {i} of the step: {what}")


def _same_program(prev: Sequence[Any], calls: Sequence[Any]) -> None:
    if len(prev) != len(calls):
        raise CaptureError(
            f"capture refused: two runs of the step made {len(prev)} and {len(calls)} dispatches. "
            f"Python control flow changed between steps (a first optimizer step, a branch on a "
            f"value): warm up more, or remove it")
    for i, (a, b) in enumerate(zip(prev, calls, strict=True)):
        if (a.source, a.groups, a.n_outputs, len(a.buffers)) != (b.source, b.groups, b.n_outputs, len(b.buffers)):
            _refuse(i, "the two runs launched different kernels here")
        if a.symbols.keys() != b.symbols.keys():
            _refuse(i, "a declared scalar reached this kernel in one run only")
        for w, (x, y) in enumerate(zip(a.params, b.params, strict=True)):
            if x != y and w not in b.symbols:
                _refuse(i, f"its parameter word {w} was {x} in one run and {y} in the next: a host "
                        f"value the step computes every time would be frozen. Declare it: pass it "
                        f"to the step as an argument, or the optimizer in `optimizers=`")


class GpuProgram:
    """The dispatches of a captured step, their buffers and their parameter words."""

    def __init__(self, rt: Any, prev: Sequence[Any], calls: Sequence[Any], inputs: Sequence[Any],
                 outputs: Sequence[Any]):
        _same_program(prev, calls)
        self.rt, device = rt, rt.device
        usage = rt.flags.STORAGE | rt.flags.COPY_SRC | rt.flags.COPY_DST
        self._owned: list = []  # buffers made for the program (kept alive with it)

        def own(size: int):
            buffer = device.create_buffer(size=max(16, size), usage=usage)
            self._owned.append(buffer)
            return buffer

        by_input = {id(raw(t)): k for k, t in enumerate(inputs)}
        self.inputs = [(own(raw(t).size), t) for t in inputs]  # (its copy, as captured)
        last_in_prev: dict[int, tuple[int, int]] = {}
        for j, d in enumerate(prev):
            for q, b in enumerate(d.buffers[len(d.buffers) - d.n_outputs:]):
                last_in_prev[id(b)] = (j, q)
        snapshot = device.create_command_encoder()
        written: dict[int, int] = {}  # id(buffer) -> the last dispatch of this run writing it
        state: dict[tuple[int, int], Any] = {}  # (j, q) of the first run -> S
        consts: dict[int, Any] = {}
        bound: list[list] = []
        for i, d in enumerate(calls):
            n_in = len(d.buffers) - d.n_outputs
            row = []
            for b in d.buffers[:n_in]:
                key = id(b)
                if key in written:
                    row.append(b)
                elif key in by_input:
                    row.append(self.inputs[by_input[key]][0])
                elif key in last_in_prev:
                    slot = last_in_prev[key]
                    if slot not in state:
                        state[slot] = own(b.size)
                    row.append(state[slot])
                else:
                    if key not in consts:
                        consts[key] = own(b.size)
                        snapshot.copy_buffer_to_buffer(b, 0, consts[key], 0, b.size)
                    row.append(consts[key])
            for b in d.buffers[n_in:]:
                if any(b is x for x in d.buffers[:n_in]):
                    _refuse(i, "it writes a buffer it also reads (an in-place op)")
                written[id(b)] = i
                row.append(b)
            bound.append(row)
        # carried state: S gets what dispatch j of this run wrote (now, and after every replay)
        self.state = []
        for (j, q), s in state.items():
            d = calls[j]
            w = d.buffers[len(d.buffers) - d.n_outputs + q]
            if written[id(w)] != j:
                _refuse(j, "a later dispatch of the step overwrites the state it writes")
            self.state.append((w, s, min(w.size, s.size)))
            snapshot.copy_buffer_to_buffer(w, 0, s, 0, min(w.size, s.size))
        rt.flush()
        rt.queue.submit([snapshot.finish()])
        # the temporaries are the program's now: out of the pool, never pooled again
        self.temporaries = [b for d in calls for b in d.buffers[len(d.buffers) - d.n_outputs:]]
        rt.pin([*self.temporaries, *self._owned])
        self.outputs = []
        for t in outputs:
            if id(raw(t)) not in written and id(raw(t)) not in by_input:
                raise CaptureError("capture refused: the step returned a tensor the step did not compute "
                                   "(return only tensors made inside the step)")
            if not t.is_contiguous():
                raise CaptureError("capture refused: the step returned a strided view (return a contiguous tensor)")
            self.outputs.append(t)
        self._parameters(calls, own)
        self.plan = []
        for d, row, offset in zip(calls, bound, self.offsets, strict=True):
            pipeline, layout = rt.pipeline(d.source, 1 + len(d.buffers), d.n_outputs)  # cached
            entries = [{"binding": 0, "resource": {"buffer": self.params, "offset": offset,
                                                   "size": 4 * len(d.params)}}]
            entries += [{"binding": k, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                        for k, b in enumerate(row, start=1)]
            self.plan.append((pipeline, device.create_bind_group(layout=layout, entries=entries), d.groups))
        self.sources = [d.source for d in calls]

    def _parameters(self, calls: Sequence[Any], own) -> None:
        """Every dispatch's ``p`` words in one buffer, at aligned offsets; the recomputed ones
        listed (their word in the buffer, what they are)."""
        align = self.rt.align
        self.offsets, words, at = [], [], 0
        self.symbols: list[tuple[int, tuple]] = []
        for d in calls:
            self.offsets.append(at)
            pad = -(-4 * len(d.params) // align) * align // 4
            words += [int(w) & 0xFFFFFFFF for w in d.params] + [0] * (pad - len(d.params))
            self.symbols += [(at // 4 + w, what) for w, what in sorted(d.symbols.items())]
            at += 4 * pad
        self.words = np.array(words, dtype=np.uint32)
        self.params = own(4 * len(words))
        self.rt.queue.write_buffer(self.params, 0, self.words.tobytes())

    def run(self, inputs: Sequence[Any], env: dict[str, float]) -> list[Any]:
        """One replay: the arguments copied in, the recomputed words written, every dispatch in
        one pass, the state copied, each output copied to a new tensor (returned)."""
        from minidl.backends.wgpu import ops

        rt = self.rt
        if self.symbols:
            words = self.words
            for word, what in self.symbols:
                if what[0] == "counter":
                    stream = ops._stream(what[1])
                    words[word], stream[2] = stream[2], (stream[2] + 1) & 0xFFFFFFFF
                else:
                    value = float(what[2].expr(env))
                    words[word] = (ops.float_bits(value) if what[1] == "f" else int(value)) & 0xFFFFFFFF
            rt.queue.write_buffer(self.params, 0, words.tobytes())
        with rt.lock:
            rt.flush()  # what made the arguments runs first
            encoder = rt.device.create_command_encoder()
            for (copy, captured), t in zip(self.inputs, inputs, strict=True):
                encoder.copy_buffer_to_buffer(raw(t), 4 * t.offset, copy, 4 * captured.offset, 4 * t.size)
            cpass = encoder.begin_compute_pass()
            for pipeline, group, groups in self.plan:
                cpass.set_pipeline(pipeline)
                cpass.set_bind_group(0, group)
                cpass.dispatch_workgroups(*groups)
            cpass.end()
            for w, s, size in self.state:
                encoder.copy_buffer_to_buffer(w, 0, s, 0, size)
            made = []
            for t in self.outputs:
                out = ops.new(t.shape, t.dtype, t.index, "capture output")
                if t.size:
                    encoder.copy_buffer_to_buffer(raw(t), 4 * t.offset, raw(out), 0, 4 * t.size)
                made.append(out)
            rt.queue.submit([encoder.finish()])
            rt.dispatches += len(self.plan)
            rt.submits += 1
        return made
