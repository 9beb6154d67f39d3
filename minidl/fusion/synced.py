"""``Synced[B]``: ``Fusion[B]`` behind a primitive-level face, for the backend test suites.

The conformance and autodiff suites hand a backend plain NumPy arrays and read its results
back with ``np.asarray``. ``Synced[Flex]`` takes those arrays, runs each op on ``Fusion[Flex]``
(defaults included: ``layer_norm`` or ``softmax`` decompose, are recorded and fused inside
one call), and syncs before returning, so every result is the inner backend's primitive.
It is burn's ``ExecutionMode::Sync`` applied after every op, and it prints as ``fusion``.
"""

from __future__ import annotations

import inspect

from minidl.backend import Backend, op_names, protocol_of
from minidl.fusion.backend import fusion_backend
from minidl.fusion.tensor import FusionTensor


def _synced(value):
    if isinstance(value, FusionTensor):
        return value.value
    if isinstance(value, tuple):
        return tuple(_synced(v) for v in value)
    if isinstance(value, list):
        return [_synced(v) for v in value]
    return value


def _forward(fusion: type, op: str):
    sig = inspect.signature(protocol_of(op).__dict__[op].__func__)

    def method(cls, *args, **kwargs):
        return _synced(getattr(fusion, op)(*args, **kwargs))

    method.__name__ = method.__qualname__ = op
    method.__signature__ = sig
    return classmethod(method)


_CACHE: dict[type, type] = {}


def synced_backend(inner: type) -> type:
    """``Synced[inner]``: every protocol op of ``Fusion[inner]``, synced after each call."""
    cls = _CACHE.get(inner)
    if cls is None:
        fusion = fusion_backend(inner)
        body = {op: _forward(fusion, op) for op in op_names(Backend)}
        body.update(__module__=__name__, name="fusion", fusion=fusion,
                    __doc__=f"{fusion.__name__} synced after every op (primitives of {inner.__name__} in and out).")
        cls = type(f"Synced[{inner.__name__}]", (Backend,), body)
        cls.__qualname__ = cls.__name__
        _CACHE[inner] = cls
    return cls
