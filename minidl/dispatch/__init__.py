"""burn-dispatch: ``Device``, ``DispatchTensor`` and ``Dispatch``, the backend that routes by device."""

from __future__ import annotations

from minidl.backend.device import Device, install_seeder
from minidl.dispatch.backend import Dispatch
from minidl.dispatch.route import OP_LISTENERS, ROUTE_LISTENERS, backend_for, plain_backend
from minidl.dispatch.tensor import DispatchTensor

install_seeder(Dispatch.seed)

__all__ = ["OP_LISTENERS", "ROUTE_LISTENERS", "Device", "Dispatch", "DispatchTensor", "backend_for", "plain_backend"]
