"""Leveled debug output, like tinygrad's ``DEBUG``: set ``MINIDL_DEBUG=n`` or use
``with debug_level(n):``.

===== =====================================================================================
level what is printed (to stderr, or captured)
===== =====================================================================================
0     nothing (the default; no hook is installed, so nothing is paid)
1     each op Dispatch routes, as ``float_matmul → Autodiff[Flex]``; on a fusion device
      also the stream's events (sync, plan searched or reused, block fused, kernel
      generated or loaded, launched, op run on ``B``)
2     plus every op a fusion stream records, and, when the op returns: its tensor arguments (dtype and shape), the result, the
      numba kernels it ran with their times, and the op's wall time
3     plus numba compile events: a kernel's first call loading from numba's cache or
      compiling, with the signature and the time it took
===== =====================================================================================

Level 1 listens on :data:`minidl.dispatch.OP_LISTENERS`; levels 2–3 add a profile hook
(numba reports kernel calls to it) and a ``numba.core.event`` listener. The times of level 2
include that hook's own cost (a 4×4 matmul reads hundreds of µs): they show where time goes
inside one op, not how fast it is — ``bench/`` measures that. ``MINIDL_DEBUG`` is read when
:mod:`minidl.debug` is imported, which ``import minidl`` does when the variable is set.

A chapter shows the output with ``capture=True``::

    with debug_level(1, capture=True) as log:
        y = x + x
    log.lines   # ['float_add → Flex']
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO

from minidl.debug import _hooks
from minidl.debug.fusion import stream_line
from minidl.debug.names import describe, kernel_info, short_dtype
from minidl.dispatch import OP_LISTENERS
from minidl.dispatch import route as _route_module
from minidl.fusion.events import STREAM_LISTENERS

__trace_hide__ = True

ENV = "MINIDL_DEBUG"


class DebugLog(list):
    """The lines written while a :func:`debug_level` block was open (a list of str)."""

    @property
    def lines(self) -> list[str]:
        """The lines, as a plain list."""
        return list(self)

    @property
    def text(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(self)

    def __str__(self) -> str:
        return self.text


@dataclass
class _State:
    level: int
    stream: TextIO | None  # None: sys.stderr at write time
    capture: bool
    log: DebugLog = field(default_factory=DebugLog)


def _env_level() -> int:
    try:
        return max(0, int(os.environ.get(ENV, "0") or 0))
    except ValueError:
        return 0


_stack: list[_State] = [_State(_env_level(), None, False)]


def get_level() -> int:
    """The debug level in effect."""
    return _stack[-1].level


def _emit(line: str) -> None:
    state = _stack[-1]
    state.log.append(line)
    if not state.capture:
        print(line, file=state.stream or sys.stderr)


def _tensors(args: dict) -> str:
    parts = []
    for name, value in args.items():
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            parts.append(f"{name}={short_dtype(value.dtype)}[{','.join(map(str, value.shape))}]")
        elif isinstance(value, list | tuple) and value and all(hasattr(v, "shape") for v in value):
            parts.append(f"{name}=[{len(value)} tensors]")
    return " ".join(parts)


def _result(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_result(v) for v in value) + ")"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{short_dtype(value.dtype)}[{','.join(map(str, value.shape))}]"
    return describe(value, width=24)


def _us(ns: int) -> str:
    return f"{ns / 1e3:.1f} µs" if ns < 10_000_000 else f"{ns / 1e9:.3f} s"


@dataclass
class _Pending:
    op: str
    backend: str
    args: str
    frame: object
    t0: int
    kernels: list[str] = field(default_factory=list)


_pending: list[_Pending] = []
_kernels: list[tuple[object, str, int]] = []
_compiles: list[tuple[object, object, int, int, int]] = []
_ROUTE_CODE = _route_module.route.__code__


def _on_route(op: str, backend: type, args: dict) -> None:
    if get_level() >= 2:
        _pending.append(_Pending(op, backend.__name__, _tensors(args), sys._getframe(1), time.perf_counter_ns()))
    else:
        _emit(f"{op} → {backend.__name__}")


_compile_for_args = None


def _compile_code():
    """The code of numba's ``_compile_for_args`` (the Python path of a first call), once loaded."""
    global _compile_for_args
    if _compile_for_args is None:
        module = sys.modules.get("numba.core.dispatcher")
        cls = getattr(module, "_DispatcherBase", None)
        _compile_for_args = getattr(getattr(cls, "_compile_for_args", None), "__code__", None)
    return _compile_for_args


def _stat_totals(dispatcher) -> tuple[int, int]:
    stats = dispatcher.stats
    return sum(stats.cache_hits.values()), sum(stats.cache_misses.values())


