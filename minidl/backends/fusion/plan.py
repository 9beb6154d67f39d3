"""Execution plans and their store (burn-fusion's ``stream/store``: ``ExecutionPlan``,
``ExecutionPlanStore``, ``ExecutionStrategy``).

A plan says how one recorded segment runs: a list of blocks, each either one fused kernel
(``ExecutionStrategy.Optimization`` in burn) or one op run on ``B`` (``Operations``). Plans
are stored by the segment's *structure* (op kinds, relative tensor ids, shapes, dtypes,
static args, which results must be written; scalars excluded), so the same training step run
again finds its plan without searching, and the kernels it needs are already loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minidl.backends.fusion.ir import OperationIr


@dataclass
class Block:
    """Consecutive ops ``start:end`` of a segment and how they run.

    ``fuser`` names the fuser that took them (``None``: the op runs on ``B``); ``kernel`` is
    the generated kernel's launcher; ``writes`` the relative ids the block must write.
    """

    start: int
    end: int
    fuser: str | None = None
    kernel: Any = None
    writes: tuple[int, ...] = ()

    @property
    def fused(self) -> bool:
        return self.fuser is not None


@dataclass
class ExecutionPlan:
    """The blocks one segment structure runs as, found once by the search."""

    key: tuple
    blocks: list[Block] = field(default_factory=list)
    uses: int = 0


class ExecutionPlanStore:
    """Plans by structure key (burn's ``ExecutionPlanStore``; burn indexes them by the first op
    and validates candidates op by op as they arrive, we key the whole drained segment)."""

    def __init__(self):
        self.plans: dict[tuple, ExecutionPlan] = {}

    def get(self, key: tuple) -> ExecutionPlan | None:
        return self.plans.get(key)

    def add(self, plan: ExecutionPlan) -> ExecutionPlan:
        self.plans[plan.key] = plan
        return plan

    def __len__(self) -> int:
        return len(self.plans)


def relative(ops: list[OperationIr], leaves: dict, needed: set[int]) -> tuple[tuple, dict[int, int]]:
    """The structure key of a segment and the map actual id -> relative id.

    Relative ids number tensors in order of first appearance, so two runs of the same step
    (fresh ids every time) give equal keys.
    """
    rel: dict[int, int] = {}
    parts: list[tuple] = []

    def rid(t) -> int:
        if t.id not in rel:
            rel[t.id] = len(rel)
        return rel[t.id]

    for op in ops:
        ins = tuple((rid(t), t.shape, t.dtype.str, t.id in leaves) for t in op.inputs)
        out = rid(op.out)
        parts.append((op.kind, op.op, ins, out, op.out.shape, op.out.dtype.str, op.static, len(op.scalars)))
    written = tuple(sorted(rel[i] for i in needed if i in rel))
    return (tuple(parts), written), rel
