"""``Recorder``: the backend calls one run of a step makes, with their arguments and results.

While active it wraps every public op of a backend class (``Flex``: ``float_matmul``,
``relu_backward``, ``max_pool2d_with_indices``...), keeping only the outermost call (a
``linear`` that calls ``float_matmul`` is one entry: replaying ``linear`` replays the inner
call). A call that reads a tensor back to the host (``*_into_data``) is refused unless the
tensor is a declared input: the host would act on a value that a replay never shows it.

burn's counterpart is the capture channel of ``burn-capture`` (on burn's main, not in
0.22.0-pre.2; ``crates/burn-capture/src/capture.rs``): ``CaptureClient``'s
``RouterClient::register_op`` locks the session and calls ``CaptureState::register_op``,
which pushes each operation (a ``Drop`` skipped); a read of a value computed in the capture
has no concrete value and fails (``CaptureClient::read_tensor_async``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from minidl.backend.op_patch import BackendOpPatch
from minidl.capture.errors import CaptureError

#: the ops that read a tensor back to the host: refused unless the tensor is a declared input
_READS = ("float_into_data", "int_into_data", "bool_into_data")
_MINIDL = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CAPTURE = os.path.dirname(os.path.abspath(__file__))
_TENSOR_READS = ("to_numpy", "into_scalar", "item", "__bool__", "__float__", "__int__", "tolist",
                 "__array__", "into_data", "to_data")


class Call:
    """One outermost backend call: ``op`` (its name), the original function, what it got and
    what it returned, and where in the user's code it came from."""

    __slots__ = ("name", "fn", "args", "kwargs", "out", "where")

    def __init__(self, name: str, fn: Callable, args: tuple, kwargs: dict, out: Any, where: str):
        self.name, self.fn, self.args, self.kwargs, self.out, self.where = name, fn, args, kwargs, out, where


def root(array: np.ndarray) -> np.ndarray:
    """The array owning ``array``'s memory (a view's ``base``; NumPy keeps it the owner)."""
    base = array.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return base if isinstance(base, np.ndarray) else array


def user_frame() -> str:
    """``file:line`` of the innermost frame outside minidl: the line of the step that asked."""
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_MINIDL):
            return f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def tensor_read_name() -> str:
    """The outermost ``Tensor`` method on the stack that reads values to the host."""
    name, frame = "", sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in _TENSOR_READS and code.co_filename.startswith(_MINIDL):
            name = code.co_name
        frame = frame.f_back
    return f"Tensor.{name}" if name else "a host read"


class Recorder(BackendOpPatch):
    """Records the outermost calls to ``backend``'s ops while active (a ``with`` block).

    ``readable`` holds the ids of the root arrays a host read may touch (the declared inputs:
    their values came from the host, so reading them changes nothing a replay must know).
    """

    def __init__(self, backend: type, readable: set[int]):
        super().__init__(backend)
        self.readable = readable
        self.calls: list[Call] = []

    def finish(self) -> None:
        """The end of the recorded run (a lazy backend drains here: see ``launches.py``)."""

    def _refuse_read(self, name: str, args: tuple) -> None:
        tensor = args[0] if args else None
        if isinstance(tensor, np.ndarray) and id(root(tensor)) in self.readable:
            return
        raise CaptureError(
            f"capture refused {tensor_read_name()} at {user_frame()} (backend op {name}): it reads a "
            f"value computed inside the step back to the host. A replay runs no Python, so what the "
            f"host did with it (a Python `if`, a print, a number fed back in) would be frozen at its "
            f"capture value. Return the tensor from the step and read it after replay() instead.")

    def _wrap(self, name: str, fn: Callable) -> classmethod:
        recorder = self
        is_read = name in _READS

        def recorded(cls, *args: Any, **kwargs: Any) -> Any:
            if recorder._depth:
                return fn(*args, **kwargs)
            if is_read:
                recorder._refuse_read(name, args)
            recorder._depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                recorder._depth -= 1
            if not is_read:
                recorder.calls.append(Call(name, fn, args, kwargs, out, user_frame()))
            return out

        recorded.__name__ = name
        return classmethod(recorded)

