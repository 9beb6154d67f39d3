"""The stream of recorded operations and its sync points (burn-fusion's ``stream`` module).

``Fusion[B]`` owns one :class:`Stream`. Each op it receives is appended as an
:class:`~minidl.backends.fusion.ir.OperationIr`; nothing runs until :meth:`Stream.drain`,
which hands the recorded segment to the :class:`~.processor.Processor` (search, plan cache,
execution). A drain happens on a sync point: a value is read, or an op no fuser can take
must run on ``B`` now.

Which results must be written to memory is decided at drain time: a tensor whose handle is
still alive (someone may read it) or that a later block reads. Intermediates whose handles
were dropped (``(x * 2 + 1).relu()``'s ``x * 2``) stay in registers of a fused kernel.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

import numpy as np

from minidl.backends.fusion.events import STREAM_LISTENERS, emit
from minidl.backends.fusion.ir import OperationIr, TensorIr
from minidl.backends.fusion.processor import Processor
from minidl.backends.fusion.tensor import FusionTensor

# not hidden from trace: a kernel's backtrace shows the drain that launched it (a read, a sync)
__trace_hide__ = False


class Stream:
    """Recorded ops waiting to run, the leaves they read, and the handles they will fill."""

    def __init__(self, backend: type):
        self.backend = backend  # the inner backend B
        self.ops: list[OperationIr] = []
        self.leaves: dict[int, Any] = {}
        self.handles: dict[int, weakref.ref] = {}
        self.lock = threading.RLock()
        self.processor = Processor(backend)
        self._ids = itertools.count()
        #: the last executions (newest last, up to 64), for minidl.debug.fusion_plan
        self.history: list = []
        #: how many executions (drains that ran something) this stream has had
        self.executions = 0

    # ----- handles ------------------------------------------------------------------------
    def new_id(self) -> int:
        return next(self._ids)

    def ready(self, value: Any) -> FusionTensor:
        """A handle around an existing inner primitive (a leaf)."""
        return FusionTensor(self, self.new_id(), value.shape, value.dtype, value)

    def as_handle(self, tensor: Any) -> FusionTensor:
        """``tensor`` as a handle of this stream: an inner primitive (a NumPy array) becomes a leaf."""
        if isinstance(tensor, FusionTensor):
            return tensor
        if isinstance(tensor, np.ndarray):
            return self.ready(tensor)
        raise TypeError(f"fusion: expected a FusionTensor or an inner primitive, found {type(tensor).__name__}")

    def input_ir(self, tensor: Any) -> TensorIr:
        """Register ``tensor`` as an input of the ops being recorded and return its IR."""
        handle = self.as_handle(tensor)
        if not handle.pending:
            self.leaves[handle.id] = handle._value
        elif handle.id not in self.handles:  # pragma: no cover - one stream per backend
            raise RuntimeError(f"fusion: t{handle.id} is pending in another stream")
        return handle.ir

    # ----- recording ----------------------------------------------------------------------
    def record(self, kind: str, op: str, inputs: list, shape: tuple[int, ...], dtype, scalars=(), static=(),
               kwargs: dict | None = None) -> FusionTensor:
        """Append one op; returns the pending handle of its result."""
        with self.lock:
            ins = tuple(self.input_ir(t) for t in inputs)
            out = FusionTensor(self, self.new_id(), shape, dtype)
            replay = dict(kwargs or {})
            for name, value in list(replay.items()):
                if isinstance(value, FusionTensor | np.ndarray):
                    replay[name] = ins[[i for i, t in enumerate(inputs) if t is value][0]]
            operation = OperationIr(kind, op, ins, out.ir, tuple(scalars), tuple(static), replay)
            self.ops.append(operation)
            self.handles[out.id] = weakref.ref(out)
            if STREAM_LISTENERS:
                emit("recorded", operation=operation)
            return out

    # ----- sync ---------------------------------------------------------------------------
    def drain(self, reason: str = "sync") -> None:
        """Run every recorded op (a sync point): search or look up a plan, launch it, fill the
        handles that are still alive."""
        with self.lock:
            if not self.ops:
                return
            ops, leaves, handles = self.ops, self.leaves, self.handles
            self.ops, self.leaves, self.handles = [], {}, {}
            alive = {tid: ref() for tid, ref in handles.items()}
            alive = {tid: h for tid, h in alive.items() if h is not None}
            if STREAM_LISTENERS:
                emit("drain", reason=reason, ops=len(ops))
            record, env = self.processor.process(ops, leaves, set(alive))
            record.reason = reason
            record.index = self.executions
            self.executions += 1
            for tid, handle in alive.items():
                handle._value = env[tid]
            self.history.append(record)
            del self.history[:-64]
