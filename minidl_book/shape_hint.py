"""An :class:`~minidl_book.exercises.Exercise` whose hint fits a prediction of the wrong shape.

A nested-list answer can be wrong in its numbers or in its nesting (``[4, 1, 4]`` for a
``[1, 3]`` tensor's ``[[4, 1, 4]]``). The plain exercise prints one hint for both; this one
prints ``shape_hint`` (with ``{found}`` and ``{expected}`` filled in) when the prediction's
shape is not the answer's, and the ordinary hint otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minidl_book.exercises import Exercise, NotPlain, plain_answer

__all__ = ["ShapeHintExercise"]


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
