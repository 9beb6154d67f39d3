"""A yes/no answer read from a short sentence, for the training chapter's eps exercise.

Mirrors no burn piece: it is the book's checker, reading the reader's answer to "does the
gap stay within 1e-5?". ``True``/``False`` (or 0/1) compare as they are. A sentence counts by
the words that say yes (``true``, ``yes``, ``within``, ``stays``, ``holds``, ``agrees``) or no
(``false``, ``no``, ``exceeds``, ``outside``, ``beyond``, ``fails``); a ``not``/``n't``/
``never`` earlier in the same clause turns the yes-or-no of the words after it. A sentence
whose words say both (``"no, it stays"``) or neither is refused: ``"it grows"`` among them,
since a growing gap may still stay within 1e-5 (the chapter's hint says so).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = ["stays_within", "within_answer"]

_YES = {"true", "yes", "within", "stay", "stays", "stayed", "hold", "holds", "agree",
        "agrees"}
_NO = {"false", "no", "exceed", "exceeds", "exceeded", "outside", "beyond", "fail",
       "fails"}
_NEGATORS = {"not", "never"}
_CLAUSE = re.compile(r"[,.;:!?]|\bbut\b")


def stays_within(sentence: str) -> bool | None:
    """What ``sentence`` says: ``True`` (it stays within), ``False``, or ``None`` when its
    words say both or neither."""
    said = set()
    for clause in _CLAUSE.split(sentence.casefold().replace("n't", " not")):
        negated = False
        for word in re.findall(r"[a-z]+", clause):
            if word in _NEGATORS:
                negated = True
            elif word in _YES or word in _NO:
                said.add((word in _YES) != negated)
    return said.pop() if len(said) == 1 else None


def within_answer(prediction: Any, truth: bool) -> bool:
    """The exercise's comparison: a bool, 0 or 1, or a sentence :func:`stays_within` reads
    without contradiction, equal to ``truth``."""
    if isinstance(prediction, bool | np.bool_):
        return bool(prediction) == truth
    if isinstance(prediction, int | np.integer) and prediction in (0, 1):
        return bool(prediction) == truth
    if isinstance(prediction, str):
        return stays_within(prediction) == truth
    return False
