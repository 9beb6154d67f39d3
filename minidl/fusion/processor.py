"""Process a drained segment: find (or search) its plan and execute it (burn-fusion's
``stream/execution/processor.rs``, with the ``Policy`` reduced to the plan store's tree).

burn's processor decides op by op, while the stream is still growing, whether to defer,
explore or execute; minidl drains whole segments at sync points. The stream walks the store's
tree as ops are recorded, so at the drain the policy is one lookup in the node it reached:
found, execute; not found, explore (search), store, execute.
"""

from __future__ import annotations

from typing import Any

from minidl.fusion.events import STREAM_LISTENERS, emit
from minidl.fusion.ir import OperationIr, TensorIr
from minidl.fusion.kernel import FusionRuntime
from minidl.fusion.plan import ExecutionPlan, ExecutionPlanStore, InnerOp, Launch, PlanNode
from minidl.fusion.search import Explorer
from minidl.fusion.segment import Segment


class ExecutionRecord:
    """What one drain did, for :func:`minidl.debug.fusion_plan`: the recorded ops, the plan's
    blocks (which fuser took which ops, each kernel), whether the plan came from the store,
    the handle ids of the results written (held by someone at the drain), the reason."""

    __slots__ = ("ops", "plan", "searched", "written", "reason", "index")

    def __init__(self, ops: list[OperationIr], plan: ExecutionPlan, searched: bool):
        self.ops, self.plan, self.searched = ops, plan, searched
        self.written: set[int] = set()
        self.reason, self.index = "", 0


class Processor:
    """Searches, stores and runs plans for one inner backend ``B`` (its ``runtime`` supplies the
    kernel generator)."""

    def __init__(self, backend: type, runtime: FusionRuntime):
        self.backend, self.runtime = backend, runtime
        self.store = ExecutionPlanStore()
        self.explorer = Explorer(runtime.generator)
        self.searches = 0
        #: fused kernels launched and ops run on B inside plans, since the start
        self.launches = 0
        self.inner_ops = 0

    def process(self, segment: Segment, node: PlanNode | None, alive: tuple[bool, ...]) -> ExecutionRecord:
        """Run ``segment``; ``node`` is where its recording left the store's tree (None: off it),
        ``alive`` says which results are held by someone besides the segment."""
        plan = node.plans.get(alive) if node is not None else None
        searched = plan is None
        if plan is None:
            self.searches += 1
            plan = self.plan(segment, alive)
            self.store.add(segment.signatures, alive, plan)
        if STREAM_LISTENERS:
            emit("plan", searched=searched, blocks=len(plan.blocks), ops=len(segment.ops))
        plan.uses += 1
        values, scalars = segment.values, segment.scalars
        for step in plan.steps:
            if type(step) is Launch:
                if STREAM_LISTENERS:
                    emit("launch", name=step.kernel.name, parallel=step.kernel.parallel)
                step.run(values, scalars)
            else:
                self._run_inner(segment.ops[step.index], values)
        self.launches += plan.launches
        return ExecutionRecord(segment.ops, plan, searched)

    def plan(self, segment: Segment, alive: tuple[bool, ...]) -> ExecutionPlan:
        """Search the blocks of ``segment`` and prepare the step that runs each live one."""
        ops = segment.ops
        held = {op.out.id for op, kept in zip(ops, alive, strict=True) if kept}
        blocks = self.explorer.explore(ops, held)
        first_scalar = [0]
        for op in ops:
            first_scalar.append(first_scalar[-1] + len(op.scalars))
        steps: list[Launch | InnerOp] = []
        for block in blocks:
            if not block.writes:
                continue  # dead: nothing it computes is read
            if not block.fused:
                steps.append(InnerOp(block.start))
                continue
            kernel, block_ops = block.kernel, ops[block.start:block.end]
            inputs = tuple(block_ops[slot.op].inputs[slot.pos].id for slot in kernel.inputs)
            outputs = tuple((block_ops[j].out.id, block_ops[j].out.shape, block_ops[j].out.dtype)
                            for j in kernel.writes)
            steps.append(Launch(kernel, inputs, outputs, slice(first_scalar[block.start], first_scalar[block.end])))
        return ExecutionPlan(blocks, steps)

    def _run_inner(self, op: OperationIr, values: list) -> None:
        kwargs = {name: (values[v.id] if isinstance(v, TensorIr) else v) for name, v in op.kwargs.items()}
        if STREAM_LISTENERS:
            emit("operation", operation=op, backend=self.backend.__name__)
        out: Any = getattr(self.backend, op.op)(**kwargs)
        if isinstance(out, self.runtime.primitive) and out.dtype != op.out.dtype:  # pragma: no cover - defensive
            raise TypeError(f"fusion: {op.op} on {self.backend.__name__} returned {out.dtype}, recorded {op.out.dtype}")
        values[op.out.id] = out
        self.inner_ops += 1
