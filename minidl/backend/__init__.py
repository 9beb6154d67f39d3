"""The backend protocol (burn-backend): op families as mixins of classmethods.

``Backend`` combines every family. Required ops are abstract; the rest are default methods
written with other ops of the same backend ``cls`` — see :mod:`minidl.backend.base`;
:mod:`minidl.backend.protocol` reads the families back (``op_names``, ``is_required``, ...).
"""

from __future__ import annotations

from minidl.backend.activation_ops import ActivationOps
from minidl.backend.base import PRIMITIVE_TYPES, TensorData
from minidl.backend.bool_ops import BoolTensorOps
from minidl.backend.device import Device, DeviceSettings
from minidl.backend.distribution import Distribution
from minidl.backend.dtype import DType, Kind
from minidl.backend.float_ops import FloatTensorOps
from minidl.backend.int_ops import IntTensorOps
from minidl.backend.module_ops import ModuleOps
from minidl.backend.options import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    PoolOptions,
)
from minidl.backend.protocol import (
    BackendBase,
    defines,
    defining_class,
    is_required,
    op_names,
    ops_protocols,
    protocol_of,
    signature,
)


class Backend(FloatTensorOps, IntTensorOps, BoolTensorOps, ActivationOps, ModuleOps, BackendBase):
    """A complete backend: every op family. Concrete backends subclass it (burn's ``Backend``)."""

    abstract = True
    name = "backend"


__all__ = [
    "PRIMITIVE_TYPES",
    "ActivationOps",
    "Backend",
    "BackendBase",
    "BoolTensorOps",
    "ConvOptions",
    "ConvTransposeOptions",
    "DType",
    "Device",
    "DeviceSettings",
    "Distribution",
    "FloatTensorOps",
    "IntTensorOps",
    "InterpolateOptions",
    "Kind",
    "ModuleOps",
    "PoolOptions",
    "TensorData",
    "defines",
    "defining_class",
    "is_required",
    "op_names",
    "ops_protocols",
    "protocol_of",
    "signature",
]
