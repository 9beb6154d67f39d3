"""Moved: Flex's matmul-block kernel is :mod:`minidl.backends.flex.fusion.codegen_matmul` (the
generic fusion package imports no backend). Its names are re-exported, loaded on first use."""

from __future__ import annotations

import importlib


def __getattr__(name: str):
    if name in ("MatmulKernel", "matmul_kernel"):
        return getattr(importlib.import_module("minidl.backends.flex.fusion.codegen_matmul"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
