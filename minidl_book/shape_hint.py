"""An :class:`~minidl_book.exercises.Exercise` whose hint fits a prediction of the wrong shape.

A nested-list answer can be wrong in its numbers or in its nesting (``[4, 1, 4]`` for a
``[1, 3]`` tensor's ``[[4, 1, 4]]``). The plain exercise prints one hint for both; this one
prints ``shape_hint`` (with ``{found}`` and ``{expected}`` filled in) when the prediction's
shape is not the answer's, and the ordinary hint otherwise. :class:`MistakeHintExercise`
prints a hint of its own for one foreseen wrong answer (strides in bytes for strides in
elements) and the ordinary hint for every other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from minidl_book.exercises import Exercise, NotPlain, plain_answer

__all__ = ["MistakeHintExercise", "ShapeHintExercise"]


def _shape(x: Any) -> tuple[int, ...] | None:
    try:
        return np.shape(np.asarray(plain_answer(x), dtype=float))
    except (NotPlain, TypeError, ValueError):
        return None


class ShapeHintExercise(Exercise):
    """``Exercise(..., shape_hint="...")``: the hint for an answer of another shape."""

    def __init__(self, *args: Any, shape_hint: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shape_hint = shape_hint

    def check(self, prediction: Any = ...) -> bool:
        hint = self.hint
        if prediction is not Ellipsis:
            found, expected = _shape(prediction), _shape(self.measure())
            if found is not None and expected is not None and found != expected:
                self.hint = self.shape_hint.format(found=list(found), expected=list(expected))
        try:
            return super().check(prediction)
        finally:
            self.hint = hint


class MistakeHintExercise(Exercise):
    """``Exercise(..., mistakes=lambda truth: {wrong_answer: hint})``: the hint for a foreseen
    wrong answer, computed from the measured truth; other wrong answers get ``hint``."""

    def __init__(self, *args: Any, mistakes: Callable[[Any], Mapping[Any, str]],
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mistakes = mistakes

    def check(self, prediction: Any = ...) -> bool:
        hint = self.hint
        if prediction is not Ellipsis:
            try:
                found = plain_answer(prediction)
                for wrong, special in self.mistakes(self.measure()).items():
                    if found == plain_answer(wrong):
                        self.hint = special
            except (NotPlain, TypeError, ValueError):
                pass
        try:
            return super().check(prediction)
        finally:
            self.hint = hint
