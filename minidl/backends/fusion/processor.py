"""Process a drained segment: find (or look up) its plan and execute it (burn-fusion's
``stream/execution/processor.rs``, with the ``Policy`` reduced to a plan-cache lookup).

The burn processor decides op by op, while the stream is still growing, whether to defer,
explore or execute; minidl drains whole segments at sync points, so the policy is a lookup
by the segment's structure: found, execute; not found, explore (search), store, execute.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minidl.backends.fusion.events import STREAM_LISTENERS, emit
from minidl.backends.fusion.ir import OperationIr, TensorIr
from minidl.backends.fusion.plan import Block, ExecutionPlan, ExecutionPlanStore, relative
from minidl.backends.fusion.search import Explorer


@dataclass
class ExecutionRecord:
    """What one drain did, for :func:`minidl.debug.fusion_plan`: the recorded ops, the plan's
    blocks (which fuser took which ops, each kernel), whether the plan came from the store."""

    ops: list[OperationIr]
    plan: ExecutionPlan
    searched: bool
    written: set[int] = field(default_factory=set)
    reason: str = ""
    seconds: float = 0.0
    index: int = 0


class Processor:
    """Searches, caches and runs plans for one inner backend ``B``."""

    def __init__(self, backend: type):
        self.backend = backend
        self.store = ExecutionPlanStore()
        self.explorer = Explorer()
        self.searches = 0

    def process(self, ops: list[OperationIr], leaves: dict, alive: set[int]) -> tuple[ExecutionRecord, dict]:
        start = time.perf_counter()
        key, rel = relative(ops, leaves, alive)
        plan = self.store.get(key)
        searched = plan is None
        if plan is None:
            self.searches += 1
            plan = ExecutionPlan(key, self.explorer.explore(ops, alive, rel))
            self.store.add(plan)
            if STREAM_LISTENERS:
                emit("plan", searched=True, blocks=len(plan.blocks), ops=len(ops))
        elif STREAM_LISTENERS:
            emit("plan", searched=False, blocks=len(plan.blocks), ops=len(ops))
        plan.uses += 1
        env: dict[int, Any] = dict(leaves)
        back = {r: tid for tid, r in rel.items()}
        for block in plan.blocks:
            self._run(block, ops, env, back)
        written = {tid for tid in alive if tid in env}
        return ExecutionRecord(ops, plan, searched, written, seconds=time.perf_counter() - start), env

    def _run(self, block: Block, ops: list[OperationIr], env: dict, back: dict[int, int]) -> None:
        if not block.writes:
            return  # dead: nothing it computes is read
        if block.fused:
            block.kernel.launch(ops[block.start:block.end], env, [back[r] for r in block.writes])
            return
        op = ops[block.start]
        kwargs = {name: (env[v.id] if isinstance(v, TensorIr) else v)
                  for name, v in op.kwargs.items()}
        if STREAM_LISTENERS:
            emit("operation", operation=op, backend=self.backend.__name__)
        out = getattr(self.backend, op.op)(**kwargs)
        if isinstance(out, np.ndarray) and out.dtype != op.out.dtype:  # pragma: no cover - defensive
            raise TypeError(f"fusion: {op.op} on {self.backend.__name__} returned {out.dtype}, recorded {op.out.dtype}")
        env[op.out.id] = out
