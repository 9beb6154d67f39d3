"""An exercise whose answer of nested tuples may also be typed as one string.

The plain :class:`~minidl_book.exercises.Exercise` reads a flat tuple written as a string
(``"(2, 3, 4)"``) but not a nested one (``"((1, 4), (0, 1))"``), so the tensors chapter's
strides exercise refused the string form its kept-dims exercise accepts. Mirrors no burn
piece: it is the book's checker, reading the reader's answer. :class:`ParsedAnswerExercise`
reads a string that is a Python literal of numbers (``ast.literal_eval``: no code runs) as
that literal before the comparison and before the foreseen-mistake hint is chosen.
"""

from __future__ import annotations

import ast
from typing import Any

from minidl_book.shape_hint import MistakeHintExercise

__all__ = ["ParsedAnswerExercise", "parsed"]


def parsed(prediction: Any) -> Any:
    """``"((1, 4), (0, 1))"``, ``"[[1, 4], [0, 1]]"`` or ``"(1, 4), (0, 1)"`` → that literal;
    anything else (a word, a non-literal, an answer that is no string) unchanged."""
    if not isinstance(prediction, str) or not any(c.isdigit() for c in prediction):
        return prediction
    try:
        return ast.literal_eval(prediction.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return prediction


class ParsedAnswerExercise(MistakeHintExercise):
    """``MistakeHintExercise`` that reads a string answer as the literal it writes."""

    def _judge(self, prediction: Any, truth: Any) -> tuple[bool, str]:
        return super()._judge(parsed(prediction), truth)

    def check(self, prediction: Any = ...) -> bool:
        return super().check(parsed(prediction))
