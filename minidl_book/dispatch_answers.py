"""Readers' answers to the dispatch chapter's "forwarded linear" count, read as written.

With ``linear`` forwarded (burn-dispatch's ``// TODO: linear ops``, ``ops/module.rs:733`` in
v0.22.0-pre.2, filled), ``Dispatch`` routes one op for a ``Linear`` forward on the plain device.
A reader may answer with the count (``1``, ``"one"``) or with the routed lines, as debug level
1 prints them (``"linear → Flex"``), and may add an explanation after a ``;`` or a "then"
(``"linear → Flex; then Flex does matmul, reshape, add"``): only the answer before it is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from minidl_book.exercises import exact

__all__ = ["count_or_lines", "route_lines_said"]

ROUTE_LINE = re.compile(r"\s*(\w+)\s*(?:→|->|=>)\s*([\w\[\]<>]+)\s*")
_ARROW = re.compile(r"→|->|=>")
_LEAD = re.compile(r"^\s*(?:and\s+)?(?:then\s+)?", re.IGNORECASE)


def route_lines_said(prediction: Any) -> list[tuple[str, str]] | None:
    """``[(op, backend), ...]`` when the answer is route lines ("linear → Flex", "linear ->
    flex", a list of them), maybe followed by an explanation with no arrow in it after a
    ``;``, ``,`` or "then"; else None."""
    items = prediction if isinstance(prediction, (list, tuple)) else [prediction]
    if not items or not all(isinstance(item, str) for item in items):
        return None
    text = "\n".join(items)
    parts = [p for p in re.split(r"[\n;,]|\bthen\b", text) if p.strip()]
    said = []
    for at, part in enumerate(parts):
        line = ROUTE_LINE.fullmatch(_LEAD.sub("", part))
        if line:
            said.append((line[1].lower(), line[2].lower()))
            continue
        rest = " ".join(parts[at:])
        return said if said and not _ARROW.search(rest) else None  # an explanation
    return said or None


def count_or_lines(routed: Callable[[], list[str]]) -> Callable[[Any, Any], bool]:
    """A comparison that takes the count (``1``, ``"one"``, ``"1: linear -> Flex"``), or the
    lines ``Dispatch`` routes, checked against ``routed()`` (debug level 1's lines)."""

    def compare(prediction: Any, truth: Any) -> bool:
        said = route_lines_said(prediction)
        if said is None:
            return exact(prediction, truth)
        lines = [tuple(line.lower().split(" → ")) for line in routed()]
        return len(lines) == truth and said == lines

    compare.__name__ = "count_or_lines"
    return compare
