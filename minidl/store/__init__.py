"""Storing and loading modules (burn-store).

- :class:`SafetensorsStore` — a module's record in safetensors (dtype kept, bit-exact);
- :class:`PytorchStore` — a PyTorch ``state_dict`` (``.pt``/``.pth`` or in memory), read
  without running pickled code, translated by :class:`PyTorchToMinidlAdapter`;
- :func:`save_module` / :func:`load_module` / :func:`load_model` — one-call helpers (record
  plus config JSON);
- :class:`KeyRemapper`, :class:`ApplyResult`, the adapters (:class:`FloatCastAdapter` casts
  a half-precision file; ``a.chain(b)`` combines two) and the errors.

Every load checks every tensor against the module before anything is built and returns a
NEW module; on failure it raises a :class:`StoreError` (a ``ValueError``) that names the
tensor, and the module it was given is unchanged.
"""

from __future__ import annotations

from minidl.store.adapter import (
    ChainAdapter,
    FloatCastAdapter,
    IdentityAdapter,
    MinidlToPyTorchAdapter,
    ModuleAdapter,
    PyTorchToMinidlAdapter,
    TensorSlot,
)
from minidl.store.api import (
    SafetensorsFileRecorder,
    config_path,
    load_model,
    load_module,
    save_module,
)
from minidl.store.applier import ApplyFailed, ApplyResult, plan_apply
from minidl.store.base import ModuleStore
from minidl.store.errors import (
    CorruptFileError,
    DTypeMismatch,
    LoadError,
    ShapeMismatch,
    StoreError,
    UnsafeFileError,
)
from minidl.store.keyremap import KeyRemapper, map_indices_contiguous
from minidl.store.module_bridge import collect_slots
from minidl.store.pytorch_store import PytorchStore
from minidl.store.safetensors_store import SafetensorsStore

__all__ = [
    "ApplyFailed",
    "ApplyResult",
    "ChainAdapter",
    "CorruptFileError",
    "DTypeMismatch",
    "FloatCastAdapter",
    "IdentityAdapter",
    "KeyRemapper",
    "LoadError",
    "MinidlToPyTorchAdapter",
    "ModuleAdapter",
    "ModuleStore",
    "PyTorchToMinidlAdapter",
    "PytorchStore",
    "SafetensorsFileRecorder",
    "SafetensorsStore",
    "ShapeMismatch",
    "StoreError",
    "TensorSlot",
    "UnsafeFileError",
    "collect_slots",
    "config_path",
    "load_model",
    "load_module",
    "map_indices_contiguous",
    "plan_apply",
    "save_module",
]
