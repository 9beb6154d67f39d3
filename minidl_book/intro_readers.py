"""How the intro's design exercises read an answer written in words.

- :func:`outcome_read` ("does the weight get a gradient?"): ``"grad"``, ``"no grad"`` or
  ``"error"`` out of a sentence, clause by clause: a clause that names an error and does
  not deny it ("it raises", "RuntimeError: …") says ``"error"``; one that names the
  gradient says ``"grad"``, or ``"no grad"`` when it denies it ("the weight's grad is
  None", "nothing records"); a leading yes or no counts as the gradient said or denied.
  "No error: the weight gets its gradient" is ``"grad"``; both an error and a gradient
  affirmed is unread (``None``). ``True``/``False`` read as grad/no grad. A clause about
  ``x`` alone is not about the weight ("x gets no grad but the weight does" is ``"grad"``,
  as is "x: no grad; weight: grad"); "no error", "it works" say it runs: ``"grad"``.
  A gradient said to be zero or all ones reads ``"wrong grad"`` (the weight's is ``xᵀ·g``),
  one for the bias only ``"no grad"`` (the question is the weight's), one for ``x``
  ("grad for x") ``"x grad"`` (x is lifted as a constant): all are wrong.
- :func:`outcome_hedged`: two outcomes in one answer ("It raises? no, no grad") is
  refused, not read as its last.
- :func:`chain_read` (the backends ``Device.fusion().autodiff()`` chains): the backend names
  (a chain the answer denies, "not Fusion[Autodiff[Flex]] but …", "…, not …", left out)
  outermost first, ``("autodiff", "fusion", "flex")`` from ``"Autodiff[Fusion[Flex]]"``,
  ``"Autodiff<Fusion<Flex>>"``, ``"autodiff -> fusion -> flex"``, "Autodiff wrapping
  Fusion wrapping Flex"; "inside", "within", "wrapped by" put the next name outside
  ("Flex inside Fusion inside Autodiff"); ``Dispatch`` and the device are left out.
- :func:`chain_hedged`: an answer naming two chains ("Autodiff[Fusion[Flex]] or
  Fusion[Autodiff[Flex]]") is refused, not read as its first.
- :func:`same_outcome`, :func:`same_chain` compare; :func:`outcome_unclear`,
  :func:`chain_unclear` say when the checker should ask again rather than judge.
"""

from __future__ import annotations

import re
from typing import Any

from minidl_book.intro_answers import hedged, yes_no

ERROR = re.compile(r"\b(?:errors?|raises?|raised|raising|exceptions?|\w+error|panics?"
                   r"|crash(?:es)?|throws?|refuses?|refused)\b")
GRAD = re.compile(r"\b(?:grad|grads|gradients?|records?|recorded|tracked|learns?)\b")
DENY = re.compile(r"\b(?:no|not|none|nothing|never|without|nor|cannot)\b|n't\b")
NO_PHRASE = re.compile(r"^\s*no\s+(?:grads?|gradients?|errors?|exceptions?)\b", re.I)
CLAUSE = re.compile(r"[,;:()!?—–]|\s-\s|\.(?=\s|$)|\b(?:but|since|because|so|as|while)\b")
#: "x: no grad", "weight: grad": a subject and its colon, one clause.
LABELLED = re.compile(r"\b(x|weight|w|bias|params?)\s*:\s*")
#: A clause about the input, not the weight: "x gets no grad", "x is lifted", "grad for x".
ABOUT_X = re.compile(r"^\W*(?:the\s+)?(?:plain\s+)?(?:input\s+)?x\b"
                     r"|\b(?:for|of|to|on)\s+(?:the\s+)?(?:plain\s+)?(?:input\s+)?x\b"
                     r"|\bx's\b")
#: A gradient named in a clause about x: "grad for x" gives x one (x is a constant).
X_GRAD = re.compile(r"\b(?:grad|grads|gradients?)\b")
WEIGHT = re.compile(r"\b(?:weight|weights|params?|parameters?|w)\b")
#: "the weight's gradient is zero", "… all ones": a gradient, not the one backward gives
#: (``xᵀ·1``; "xᵀ times ones" names it right).
ZERO = re.compile(r"\b(?:zero|zeros|zeroes|0)\b|\b(?:ones|1s)\b|\ball\s+(?:one|1)\b")
X_T = re.compile(r"\bx\s*(?:ᵀ|\^t\b|\.t\b|transposed?\b)")
#: "grad for the bias only", "only the bias": the weight left out.
BIAS_ONLY = re.compile(r"\bbias\b.*\b(?:only|alone)\b|\b(?:only|just)\s+(?:the\s+)?bias\b")
#: "it works", "runs fine": it runs, and the weight records (the question's default).
WORKS = re.compile(r"\b(?:works?|worked|succeeds?|fine)\b")


