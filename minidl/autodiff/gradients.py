"""``Gradients``: what ``backward()`` returns, keyed by node id (burn-autodiff ``grads.rs``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minidl.autodiff.tensor import AutodiffTensor, autodiff_tensor_of


def node_id(tensor: Any) -> int:
    """The node id of an ``AutodiffTensor``, of anything wrapping one (a DispatchTensor, a
    Tensor), or an id given as an int."""
    if type(tensor) is AutodiffTensor:  # what the optimizer's grad_remove hands over
        return tensor.node.id
    if isinstance(tensor, int):
        return tensor
    return autodiff_tensor_of(tensor, "expected an autodiff tensor or a node id").node.id


class Gradients:
    """The gradients of the leaves that required them (requirement ``Grad``), as inner primitives.

    Intermediate (``GradInBackward``) gradients are used and dropped during backward, as in
    burn, so ``get`` of an intermediate tensor is ``None``. A tensor used by several ops gets
    the sum of its gradients.
    """

    __slots__ = ("_grads",)

    def __init__(self) -> None:
        self._grads: dict[int, Any] = {}

    def register(self, tensor: Any, grad: Any, B: type | None = None) -> None:
        """Add ``grad`` to the gradient of ``tensor`` (``B.float_add`` when one is already there)."""
        key = node_id(tensor)
        current = self._grads.get(key)
        if current is None:
            self._grads[key] = grad
        else:
            self._grads[key] = B.float_add(current, grad) if B is not None else current + grad

    def get(self, tensor: Any) -> Any | None:
        """The gradient of ``tensor`` (an inner primitive), or ``None``."""
        return self._grads.get(node_id(tensor))

    def remove(self, tensor: Any) -> Any | None:
        """Take the gradient of ``tensor`` out (an optimizer does this for each parameter)."""
        return self._grads.pop(node_id(tensor), None)

    def __contains__(self, tensor: Any) -> bool:
        return node_id(tensor) in self._grads

    def __len__(self) -> int:
        return len(self._grads)

    def __iter__(self) -> Iterator[int]:
        """The node ids holding a gradient."""
        return iter(list(self._grads))

    def __repr__(self) -> str:
        items = ", ".join(
            f"#{k}: {getattr(v.dtype, 'name', v.dtype)}{list(v.shape)}" for k, v in self._grads.items()
        )
        return f"Gradients({{{items}}})"
