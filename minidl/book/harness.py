"""How build exercises drive a solution: the calls the framework would make, hidden from trace.

Every function here runs *inside* the checker's traced run, so this module is marked
``__trace_hide__``: a rule then sees the reader's code and what it dispatched, never the
harness that called it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minidl import Device, Tensor

__trace_hide__ = True


def to_tensor(value: Any, device: Device) -> Any:
    """A case's NumPy array as a minidl tensor (float32, int64 or bool); anything else as is."""
    if isinstance(value, np.ndarray):
        return Tensor.from_numpy(np.ascontiguousarray(value), device)
    return value


def tensor_call(params: Sequence[str], device: Device | None = None) -> Callable[[Any, dict], dict]:
    """A ``run`` that calls ``solution(*case[p] for p in params)`` with arrays as tensors on
    ``device`` (Flex by default) and returns ``{"out": result}``."""
    dev = Device.flex() if device is None else device

    def run(solution: Any, case: dict) -> dict:
        args = [to_tensor(case[p], dev) for p in params]
        return {"out": solution(*args)}

    return run


def is_placeholder(fn: Any) -> bool:
    """Whether ``fn`` is the page's unfinished ``def f(...): ...`` (its body only ``...``)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return False
    import inspect

    try:
        lines = inspect.getsource(fn).splitlines()
    except (OSError, TypeError):
        return False
    body = [ln.split("#", 1)[0].strip() for ln in lines[1:]]
    body = [ln for ln in body if ln and not ln.startswith(('"""', "'''"))]
    return body == ["..."]
