"""Autodiff's int and bool ops: straight to the inner backend (burn-autodiff ``int_tensor.rs``,
``bool_tensor.rs``).

Int and bool tensors are never differentiated, so on an autodiff device they are the inner
backend's primitives and every op is a plain call of ``B``'s op. Only the two conversions
to float (``int_into_float``, ``bool_into_float``) wrap their result, as an untracked
``AutodiffTensor``. The forwarders are generated from the protocol so none can be forgotten.
"""

from __future__ import annotations

import inspect

from minidl.autodiff.decorator import inner_device
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend import BoolTensorOps, IntTensorOps, op_names

#: Ops whose result is a float primitive, to be wrapped for the autodiff side.
TO_FLOAT = ("int_into_float", "bool_into_float")


def _forwarder(name: str, proto: type):
    sig = inspect.signature(proto.__dict__[name].__func__)
    has_device = "device" in sig.parameters
    wraps = name in TO_FLOAT

    def op(cls, *args, **kwargs):
        if has_device:
            args = tuple(inner_device(a) for a in args)
            kwargs = {k: inner_device(v) for k, v in kwargs.items()}
        out = getattr(cls._inner, name)(*args, **kwargs)
        return AutodiffTensor.untracked(out) if wraps else out

    op.__name__ = name
    op.__qualname__ = f"AutodiffIntBoolOps.{name}"
    # the code object carries the name too: tracebacks and minidl.debug name frames from
    # the code, so a hit reads Autodiff[Flex].bool_not, not _forwarder.<locals>.op
    op.__code__ = op.__code__.replace(co_name=name, co_qualname=op.__qualname__)
    op.__signature__ = sig
    op.__doc__ = f"``{name}`` of the inner backend."
    return classmethod(op)


class AutodiffIntBoolOps:
    """Int and bool ops of ``Autodiff[B]``: each one calls ``B``'s."""


for _proto in (IntTensorOps, BoolTensorOps):
    for _name in op_names(_proto):
        setattr(AutodiffIntBoolOps, _name, _forwarder(_name, _proto))
