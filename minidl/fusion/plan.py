"""Execution plans and their store (burn-fusion's ``stream/store``: ``ExecutionPlan``,
``ExecutionPlanStore``, ``ExecutionStrategy``).

A plan says how one recorded segment runs: a list of blocks, each either one fused kernel
(``ExecutionStrategy.Optimization`` in burn) or one op run on ``B`` (``Operations``). Plans are
stored by the segment's *structure*: the store is a tree whose edges are op signatures (the
protocol op, the relative ids it reads, leaf shapes and dtypes, static arguments; scalars
excluded), walked one edge per recorded op, and a node holds the plans of the segments that
end there, one per set of results still held at the drain. So the same training step run
again finds its plan in one lookup, without searching, with its kernels already loaded.

burn's store is indexed by the first op and its policy checks the candidate plans op by op as
ops arrive; the tree is the same check, shared by every plan with a common prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class PlanNode:
    """A point in the plan store's tree: the segments recorded up to here."""

    __slots__ = ("children", "plans")

    def __init__(self):
        #: op signature -> the node after that op
        self.children: dict[tuple, PlanNode] = {}
        #: which results are held at the drain (one bool per op) -> the plan
        self.plans: dict[tuple[bool, ...], ExecutionPlan] = {}


@dataclass
class Block:
    """Consecutive ops ``start:end`` of a segment and how they run.

    ``fuser`` names the fuser that took them (``None``: the op runs on ``B``); ``kernel`` is
    the generated kernel; ``writes`` the relative ids the block must write.
    """

    start: int
    end: int
    fuser: str | None = None
    kernel: Any = None
    writes: tuple[int, ...] = ()

    @property
    def fused(self) -> bool:
        return self.fuser is not None


class Launch:
    """A fused block ready to launch: which arrays it reads (relative ids), which it writes
    (id, shape, dtype), the slice of the segment's scalars it takes and the kernel's sizes and
    strides, all fixed when the plan was made. How it runs is its kernel's (the backend's
    generator): :meth:`Kernel.launch <minidl.fusion.kernel.Kernel.launch>`."""

    __slots__ = ("kernel", "function", "inputs", "outputs", "scalars", "sizes", "flat", "_launch")

    def __init__(self, kernel: Any, inputs: tuple[int, ...], outputs: tuple[tuple[int, tuple, np.dtype], ...],
                 scalars: slice):
        self.kernel = kernel
        self.function = kernel.function()
        self.inputs, self.outputs, self.scalars = inputs, outputs, scalars
        self.sizes = tuple(kernel.meta)
        self.flat = kernel.flat_inputs
        self._launch = kernel.launch  # bound once: this is every drain's path

    def run(self, values: list, scalars: list) -> None:
        """Run the kernel on ``values`` (by relative id) and store its outputs there (a capture
        replaces this method for the length of a recorded run: every launch goes through it)."""
        self._launch(self, values, scalars)


class InnerOp:
    """An op of a plan that runs alone on ``B`` (no fuser took it): op ``index`` of the segment."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


@dataclass
class ExecutionPlan:
    """The blocks one segment structure runs as, found once by the search, and the steps that
    run them (a :class:`Launch` per fused block, an :class:`InnerOp` per op left to ``B``; dead
    blocks, whose results nobody reads, have no step)."""

    blocks: list[Block] = field(default_factory=list)
    steps: list[Launch | InnerOp] = field(default_factory=list)
    uses: int = 0
    #: how many fused kernels one run of the plan launches (counted once, not per drain)
    launches: int = field(init=False, default=0)

    def __post_init__(self):
        self.launches = sum(type(step) is Launch for step in self.steps)


class ExecutionPlanStore:
    """Plans by segment structure (burn's ``ExecutionPlanStore``): the root of the tree."""

    def __init__(self):
        self.root = PlanNode()
        self.count = 0

    def add(self, signatures: list[tuple], alive: tuple[bool, ...], plan: ExecutionPlan) -> ExecutionPlan:
        """Store ``plan`` for the segment of these op signatures and held results."""
        node = self.root
        for signature in signatures:
            child = node.children.get(signature)
            if child is None:
                child = node.children[signature] = PlanNode()
            node = child
        if alive not in node.plans:
            self.count += 1
        node.plans[alive] = plan
        return plan

    def __len__(self) -> int:
        return self.count
