"""Build exercise of the tensors-and-backends chapter: a reduction over one dim of a view.

The reader writes ``reduce_dim(fn, view, dim)``: ``view`` is a strided view (``buffer``,
``offset``, ``shape``, ``strides``, the toy backend's ``Strided`` fields); the result is
``(out_shape, values)``: ``view``'s shape with dim ``dim`` kept at size 1 (burn's rule), and
``fn`` of each run of ``shape[dim]`` elements along that dim, one flat list in row order.
It reads through ``read_view``: with the reduced dim moved last (its size and stride last in
the lists handed to ``read_view``: a permute, no copy) each run is consecutive in what
``read_view`` returns. The chapter's backend ``Mine`` makes ``float_sum_dim`` and
``float_max_dim`` of it (``fn`` = ``sum``, ``max``).

The checker runs the reader's function with the reference ``read_view`` bound in its place,
so it judges this function only. Its cases: views laid out in any dim order, at an offset,
with a flipped dim, every dim reduced, ``fn`` ``sum`` or ``max``.
"""

from __future__ import annotations

import math
import types

import numpy as np
from hypothesis import strategies as st

from minidl_book import build_view
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.build_view import read_view
from minidl_book.build_zip import View, _layout, _operand

__trace_hide__ = True

__all__ = ["PLANTED", "View", "exercise", "make_case", "reduce_dim"]


# ----- the reference solution and planted wrong ones -------------------------------------------
def reduce_dim(fn, view, dim):
    n = view.shape[dim]
    out_shape = tuple(1 if d == dim else size for d, size in enumerate(view.shape))
    order = [d for d in range(len(view.shape)) if d != dim] + [dim]  # dim moved last
    values = read_view(view.buffer, view.offset, [view.strides[d] for d in order],
                       [view.shape[d] for d in order])
    return out_shape, [fn(values[i:i + n]) for i in range(0, len(values), n)]


def dim_dropped(fn, view, dim):
    """The right values, the reduced dim removed from the shape (PyTorch's default)."""
    _, values = reduce_dim(fn, view, dim)
    return tuple(size for d, size in enumerate(view.shape) if d != dim), values


def runs_in_row_order(fn, view, dim):
    """Cuts the row-order read into runs of ``shape[dim]``: the last dim's runs, whatever
    ``dim`` is."""
    n = view.shape[dim]
    out_shape = tuple(1 if d == dim else size for d, size in enumerate(view.shape))
    values = read_view(view.buffer, view.offset, view.strides, view.shape)
    return out_shape, [fn(values[i:i + n]) for i in range(0, len(values), n)]


def strides_ignored(fn, view, dim):
    """Reads the buffer from the offset as if the view were contiguous in row order."""
    shape = view.shape
    n = shape[dim]
    out_shape = tuple(1 if d == dim else size for d, size in enumerate(shape))
    inner = math.prod(shape[dim + 1:])
    flat = view.buffer[view.offset:view.offset + math.prod(shape)]
    outer = math.prod(shape[:dim])
    return out_shape, [fn([flat[(o * n + k) * inner + i] for k in range(n)])
                       for o in range(outer) for i in range(inner)]


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "the kept dim dropped": (dim_dropped, "check"),
    "runs cut along the last dim": (runs_in_row_order, "value"),
    "the view's strides ignored": (strides_ignored, "value"),
}


# ----- the cases ---------------------------------------------------------------------------------
def make_case(shape, dim, fn=sum, layout=(None, 0, None)) -> dict:
    """``layout``: (dim order or None for row order, offset, flipped dim or None)."""
    order, offset, flip = layout
    order = list(range(len(shape))) if order is None else list(order)
    view, values = _operand(tuple(shape), order, offset, flip, 1)
    expected = (np.sum if fn is sum else np.max)(values, axis=dim, keepdims=True)
    return {"fn": fn, "view": view, "dim": dim, "_shape": tuple(expected.shape),
            "_expected": expected.ravel()}


@st.composite
def _cases(draw) -> dict:
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    dim = draw(st.integers(0, len(shape) - 1))
    fn = draw(st.sampled_from([sum, max]))
    return make_case(shape, dim, fn, draw(_layout(shape)))


def _bind(solution):
    """The reader's function with the reference ``read_view`` in place of theirs (it has its
    own checker): this checker judges ``reduce_dim`` only."""
    code = getattr(solution, "__code__", None)
    if code is None:
        return solution
    names = {**solution.__globals__, "read_view": build_view.read_view}
    bound = types.FunctionType(code, names, solution.__name__, solution.__defaults__,
                               solution.__closure__)
    bound.__kwdefaults__ = solution.__kwdefaults__
    return bound


def _run(solution, case: dict) -> dict:
    got = _bind(solution)(case["fn"], View(*case["view"]), case["dim"])
    if type(got) not in (list, tuple) or len(got) != 2:
        raise TypeError(f"reduce_dim returned {got!r}: return (out_shape, values)")
    shape, values = got
    return {"_shape": tuple(shape), "values": np.asarray(values, dtype=np.float64).ravel()}


def _shape_check(solution, case, outputs, watch) -> str | None:
    got, want, dim = outputs["_shape"], case["_shape"], case["dim"]
    shape = case["view"].shape
    if got == want:
        return None
    if got == tuple(n for d, n in enumerate(shape) if d != dim):
        return (f"view of shape {shape}, dim {dim}: you returned {got}, the dim dropped. "
                f"burn's reductions keep it at size 1: {want}.")
    return f"view of shape {shape}, dim {dim}: the output's shape is {want}; you returned {got}."


EXAMPLES = [
    make_case((2, 3), 1),  # x.sum_dim(1): each row's sum
    make_case((2, 3), 0, max),  # down the columns: runs that are not consecutive
    make_case((3, 2), 1, sum, ([1, 0], 0, None)),  # a transposed view
    make_case((2, 3), 1, sum, (None, 2, 1)),  # at an offset, each row flipped
]


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``reduce_dim(fn, view, dim)``."""
    return BuildExercise(
        "reduce_dim: fn along one dim of a strided view, the dim kept",
        cases=_cases(),
        run=_run,
        checks=[_shape_check],
        references=[Reference("NumPy's reduction of the view, keepdims=True",
                              lambda c: {"values": c["_expected"]}, rtol=0, atol=0)],
        rules=Rules(no_numpy=True, helpers=(build_view.read_view,)),
        hints=[
            (("check", "value", "error"), "The output's shape is the view's with shape[dim] "
             "replaced by 1: burn keeps the reduced dim."),
            (("check", "value", "error"), "Move dim last: hand read_view the other dims' "
             "sizes and strides, then dim's. Each run of shape[dim] consecutive values it "
             "returns is one output element's inputs, in the output's row order."),
            ("value", "Read through the view's own offset and strides (a permuted or "
             "flipped view is not in row order in its buffer): read_view does it for you."),
        ],
        reference_solution=reduce_dim,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("fn", "view", "dim"),
    )