def outcome_read(prediction: Any) -> str | None:
    """``"grad"``, ``"no grad"``, ``"error"``, or ``None`` when the answer says neither or
    both an error and a gradient."""
    if isinstance(prediction, bool):
        return "grad" if prediction else "no grad"
    if not isinstance(prediction, str):
        return None
    prediction = prediction.replace("’", "'")
    # "no grad", "no error": a phrase, not a leading no
    said, rest = (None, prediction) if NO_PHRASE.match(prediction) else yes_no(prediction)
    text = LABELLED.sub(r"\1 ", rest.casefold().replace("no_grad", "nograd"))
    error = grad = no_grad = runs = zero = x_grad = False
    for clause in CLAUSE.split(text):
        if ABOUT_X.search(clause) and not WEIGHT.search(clause):
            # x's gradient is not the question, but one said to exist is wrong
            x_grad |= bool(X_GRAD.search(clause) and not DENY.search(clause))
            continue
        if BIAS_ONLY.search(clause) and not WEIGHT.search(clause):
            no_grad = True  # the bias alone: the weight gets none
            continue
        zero |= bool(GRAD.search(clause) and ZERO.search(clause)
                     and not X_T.search(clause))
        denied = bool(DENY.search(clause))
        if ERROR.search(clause):
            error |= not denied
            runs |= denied
        if WORKS.search(clause):
            error |= denied
            runs |= not denied
        if GRAD.search(clause) or WEIGHT.search(clause):
            no_grad |= denied
            grad |= not denied
    if said == "yes" and not (error or no_grad):
        grad = True
    if said == "no" and not (error or grad):
        no_grad = True
    if error:
        return None if grad else "error"
    if x_grad and not no_grad:
        return "x grad"
    if zero and grad and not no_grad:
        return "wrong grad"
    if grad != no_grad:
        return "grad" if grad else "no grad"
    return "grad" if runs and not (grad or no_grad) else None


def same_outcome(prediction: Any, truth: str) -> bool:
    """Right when :func:`outcome_read` reads the truth's outcome."""
    return outcome_read(prediction) == truth


def outcome_hedged(prediction: Any) -> bool:
    """Two outcomes in one answer ("It raises? no, no grad"): refused, not judged."""
    return hedged(prediction, outcome_read)


def outcome_unclear(prediction: Any) -> bool:
    """A string out of which no single outcome can be read: the checker asks again."""
    return isinstance(prediction, str) and outcome_read(prediction) is None


BACKENDS = {"autodiff": "autodiff", "fusion": "fusion", "fused": "fusion", "flex": "flex"}
#: "not Fusion[Autodiff[Flex]] but …", "…, not Fusion[…]": a chain denied, left out.
DENIED_CHAIN = re.compile(r"\b(?:not|rather\s+than|instead\s+of)\s+[^,;]*?(?:\bbut\b|[,;]|$)")
#: "Flex inside Fusion": the name after the word wraps the one before it.
OUTER_NEXT = re.compile(r"\b(?:inside|within|in|under|wrapped\s+by|wrapped\s+in)\b")


def chain_read(prediction: Any) -> tuple[str, ...] | None:
    """The backends an answer names, outermost first (each once), or ``None``."""
    if isinstance(prediction, list | tuple):
        prediction = " -> ".join(map(str, prediction))
    if not isinstance(prediction, str):
        return None
    text = DENIED_CHAIN.sub(" ", prediction.casefold())
    found = [(m.start(), m.end(), BACKENDS[m.group(0)])
             for m in re.finditer(r"autodiff|fusion|fused|flex", text)]
    chain: list[str] = []
    for k, (_, _, name) in enumerate(found):
        if name in chain:
            continue
        between = text[found[k - 1][1]:found[k][0]] if k else ""
        if k and OUTER_NEXT.search(between):
            chain.insert(0, name)
        else:
            chain.append(name)
    return tuple(chain) or None


def same_chain(prediction: Any, truth: str) -> bool:
    """Right when the answer names the truth's backends in its order, outermost first,
    and no other chain beside it."""
    return chain_read(prediction) == chain_read(truth) and not chain_hedged(prediction)


def chain_hedged(prediction: Any) -> bool:
    """An answer naming two chains ("Autodiff[Fusion[Flex]] or Fusion[Autodiff[Flex]]")."""
    return hedged(prediction, chain_read)


def chain_unclear(prediction: Any) -> bool:
    """A sentence (three words or more) that names no backend, or a chain that stops
    before Flex ("Autodiff wrapping Fusion"): the checker asks again."""
    if not isinstance(prediction, str) or chain_hedged(prediction):
        return False
    chain = chain_read(prediction)
    if chain is None:
        return len(re.findall(r"[a-z]+", prediction.casefold())) >= 3
    return "flex" not in chain
