"""``DispatchTensor``: a backend's tensor tagged with its device (burn-dispatch's ``DispatchTensor``)."""

from __future__ import annotations

from minidl.backend.device import Device


class DispatchTensor:
    """What ``Tensor`` holds (as ``Tensor.primitive``): ``backend_tensor``, the primitive of the
    backend that owns ``device`` (burn-dispatch's ``BackendTensor``), and the ``device``.

    On an autodiff device a float ``backend_tensor`` is an ``AutodiffTensor`` (whose ``inner``
    is the inner backend's array); int and bool ones stay on the inner backend, as in burn.
    """

    __slots__ = ("backend_tensor", "device")

    def __init__(self, backend_tensor, device: Device):
        self.backend_tensor = backend_tensor
        self.device = device

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.backend_tensor.shape)

    @property
    def dtype(self):
        return self.backend_tensor.dtype

    def __repr__(self) -> str:
        dtype = getattr(self.dtype, "name", self.dtype)
        return f"<{dtype}{list(self.shape)} {self.device}>"
