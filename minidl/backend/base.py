"""What the op families are written with: :func:`required`, :func:`default`, ``TensorData``.

A backend is a class whose ops are classmethods, so ``B.float_matmul(a, b)`` reads like
burn's ``B::float_matmul``. The op families (``FloatTensorOps``, ``ModuleOps``, ...) are mixins:
an op decorated with :func:`required` has no body a backend can inherit (burn: a trait method
without a default); every other op is a *default method* written with other ops of ``cls``, so
when it runs on ``Dispatch`` it calls ``Dispatch``'s ops — burn's "default with B = Dispatch".
:mod:`minidl.backend.protocol` reads the families back (which ops exist, which are required,
who defines one) and holds ``BackendBase``, the root that checks a backend is complete.
"""

from __future__ import annotations

import numpy as np

#: The primitive tensor types backends hand out. Dispatch wraps results of these types in a
#: ``DispatchTensor``; anything else (``TensorData``, shapes, bools) passes through unwrapped.
PRIMITIVE_TYPES: list[type] = [np.ndarray]


def required(fn):
    """Mark a protocol op as required: a concrete backend must define it (no default)."""
    fn.__required__ = True
    return classmethod(fn)


def default(fn):
    """Mark a protocol op as a default method (written with other ops of ``cls``)."""
    fn.__default__ = True
    return classmethod(fn)


class TensorData:
    """Host data read back from a backend (burn's ``TensorData``): a NumPy array, never wrapped."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def __repr__(self) -> str:
        return f"TensorData({self.array!r})"
