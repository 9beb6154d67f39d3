"""A build exercise whose hints follow the failure's cause, not only its kind.

:class:`~minidl_book.build_check.BuildExercise` ties a hint to a verdict kind (``value``,
``check``, ``rule``...). Some build-its fail in several ways of one kind: a walk's paths with a
leading dot and a walk that names a dict's entries by position are both ``check`` failures,
and the hint that helps one does not help the other. :class:`CauseHints` gives each cause its
own ladder: ``causes`` is a list of ``(name, test(verdict) -> bool, [hints])``; the first cause
whose test holds picks the ladder (each cause keeps its own opened hints), and a failure no
test recognises uses the exercise's ``hints``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from minidl_book.build_check import BuildExercise, Verdict, _hint_ladder

__trace_hide__ = True

__all__ = ["CauseHints"]


class CauseHints(BuildExercise):
    """A :class:`BuildExercise` with ``causes=[(name, test(verdict), [hints])]``."""

    def __init__(self, *args: Any,
                 causes: Sequence[tuple[str, Callable[[Verdict], bool], Sequence[str]]] = (),
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._causes = [(name, test, _hint_ladder(list(hints))) for name, test, hints in causes]
        self._default = self.hint_ladder
        self._opened = {"": self.hints_opened}
        self.cause: str | None = None

    def find_failure(self, solution: Any) -> Verdict | None:  # noqa: D102
        verdict = super().find_failure(solution)
        self.cause = None
        if verdict is None:
            return None
        ladder = self._default
        for name, test, hints in self._causes:
            try:
                hit = test(verdict)
            except Exception:  # noqa: BLE001 - a test that cannot read the verdict: no cause
                hit = False
            if hit:
                self.cause, ladder = name, hints
                break
        self.hint_ladder = ladder
        self.hints_opened = self._opened.setdefault(self.cause or "", [])
        return verdict
