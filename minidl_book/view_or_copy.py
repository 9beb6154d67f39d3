"""The tensors chapter's "View or copy?": six layout results of one grid, judged by two rules.

minidl's Flex makes a reshape a view whenever one constant step per dim reads the result
(NumPy's rule, and PyTorch's ``reshape``). burn-flex at v0.22.0-pre.2 mirrors a stricter
rule: ``Layout::reshape`` (``src/layout.rs`` lines 297-300, unchanged at main) gives a new
layout only to a tensor that ``is_contiguous()`` (lines 103-116: strides exactly row order)
with ``start_offset == 0``, and ``FlexTensor::reshape`` (``src/tensor.rs`` lines 403-419)
copies (``to_contiguous()``) when it gets ``None``. Its transpose, slice with a positive
step (``Layout::slice``), expand and flip (``src/ops/flip.rs``: negative strides) are views,
as minidl's are, so :func:`burn_flex_shares` measures those on minidl and applies burn's
reshape rule on top.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from minidl import Device, Tensor
from minidl_book.element_layout import element_offset, element_strides
from minidl_book.exercises import Exercise

__all__ = ["CASES", "burn_flex_reshape_is_view", "burn_flex_shares", "exercise", "grid",
           "minidl_shares", "results"]

#: letter → (the layout ops before the reshape, the reshape's shape or None for none)
CASES: dict[str, tuple[Callable[[Tensor], Tensor], list[int] | None]] = {
    "A": (lambda g: g.T, [12]),
    "B": (lambda g: g.T, [2, 2, 3]),
    "C": (lambda g: g.slice([(0, 3), (0, 4, 2)]), [6]),
    "D": (lambda g: g.slice([(0, 3, 2)]), [8]),
    "E": (lambda g: g.slice([(1, 2)]).expand([5, 4]), [20]),
    "F": (lambda g: g.flip([0]), None),
}


def grid(device: Device | None = None) -> Tensor:
    """The chapter's ``grid``: ``arange(12)`` as a ``[3, 4]`` float32 tensor in row order."""
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    return Tensor.from_numpy(values, device or Device.flex())


def results(g: Tensor) -> dict[str, Tensor]:
    """Each case's result on minidl: its layout ops, then its reshape if it has one."""
    out = {}
    for name, (layout, shape) in CASES.items():
        source = layout(g)
        out[name] = source.reshape(shape) if shape is not None else source
    return out


def _shares(t: Tensor, buffer: np.ndarray) -> bool:
    return bool(np.shares_memory(t.primitive.backend_tensor, buffer))


def minidl_shares() -> frozenset[str]:
    """The letters whose result shares a fresh grid's buffer on minidl's Flex (measured)."""
    g = grid()
    buffer = g.primitive.backend_tensor
    return frozenset(k for k, t in results(g).items() if _shares(t, buffer))


def burn_flex_reshape_is_view(source: np.ndarray, buffer: np.ndarray) -> bool:
    """burn-flex's ``Layout::reshape`` test for ``source``, a view of ``buffer``: strides
    exactly row order (``is_contiguous``) and the first element at offset 0."""
    step, row_order = 1, []
    for n in reversed(source.shape):
        row_order.append(step)
        step *= n
    return (element_strides(source) == tuple(reversed(row_order))
            and element_offset(source, buffer) == 0)


def burn_flex_shares() -> frozenset[str]:
    """The letters whose result would share the grid's buffer on burn's Flex: the layout
    ops' result shares it (views in both), and a reshape keeps it only by burn's rule."""
    g = grid()
    buffer = g.primitive.backend_tensor
    shared = set()
    for name, (layout, shape) in CASES.items():
        source = layout(g)
        if not _shares(source, buffer):
            continue
        if shape is None or burn_flex_reshape_is_view(source.primitive.backend_tensor, buffer):
            shared.add(name)
    return frozenset(shared)


def _literal(prediction: Any) -> Any:
    """A whole answer typed as one string, ``"({'B', 'C', 'F'}, {'F'})"``, read as the literal
    it writes (``ast.literal_eval``: no code runs); any other answer unchanged."""
    if not isinstance(prediction, str) or prediction.strip()[:1] not in ("(", "[", "{"):
        return prediction
    try:
        return ast.literal_eval(prediction.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return prediction


class PairExercise(Exercise):
    """``Exercise`` that also reads a pair typed as one string, as the strides exercise's
    ``ParsedAnswerExercise`` does (that one reads numbers only)."""

    def _judge(self, prediction: Any, truth: Any) -> tuple[bool, str]:
        return super()._judge(_literal(prediction), truth)

    def check(self, prediction: Any = ...) -> bool:
        return super().check(_literal(prediction))


def exercise() -> Exercise:
    """The chapter's checker: a pair of sets, (minidl's views, burn Flex's views)."""
    return PairExercise(
        "View or copy? A-F's views of grid's buffer: (by minidl's rule, by burn Flex's)",
        truth=lambda: (minidl_shares(), burn_flex_shares()),
        hint="Answer a pair of sets: (minidl's, burn Flex's). grid holds arange(12), so "
        "each value is the buffer position it sits at. For minidl, write each result's "
        "values in row order: can one constant step per dim produce that walk? For "
        "burn's Flex, ask of each reshape's input: row order from offset 0?",
    )
