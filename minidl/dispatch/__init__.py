"""burn-dispatch: ``Device``, ``DispatchTensor`` and ``Dispatch``, the backend that routes by device."""

from __future__ import annotations

from minidl.dispatch.backend import Dispatch
from minidl.dispatch.device import Device
from minidl.dispatch.route import ROUTE_LISTENERS, backend_for, inner_backend
from minidl.dispatch.tensor import DispatchTensor

__all__ = ["ROUTE_LISTENERS", "Device", "Dispatch", "DispatchTensor", "backend_for", "inner_backend"]
