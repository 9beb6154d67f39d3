"""An :class:`~minidl_book.exercises.Exercise` whose hint names the slip a wrong answer shows.

``slip_hint(prediction, truth)`` gets the prediction made plain and the live answer, and
returns the hint for that particular slip, or ``None`` for the exercise's ordinary hint. It
is asked afresh at every :meth:`check`, so a hint chosen for one answer never sticks to the
next (a prediction the checker refuses, a dict say, gets the ordinary hint).

``measured(truth)``, when given, words the live answer a right verdict then shows ("✓ Right
... / Measured: the largest |weight| of this draw is 0.08331"): a prediction the checker
accepts within a tolerance is shown the value it was compared with, never a wrong one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minidl_book.exercises import Exercise, NotPlain, plain_answer

__all__ = ["SlipHintExercise"]


class SlipHintExercise(Exercise):
    """``Exercise(..., slip_hint=lambda p, t: "..." or None, measured=lambda t: "...")``."""

    def __init__(self, *args: Any, slip_hint: Callable[[Any, Any], str | None],
                 measured: Callable[[Any], str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slip_hint = slip_hint
        self.measured = measured
        self._pinned: list[Any] = []  # during check: the one run it judges and shows

    def measure(self) -> Any:
        """Run the experiment now (inside :meth:`check`, the one run the check made)."""
        return self._pinned[0] if self._pinned else super().measure()

    def hint_for(self, prediction: Any, truth: Any = Ellipsis) -> str:
        """The hint :meth:`check` prints for ``prediction`` (when it is wrong)."""
        try:
            plain = plain_answer(prediction)
        except NotPlain:
            return self.hint
        try:
            found = self.slip_hint(plain, self.measure() if truth is Ellipsis else truth)
        except Exception:  # noqa: BLE001 - a prediction of an odd shape has no named slip
            found = None
        return found or self.hint

    def check(self, prediction: Any = ...) -> bool:
        if prediction is Ellipsis:
            return super().check(prediction)
        hint, truth = self.hint, super().measure()
        self.hint, self._pinned = self.hint_for(prediction, truth), [truth]
        try:
            ok = super().check(prediction)
        finally:
            self.hint, self._pinned = hint, []
        if ok and self.measured is not None:
            print(f"  Measured: {self.measured(truth)}")
        return ok
