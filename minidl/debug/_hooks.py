"""One ``sys.setprofile`` hook shared by every tool of :mod:`minidl.debug`.

``trace``, ``coverage`` and debug levels 2–3 all want profile events; Python has one profile
function per thread. This module installs a small multiplexer while at least one tool listens
and puts the previous profile function (``cProfile``, say) back when the last one leaves, so
the tools nest and cost nothing when none is active.

Why ``setprofile`` and not ``settrace``: numba's dispatcher reports a call into compiled code
to the *profile* function only, as a ``"call"`` event on a synthesized frame carrying the
kernel's Python code object (its ``f_back`` is ``None``). That is how a numba kernel shows up
as the innermost frame of a backtrace. (A ``@vectorize`` ufunc is called without any event,
so it cannot appear; Flex's kernels are ``@njit`` functions.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

# trace tools skip frames of this module: they are the machinery, not the stack being studied
__trace_hide__ = True

Callback = Callable[[object, str, object], None]

_callbacks: list[Callback] = []
_previous: Callable | None = None


def _dispatch(frame, event: str, arg) -> None:
    seen = event
    # numba's synthesized frame is reported but never pushed: the thread's current frame (our
    # caller) is still the Python frame that called the kernel
    if frame.f_back is None and event in ("call", "return") and sys._getframe(1) is not frame:
        seen = "kernel_" + event
    for callback in tuple(_callbacks):
        callback(frame, seen, arg)
    if _previous is not None:
        _previous(frame, event, arg)


def add(callback: Callback) -> None:
    """Start delivering profile events of this thread to ``callback(frame, event, arg)``.

    Events are Python's (``"call"``, ``"return"``, ``"c_call"``, ...), except that the call
    into and the return from a numba kernel arrive as ``"kernel_call"`` / ``"kernel_return"``
    with the kernel's synthesized frame.
    """
    global _previous
    if not _callbacks:
        current = sys.getprofile()
        _previous = None if current is _dispatch else current
        sys.setprofile(_dispatch)
    _callbacks.append(callback)


def remove(callback: Callback) -> None:
    """Stop delivering events to ``callback``; uninstall the hook when nobody listens."""
    global _previous
    if callback in _callbacks:
        _callbacks.remove(callback)
    if not _callbacks:
        sys.setprofile(_previous)
        _previous = None


def active() -> bool:
    """Whether any tool is listening (the hook is installed)."""
    return bool(_callbacks)
