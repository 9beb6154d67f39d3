"""Reading the capture chapter's typed answers. ``said`` / ``same_word`` read a word
answer (frozen, follows, refused, checked) by its verdict word. ``dtype_pair`` reads the
dtype exercise's answer: what an unchecked float64 replay makes of the loss and of the weight (minidl's
``Graph.replay`` refuses a new dtype with ``ReplayMismatchError``; burn's ``Graph::replay``
takes no arguments to check: it reuses the buffers the capture touched, graph.rs 13-24)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["dtype_pair", "rate_said", "said", "same_word"]

DTYPES = {"float64": "float64", "f64": "float64", "f8": "float64", "double": "float64",
          "fp64": "float64", "float32": "float32", "f32": "float32", "f4": "float32",
          "single": "float32", "fp32": "float32"}
NOUNS = {"loss": "loss", "losses": "loss", "weight": "weight", "weights": "weight",
         "w": "weight", "param": "weight", "parameter": "weight", "parameters": "weight"}


def _pairs(words: list[str], noun_first: bool) -> dict[str, str]:
    """Each dtype joined to the noun next to it, on the side the answer writes nouns."""
    named, noun, dtype = {}, None, None
    for word in words:
        if word in NOUNS:
            if not noun_first and dtype and NOUNS[word] not in named:
                named[NOUNS[word]], dtype = dtype, None
            else:
                noun = NOUNS[word]
        elif word in DTYPES:
            if noun_first and noun and noun not in named:
                named[noun], noun = DTYPES[word], None
            else:
                dtype = DTYPES[word]
    return named


def dtype_pair(prediction: Any) -> tuple[str, ...] | None:
    """``(loss dtype, weight dtype)`` from ``("float64", "float32")``, ``"f64 and f32"``,
    ``"loss float64, weight float32"``, ``"float32 weight, float64 loss"`` or ``"the weight
    stays float32, the loss is float64"``: a dtype belongs to the noun in its clause, else
    to the noun on the side the answer writes first; with no noun, the order is (loss,
    weight). ``None`` if it does not name two dtypes."""
    if isinstance(prediction, dict):
        prediction = f"loss {prediction.get('loss')} weight {prediction.get('weight')}"
    if not isinstance(prediction, str):
        prediction = " ".join(str(p) for p in prediction)
    text = prediction.casefold()
    order = [DTYPES[w] for w in re.findall(r"[a-z0-9]+", text) if w in DTYPES]
    if len(order) != 2:
        return None
    named: dict[str, str] = {}
    for clause in re.split(r"[,;]|\.\s|\b(?:and|but|while)\b", text):
        words = re.findall(r"[a-z0-9]+", clause)
        nouns = {NOUNS[w] for w in words if w in NOUNS}
        dtypes = [DTYPES[w] for w in words if w in DTYPES]
        if len(nouns) == 1 and len(dtypes) == 1 and nouns.isdisjoint(named):
            named[nouns.pop()] = dtypes[0]
        elif nouns:  # a clause that is not one noun and its dtype: read by word order
            named = {}
            break
    if not named:
        words = [w for w in re.findall(r"[a-z0-9]+", text) if w in NOUNS or w in DTYPES]
        named = _pairs(words, noun_first=bool(words) and words[0] in NOUNS)
    if len(named) == 1:  # one noun named: the other dtype is the other noun's
        (noun, dtype), = named.items()
        rest = list(order)
        rest.remove(dtype)
        named["weight" if noun == "loss" else "loss"] = rest[0]
    return (named["loss"], named["weight"]) if named else tuple(order)


STEMS = {"refuse": "refused", "refuses": "refused", "refused": "refused",
         "captureerror": "refused", "raise": "refused", "raises": "refused",
         "error": "refused", "errors": "refused", "errored": "refused",
         "throws": "refused", "exception": "refused", "fails": "refused",
         "fail": "refused", "failed": "refused",
         "freeze": "frozen", "freezes": "frozen", "frozen": "frozen",
         "keep": "frozen", "keeps": "frozen", "stay": "frozen", "stays": "frozen",
         "follow": "follows", "follows": "follows", "followed": "follows",
         "check": "checked", "checks": "checked", "checked": "checked"}
NEGATIONS = ("not", "never", "isn't", "aren't", "doesn't", "won't", "don't", "wouldn't",
             "can't", "cannot", "couldn't", "neither", "nor")
#: a motion negated ('the weights don't move', 'the rate doesn't change') says frozen
MOTION = ("move", "moves", "moved", "change", "changes", "changed", "update", "updates",
          "updated", "budge")


def said(prediction: Any) -> str:
    """A word answer by its verdict word: 'the weights are frozen' → 'frozen'; a verdict
    word negated just before ('not refused'; 'nothing raises'; 'refused rather than
    frozen'; 'can't be frozen or checked': the negation runs on over 'or') is skipped; a
    negated motion ('they don't move') is 'frozen'; 'no longer' negates too; one ≤ 3 words after 'would'/'could'
    is what would happen and decides only alone ('refused: the rate would be frozen');
    after 'but', the clause after it decides; no verdict word, or two different ones,
    matches nothing (the answer comes back as its text)."""
    text = str(prediction).casefold().replace("\u2019", "'")
    words = re.findall(r"[a-z']+", text)
    verdicts: set[str] = set()
    before: set[str] = set()
    unreal: set[str] = set()
    pending, carried = 0, False  # a negation reaches 2 words on; over 'or' after a verdict
    for i, word in enumerate(words):
        previous = words[i - 1] if i else ""
        negated_verdict, carried = carried, False
        if word == "but":
            before, verdicts, pending = before | verdicts, set(), 0
        elif word in ("or", "nor") and negated_verdict:
            pending = 3
        elif word in NEGATIONS or word in ("no", "nothing") or (previous, word) in (
                ("rather", "than"), ("instead", "of"), ("no", "longer")):
            pending = 1 if word in ("no", "nothing") else 3
        elif word in MOTION and pending:
            verdicts.add("frozen")
            pending = 0
        elif word in STEMS:
            training = word[:4] in ("keep", "stay") and words[i + 1:i + 2] and \
                words[i + 1].endswith("ing")  # "they keep training" is not frozen
            if pending:
                carried = True
            elif not training:
                hedged = {"would", "could"} & set(words[max(0, i - 3):i])
                (unreal if hedged else verdicts).add(STEMS[word])
            pending = 0
        else:
            pending = max(0, pending - 1)
    verdicts = verdicts or before or unreal
    return verdicts.pop() if len(verdicts) == 1 else text


def same_word(prediction: Any, truth: str) -> bool:
    """Whether ``prediction``'s one verdict word (see ``said``) is ``truth``."""
    return said(prediction) == truth


#: the schedule exercise's verdicts as the rate each one leaves (the question defines
#: "frozen" as still 0.1 and "follows" as the schedule's 0.025)
SCHEDULE_RATES = {"frozen": 0.1, "follows": 0.025}


def rate_said(prediction: Any, truth: str) -> bool:
    """``same_word``, or the rate the verdict stands for said as its one number: 0.1,
    '0.1', 'still 0.1' → 'frozen'; '0.025' → 'follows'. Two numbers ('0.1 or 0.025'),
    another number, or a verdict word that disagrees match nothing."""
    if same_word(prediction, truth):
        return True
    if said(prediction) in STEMS.values() or truth not in SCHEDULE_RATES:
        return False  # a verdict word that is not the truth decides
    numbers = re.findall(r"\d*\.?\d+(?:e-?\d+)?", str(prediction).casefold())
    return len(numbers) == 1 and abs(float(numbers[0]) - SCHEDULE_RATES[truth]) < 1e-9
