"""Moved: where Flex's generated kernels are written is :mod:`minidl.backends.flex.fusion.source`
(the generic fusion package imports no backend). Its names are re-exported, loaded on first use."""

from __future__ import annotations

import importlib


def __getattr__(name: str):
    if name in ("kernel_dir", "kernel_name", "load"):
        return getattr(importlib.import_module("minidl.backends.flex.fusion.source"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
