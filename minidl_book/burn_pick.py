"""The fusion chapter's predict-then-see on burn's block score (burn-fusion
``find_best_optimization_index``, ``src/search/block.rs``; burn-cubecl-fusion
``calculate_score``, ``src/engine/scoring.rs``), run by :class:`~minidl.fusion.search.BurnExplorer`
on the stream ``p = t.exp() * t``, ``p.sum_dim(1)``: plan 1 is an element-wise kernel for
``exp, *`` and the sum alone on ``B``, plan 2 one reduce kernel for all three.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from minidl import Device, Tensor, debug
from minidl.fusion.search import BurnExplorer, Explorer
from minidl_book import fusion_lab

#: The plans the question offers, by the split of their blocks.
PLANS = {"elementwise 2 | B 1": 1, "reduce 3": 2}


@dataclass(frozen=True)
class Scores:
    """burn's score of each fuser's block at the stream's first op, and the plans burn's
    rule and minidl's greedy search (the most ops) run."""

    held: bool
    elementwise: int
    reduce: int
    burn: str
    greedy: str


def _stream(held: bool, cls: type) -> tuple[str, dict[str, tuple[int, bool, int]]]:
    t = Tensor.from_numpy(np.random.default_rng(0).standard_normal((256, 256))
                          .astype(np.float32), Device.fusion())
    with fusion_lab.explorer(cls) as stream:  # every op recorded, an empty plan store
        p = t.exp() * t
        s = p.sum_dim(1)
        if not held:
            del p
        s.to_numpy()
        choices = dict(getattr(stream.processor.explorer, "choices", None) or [(0, {})])
        return fusion_lab.split(debug.fusion_plan()), choices[0]


def scores(held: bool) -> Scores:
    """The stream, with ``p`` still held at the read or dropped before it."""
    burn, seen = _stream(held, BurnExplorer)
    greedy, _ = _stream(held, Explorer)
    return Scores(held, seen["elementwise"][2], seen["reduce"][2], burn, greedy)


def burn_pick() -> int:
    """The plan (1 or 2) burn's score runs when ``p`` is held."""
    return PLANS[scores(True).burn]


def counts(held: bool) -> dict[str, tuple[int, ...]]:
    """The tensor counts burn's score (:func:`~minidl.fusion.search.burn_score`) was given
    for each fuser's block at the stream's first op, logged from a live
    :class:`~minidl.fusion.search.BurnExplorer` run: (reads, writes, ops one by one;
    reads, writes fused; views)."""
    import minidl.fusion.search as search

    calls: list[tuple[int, ...]] = []
    real = search.burn_score

    def logged(*args: int) -> int:
        calls.append(args)
        return real(*args)

    search.burn_score = logged
    try:
        _, seen = _stream(held, BurnExplorer)
    finally:
        search.burn_score = real
    return dict(zip(seen, calls, strict=False))


def count_table() -> str:
    """burn's score worked as a count table: the tensors ``exp`` and ``*`` read and write
    and their launches one by one, then in each plan's kernel (the sum not counted), and
    the score, with ``p`` held and dropped."""
    held, dropped = counts(True), counts(False)
    e, r, d = held["elementwise"], held["reduce"], dropped["reduce"]
    rows = [f"{'':28}{'read':>5}{'written':>9}{'launches':>10}{'score':>7}",
            f"{'exp, * one by one':28}{e[0]:>5}{e[1]:>9}{e[2]:>10}"]
    for name, c in (("(1) element-wise kernel", e), ("(2) reduce kernel", r),
                    ("(2) reduce kernel, p dropped", d)):
        rows.append(f"{name:28}{c[3]:>5}{c[4]:>9}{1:>10}{search_score(c):>7}")
    return "\n".join(rows)


def search_score(c: tuple[int, ...]) -> int:
    """burn's score of the counts ``c`` (as :func:`counts` gives them)."""
    from minidl.fusion.search import burn_score

    return burn_score(*c)


_ONE = r"\b(?:1|one|first|element[\s-]?wise|elemwise)\b"
_TWO = r"\b(?:2|two|second|reduce|reduction)\b"


def pick_said(prediction: object, truth: int) -> bool:
    """The plan named first: ``1``, ``"plan 1"``, ``"(1)"``, ``"element-wise"``, ``"the
    first"``; what follows ``:``, ``,``, ``because``, ``since``, ``(`` or a dash is the
    reason, not read. A hedge (``or``, ``both``, ``either``) or a negation is refused."""
    if isinstance(prediction, bool):
        return False
    if isinstance(prediction, int):
        return prediction == truth
    if not isinstance(prediction, str):
        return False
    text = re.sub(r"^\s*\((\w+)\)", r"\1", prediction.lower().replace("plan", " "))
    head = re.split(r"[:,;(\u2014\u2013]|\s-\s|\b(?:because|since|as|so|with)\b", text)[0]
    words = re.findall(r"[a-z']+|\d+", head)
    if {"or", "both", "either", "neither", "nor"} & set(words):
        return False
    if any(w in ("not", "no", "never") or w.endswith("n't") for w in words):
        return False
    said = {1 for _ in re.finditer(_ONE, head)} | {2 for _ in re.finditer(_TWO, head)}
    return said == {truth}