def _on_profile(frame, event: str, arg) -> None:
    # the frame that told the route listener (``route`` or a forwarder's fast path) returns
    if event == "return" and _pending and _pending[-1].frame is frame:
        p = _pending.pop()
        took = time.perf_counter_ns() - p.t0
        kernels = f"  [{', '.join(p.kernels)}]" if p.kernels else ""
        _emit(f"{p.op} → {p.backend}  {p.args} → {_result(arg)}  {_us(took)}{kernels}")
        return
    code = frame.f_code
    if code is _ROUTE_CODE:
        return
    if get_level() >= 3 and code is _compile_code():
        if event == "call":
            disp = frame.f_locals.get("self")
            hits, misses = _stat_totals(disp)
            _compiles.append((frame, disp, hits, misses, time.perf_counter_ns()))
        elif event == "return" and _compiles and _compiles[-1][0] is frame:
            _, disp, hits, misses, t0 = _compiles.pop()
            new_hits, new_misses = _stat_totals(disp)
            how = "compiled" if new_misses > misses else "loaded from numba's cache" if new_hits > hits else "resolved"
            _emit(f"numba: first call of {disp.py_func.__name__}: {how} in {_us(time.perf_counter_ns() - t0)}")
        return
    if event == "kernel_call":
        _kernels.append((frame, kernel_info(code, frame).func, time.perf_counter_ns()))
    elif event == "kernel_return" and _kernels and _kernels[-1][0] is frame:
        _, name, t0 = _kernels.pop()
        took = _us(time.perf_counter_ns() - t0)
        if _pending:
            _pending[-1].kernels.append(f"{name} {took}")
        else:
            _emit(f"kernel {name}  {took}")


class _CompileListener:
    """Reports every numba compilation (``numba:compile`` events), nested ones included."""

    def __init__(self) -> None:
        from numba.core import event

        class Listener(event.Listener):
            def on_start(inner, ev):
                inner.t0 = time.perf_counter_ns()

            def on_end(inner, ev):
                data = ev.data or {}
                disp = data.get("dispatcher")
                name = getattr(getattr(disp, "py_func", None), "__name__", "?")
                args = ", ".join(str(a) for a in data.get("args", ()))
                _emit(f"numba: compile {name}({args}) took {_us(time.perf_counter_ns() - inner.t0)}")

        self.event = event
        self.listener = Listener()

    def install(self) -> None:
        self.event.register("numba:compile", self.listener)

    def remove(self) -> None:
        with contextlib.suppress(ValueError):
            self.event.unregister("numba:compile", self.listener)


_compile_listener: _CompileListener | None = None


def _on_stream(event: str, **details) -> None:
    if event == "recorded" and get_level() < 2:
        return
    line = stream_line(event, details)
    if line:
        _emit(line)


def _apply(level: int) -> None:
    global _compile_listener
    if level >= 1 and _on_stream not in STREAM_LISTENERS:
        STREAM_LISTENERS.append(_on_stream)
    if level < 1 and _on_stream in STREAM_LISTENERS:
        STREAM_LISTENERS.remove(_on_stream)
    if level >= 1 and _on_route not in OP_LISTENERS:
        OP_LISTENERS.append(_on_route)
    if level < 1 and _on_route in OP_LISTENERS:
        OP_LISTENERS.remove(_on_route)
    if level >= 2 and _on_profile not in _hooks._callbacks:
        _hooks.add(_on_profile)
    if level < 2 and _on_profile in _hooks._callbacks:
        _hooks.remove(_on_profile)
        _pending.clear()
        _kernels.clear()
    if level >= 3 and _compile_listener is None:
        _compile_listener = _CompileListener()
        _compile_listener.install()
    if level < 3 and _compile_listener is not None:
        _compile_listener.remove()
        _compile_listener = None


def set_level(level: int, stream: TextIO | None = None) -> None:
    """Set the level for the rest of the session (what ``MINIDL_DEBUG`` does at import)."""
    _stack[0] = _State(int(level), stream, False)
    if len(_stack) == 1:
        _apply(int(level))


@contextlib.contextmanager
def debug_level(level: int, capture: bool = False, stream: TextIO | None = None) -> Iterator[DebugLog]:
    """Debug output at ``level`` inside the block; yields the :class:`DebugLog` of its lines.

    ``capture=True`` keeps the lines in the log only (nothing printed) so a chapter can show
    or assert them; otherwise they go to ``stream`` (default: stderr) as well.
    """
    state = _State(int(level), stream, capture)
    _stack.append(state)
    _apply(state.level)
    try:
        yield state.log
    finally:
        _stack.remove(state)
        _apply(get_level())


_apply(get_level())
