"""Moved: Flex's numba generator is :mod:`minidl.backends.flex.fusion.codegen` (the generic
fusion package imports no backend). The names below are re-exported, loaded on first use."""

from __future__ import annotations

import importlib

_MOVED = {
    "PARALLEL_FROM": "minidl.backends.flex.fusion.codegen",
    "loop_kernel": "minidl.backends.flex.fusion.codegen",
    "NumbaKernel": "minidl.backends.flex.fusion.codegen",
    "HEADER": "minidl.backends.flex.fusion.codegen",
    "Kernel": "minidl.backends.fusion.kernel",
    "Slot": "minidl.backends.fusion.kernel",
}


def __getattr__(name: str):
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
