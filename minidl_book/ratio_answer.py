"""The checker of the training chapter's uncorrected-step exercise: one number, ≈ √10.

Mirrors no burn piece: it reads the reader's answer to "Adam without bias correction: step 1
is how many times lr?" (burn's ``AdaptiveMomentum`` without its correction factor). A number
passes within 10 % of the derived 0.1 / √0.001 = 3.16 or of the measured value, written as a
number, as arithmetic (``"sqrt(10)"``, ``"√10"``, ``"0.1/sqrt(0.001)"``) or inside words
(``"about 3.2"``, ``"√10 ≈ 3.16"``: every number said must pass). A range (``"3 to 4"``,
``"between 3 and 4"``, ``"3-4"``, ``"3 or 4"``) or a hedge (``"maybe 3"``, ``"3?"``) is refused:
the question asks for one value.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np

__all__ = ["arithmetic", "bias_ratio_answer"]

DERIVED = 0.1 / 0.001**0.5
_RANGE = re.compile(r"\d\s*(?:-|–|—|\.\.|to|or)\s*(?:sqrt)?\s*\(?\s*\d|\bbetween\b|\bor\b")
_HEDGE = re.compile(r"\?|\b(?:maybe|perhaps|probably|possibly|might|guess|unsure|either)\b"
                    r"|\bnot sure\b|\bat (?:least|most)\b|\bless than\b|\bmore than\b")
_NUMBER = re.compile(r"(sqrt\s*\(?\s*)?(\d+(?:\.\d+)?(?:e-?\d+)?)")


def arithmetic(node: ast.AST) -> float:
    """The value of a typed arithmetic expression: numbers, + - * / **, sqrt(...)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    ops = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__,
           ast.Div: float.__truediv__, ast.Pow: float.__pow__}
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        return ops[type(node.op)](arithmetic(node.left), arithmetic(node.right))
    if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
            and isinstance(node.func, ast.Name | ast.Attribute)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "sqrt"):
        return arithmetic(node.args[0]) ** 0.5
    raise ValueError("not arithmetic")


def _said(text: str) -> list[float] | None:
    """The numbers a sentence states (roots taken), or ``None`` for a range or a hedge."""
    text = text.strip().lower().replace("√", "sqrt").replace("^", "**")
    try:
        return [arithmetic(ast.parse(text, mode="eval").body)]
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        pass
    if _RANGE.search(text) or _HEDGE.search(text):
        return None
    return [float(n) ** (0.5 if root else 1) for root, n in _NUMBER.findall(text)] or None


def bias_ratio_answer(prediction: Any, truth: float) -> bool:
    """The exercise's comparison: one number (or every number a sentence states) within 10 %
    of :data:`DERIVED` or of the measured ``truth``; ranges, hedges and booleans fail."""
    values = _said(prediction) if isinstance(prediction, str) else [prediction]
    if not values or any(isinstance(v, bool | np.bool_)
                         or not isinstance(v, int | float | np.number) for v in values):
        return False
    return all(any(abs(v - x) <= 0.1 * abs(x) for x in (DERIVED, truth)) for v in values)
