"""The answer a reader wrote before their reason: ``"conv2d, whose weight is not ready"``
→ ``"conv2d"``.

A prediction checker that reads words refuses a negation ("not conv2d") or a hedge ("2 or
3"). A reason after the answer often holds one ("the first and the third; the second
reuses the plan"), so a checker reads only the answer in front of it. No burn piece is
mirrored: this is the book's reading of a typed answer.
"""

from __future__ import annotations

import re

__all__ = ["answer_before_reason"]

#: Where a reason starts: a semicolon, a parenthesis, a spaced dash, or a word that
#: gives a cause or describes what was named.
REASON = re.compile(r"[;(\u2014\u2013]|\s-\s|\b(?:since|because|whose|as|which)\b")

#: A comma that opens a clause of its own ("first and third, the second is a hit"); a
#: comma before "and", "or", "not" or "but" is part of the answer ("z, not y").
CLAUSE = re.compile(
    r",(?!\s*(?:and|or|not|no|but)\b)(?=[^,]*\b(?:is|are|was|were|has|have|does|do|did"
    r"|reuses?|hits?|stays?|changes?|gets?|needs?|runs?|searches|misses)\b)")


def answer_before_reason(text: str) -> str:
    """``text`` up to its first reason (see :data:`REASON`, :data:`CLAUSE`); ``text``
    itself when nothing stands before the reason."""
    head = CLAUSE.split(REASON.split(text, maxsplit=1)[0], maxsplit=1)[0].strip(" ,.")
    return head or text
