"""Where the store meets ``minidl.module``: slots out of a module, arrays in and out.

burn-store's ``ModuleSnapshot`` gives a module two walks: ``collect`` (a ``ModuleVisitor``
that records each tensor with its path and container stack) and ``apply`` (a
``ModuleMapper``, the ``Applier``). Here:

- :func:`collect_slots` walks the module with a visitor and returns a
  :class:`~minidl.store.adapter.TensorSlot` per tensor param and running state — path, the
  type names of the modules around it, ``lazy_shape()``, ``lazy_dtype()`` — WITHOUT
  initializing any lazy param. Flags are configuration and are not stored.
- :func:`collect_arrays` is the record as NumPy arrays by path (``Module.into_record``:
  ``save_mapper`` applied, running states synced), optionally renamed by an export adapter.
- :func:`apply_arrays` builds the NEW module with some paths replaced, through the module's
  own record loader (``load_mapper`` applied, autodiff devices and ``require_grad`` kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from minidl.module import Module, Param, RunningState
from minidl.module.record import LoadMapper, flatten_record
from minidl.module.visitor import ModuleVisitor
from minidl.store.adapter import ModuleAdapter, TensorSlot
from minidl.store.errors import StoreError


def module_type_name(module: Any) -> str:
    """The name the adapters match on: the nearest class of ``minidl.nn`` in the module's
    MRO (a user's ``class MyLinear(Linear)`` still counts as a ``Linear``), else its own
    class name — burn's ``container_type``."""
    for cls in type(module).__mro__:
        if cls.__module__.startswith("minidl.nn"):
            return cls.__name__
    return type(module).__name__


class _SlotCollector(ModuleVisitor):
    def __init__(self) -> None:
        self.stack: list[str] = []
        self.slots: list[TensorSlot] = []

    def enter_module(self, path: str, module: Any) -> None:
        self.stack.append(module_type_name(module))

    def exit_module(self, path: str, module: Any) -> None:
        self.stack.pop()

    def visit_param(self, path: str, param: Param) -> None:
        self.slots.append(TensorSlot(path, tuple(self.stack), tuple(param.lazy_shape()),
                                     param.lazy_dtype().value, "param"))

    def visit_running_state(self, path: str, state: RunningState) -> None:
        value = state.value()
        self.slots.append(TensorSlot(path, tuple(self.stack), tuple(value.shape),
                                     value.dtype.value, "running"))


def _require_module(module: Any) -> Module:
    if not isinstance(module, Module):
        raise TypeError(f"expected a minidl Module, found {type(module).__name__}")
    return module


def collect_slots(module: Module) -> list[TensorSlot]:
    """Every stored tensor of ``module`` as a slot (no lazy param is initialized)."""
    collector = _SlotCollector()
    _require_module(module).visit(collector)
    return collector.slots


def collect_arrays(module: Module, adapter: ModuleAdapter | None = None) -> dict[str, np.ndarray]:
    """The module's record as NumPy arrays by path, as a file stores them (initializes lazy
    params: saving needs their values). ``adapter.export`` may rename and transform."""
    adapter = adapter or ModuleAdapter()
    slots = {slot.path: slot for slot in collect_slots(module)}
    flat = flatten_record(module.into_record())
    out: dict[str, np.ndarray] = {}
    for path, tensor in flat.items():
        array = np.ascontiguousarray(tensor.to_numpy())
        name, array = adapter.export(array, slots[path])
        if name in out:
            raise StoreError(f"two tensors are saved under the name '{name}'")
        out[name] = array
    return out


class _PartialLoad(LoadMapper):
    """The module's record loader, applied only to the paths a file provides."""

    def map_param(self, path: str, param: Param) -> Param:
        return super().map_param(path, param) if path in self.flat else param

    def map_running_state(self, path: str, state: RunningState) -> RunningState:
        return super().map_running_state(path, state) if path in self.flat else state


def apply_arrays(module: Module, values: Mapping[str, np.ndarray]) -> Module:
    """A new module with the params/states at ``values``' paths replaced (already checked)."""
    return _require_module(module).map(_PartialLoad(dict(values)))
