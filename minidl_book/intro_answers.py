"""How the intro's word exercises read an answer: a bare name, or a sentence around it.

- :func:`skipped_box` (Ex1, "does a forward on ``Device.flex()`` cross all seven boxes?"):
  right when the answer names exactly the skipped box as skipped, bare ("minidl.autodiff"),
  after a "no" ("No, it skips minidl.autodiff") or in a sentence ("it doesn't cross
  minidl.autodiff"); "none", "yes", another box, or the box denied ("it still crosses
  minidl.autodiff") are wrong; "it crosses all boxes except minidl.autodiff" names it as
  skipped (what follows "except", "other than", "apart from" is skipped); the skipped
  box with the default body added is wrong too
  ("minidl.autodiff, and the default body too": on ``Device.flex()`` it still runs).
  "skip: minidl.autodiff" is a skip; "goes straight to Flex" crosses Flex; a route
  ("Dispatch -> Flex directly") skips the map's boxes between its ends that it leaves out.
  "skips nothing but minidl.autodiff" skips that box alone, not "none".
- :func:`hedged`, :func:`box_hedged`: an answer giving two ("minidl.autodiff (but I'm unsure, maybe
  none)") is refused, not read as its first.
- :class:`NameExercise`: an :class:`~minidl_book.exercises.Exercise` that, given a sentence
  it cannot read one name out of, asks for just the name instead of judging it; given two
  answers (``hedged``), refuses them and asks for one; given no
  string (``["minidl.autodiff"]``, ``7``), asks for a string; a ``Device`` object is read
  as its text (``Device.flex()`` as ``"Device.flex()"``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from minidl import Device
from minidl_book.exercises import Exercise, _shown
from minidl_book.verdict import WRONG

#: Ex1: the words that name each box of the map; the default body is the protocol's, the
#: recording backend is Autodiff.
BOX_WORDS = {"nn": "nn", "module": "module", "tensor": "tensor", "dispatch": "dispatch",
             "autodiff": "autodiff", "recording": "autodiff", "recorder": "autodiff",
             "flex": "flex", "backends": "flex",
             "backend": "backend", "protocol": "backend", "body": "backend"}
#: Words that deny what their clause names ("not minidl.autodiff", "it still crosses …").
DENIALS = {"none", "not", "no", "nothing", "doesn", "isn", "never", "neither", "nor",
           "cross", "crosses", "crossed", "included", "includes", "including", "keeps",
           "still"}
SKIPS = {"skip", "skips", "skipped", "skipping", "bypass", "bypasses", "bypassed",
         "bypassing", "missing", "absent", "gone", "omitted", "omits", "omitting", "left",
         "leaves", "leaving"}
#: A clause ends at punctuation (a dash too) or at so, since, because, but, as, …
CLAUSE = (r"[,;:()!?—–]|\s-\s|\.(?=\s|$)"
          r"|\b(?:so|since|because|but|as|while|whereas|then)\b")
#: "is not crossed", "doesn't reach", "never goes through", "isn't in the chain": the box is
#: skipped.
NOT_CROSSED = re.compile(
    r"\b(?:not|never|no longer)\s+(?:(?:be|been|get|gets|even|ever|actually|still)\s+)?"
    r"(?:cross|reach|visit|enter|touch|involve|hit|call|use|need|run)\w*"
    r"|\b(?:not|never|no longer)\s+(?:\w+\s+)?(?:go|goes|went|gone|pass|passes|passed)"
    r"\s+(?:through|into|via)\b"
    r"|\b(?:not|never|no longer)\s+(?:in|on|part\s+of|among)\s+(?:the\s+)?"
    r"(?:chain|path|route|call|stack|way)\b")
#: "all boxes except minidl.autodiff", "all of them other than …": what follows is skipped.
EXCEPT = re.compile(r"\b(?:except(?:\s+for)?|other\s+than|apart\s+from|save\s+for|besides)\b")
#: "skip: minidl.autodiff": the verb and its object, one clause.
SKIP_COLON = re.compile(r"\b(skip\w*|bypass\w*)\s*:\s*")
#: "goes straight to Flex", "then calls Flex": what follows is crossed, a clause of its own.
CROSS_TO = re.compile(r"\b(?:goes|go|going|went|passes|jumps?|calls?|reaches)\s+"
                      r"(?:straight\s+|directly\s+|right\s+)?(?:on\s+)?(?:to\b)?")
#: A route drawn in the answer ("Dispatch -> Flex directly").
ROUTE = re.compile(r"->|→|\b(?:directly|straight)\b")
#: The map's boxes a forward crosses, in call order.
ORDER = ("nn", "tensor", "dispatch", "autodiff", "flex")
#: A first clause of only these words answers "none" ("none", "it skips nothing").
NONE_WORDS = {"none", "nothing", "it", "the", "skip", "skips", "skipped"}
#: Words a clause of bare names may hold besides the names ("minidl.autodiff and minidl.nn").
LIST_WORDS = {"minidl", "the", "and", "or", "also", "too", "plus", "device", "default",
              "s"}
#: "and nothing else", "only", "just": they restrict, they deny nothing.
ONLY = re.compile(r"\b(?:and\s+|but\s+)?nothing\s+else\b|\b(?:only|just|alone)\b")
#: "skips nothing but minidl.autodiff", "none except …": only what follows, no "none".
NOTHING_BUT = re.compile(r"\b(?:nothing|none)\s+(?:but|except|other\s+than|save)\b")


def _normalized(prediction: str, crossing: bool = True) -> str:
    """Casefolded, "n't" spelled "not", negated crossing verbs read as "skipped" (when
    ``crossing``), the restricting words dropped, "[Flex]"/"[B]" dropped."""
    text = prediction.casefold().replace("’", "'")
    text = re.sub(r"\b(does|do|did|is|are|was|were|has|have)n'?t\b", r"\1 not", text)
    text = re.sub(r"\bcan'?t\b|\bcannot\b", "can not", text)
    text = re.sub(r"\bwon'?t\b", "will not", text)
    text = NOTHING_BUT.sub(" ", text)
    if crossing:
        text = NOT_CROSSED.sub(" skipped ", text)
        text = EXCEPT.sub(", skipping ", text)
    text = ONLY.sub(" ", text)
    text = SKIP_COLON.sub(r"\1 ", text)
    if crossing and SKIPS & set(re.findall(r"[a-z]+", text)):  # "skips …, goes to Flex"
        text = CROSS_TO.sub(", crosses ", text)
    return re.sub(r"\[(flex|b)\]", "", text)


def named(prediction: str, words_of: dict[str, str], denials: set[str] = DENIALS,
          crossing: bool = True) -> tuple[set, set, bool]:
    """(affirmed, denied, answered none): the boxes (or devices) an answer names, read
    clause by clause; when a clause says "skip", only such clauses affirm. ``crossing``:
    "not crossed", "doesn't reach" read as "skipped" (the boxes, not the devices)."""
    text = _normalized(prediction, crossing)
    clauses = [re.findall(r"[a-z]+", c) for c in re.split(CLAUSE, text)]
    clauses = [c for c in clauses if c]
    bare_none = bool(clauses) and set(clauses[0]) <= NONE_WORDS and bool(
        {"none", "nothing"} & set(clauses[0]))
    affirmed: list[tuple[bool, set]] = []
    denied: set = set()
    bare_clauses: list[bool] = []  # per affirmed clause: nothing in it but names
    for words in clauses:
        # "the autodiff backend" is one box: a "backend" right after a named word
        found = {words_of[w] for k, w in enumerate(words) if w in words_of
                 and not (w == "backend" and k and words[k - 1] in words_of)}
        if denials & set(words):
            denied |= found
        else:
            affirmed.append((bool(SKIPS & set(words)), found))
            bare_clauses.append(set(words) <= set(words_of) | LIST_WORDS)
    say_skip = any(skip for skip, _ in affirmed)
    boxes = [found for skip, found in affirmed if found and (skip or not say_skip)]
    if not say_skip:  # a bare answer: the first clause that names a box, and any clause
        # that is only more names ("autodiff, backend" lists two; "autodiff, since it
        # records nothing" explains one)
        listed = [found for (_, found), words in zip(affirmed, bare_clauses)
                  if found and words]
        boxes = boxes[:1] + listed[1:]
    return set().union(*boxes) - denied, denied, bare_none


#: Ex1 asks "does the call still cross all seven boxes?": a leading yes or no answers it.
YES_NO = re.compile(r"^\s*(yes|yep|yeah|no|nope)\b[\s,.;:!\-–—]*", re.IGNORECASE)


def yes_no(prediction: str) -> tuple[str | None, str]:
    """("yes" or "no", the rest) when the answer starts with a yes or a no ("No, it skips
    minidl.autodiff", "no - autodiff is skipped"), else (None, the answer)."""
    match = YES_NO.match(prediction)
    if not match:
        return None, prediction
    word = match.group(1).casefold()
    return ("yes" if word.startswith("y") else "no"), prediction[match.end():]


#: Words that offer a second answer: "A or B", "A, maybe B", "A / B".
HEDGE = re.compile(r"\b(?:or|maybe|perhaps|possibly|unsure|not\s+sure)\b|\s/\s|\?")


def hedged(prediction: Any, read: Any) -> bool:
    """True when the answer, cut at its hedging words, gives two different readings."""
    if not isinstance(prediction, str):
        return False
    said = {read(part) for part in HEDGE.split(prediction.casefold())}
    return len(said - {None}) > 1


def route_skips(prediction: str) -> set | None:
    """A route with no skip word ("Dispatch -> Flex directly"), its boxes in call order:
    the boxes of :data:`ORDER` between its first and last that it leaves out; ``None``
    when it is no such route."""
    text = prediction.casefold()
    if not ROUTE.search(text) or SKIPS & set(re.findall(r"[a-z]+", text)):
        return None
    words = [BOX_WORDS[w] for w in re.findall(r"[a-z]+", re.sub(r"\[(flex|b)\]", "", text))
             if w in BOX_WORDS]
    at = [ORDER.index(w) for w in words if w in ORDER]
    # a route names only ORDER's boxes, in call order ("autodiff — Dispatch calls Flex
    # directly" and "backend — …" are not routes)
    if len(at) < 2 or len(at) < len(words) or at != sorted(set(at)):
        return None
    return set(ORDER[at[0] + 1:at[-1]]) - {ORDER[k] for k in at}


def skipped_read(prediction: str) -> frozenset | str | None:
    """What an answer says is skipped: "none", the boxes (as a frozenset), or ``None``."""
    said, rest = yes_no(prediction)
    if said == "yes":
        return "none"
    route = route_skips(rest)
    if route is not None:
        return frozenset(route) or "none"
    boxes, _, bare_none = named(rest, BOX_WORDS)
    return "none" if bare_none else (frozenset(boxes) or None)


def box_hedged(prediction: Any) -> bool:
    """Two answers in one ("minidl.autodiff (but I'm unsure, maybe none)")."""
    return hedged(prediction, skipped_read)


def skipped_box(prediction: Any, truth: str) -> bool:
    """Right when the answer names exactly the skipped box as skipped (explained or
    not), and does not start by answering "none" or "yes" (it crosses all seven)."""
    if not isinstance(prediction, str):
        return False
    return (skipped_read(prediction) == {truth.rsplit(".", 1)[-1]}
            and not box_hedged(prediction))


#: "it crosses all seven", "every box", "all of them": the answer "none skipped", in words.
ALL_CROSSED = re.compile(r"\ball\s+(?:seven|7|the\s+boxes|boxes|of\s+them)\b|\bevery\s+box",
                         re.IGNORECASE)


def box_unclear(prediction: Any) -> bool:
    """A bare "no", or a sentence (three words or more) out of which no single box can be
    read, and that does not start with "none" or "yes" or say "all seven": the checker asks
    for just the name."""
    if not isinstance(prediction, str):
        return False
    said, rest = yes_no(prediction)
    if said == "yes" or ALL_CROSSED.search(prediction) or box_hedged(prediction):
        return False  # "it crosses all seven" answers the question: wrong, not unclear
    if said == "no" and not re.search(r"[a-z]", rest.casefold()):
        return True  # right so far: which box?
    if len(re.findall(r"[a-z]+", prediction.casefold())) < 3:
        return False
    read = skipped_read(prediction)
    return read != "none" and (read is None or len(read) != 1)


class NameExercise(Exercise):
    """An :class:`Exercise` whose answer is a name: a sentence out of which ``unclear``
    says no single name can be read gets ✗ and a request for just the name (``ask``),
    not the hint, and runs no experiment."""

    def __init__(self, question: str, truth: Callable[[], Any], *,
                 unclear: Callable[[Any], bool], ask: str,
                 hedged: Callable[[Any], bool] | None = None, **kwargs: Any) -> None:
        super().__init__(question, truth, **kwargs)
        self.unclear = unclear
        self.ask = ask
        self.hedged = hedged

    def _judge(self, prediction: Any, truth: Any) -> tuple[bool, str]:
        # a Device object names a device as its text does: Device.flex() is "Device.flex()"
        if isinstance(prediction, Device):
            prediction = str(prediction)
        return super()._judge(prediction, truth)

    def check(self, prediction: Any = ...) -> bool:
        if prediction is not Ellipsis and not isinstance(prediction, str | Device):
            print(f"{WRONG} Not read: {_shown(prediction)} is not a string. Write the "
                  f"answer as a string.\n  {self.ask}")
            return False
        if prediction is not Ellipsis and self.hedged and self.hedged(prediction):
            print(f"{WRONG} Two answers in {_shown(prediction)}: the checker judges one. "
                  f"Pick the one you predict.\n  {self.ask}")
            return False
        if prediction is not Ellipsis and self.unclear(prediction):
            print(f"{WRONG} Not read: the checker finds no single name in "
                  f"{_shown(prediction)}.\n  {self.ask}")
            return False
        return super().check(prediction)
