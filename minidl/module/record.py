"""Module records: ``into_record`` / ``load_record`` (burn-core's ``Record`` of a module).

A record is a nested ``dict`` that mirrors the module tree: a sub-module becomes a dict, a
list of modules a list, a tensor param its tensor (with the ``save_mapper`` applied), a
running state its synced value. Flags and constants are configuration, not state: they are
not recorded. The nested shape is burn 0.21's per-module ``Record``; burn 0.22's
``into_record`` returns a flat ``store::ModuleRecord`` (tensors keyed by dotted path and
param id) and has no ``Recorder``. ``minidl.store`` writes these dicts to safetensors files.

``load_record`` checks the WHOLE record before building anything — names, shapes (against
``Param.lazy_shape()``, so the ``LinearLayout.Col`` pitfall of the nn-modules chapter shows up exactly as in
burn), dtypes — and raises naming the first parameter at fault; the module it was called on is
never changed (a new module is returned).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minidl.backend.dtype import DType
from minidl.module.param import Param
from minidl.module.running import RunningState
from minidl.module.visitor import ModuleMapper, ModuleNode, ModuleVisitor, is_module_value, join
from minidl.tensor import Tensor


class RecordError(ValueError):
    """A record that does not fit the module (missing, unexpected, wrong shape or dtype)."""


class _Collect(ModuleVisitor):
    def __init__(self):
        self.params: dict[str, Param] = {}
        self.states: dict[str, RunningState] = {}

    def visit_param(self, path: str, param: Param) -> None:
        self.params[path] = param

    def visit_running_state(self, path: str, state: RunningState) -> None:
        self.states[path] = state


def _stored(tensor: Tensor) -> Tensor:
    return tensor.inner() if tensor.device.is_autodiff() else tensor


def into_record(module: Any) -> dict[str, Any]:
    """The module's state as a nested dict of tensors (on their inner devices)."""
    return _record_of(module)


def _record_of(value: Any) -> Any:
    if isinstance(value, Param):
        return _stored(value.transform_for_save())
    if isinstance(value, RunningState):
        value.sync()
        return _stored(value.value())
    if isinstance(value, ModuleNode):
        return {name: _record_of(v) for name, v in value.named_fields()
                if not (isinstance(v, Param) and v.is_flag())}
    if isinstance(value, list | tuple):
        return [_record_of(v) if is_module_value(v) else None for v in value]
    if isinstance(value, dict):
        return {k: _record_of(v) for k, v in value.items() if is_module_value(v)}
    return None


def flatten_record(record: Any, prefix: str = "") -> dict[str, Any]:
    """``{"fc": {"weight": t}}`` → ``{"fc.weight": t}`` (``None`` leaves are dropped)."""
    out: dict[str, Any] = {}
    if isinstance(record, dict):
        for key, value in record.items():
            out.update(flatten_record(value, join(prefix, key)))
    elif isinstance(record, list | tuple):
        for i, value in enumerate(record):
            out.update(flatten_record(value, join(prefix, i)))
    elif record is not None:
        out[prefix] = record
    return out


def _as_tensor(path: str, value: Any, device) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return Tensor.from_numpy(value, device=device)
    raise RecordError(f"load_record: '{path}' must be a Tensor or a NumPy array, found {type(value).__name__}")


def _dtype_of(value: Any) -> DType:
    return value.dtype if isinstance(value, Tensor) else DType.of(value.dtype)


def check_record(module: Any, record: dict[str, Any]) -> dict[str, Any]:
    """Validate ``record`` against ``module``; returns the flat ``path → value`` map."""
    if not isinstance(record, dict):
        raise RecordError(f"load_record: expected a dict record, found {type(record).__name__}")
    collect = _Collect()
    module.visit(collect)
    flat = flatten_record(record)
    expected = {**collect.params, **collect.states}
    missing = [p for p in expected if p not in flat]
    if missing:
        raise RecordError(f"load_record: missing '{missing[0]}' in the record"
                          + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    unexpected = [p for p in flat if p not in expected]
    if unexpected:
        raise RecordError(f"load_record: unexpected '{unexpected[0]}' in the record: the module has no such parameter")
    for path, value in flat.items():
        if not isinstance(value, Tensor | np.ndarray):
            raise RecordError(f"load_record: '{path}' must be a Tensor or a NumPy array, found {type(value).__name__}")
        found = tuple(int(s) for s in value.shape)
        if path in collect.params:
            param = collect.params[path]
            want_shape, want_dtype = param.lazy_shape(), param.lazy_dtype()
        else:
            state_value = collect.states[path].value()
            want_shape, want_dtype = tuple(state_value.shape), state_value.dtype
        if found != tuple(want_shape):
            raise RecordError(f"Shape mismatch for '{path}': expected {list(want_shape)}, found {list(found)}")
        dtype = _dtype_of(value)
        if dtype != want_dtype:
            raise RecordError(f"Dtype mismatch for '{path}': expected {want_dtype.value}, found {dtype.value}")
    return flat


class LoadMapper(ModuleMapper):
    """Replaces every param and running state with the record's value at the same path."""

    def __init__(self, flat: dict[str, Any]):
        self.flat = flat

    def map_param(self, path: str, param: Param) -> Param:
        device = param.lazy_device()
        tensor = _as_tensor(path, self.flat[path], device.inner())
        tensor = _stored(tensor).to_device(device.inner())
        tensor = param.apply_load_mapper(tensor)
        if device.is_autodiff():
            tensor = Tensor.from_inner(tensor, device)
            if param.require_grad:
                tensor = tensor.require_grad()
        return param.with_value(tensor)

    def map_running_state(self, path: str, state: RunningState) -> RunningState:
        target = state.value().device
        tensor = _as_tensor(path, self.flat[path], target.inner())
        tensor = _stored(tensor).to_device(target)
        return RunningState(tensor, state.id)


def load_record(module: Any, record: dict[str, Any]) -> Any:
    """A new module holding the record's values (see the module docstring)."""
    flat = check_record(module, record)
    return module.map(LoadMapper(flat))


__all__ = ["RecordError", "check_record", "flatten_record", "into_record", "load_record"]
