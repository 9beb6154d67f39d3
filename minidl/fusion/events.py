"""Stream events for whoever listens (``minidl.debug`` at ``MINIDL_DEBUG>=1``).

A module of its own, importing nothing, so every part of the fusion backend can report
without importing the stream (which imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Called as ``listener(event, **details)`` for stream events (``recorded``, ``drain``,
#: ``plan``, ``fused``, ``kernel``, ``launch``, ``operation``, ``eager``).
STREAM_LISTENERS: list[Callable[..., None]] = []


def emit(event: str, **details: Any) -> None:
    """Tell the listeners about a stream event (free when nobody listens)."""
    for listener in tuple(STREAM_LISTENERS):
        listener(event, **details)
