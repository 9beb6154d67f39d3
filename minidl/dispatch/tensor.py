"""``DispatchTensor``: a backend primitive tagged with its device (burn-dispatch's ``DispatchTensor``)."""

from __future__ import annotations

from minidl.backend.device import Device


class DispatchTensor:
    """What ``Tensor`` holds: the primitive of the backend that owns ``device``.

    On an autodiff device a float primitive is an ``AutodiffTensor``; int and bool primitives
    stay on the inner backend, as in burn.
    """

    __slots__ = ("primitive", "device")

    def __init__(self, primitive, device: Device):
        self.primitive = primitive
        self.device = device

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.primitive.shape)

    @property
    def dtype(self):
        return self.primitive.dtype

    def __repr__(self) -> str:
        dtype = getattr(self.dtype, "name", self.dtype)
        return f"<{dtype}{list(self.shape)} {self.device}>"
