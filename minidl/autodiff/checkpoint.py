"""The checkpointer of one backward pass: hands out saved values, recomputing where asked.

burn-autodiff's ``Checkpointer``: under balanced checkpointing a memory-bound step keeps a
:class:`~minidl.autodiff.step.Recompute` marker instead of an array, and backward re-runs
the recorded forwards from the nearest kept values (leaves, constants, compute-bound
outputs). Values are memoized for the pass and released once the step that made them has
run its backward, since no later step can need them.
"""

from __future__ import annotations

from typing import Any

from minidl.autodiff.node import Node
from minidl.autodiff.step import Recompute

#: The checkpointing strategies: ``None`` keeps what each step declares; ``"balanced"`` makes
#: memory-bound steps keep no computed array (burn's ``BalancedCheckpointing``).
STRATEGIES = (None, "balanced")


class Checkpointer:
    """Resolves saved entries during one backward pass; ``recomputed`` counts forward re-runs."""

    def __init__(self, B: type):
        self.B = B
        self.cache: dict[int, Any] = {}
        self.recomputed = 0

    def resolve(self, entry: Any) -> Any:
        """The array behind a saved entry."""
        return self.value(entry.node) if isinstance(entry, Recompute) else entry

    def value(self, node: Node) -> Any:
        """The forward value of ``node``, recomputed from its step (iteratively: chains of
        thousands of element-wise steps must not hit Python's recursion limit)."""
        stack = [node]
        while stack:
            current = stack[-1]
            if current.id in self.cache:
                stack.pop()
                continue
            step = current.step
            if step is None or not step.recomputable or step.consumed:
                raise RuntimeError(f"autodiff: the value of node #{current.id} was neither kept nor recomputable")
            entries = [step.saved[name] for name in step.input_names(len(step.inputs))]
            missing = [e.node for e in entries if isinstance(e, Recompute) and e.node.id not in self.cache]
            if missing:
                stack.extend(missing)
                continue
            self.cache[current.id] = step.forward(self.B, *[self.resolve(e) for e in entries])
            self.recomputed += 1
            stack.pop()
        return self.cache[node.id]

    def release(self, node: Node) -> None:
        """Forget ``node``'s value: its step ran, and every consumer ran before it."""
        self.cache.pop(node.id, None)
