"""Readers' answers to two dispatch chapter exercises, read as written: the "forwarded
linear" count (:func:`count_or_lines`) and the backend a bool op is routed to
(:func:`first_backend_named`).

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

__all__ = ["count_or_lines", "count_said", "first_backend_named", "route_lines_said"]

ROUTE_LINE = re.compile(r"\s*(\w+)\s*(?:→|->|=>)\s*([\w\[\]<>]+)\s*")
_ARROW = re.compile(r"→|->|=>")
_NOTE = re.compile(r"\s+\([^()]*\)")  # "linear -> Flex (Flex runs the default body)"
_LEAD = re.compile(r"^\s*(?:and\s+)?(?:then\s+)?", re.IGNORECASE)


def route_lines_said(prediction: Any) -> list[tuple[str, str]] | None:
    """``[(op, backend), ...]`` when the answer is route lines ("linear → Flex", "linear ->
    flex", a list of them), maybe followed by an explanation with no arrow in it after a
    ``;``, ``,`` or "then", or in parentheses; else None."""
    items = prediction if isinstance(prediction, (list, tuple)) else [prediction]
    if not items or not all(isinstance(item, str) for item in items):
        return None
    text = _NOTE.sub(lambda m: "" if not _ARROW.search(m[0]) else m[0], "\n".join(items))
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


_COUNT_HEAD = re.compile(r"[;,:(]|\bthen\b|\bbut\b")
_COUNT_WORDS = re.compile(
    r"^(?:just|only)\s+|\s+(?:routed\s+)?(?:route|op|line|call)s?(?:\s+routed)?$")


def count_said(prediction: Any) -> Any:
    """The count a written answer gives before a trailing note: "one route; 3 kernels" and
    "just one: linear" say one. Anything else comes back as it was."""
    if not isinstance(prediction, str):
        return prediction
    head = _COUNT_HEAD.split(prediction, maxsplit=1)[0].strip().lower()
    return _COUNT_WORDS.sub("", head).strip() or prediction


def count_or_lines(routed: Callable[[], list[str]]) -> Callable[[Any, Any], bool]:
    """A comparison that takes the count (``1``, ``"one"``, ``"1: linear -> Flex"``), or the
    lines ``Dispatch`` routes, checked against ``routed()`` (debug level 1's lines)."""

    def compare(prediction: Any, truth: Any) -> bool:
        said = route_lines_said(prediction)
        if said is None:
            return exact(prediction, truth) or exact(count_said(prediction), truth)
        lines = [tuple(line.lower().split(" → ")) for line in routed()]
        return len(lines) == truth and said == lines

    compare.__name__ = "count_or_lines"
    return compare


BACKEND_NAME = re.compile(
    r"autodiff(?:\s*[\[<(]\s*(flex|ndarray)\s*[\]>)]?)?|ndarray|flex")
NEGATION = re.compile(r"\b(not|no|never|neither|nor|isn't|doesn't|won't)\b|n't\b")
VIA = re.compile(r"\b(?:via|through)\s+(?:the\s+)?$")  # "Flex via Autodiff[Flex]"
HEDGE = re.compile(r"\b(or|either)\b")


def first_backend_named(prediction: Any, truth: str) -> bool:
    """The backend an answer says ``Dispatch`` routes to is ``truth`` (minidl's route, the
    first hop: ``Autodiff[Flex]`` for a bool op on the autodiff device). That is the first
    backend the answer names without negating it ("Autodiff[Flex], then Flex", "not Flex
    but Autodiff[Flex]"), unless a name follows "via"/"through": "Flex via Autodiff[Flex]"
    says the op reaches Flex by way of Autodiff[Flex], so Autodiff[Flex] is where it is
    routed ("passes through to Flex" names the next hop, not a "via"). The truth is never
    negated ("not Autodiff[Flex]"), nor hedged with another ("Autodiff[Flex] or Flex"). A
    name is negated when a negation stands between it and the name before it."""
    if not isinstance(prediction, str):
        return False
    text, named, start = prediction.lower(), [], 0
    for found in BACKEND_NAME.finditer(text):
        name = found.group()
        if name.startswith("autodiff"):
            name = f"autodiff[{found.group(1) or 'flex'}]"
        gap = text[start:found.start()]
        named.append((name, bool(NEGATION.search(gap)), bool(VIA.search(gap))))
        start = found.end()
    kept = [name for name, negated, _ in named if not negated]
    if HEDGE.search(text) and len(set(kept)) > 1:
        return False  # a hedge ("Autodiff[Flex] or Flex") names two answers
    routed = [name for name, negated, via in named if via and not negated] or kept
    truth = truth.lower()
    negated_truth = any(name == truth and negated for name, negated, _ in named)
    return bool(routed) and routed[0] == truth and not negated_truth
