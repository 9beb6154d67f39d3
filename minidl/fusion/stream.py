"""The stream of recorded operations and its sync points (burn-fusion's ``stream`` module).

``Fusion[B]`` owns one :class:`Stream`. Each op it receives is appended to the current
*segment* as an :class:`~minidl.fusion.ir.OperationIr`; nothing runs until
:meth:`Stream.drain`, which hands the segment to the :class:`~.processor.Processor`. A drain
happens on a sync point: a value is read, or an op no fuser can take needs its inputs now.

While an op is recorded the stream also walks the plan store (a tree with one edge per op
signature, :class:`~.plan.PlanNode`), the way burn's policy checks the stored plans op by op
as ops arrive: when the drain comes, the plan of a segment seen before is one lookup away,
and everything a launch needs (input arrays by relative id, scalars already in the kernel's
dtype) is in place. Which results must be written is decided at drain time: a tensor whose
handle is still alive (someone may read it) or that a later block reads. Intermediates whose
handles were dropped (``(x * 2 + 1).relu()``'s ``x * 2``) stay in a fused kernel's registers.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from minidl.fusion.events import STREAM_LISTENERS, emit
from minidl.fusion.ir import OperationIr, TensorIr
from minidl.fusion.kernel import FusionRuntime
from minidl.fusion.plan import PlanNode
from minidl.fusion.processor import Processor
from minidl.fusion.segment import Segment
from minidl.fusion.tensor import FusionTensor

# not hidden from trace: a kernel's backtrace shows the drain that launched it (a read, a sync)
__trace_hide__ = False

#: executions kept for minidl.debug (a CNN step drains 9 times). Each keeps its segment's ops
#: alive; kept for 64 executions (7 CNN steps) they outlived the garbage collector's young
#: generations, were promoted, and every ~60 steps set off a full collection of the process's
#: 300,000 objects (numba, torch): 110 ms each, 1.5 ms a step on average. 16 die young.
HISTORY = 16

#: Ops whose results have fewer elements than this, and whose inputs all exist, run on ``B`` at
#: once instead of being recorded (``Fusion[B]``'s ops ask :func:`~.tensor.small_value`).
#: Recording an op costs this Python runtime about twice what running a small op eagerly
#: does, and a drain more; fusing saves memory traffic, which grows with the size. The fusion
#: chapter's sweep of an 8-op chain puts the crossover between 4K and 64K elements.
EAGER_BELOW = 1 << 15


class Stream:
    """Recorded ops waiting to run, the leaves they read, and the handles they will fill."""

    #: small ops with ready inputs run eagerly on ``B`` (:data:`EAGER_BELOW`); 0 records every
    #: op, as burn does (set it on the class for every stream, on a stream for one)
    eager_below: int = EAGER_BELOW

    def __init__(self, backend: type, runtime: FusionRuntime):
        self.backend = backend  # the inner backend B
        self.runtime = runtime  # what B supplies: its kernel generator, its primitive type, its policy
        #: the type of B's primitives (a NumPy array on Flex)
        self.primitive = runtime.primitive
        if runtime.records_every_op:
            self.eager_below = 0  # burn's policy on a GPU: every op is recorded
        self.lock = threading.Lock()  # recording and draining never re-enter each other
        self.processor = Processor(backend, runtime)
        self._ids = itertools.count()
        self.segment = Segment()
        #: where the current segment stands in the plan store (None: a path never seen)
        self.node: PlanNode | None = None
        #: the last executions (newest last, up to HISTORY), for minidl.debug.fusion_plan
        self.history: list = []
        #: how many executions (drains that ran something) this stream has had
        self.executions = 0
        #: ops run by those executions
        self.executed_ops = 0
        #: how many ops ran eagerly on B (see eager_below)
        self.eager = 0

    @property
    def ops(self) -> list[OperationIr]:
        """The ops recorded since the last drain."""
        return self.segment.ops

    def counts(self) -> dict[str, int]:
        """Running totals: ``recorded`` ops, ``drains`` (executions), fused kernel ``launches``,
        ``inner_ops`` run on ``B`` (inside plans and eagerly), ``searches`` (plans not in the store),
        ``eager`` (small ops on ready tensors run on ``B`` without being recorded)."""
        p = self.processor
        return {"recorded": self.executed_ops + len(self.segment.ops), "drains": self.executions, "launches": p.launches,
                "inner_ops": p.inner_ops, "searches": p.searches, "eager": self.eager}

    @contextmanager
    def recording_every_op(self) -> Iterator[Stream]:
        """For the block, record every op, small ones too (``eager_below = 0``, burn's way):
        to watch the machinery on small tensors, or to capture a step whose recorded run's
        Python is paid once. The stream's own setting comes back afterwards."""
        own = vars(self).get("eager_below")
        self.eager_below = 0
        try:
            yield self
        finally:
            if own is None:
                del self.eager_below  # the class default again
            else:
                self.eager_below = own

    # ----- handles ------------------------------------------------------------------------
    def ready(self, value: Any) -> FusionTensor:
        """A handle around an existing inner primitive (a leaf)."""
        return FusionTensor(self, next(self._ids), value.shape, value.dtype, value)

    def as_handle(self, tensor: Any) -> FusionTensor:
        """``tensor`` as a handle of this stream: an inner primitive (a NumPy array) becomes a leaf."""
        if isinstance(tensor, FusionTensor):
            return tensor
        if isinstance(tensor, self.primitive):
            return self.ready(tensor)
        raise TypeError(f"fusion: expected a FusionTensor or an inner primitive, found {type(tensor).__name__}")

    def input_ir(self, tensor: Any) -> TensorIr:
        """Register ``tensor`` as an input of the op being recorded and return its IR: a pending
        result of this segment, or a leaf (numbered once per segment)."""
        if type(tensor) is FusionTensor and tensor._value is None:
            return tensor.ir
        handle = self.as_handle(tensor)
        return self.segment.leaf(handle.id, handle._value)

    # ----- recording ----------------------------------------------------------------------
    def record(self, kind: str, op: str, inputs: tuple, shape: tuple[int, ...], dtype: np.dtype,
               scalars: tuple = (), static: tuple = (), names: tuple[str, ...] = (),
               extra: dict | None = None) -> FusionTensor:
        """Append one op to the segment; returns the pending handle of its result.

        ``inputs`` are the op's tensor arguments in order and ``names`` their parameter names in
        the protocol op; ``extra`` its other keyword arguments (both to replay it on ``B``)."""
        with self.lock:
            segment = self.segment
            ins = tuple([t.ir if type(t) is FusionTensor and t._value is None else self.input_ir(t) for t in inputs])
            out = segment.result(shape, dtype)
            operation = OperationIr(kind, op, ins, out, scalars, static, names, extra)
            handle = FusionTensor(self, next(self._ids), shape, dtype, None, out)
            segment.append(operation, handle)
            # follow the plan store's tree one edge, the one of this op's signature
            node = self.node if len(segment.ops) > 1 else self.processor.store.root
            if node is not None:
                self.node = node.children.get((op, ins, static))
            if STREAM_LISTENERS:
                emit("recorded", operation=operation)
            return handle

    def eager_result(self, op: str, value: Any) -> FusionTensor:
        """The ready handle of ``value``, what ``op`` returned when it ran eagerly on ``B`` (a
        small op whose inputs exist: see :attr:`eager_below`)."""
        self.eager += 1  # count_eager written out: every small op passes here (a speed trick)
        if STREAM_LISTENERS:
            emit("eager", op=op, backend=self.backend.__name__)
        return FusionTensor(self, next(self._ids), value.shape, value.dtype, value)

    def count_eager(self, op: str) -> None:
        """Count (and tell the listeners) an op that ran on ``B`` without being recorded."""
        self.eager += 1
        if STREAM_LISTENERS:
            emit("eager", op=op, backend=self.backend.__name__)

    # ----- sync ---------------------------------------------------------------------------
    def drain(self, reason: str = "sync") -> None:
        """Run every recorded op (a sync point): find the plan (or search one), launch it, fill
        the handles that are still alive."""
        with self.lock:
            segment = self.segment
            if not segment.ops:
                return
            node, self.node, self.segment = self.node, None, Segment()
            if STREAM_LISTENERS:
                emit("drain", reason=reason, ops=len(segment.ops))
            alive = segment.alive()
            record = self.processor.process(segment, node, alive)
            values, ops, handles = segment.values, segment.ops, segment.handles
            self.executed_ops += len(ops)
            record.reason, record.index = reason, self.executions
            self.executions += 1
            written = record.written
            for j, kept in enumerate(alive):
                if kept:
                    handle = handles[j]
                    handle._value = values[ops[j].out.id]
                    written.add(handle.id)
            history = self.history
            history.append(record)
            if len(history) > HISTORY:
                del history[0]
