"""A device kind of your own: route a new backend through Dispatch, so ``Tensor`` runs on it.

``register_backend("mine", Mine, Strided)`` returns ``Device("mine")``: tensors made on it
hold ``Mine``'s primitives, and every op Dispatch forwards for them runs ``Mine``'s op
(:func:`minidl.dispatch.route.backend_for` finds it in ``PLAIN_BACKENDS``). Registering
does three things and nothing else: it adds the kind to the ones ``Device`` accepts (with
the settings of ``like``), tells Dispatch which class owns it, and adds the primitive type
to ``PRIMITIVE_TYPES`` so Dispatch wraps what the backend returns. The book's
tensors-and-backends chapter registers the backend a reader assembles there.

burn has no counterpart. burn-dispatch's ``DispatchDevice`` (``src/device.rs`` line 31 at
v0.22.0-pre.2) is a closed enum, one feature-gated variant per backend burn ships (Cpu,
Cuda, Wgpu, Flex, NdArray, ...). A backend of your own is a type implementing ``Backend``:
code generic over ``B: Backend`` runs on it, but burn 0.22's ``Tensor<D, K>``, which always
goes through Dispatch, reaches it only through a new variant of that enum, a change to
burn-dispatch itself.
"""

from __future__ import annotations

from minidl.backend import PRIMITIVE_TYPES
from minidl.backend import device as _device
from minidl.backend.device import Device
from minidl.dispatch import route as _route

__all__ = ["register_backend"]


def register_backend(kind: str, backend: type, primitive: type, like: str = "ndarray") -> Device:
    """Make ``kind`` a device kind whose ops run on ``backend`` (whose tensors are
    ``primitive``s, with ``like``'s default dtypes); return ``Device(kind)``.

    Registering a kind again replaces its backend (a notebook cell run twice)."""
    if kind in _route.PLAIN_BACKENDS and kind not in _REGISTERED:
        raise ValueError(f"register_backend: {kind!r} is one of minidl's own device kinds")
    if kind not in _device._KINDS:
        _device._KINDS = (*_device._KINDS, kind)
    _device._SETTINGS[kind] = _device._SETTINGS[like]
    _route.PLAIN_BACKENDS[kind] = lambda: backend
    if primitive not in PRIMITIVE_TYPES:
        PRIMITIVE_TYPES.append(primitive)
    _REGISTERED.add(kind)
    # forget earlier answers for devices of this kind (a replaced backend)
    for device in list(_device._INTERNED.values()):
        if device.kind == kind:
            _route.ROUTED.pop(id(device), None)
    return Device(kind)


_REGISTERED: set[str] = set()
