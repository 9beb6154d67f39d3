"""The autodiff surface of Tensor (burn-tensor ``api/autodiff.rs``), delegating to Dispatch.

Only a Float tensor on an autodiff device (``Device.ndarray().autodiff()``) records a graph;
``backward`` on anything else fails with ``Requires autodiff tensor`` (burn's panic text).
Gradients live on the *inner* device: ``x.grad(grads)`` is a plain tensor.
"""

from __future__ import annotations

from typing import Any, Self

from minidl.backend.dtype import Kind
from minidl.dispatch import Device, Dispatch
from minidl.tensor.base import TensorBase
from minidl.tensor.check import fail


class AutodiffOps(TensorBase):
    """``backward``, ``grad``, ``grad_remove``, ``require_grad``, ``inner``, ``from_inner``, ``detach``."""

    __slots__ = ()

    def backward(self) -> Any:
        """Run backward from this tensor; returns the ``Gradients`` container (burn's
        ``backward``). Usually called on a loss of shape ``[1]``."""
        self._require("backward", Kind.FLOAT)
        return Dispatch.backward(self.primitive)

    def grad(self, grads: Any) -> Self | None:
        """This tensor's gradient in ``grads``, on the inner device, or ``None``."""
        self._require("grad", Kind.FLOAT)
        prim = Dispatch.grad(self.primitive, grads)
        return None if prim is None else self._wrap(prim)

    def grad_remove(self, grads: Any) -> Self | None:
        """Take this tensor's gradient out of ``grads`` (burn's ``grad_remove``)."""
        self._require("grad_remove", Kind.FLOAT)
        prim = Dispatch.grad_remove(self.primitive, grads)
        return None if prim is None else self._wrap(prim)

    def require_grad(self) -> Self:
        """Mark as a leaf whose gradient backward keeps (no-op off an autodiff device)."""
        return self.set_require_grad(True)

    def set_require_grad(self, require_grad: bool) -> Self:
        """Track (``True``) or stop tracking (``False``) this leaf's gradient."""
        self._require("set_require_grad", Kind.FLOAT)
        return self._wrap(Dispatch.float_set_require_grad(self.primitive, bool(require_grad)))

    def is_require_grad(self) -> bool:
        """Whether backward will keep this tensor's gradient."""
        if self.kind is not Kind.FLOAT:
            return False
        return bool(Dispatch.float_is_require_grad(self.primitive))

    def detach(self) -> Self:
        """The same values cut off from the graph (Int and Bool tensors are never in one)."""
        if self.kind is not Kind.FLOAT:
            return self
        return self._wrap(Dispatch.float_detach(self.primitive))

    def inner(self) -> Self:
        """The same values on the inner (non-autodiff) device, outside any graph."""
        if not self.device.is_autodiff():
            return self
        if self.kind is Kind.FLOAT:
            return self._wrap(Dispatch.float_inner(self.primitive))
        op = self._by_kind(int=Dispatch.int_to_device, bool=Dispatch.bool_to_device)
        return self._wrap(op(self.primitive, self.device.inner()))

    @classmethod
    def from_inner(cls, tensor: Self, device: Device | None = None, require_grad: bool = False) -> Self:
        """Lift a plain tensor onto an autodiff device as a new leaf (``device`` defaults to
        ``tensor.device.autodiff()``); ``require_grad=True`` makes that leaf track its
        gradient (burn's ``Tensor::from_inner(t).require_grad()``, in one step: an optimizer
        does this for every parameter of every step)."""
        if not isinstance(tensor, TensorBase):
            fail("from_inner", "Argument tensor must be a Tensor.", f"Found {type(tensor).__name__}.", kind=True)
        if tensor.device.is_autodiff():
            fail("from_inner", "Argument tensor must be on a plain (inner) device.",
                 f"Found a tensor on {tensor.device}; use .inner() first.")
        if device is None:
            device = tensor.device.autodiff()
        if not device.is_autodiff():
            fail("from_inner", "Argument device must be an autodiff device.", f"Found {device}.")
        if tensor.kind is Kind.FLOAT:
            lifted = Dispatch.float_from_inner(tensor.primitive, device)
            if require_grad:
                lifted = Dispatch.float_require_grad(lifted)
            return cls(lifted, Kind.FLOAT)
        if require_grad:
            fail("from_inner", "Only a Float tensor can require grad.", f"Found a {tensor.kind.name} tensor.",
                 kind=True)
        op = tensor._by_kind(int=Dispatch.int_to_device, bool=Dispatch.bool_to_device)
        return cls(op(tensor.primitive, device), tensor.kind)
