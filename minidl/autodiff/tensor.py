"""``AutodiffTensor``: an inner primitive plus its graph node (burn-autodiff ``tensor.rs``)."""

from __future__ import annotations

from typing import Any

from minidl.autodiff.node import Node, Requirement


class AutodiffTensor:
    """The float primitive of ``Autodiff[B]``: ``inner``, the inner backend's primitive (a
    Flex or NdArray array; burn's field ``primitive``), and its graph ``node``.

    ``shape`` and ``dtype`` are the inner primitive's (the inner primitive never changes). Int and bool tensors on an autodiff
    device are not wrapped: they stay the inner backend's primitives, as in burn.
    """

    __slots__ = ("inner", "node", "shape", "dtype")

    def __init__(self, inner: Any, node: Node):
        self.inner = inner
        self.node = node
        # copied once, read by every op's checks and recording (a property cost a call each)
        self.shape: tuple[int, ...] = inner.shape
        self.dtype = inner.dtype

    @staticmethod
    def untracked(primitive: Any) -> AutodiffTensor:
        """A new tensor outside any graph (requirement ``None``): a constant for backward."""
        return AutodiffTensor(primitive, Node(Requirement.NONE))

    @property
    def id(self) -> int:
        """The id of this tensor's node (what ``Gradients`` is keyed by)."""
        return self.node.id

    def __repr__(self) -> str:
        dtype = getattr(self.dtype, "name", self.dtype)
        return f"AutodiffTensor(#{self.node.id} {dtype}{list(self.shape)} {self.node.requirement})"


def autodiff_tensor_of(value: Any, what: str = "expected a float tensor on an autodiff device") -> AutodiffTensor:
    """The ``AutodiffTensor`` inside ``value``: itself, or unwrapped from a ``DispatchTensor``
    (``.backend_tensor``) or a ``Tensor`` (``.primitive``). Duck-typed, so autodiff does not
    import the layers above it. ``TypeError`` (starting with ``what``) for anything else."""
    while not isinstance(value, AutodiffTensor):
        inner = getattr(value, "backend_tensor", None)
        if inner is None:
            inner = getattr(value, "primitive", None)
        if inner is None:
            raise TypeError(f"{what}, found {type(value).__name__}")
        value = inner
    return value
