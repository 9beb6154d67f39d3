"""``Dispatch``: the backend every ``Tensor`` calls, routing each op by device (burn-dispatch).

Dispatch implements the whole protocol by forwarding (the generated mixins in ``ops/``),
except ``linear`` and its backward helpers, which it leaves to the ModuleOps defaults — so
``Dispatch.linear`` runs *on Dispatch* and splits into matmul + reshape + add.
"""

from __future__ import annotations

from minidl.backend import Backend, TensorData
from minidl.backend.device import Device
from minidl.dispatch.ops.activation import ActivationForwarding
from minidl.dispatch.ops.bool_tensor import BoolForwarding
from minidl.dispatch.ops.float_tensor import FloatForwarding
from minidl.dispatch.ops.int_tensor import IntForwarding
from minidl.dispatch.ops.module import ModuleForwarding
from minidl.dispatch.route import backend_for, plain_backend
from minidl.dispatch.tensor import DispatchTensor


class Dispatch(FloatForwarding, IntForwarding, BoolForwarding, ActivationForwarding, ModuleForwarding, Backend):
    """The routing backend. ``Dispatch.float_matmul(a, b)`` runs ``Flex.float_matmul`` for flex
    tensors, ``Autodiff[Flex].float_matmul`` for tensors on ``Device.flex().autodiff()``."""

    name = "dispatch"

    # ----- device queries and moves (written by hand: they cross backends) ---------------
    @classmethod
    def float_device(cls, tensor: DispatchTensor) -> Device:
        return tensor.device

    @classmethod
    def int_device(cls, tensor: DispatchTensor) -> Device:
        return tensor.device

    @classmethod
    def bool_device(cls, tensor: DispatchTensor) -> Device:
        return tensor.device

    @classmethod
    def float_to_device(cls, tensor: DispatchTensor, device: Device) -> DispatchTensor:
        """Move a float tensor. Between a device and its autodiff twin this is ``inner`` /
        ``from_inner`` (the graph is left behind); across kinds the data is copied."""
        src = tensor.device
        if src == device and src.is_autodiff() == device.is_autodiff() and src.checkpointing == device.checkpointing:
            return tensor
        prim = cls._inner_float(tensor)
        if src != device:
            data: TensorData = plain_backend(src).float_into_data(prim)
            prim = plain_backend(device).float_from_data(data.array, device.inner())
        if device.is_autodiff():
            prim = backend_for(device).from_inner(prim)
        return DispatchTensor(prim, device)

    @classmethod
    def int_to_device(cls, tensor: DispatchTensor, device: Device) -> DispatchTensor:
        return cls._move_plain(tensor, device, "int")

    @classmethod
    def bool_to_device(cls, tensor: DispatchTensor, device: Device) -> DispatchTensor:
        return cls._move_plain(tensor, device, "bool")

    @classmethod
    def _move_plain(cls, tensor: DispatchTensor, device: Device, kind: str) -> DispatchTensor:
        # int and bool primitives always live on the inner backend, even on an autodiff device
        if tensor.device == device:
            return DispatchTensor(tensor.backend_tensor, device)
        data = getattr(plain_backend(tensor.device), f"{kind}_into_data")(tensor.backend_tensor)
        prim = getattr(plain_backend(device), f"{kind}_from_data")(data.array, device.inner())
        return DispatchTensor(prim, device)

    @classmethod
    def _inner_float(cls, tensor: DispatchTensor):
        if tensor.device.is_autodiff():
            return backend_for(tensor.device).inner(tensor.backend_tensor)
        return tensor.backend_tensor

    # ----- autodiff entry points (burn's AutodiffBackend, reached through Dispatch) -------
    @classmethod
    def float_inner(cls, tensor: DispatchTensor) -> DispatchTensor:
        """The same values on the inner device, outside any graph (burn's ``Tensor::inner``)."""
        return DispatchTensor(cls._inner_float(tensor), tensor.device.inner())

    @classmethod
    def float_from_inner(cls, tensor: DispatchTensor, device: Device) -> DispatchTensor:
        """Lift a plain float tensor onto the autodiff ``device`` as a new leaf."""
        return cls.float_to_device(tensor, device)

    @classmethod
    def backward(cls, tensor: DispatchTensor):
        """Run backward from ``tensor``; returns the ``Gradients`` container."""
        if not tensor.device.is_autodiff():
            raise RuntimeError(
                "Requires autodiff tensor: backward() was called on a tensor on "
                f"{tensor.device}; create it (or the module) on {tensor.device}.autodiff()"
            )
        return backend_for(tensor.device).backward(tensor.backend_tensor)

    @classmethod
    def grad(cls, tensor: DispatchTensor, grads) -> DispatchTensor | None:
        """The gradient of ``tensor`` in ``grads``, on the inner device (or ``None``)."""
        if not tensor.device.is_autodiff():
            raise RuntimeError("Requires autodiff tensor: grad() of a tensor on a plain device")
        prim = backend_for(tensor.device).grad(tensor.backend_tensor, grads)
        return None if prim is None else DispatchTensor(prim, tensor.device.inner())

    @classmethod
    def grad_remove(cls, tensor: DispatchTensor, grads) -> DispatchTensor | None:
        """Take the gradient of ``tensor`` out of ``grads``."""
        if not tensor.device.is_autodiff():
            raise RuntimeError("Requires autodiff tensor: grad_remove() of a tensor on a plain device")
        prim = backend_for(tensor.device).grad_remove(tensor.backend_tensor, grads)
        return None if prim is None else DispatchTensor(prim, tensor.device.inner())
