"""``GradientsParams``: gradients keyed by parameter id (burn-optim ``grads.rs``).

``backward()`` returns a ``Gradients`` keyed by graph node; an optimizer wants them by
``Param.id``, which survives a step (the new tensor is a new node, the param keeps its id).
:meth:`GradientsParams.from_grads` takes each parameter's gradient OUT of ``grads``
(``grad_remove``, as burn does), so a second call finds nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minidl.module import Module, Param
from minidl.tensor import Tensor


class GradientsParams:
    """Gradients (tensors on the inner device) by parameter id."""

    def __init__(self) -> None:
        self._grads: dict[str, Tensor] = {}

    @staticmethod
    def from_grads(grads: Any, module: Module) -> GradientsParams:
        """The gradients of ``module``'s params, removed from ``grads`` (burn's ``from_grads``).
        A lazy param that was never initialized took no part in the graph and is skipped."""
        out = GradientsParams()
        for param in module.parameters().values():
            grad = GradientsParams.grad_of(param, grads)
            if grad is not None:
                out.register(param.id, grad)
        return out

    @staticmethod
    def grad_of(param: Param, grads: Any) -> Tensor | None:
        """``param``'s gradient, removed from ``grads``; ``None`` if it has none (a lazy param
        never initialized, or one on a plain device, took no part in the graph)."""
        if not param.is_initialized():
            return None
        tensor = param.val()
        if not tensor.device.is_autodiff():
            return None
        return tensor.grad_remove(grads)

    def register(self, param_id: str, grad: Tensor) -> None:
        """Store (or add to) the gradient of ``param_id``."""
        current = self._grads.get(param_id)
        self._grads[param_id] = grad if current is None else current + grad

    def get(self, param_id: str) -> Tensor | None:
        """The gradient of ``param_id``, or ``None``."""
        return self._grads.get(param_id)

    def remove(self, param_id: str) -> Tensor | None:
        """Take the gradient of ``param_id`` out."""
        return self._grads.pop(param_id, None)

    def __contains__(self, param_id: str) -> bool:
        return param_id in self._grads

    def __len__(self) -> int:
        return len(self._grads)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._grads))
