"""Reading the capture chapter's typed answers. ``dtype_pair`` reads the dtype exercise's
answer: what an unchecked float64 replay makes of the loss and of the weight (minidl's
``Graph.replay`` refuses a new dtype with ``ReplayMismatchError``; burn's ``Graph::replay``
takes no arguments to check: it reuses the buffers the capture touched, graph.rs 13-24)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["dtype_pair"]

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
