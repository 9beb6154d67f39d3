"""How Dispatch picks the backend for one op call (burn-dispatch's ``dispatch_device!`` macros).

The backend is chosen by the device of the op's first tensor input (or its ``device``
argument for creation ops). Every other tensor input must be on the same device, ignoring
autodiff; if any input (of any kind) is on an autodiff device, the op runs on
``Autodiff[B]`` and the plain float inputs join the graph as constants — which is why data
created on a plain device still flows through an autodiff model (the train-vs-inference chapter's ``mixed`` experiment, burn's).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from minidl.backend import PRIMITIVE_TYPES
from minidl.backend.device import Device
from minidl.dispatch.tensor import DispatchTensor

#: Called as ``listener(op, backend, args)`` for every op Dispatch hands to a backend, on the
#: path it takes: a generated forwarder's fast path or :func:`route`. A listener here changes
#: no path, so ``MINIDL_DEBUG`` (``minidl.debug.levels``) logs what runs without it.
OP_LISTENERS: list[Callable] = []

#: Called like :data:`OP_LISTENERS`, but while one is here every forwarder hands its call to
#: :func:`route`, the general path: for a tool that replaces one of route's rules and must
#: see every op (the dispatch chapter's route build-it). Empty otherwise.
ROUTE_LISTENERS: list[Callable] = []

# trace tools skip frames of this module: they are the plumbing, not a layer of the stack
__trace_hide__ = True


# The backend that owns each device kind, imported on first use (numba loads lazily): one
# function per kind, so each import is a line a reader, grep and an IDE can follow.
def _flex() -> type:
    from minidl.backends.flex import Flex

    return Flex


def _ndarray() -> type:
    from minidl.backends.ndarray import NdArray

    return NdArray


def _fusion() -> type:
    from minidl.backends.flex.fusion import FusionFlex  # Fusion[Flex]

    return FusionFlex


def _wgpu() -> type:
    from minidl.backends.wgpu import Wgpu  # WGSL kernels through wgpu (the optional `gpu` extra)

    return Wgpu


def _fusion_wgpu() -> type:
    from minidl.backends.wgpu.fusion import FusionWgpu  # Fusion[Wgpu]: WGSL kernels per fused block

    return FusionWgpu


#: Device kind -> the function that imports its backend.
PLAIN_BACKENDS: dict[str, Callable[[], type]] = {
    "flex": _flex,
    "ndarray": _ndarray,
    "fusion": _fusion,
    "wgpu": _wgpu,
    "fusion_wgpu": _fusion_wgpu,
}

#: ``backend_for``'s answers, by ``id(device)``: devices are interned and never freed, so an id
#: names one device for good (a ``Device``'s own hash ignores autodiff, so it cannot be the
#: key). The generated forwarders read it first, so an op pays one lookup, not an import.
ROUTED: dict[int, type] = {}
#: ``ROUTED.get``, bound once for the forwarders (a speed trick, see ``write_forwarders``), and
#: ``object.__new__``, with which they make a ``DispatchTensor`` without calling ``__init__``.
ROUTED_GET = ROUTED.get
new_object = object.__new__


def plain_backend(device: Device) -> type:
    """The backend class that owns a device's kind (``Flex``, ``NdArray``, ``Fusion[Flex]``,
    ``Wgpu`` or ``Fusion[Wgpu]``), whether or not the device is autodiff."""
    return PLAIN_BACKENDS[device.kind]()


def backend_for(device: Device) -> type:
    """``Flex``/``NdArray``/``Fusion[Flex]``/``Wgpu`` for a plain device, ``Autodiff[B]`` for an
    autodiff one; kept in :data:`ROUTED` after the first call."""
    backend = ROUTED.get(id(device))
    if backend is None:
        backend = plain_backend(device)
        if device.is_autodiff():
            from minidl.autodiff import autodiff_backend

            backend = autodiff_backend(backend, device.checkpointing)
        ROUTED[id(device)] = backend
    return backend


def _tensors(name: str, value):
    if isinstance(value, DispatchTensor):
        yield name, value
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _tensors(f"{name}[{i}]", item)


def _strategy_name(device: Device) -> str:
    # burn's ``CheckpointingStrategy`` as its ``{:?}`` prints it
    return "None" if device.checkpointing is None else device.checkpointing.capitalize()


def validate_checkpointing(op: str, lhs: Device, rhs: Device) -> None:
    """Refuse an op whose inputs sit on two autodiff devices with different checkpointing
    strategies: one backward pass cannot both keep and recompute the same step. A plain
    device has no strategy and passes beside any device; the op then runs with the autodiff
    input's strategy. So does burn-dispatch's ``validate_checkpointing`` (src/device.rs:174
    at v0.22.0-pre.2, :210 on main): ``(None, rhs) => rhs``, a missing strategy "promoted";
    only ``(Some(a), Some(b))`` with a != b panics. The message is pre.2's, after the op."""
    if lhs.is_autodiff() and rhs.is_autodiff() and lhs.checkpointing != rhs.checkpointing:
        # burn asserts (a panic); here it is the same kind of error as a wrong device
        raise ValueError(
            f"{op}: Autodiff strategy mismatch: {_strategy_name(lhs)} vs {_strategy_name(rhs)}. "
            "Tensors in the same operation must share a strategy."
        )


def _routing_device(op: str, args: dict) -> Device:
    first: tuple[str, DispatchTensor] | None = None
    autodiff_device: Device | None = None
    for name, value in args.items():
        for tname, tensor in _tensors(name, value):
            if first is None:
                first = (tname, tensor)
            elif tensor.device != first[1].device:
                raise ValueError(
                    f"{op}: Input tensor {tname} is on the wrong device: "
                    f"expected {first[1].device} (like {first[0]}), found {tensor.device}"
                )
            if tensor.device.is_autodiff():
                if autodiff_device is None:
                    autodiff_device = tensor.device
                else:
                    validate_checkpointing(op, autodiff_device, tensor.device)
    if first is not None:
        return autodiff_device or first[1].device
    for value in args.values():
        if isinstance(value, Device):
            return value
    raise TypeError(f"{op}: no tensor or device argument to route by")


def _unwrap(value, lift: Callable | None):
    if isinstance(value, DispatchTensor):
        prim = value.backend_tensor
        if lift is not None and not value.device.is_autodiff() and np.dtype(prim.dtype).kind == "f":
            return lift(prim)
        return prim
    if isinstance(value, list):
        return [_unwrap(v, lift) for v in value]
    if isinstance(value, tuple):
        return tuple(_unwrap(v, lift) for v in value)
    return value


def wrap(value, device: Device):
    """Tag every primitive in a result (tuples included) with ``device``."""
    if type(value) in PRIMITIVE_TYPES or isinstance(value, tuple(PRIMITIVE_TYPES)):
        return DispatchTensor(value, device)
    if isinstance(value, tuple):
        return tuple(wrap(v, device) for v in value)
    if isinstance(value, list):
        return [wrap(v, device) for v in value]
    return value


def route(op: str, args: dict):
    """Run ``op`` on the backend of the routing device and wrap what it returns."""
    device = _routing_device(op, args)
    backend = backend_for(device)
    lift = backend.from_inner if device.is_autodiff() else None
    unwrapped = {k: _unwrap(v, lift) for k, v in args.items()}
    if ROUTE_LISTENERS or OP_LISTENERS:
        for listener in (*ROUTE_LISTENERS, *OP_LISTENERS):
            listener(op, backend, unwrapped)
    return wrap(getattr(backend, op)(**unwrapped), device)
