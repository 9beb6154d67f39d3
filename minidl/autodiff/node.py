"""Graph nodes: an id, the tracked parents and a requirement (burn-autodiff ``graph/node.rs``),
and :func:`walk`, the one traversal of the graph (burn's ``graph/traversal.rs``).

Every float tensor on an autodiff device carries a :class:`Node`. Leaves have no step; the
output of a recorded op has the :class:`~minidl.autodiff.step.Step` that made it, which is
how backward walks from a result down to the leaves.
"""

from __future__ import annotations

import enum
import itertools
from typing import Any

#: Node ids grow with creation order, so a parent always has a smaller id than its children:
#: sorting by id is a topological order (burn keeps an ``order`` field for the same reason).
_IDS = itertools.count(1)


class Requirement(enum.Enum):
    """What a node needs from backward (burn's ``Requirement``).

    ``GRAD``: a leaf that wants its gradient kept in ``Gradients``. ``GRAD_IN_BACKWARD``: an
    intermediate on the path to such a leaf; its gradient is computed, used and dropped.
    ``NONE``: not tracked; no step is recorded for ops whose inputs are all ``NONE``.
    """

    GRAD = "Grad"
    GRAD_IN_BACKWARD = "GradInBackward"
    NONE = "None"

    def __str__(self) -> str:
        return self.value


_NONE = Requirement.NONE


class Node:
    """One vertex of the graph: ``id``, tracked ``parents`` (nodes), ``requirement``, ``step``.

    ``step`` is ``None`` for leaves (and untracked tensors); it is the recorded backward step
    (a :class:`~minidl.autodiff.step.Step`) for the output of a tracked op. It is typed
    ``Any`` here because ``step.py`` imports this module: a step holds its input nodes.
    """

    __slots__ = ("id", "parents", "requirement", "step", "tracked")

    def __init__(self, requirement: Requirement, parents: tuple[Node, ...] = (), step: Any = None):
        self.id = next(_IDS)
        self.parents = parents
        self.requirement = requirement
        self.step = step
        #: Whether gradients flow through this node (requirement is not ``NONE``); a field,
        #: not a property, because every recorded op reads it for each input.
        self.tracked = requirement is not _NONE

    @classmethod
    def leaf_with_id(cls, requirement: Requirement, id: int) -> Node:
        """A leaf that keeps an existing node's ``id`` (``require_grad`` on a tensor keeps its
        identity, so its gradient is found under the same id). It draws no new id, as burn's
        ``require_grad`` keeps ``self.node.id``."""
        node = cls.__new__(cls)
        node.id, node.parents, node.requirement, node.step = id, (), requirement, None
        node.tracked = requirement is not _NONE
        return node

    def __repr__(self) -> str:
        step = type(self.step).__name__ if self.step is not None else "leaf"
        parents = ", ".join(str(p.id) for p in self.parents)
        return f"Node(#{self.id} {step} [{parents}] {self.requirement})"


def walk(root: Node) -> list[Node]:
    """Every node ``root`` depends on (``root`` included), each once, in increasing id order.

    Ids grow with creation, so this is a topological order (leaves first); backward runs it
    reversed. Iterative, so a chain of thousands of steps does not hit the recursion limit.
    """
    seen: dict[int, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.id not in seen:
            seen[node.id] = node
            stack.extend(node.parents)
    return sorted(seen.values(), key=lambda n: n.id)
