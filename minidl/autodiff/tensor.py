"""``AutodiffTensor``: an inner primitive plus its graph node (burn-autodiff ``tensor.rs``)."""

from __future__ import annotations

from typing import Any

from minidl.autodiff.node import Node, Requirement


class AutodiffTensor:
    """The float primitive of ``Autodiff[B]``: the inner backend's ``primitive`` and a ``node``.

    ``shape`` and ``dtype`` are the inner primitive's. Int and bool tensors on an autodiff
    device are not wrapped: they stay the inner backend's primitives, as in burn.
    """

    __slots__ = ("primitive", "node")

    def __init__(self, primitive: Any, node: Node):
        self.primitive = primitive
        self.node = node

    @staticmethod
    def untracked(primitive: Any) -> AutodiffTensor:
        """A new tensor outside any graph (requirement ``None``): a constant for backward."""
        return AutodiffTensor(primitive, Node(Requirement.NONE))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.primitive.shape)

    @property
    def dtype(self):
        return self.primitive.dtype

    @property
    def id(self) -> int:
        """The id of this tensor's node (what ``Gradients`` is keyed by)."""
        return self.node.id

    def __repr__(self) -> str:
        dtype = getattr(self.dtype, "name", self.dtype)
        return f"AutodiffTensor(#{self.node.id} {dtype}{list(self.shape)} {self.node.requirement})"
