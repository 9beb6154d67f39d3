"""Readers' answers to the modules chapter's predictions, read the way they are written.

The exercises of ``chapters/modules_params_config.md`` ask about burn's module machinery:
which half of a tied pair an optimizer step moves (burn-optim's ``ModuleOptimizerMapper``,
``optim/module/module_optimizer.rs:421``, consumes a gradient by id), which fields of
a ``BatchNorm`` its record keeps (burn-core's ``store::ModuleRecord``), how many of a
model's lazy params hold a value (burn-core's ``Param::val``, ``module/param/base.rs:92``)
and whether a seeded param's numbers depend on who read first. The shared
:class:`~minidl_book.Exercise` comparisons read tuples, numbers and yes/no words; these also
read the answers in words ("first only", "gamma beta running mean running var", "none of
them", "not equal: b.bias drew first") and a count written as a pair ("9/9", "0 of 9"). Each
reads the answer in front of a trailing reason ("0, only val() draws"; see :func:`_head`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from minidl_book.exercises import Exercise

__all__ = ["all_or_count", "equal_or_not", "field_set", "which_moved"]

#: where a reason may start: a comma, colon or semicolon, a parenthesis after some answer,
#: a spaced dash, or "because"/"since"
_MARK = re.compile(r"[,:;]|(?<=\S)\s*\(|\s[-\u2014\u2013]\s|\u2014|\b(?:because|since)\b")
#: words that may open a reason without being its content ("the grad is consumed")
_FILLER = {"the", "a", "an", "and", "but", "so", "only", "just", "then", "it", "as"}


def _head(text: str, answer_words: set[str]) -> str:
    """``text`` up to the first mark whose tail is a reason: several words (three or more;
    any after "because"/"since") whose first content word is none of ``answer_words`` (so
    "first moved, the second too" and "True, False" stay whole). ``text`` when none is."""
    for mark in _MARK.finditer(text):
        head, tail = text[:mark.start()].strip(), text[mark.end():]
        words = re.findall(r"[a-z0-9']+", tail.casefold())
        content = [w for w in words if w not in _FILLER]
        if not head or not content:
            continue
        if mark.group().strip() in ("because", "since") or (
                len(words) >= 3 and content[0] not in answer_words):
            return head
    return text

_BOOL = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
_NAMES = ("first", "second")
#: words that say a half did not move ("second did not", "second stayed the same")
_STILL = re.compile(r"\b(?:not|no|never|unchanged|unmoved|stays?|stayed|same|kept|keeps"
                    r"|false|old|neither|none)\b|n't\b")
#: words that answer "which half moved", so a clause opening with one is no reason
_HALF_WORDS = {*_BOOL, *_NAMES, "1st", "2nd", "both", "neither", "none", "not", "no",
               "moved", "did", "didn't", "stayed", "one", "two", "second's", "first's"}
_MOVED = re.compile(r"\b(?:moved?|moves|changed?|changes|differs?|different|updated?|yes"
                    r"|true|stepped)\b")


def _clauses(text: str) -> list[str]:
    """Clauses, and within one a piece per half it names ("first moved second did not")."""
    text = re.sub(r"\b1st\b", "first", re.sub(r"\b2nd\b", "second", text))
    # "the first, not the second": a "not" right before a name is that name's
    text = re.sub(r"\b(?:but\s+)?not\s+(?:the\s+)?(?=first|second|both)", ", not ", text)
    out = []
    for clause in re.split(r"[,;.]|\bbut\b|\bwhile\b|\bwhereas\b", text):
        pieces = re.split(r"(?=\b(?:first|second)\b)", clause)
        if pieces and not re.search(r"\b(?:first|second)\b", pieces[0]) and len(pieces) > 1:
            pieces = [pieces[0] + pieces[1], *pieces[2:]]  # "only the " + "first"
        out.extend(p for p in pieces if p.strip())
    return out


def _said(text: str) -> tuple[bool, bool] | None:
    """``(first moved, second moved)`` as written in words, or None if it cannot be read."""
    text = text.casefold().replace("_", " ")
    said: dict[str, bool] = {}
    clauses = _clauses(text)
    for clause in clauses:
        names = [n for n in _NAMES if re.search(rf"\b{n}\b", clause)]
        if re.search(r"\b(?:both|neither|none)\b", clause):
            names = list(_NAMES)
        still = bool(_STILL.search(clause))
        if re.search(r"\bneither\b|\bnone\b", clause):
            still = True
        for n in names:
            if said.setdefault(n, not still) != (not still):
                return None  # "first moved, first did not"
    if said:
        return said.get("first", False), said.get("second", False)  # unnamed: not moved
    if len(clauses) == 2:  # "moved, not moved": the tuple's order
        verdicts = [False if _STILL.search(c) else True if _MOVED.search(c) else None
                    for c in clauses]
        if None not in verdicts:
            return verdicts[0], verdicts[1]
    return None


def which_moved(prediction: Any, truth: tuple[bool, bool]) -> bool:
    """Compare ``(first moved, second moved)``: a tuple of booleans or 0/1, two yes/no words
    (``"True False"``, ``"yes, no"``), or words naming the halves (``"first only"``,
    ``"first moved, second did not"``, ``"neither"``). An answer that names neither the
    halves nor two booleans raises ``ValueError``, so the reader hears it was not read,
    not that it was wrong."""
    want = tuple(bool(t) for t in truth)
    if isinstance(prediction, tuple | list):
        if len(prediction) != 2:
            return False
        got = []
        for p in prediction:
            if isinstance(p, str) and p.strip().casefold() in _BOOL:
                got.append(_BOOL[p.strip().casefold()])
            elif type(p) in (bool, int) and p in (0, 1):
                got.append(bool(p))
            else:
                return False
        return tuple(got) == want
    if not isinstance(prediction, str):
        return False  # one boolean answers only half the question
    prediction = _head(prediction, _HALF_WORDS)  # "(True, False): the grad is consumed"
    text = prediction.casefold()
    words = re.findall(r"\b(?:true|false|yes|no|1|0)\b", text)
    if len(words) == 2 and not re.search(r"\b(?:first|second|both|neither)\b", text):
        return tuple(_BOOL[w] for w in words) == want
    said = _said(prediction)
    if said is None:
        raise ValueError("could not read which half moved: write a tuple of two booleans "
                         "(first moved, second moved) or name the halves in words")
    return said == want


def _name_words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.casefold().replace("_", " ")) if w]


def field_set(fields: Iterable[str]) -> Callable[[Any, Any], bool]:
    """A set comparison of field names (the truth: a tuple of names) that reads a string
    with or without commas: ``"gamma beta running mean running var"`` names the fields
    ``running_mean`` and ``running_var`` because ``fields`` (every field a reader may name)
    has them; ``"and"`` is no name."""
    known = {tuple(_name_words(f)): f for f in fields}
    longest = max(len(k) for k in known)

    def names(prediction: Any) -> set[str]:
        parts = [prediction] if isinstance(prediction, str) else list(prediction)
        found: set[str] = set()
        for part in parts:
            words = [w for w in _name_words(str(part)) if w != "and"]
            i = 0
            while i < len(words):
                for n in range(min(longest, len(words) - i), 0, -1):
                    key = tuple(words[i:i + n])
                    if key in known or n == 1:
                        found.add(known.get(key, " ".join(key)))
                        i += n
                        break
        return found

    answer_words = {w for key in known for w in key}

    def compare(prediction: Any, truth: Any) -> bool:
        if isinstance(prediction, str):  # "gamma, beta, running_mean, running_var (not the flag)"
            prediction = _head(prediction, answer_words)
        return names(prediction) == set(truth)

    compare.__name__ = "field_set"
    return compare


#: the usual comparisons of a count and of a yes/no, which the readers below fall back to
_COUNT = Exercise("a count", truth=lambda: 0)
_YES_NO = Exercise("yes or no", truth=lambda: False)
_ALL = ("all", "all of them", "every one", "all params", "every param", "all of the params",
        "all the params", "all tensor params", "all of the tensor params")
_NONE = ("no params", "no param", "no tensor params", "no tensor param", "not one",
         "nothing", "not a single one", "not a single param", "not any")
_WHOLE = ("them", "params", "tensor params", "its params", "its tensor params",
          "model's params", "the model's params")
#: words that answer "how many", so a clause opening with one is no reason ("9, not 0")
_COUNT_WORDS = {"all", "none", "no", "not", "every", "each", "zero", "nine", "or",
                *map(str, range(100))}
#: "none are drawn" → "none"
_DRAWN = re.compile(r"\s+(?:(?:are|is|were|was|get|got|have been|has been)\s+)?"
                    r"(?:drawn|initiali[sz]ed)$")
#: "0 tensor params" → "0": the question's own noun after the count
_NOUN = re.compile(r"(?<=\S)\s+(?:tensor\s+)?params?$")
#: "9/9", "0 / 9": a count and the total it is out of, as in "9 of 9"
_PAIR = re.compile(r"(.*?\S)\s*/\s*(\S.*)")


def all_or_count(n_params: int) -> Callable[[Any, Any], bool]:
    """A comparison of "how many of the model's ``n_params`` tensor params ...?": a count
    (``9``, ``"nine"``, ``"0 tensor params"``), a count out of a total (``"9 of 9"``,
    ``"0/9"``: a pair, not a division, so ``"9/9"`` is nine and ``"0/7"`` names the wrong
    total), ``"all"`` or ``"no params"``, with or without ``"are drawn"`` after it."""

    def compare(prediction: Any, truth: Any) -> bool:
        text = str(prediction).strip().casefold().rstrip(".! ")
        head = _head(text, _COUNT_WORDS)  # "9, valid() calls val()"
        if head != text:
            return compare(head, truth)
        said = _DRAWN.sub("", text)
        if said in _ALL:
            return truth == n_params
        if said in _NONE:
            return truth == 0
        pair = _PAIR.fullmatch(said)
        if pair:
            said = f"{pair[1]} of {pair[2]}"
        part, of, total = said.rpartition(" of ")
        total = total.removeprefix("the ")  # "none of the 9"
        if of and part and total in _WHOLE:  # "none of them", "all of the tensor params"
            return compare(part, truth)
        if of and part and total:  # "9 of 9", "all 9 of 9": the count, then the total
            return (compare(part, truth)
                    and _COUNT.accepts(_NOUN.sub("", total), n_params))
        noun = _NOUN.sub("", said)
        if noun != said:  # "0 tensor params", "all 9 params"
            return compare(noun, truth)
        return _COUNT.accepts(prediction if said == text else said, truth)

    compare.__name__ = "all_or_count"
    return compare


_SAID = {"equal": True, "the same": True, "same": True, "not equal": False,
         "unequal": False, "different": False, "not the same": False, "differs": False,
         "it differs": False, "it is different": False}
#: where an explanation starts: "not equal: b.bias took the first numbers"
_WHY = re.compile(r"\s*(?::|\(|,|;|\s[-\u2014\u2013]\s|\u2014|\bbecause\b|\bsince\b|\bas\b)")


def equal_or_not(prediction: Any, truth: Any) -> bool:
    """True/False, yes/no, or the question's own word ("equal", "not equal", "different"),
    alone or with an explanation after it ("not equal: b.bias took the first numbers")."""
    said = str(prediction).strip().casefold().rstrip(".! ")
    head = _WHY.split(said, maxsplit=1)[0].strip().rstrip(".! ")
    for words in (said, head):
        if words in _SAID:
            return _SAID[words] == truth
    if head in _BOOL and head not in ("1", "0"):  # "False; a param draws at first read"
        return _BOOL[head] == truth
    return _YES_NO.accepts(prediction, truth)
